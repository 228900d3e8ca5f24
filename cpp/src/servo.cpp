// The servo kernel: input checks, the cycle, latched faults, REJECT stops and messages.
// The Python package's Servo (kernel module), with the same order of checks and messages.
#include "ikstack/servo.hpp"

#include "ikstack/chain.hpp"
#include "ikstack/diffik.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>

#include "servo_cycle.hpp"
#include "servo_format.hpp"

namespace ikstack {

using namespace servo_detail;

namespace {

/// a finite 4x4 rigid transform (orthonormal rotation, det +1, last row 0 0 0 1)
bool rigid_ok(const double* T) {
    for (int i = 0; i < 16; ++i)
        if (!isfin(T[i])) return false;
    if (T[12] != 0.0 || T[13] != 0.0 || T[14] != 0.0 || std::fabs(T[15] - 1.0) > 1e-9) return false;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            double d = T[0 * 4 + i] * T[0 * 4 + j] + T[1 * 4 + i] * T[1 * 4 + j] +
                       T[2 * 4 + i] * T[2 * 4 + j];
            if (std::fabs(d - (i == j ? 1.0 : 0.0)) > 1e-6) return false;
        }
    double det = T[0] * (T[5] * T[10] - T[6] * T[9]) - T[1] * (T[4] * T[10] - T[6] * T[8]) +
                 T[2] * (T[4] * T[9] - T[5] * T[8]);
    return det > 0.0;
}

bool all_finite(const double* x, int n) {
    for (int i = 0; i < n; ++i)
        if (!isfin(x[i])) return false;
    return true;
}

/// now - stamp > timeout [s] exactly (stamp <= now)
bool older_than(std::int64_t now, std::int64_t stamp, double timeout_s) {
    std::uint64_t d = static_cast<std::uint64_t>(now) - static_cast<std::uint64_t>(stamp);
    long double t = static_cast<long double>(timeout_s * 1e9);
    return static_cast<long double>(d) > t;
}

}  // namespace

Servo::Servo(const ServoChain& chain, const ServoConfig& config, const ServoSolver& solver) {
    init(chain, config, solver);
}

Servo::Servo(const Chain& chain, const ServoConfig& config, const ServoSolver& solver) {
    init(ServoChain::from_chain(chain), config, solver);
}

Servo::Servo(const ServoChain& chain, const ServoConfig& config, const ServoSolver& solver,
             DifferentialIK* custom_solver, MotionGenerator* generator) {
    custom_ = custom_solver;
    generator_ = generator;
    init(chain, config, solver);
}

Servo::~Servo() = default;

