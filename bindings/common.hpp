// Shared helpers of the ikstack._native bindings: numpy arrays in and out, and errors.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstring>
#include <string>

#include "ikstack/linalg.hpp"

namespace ikstack_py {

namespace nb = nanobind;

/// A read-only float64 array of any shape, C-contiguous, on the CPU (numpy converts lists).
using CArray = nb::ndarray<const double, nb::c_contig, nb::device::cpu>;
/// A writable float64 1-D array (the caller's output buffer).
using OutVec = nb::ndarray<double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
/// A numpy array returned to Python (owns its memory).
using NpArray = nb::ndarray<nb::numpy, double>;

/// A new numpy float64 array of `rows` x `cols` (cols == 0: 1-D of `rows`) holding `src`.
inline nb::object new_array(const double* src, size_t rows, size_t cols = 0) {
    const size_t count = cols == 0 ? rows : rows * cols;
    double* data = new double[count > 0 ? count : 1];
    if (count > 0) std::memcpy(data, src, count * sizeof(double));
    nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<double*>(p); });
    if (cols == 0) {
        size_t shape[1] = {rows};
        return nb::cast(NpArray(data, 1, shape, owner), nb::rv_policy::automatic);
    }
    size_t shape[2] = {rows, cols};
    return nb::cast(NpArray(data, 2, shape, owner), nb::rv_policy::automatic);
}

/// Sets ikstack.errors.<kind> (InputError, ModelError) with `message` as the Python error.
void set_error(const char* kind, const std::string& message);
/// The same, then throws (nanobind hands the error to Python).
[[noreturn]] void raise_error(const char* kind, const std::string& message);

/// `a` as a (n,) vector: raises InputError naming `what` when its shape is not (n,)
/// (n < 0: any length up to the capacity).
ikstack::VecN as_vec(const CArray& a, int n, const char* what);
/// `a` as a 4x4 matrix (InputError otherwise).
ikstack::Mat4 as_mat4(const CArray& a, const char* what);

void bind_chain(nb::module_& m);
void bind_diffik(nb::module_& m);
void bind_servo(nb::module_& m);
void bind_frame_cache(nb::module_& m);

}  // namespace ikstack_py
