// The built-in differential-IK solvers: DampedLeastSquares and BoxQPSolver on plain arrays.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <optional>
#include <string>
#include <tuple>

#include "common.hpp"
#include "ikstack/diffik.hpp"

namespace ikstack_py {

namespace {

using SolveOut = std::tuple<nb::object, bool, std::string, int>;

/// (dq, success, message, iterations) of one solve.
SolveOut solve(ikstack::DifferentialIK& solver, const CArray& J, const CArray& task,
               const CArray& lower, const CArray& upper, const std::optional<CArray>& preferred, double damping) {
    if (J.ndim() != 2 || J.shape(0) > size_t(ikstack::kTaskRows) ||
        J.shape(1) > size_t(ikstack::kMaxDof))
        raise_error("InputError", "jacobian must have shape (m, dof) with m <= 6, dof <= 16");
    const int m = int(J.shape(0)), n = int(J.shape(1));
    ikstack::DiffIKRequest req;
    req.resize(m, n);
    std::memcpy(req.jacobian.data(), J.data(), size_t(m * n) * sizeof(double));
    if (task.ndim() != 1 || task.shape(0) != size_t(m))
        raise_error("InputError", "task must have shape (" + std::to_string(m) + ",)");
    std::memcpy(req.task.data(), task.data(), size_t(m) * sizeof(double));
    req.lower = as_vec(lower, n, "lower");
    req.upper = as_vec(upper, n, "upper");
    if (preferred) req.preferred_velocity = as_vec(*preferred, n, "preferred_velocity");
    req.damping = damping;
    ikstack::VecN dq(n);
    ikstack::DiffIKResult r;
    {
        nb::gil_scoped_release release;
        r = solver.solve(req, dq);
    }
    return {new_array(dq.data(), size_t(dq.size())), r.success, std::string(r.message),
            r.iterations};
}

const char* kSolveDoc =
    "solve(jacobian, task, lower, upper, preferred_velocity=None, damping=1e-3) -> "
    "(dq, success, message, iterations): minimize 1/2 ||J dq - task||^2 + 1/2 damping^2 "
    "||dq - preferred||^2 within lower <= dq <= upper.";

}  // namespace

void bind_diffik(nb::module_& m) {
    nb::class_<ikstack::DifferentialIK>(m, "DifferentialIK",
                                        "A per-cycle velocity solver of the C++ library.")
        .def(
            "solve",
            [](ikstack::DifferentialIK& s, const CArray& J, const CArray& task,
               const CArray& lower, const CArray& upper, const std::optional<CArray>& preferred,
               double damping) { return solve(s, J, task, lower, upper, preferred, damping); },
            nb::arg("jacobian"), nb::arg("task"), nb::arg("lower"), nb::arg("upper"),
            nb::arg("preferred_velocity").none() = nb::none(), nb::arg("damping") = 1e-3, kSolveDoc)
        .def_prop_ro("name", [](const ikstack::DifferentialIK& s) { return std::string(s.name()); });
    nb::class_<ikstack::DampedLeastSquares, ikstack::DifferentialIK>(
        m, "DampedLeastSquares", "Damped least squares scaled into the velocity box.")
        .def(nb::init<double>(), nb::arg("min_damping") = 0.0)
        .def_prop_ro("min_damping", &ikstack::DampedLeastSquares::min_damping);
    nb::class_<ikstack::BoxQPSolver, ikstack::DifferentialIK>(
        m, "BoxQPSolver", "The primal active-set box QP (the Python BoxQPSolver's method).")
        .def(nb::init<int, double>(), nb::arg("max_iterations") = 100,
             nb::arg("tolerance") = 1e-12)
        .def_prop_ro("max_iterations", &ikstack::BoxQPSolver::max_iterations)
        .def_prop_ro("tolerance", &ikstack::BoxQPSolver::tolerance);
}

}  // namespace ikstack_py