void Servo::init(const ServoChain& chain, const ServoConfig& config, const ServoSolver& solver) {
    std::string bad = chain.check();
    if (!bad.empty()) throw std::invalid_argument(bad);
    bad = config.check();
    if (!bad.empty()) throw std::invalid_argument(bad);
    if (solver.kind == ServoSolverKind::BOX_QP) {
        if (solver.max_iterations < 1)
            throw std::invalid_argument("max_iterations must be >= 1; got " +
                                        std::to_string(solver.max_iterations));
        if (!(isfin(solver.tolerance) && solver.tolerance > 0))
            throw std::invalid_argument("tolerance must be finite and > 0; got " +
                                        py_repr(solver.tolerance));
    } else if (!(isfin(solver.min_damping) && solver.min_damping >= 0.0)) {
        throw std::invalid_argument("min_damping must be finite and >= 0; got " +
                                    py_repr(solver.min_damping));
    }
    const int n = chain.dof;
    n_ = n;
    cfg_ = config;
    solver_ = solver;
    kin_.reset(new Chain(chain.kinematics()));
    w_.reset(new Work());
    Work& w = *w_;
    w.chain = kin_.get();
    w.size(n, config.num_task_axes);
    const double km = chain.kinematic_margin;
    Limits& L = w.lim;
    w.has_jerk = false;
    for (int i = 0; i < n; ++i) {
        L.lo[i] = chain.lower[i] + km;
        L.hi[i] = chain.upper[i] - km;
        if (L.lo[i] > L.hi[i]) {  // narrower than twice the margin: keeps its hard limits
            L.lo[i] = chain.lower[i];
            L.hi[i] = chain.upper[i];
        }
        L.hlo[i] = chain.lower[i];
        L.hhi[i] = chain.upper[i];
        L.vmax[i] = chain.velocity[i];
        L.amax[i] = chain.acceleration[i];
        L.jmax[i] = chain.jerk[i];
        L.cont[i] = chain.continuous[i] != 0;
        if (isfin(chain.jerk[i])) w.has_jerk = true;
        bool bounded = isfin(chain.lower[i]) && isfin(chain.upper[i]);
        w.mid[i] = bounded ? 0.5 * (chain.lower[i] + chain.upper[i]) : 0.0;
    }
    Cons& C = w.cons;
    C.n = n;
    C.nl = static_cast<int>(chain.linear_rows.size());
    C.nq = static_cast<int>(chain.quadrant_rows.size());
    joint_names_ = chain.joint_names;
    row_names_.clear();
    size_t longest = 0;
    for (int r = 0; r < C.nl; ++r) {
        const ServoLinearRow& row = chain.linear_rows[static_cast<size_t>(r)];
        for (int i = 0; i < n; ++i) C.A[r][i] = row.a[static_cast<size_t>(i)];
        C.b[r] = row.b;
        row_names_.push_back(row.name);
    }
    for (int r = 0; r < C.nq; ++r) {
        const ServoQuadrantRow& row = chain.quadrant_rows[static_cast<size_t>(r)];
        C.qi[r] = row.i;
        C.qj[r] = row.j;
        for (int t = 0; t < 4; ++t)
            for (int k = 0; k < 4; ++k)
                C.table[r][t * 4 + k] = row.table[static_cast<size_t>(t)][static_cast<size_t>(k)];
        row_names_.push_back(row.name);
    }
    for (const auto& s : row_names_) longest = std::max(longest, s.size());
    for (const auto& s : joint_names_) longest = std::max(longest, s.size());
    TaskDef& td = w.td;
    td.m = config.num_task_axes;
    for (int r = 0; r < td.m; ++r) td.axes[r] = config.task_axes[static_cast<size_t>(r)];
    for (int a = 0; a < 6; ++a) td.weights[a] = config.task_weights[static_cast<size_t>(a)];
    m_ = td.m;
    for (int i = 0; i < n; ++i)
        w.posture[i] = config.has_nullspace_reference
                           ? config.nullspace_reference[static_cast<size_t>(i)]
                           : 0.0;
    w.gain = config.pose_gain;
    w.vlin = config.max_linear_speed;
    w.vang = config.max_angular_speed;
    w.posture_gain = config.has_nullspace_reference ? config.nullspace_gain : 0.0;
    w.centering_gain = config.joint_centering_gain;
    w.damp = (custom_ == nullptr && solver.kind == ServoSolverKind::DLS)
                 ? pymax(config.damping, solver.min_damping)
                 : config.damping;
    w.margin = config.joint_limit_margin;
    w.ptol = config.position_tolerance;
    w.rtol = config.rotation_tolerance;
    w.rcond = kNullspaceRcond;
    w.smooth = config.smoothing;
    w.stop = config.stop_velocity;
    w.cmargin = km;
    w.sp = SingParams{config.singularity_decelerate,
                      config.singularity_halt,
                      config.leaving_halt(),
                      config.singularity_probe,
                      config.leaving_min_scale,
                      config.escape_speed,
                      config.halt_scale};
    if (custom_ != nullptr)
        solver_name_ = custom_->name();
    else
        solver_name_ =
            solver.kind == ServoSolverKind::BOX_QP ? "BoxQPSolver" : "DampedLeastSquares";
    // messages never outgrow this: no allocation in step()
    const size_t cap = 1024 + 2 * longest + solver_name_.size();
    fault_.reserve(cap);
    scratch_.reserve(cap);
    result_.message.reserve(cap + 128);
    result_.dof = n;
    has_last_ref_ = false;
    reset();
}

