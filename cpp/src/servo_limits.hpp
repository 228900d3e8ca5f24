// Per-cycle joint velocity bounds and the chain's coupled-joint constraints.
//
// The velocity box (in order of priority): braking to the hard position limits with sampled
// braking at the acceleration limit, velocity, next-cycle acceleration, braking to the
// working limits (hard less the kinematic margin; a state in the band may only move out),
// the soft margin, jerk. Coupled rows g(q) <= 0 (linear and quadrant-polynomial) hold on the
// reference and on the stop after it; a velocity that would cross is moved toward the braking
// velocity by bisection. Operation for operation the Python package's kernels.
#pragma once

#include <cmath>
#include <limits>

#include "ikstack/linalg.hpp"
#include "ikstack/servo.hpp"

namespace ikstack {
namespace servo_detail {

constexpr int K = kServoMaxDof;
static_assert(kServoMaxDof == kMaxDof, "the servo and the chain share one joint capacity");

inline bool isfin(double x) {
    return std::isfinite(x);
}
/// Python's min(a, b) / max(a, b) (the first argument unless the second is strictly past it)
inline double pymin(double a, double b) {
    return b < a ? b : a;
}
inline double pymax(double a, double b) {
    return b > a ? b : a;
}

constexpr double INF = std::numeric_limits<double>::infinity();
constexpr int CONFLICT = 1;
constexpr int JERK_RELAXED_CODE = 2;
constexpr double EPS_POS = 1e-12;

inline double braking_speed(double dist, double c, double dt) {
    if (dist <= 0.0) return 0.0;
    double D = dist / dt;
    if (!isfin(c)) return D;
    double m = std::floor((std::sqrt(1.0 + 8.0 * D / c) - 1.0) * 0.5);
    if (m < 0.0) m = 0.0;
    double v = D / (m + 1.0) + c * m * 0.5;
    if ((m + 1.0) * v - c * m * (m + 1.0) * 0.5 > D * (1.0 + 1e-12))
        v = m >= 1.0 ? D / (m + 1.0) + c * (m - 1.0) * 0.5 : D;
    return v;
}

inline double braking_cap(double dist, double c, double dt, double cap) {
    if (c > 0.0 && c < INF && cap < INF) {
        double x = (cap + c) * (1.0 + 1e-9);
        if (dist * (2.0 * c) >= dt * (x * x + x * c + 0.25 * c * c) * (1.0 + 1e-9)) return INF;
    }
    return braking_speed(dist, c, dt);
}

inline double pos_bound(double dist, double limit, double other, double c, double dt, double cap) {
    if (!isfin(limit)) return INF;
    double span = isfin(other) ? std::fabs(limit - other) : std::fabs(limit) + 1.0;
    return braking_cap(dist - EPS_POS * (1.0 + std::fabs(limit) + span), c, dt, cap);
}

/// ``[lo, hi]``: ``[o_lo, o_hi]`` narrowed by ``[lb, ub]``; where the two do not meet, both ends
/// at the outer bound on the inner interval's side (``o_lo`` when ``ub < o_lo``, else ``o_hi``).
/// Returns the shortfall ``lo - hi`` when they do not meet, else 0. The outputs may alias the
/// outer bounds (they are read first).
inline double narrow(double o_lo, double o_hi, double lb, double ub, double& lo, double& hi) {
    const double l = pymax(o_lo, lb);
    const double h = pymin(o_hi, ub);
    if (!(l > h)) {
        lo = l;
        hi = h;
        return 0.0;
    }
    const double x = ub < o_lo ? o_lo : o_hi;
    lo = x;
    hi = x;
    return l - h;
}

/// the packed limits of a servo
struct Limits {
    VecN lo, hi;    // working limits (hard less the kinematic margin)
    VecN hlo, hhi;  // hard limits
    VecN vmax, amax, jmax;
    bool cont[K];
};

/// the velocity box [lower, upper] of this cycle; returns CONFLICT / JERK_RELAXED_CODE bits
inline int cycle_bounds(const double* q, const double* v, const double* a_prev, bool use_jerk,
                        double dt, const Limits& L, double margin, double* lower, double* upper,
                        int* pos_bind, int n) {
    int code = 0;
    for (int i = 0; i < n; ++i) {
        const double c = L.amax[i] * dt;
        const double qi = q[i];
        const double vm = L.vmax[i];
        double ub_p = pos_bound(L.hhi[i] - qi, L.hhi[i], L.hlo[i], c, dt, vm);
        double lb_p = -pos_bound(qi - L.hlo[i], L.hlo[i], L.hhi[i], c, dt, vm);
        double p_lo = pymax(-vm, lb_p);
        double p_hi = pymin(vm, ub_p);
        double a_lo = v[i] - c;
        double a_hi = v[i] + c;
        double h_lo, h_hi;
        const double gap = narrow(p_lo, p_hi, a_lo, a_hi, h_lo, h_hi);
        if (gap > 1e-9 * (1.0 + std::fabs(pymax(p_lo, a_lo)))) code |= CONFLICT;
        double ub_w = ub_p, lb_w = lb_p;
        if (L.hi[i] < L.hhi[i]) ub_w = pos_bound(L.hi[i] - qi, L.hi[i], L.lo[i], c, dt, vm);
        if (L.lo[i] > L.hlo[i]) lb_w = -pos_bound(qi - L.lo[i], L.lo[i], L.hi[i], c, dt, vm);
        narrow(h_lo, h_hi, lb_w, ub_w, h_lo, h_hi);
        ub_p = pymin(ub_p, ub_w);
        lb_p = pymax(lb_p, lb_w);
        double mg = margin;
        if (isfin(L.lo[i]) && isfin(L.hi[i]) && L.hi[i] - L.lo[i] <= 2.0 * margin) mg = 0.0;
        double ub_s = INF, lb_s = -INF;
        if (mg > 0.0) {
            if (isfin(L.hi[i])) ub_s = braking_cap(L.hi[i] - mg - qi, c, dt, vm);
            if (isfin(L.lo[i])) lb_s = -braking_cap(qi - L.lo[i] - mg, c, dt, vm);
        }
        double s_lo, s_hi;
        narrow(h_lo, h_hi, lb_s, ub_s, s_lo, s_hi);
        if (use_jerk && isfin(L.jmax[i])) {
            double dj = L.jmax[i] * dt * dt;
            double j_lo = v[i] + a_prev[i] * dt - dj;
            double j_hi = v[i] + a_prev[i] * dt + dj;
            if (narrow(s_lo, s_hi, j_lo, j_hi, s_lo, s_hi) > 0.0) code |= JERK_RELAXED_CODE;
        }
        lower[i] = s_lo;
        upper[i] = s_hi;
        int pb = 0;
        if (pymin(ub_p, ub_s) < pymin(vm, a_hi)) pb = 1;
        if (pymax(lb_p, lb_s) > pymax(-vm, a_lo)) pb = pb == 0 ? -1 : 2;
        pos_bind[i] = pb;
    }
    return code;
}

/// the first joint whose reference leaves the box or the limits, else -1
inline int reference_violation(const double* q_ref, const double* dq_ref, const double* lower,
                               const double* upper, const double* lo, const double* hi, double tol,
                               int n) {
    for (int i = 0; i < n; ++i) {
        if (!(isfin(q_ref[i]) && isfin(dq_ref[i]))) return i;
        if (dq_ref[i] < lower[i] - tol * (1.0 + std::fabs(lower[i]))) return i;
        if (dq_ref[i] > upper[i] + tol * (1.0 + std::fabs(upper[i]))) return i;
        if (q_ref[i] < lo[i] || q_ref[i] > hi[i]) return i;
    }
    return -1;
}

inline void brake_velocity(const double* lower, const double* upper, double* out, int n) {
    for (int i = 0; i < n; ++i) {
        double x = 0.0;
        if (x < lower[i])
            x = lower[i];
        else if (x > upper[i])
            x = upper[i];
        out[i] = x;
    }
}

inline double max_abs(const double* x, int n) {
    double m = 0.0;
    for (int i = 0; i < n; ++i)
        if (std::fabs(x[i]) > m) m = std::fabs(x[i]);
    return m;
}

inline bool bound_touched(const double* dq, const double* lower, const double* upper,
                          const int* pos_bind, int n) {
    for (int i = 0; i < n; ++i) {
        int pb = pos_bind[i];
        if ((pb == 1 || pb == 2) && dq[i] >= upper[i] - 1e-12 && upper[i] < INF) return true;
        if ((pb == -1 || pb == 2) && dq[i] <= lower[i] + 1e-12 && lower[i] > -INF) return true;
    }
    return false;
}

// ------------------------------------------------------------------ coupled constraints
constexpr int MAX_SIM = 4096;
constexpr int BISECT = 30;
constexpr int C_FREE = 0, C_BOUND = 1, C_CONFLICT = 2;

struct Cons {
    int n = 0;
    int nl = 0;  // linear rows: a (n), b
    int nq = 0;  // quadrant rows
    double A[kServoMaxRows][K];
    double b[kServoMaxRows];
    int qi[kServoMaxRows], qj[kServoMaxRows];
    double table[kServoMaxRows][16];
    int rows() const { return nl + nq; }
};

inline double row_value(const double* q, const Cons& C, int r) {
    const int n = C.n;
    if (r < C.nl) {
        double s = -C.b[r];
        for (int i = 0; i < n; ++i) s += C.A[r][i] * q[i];
        return s;
    }
    const int k = r - C.nl;
    const double qi = q[C.qi[k]], qj = q[C.qj[k]];
    const double* t = C.table[k] + ((qi >= 0.0 ? 1 : 0) * 2 + (qj >= 0.0 ? 1 : 0)) * 4;
    double b = t[0] * qi * qi + t[1] * qi + t[2];
    return t[3] > 0.0 ? qj - b : b - qj;
}

inline double worst_row(const double* q, const Cons& C, int* idx) {
    double worst = -INF;
    *idx = -1;
    for (int r = 0; r < C.rows(); ++r) {
        double g = row_value(q, C, r);
        if (!(g <= worst)) {
            worst = g;
            *idx = r;
        }
    }
    return worst;
}

inline void poly_range(double a0, double a1, double a2, double lo, double hi, double* bmin,
                       double* bmax) {
    double f1 = a0 * lo * lo + a1 * lo + a2;
    double f2 = a0 * hi * hi + a1 * hi + a2;
    *bmin = pymin(f1, f2);
    *bmax = pymax(f1, f2);
    if (a0 != 0.0) {
        double x = -a1 / (2.0 * a0);
        if (lo < x && x < hi) {
            double f = a0 * x * x + a1 * x + a2;
            *bmin = pymin(*bmin, f);
            *bmax = pymax(*bmax, f);
        }
    }
}

/// an upper bound of g_r over the box lo <= q <= hi
inline double box_bound(const double* lo, const double* hi, const Cons& C, int r) {
    const int n = C.n;
    if (r < C.nl) {
        double s = -C.b[r];
        for (int i = 0; i < n; ++i) {
            double a = C.A[r][i];
            s += a > 0.0 ? a * hi[i] : a * lo[i];
        }
        return s;
    }
    const int k = r - C.nl;
    const int i = C.qi[k], j = C.qj[k];
    double worst = -INF;
    for (int si = 0; si < 2; ++si) {
        double ilo = si == 0 ? lo[i] : pymax(lo[i], 0.0);
        double ihi = si == 0 ? pymin(hi[i], 0.0) : hi[i];
        if (ilo > ihi || (si == 0 && ilo >= 0.0)) continue;
        for (int sj = 0; sj < 2; ++sj) {
            double jlo = sj == 0 ? lo[j] : pymax(lo[j], 0.0);
            double jhi = sj == 0 ? pymin(hi[j], 0.0) : hi[j];
            if (jlo > jhi || (sj == 0 && jlo >= 0.0)) continue;
            const double* t = C.table[k] + (si * 2 + sj) * 4;
            double bmin, bmax;
            poly_range(t[0], t[1], t[2], ilo, ihi, &bmin, &bmax);
            double g = t[3] > 0.0 ? jhi - bmin : bmax - jlo;
            if (g > worst) worst = g;
        }
    }
    return worst;
}

struct CoupledScratch {
    double lo[K], hi[K], qk[K], vk[K];
    double vb[K], vt[K], c[K];
    double soft[kServoMaxRows], hard[kServoMaxRows];
    double grad[K];
};

/// max_r (max over the stop of g_r) - levels[r], and the row attaining it
inline double stop_excess(const double* q, const double* v, const double* c, double dt,
                          const Cons& C, const double* levels, bool one_step, int* row_out,
                          CoupledScratch& w) {
    const int n = C.n;
    const int R = C.rows();
    int steps = 1;
    for (int i = 0; i < n; ++i) {
        double q1 = q[i] + v[i] * dt;
        double qs = q1;
        if (!one_step && v[i] != 0.0) {
            double s = std::fabs(v[i]);
            double path;
            if (isfin(c[i]) && c[i] > 0.0) {
                double m = std::ceil(s / c[i]) - 1.0;
                if (m < 0.0) m = 0.0;
                path = dt * ((m + 1.0) * s - c[i] * m * (m + 1.0) * 0.5);
                if (m + 1.0 > steps) steps = static_cast<int>(pymin(m + 1.0, MAX_SIM + 1.0));
            } else {
                path = s * dt;
            }
            qs = q[i] + (v[i] > 0.0 ? path : -path);
        }
        w.lo[i] = pymin(q1, qs);
        w.hi[i] = pymax(q1, qs);
    }
    double worst = -INF;
    int row = -1;
    bool need_sim = false;
    for (int r = 0; r < R; ++r) {
        double e = box_bound(w.lo, w.hi, C, r) - levels[r];
        if (e > 0.0) need_sim = true;
        if (e > worst) {
            worst = e;
            row = r;
        }
    }
    if (!need_sim || steps <= 1 || steps > MAX_SIM) {
        *row_out = row;
        return worst;
    }
    worst = -INF;
    row = -1;
    for (int i = 0; i < n; ++i) {
        w.qk[i] = q[i];
        w.vk[i] = v[i];
    }
    for (int k = 0; k < steps; ++k) {
        for (int i = 0; i < n; ++i) {
            if (k > 0) {
                double s = std::fabs(w.vk[i]) - c[i];
                if (s < 0.0 || !isfin(s)) s = 0.0;
                w.vk[i] = w.vk[i] > 0.0 ? s : -s;
            }
            w.qk[i] += w.vk[i] * dt;
        }
        for (int r = 0; r < R; ++r) {
            double e = row_value(w.qk, C, r) - levels[r];
            if (e > worst) {
                worst = e;
                row = r;
            }
        }
    }
    *row_out = row;
    return worst;
}

/// keep v (inside [lower, upper]) such that every row holds along the stop; returns C_*
inline int coupled_project(const double* q, double* v, const double* lower, const double* upper,
                           const double* amax, double dt, const Cons& C, double margin,
                           int* row_out, CoupledScratch& w) {
    const int R = C.rows();
    *row_out = -1;
    if (R == 0) return C_FREE;
    const int n = C.n;
    for (int i = 0; i < n; ++i) w.c[i] = amax[i] * dt;
    for (int r = 0; r < R; ++r) {
        double g = row_value(q, C, r);
        w.soft[r] = pymax(-margin, g);
        w.hard[r] = 0.0;
    }
    int row, tmp;
    double e = stop_excess(q, v, w.c, dt, C, w.soft, false, &row, w);
    if (e <= 0.0) return C_FREE;
    for (int i = 0; i < n; ++i) {
        double x = 0.0;
        if (x < lower[i])
            x = lower[i];
        else if (x > upper[i])
            x = upper[i];
        w.vb[i] = x;
    }
    double eb = stop_excess(q, w.vb, w.c, dt, C, w.soft, false, &tmp, w);
    if (eb > 0.0) {
        int code = C_BOUND;
        eb = stop_excess(q, w.vb, w.c, dt, C, w.hard, false, &tmp, w);
        if (eb > 0.0) code = C_CONFLICT;
        double lo_a = 1.0;
        eb = stop_excess(q, w.vb, w.c, dt, C, w.hard, true, &tmp, w);
        if (eb > 0.0) {
            code = C_CONFLICT;
            lo_a = 0.0;
            double hi_a = 1.0;
            for (int it = 0; it < BISECT; ++it) {
                double a = 0.5 * (lo_a + hi_a);
                for (int i = 0; i < n; ++i) w.vt[i] = a * w.vb[i];
                double ea = stop_excess(q, w.vt, w.c, dt, C, w.hard, true, &tmp, w);
                if (ea <= 0.0)
                    lo_a = a;
                else
                    hi_a = a;
            }
        }
        for (int i = 0; i < n; ++i) v[i] = lo_a * w.vb[i];
        *row_out = row;
        return code;
    }
    double lo_a = 0.0, hi_a = 1.0;
    for (int it = 0; it < BISECT; ++it) {
        double a = 0.5 * (lo_a + hi_a);
        for (int i = 0; i < n; ++i) w.vt[i] = w.vb[i] + a * (v[i] - w.vb[i]);
        double ea = stop_excess(q, w.vt, w.c, dt, C, w.soft, false, &tmp, w);
        if (ea <= 0.0)
            lo_a = a;
        else
            hi_a = a;
    }
    for (int i = 0; i < n; ++i) {
        double x = w.vb[i] + lo_a * (v[i] - w.vb[i]);
        if (x < lower[i])
            x = lower[i];
        else if (x > upper[i])
            x = upper[i];
        v[i] = x;
    }
    *row_out = row;
    return C_BOUND;
}

/// pull a state that crosses a row by at most tol back onto it (in place); the first row
/// crossed by more than tol, else -1
inline int project_state(double* q, const Cons& C, double tol, CoupledScratch& w) {
    const int R = C.rows();
    const int n = C.n;
    for (int r = 0; r < R; ++r)
        if (row_value(q, C, r) > tol) return r;
    int r;
    for (int it = 0; it < 8; ++it) {
        double g = worst_row(q, C, &r);
        if (g <= 0.0) return -1;
        double nrm = 0.0;
        const double h = 1e-7;
        for (int i = 0; i < n; ++i) {
            double x = q[i];
            q[i] = x + h;
            double gp = row_value(q, C, r);
            q[i] = x - h;
            double gm = row_value(q, C, r);
            q[i] = x;
            w.grad[i] = (gp - gm) / (2.0 * h);
            nrm += w.grad[i] * w.grad[i];
        }
        if (nrm <= 0.0) return r;
        double step = (g + 1e-12 + 1e-9 * std::fabs(g)) / nrm;
        for (int i = 0; i < n; ++i) q[i] -= step * w.grad[i];
    }
    double g = worst_row(q, C, &r);
    return g <= 0.0 ? -1 : r;
}

}  // namespace servo_detail
}  // namespace ikstack
