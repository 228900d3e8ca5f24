// The servo kernel (bound when the C++ library has it): its chain, configuration and solver
// records, and Servo with array-level step/reject for the Python adapter
// (ikstack.servo.native). step releases the GIL; a Python DifferentialIK or MotionGenerator
// runs through the trampolines below, which take it back for the call.
#include "common.hpp"

#if __has_include("ikstack/servo.hpp")
#define IKSTACK_PY_HAVE_SERVO 1
#endif

#ifdef IKSTACK_PY_HAVE_SERVO
#include <nanobind/stl/array.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

#include "ikstack/diffik.hpp"
#include "ikstack/motion.hpp"
#include "ikstack/servo.hpp"
#endif

namespace ikstack_py {

#ifndef IKSTACK_PY_HAVE_SERVO
void bind_servo(nb::module_& m) { m.attr("HAVE_SERVO") = false; }
#else

namespace {

using ikstack::VecN;

/// A Python exception that is not an Exception (KeyboardInterrupt, SystemExit) raised inside
/// a callback: kept, and raised again once step() has returned.
struct Pending {
    std::optional<nb::python_error> error;
    void rethrow() {
        if (error) {
            error->restore();  // back into the interpreter, then out as this call's error
            error.reset();
            throw nb::python_error();
        }
    }
};

nb::object vec_copy(const VecN& v) { return new_array(v.data(), size_t(v.size())); }

/// Copies a 1-D float64 array into out (its length kept, up to the capacity); false when it is
/// not 1-D or too long.
bool copy_vec(const nb::handle& a, VecN& out) {
    CArray arr;
    if (!nb::try_cast(a, arr) || arr.ndim() != 1 || arr.shape(0) > size_t(ikstack::kMaxDof))
        return false;
    out.resize(int(arr.shape(0)));
    std::memcpy(out.data(), arr.data(), arr.shape(0) * sizeof(double));
    return true;
}

/// A Python DifferentialIK. The callback (the adapter's) builds the Python request, calls the
/// solver and normalizes the answer to (code, dq, iterations, message): code 0 ok, 1 a failed
/// result (message: why), 2 an exception (message: "Type: text").
class PySolver final : public ikstack::DifferentialIK {
public:
    PySolver(nb::object callback, std::string name, Pending* pending)
        : cb_(std::move(callback)), name_(std::move(name)), pending_(pending) {}

    ikstack::DiffIKResult solve(const ikstack::DiffIKRequest& req, VecN& dq) override {
        const int m = req.jacobian.rows(), n = req.jacobian.cols();
        dq.resize(n);
        int code = 2, iterations = 0;
        std::string message;
        {
            nb::gil_scoped_acquire gil;
            try {
                nb::tuple out = nb::cast<nb::tuple>(
                    cb_(new_array(req.jacobian.data(), size_t(m), size_t(n)),
                        new_array(req.task.data(), size_t(m)), vec_copy(req.q),
                        vec_copy(req.lower), vec_copy(req.upper),
                        vec_copy(req.preferred_velocity), req.damping, req.dt));
                code = nb::cast<int>(out[0]);
                iterations = nb::cast<int>(out[2]);
                message = nb::cast<std::string>(out[3]);
                if (code == 0 && !copy_vec(out[1], dq)) {
                    code = 1;
                    message = "solver returned an unreadable array";
                }
            } catch (nb::python_error& e) {
                pending_->error.emplace(std::move(e));
                message = "was interrupted";
            }
        }
        if (code == 2) throw std::runtime_error(message);
        if (code != 0) {
            dq.resize(n);
            return ikstack::DiffIKResult::failure(ikstack::DiffIKStatus::Failed, message.c_str(),
                                                  iterations);
        }
        ikstack::DiffIKResult r;
        r.iterations = iterations;
        r.set_message(message.c_str());
        return r;
    }
    const char* name() const override { return name_.c_str(); }

private:
    nb::object cb_;
    std::string name_;
    Pending* pending_;
};

/// A Python MotionGenerator. The callback returns (ok, q_ref, dq_ref, error): ok False with
/// error "Type: text" when it raised; the arrays as float64 (their shapes are checked here).
class PyGenerator final : public ikstack::MotionGenerator {
public:
    PyGenerator(nb::object generate, nb::object reset, Pending* pending)
        : gen_(std::move(generate)), reset_(std::move(reset)), pending_(pending) {}