void Servo::reset() {
    fault_.clear();
    Work& w = *w_;
    w.Vh.set_identity();
    has_last_now_ = has_last_stamp_ = false;
    w.prev_dt = 0.0;
    w.prev_flags = 0;
    w.has_prev_dq = false;
    for (int i = 0; i < n_; ++i) w.prev_dq[i] = 0.0;
    // the last reference survives a reset (a refused cycle keeps braking from it)
    if (generator_ != nullptr) generator_->reset();
}

void Servo::latch(const char* reason) {
    if (std::strncmp(reason, "motion", 6) == 0) {
        fault_.assign(reason);
    } else {
        fault_.assign("solver error: ");
        fault_.append(reason);
    }
}

void Servo::solver_failure_reason() {
    scratch_.assign(solver_name_);
    scratch_.append(" failed (iteration cap, empty box or singular normal matrix)");
}

void Servo::fault_cycle(const double* dq, const double* a_prev, bool use_jerk, double dt,
                        int* flags, bool* moving) {
    static const ServoCommand none;
    cycle(dq, a_prev, use_jerk, dt, FAULT, none, 0, flags, moving);
}

/// prepare -> built-in solver -> finish; false when the solver failed
bool Servo::cycle(const double* dq, const double* a_prev, bool use_jerk, double dt, int mode,
                  const ServoCommand& cmd, int prev_flags, int* flags, bool* moving) {
    Work& w = *w_;
    const int n = n_;
    int f = cycle_prepare(w, dq, a_prev, use_jerk, dt, mode, cmd.T.data(), cmd.twist.data(),
                          cmd.frame == 1);
    if (mode == 0 || mode == 1) {
        int it = 0;
        const bool ok = builtin_solve(&it);
        w.info[I_ITERS] = it;
        if (!ok) {
            *flags = f | F_SOLVER;
            *moving = false;
            return false;
        }
    } else if (mode == JOG) {
        for (int i = 0; i < n; ++i) w.desired[i] = cmd.velocities[static_cast<size_t>(i)];
    } else {
        for (int i = 0; i < n; ++i) w.desired[i] = 0.0;
        f |= mode == FAULT ? F_SOLVER : F_STALE;
    }
    *flags = cycle_finish(w, dq, dt, mode, f, prev_flags, true, moving);
    return true;
}

/// the built-in solver on this cycle's task into w.desired; false when it failed
bool Servo::builtin_solve(int* iterations) {
    Work& w = *w_;
    if (solver_.kind == ServoSolverKind::DLS) {
        *iterations = 1;
        return DampedLeastSquares::solve_arrays(w.Jsel, w.task, w.pref, w.damp, w.lower, w.upper,
                                                w.desired);
    }
    normal_matrices(w.Jsel, w.task, w.pref, w.damp, w.H, w.g);
    return BoxQPSolver::solve_qp(w.H, w.g, w.lower, w.upper, w.desired, w.qp_state,
                                 solver_.max_iterations, solver_.tolerance,
                                 *iterations) == DiffIKStatus::Ok;
}

