// Small dense kernels of the servo cycle: canonical FK and Jacobian, one-sided Jacobi SVD,
// Cholesky, damped least squares, the box QP's primal active set, the nullspace terms.
//
// Each is the Python package's compiled kernel operation for operation (same loops, same
// summation order, no fused multiply-add), so the servo's references agree with it to the
// last bits. Matrices are fixed K x K arrays of which the leading block is used.
#pragma once

#include <cmath>
#include <cstdint>

#include "ikstack/servo.hpp"

namespace ikstack {
namespace servo_detail {

constexpr int K = kServoMaxDof;
using Row = double[K];

inline bool isfin(double x) { return std::isfinite(x); }
inline double pymin(double a, double b) { return b < a ? b : a; }
inline double pymax(double a, double b) { return b > a ? b : a; }
//: Python's float modulo (the result takes the divisor's sign)
inline double pymod(double a, double b) {
  double m = std::fmod(a, b);
  if (m != 0.0) {
    if ((b < 0.0) != (m < 0.0)) m += b;
  } else {
    m = std::copysign(0.0, b);
  }
  return m;
}

//: the chain in the compiled layout
struct Kin {
  int n = 0;
  double Rs[K][9];
  double ps[K][3];
  int kinds[K];
  double R_end[9];
  double p_end[3];
};

//: FK into T (4x4, row-major rows of Row): the kinematics module's fk_one.
inline void fk_one(const double* q, const Kin& c, double (*T)[4]) {
  double R[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  double p[3] = {0, 0, 0};
  for (int i = 0; i < c.n; ++i) {
    const double* P = c.ps[i];
    const double* S = c.Rs[i];
    double p0 = p[0] + R[0][0] * P[0] + R[0][1] * P[1] + R[0][2] * P[2];
    double p1 = p[1] + R[1][0] * P[0] + R[1][1] * P[1] + R[1][2] * P[2];
    double p2 = p[2] + R[2][0] * P[0] + R[2][1] * P[1] + R[2][2] * P[2];
    p[0] = p0;
    p[1] = p1;
    p[2] = p2;
    for (int r = 0; r < 3; ++r) {
      double a0 = R[r][0], a1 = R[r][1], a2 = R[r][2];
      R[r][0] = a0 * S[0] + a1 * S[3] + a2 * S[6];
      R[r][1] = a0 * S[1] + a1 * S[4] + a2 * S[7];
      R[r][2] = a0 * S[2] + a1 * S[5] + a2 * S[8];
    }
    double qi = q[i];
    if (c.kinds[i] == 0) {
      double cs = std::cos(qi), sn = std::sin(qi);
      for (int r = 0; r < 3; ++r) {
        double x = R[r][0], y = R[r][1];
        R[r][0] = cs * x + sn * y;
        R[r][1] = -sn * x + cs * y;
      }
    } else {
      p[0] += R[0][2] * qi;
      p[1] += R[1][2] * qi;
      p[2] += R[2][2] * qi;
    }
  }
  const double* E = c.R_end;
  const double* f = c.p_end;
  for (int r = 0; r < 3; ++r) {
    T[r][3] = p[r] + R[r][0] * f[0] + R[r][1] * f[1] + R[r][2] * f[2];
    for (int cc = 0; cc < 3; ++cc)
      T[r][cc] = R[r][0] * E[cc] + R[r][1] * E[3 + cc] + R[r][2] * E[6 + cc];
  }
  T[3][0] = 0.0;
  T[3][1] = 0.0;
  T[3][2] = 0.0;
  T[3][3] = 1.0;
}

//: FK into T and the base-frame geometric Jacobian into J (6, n): the kinematics module's
//: jac_one (its running frame in scalars).
inline void jac_one(const double* q, const Kin& c, Row* J, double (*T)[4]) {
  const int n = c.n;
  double r00 = 1.0, r01 = 0.0, r02 = 0.0, r10 = 0.0, r11 = 1.0, r12 = 0.0, r20 = 0.0,
         r21 = 0.0, r22 = 1.0;
  double p0 = 0.0, p1 = 0.0, p2 = 0.0;
  for (int i = 0; i < n; ++i) {
    double a0 = c.ps[i][0], a1 = c.ps[i][1], a2 = c.ps[i][2];
    p0 = p0 + r00 * a0 + r01 * a1 + r02 * a2;
    p1 = p1 + r10 * a0 + r11 * a1 + r12 * a2;
    p2 = p2 + r20 * a0 + r21 * a1 + r22 * a2;
    const double* B = c.Rs[i];
    double b00 = B[0], b01 = B[1], b02 = B[2], b10 = B[3], b11 = B[4], b12 = B[5], b20 = B[6],
           b21 = B[7], b22 = B[8];
    double n00 = r00 * b00 + r01 * b10 + r02 * b20, n01 = r00 * b01 + r01 * b11 + r02 * b21,
           n02 = r00 * b02 + r01 * b12 + r02 * b22;
    double n10 = r10 * b00 + r11 * b10 + r12 * b20, n11 = r10 * b01 + r11 * b11 + r12 * b21,
           n12 = r10 * b02 + r11 * b12 + r12 * b22;
    double n20 = r20 * b00 + r21 * b10 + r22 * b20, n21 = r20 * b01 + r21 * b11 + r22 * b21,
           n22 = r20 * b02 + r21 * b12 + r22 * b22;
    r00 = n00; r01 = n01; r02 = n02;
    r10 = n10; r11 = n11; r12 = n12;
    r20 = n20; r21 = n21; r22 = n22;
    J[3][i] = r02;
    J[4][i] = r12;
    J[5][i] = r22;
    J[0][i] = p0;
    J[1][i] = p1;
    J[2][i] = p2;
    double qi = q[i];
    if (c.kinds[i] == 0) {
      double cs = std::cos(qi), sn = std::sin(qi);
      double x0 = cs * r00 + sn * r01, y0 = -sn * r00 + cs * r01;
      double x1 = cs * r10 + sn * r11, y1 = -sn * r10 + cs * r11;
      double x2 = cs * r20 + sn * r21, y2 = -sn * r20 + cs * r21;
      r00 = x0; r01 = y0;
      r10 = x1; r11 = y1;
      r20 = x2; r21 = y2;
    } else {
      p0 += r02 * qi;
      p1 += r12 * qi;
      p2 += r22 * qi;
    }
  }
  double e0 = c.p_end[0], e1 = c.p_end[1], e2 = c.p_end[2];
  double tx = p0 + r00 * e0 + r01 * e1 + r02 * e2;
  double ty = p1 + r10 * e0 + r11 * e1 + r12 * e2;
  double tz = p2 + r20 * e0 + r21 * e1 + r22 * e2;
  T[0][3] = tx;
  T[1][3] = ty;
  T[2][3] = tz;
  for (int cc = 0; cc < 3; ++cc) {
    double x = c.R_end[cc], y = c.R_end[3 + cc], z = c.R_end[6 + cc];
    T[0][cc] = r00 * x + r01 * y + r02 * z;
    T[1][cc] = r10 * x + r11 * y + r12 * z;
    T[2][cc] = r20 * x + r21 * y + r22 * z;
  }
  T[3][0] = 0.0;
  T[3][1] = 0.0;
  T[3][2] = 0.0;
  T[3][3] = 1.0;
  for (int i = 0; i < n; ++i) {
    double zx = J[3][i], zy = J[4][i], zz = J[5][i];
    if (c.kinds[i] == 0) {
      double dx = tx - J[0][i], dy = ty - J[1][i], dz = tz - J[2][i];
      J[0][i] = zy * dz - zz * dy;
      J[1][i] = zz * dx - zx * dz;
      J[2][i] = zx * dy - zy * dx;
    } else {
      J[0][i] = zx;
      J[1][i] = zy;
      J[2][i] = zz;
      J[3][i] = 0.0;
      J[4][i] = 0.0;
      J[5][i] = 0.0;
    }
  }
}

//: lower Cholesky factor of the leading n x n block, in place; false if not positive definite
inline bool cholesky_inplace(Row* A, int n) {
  for (int j = 0; j < n; ++j) {
    double d = A[j][j];
    for (int k = 0; k < j; ++k) d -= A[j][k] * A[j][k];
    if (!(d > 1e-300)) return false;
    d = std::sqrt(d);
    A[j][j] = d;
    for (int i = j + 1; i < n; ++i) {
      double s = A[i][j];
      for (int k = 0; k < j; ++k) s -= A[i][k] * A[j][k];
      A[i][j] = s / d;
    }
  }
  return true;
}

inline void cholesky_solve_inplace(Row* L, int n, double* b) {
  for (int i = 0; i < n; ++i) {
    double s = b[i];
    for (int k = 0; k < i; ++k) s -= L[i][k] * b[k];
    b[i] = s / L[i][i];
  }
  for (int i = n - 1; i >= 0; --i) {
    double s = b[i];
    for (int k = i + 1; k < n; ++k) s -= L[k][i] * b[k];
    b[i] = s / L[i][i];
  }
}

//: scale dq uniformly into the box (direction kept where the box holds zero), then clip
inline double scale_into_box(const double* dq, const double* lower, const double* upper,
                             double* out, int n) {
  double s = 1.0;
  for (int i = 0; i < n; ++i) {
    double v = dq[i];
    if (lower[i] <= 0.0 && 0.0 <= upper[i]) {
      if (v > upper[i] && v > 0.0) {
        double r = upper[i] / v;
        if (r < s) s = r;
      } else if (v < lower[i] && v < 0.0) {
        double r = lower[i] / v;
        if (r < s) s = r;
      }
    }
  }
  if (s < 0.0) s = 0.0;
  for (int i = 0; i < n; ++i) {
    double v = s * dq[i];
    if (v < lower[i])
      v = lower[i];
    else if (v > upper[i])
      v = upper[i];
    out[i] = v;
  }
  return s;
}

//: scratch of the SVD
struct SvdScratch {
  double Wt[K][K];
  double Vt[K][K];
  double norms[K];
  int order[K];
};

//: SVD of the (m, n) matrix A by one-sided Jacobi rotations: U (m, k), s (k) descending,
//: Vh (n, n); with `warm` the rotations start from the Vh passed in.
inline void svd_jacobi_into(const Row* A, int m, int n, Row* U, double* s, Row* Vh, bool warm,
                            SvdScratch& S) {
  const int k = m < n ? m : n;
  auto& Wt = S.Wt;
  auto& Vt = S.Vt;
  double fro2 = 0.0;
  for (int i = 0; i < n; ++i)
    for (int r = 0; r < m; ++r) fro2 += A[r][i] * A[r][i];
  if (warm) {
    for (int i = 0; i < n; ++i) {
      for (int c = 0; c < n; ++c) Vt[i][c] = Vh[i][c];
      for (int r = 0; r < m; ++r) {
        double x = 0.0;
        for (int c = 0; c < n; ++c) x += A[r][c] * Vt[i][c];
        Wt[i][r] = x;
      }
    }
  } else {
    for (int i = 0; i < n; ++i) {
      for (int c = 0; c < n; ++c) Vt[i][c] = 0.0;
      Vt[i][i] = 1.0;
      for (int r = 0; r < m; ++r) Wt[i][r] = A[r][i];
    }
  }
  const double tiny = 1e-30 * fro2;
  for (int sweep = 0; sweep < 60; ++sweep) {
    bool rotated = false;
    for (int p = 0; p < n - 1; ++p) {
      double* wp = Wt[p];
      for (int q = p + 1; q < n; ++q) {
        double* wq = Wt[q];
        double a = 0.0, b = 0.0, g = 0.0;
        for (int r = 0; r < m; ++r) {
          a += wp[r] * wp[r];
          b += wq[r] * wq[r];
          g += wp[r] * wq[r];
        }
        if (std::fabs(g) <= 1e-15 * std::sqrt(a * b) || a <= tiny || b <= tiny) continue;
        rotated = true;
        double zeta = (b - a) / (2.0 * g);
        double t = (zeta >= 0.0 ? 1.0 : -1.0) / (std::fabs(zeta) + std::sqrt(1.0 + zeta * zeta));
        double c = 1.0 / std::sqrt(1.0 + t * t);
        double sn = c * t;
        for (int r = 0; r < m; ++r) {
          double x = wp[r], y = wq[r];
          wp[r] = c * x - sn * y;
          wq[r] = sn * x + c * y;
        }
        double* vp = Vt[p];
        double* vq = Vt[q];
        for (int r = 0; r < n; ++r) {
          double x = vp[r], y = vq[r];
          vp[r] = c * x - sn * y;
          vq[r] = sn * x + c * y;
        }
      }
    }
    if (!rotated) break;
  }
  for (int j = 0; j < n; ++j) {
    double x = 0.0;
    for (int r = 0; r < m; ++r) x += Wt[j][r] * Wt[j][r];
    S.norms[j] = std::sqrt(x);
    int a = j;
    while (a > 0 && S.norms[S.order[a - 1]] < S.norms[j]) {
      S.order[a] = S.order[a - 1];
      --a;
    }
    S.order[a] = j;
  }
  const double smax = n > 0 ? S.norms[S.order[0]] : 0.0;
  for (int a = 0; a < n; ++a) {
    int j = S.order[a];
    for (int r = 0; r < n; ++r) Vh[a][r] = Vt[j][r];
  }
  for (int a = 0; a < k; ++a) {
    int j = S.order[a];
    double sj = S.norms[j];
    s[a] = sj;
    if (sj > 1e-300 && sj > 1e-14 * smax) {
      for (int r = 0; r < m; ++r) U[r][a] = Wt[j][r] / sj;
    } else {
      double best = -1.0;
      int be = 0;
      for (int e = 0; e < m; ++e) {
        double res = 1.0;
        for (int b = 0; b < a; ++b) res -= U[e][b] * U[e][b];
        if (res > best) {
          best = res;
          be = e;
        }
      }
      for (int r = 0; r < m; ++r) {
        double x = r == be ? 1.0 : 0.0;
        for (int b = 0; b < a; ++b) x -= U[be][b] * U[r][b];
        U[r][a] = x;
      }
      double nrm = 0.0;
      for (int r = 0; r < m; ++r) nrm += U[r][a] * U[r][a];
      nrm = std::sqrt(nrm);
      for (int r = 0; r < m; ++r) U[r][a] /= nrm;
    }
  }
}

//: scratch of the solvers
struct SolverScratch {
  double A[K][K];  // DLS normal matrix / QP H
  double L[K][K];
  double g[K];
  double y[K];
  double rhs[K];
  int idx[K];
  int state[K];
};

//: damped least squares step into out, scaled into the box; false when J J^T + l^2 I is
//: singular or the step is not finite
inline bool dls_kernel(const Row* J, int m, int n, const double* task, const double* preferred,
                       double damping, const double* lower, const double* upper, double* out,
                       SolverScratch& S) {
  const double lam2 = damping * damping;
  auto& A = S.A;
  double* y = S.y;
  for (int r = 0; r < m; ++r) {
    double s = task[r];
    for (int i = 0; i < n; ++i) s -= J[r][i] * preferred[i];
    y[r] = s;
    for (int c = r; c < m; ++c) {
      double a = 0.0;
      for (int i = 0; i < n; ++i) a += J[r][i] * J[c][i];
      A[r][c] = a;
      A[c][r] = a;
    }
    A[r][r] += lam2;
  }
  if (m > 0) {
    if (!cholesky_inplace(A, m)) {
      for (int i = 0; i < n; ++i) out[i] = 0.0;
      return false;
    }
    cholesky_solve_inplace(A, m, y);
  }
  for (int i = 0; i < n; ++i) {
    double s = preferred[i];
    for (int r = 0; r < m; ++r) s += J[r][i] * y[r];
    out[i] = s;
  }
  for (int i = 0; i < n; ++i) {
    if (!isfin(out[i])) {
      for (int k = 0; k < n; ++k) out[k] = 0.0;
      return false;
    }
  }
  scale_into_box(out, lower, upper, out, n);
  return true;
}

// outcome codes of the box QP
constexpr int QP_CONVERGED = 0, QP_ITERATION_LIMIT = 1, QP_NOT_CONVEX = 2, QP_INFEASIBLE = 3,
              QP_INACCURATE = 4;

inline int qp_solve_free(const Row* H, const double* g, const double* x, const int* state,
                         int n, SolverScratch& S) {
  int nf = 0;
  for (int i = 0; i < n; ++i)
    if (state[i] == 0) S.idx[nf++] = i;
  for (int a = 0; a < nf; ++a) {
    int i = S.idx[a];
    double s = -g[i];
    for (int j = 0; j < n; ++j)
      if (state[j] != 0) s -= H[i][j] * x[j];
    S.rhs[a] = s;
    for (int b = 0; b <= a; ++b) S.L[a][b] = H[i][S.idx[b]];
  }
  if (nf > 0) {
    if (!cholesky_inplace(S.L, nf)) return -1;
    cholesky_solve_inplace(S.L, nf, S.rhs);
  }
  for (int i = 0; i < n; ++i) S.y[i] = x[i];
  for (int a = 0; a < nf; ++a) S.y[S.idx[a]] = S.rhs[a];
  return nf;
}

//: min 1/2 |J dq - t|^2 + 1/2 l^2 |dq - p|^2 s.t. lower <= dq <= upper, by the primal active
//: set; returns a QP_* code and the iterations in *iters; x zero unless converged
inline int box_qp_from_task(const Row* J, int m, int n, const double* task,
                            const double* preferred, double damping, const double* lower,
                            const double* upper, double* x, int max_iter, double tol,
                            int* iters, SolverScratch& S) {
  auto& H = S.A;
  double* g = S.g;
  double* y = S.y;
  int* state = S.state;
  const double lam2 = damping * damping;
  for (int i = 0; i < n; ++i) {
    for (int j = i; j < n; ++j) {
      double s = 0.0;
      for (int r = 0; r < m; ++r) s += J[r][i] * J[r][j];
      H[i][j] = s;
      H[j][i] = s;
    }
    H[i][i] += lam2;
    double s = 0.0;
    for (int r = 0; r < m; ++r) s += J[r][i] * task[r];
    g[i] = -(s + lam2 * preferred[i]);
  }
  *iters = 0;
  auto zero = [&]() {
    for (int i = 0; i < n; ++i) x[i] = 0.0;
  };
  for (int i = 0; i < n; ++i) {
    if (lower[i] > upper[i] || std::isnan(lower[i]) || std::isnan(upper[i])) {
      zero();
      return QP_INFEASIBLE;
    }
    state[i] = lower[i] == upper[i] ? 2 : 0;
    x[i] = state[i] == 2 ? lower[i] : 0.0;
  }
  if (qp_solve_free(H, g, x, state, n, S) < 0) {
    zero();
    return QP_NOT_CONVEX;
  }
  bool clipped = false;
  for (int i = 0; i < n; ++i) {
    if (state[i] == 0) {
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
  }
  int it = 0;
  bool fresh = !clipped;
  while (it < max_iter) {
    ++it;
    *iters = it;
    if (fresh) {
      fresh = false;
    } else if (qp_solve_free(H, g, x, state, n, S) < 0) {
      zero();
      return QP_NOT_CONVEX;
    }
    double alpha = 1.0;
    int block = -1;
    for (int i = 0; i < n; ++i) {
      if (state[i] != 0) continue;
      double d = y[i] - x[i];
      if (y[i] < lower[i] && d < 0.0) {
        double a = (lower[i] - x[i]) / d;
        if (a < alpha) {
          alpha = a;
          block = i;
        }
      } else if (y[i] > upper[i] && d > 0.0) {
        double a = (upper[i] - x[i]) / d;
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
    double worst = -tol;
    int drop = -1;
    double gmax = 0.0;
    for (int i = 0; i < n; ++i) {
      double gr = g[i];
      for (int j = 0; j < n; ++j) gr += H[i][j] * x[j];
      double mu;
      if (state[i] == -1) {
        mu = gr;
      } else if (state[i] == 1) {
        mu = -gr;
      } else {
        if (state[i] == 0 && std::fabs(gr) > gmax) gmax = std::fabs(gr);
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
    double scale = 1.0, hmax = 0.0, xmax = 0.0;
    for (int i = 0; i < n; ++i) {
      if (std::fabs(g[i]) > scale) scale = std::fabs(g[i]);
      if (std::fabs(x[i]) > xmax) xmax = std::fabs(x[i]);
      for (int j = 0; j < n; ++j)
        if (std::fabs(H[i][j]) > hmax) hmax = std::fabs(H[i][j]);
    }
    if (hmax * xmax > scale) scale = hmax * xmax;
    if (gmax > 1e3 * tol * scale) {
      zero();
      return QP_INACCURATE;
    }
    return QP_CONVERGED;
  }
  zero();
  return QP_ITERATION_LIMIT;
}

//: N = I - V_r V_r^T over the right singular vectors with s_i > rcond * s_max
inline void projector_from_svd(const double* s, int k, const Row* Vh, int n, double rcond,
                               Row* N) {
  double smax = 0.0;
  for (int a = 0; a < k; ++a)
    if (s[a] > smax) smax = s[a];
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) N[i][j] = i == j ? 1.0 : 0.0;
  for (int a = 0; a < k; ++a) {
    if (s[a] > rcond * smax && s[a] > 0.0) {
      for (int i = 0; i < n; ++i) {
        double vi = Vh[a][i];
        for (int j = 0; j < n; ++j) N[i][j] -= vi * Vh[a][j];
      }
    }
  }
}

//: posture term plus joint centering (unprojected)
inline void secondary_velocity(const double* q, const double* posture, double posture_gain,
                               const double* lower, const double* upper, const int* continuous,
                               double centering_gain, double* out, int n) {
  const double pi = 3.141592653589793;
  for (int i = 0; i < n; ++i) {
    double v = 0.0;
    if (posture_gain != 0.0) {
      double d = posture[i] - q[i];
      if (continuous[i]) d = pymod(d + pi, 2.0 * pi) - pi;
      v += posture_gain * d;
    }
    if (centering_gain != 0.0 && isfin(lower[i]) && isfin(upper[i]))
      v += centering_gain * (0.5 * (lower[i] + upper[i]) - q[i]);
    out[i] = v;
  }
}

//: out = N v; returns |out|
inline double project(const Row* N, const double* v, double* out, int n) {
  double s2 = 0.0;
  for (int i = 0; i < n; ++i) {
    double s = 0.0;
    for (int j = 0; j < n; ++j) s += N[i][j] * v[j];
    out[i] = s;
    s2 += s * s;
  }
  return std::sqrt(s2);
}

}  // namespace servo_detail
}  // namespace ikstack
