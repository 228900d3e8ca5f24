// ikstack._native: the C++ library's Python module (chain, FK/Jacobian, the differential-IK
// solvers and the servo kernel; and the frame cache a first compile uses). C++ errors arrive
// as ikstack.errors exceptions.
#include <nanobind/nanobind.h>

#include <stdexcept>

#include "common.hpp"
#include "ikstack/errors.hpp"

namespace nb = nanobind;

namespace ikstack_py {

void set_error(const char* kind, const std::string& message) {
    nb::object errors = nb::module_::import_("ikstack.errors");
    PyErr_SetString(errors.attr(kind).ptr(), message.c_str());
}

void raise_error(const char* kind, const std::string& message) {
    set_error(kind, message);
    throw nb::python_error();
}

ikstack::VecN as_vec(const CArray& a, int n, const char* what) {
    const bool ok = a.ndim() == 1 && (n < 0 ? a.shape(0) <= size_t(ikstack::kMaxDof)
                                            : a.shape(0) == size_t(n));
    if (!ok) {
        std::string want = n < 0 ? "(n,) with n <= " + std::to_string(ikstack::kMaxDof)
                                 : "(" + std::to_string(n) + ",)";
        raise_error("InputError", std::string(what) + " must have shape " + want);
    }
    ikstack::VecN v(static_cast<int>(a.shape(0)));
    std::memcpy(v.data(), a.data(), a.shape(0) * sizeof(double));
    return v;
}

ikstack::Mat4 as_mat4(const CArray& a, const char* what) {
    if (a.ndim() != 2 || a.shape(0) != 4 || a.shape(1) != 4)
        raise_error("InputError", std::string(what) + " must be a (4, 4) array");
    ikstack::Mat4 T;
    std::memcpy(T.data(), a.data(), 16 * sizeof(double));
    return T;
}

}  // namespace ikstack_py

NB_MODULE(_native, m) {
    m.doc() = "The C++ kinematics and servo kernel (ikstack's native library).";
    nb::register_exception_translator([](const std::exception_ptr& p, void*) {
        try {
            std::rethrow_exception(p);
        } catch (const ikstack::ModelError& e) {
            ikstack_py::set_error("ModelError", e.what());
        } catch (const ikstack::InputError& e) {  // ChainFileError too
            ikstack_py::set_error("InputError", e.what());
        } catch (const std::invalid_argument& e) {
            ikstack_py::set_error("InputError", e.what());
        } catch (const std::length_error& e) {
            ikstack_py::set_error("InputError", e.what());
        }
    });
    ikstack_py::bind_chain(m);
    ikstack_py::bind_diffik(m);
    ikstack_py::bind_servo(m);
    ikstack_py::bind_frame_cache(m);
}
