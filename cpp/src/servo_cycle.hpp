// The body of one servo cycle, in two halves around the solver, on a fixed workspace.
//
// cycle_prepare computes the velocity box and the task (Jacobian, SVD, task velocity,
// projected secondary velocity); the solver runs; cycle_finish applies singularity scaling,
// smoothing, the box, the coupled constraints and integration, and decides the status flags.
// The Python package's cycle module, operation for operation.
#pragma once

#include "ikstack/diffik.hpp"
#include "servo_task.hpp"

namespace ikstack {
namespace servo_detail {

// indices of the info vector
constexpr int I_KAPPA = 0, I_PERR = 1, I_RERR = 2, I_NS = 3, I_RESID = 4, I_ITERS = 5, I_SFLAGS = 6,
              I_CROW = 7, N_INFO = 8;

struct Work {
    const Chain* chain = nullptr;
    int n = 0;
    Limits lim;
    Cons cons;
    TaskDef td;
    VecN posture;
    // packed configuration
    double gain, vlin, vang, posture_gain, centering_gain, damp, margin, ptol, rtol, rcond, smooth,
        stop, cmargin;
    SingParams sp;
    bool has_jerk = false;
    // per-cycle state (persists between cycles like the Python work buffer)
    Jacobian Jfull, Jsel;
    Mat4 T;
    Vec6 task, s;
    VecN pref;
    Mat6 U;
    MatN Vh, N;
    VecN lower, upper;
    int pos_bind[K];
    double info[N_INFO];
    VecN desired;
    VecN out_q, out_v;
    // memory across cycles
    double prev_dt = 0.0;
    int prev_flags = 0;
    bool has_prev_dq = false;
    VecN prev_dq, a_buf;
    VecN q;  // the accepted (clipped, projected) state
    VecN last_q, last_v;
    VecN mid;
    // scratch
    MatN H;
    VecN g;
    std::array<signed char, kMaxDof> qp_state{};
    CoupledScratch cw;
    ProbeScratch probe;
    VecN sec, z;
    VecN rq, rv, rlo, rhi;
    double rinfo[N_INFO];
    int rpb[K];
    // a custom solver's and generator's arguments
    DiffIKRequest req;
    VecN vdq, vsol, vref_q, vref_v;