const ServoResult& Servo::step(const JointState& state, const ServoCommand& command, double dt,
                               std::int64_t now_ns) {
    Work& w = *w_;
    const int n = n_;
    const ServoConfig& cfg = cfg_;
    // ---- validate (no state is touched before every check passed)
    if (!(0.0 < dt && dt <= cfg.max_dt)) {
        scratch_.assign("dt must be in (0, ");
        append_repr(scratch_, cfg.max_dt);
        scratch_.append("] s; got ");
        append_repr(scratch_, dt);
        return reject_at(dt, &state);
    }
    if (has_last_now_ && now_ns < last_now_) {
        append_fmt(scratch_, true, "now_ns went backwards (%" PRId64 " < %" PRId64 ")", now_ns,
                   last_now_);
        return reject_at(dt, &state);
    }
    // check_state: finiteness, then the first joint outside the hard limits (+-tol)
    const double tol = cfg.state_tolerance;
    int j = -1;
    bool finite = true;
    for (int i = 0; i < n; ++i) {
        const double qi = state.q[static_cast<size_t>(i)];
        if (!(isfin(qi) && isfin(state.dq[static_cast<size_t>(i)]))) {
            finite = false;
            break;
        }
        if (j < 0 && (qi < w.lim.hlo[i] - tol || qi > w.lim.hhi[i] + tol)) j = i;
        w.q[i] = pymin(pymax(qi, w.lim.hlo[i]), w.lim.hhi[i]);
    }
    if (!finite) {
        append_fmt(scratch_, true, "state.q and state.dq must be finite (%d,) arrays", n);
        return reject_at(dt, &state);
    }
    if (has_last_stamp_ && state.stamp_ns < last_stamp_) {
        append_fmt(scratch_, true, "state.stamp_ns went backwards (%" PRId64 " < %" PRId64 ")",
                   state.stamp_ns, last_stamp_);
        return reject_at(dt, &state);
    }
    if (j >= 0) {
        scratch_.assign("joint ");
        append_str_repr(scratch_, joint_names_[static_cast<size_t>(j)]);
        append_fmt(scratch_, false,
                   " = %.6g is outside its hard limits [%.6g, %.6g] by more than the state "
                   "tolerance %g",
                   state.q[static_cast<size_t>(j)], w.lim.hlo[j], w.lim.hhi[j], tol);
        return reject_at(dt, &state);
    }
    if (w.cons.rows() > 0) {
        int r = project_state(w.q.data(), w.cons, tol, w.cw);
        if (r >= 0) {
            scratch_.assign("the state violates the coupled constraint ");
            scratch_.append(row_names_[static_cast<size_t>(r)]);
            append_fmt(scratch_, false, " by more than the state tolerance %g", tol);
            return reject_at(dt, &state);
        }
    }
    // ---- the command
    int mode = MISSING;
    if (command.type != CommandType::NONE) {
        if (command.stamp_ns > now_ns) {
            append_fmt(scratch_, true, "command stamped in the future (%" PRId64 " > %" PRId64 ")",
                       command.stamp_ns, now_ns);
            return reject_at(dt, &state);
        }
        const bool stale = older_than(now_ns, command.stamp_ns, cfg.command_timeout);
        if (command.type == CommandType::POSE) {
            if (!rigid_ok(command.T.data())) {
                scratch_.assign("T_base_target must be a finite (4, 4) rigid transform");
                return reject_at(dt, &state);
            }
            mode = stale ? STALE : POSE;
        } else if (command.type == CommandType::TWIST) {
            if (!all_finite(command.twist.data(), 6)) {
                scratch_.assign("twist must be a finite (6,) array [v; w]");
                return reject_at(dt, &state);
            }
            if (command.frame != 0 && command.frame != 1) {
                append_fmt(scratch_, true, "twist frame %d is unknown; valid: 'base', 'tool'",
                           command.frame);
                return reject_at(dt, &state);
            }
            mode = stale ? STALE : TWIST;
        } else if (command.type == CommandType::JOINT_JOG) {
            if (!all_finite(command.velocities.data(), n)) {
                append_fmt(scratch_, true, "jog velocities must be a finite (%d,) array", n);
                return reject_at(dt, &state);
            }
            mode = stale ? STALE : JOG;
        } else {
            scratch_.assign(
                "unknown command type; use PoseCommand, TwistCommand, JointJogCommand or None");
            return reject_at(dt, &state);
        }
    }
    // ---- accepted
    has_last_now_ = true;
    last_now_ = now_ns;
    has_last_stamp_ = true;
    last_stamp_ = state.stamp_ns;
    if (!fault_.empty()) mode = FAULT;
    const double* dq = state.dq.data();
    const bool use_jerk = w.has_jerk && w.has_prev_dq && w.prev_dt > 0;
    const double* a_prev = dq;
    if (use_jerk) {
        for (int i = 0; i < n; ++i) w.a_buf[i] = (dq[i] - w.prev_dq[i]) / w.prev_dt;
        a_prev = w.a_buf.data();
    }
    if (w.has_jerk) {
        for (int i = 0; i < n; ++i) w.prev_dq[i] = dq[i];
        w.has_prev_dq = true;
    }
    w.prev_dt = dt;
    const int prev_flags = w.prev_flags;
    int flags = 0;
    bool moving = false;
    bool have_message = false;
    if ((custom_ == nullptr || (mode != POSE && mode != TWIST)) && generator_ == nullptr) {
        if (!cycle(dq, a_prev, use_jerk, dt, mode, command, prev_flags, &flags, &moving)) {
            solver_failure_reason();
            latch(scratch_.c_str());
            fault_cycle(dq, a_prev, use_jerk, dt, &flags, &moving);
            result_.message.assign(fault_);
            have_message = true;
        }
    } else {
        general_cycle(dq, a_prev, use_jerk, dt, mode, command, prev_flags, &flags, &moving);
        if (!scratch_.empty()) {
            result_.message.assign(scratch_);
            have_message = true;
        }
    }
    for (int i = 0; i < n; ++i) {
        w.last_q[i] = w.out_q[i];
        w.last_v[i] = w.out_v[i];
    }
    has_last_ref_ = true;
    w.prev_flags = (mode == POSE || mode == TWIST) ? flags : 0;
    if (!have_message) compose_message(flags, moving);
    ServoResult& res = result_;
    res.action = moving ? Action::TRACK : Action::HOLD;
    res.status = static_cast<std::uint32_t>(flags);
    for (int i = 0; i < n; ++i) {
        res.q[static_cast<size_t>(i)] = w.out_q[i];
        res.dq[static_cast<size_t>(i)] = w.out_v[i];
    }
    res.task_residual = w.info[I_RESID];
    res.nullspace_speed = w.info[I_NS];
    res.condition_number = w.info[I_KAPPA];
    res.position_error = w.info[I_PERR];
    res.rotation_error = w.info[I_RERR];
    res.solver_iterations = static_cast<int>(w.info[I_ITERS]);
    return res;
}

