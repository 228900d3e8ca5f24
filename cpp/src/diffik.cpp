// Differential-IK solvers: damped least squares and the box-QP active-set method, with the same
// operations, order and tolerances as the Python/numba kernels.
#include "ikstack/diffik.hpp"

#include <algorithm>
#include <cstdio>

namespace ikstack {

void DiffIKRequest::resize(int m, int dof) {
    jacobian.resize(m, dof);
    task.resize(m);
    q.resize(dof);
    lower.resize(dof, -INFINITY);
    upper.resize(dof, INFINITY);
    preferred_velocity.resize(dof);
    A_ineq.resize(0, dof);
    b_ineq.resize(0);
}

const char* status_message(DiffIKStatus s) {
    switch (s) {
        case DiffIKStatus::Ok: return "ok";
        case DiffIKStatus::IterationLimit:
            return "active-set iteration cap reached before the KKT conditions held";
        case DiffIKStatus::NotConvex:
            return "H = J^T J + lambda^2 I is not positive definite; use damping > 0";
        case DiffIKStatus::Infeasible:
            return "the box is empty (some lower bound exceeds its upper bound)";
        case DiffIKStatus::Inaccurate: return "the final iterate failed the KKT stationarity check";
        case DiffIKStatus::Singular: return "J J^T + lambda^2 I is singular; use damping > 0";
        case DiffIKStatus::BadRequest: return "malformed request";
        case DiffIKStatus::Unsupported:
            return "BoxQPSolver supports box bounds only, not inequality rows";
        case DiffIKStatus::Failed: return "solver failed";
    }
    return "solver failed";
}

DiffIKStatus check_request(const DiffIKRequest& r, DiffIKResult* why) {
    char buf[200];
    const int m = r.jacobian.rows();
    const int n = r.jacobian.cols();
    const char* problem = nullptr;
    if (r.task.size() != m) {
        std::snprintf(buf, sizeof buf, "task has %d entries; expected %d (the Jacobian's rows)",
                      r.task.size(), m);
        problem = buf;
    } else if (r.lower.size() != n || r.upper.size() != n || r.preferred_velocity.size() != n) {
        std::snprintf(buf, sizeof buf,
                      "lower/upper/preferred_velocity have %d/%d/%d entries; expected %d",
                      r.lower.size(), r.upper.size(), r.preferred_velocity.size(), n);
        problem = buf;
    } else if (!r.jacobian.all_finite()) {
        problem = "jacobian contains NaN or infinity; finite values are required";
    } else if (!r.task.all_finite()) {
        problem = "task contains NaN or infinity; finite values are required";
    } else if (!r.preferred_velocity.all_finite()) {
        problem = "preferred_velocity contains NaN or infinity; finite values are required";
    } else if (!(std::isfinite(r.damping) && r.damping >= 0)) {
        problem = "damping must be finite and >= 0";
    } else {
        for (int i = 0; i < n; ++i)
            if (std::isnan(r.lower[i]) || std::isnan(r.upper[i])) {
                problem = "lower/upper contains NaN";
                break;
            }
    }
    if (problem == nullptr) return DiffIKStatus::Ok;
    if (why != nullptr) *why = DiffIKResult::failure(DiffIKStatus::BadRequest, problem);
    return DiffIKStatus::BadRequest;
}

static void zero(VecN& v, int n) {
    if (v.size() != n) v.resize(n);
    v.fill(0.0);
}

// ------------------------------------------------------------------ damped least squares
DampedLeastSquares::DampedLeastSquares(double min_damping) : min_damping_(min_damping) {
    if (!(std::isfinite(min_damping) && min_damping >= 0.0))
        throw InputError("min_damping must be finite and >= 0; got " + std::to_string(min_damping));
}

bool DampedLeastSquares::solve_arrays(const Jacobian& J, const Vec6& task, const VecN& preferred,
                                      double damping, const VecN& lower, const VecN& upper,
                                      VecN& out, double* scale) {
    const int m = J.rows();
    const int n = J.cols();
    const double lam2 = damping * damping;
    Mat6 A(m, m);
    double y[kTaskRows];
    if (out.size() != n) out.resize(n);
    for (int r = 0; r < m; ++r) {
        double s = task[r];
        for (int i = 0; i < n; ++i) s -= J(r, i) * preferred[i];
        y[r] = s;
        for (int c = r; c < m; ++c) {
            double a = 0.0;
            for (int i = 0; i < n; ++i) a += J(r, i) * J(c, i);
            A(r, c) = a;
            A(c, r) = a;
        }
        A(r, r) += lam2;
    }
    if (m > 0) {
        if (!cholesky_inplace(A, m)) {
            zero(out, n);
            if (scale) *scale = 0.0;
            return false;
        }
        cholesky_solve_inplace(A, m, y);
    }
    for (int i = 0; i < n; ++i) {
        double s = preferred[i];
        for (int r = 0; r < m; ++r) s += J(r, i) * y[r];
        out[i] = s;
    }
    for (int i = 0; i < n; ++i)
        if (!std::isfinite(out[i])) {
            zero(out, n);
            if (scale) *scale = 0.0;
            return false;
        }
    const double s = scale_into_box(out, lower, upper, out);
    if (scale) *scale = s;
    return true;
}

DiffIKResult DampedLeastSquares::solve(const DiffIKRequest& request, VecN& dq) {
    DiffIKResult res;
    const int n = request.jacobian.cols();
    if (check_request(request, &res) != DiffIKStatus::Ok) {
        zero(dq, n);
        return res;
    }
    if (!solve_arrays(request.jacobian, request.task, request.preferred_velocity,
                      std::max(request.damping, min_damping_), request.lower, request.upper, dq))
        return DiffIKResult::failure(DiffIKStatus::Singular,
                                     status_message(DiffIKStatus::Singular));
    res.iterations = 1;
    return res;
}

// ------------------------------------------------------------------ box QP
void normal_matrices(const Jacobian& J, const Vec6& task, const VecN& preferred, double damping,
                     MatN& H, VecN& g) {
    const int m = J.rows();
    const int n = J.cols();
    const double lam2 = damping * damping;
    if (H.rows() != n || H.cols() != n) H.resize(n, n);
    if (g.size() != n) g.resize(n);
    for (int i = 0; i < n; ++i) {
        for (int j = i; j < n; ++j) {
            double s = 0.0;
            for (int r = 0; r < m; ++r) s += J(r, i) * J(r, j);
            H(i, j) = s;
            H(j, i) = s;
        }
        H(i, i) += lam2;
        double s = 0.0;
        for (int r = 0; r < m; ++r) s += J(r, i) * task[r];
        g[i] = -(s + lam2 * preferred[i]);
    }
}

namespace {

// Minimize over the free joints with the others fixed; writes y. Returns the number of free
// joints, or -1 when their block of H is not positive definite.
int solve_free(const MatN& H, const VecN& g, const VecN& x, const signed char* state, MatN& L,
               double* rhs, int* idx, VecN& y) {
    const int n = H.rows();
    int nf = 0;
    for (int i = 0; i < n; ++i)
        if (state[i] == 0) idx[nf++] = i;
    for (int a = 0; a < nf; ++a) {
        const int i = idx[a];
        double s = -g[i];
        for (int j = 0; j < n; ++j)
            if (state[j] != 0) s -= H(i, j) * x[j];
        rhs[a] = s;
        for (int b = 0; b <= a; ++b) L(a, b) = H(i, idx[b]);
    }
    if (nf > 0) {
        if (!cholesky_inplace(L, nf)) return -1;
        cholesky_solve_inplace(L, nf, rhs);
    }
    for (int i = 0; i < n; ++i) y[i] = x[i];
    for (int a = 0; a < nf; ++a) y[idx[a]] = rhs[a];
    return nf;
}

}  // namespace

DiffIKStatus BoxQPSolver::solve_qp(const MatN& H, const VecN& g, const VecN& lower,
                                   const VecN& upper, VecN& x,
                                   std::array<signed char, kMaxDof>& state, int max_iter,
                                   double tol, int& iterations) {
    const int n = g.size();
    // L keeps H's stride so that the Cholesky of the leading nf block reads the same cells
    MatN L(n, n);
    double rhs[kMaxDof];
    int idx[kMaxDof];
    VecN y(n);
    if (x.size() != n) x.resize(n);
    iterations = 0;
    for (int i = 0; i < n; ++i) {
        if (lower[i] > upper[i] || std::isnan(lower[i]) || std::isnan(upper[i])) {
            x.fill(0.0);
            return DiffIKStatus::Infeasible;
        }
        state[i] = lower[i] == upper[i] ? 2 : 0;
        x[i] = state[i] == 2 ? lower[i] : 0.0;
    }
    // start from the clipped unconstrained minimizer
    if (solve_free(H, g, x, state.data(), L, rhs, idx, y) < 0) {
        x.fill(0.0);
        return DiffIKStatus::NotConvex;
    }
    bool clipped = false;
    for (int i = 0; i < n; ++i) {
        if (state[i] != 0) continue;
        if (y[i] <= lower[i]) {
            x[i] = lower[i];
            state[i] = -1;
            clipped = true;
        } else if (y[i] >= upper[i]) {
            x[i] = upper[i];
            state[i] = 1;
            clipped = true;
        } else {
            x[i] = y[i];
        }
    }
    int it = 0;
    // with nothing clipped, the first iteration's equality problem is the one just solved
    bool fresh = !clipped;
    while (it < max_iter) {
        ++it;
        iterations = it;
        if (fresh) {
            fresh = false;
        } else if (solve_free(H, g, x, state.data(), L, rhs, idx, y) < 0) {
            x.fill(0.0);
            return DiffIKStatus::NotConvex;
        }
        double alpha = 1.0;
        int block = -1;
        for (int i = 0; i < n; ++i) {
            if (state[i] != 0) continue;
            const double d = y[i] - x[i];
            if (y[i] < lower[i] && d < 0.0) {
                const double a = (lower[i] - x[i]) / d;
                if (a < alpha) {
                    alpha = a;
                    block = i;
                }
            } else if (y[i] > upper[i] && d > 0.0) {
                const double a = (upper[i] - x[i]) / d;
                if (a < alpha) {
                    alpha = a;
                    block = i;
                }
            }
        }
        if (block >= 0) {
            if (alpha < 0.0) alpha = 0.0;
            for (int i = 0; i < n; ++i)
                if (state[i] == 0) x[i] += alpha * (y[i] - x[i]);
            if (y[block] < lower[block]) {
                x[block] = lower[block];
                state[block] = -1;
            } else {
                x[block] = upper[block];
                state[block] = 1;
            }
            continue;
        }
        for (int i = 0; i < n; ++i)
            if (state[i] == 0) x[i] = y[i];
        // multipliers of the working set: grad_i >= 0 at a lower bound, <= 0 at an upper one
        double worst = -tol;
        int drop = -1;
        double gmax = 0.0;
        for (int i = 0; i < n; ++i) {
            double gr = g[i];
            for (int j = 0; j < n; ++j) gr += H(i, j) * x[j];
            double mu;
            if (state[i] == -1) {
                mu = gr;
            } else if (state[i] == 1) {
                mu = -gr;
            } else {
                if (state[i] == 0 && std::abs(gr) > gmax) gmax = std::abs(gr);
                continue;
            }
            if (mu < worst) {
                worst = mu;
                drop = i;
            }
        }
        if (drop >= 0) {
            state[drop] = 0;
            continue;
        }
        // certificate: feasibility holds by construction; check stationarity of free joints
        double scale = 1.0, hmax = 0.0, xmax = 0.0;
        for (int i = 0; i < n; ++i) {
            if (std::abs(g[i]) > scale) scale = std::abs(g[i]);
            if (std::abs(x[i]) > xmax) xmax = std::abs(x[i]);
            for (int j = 0; j < n; ++j)
                if (std::abs(H(i, j)) > hmax) hmax = std::abs(H(i, j));
        }
        if (hmax * xmax > scale) scale = hmax * xmax;
        if (gmax > 1e3 * tol * scale) {
            x.fill(0.0);
            return DiffIKStatus::Inaccurate;
        }
        return DiffIKStatus::Ok;
    }
    x.fill(0.0);
    return DiffIKStatus::IterationLimit;
}

BoxQPSolver::BoxQPSolver(int max_iterations, double tolerance)
    : max_iterations_(max_iterations), tolerance_(tolerance) {
    if (max_iterations < 1)
        throw InputError("max_iterations must be >= 1; got " + std::to_string(max_iterations));
    if (!(std::isfinite(tolerance) && tolerance > 0))
        throw InputError("tolerance must be finite and > 0; got " + std::to_string(tolerance));
}

DiffIKResult BoxQPSolver::solve(const DiffIKRequest& request, VecN& dq) {
    const int n = request.jacobian.cols();
    if (request.A_ineq.rows() > 0) {
        zero(dq, n);
        return DiffIKResult::failure(DiffIKStatus::Unsupported,
                                     status_message(DiffIKStatus::Unsupported));
    }
    DiffIKResult res;
    if (check_request(request, &res) != DiffIKStatus::Ok) {
        zero(dq, n);
        return res;
    }
    MatN H;
    VecN g;
    normal_matrices(request.jacobian, request.task, request.preferred_velocity, request.damping,
                    H, g);
    int it = 0;
    const DiffIKStatus code = solve_qp(H, g, request.lower, request.upper, dq, res.active,
                                       max_iterations_, tolerance_, it);
    if (code != DiffIKStatus::Ok) return DiffIKResult::failure(code, status_message(code), it);
    res.iterations = it;
    res.has_active = true;
    return res;
}

// ------------------------------------------------------------------ secondary objectives
void secondary_velocity(const VecN& q, const VecN& posture, double posture_gain,
                        const VecN& lower, const VecN& upper, const bool* continuous,
                        double centering_gain, VecN& out) {
    const int n = q.size();
    if (out.size() != n) out.resize(n);
    const double pi = 3.14159265358979323846;
    for (int i = 0; i < n; ++i) {
        double v = 0.0;
        if (posture_gain != 0.0) {
            double d = posture[i] - q[i];
            if (continuous != nullptr && continuous[i]) {
                // Python's (d + pi) % (2 pi) - pi: a floored modulo
                const double p2 = 2.0 * pi;
                double r = std::fmod(d + pi, p2);
                if (r != 0.0 && r < 0.0) r += p2;
                d = r - pi;
            }
            v += posture_gain * d;
        }
        if (centering_gain != 0.0 && std::isfinite(lower[i]) && std::isfinite(upper[i]))
            v += centering_gain * (0.5 * (lower[i] + upper[i]) - q[i]);
        out[i] = v;
    }
}

void projector_from_svd(const Vec6& s, const MatN& Vh, double rcond, MatN& N) {
    const int n = Vh.rows();
    double smax = 0.0;
    for (int k = 0; k < s.size(); ++k)
        if (s[k] > smax) smax = s[k];
    if (N.rows() != n || N.cols() != n) N.resize(n, n);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) N(i, j) = i == j ? 1.0 : 0.0;
    for (int k = 0; k < s.size(); ++k) {
        if (s[k] > rcond * smax && s[k] > 0.0) {
            for (int i = 0; i < n; ++i) {
                const double vi = Vh(k, i);
                for (int j = 0; j < n; ++j) N(i, j) -= vi * Vh(k, j);
            }
        }
    }
}

