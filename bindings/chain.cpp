// Chain: from a chain description file, a string, DH rows or plain arrays; FK and Jacobian.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <vector>

#include "common.hpp"
#include "ikstack/chain.hpp"

namespace ikstack_py {

using ikstack::Chain;
using ikstack::JointType;

namespace {

JointType joint_type(const std::string& name) {
    if (name == "revolute") return JointType::Revolute;
    if (name == "continuous") return JointType::Continuous;
    if (name == "prismatic") return JointType::Prismatic;
    raise_error("InputError", "joint type '" + name +
                                  "' is unknown; valid: 'revolute', 'continuous', 'prismatic'");
}

nb::object vec_array(const ikstack::VecN& v) { return new_array(v.data(), size_t(v.size())); }

ikstack::VecN joint_vector(const Chain& c, const CArray& q) { return as_vec(q, c.dof(), "q"); }

/// Per-joint values: empty -> `fill` for every joint, else exactly n of them.
std::vector<double> per_joint(const std::vector<double>& v, size_t n, double fill,
                              const char* what) {
    if (v.empty()) return std::vector<double>(n, fill);
    if (v.size() != n)
        raise_error("InputError", std::string(what) + " has " + std::to_string(v.size()) +
                                      " values; the chain has " + std::to_string(n) + " joints");
    return v;
}

Chain from_arrays(const std::vector<std::string>& names, const std::vector<std::string>& types,
                  const CArray& origins, const CArray& axes, const std::vector<double>& lower,
                  const std::vector<double>& upper, const std::vector<double>& velocity,
                  const std::vector<double>& acceleration, const std::vector<double>& jerk,
                  const CArray& T_last_tip, const std::optional<CArray>& T_tip_tcp, const std::string& name,
                  double kinematic_margin) {
    const size_t n = names.size();
    if (types.size() != n)
        raise_error("InputError", "joint_types has " + std::to_string(types.size()) +
                                      " entries; expected " + std::to_string(n));
    if (origins.ndim() != 3 || origins.shape(0) != n || origins.shape(1) != 4 ||
        origins.shape(2) != 4)
        raise_error("InputError", "origins must have shape (" + std::to_string(n) + ", 4, 4)");
    if (axes.ndim() != 2 || axes.shape(0) != n || axes.shape(1) != 3)
        raise_error("InputError", "axes must have shape (" + std::to_string(n) + ", 3)");
    const auto lo = per_joint(lower, n, -INFINITY, "lower");
    const auto hi = per_joint(upper, n, INFINITY, "upper");
    const auto vel = per_joint(velocity, n, INFINITY, "velocity");
    const auto acc = per_joint(acceleration, n, INFINITY, "acceleration");
    const auto jrk = per_joint(jerk, n, INFINITY, "jerk");
    std::vector<ikstack::Joint> joints(n);
    for (size_t i = 0; i < n; ++i) {
        ikstack::Joint& j = joints[i];
        j.name = names[i];
        j.type = joint_type(types[i]);
        std::memcpy(j.origin.data(), origins.data() + 16 * i, 16 * sizeof(double));
        for (int k = 0; k < 3; ++k) j.axis[size_t(k)] = axes.data()[3 * i + size_t(k)];
        j.lower = lo[i];
        j.upper = hi[i];
        j.velocity = vel[i];
        j.acceleration = acc[i];
        j.jerk = jrk[i];
    }
    ikstack::ChainInfo info;
    info.name = name;
    info.kinematic_margin = kinematic_margin;
    const ikstack::Mat4 tcp = T_tip_tcp.has_value() ? as_mat4(*T_tip_tcp, "T_tip_tcp")
                                                   : ikstack::Mat4{};
    if (T_tip_tcp.has_value()) info.tcp_name = "tcp";
    return Chain(std::move(joints), as_mat4(T_last_tip, "T_last_tip"), tcp, {}, {}, info);
}

}  // namespace

void bind_chain(nb::module_& m) {
    nb::class_<Chain>(m, "Chain",
                      "A serial chain (the C++ library's model): FK and the geometric Jacobian.")
        .def_static("from_file", &Chain::from_file, nb::arg("path"),
                    "Read a chain description file (InputError names the file, line and field).")
        .def_static("from_string", &Chain::from_string, nb::arg("text"),
                    nb::arg("origin") = "<string>", "Read a chain description from a string.")
        .def_static(
            "from_dh",
            [](const CArray& rows, const std::string& convention, const std::vector<double>& lower,
               const std::vector<double>& upper) {
                if (rows.ndim() != 2 || rows.shape(1) != 4)
                    raise_error("InputError", "DH rows must have shape (n, 4)");
                ikstack::DHConvention conv;
                if (convention == "standard")
                    conv = ikstack::DHConvention::Standard;
                else if (convention == "modified")
                    conv = ikstack::DHConvention::Modified;
                else
                    raise_error("InputError", "DH convention '" + convention +
                                                  "' is unknown; valid: 'standard', 'modified'");
                std::vector<std::array<double, 4>> r(rows.shape(0));
                for (size_t i = 0; i < r.size(); ++i)
                    for (size_t k = 0; k < 4; ++k) r[i][k] = rows.data()[4 * i + k];
                ikstack::DHOptions opt;
                opt.lower = lower;
                opt.upper = upper;
                return Chain::from_dh(r, conv, opt);
            },
            nb::arg("rows"), nb::arg("convention") = "standard",
            nb::arg("lower") = std::vector<double>(), nb::arg("upper") = std::vector<double>(),
            "A revolute chain from DH rows ('standard': d, theta_offset, a, alpha; 'modified': "
            "alpha, a, d, theta_offset).")
        .def_static("from_arrays", &from_arrays, nb::arg("joint_names"), nb::arg("joint_types"),
                    nb::arg("origins"), nb::arg("axes"),
                    nb::arg("lower") = std::vector<double>(),
                    nb::arg("upper") = std::vector<double>(),
                    nb::arg("velocity") = std::vector<double>(),
                    nb::arg("acceleration") = std::vector<double>(),
                    nb::arg("jerk") = std::vector<double>(), nb::arg("T_last_tip"),
                    nb::arg("T_tip_tcp").none() = nb::none(), nb::arg("name") = "",
                    nb::arg("kinematic_margin") = 0.0,
                    "A chain from per-joint origins (n, 4, 4), axes (n, 3) and limits.")
        .def("to_file", &Chain::to_file, nb::arg("path"))
        .def("to_string", &Chain::to_string)
        .def_prop_ro("dof", &Chain::dof)
        .def_prop_ro("name", [](const Chain& c) { return c.info().name; })
        .def_prop_ro("joint_names",
                     [](const Chain& c) {
                         std::vector<std::string> out;
                         for (const auto& j : c.joints()) out.push_back(j.name);
                         return out;
                     })
        .def_prop_ro("joint_types",
                     [](const Chain& c) {
                         std::vector<std::string> out;
                         for (const auto& j : c.joints())
                             out.emplace_back(ikstack::joint_type_name(j.type));
                         return out;
                     })
        .def_prop_ro("lower", [](const Chain& c) { return vec_array(c.lower()); })
        .def_prop_ro("upper", [](const Chain& c) { return vec_array(c.upper()); })
        .def_prop_ro("velocity_limits", [](const Chain& c) { return vec_array(c.velocity_limits()); })
        .def_prop_ro("acceleration_limits",
                     [](const Chain& c) { return vec_array(c.acceleration_limits()); })
        .def_prop_ro("jerk_limits", [](const Chain& c) { return vec_array(c.jerk_limits()); })
        .def_prop_ro("kinematic_margin", &Chain::kinematic_margin)
        .def_prop_ro("constraint_rows", &Chain::constraint_rows)
        .def(
            "fk",
            [](const Chain& c, const CArray& q) {
                ikstack::VecN v = joint_vector(c, q);
                ikstack::Mat4 T;
                if (!c.fk(v, T)) raise_error("InputError", "q must be finite");
                return new_array(T.data(), 4, 4);
            },
            nb::arg("q"), "T_base_tcp (4, 4) for joint positions q (dof,).")
        .def(
            "jacobian",
            [](const Chain& c, const CArray& q) {
                ikstack::VecN v = joint_vector(c, q);
                ikstack::Jacobian J;
                if (!c.jacobian(v, J)) raise_error("InputError", "q must be finite");
                return new_array(J.data(), 6, size_t(c.dof()));
            },
            nb::arg("q"),
            "The geometric Jacobian (6, dof): rows [linear; angular] in the base frame, the "
            "linear part at the TCP.")
        .def(
            "within_limits",
            [](const Chain& c, const CArray& q, double tol) {
                return c.within_limits(joint_vector(c, q), tol);
            },
            nb::arg("q"), nb::arg("tol") = 0.0)
        .def(
            "constraint_residual_max",
            [](const Chain& c, const CArray& q) {
                return c.constraint_residual_max(joint_vector(c, q));
            },
            nb::arg("q"));
}

}  // namespace ikstack_py