    bool generate(const VecN& q, const VecN& dq, const VecN& desired, const VecN& lower,
                  const VecN& upper, const VecN& q_lower, const VecN& q_upper, double dt,
                  VecN& q_ref, VecN& dq_ref) override {
        nb::gil_scoped_acquire gil;
        try {
            nb::tuple out = nb::cast<nb::tuple>(
                gen_(vec_copy(q), vec_copy(dq), vec_copy(desired), vec_copy(lower),
                     vec_copy(upper), vec_copy(q_lower), vec_copy(q_upper), dt));
            if (!nb::cast<bool>(out[0])) {
                error_ = nb::cast<std::string>(out[3]);
                return false;
            }
            // a shape the copy cannot hold reads as an empty vector (the servo names the shapes)
            if (!copy_vec(out[1], q_ref)) q_ref.resize(0);
            if (!copy_vec(out[2], dq_ref)) dq_ref.resize(0);
            error_.clear();
            return true;
        } catch (nb::python_error& e) {
            pending_->error.emplace(std::move(e));
            error_ = "was interrupted";
            return false;
        }
    }
    void reset() override {
        nb::gil_scoped_acquire gil;
        reset_();
    }
    const char* error() const override { return error_.c_str(); }

private:
    nb::object gen_, reset_;
    std::string error_;
    Pending* pending_;
};

/// The bound servo: the kernel, its trampolines and a lock (step runs without the GIL).
struct PyServo {
    PyServo(const ikstack::ServoChain& chain, const ikstack::ServoConfig& config,
            const ikstack::ServoSolver& solver, nb::object solve_cb, const std::string& name,
            nb::object generate_cb, nb::object reset_cb) {
        if (!solve_cb.is_none())
            custom = std::make_unique<PySolver>(std::move(solve_cb), name, &pending);
        if (!generate_cb.is_none())
            generator = std::make_unique<PyGenerator>(std::move(generate_cb), std::move(reset_cb),
                                                      &pending);
        servo = std::make_unique<ikstack::Servo>(chain, config, solver, custom.get(),
                                                 generator.get());
    }
    Pending pending;
    std::unique_ptr<PySolver> custom;
    std::unique_ptr<PyGenerator> generator;
    std::unique_ptr<ikstack::Servo> servo;
    std::mutex mutex;
};

/// (action, status, message, task_residual, nullspace_speed, condition_number,
///  position_error, orientation_error, solver_iterations); the reference into out_q, out_dq.
nb::tuple result_tuple(const ikstack::ServoResult& r) {
    return nb::make_tuple(int(r.action), r.status, r.message, r.task_residual,
                          r.nullspace_speed, r.condition_number, r.position_error,
                          r.orientation_error, r.solver_iterations);
}

void load(const CArray& a, int n, ikstack::ServoVec& out, const char* what) {
    if (a.ndim() != 1 || a.shape(0) != size_t(n))
        raise_error("InputError", std::string(what) + " must have shape (" + std::to_string(n) +
                                      ",)");
    std::memcpy(out.data(), a.data(), size_t(n) * sizeof(double));
}

void check_out(const OutVec& a, int n) {
    if (a.shape(0) != size_t(n))
        raise_error("InputError", "the output arrays must have shape (" + std::to_string(n) +
                                      ",)");
}

nb::tuple step(PyServo& self, const CArray& q, const CArray& dq, std::int64_t stamp, int kind,
               const CArray& data, int frame, std::int64_t cstamp, double dt,
               std::int64_t now_ns, OutVec out_q, OutVec out_dq) {
    const int n = self.servo->dof();
    ikstack::JointState state;
    load(q, n, state.q, "q");
    load(dq, n, state.dq, "dq");
    state.stamp_ns = stamp;
    ikstack::ServoCommand cmd;
    cmd.type = static_cast<ikstack::CommandType>(kind);
    cmd.stamp_ns = cstamp;
    cmd.frame = frame;
    const size_t want = kind == 1 ? 16 : kind == 2 ? 6 : kind == 3 ? size_t(n) : 0;
    // a pose is a (4, 4) array, a twist (6,), a jog (dof,)
    const bool shape_ok = kind == 0 || (kind == 1 ? data.ndim() == 2 && data.shape(0) == 4 &&
                                                        data.shape(1) == 4
                                                  : data.ndim() == 1 && data.shape(0) == want);
    if (kind < 0 || kind > 3 || !shape_ok)
        raise_error("InputError", "command data has " + std::to_string(data.size()) +
                                      " values; expected " + std::to_string(want));
    double* dst = kind == 1 ? cmd.T.data() : kind == 2 ? cmd.twist.data() : cmd.velocities.data();
    if (want > 0) std::memcpy(dst, data.data(), want * sizeof(double));
    check_out(out_q, n);
    check_out(out_dq, n);
    std::unique_lock<std::mutex> lock(self.mutex, std::defer_lock);
    const ikstack::ServoResult* r;
    {
        nb::gil_scoped_release release;
        lock.lock();
        r = &self.servo->step(state, cmd, dt, now_ns);
        std::memcpy(out_q.data(), r->q.data(), size_t(n) * sizeof(double));
        std::memcpy(out_dq.data(), r->dq.data(), size_t(n) * sizeof(double));
    }
    nb::tuple out = result_tuple(*r);
    lock.unlock();
    self.pending.rethrow();
    return out;
}

nb::tuple reject(PyServo& self, nb::handle q, nb::handle dq, const std::string& message,
                 double dt, OutVec out_q, OutVec out_dq) {
    const int n = self.servo->dof();
    ikstack::JointState state;
    const bool has_state = !q.is_none();
    if (has_state) {
        load(nb::cast<CArray>(q), n, state.q, "q");
        load(nb::cast<CArray>(dq), n, state.dq, "dq");
    }
    check_out(out_q, n);
    check_out(out_dq, n);
    std::unique_lock<std::mutex> lock(self.mutex, std::defer_lock);
    const ikstack::ServoResult* r;
    {
        nb::gil_scoped_release release;
        lock.lock();
        r = &self.servo->reject(has_state ? &state : nullptr, message.c_str(), dt);
        std::memcpy(out_q.data(), r->q.data(), size_t(n) * sizeof(double));
        std::memcpy(out_dq.data(), r->dq.data(), size_t(n) * sizeof(double));
    }
    nb::tuple out = result_tuple(*r);
    lock.unlock();
    return out;
}

}  // namespace

void bind_servo(nb::module_& m) {
    m.attr("HAVE_SERVO") = true;
    using ikstack::ServoChain;
    using ikstack::ServoConfig;
    nb::class_<ikstack::ServoLinearRow>(m, "ServoLinearRow", "sum_i a_i q_i - b <= 0")
        .def(nb::init<>())
        .def_rw("a", &ikstack::ServoLinearRow::a)
        .def_rw("b", &ikstack::ServoLinearRow::b)
        .def_rw("name", &ikstack::ServoLinearRow::name);
    nb::class_<ikstack::ServoQuadrantRow>(m, "ServoQuadrantRow",
                                          "A quadrant-polynomial bound between two joints")
        .def(nb::init<>())
        .def_rw("i", &ikstack::ServoQuadrantRow::i)
        .def_rw("j", &ikstack::ServoQuadrantRow::j)
        .def_rw("table", &ikstack::ServoQuadrantRow::table)
        .def_rw("name", &ikstack::ServoQuadrantRow::name);
    nb::class_<ServoChain>(m, "ServoChain", "The chain as the servo kernel needs it")
        .def(nb::init<>())
        .def_rw("dof", &ServoChain::dof)
        .def_rw("joint_names", &ServoChain::joint_names)
        .def_rw("Rs", &ServoChain::Rs)
        .def_rw("ps", &ServoChain::ps)
        .def_rw("kinds", &ServoChain::kinds)
        .def_rw("R_end", &ServoChain::R_end)
        .def_rw("p_end", &ServoChain::p_end)
        .def_rw("lower", &ServoChain::lower)
        .def_rw("upper", &ServoChain::upper)
        .def_rw("velocity", &ServoChain::velocity)
        .def_rw("acceleration", &ServoChain::acceleration)
        .def_rw("jerk", &ServoChain::jerk)
        .def_rw("continuous", &ServoChain::continuous)
        .def_rw("kinematic_margin", &ServoChain::kinematic_margin)
        .def_rw("linear_rows", &ServoChain::linear_rows)
        .def_rw("quadrant_rows", &ServoChain::quadrant_rows)
        .def("check", &ServoChain::check);
    nb::class_<ServoConfig> cfg(m, "ServoConfig", "The servo's settings (see ikstack.servo)");
    cfg.def(nb::init<>())
        .def("set_task_axes",
             [](ServoConfig& c, const std::vector<int>& axes) {
                 c.set_task_axes(axes.data(), int(axes.size()));
             })
        .def("check", &ServoConfig::check)
        .def_rw("task_weights", &ServoConfig::task_weights)
        .def_rw("nullspace_reference", &ServoConfig::nullspace_reference)
        .def_rw("has_nullspace_reference", &ServoConfig::has_nullspace_reference);
#define IKSTACK_CFG(field) cfg.def_rw(#field, &ServoConfig::field)
    IKSTACK_CFG(max_linear_speed);
    IKSTACK_CFG(max_angular_speed);
    IKSTACK_CFG(pose_gain);
    IKSTACK_CFG(position_tolerance);
    IKSTACK_CFG(orientation_tolerance);
    IKSTACK_CFG(nullspace_gain);
    IKSTACK_CFG(joint_centering_gain);
    IKSTACK_CFG(damping);
    IKSTACK_CFG(command_timeout);
    IKSTACK_CFG(stop_velocity);
    IKSTACK_CFG(singularity_decelerate);
    IKSTACK_CFG(singularity_halt);
    IKSTACK_CFG(leaving_multiplier);
    IKSTACK_CFG(singularity_probe);
    IKSTACK_CFG(halt_scale);
    IKSTACK_CFG(leaving_min_scale);
    IKSTACK_CFG(escape_speed);
    IKSTACK_CFG(joint_limit_margin);
    IKSTACK_CFG(state_tolerance);
    IKSTACK_CFG(smoothing);
    IKSTACK_CFG(max_dt);
#undef IKSTACK_CFG
    nb::class_<ikstack::ServoSolver>(m, "ServoSolver", "The built-in solver and its settings")
        .def(nb::init<>())
        .def_prop_rw(
            "kind", [](const ikstack::ServoSolver& s) { return int(s.kind); },
            [](ikstack::ServoSolver& s, int k) {
                s.kind = k == 1 ? ikstack::ServoSolverKind::BOX_QP : ikstack::ServoSolverKind::DLS;
            })
        .def_rw("min_damping", &ikstack::ServoSolver::min_damping)
        .def_rw("max_iterations", &ikstack::ServoSolver::max_iterations)
        .def_rw("tolerance", &ikstack::ServoSolver::tolerance);
    nb::class_<PyServo>(m, "Servo",
                        "The servo kernel; ikstack.servo.Servo(..., backend='native') wraps it")
        .def(nb::init<const ikstack::ServoChain&, const ServoConfig&, const ikstack::ServoSolver&,
                      nb::object, const std::string&, nb::object, nb::object>(),
             nb::arg("chain"), nb::arg("config"), nb::arg("solver"), nb::arg("solve").none(),
             nb::arg("solver_name"), nb::arg("generate").none(), nb::arg("reset").none())
        .def("step", &step, nb::arg("q"), nb::arg("dq"), nb::arg("stamp_ns"), nb::arg("kind"),
             nb::arg("data"), nb::arg("frame"), nb::arg("command_stamp_ns"), nb::arg("dt"),
             nb::arg("now_ns"), nb::arg("out_q"), nb::arg("out_dq"),
             "One cycle; kind 0 none, 1 pose (data: 4x4), 2 twist (data: 6, frame 0 base, 1 "
             "tool), 3 joint jog (data: dof). Returns (action, status, message, "
             "task_residual, nullspace_speed, condition_number, position_error, "
             "orientation_error, solver_iterations); the reference goes into out_q, out_dq.")
        .def("reject", &reject, nb::arg("q").none(), nb::arg("dq").none(), nb::arg("message"),
             nb::arg("dt"), nb::arg("out_q"), nb::arg("out_dq"),
             "REJECT with message: a stop from (q, dq) when usable, else from the last "
             "reference. Same return as step.")
        // the lock is taken without the GIL (a step in another thread may be in a callback)
        .def("reset",
             [](PyServo& s) {
                 nb::gil_scoped_release release;
                 std::lock_guard<std::mutex> lock(s.mutex);
                 s.servo->reset();
             })
        .def_prop_ro("faulted",
                     [](PyServo& s) {
                         nb::gil_scoped_release release;
                         std::lock_guard<std::mutex> lock(s.mutex);
                         return s.servo->faulted();
                     })
        .def_prop_ro("fault_message",
                     [](PyServo& s) {
                         std::string out;
                         {
                             nb::gil_scoped_release release;
                             std::lock_guard<std::mutex> lock(s.mutex);
                             out = s.servo->fault_message();
                         }
                         return out;
                     })
        .def_prop_ro("dof", [](PyServo& s) { return s.servo->dof(); });
}

#endif

}  // namespace ikstack_py
