// The servo cycle with a custom DifferentialIK and/or a MotionGenerator in the loop (the
// Python package's general path): the solver gets a DiffIKRequest, its failures (a failed
// result, a wrong size, non-finite output, an exception) latch SOLVER_ERROR; a generator's
// reference is re-validated, clipped into the box and held to the coupled constraints.
#include <exception>

#include "ikstack/servo.hpp"
#include "servo_cycle.hpp"
#include "servo_format.hpp"

namespace ikstack {

using namespace servo_detail;

void Servo::general_cycle(const double* dq, const double* a_prev, bool use_jerk, double dt,
                          int mode, const ServoCommand& cmd, int prev_flags, int* flags_out,
                          bool* moving) {
    Work& w = *w_;
    const int n = n_;
    const VecN& q = w.q;
    scratch_.clear();
    int flags = cycle_prepare(w, dq, a_prev, use_jerk, dt, mode, cmd.T.data(), cmd.twist.data(),
                              cmd.frame == 1);
    if (mode == POSE || mode == TWIST) {
        bool ok = true;
        int iters = 0;
        if (custom_ == nullptr) {
            ok = builtin_solve(&iters);
            if (!ok) {
                scratch_.assign(solver_name_);
                scratch_.append(" failed");
            }
        } else {
            DiffIKRequest& req = w.req;
            for (int r = 0; r < m_; ++r) {
                for (int i = 0; i < n; ++i) req.jacobian(r, i) = w.Jsel(r, i);
                req.task[r] = w.task[r];
            }
            for (int i = 0; i < n; ++i) {
                req.q[i] = q[i];
                req.lower[i] = w.lower[i];
                req.upper[i] = w.upper[i];
                req.preferred_velocity[i] = w.pref[i];
            }
            req.damping = cfg_.damping;
            req.dt = dt;
            DiffIKResult res;
            bool raised = false;
            try {
                res = custom_->solve(req, w.vsol);
            } catch (const std::exception& e) {
                raised = true;
                scratch_.assign(solver_name_);
                scratch_.append(" raised ");
                scratch_.append(e.what());
            } catch (...) {
                raised = true;
                scratch_.assign(solver_name_);
                scratch_.append(" raised an unknown exception");
            }
            if (raised) {
                ok = false;
            } else if (w.vsol.size() != n) {
                ok = false;
                append_fmt(scratch_, true, "%s: solver returned shape (%d,); expected (%d,)",
                           solver_name_.c_str(), w.vsol.size(), n);
            } else if (!w.vsol.all_finite()) {
                ok = false;
                scratch_.assign(solver_name_);
                scratch_.append(": solver returned non-finite velocities");
            } else if (!res.success) {
                ok = false;
                iters = res.iterations;
                scratch_.assign(solver_name_);
                scratch_.append(": ");
                scratch_.append(res.message);
            } else {
                iters = res.iterations;
                for (int i = 0; i < n; ++i) w.desired[i] = w.vsol[i];
            }
        }
        w.info[I_ITERS] = iters;
        if (!ok) {
            latch(scratch_.c_str());
            scratch_.assign(fault_);
            fault_cycle(dq, a_prev, use_jerk, dt, flags_out, moving);
            return;
        }
    } else if (mode == JOG) {
        for (int i = 0; i < n; ++i) w.desired[i] = cmd.velocities[static_cast<size_t>(i)];
    } else {
        for (int i = 0; i < n; ++i) w.desired[i] = 0.0;
        flags |= mode == FAULT ? F_SOLVER : F_STALE;
    }
    const bool generate = generator_ == nullptr || mode == FAULT;
    flags = cycle_finish(w, dq, dt, mode, flags, prev_flags, generate, moving);
    if (generate) {
        *flags_out = flags;
        return;
    }
    bool ok = true;
    try {
        for (int i = 0; i < n; ++i) w.vdq[i] = dq[i];
        w.vref_q.resize(n);
        w.vref_v.resize(n);
        if (!generator_->generate(q, w.vdq, w.desired, w.lower, w.upper, w.lim.hlo, w.lim.hhi, dt,
                                  w.vref_q, w.vref_v)) {
            ok = false;
            scratch_.assign("motion generator raised ");
            scratch_.append(generator_->error());
        } else if (w.vref_q.size() != n || w.vref_v.size() != n) {
            ok = false;
            append_fmt(scratch_, true,
                       "motion generator returned shapes (%d,), (%d,); expected (%d,)",
                       w.vref_q.size(), w.vref_v.size(), n);
        } else {
            int bad =
                reference_violation(w.vref_q.data(), w.vref_v.data(), w.lower.data(),
                                    w.upper.data(), w.lim.hlo.data(), w.lim.hhi.data(), 1e-9, n);
            if (bad >= 0) {
                ok = false;
                scratch_.assign("motion generator reference violates the limits of joint ");
                append_str_repr(scratch_, joint_names_[static_cast<size_t>(bad)]);
            }
        }
    } catch (const std::exception& e) {
        ok = false;
        scratch_.assign("motion generator raised ");
        scratch_.append(e.what());
    } catch (...) {
        ok = false;
        scratch_.assign("motion generator raised an unknown exception");
    }
    if (!ok) {
        latch(scratch_.c_str());
        scratch_.assign(fault_);
        fault_cycle(dq, a_prev, use_jerk, dt, flags_out, moving);
        return;
    }
    for (int i = 0; i < n; ++i) {
        w.out_q[i] = w.vref_q[i];
        w.out_v[i] = pymin(pymax(w.vref_v[i], w.lower[i]), w.upper[i]);
    }
    const int cflags =
        coupled_step(w, q.data(), dt, 0, w.lower.data(), w.upper.data(), w.info, w.out_v.data());
    int row;
    // the generator's velocity was held back: its position follows the velocity
    if (cflags || (w.cons.rows() > 0 && worst_row(w.out_q.data(), w.cons, &row) > 0.0))
        integrate(q, w.out_v, dt, w.lim.hlo, w.lim.hhi, w.out_q);
    *flags_out = finish_reference(w, dt, flags | cflags, false, moving);
}

}  // namespace ikstack
