// The Cartesian task of one cycle and the singularity handling.
//
// Task: pose error (or twist) times gain, capped, selected and weighted; the task Jacobian's
// SVD (warm-started from the previous cycle), condition number, nullspace projector and the
// projected secondary velocity. Singularity: condition-number scaling with MoveIt's direction
// probe, a look-ahead to where the arm would stop, leaving motion never halted, and a
// second-order escape at an exact singularity. The Python package's kernels, op for op.
#pragma once

#include <cmath>

#include "ikstack/chain.hpp"
#include "servo_limits.hpp"

namespace ikstack {
namespace servo_detail {

constexpr int POSE = 0, TWIST = 1, JOG = 2, MISSING = -1, STALE = -2, FAULT = -3;
constexpr int S_DECELERATE = ServoStatus::SINGULARITY_DECELERATE,
              S_HALT = ServoStatus::SINGULARITY_HALT, S_LEAVING = ServoStatus::SINGULARITY_LEAVING,
              S_ESCAPE = ServoStatus::SINGULARITY_ESCAPE;
constexpr double SINGULAR_RCOND = 1e-9;
constexpr double PI = 3.141592653589793;

/// the task definition (selected axes and weights)
struct TaskDef {
    int m = 0;
    int axes[6];
    double weights[6];
};

/// scratch of the singularity probes (the Python kernels allocate these per call)
struct ProbeScratch {
    Jacobian Jfull, Jsel;
    Mat4 T;
    Mat6 U;
    Vec6 s;
    MatN V;
    VecN qn, qp, esc;
};

/// FK into T, the full Jacobian into Jfull, the selected weighted rows into Jsel (m x n)
inline void task_jacobian(const VecN& q, const Chain& c, const TaskDef& td, Jacobian& Jfull,
                          Mat4& T, Jacobian& Jsel) {
    c.fk_jacobian(q, T, Jfull);
    const int n = q.size();
    for (int r = 0; r < td.m; ++r) {
        const int a = td.axes[r];
        const double w = td.weights[a];
        for (int i = 0; i < n; ++i) Jsel(r, i) = w * Jfull(a, i);
    }
}

inline double condition(const Vec6& s) {
    const int k = s.size();
    if (k == 0) return 1.0;
    const double smin = s[k - 1];
    if (smin <= SINGULAR_RCOND * s[0] || smin <= 0.0) return INF;
    return s[0] / smin;
}

inline double kappa_at(const VecN& q, const Chain& c, const TaskDef& td, ProbeScratch& P) {
    task_jacobian(q, c, td, P.Jfull, P.T, P.Jsel);
    svd_jacobi(P.Jsel, P.U, P.s, P.V, false);
    return condition(P.s);
}

inline void copy_square(const MatN& from, MatN& to) {
    const int n = from.rows();
    for (int i = 0; i < n * n; ++i) to.data()[i] = from.data()[i];
}

inline double kappa_near(const VecN& q, const MatN& Vh, const Chain& c, const TaskDef& td,
                         ProbeScratch& P) {
    task_jacobian(q, c, td, P.Jfull, P.T, P.Jsel);
    copy_square(Vh, P.V);
    svd_jacobi(P.Jsel, P.U, P.s, P.V, true);
    return condition(P.s);
}

inline double kappa_near_capped(const VecN& q, const MatN& Vh, const Jacobian& J0, const Vec6& s0,
                                double cap, const Chain& c, const TaskDef& td, ProbeScratch& P) {
    const int n = q.size(), m = td.m, k = m < n ? m : n;
    task_jacobian(q, c, td, P.Jfull, P.T, P.Jsel);
    if (k > 0 && s0[k - 1] > 0.0) {
        double d2 = 0.0;
        for (int r = 0; r < m; ++r)
            for (int i = 0; i < n; ++i) {
                const double x = P.Jsel(r, i) - J0(r, i);
                d2 += x * x;
            }
        const double d = std::sqrt(d2) * (1.0 + 1e-9) + 1e-12 * s0[0];
        const double lo = s0[k - 1] - d;
        if (lo > 0.0) {
            const double bound = (s0[0] + d) / lo * (1.0 + 1e-9);
            if (bound < cap) return bound;
        }
    }
    copy_square(Vh, P.V);
    svd_jacobi(P.Jsel, P.U, P.s, P.V, true);
    return condition(P.s);
}

inline void rotvec_delta(const Mat4& Ra, const Mat4& Rb, double* out) {
    double M[3][3];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            M[i][j] = Ra(i, 0) * Rb(j, 0) + Ra(i, 1) * Rb(j, 1) + Ra(i, 2) * Rb(j, 2);
    out[0] = 0.5 * (M[2][1] - M[1][2]);
    out[1] = 0.5 * (M[0][2] - M[2][0]);
    out[2] = 0.5 * (M[1][0] - M[0][1]);
}

/// try +-v for each lost right singular vector; the best escape direction into out
inline bool escape(const VecN& q, const Vec6& task, const Mat4& T0, const MatN& Vh, const Vec6& s,
                   double kappa0, const Chain& c, const TaskDef& td, double h, VecN& out,
                   ProbeScratch& P) {
    const int n = q.size(), m = td.m, k = s.size();
    Mat4 Tp;
    double d[6];
    double rv[3];
    double best = 0.0;
    bool found = false;
    double tnorm = 0.0;
    for (int r = 0; r < m; ++r) tnorm += task[r] * task[r];
    tnorm = std::sqrt(tnorm);
    if (tnorm == 0.0) return false;
    const double smax = k > 0 ? s[0] : 0.0;
    for (int j = 0; j < n; ++j) {
        const bool lost = j < k && (j == k - 1 || s[j] <= 1e-6 * smax);
        if (!lost) continue;
        for (int si = 0; si < 2; ++si) {
            const double sign = si == 0 ? 1.0 : -1.0;
            for (int i = 0; i < n; ++i) P.qp[i] = q[i] + sign * h * Vh(j, i);
            c.fk(P.qp, Tp);
            for (int cc = 0; cc < 3; ++cc) d[cc] = Tp(cc, 3) - T0(cc, 3);
            rotvec_delta(Tp, T0, rv);
            d[3] = rv[0];
            d[4] = rv[1];
            d[5] = rv[2];
            double dot = 0.0, dn = 0.0;
            for (int r = 0; r < m; ++r) {
                const int a = td.axes[r];
                const double x = td.weights[a] * d[a];
                dot += x * task[r];
                dn += x * x;
            }
            if (dn <= 0.0) continue;
            const double score = dot / (std::sqrt(dn) * tnorm);
            if (score > 0.1 && score > best) {
                if (kappa_at(P.qp, c, td, P) < kappa0) {
                    best = score;
                    found = true;
                    for (int i = 0; i < n; ++i) out[i] = sign * Vh(j, i);
                }
            }
        }
    }
    return found;
}

inline double sing_scale(double kappa, double k_dec, double upper) {
    if (!isfin(kappa)) return 0.0;
    return 1.0 - (kappa - k_dec) / (upper - k_dec);
}

struct SingParams {
    double k_dec, k_halt, k_leave, probe, min_leave, escape_speed, halt_scale;
};

/// speed scale for the candidate dq (may add an escape motion to dq); flags in *flags_out
inline double singularity_scale(const VecN& q, VecN& dq, const double* dq_meas, const VecN& amax,
                                const Vec6& task, const Jacobian& Jsel, const Mat6& U,
                                const Vec6& s, const MatN& Vh, double kappa0, double dt,
                                const Mat4& T0, const Chain& c, const TaskDef& td,
                                const SingParams& sp, bool halted, int* flags_out,
                                ProbeScratch& P) {
    const int n = q.size(), m = td.m;
    *flags_out = 0;
    if (!(kappa0 > 0.5 * sp.k_dec)) return 1.0;
    int flags = 0;
    VecN& qn = P.qn;
    double ahead = 1.0;
    bool moving = false;
    for (int i = 0; i < n; ++i) {
        double d = 0.0;
        if (isfin(amax[i])) d = dq_meas[i] * std::fabs(dq_meas[i]) / (2.0 * amax[i]);
        qn[i] = q[i] + d + dq[i] * dt;
        if (dq_meas[i] != 0.0) moving = true;
    }
    if (moving) {
        // only a value above k_dec matters here, so a certified bound below it will do
        const double kappa_a = kappa_near_capped(qn, Vh, Jsel, s, sp.k_dec, c, td, P);
        if (kappa_a > kappa0 && kappa_a > sp.k_dec)
            ahead = pymax(sing_scale(kappa_a, sp.k_dec, sp.k_halt), 0.0);
    }
    if (!(kappa0 > sp.k_dec)) {
        if (ahead < 1.0) {
            if (ahead <= sp.halt_scale) {
                *flags_out = S_HALT;
                return 0.0;
            }
            *flags_out = S_DECELERATE;
            return ahead;
        }
        return 1.0;
    }
    // does the candidate step itself lower the condition number?
    for (int i = 0; i < n; ++i) qn[i] = q[i] + dq[i] * dt;
    const double kappa1 = kappa_near(qn, Vh, c, td, P);
    bool leaving = kappa1 < kappa0 * (1.0 - 1e-12);
    VecN& esc = P.esc;
    for (int i = 0; i < n; ++i) esc[i] = 0.0;
    if ((!leaving && !(kappa0 < sp.k_halt)) || !(kappa0 < sp.k_leave)) {
        // at (or near) an exact singularity: a second-order escape motion
        if (escape(q, task, T0, Vh, s, kappa0, c, td, 0.05, esc, P)) {
            for (int i = 0; i < n; ++i) {
                esc[i] *= sp.escape_speed;
                qn[i] = q[i] + (dq[i] + esc[i]) * dt;
            }
            const double kappa_e = kappa_at(qn, c, td, P);
            if (kappa_e < kappa0 * (1.0 - 1e-12)) {
                leaving = true;
                flags |= S_ESCAPE;
            } else {
                for (int i = 0; i < n; ++i) esc[i] = 0.0;
            }
        }
    }
    if (leaving) {
        const double scale =
            pymin(pymax(sing_scale(kappa0, sp.k_dec, sp.k_leave), sp.min_leave), 1.0);
        // the escape motion is not scaled: it is already a slow joint-space motion
        for (int i = 0; i < n; ++i) dq[i] = scale * dq[i] + esc[i];
        *flags_out = flags | S_LEAVING;
        return 1.0;
    }
    // MoveIt's direction probe on the last left singular vector
    const int k = s.size();
    bool toward = kappa1 > kappa0;
    if (k > 0 && m > 0) {
        const int col = (k < m ? k : m) - 1;
        const double sl = s[col];
        for (int i = 0; i < n; ++i) {
            if (sl > SINGULAR_RCOND * s[0] && sl > 0.0)
                qn[i] = q[i] + Vh(col, i) * sp.probe / sl;
            else
                qn[i] = q[i] + Vh(col, i) * sp.probe;
        }
        const double kp = kappa_at(qn, c, td, P);
        double dot = 0.0;
        for (int r = 0; r < m; ++r) dot += U(r, col) * task[r];
        if (kappa0 > kp) dot = -dot;
        if (dot > 0.0) toward = true;
    }
    if (toward && halted) {
        *flags_out = S_HALT;
        return 0.0;
    }
    double scale = sing_scale(kappa0, sp.k_dec, toward ? sp.k_halt : sp.k_leave);
    if (toward) {
        scale = pymin(scale, ahead);
        if (scale <= sp.halt_scale) {
            *flags_out = S_HALT;
            return 0.0;
        }
    }
    if (scale <= 0.0) {
        *flags_out = S_HALT;
        return 0.0;
    }
    if (!toward) flags |= S_LEAVING;
    *flags_out = flags | S_DECELERATE;
    return pymin(scale, 1.0);
}

/// rotation vector (axis * angle, angle in [0, pi]) of a 3x3 rotation (the task module's
/// formula: the pose error's bits depend on it)
inline void servo_rotvec(const double (*M)[3], double* out) {
    double vx = M[2][1] - M[1][2];
    double vy = M[0][2] - M[2][0];
    double vz = M[1][0] - M[0][1];
    double sn = 0.5 * std::sqrt(vx * vx + vy * vy + vz * vz);
    double cs = 0.5 * (M[0][0] + M[1][1] + M[2][2] - 1.0);
    double theta = std::atan2(sn, cs);
    if (theta < 1e-6) {
        double f = 0.5 * (1.0 + theta * theta / 6.0);
        out[0] = f * vx;
        out[1] = f * vy;
        out[2] = f * vz;
        return;
    }
    if (theta < PI - 1e-4) {
        double f = theta / (2.0 * std::sin(theta));
        out[0] = f * vx;
        out[1] = f * vy;
        out[2] = f * vz;
        return;
    }
    int k = 0;
    if (M[1][1] > M[k][k]) k = 1;
    if (M[2][2] > M[k][k]) k = 2;
    double akk = std::sqrt(pymax(0.5 * (M[k][k] + 1.0), 0.0));
    double ax[3];
    for (int j = 0; j < 3; ++j)
        ax[j] = j != k ? (0.5 * (M[k][j] + M[j][k]) + 0.0) * 0.5 / akk : akk;
    double nrm = std::sqrt(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]);
    if (ax[0] * vx + ax[1] * vy + ax[2] * vz < 0.0) nrm = -nrm;
    for (int j = 0; j < 3; ++j) out[j] = theta * ax[j] / nrm;
}

inline void cap_norm(double* vel, int lo, double max_norm) {
    double s2 = vel[lo] * vel[lo] + vel[lo + 1] * vel[lo + 1] + vel[lo + 2] * vel[lo + 2];
    if (s2 > max_norm * max_norm) {
        double f = max_norm / std::sqrt(s2);
        vel[lo] *= f;
        vel[lo + 1] *= f;
        vel[lo + 2] *= f;
    }
}

}  // namespace servo_detail
}  // namespace ikstack
