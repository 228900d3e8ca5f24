// Small dense linear algebra: transforms, box scaling, one-sided Jacobi SVD, rotation vectors.
// Each routine performs the same operations in the same order as its Python/numba twin.
#include "ikstack/linalg.hpp"

#include <algorithm>

namespace ikstack {

Mat4 matmul(const Mat4& a, const Mat4& b) {
    Mat4 out;
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c) {
            double s = 0.0;
            for (int k = 0; k < 4; ++k) s += a.m[r][k] * b.m[k][c];
            out.m[r][c] = s;
        }
    return out;
}

Mat4 rigid_inverse(const Mat4& T) {
    Mat4 out;
    for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 3; ++c) out.m[r][c] = T.m[c][r];
        out.m[r][3] = -(T.m[0][r] * T.m[0][3] + T.m[1][r] * T.m[1][3] + T.m[2][r] * T.m[2][3]);
    }
    return out;
}

Mat4 rot_x(double a) {
    Mat4 T;
    const double c = std::cos(a), s = std::sin(a);
    T.m[1][1] = c;
    T.m[1][2] = -s;
    T.m[2][1] = s;
    T.m[2][2] = c;
    return T;
}

Mat4 rot_y(double a) {
    Mat4 T;
    const double c = std::cos(a), s = std::sin(a);
    T.m[0][0] = c;
    T.m[0][2] = s;
    T.m[2][0] = -s;
    T.m[2][2] = c;
    return T;
}

Mat4 rot_z(double a) {
    Mat4 T;
    const double c = std::cos(a), s = std::sin(a);
    T.m[0][0] = c;
    T.m[0][1] = -s;
    T.m[1][0] = s;
    T.m[1][1] = c;
    return T;
}

Mat4 translation(double x, double y, double z) {
    Mat4 T;
    T.m[0][3] = x;
    T.m[1][3] = y;
    T.m[2][3] = z;
    return T;
}

Mat4 xyz_rpy(double x, double y, double z, double roll, double pitch, double yaw) {
    Mat4 T = matmul(rot_z(yaw), matmul(rot_y(pitch), rot_x(roll)));
    T.m[0][3] = x;
    T.m[1][3] = y;
    T.m[2][3] = z;
    return T;
}