void Servo::compose_message(int flags, bool moving) {
    std::string& out = result_.message;
    const Work& w = *w_;
    if (flags & F_SOLVER) {
        out.assign(fault_.empty() ? "solver error" : fault_.c_str());
        return;
    }
    if (flags & F_STALE) {
        out.assign("no fresh command (timeout ");
        append_repr(out, cfg_.command_timeout);
        out.append(moving ? " s): halting" : " s): stopped");
        return;
    }
    out.clear();
    bool parts = false;
    if (flags & F_LCONFLICT) {
        out.append(
            "limit conflict: the measured state cannot stop within the acceleration limits; "
            "position and velocity limits take priority");
        parts = true;
    }
    if (flags & F_COUPLED) {
        if (parts) out.append("; ");
        const int r = static_cast<int>(w.info[I_CROW]);
        out.append("coupled constraint ");
        if (0 <= r && r < static_cast<int>(row_names_.size()))
            out.append(row_names_[static_cast<size_t>(r)]);
        else
            out.append("a coupled constraint");
        out.append(moving ? " binds: moving along it" : " binds: held at it");
        parts = true;
    }
    const int sf = static_cast<int>(w.info[I_SFLAGS]);
    if (sf && !parts) {
        const double kappa = w.info[I_KAPPA];
        if (sf & ServoStatus::SINGULARITY_HALT)
            append_fmt(out, true, "halted: moving toward a singularity (condition number %.3g)",
                       kappa);
        else if (sf & ServoStatus::SINGULARITY_ESCAPE)
            out.assign("escaping an exact singularity");
        else if (sf & ServoStatus::SINGULARITY_LEAVING)
            append_fmt(out, true, "leaving a singularity (condition number %.3g)", kappa);
        else
            append_fmt(out, true, "decelerating near a singularity (condition number %.3g)", kappa);
        return;
    }
    if (parts) return;
    if (flags & F_GOAL)
        out.assign(moving ? "goal reached; settling" : "goal reached");
    else if (flags & ServoStatus::JOINT_BOUND)
        out.assign("held back by a joint's position limit (braking bound)");
    else
        out.assign("ok");
}

