// Small fixed-capacity vectors and matrices for the per-cycle kernels: no heap, no Eigen.
//
// Storage is row-major and contiguous with the *runtime* column count as the stride, so the
// first rows*cols doubles of data() are exactly a C-contiguous (rows, cols) array (what numpy
// and the Python binding see). Capacities are compile-time; sizes are set at run time and
// checked against the capacity (std::length_error on overflow; never in a solve path, where
// sizes come from the chain).
#pragma once

#include <cmath>
#include <cstddef>
#include <stdexcept>

namespace ikstack {

/// Most joints a chain may have.
constexpr int kMaxDof = 16;
/// Rows of a task (linear xyz then angular xyz).
constexpr int kTaskRows = 6;

/// A vector of at most MaxN doubles.
template <int MaxN>
class Vector {
public:
    Vector() = default;
    explicit Vector(int n, double fill = 0.0) { resize(n, fill); }
    void resize(int n, double fill = 0.0) {
        if (n < 0 || n > MaxN) throw std::length_error("ikstack::Vector: size over capacity");
        n_ = n;
        for (int i = 0; i < n; ++i) d_[i] = fill;
    }
    int size() const { return n_; }
    static constexpr int capacity() { return MaxN; }
    double& operator[](int i) { return d_[i]; }
    double operator[](int i) const { return d_[i]; }
    double& operator()(int i) { return d_[i]; }
    double operator()(int i) const { return d_[i]; }
    double* data() { return d_; }
    const double* data() const { return d_; }
    void fill(double v) {
        for (int i = 0; i < n_; ++i) d_[i] = v;
    }
    bool all_finite() const {
        for (int i = 0; i < n_; ++i)
            if (!std::isfinite(d_[i])) return false;
        return true;
    }

private:
    int n_ = 0;
    double d_[MaxN > 0 ? MaxN : 1] = {};
};

/// A rows x cols matrix of at most MaxR x MaxC doubles, row-major, stride = cols.
template <int MaxR, int MaxC>
class Matrix {
public:
    Matrix() = default;
    Matrix(int r, int c, double fill = 0.0) { resize(r, c, fill); }
    void resize(int r, int c, double fill = 0.0) {
        if (r < 0 || c < 0 || r > MaxR || c > MaxC)
            throw std::length_error("ikstack::Matrix: size over capacity");
        r_ = r;
        c_ = c;
        for (int i = 0; i < r * c; ++i) d_[i] = fill;
    }
    int rows() const { return r_; }
    int cols() const { return c_; }
    static constexpr int max_rows() { return MaxR; }
    static constexpr int max_cols() { return MaxC; }
    double& operator()(int r, int c) { return d_[r * c_ + c]; }
    double operator()(int r, int c) const { return d_[r * c_ + c]; }
    double* data() { return d_; }
    const double* data() const { return d_; }
    double* row(int r) { return d_ + r * c_; }
    const double* row(int r) const { return d_ + r * c_; }
    void set_identity() {
        for (int i = 0; i < r_; ++i)
            for (int j = 0; j < c_; ++j) (*this)(i, j) = i == j ? 1.0 : 0.0;
    }
    static Matrix identity(int n) {
        Matrix m(n, n);
        m.set_identity();
        return m;
    }
    bool all_finite() const {
        for (int i = 0; i < r_ * c_; ++i)
            if (!std::isfinite(d_[i])) return false;
        return true;
    }

private:
    int r_ = 0;
    int c_ = 0;
    double d_[MaxR * MaxC] = {};
};

using VecN = Vector<kMaxDof>;              ///< joint-space vector (dof entries)
using Vec6 = Vector<kTaskRows>;            ///< task-space vector (m <= 6 entries)
using MatN = Matrix<kMaxDof, kMaxDof>;     ///< dof x dof
using Jacobian = Matrix<kTaskRows, kMaxDof>;  ///< m x dof task Jacobian (m <= 6)
using Mat6 = Matrix<kTaskRows, kTaskRows>;
using MatNx6 = Matrix<kMaxDof, kTaskRows>;

/// A rigid transform or any 4x4 matrix, row-major (m[r][c]).
struct Mat4 {
    double m[4][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}};
    double& operator()(int r, int c) { return m[r][c]; }
    double operator()(int r, int c) const { return m[r][c]; }
    double* data() { return &m[0][0]; }
    const double* data() const { return &m[0][0]; }
    static Mat4 identity() { return Mat4{}; }
};

/// A 3x3 rotation (or any 3x3 matrix), row-major.
struct Mat3 {
    double m[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    double& operator()(int r, int c) { return m[r][c]; }
    double operator()(int r, int c) const { return m[r][c]; }
};

/// a @ b for 4x4 matrices.
Mat4 matmul(const Mat4& a, const Mat4& b);
/// The inverse of a rigid transform (rotation transposed).
Mat4 rigid_inverse(const Mat4& T);
/// Rotation matrices about x, y, z and translations (4x4).
Mat4 rot_x(double a);
Mat4 rot_y(double a);
Mat4 rot_z(double a);
Mat4 translation(double x, double y, double z);
/// Rz(yaw) Ry(pitch) Rx(roll) with translation xyz (the URDF origin convention).
Mat4 xyz_rpy(double x, double y, double z, double roll, double pitch, double yaw);

/// Lower Cholesky factor of the leading n x n block of A, in place (reads the lower triangle).
/// False when the block is not numerically positive definite (a pivot <= 1e-300).
template <int MaxR, int MaxC>
bool cholesky_inplace(Matrix<MaxR, MaxC>& A, int n);
/// Solve L L^T x = b for the first n entries of b, in place.
template <int MaxR, int MaxC>
void cholesky_solve_inplace(const Matrix<MaxR, MaxC>& L, int n, double* b);

/// Scale dq uniformly into [lower, upper] (the largest s <= 1 with s dq inside every bound
/// that contains zero), then clip joints whose box excludes zero. out may alias dq.
/// Returns the scale used (MoveIt Servo's velocity scaling).
double scale_into_box(const VecN& dq, const VecN& lower, const VecN& upper, VecN& out);

/// out = clip(q + dq dt, lo, hi).
void integrate(const VecN& q, const VecN& dq, double dt, const VecN& lo, const VecN& hi, VecN& out);

/// SVD of a small (m, n) matrix (m <= 6, n <= kMaxDof) by one-sided Jacobi rotations on its
/// columns: A = U diag(s) Vh[:k], k = min(m, n); s descending; Vh (n, n) complete (its rows
/// beyond the rank span the nullspace). With warm the rotations start from the orthogonal Vh
/// passed in (a servo's previous cycle). The same operations, in the same order, as the
/// Python kernel. Allocation-free (scratch on the stack).
void svd_jacobi(const Jacobian& A, Mat6& U, Vec6& s, MatN& Vh, bool warm);

}  // namespace ikstack

#include "ikstack/linalg_impl.hpp"