double scale_into_box(const VecN& dq, const VecN& lower, const VecN& upper, VecN& out) {
    const int n = dq.size();
    double s = 1.0;
    for (int i = 0; i < n; ++i) {
        const double v = dq[i];
        if (lower[i] <= 0.0 && 0.0 <= upper[i]) {
            if (v > upper[i] && v > 0.0) {
                const double r = upper[i] / v;
                if (r < s) s = r;
            } else if (v < lower[i] && v < 0.0) {
                const double r = lower[i] / v;
                if (r < s) s = r;
            }
        }
    }
    if (s < 0.0) s = 0.0;
    if (out.size() != n) out.resize(n);
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

void integrate(const VecN& q, const VecN& dq, double dt, const VecN& lo, const VecN& hi,
               VecN& out) {
    const int n = q.size();
    if (out.size() != n) out.resize(n);
    for (int i = 0; i < n; ++i) {
        double x = q[i] + dq[i] * dt;
        if (x < lo[i])
            x = lo[i];
        else if (x > hi[i])
            x = hi[i];
        out[i] = x;
    }
}

namespace {

// |g| <= 1e-15 sqrt(ab), the rotation threshold, decided without the square root (on the
// critical path of every pair) unless g^2 is within 1e-9 (relative) of 1e-30 ab, where the
// rounding of either form could matter; the answer is the same as the square-root form's.
inline bool below_threshold(double g, double ab) {
    if (ab > 1e-200 && ab < 1e200) {
        const double g2 = g * g;
        if (g2 < 0.999999999e-30 * ab) return true;
        if (g2 > 1.000000001e-30 * ab) return false;
    }
    return std::abs(g) <= 1e-15 * std::sqrt(ab);
}

}  // namespace

void svd_jacobi(const Jacobian& A, Mat6& U, Vec6& s, MatN& Vh, bool warm) {
    const int m = A.rows();
    const int n = A.cols();
    const int k = std::min(m, n);
    double Wt[kMaxDof][kTaskRows];
    double Vt[kMaxDof][kMaxDof];
    double norms[kMaxDof];
    int order[kMaxDof];
    if (warm && (Vh.rows() != n || Vh.cols() != n)) warm = false;
    double fro2 = 0.0;
    for (int i = 0; i < n; ++i)
        for (int r = 0; r < m; ++r) fro2 += A(r, i) * A(r, i);
    if (warm) {
        for (int i = 0; i < n; ++i) {
            for (int c = 0; c < n; ++c) Vt[i][c] = Vh(i, c);
            for (int r = 0; r < m; ++r) {
                double x = 0.0;
                for (int c = 0; c < n; ++c) x += A(r, c) * Vt[i][c];
                Wt[i][r] = x;
            }
        }
    } else {
        for (int i = 0; i < n; ++i) {
            for (int c = 0; c < n; ++c) Vt[i][c] = 0.0;
            Vt[i][i] = 1.0;
            for (int r = 0; r < m; ++r) Wt[i][r] = A(r, i);
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
                if (a <= tiny || b <= tiny || below_threshold(g, a * b)) continue;
                rotated = true;
                const double zeta = (b - a) / (2.0 * g);
                const double az = std::abs(zeta);
                double t, c, sn;
                if (az > 0x1p27 && az < 0x1p500) {
                    // A tiny rotation, the same doubles without the square roots: zeta^2 >
                    // 2^54 absorbs the 1 and sqrt(fl(zeta^2)) == |zeta| (binary IEEE), so t =
                    // +-1/(2|zeta|); then t^2 < 2^-54 is absorbed by 1 and c == 1 exactly.
                    t = (zeta >= 0.0 ? 1.0 : -1.0) / (az + az);
                    c = 1.0;
                    sn = t;
                } else {
                    t = (zeta >= 0.0 ? 1.0 : -1.0) / (az + std::sqrt(1.0 + zeta * zeta));
                    // c = 1/sqrt(1 + t^2), the same double: for t^2 <= 2^-27, y = 1 + k 2^-52
                    // with k <= 2^25; sqrt(y) then rounds to 1 + floor(k/2) 2^-52 (the -eps^2/8
                    // term is under half an ulp and breaks odd k's tie downwards) and 1/that to
                    // 1 - floor(k/2) 2^-52 (+eta^2 is under half an ulp). Checked for every k.
                    const double tt = t * t;
                    const double y = 1.0 + tt;
                    if (tt <= 0x1p-27) {
                        const long long k = static_cast<long long>((y - 1.0) * 0x1p52);
                        c = 1.0 - static_cast<double>(k >> 1) * 0x1p-52;
                    } else {
                        c = 1.0 / std::sqrt(y);
                    }
                    sn = c * t;
                }
                for (int r = 0; r < m; ++r) {
                    const double x = wp[r], y = wq[r];
                    wp[r] = c * x - sn * y;
                    wq[r] = sn * x + c * y;
                }
                double* vp = Vt[p];
                double* vq = Vt[q];
                for (int r = 0; r < n; ++r) {
                    const double x = vp[r], y = vq[r];
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
        norms[j] = std::sqrt(x);
        int a = j;
        while (a > 0 && norms[order[a - 1]] < norms[j]) {
            order[a] = order[a - 1];
            --a;
        }
        order[a] = j;
    }
    const double smax = n > 0 ? norms[order[0]] : 0.0;
    if (Vh.rows() != n || Vh.cols() != n) Vh.resize(n, n);
    if (U.rows() != m || U.cols() != k) U.resize(m, k);
    if (s.size() != k) s.resize(k);
    for (int a = 0; a < n; ++a) {
        const int j = order[a];
        for (int r = 0; r < n; ++r) Vh(a, r) = Vt[j][r];
    }
    for (int a = 0; a < k; ++a) {
        const int j = order[a];
        const double sj = norms[j];
        s[a] = sj;
        if (sj > 1e-300 && sj > 1e-14 * smax) {
            for (int r = 0; r < m; ++r) U(r, a) = Wt[j][r] / sj;
        } else {
            // complete with the basis vector least covered by the columns found so far
            double best = -1.0;
            int be = 0;
            for (int e = 0; e < m; ++e) {
                double res = 1.0;
                for (int b = 0; b < a; ++b) res -= U(e, b) * U(e, b);
                if (res > best) {
                    best = res;
                    be = e;
                }
            }
            for (int r = 0; r < m; ++r) {
                double x = r == be ? 1.0 : 0.0;
                for (int b = 0; b < a; ++b) x -= U(be, b) * U(r, b);
                U(r, a) = x;
            }
            double nrm = 0.0;
            for (int r = 0; r < m; ++r) nrm += U(r, a) * U(r, a);
            nrm = std::sqrt(nrm);
            for (int r = 0; r < m; ++r) U(r, a) /= nrm;
        }
    }
}

}  // namespace ikstack