const ServoResult& Servo::reject(const JointState* state, const char* message, double dt) {
    scratch_.assign(message);
    return reject_at(dt, state);
}

/// REJECT with the message in scratch_: a stop within the acceleration limits from the
/// measured state when it is usable, else from the last reference (a hold once stopped)
const ServoResult& Servo::reject_at(double dt, const JointState* state) {
    Work& w = *w_;
    const int n = n_;
    const double tol = cfg_.state_tolerance;
    double step = dt;
    if (!(0.0 < dt && dt <= cfg_.max_dt)) step = w.prev_dt > 0 ? w.prev_dt : 0.01;
    std::string& msg = result_.message;
    msg.assign(scratch_);
    bool have = false;
    const bool usable =
        state != nullptr && all_finite(state->q.data(), n) && all_finite(state->dq.data(), n);
    if (usable) {
        for (int i = 0; i < n; ++i) {
            w.rq[i] = pymin(pymax(state->q[static_cast<size_t>(i)], w.lim.hlo[i]), w.lim.hhi[i]);
            w.rv[i] = state->dq[static_cast<size_t>(i)];
        }
        have = true;
        // outside a coupled constraint: not a state to brake from
        if (w.cons.rows() > 0 && project_state(w.rq.data(), w.cons, tol, w.cw) >= 0) have = false;
    } else if (state != nullptr && has_last_ref_) {
        msg.append("; the state is unusable: holding the last safe reference");
    }
    if (!have && has_last_ref_) {
        for (int i = 0; i < n; ++i) {
            w.rq[i] = w.last_q[i];
            w.rv[i] = w.last_v[i];
        }
        have = true;
    }
    ServoResult& res = result_;
    if (have) {
        const bool use_jerk = w.has_jerk && w.has_prev_dq && w.prev_dt > 0;
        const double* a_prev = w.rv.data();
        if (use_jerk) {
            for (int i = 0; i < n; ++i) w.a_buf[i] = (w.rv[i] - w.prev_dq[i]) / w.prev_dt;
            a_prev = w.a_buf.data();
        }
        brake_reference(w, a_prev, use_jerk, step);
        has_last_ref_ = true;
        for (int i = 0; i < n; ++i) {
            res.q[static_cast<size_t>(i)] = w.last_q[i];
            res.dq[static_cast<size_t>(i)] = w.last_v[i];
        }
    } else {
        for (int i = 0; i < n; ++i) {
            double x = w.mid[i];
            if (state != nullptr && isfin(state->q[static_cast<size_t>(i)]))
                x = state->q[static_cast<size_t>(i)];
            w.rq[i] = pymin(pymax(x, w.lim.hlo[i]), w.lim.hhi[i]);
        }
        if (w.cons.rows() > 0) project_state(w.rq.data(), w.cons, INF, w.cw);
        for (int i = 0; i < n; ++i) {
            res.q[static_cast<size_t>(i)] = w.rq[i];
            res.dq[static_cast<size_t>(i)] = 0.0;
        }
    }
    res.action = Action::REJECT;
    res.status = ServoStatus::INVALID_INPUT | (fault_.empty() ? 0u : ServoStatus::SOLVER_ERROR);
    res.task_residual = 0.0;
    res.nullspace_speed = 0.0;
    res.condition_number = 1.0;
    res.position_error = 0.0;
    res.rotation_error = 0.0;
    res.solver_iterations = 0;
    return res;
}

}  // namespace ikstack