    /// every vector and matrix sized once (no resizing, no allocation, per cycle)
    void size(int dof, int m) {
        n = dof;
        for (VecN* v : {&posture, &pref,    &lower,   &upper,    &desired,  &out_q,     &out_v,
                        &prev_dq, &a_buf,   &q,       &last_q,   &last_v,   &mid,       &g,
                        &sec,     &z,       &rq,      &rv,       &rlo,      &rhi,       &vdq,
                        &vsol,    &vref_q,  &vref_v,  &probe.qn, &probe.qp, &probe.esc, &lim.lo,
                        &lim.hi,  &lim.hlo, &lim.hhi, &lim.vmax, &lim.amax, &lim.jmax})
            v->resize(dof);
        const int k = m < dof ? m : dof;
        Jfull.resize(6, dof);
        probe.Jfull.resize(6, dof);
        Jsel.resize(m, dof);
        probe.Jsel.resize(m, dof);
        task.resize(m);
        s.resize(k);
        probe.s.resize(k);
        U.resize(m, k);
        probe.U.resize(m, k);
        Vh.resize(dof, dof);
        N.resize(dof, dof);
        H.resize(dof, dof);
        probe.V.resize(dof, dof);
        req.resize(m, dof);
    }
};

constexpr int F_GOAL = ServoStatus::GOAL_REACHED, F_VSCALED = ServoStatus::VELOCITY_SCALED,
              F_JBOUND = ServoStatus::JOINT_BOUND, F_STALE = ServoStatus::STALE_COMMAND,
              F_SOLVER = ServoStatus::SOLVER_ERROR, F_LCONFLICT = ServoStatus::LIMIT_CONFLICT,
              F_JERK = ServoStatus::JERK_RELAXED, F_HALT = ServoStatus::SINGULARITY_HALT,
              F_COUPLED = ServoStatus::COUPLED_BOUND;

/// one cycle's task into the workspace (kappa, errors and nullspace speed into info)
inline void cartesian_prepare(Work& w, int mode, const double* Tt, const double* twist, bool tool) {
    const TaskDef& td = w.td;
    const int n = w.n, m = td.m;
    task_jacobian(w.q, *w.chain, td, w.Jfull, w.T, w.Jsel);
    double vel[6], M[3][3], rv[3], sel[6];
    double perr = 0.0, rerr = 0.0;
    if (mode == POSE) {
        for (int cc = 0; cc < 3; ++cc) vel[cc] = Tt[cc * 4 + 3] - w.T(cc, 3);
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
                M[i][j] = Tt[i * 4 + 0] * w.T(j, 0) + Tt[i * 4 + 1] * w.T(j, 1) +
                          Tt[i * 4 + 2] * w.T(j, 2);
        servo_rotvec(M, rv);
        vel[3] = rv[0];
        vel[4] = rv[1];
        vel[5] = rv[2];
        for (int r = 0; r < m; ++r) {
            const int a = td.axes[r];
            if (a < 3)
                perr += vel[a] * vel[a];
            else
                rerr += vel[a] * vel[a];
        }
        perr = std::sqrt(perr);
        rerr = std::sqrt(rerr);
        for (int cc = 0; cc < 6; ++cc) vel[cc] *= w.gain;
    } else {
        if (tool) {
            for (int cc = 0; cc < 3; ++cc) {
                vel[cc] = w.T(cc, 0) * twist[0] + w.T(cc, 1) * twist[1] + w.T(cc, 2) * twist[2];
                vel[3 + cc] = w.T(cc, 0) * twist[3] + w.T(cc, 1) * twist[4] + w.T(cc, 2) * twist[5];
            }
        } else {
            for (int cc = 0; cc < 6; ++cc) vel[cc] = twist[cc];
        }
    }
    // cap only what the task controls
    for (int cc = 0; cc < 6; ++cc) sel[cc] = 0.0;
    for (int r = 0; r < m; ++r) sel[td.axes[r]] = 1.0;
    for (int cc = 0; cc < 6; ++cc) vel[cc] *= sel[cc];
    cap_norm(vel, 0, w.vlin);
    cap_norm(vel, 3, w.vang);
    for (int r = 0; r < m; ++r) {
        const int a = td.axes[r];
        w.task[r] = td.weights[a] * vel[a];
    }
    svd_jacobi(w.Jsel, w.U, w.s, w.Vh, true);  // warm: Vh holds the previous cycle's
    const double kappa = condition(w.s);
    double ns = 0.0;
    if (w.posture_gain != 0.0 || w.centering_gain != 0.0) {
        secondary_velocity(w.q, w.posture, w.posture_gain, w.lim.lo, w.lim.hi, w.lim.cont,
                           w.centering_gain, w.sec);
        projector_from_svd(w.s, w.Vh, w.rcond, w.N);
        ns = project(w.N, w.sec, w.pref);
    } else {
        for (int i = 0; i < n; ++i) w.pref[i] = 0.0;
    }
    w.info[I_KAPPA] = kappa;
    w.info[I_PERR] = perr;
    w.info[I_RERR] = rerr;
    w.info[I_NS] = ns;
}

/// the velocity box and, for Cartesian modes, the task (for the accepted state w.q);
/// returns the flags
inline int cycle_prepare(Work& w, const double* dq, const double* a_prev, bool use_jerk, double dt,
                         int mode, const double* Tt, const double* twist, bool tool) {
    int flags = 0;
    const int code = cycle_bounds(w.q.data(), dq, a_prev, use_jerk, dt, w.lim, w.margin,
                                  w.lower.data(), w.upper.data(), w.pos_bind, w.n);
    if (code & CONFLICT) flags |= F_LCONFLICT;
    if (code & JERK_RELAXED_CODE) flags |= F_JERK;
    for (int i = 0; i < N_INFO; ++i) w.info[i] = 0.0;
    w.info[I_KAPPA] = 1.0;
    w.info[I_CROW] = -1.0;
    if (mode == 0 || mode == 1) {
        cartesian_prepare(w, mode, Tt, twist, tool);
        if (mode == POSE && w.info[I_PERR] <= w.ptol && w.info[I_RERR] <= w.rtol) flags |= F_GOAL;
    }
    return flags;
}

/// the coupled constraints on the velocity v (in the box [lower, upper]); returns flags
inline int coupled_step(Work& w, const double* q, double dt, int flags, const double* lower,
                        const double* upper, double* info, double* v) {
    if (w.cons.rows() == 0) return flags;
    int row;
    const int code =
        coupled_project(q, v, lower, upper, w.lim.amax.data(), dt, w.cons, w.cmargin, &row, w.cw);
    if (code != C_FREE) {
        flags |= F_COUPLED;
        info[I_CROW] = row;
        if (code == C_CONFLICT) flags |= F_LCONFLICT;
    }
    return flags;
}

/// stop detection and flags for the reference in (out_q, out_v) (velocity already in the box)
inline int finish_reference(Work& w, double dt, int flags, bool integrate_q, bool* moving) {
    const int n = w.n;
    VecN& v = w.out_v;
    bool stopped = false;
    if (max_abs(v.data(), n) < w.stop) {
        brake_velocity(w.lower.data(), w.upper.data(), w.z.data(), n);
        if (max_abs(w.z.data(), n) == 0.0) {
            stopped = true;
            for (int i = 0; i < n; ++i) v[i] = 0.0;
        }
    }
    if (integrate_q || stopped) integrate(w.q, v, dt, w.lim.hlo, w.lim.hhi, w.out_q);
    if (bound_touched(v.data(), w.lower.data(), w.upper.data(), w.pos_bind, n)) flags |= F_JBOUND;
    if (!(flags & (F_STALE | F_SOLVER))) {
        for (int i = 0; i < n; ++i) {
            const double vi = v[i];
            const int pb = w.pos_bind[i];
            if (vi != 0.0 && ((vi >= w.upper[i] - 1e-12 && !(pb == 1 || pb == 2)) ||
                              (vi <= w.lower[i] + 1e-12 && !(pb == -1 || pb == 2)))) {
                flags |= F_VSCALED;
                break;
            }
        }
    }
    *moving = max_abs(v.data(), n) > 0.0;
    return flags;
}

/// from the solver's desired velocity to the reference (with `generate` also the box, the
/// coupled rows and integration); returns flags
inline int cycle_finish(Work& w, const double* dq, double dt, int mode, int flags, int prev_flags,
                        bool generate, bool* moving) {
    const int n = w.n;
    VecN& desired = w.desired;
    if (mode == 0 || mode == 1) {
        double resid = 0.0;
        for (int r = 0; r < w.td.m; ++r) {
            double x = -w.task[r];
            for (int i = 0; i < n; ++i) x += w.Jsel(r, i) * desired[i];
            resid += x * x;
        }
        w.info[I_RESID] = std::sqrt(resid);
        int sflags;
        const double scale = singularity_scale(w.q, desired, dq, w.lim.amax, w.task, w.Jsel, w.U,
                                               w.s, w.Vh, w.info[I_KAPPA], dt, w.T, *w.chain, w.td,
                                               w.sp, (prev_flags & F_HALT) != 0, &sflags, w.probe);
        flags |= sflags;
        w.info[I_SFLAGS] = sflags;
        if (scale < 1.0)
            for (int i = 0; i < n; ++i) desired[i] *= scale;
    } else if (mode < 0) {
        for (int i = 0; i < n; ++i) desired[i] = 0.0;
    }
    const double a = w.smooth;
    if (a > 0.0 && mode >= 0)
        for (int i = 0; i < n; ++i) desired[i] = a * dq[i] + (1.0 - a) * desired[i];
    *moving = false;
    if (!generate) return flags;
    scale_into_box(desired, w.lower, w.upper, w.out_v);
    flags = coupled_step(w, w.q.data(), dt, flags, w.lower.data(), w.upper.data(), w.info,
                         w.out_v.data());
    return finish_reference(w, dt, flags, true, moving);
}

/// a stop from (q0, v0) = (rq, rv) at the limits' rates into (last_q, last_v) (refused cycles)
inline void brake_reference(Work& w, const double* a_prev, bool use_jerk, double dt) {
    const int n = w.n;
    cycle_bounds(w.rq.data(), w.rv.data(), a_prev, use_jerk, dt, w.lim, w.margin, w.rlo.data(),
                 w.rhi.data(), w.rpb, n);
    brake_velocity(w.rlo.data(), w.rhi.data(), w.last_v.data(), n);
    for (int i = 0; i < N_INFO; ++i) w.rinfo[i] = 0.0;
    coupled_step(w, w.rq.data(), dt, 0, w.rlo.data(), w.rhi.data(), w.rinfo, w.last_v.data());
    integrate(w.rq, w.last_v, dt, w.lim.hlo, w.lim.hhi, w.last_q);
}

}  // namespace servo_detail
}  // namespace ikstack