double project(const MatN& N, const VecN& v, VecN& out) {
    const int n = v.size();
    if (out.size() != n) out.resize(n);
    double s2 = 0.0;
    for (int i = 0; i < n; ++i) {
        double s = 0.0;
        for (int j = 0; j < n; ++j) s += N(i, j) * v[j];
        out[i] = s;
        s2 += s * s;
    }
    return std::sqrt(s2);
}

void preferred_velocity(const Chain& chain, const Jacobian& J, const VecN& q,
                        const VecN* posture, double nullspace_gain, double centering_gain,
                        VecN& out, double rcond) {
    const int n = chain.dof();
    bool cont[kMaxDof];
    for (int i = 0; i < n; ++i) cont[i] = chain.is_continuous(i);
    VecN v;
    secondary_velocity(q, posture != nullptr ? *posture : q,
                       posture != nullptr ? nullspace_gain : 0.0, chain.lower(), chain.upper(),
                       cont, centering_gain, v);
    Mat6 U;
    Vec6 s;
    MatN Vh, N;
    svd_jacobi(J, U, s, Vh, false);
    projector_from_svd(s, Vh, rcond, N);
    project(N, v, out);
}

double joint_limit_cost(const VecN& q, const VecN& lo, const VecN& hi, const VecN& weights,
                        double band, VecN& out) {
    const int n = q.size();
    if (out.size() != n) out.resize(n);
    const double k = 1.0 / (2.0 * n);
    double c = 0.0;
    for (int i = 0; i < n; ++i) {
        out[i] = 0.0;
        if (!(std::isfinite(lo[i]) && std::isfinite(hi[i]))) continue;
        if (band > 0.0) {
            const double d_lo = q[i] - lo[i];
            const double d_hi = hi[i] - q[i];
            double m, dm;
            if (d_lo <= d_hi) {
                m = d_lo;
                dm = 1.0;
            } else {
                m = d_hi;
                dm = -1.0;
            }
            if (m < band) {
                const double r = (band - m) / band;
                c += k * weights[i] * r * r;
                out[i] = k * weights[i] * 2.0 * r * (-dm / band);
            }
        } else {
            const double span = hi[i] - lo[i];
            if (span <= 0.0) continue;
            const double mid = 0.5 * (lo[i] + hi[i]);
            const double r = (q[i] - mid) / span;
            c += k * weights[i] * r * r;
            out[i] = k * weights[i] * 2.0 * r / span;
        }
    }
    return c;
}

// ------------------------------------------------------------------ motion
bool BoxIntegrator::generate(const VecN& q, const VecN& /*dq*/, const VecN& desired_velocity,
                             const VecN& lower, const VecN& upper, const VecN& q_lower,
                             const VecN& q_upper, double dt, VecN& q_ref, VecN& dq_ref) {
    scale_into_box(desired_velocity, lower, upper, dq_ref);
    integrate(q, dq_ref, dt, q_lower, q_upper, q_ref);
    return true;
}

}  // namespace ikstack
