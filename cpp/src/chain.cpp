// The serial chain: validation, the canonical compiled layout, FK, the Jacobian, constraints.
#include "ikstack/chain.hpp"

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

namespace ikstack {

const char* joint_type_name(JointType t) {
    switch (t) {
        case JointType::Revolute: return "revolute";
        case JointType::Continuous: return "continuous";
        case JointType::Prismatic: return "prismatic";
    }
    return "revolute";
}

// ---------------------------------------------------------------------------- constraints
QuadrantConstraint QuadrantConstraint::abs_sum(int joint_i, int joint_j, double slope,
                                               double bound, const std::string& name) {
    QuadrantConstraint c;
    c.name = name;
    c.joint_i = joint_i;
    c.joint_j = joint_j;
    c.rows = {QuadrantRow{true, true, 0.0, -slope, bound, true},
              QuadrantRow{false, true, 0.0, slope, bound, true},
              QuadrantRow{false, false, 0.0, -slope, -bound, false},
              QuadrantRow{true, false, 0.0, slope, -bound, false}};
    char buf[160];
    std::snprintf(buf, sizeof buf, "|q%d| + %g |q%d| <= %.6g rad", joint_j, slope, joint_i, bound);
    c.description = buf;
    for (const QuadrantRow& r : c.rows) {
        double* t = c.table[r.i_nonneg ? 1 : 0][r.j_nonneg ? 1 : 0];
        t[0] = r.a0;
        t[1] = r.a1;
        t[2] = r.a2;
        t[3] = r.upper ? 1.0 : -1.0;
    }
    return c;
}

double QuadrantConstraint::residual(const double* q) const {
    const double qi = q[joint_i], qj = q[joint_j];
    const double* t = table[qi >= 0 ? 1 : 0][qj >= 0 ? 1 : 0];
    const double b = t[0] * qi * qi + t[1] * qi + t[2];
    return t[3] > 0 ? qj - b : b - qj;
}

void QuadrantConstraint::linearize(const double* q, double& g, double& d_i, double& d_j) const {
    const double qi = q[joint_i], qj = q[joint_j];
    const double* t = table[qi >= 0 ? 1 : 0][qj >= 0 ? 1 : 0];
    const double b = t[0] * qi * qi + t[1] * qi + t[2];
    const double slope = 2.0 * t[0] * qi + t[1];
    if (t[3] > 0) {
        g = qj - b;
        d_i = -slope;
        d_j = 1.0;
    } else {
        g = b - qj;
        d_i = slope;
        d_j = -1.0;
    }
}

// ---------------------------------------------------------------------------- construction
namespace {

bool finite4(const Mat4& T) {
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c)
            if (!std::isfinite(T.m[r][c])) return false;
    return true;
}

std::string num(double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

// A rotation C with C e_z = axis (identity when already z), as the Python compile step.
void rotation_onto_z(const std::array<double, 3>& axis, double C[3][3]) {
    const double nrm = std::sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    const double a[3] = {axis[0] / nrm, axis[1] / nrm, axis[2] / nrm};
    const double v[3] = {-a[1], a[0], 0.0};  // cross(e_z, a)
    const double s = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    const double c = a[2];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) C[i][j] = i == j ? 1.0 : 0.0;
    if (s < 1e-12) {
        if (!(c > 0)) {
            C[1][1] = -1.0;
            C[2][2] = -1.0;
        }
        return;
    }
    const double k[3] = {v[0] / s, v[1] / s, v[2] / s};
    const double K[3][3] = {{0, -k[2], k[1]}, {k[2], 0, -k[0]}, {-k[1], k[0], 0}};
    const double ang = std::atan2(s, c);
    const double sa = std::sin(ang), ca = 1.0 - std::cos(ang);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            double kk = 0.0;
            for (int m = 0; m < 3; ++m) kk += K[i][m] * K[m][j];
            C[i][j] += sa * K[i][j] + ca * kk;
        }
}

}  // namespace

Chain::Chain(std::vector<Joint> joints, const Mat4& T_last_tip, const Mat4& T_tip_tcp,
             std::vector<LinearConstraint> linear, std::vector<QuadrantConstraint> quadrant,
             ChainInfo info)
    : joints_(std::move(joints)), T_last_tip_(T_last_tip), T_tip_tcp_(T_tip_tcp),
      linear_(std::move(linear)), quadrant_(std::move(quadrant)), info_(std::move(info)) {
    const int n = dof();
    if (n == 0) throw ModelError("a chain needs at least one moving joint between base and tip");
    if (n > kMaxDof)
        throw ModelError("the chain has " + std::to_string(n) + " joints; at most " +
                         std::to_string(kMaxDof) + " are supported");
    std::set<std::string> names;
    for (int i = 0; i < n; ++i) {
        Joint& j = joints_[static_cast<size_t>(i)];
        const std::string who = "joint '" + j.name + "'";
        if (j.name.empty()) throw ModelError("joint " + std::to_string(i) + " has no name");
        if (!names.insert(j.name).second) throw ModelError("joint names repeat: '" + j.name + "'");
        const double nrm =
            std::sqrt(j.axis[0] * j.axis[0] + j.axis[1] * j.axis[1] + j.axis[2] * j.axis[2]);
        if (!std::isfinite(nrm) || nrm < 1e-9)
            throw ModelError(who + ": the axis must be finite and non-zero");
        // idempotent: an axis already unit to round-off keeps its bits (exact file round trips)
        if (std::abs(nrm - 1.0) > 1e-15)
            for (double& a : j.axis) a /= nrm;
        if (!finite4(j.origin)) throw ModelError(who + ": the origin must be finite");
        if (j.type == JointType::Continuous) {
            j.lower = -INFINITY;
            j.upper = INFINITY;
        }
        if (std::isnan(j.lower) || std::isnan(j.upper) || j.lower > j.upper)
            throw ModelError(who + ": lower > upper (or NaN): [" + num(j.lower) + ", " +
                             num(j.upper) + "]");
        const double rates[3] = {j.velocity, j.acceleration, j.jerk};
        const char* rate_names[3] = {"velocity", "acceleration", "jerk"};
        for (int k = 0; k < 3; ++k)
            if (std::isnan(rates[k]) || rates[k] <= 0)
                throw ModelError(who + ": the " + rate_names[k] +
                                 " limit must be positive (inf for unknown); got " + num(rates[k]));
        if (j.link.empty()) j.link = "link" + std::to_string(i + 1);
    }
    if (!finite4(T_last_tip_)) throw ModelError("T_last_tip must be finite");
    if (!finite4(T_tip_tcp_)) throw ModelError("T_tip_tcp must be finite");
    for (const LinearConstraint& c : linear_) {
        if (c.rows < 1 || c.A.size() != static_cast<size_t>(c.rows * n) ||
            c.b.size() != static_cast<size_t>(c.rows))
            throw ModelError("constraint '" + c.name + "' has " + std::to_string(c.A.size()) +
                             " coefficients and " + std::to_string(c.b.size()) +
                             " bounds; expected rows x " + std::to_string(n) + " and rows");
        for (double v : c.A)
            if (!std::isfinite(v)) throw ModelError("constraint '" + c.name + "': A must be finite");
        for (double v : c.b)
            if (!std::isfinite(v)) throw ModelError("constraint '" + c.name + "': b must be finite");
    }
    for (QuadrantConstraint& c : quadrant_) {
        const std::string who = "constraint '" + c.name + "'";
        if (c.joint_i < 0 || c.joint_i >= n || c.joint_j < 0 || c.joint_j >= n)
            throw ModelError(who + " refers to joint index " +
                             std::to_string(c.joint_i < 0 || c.joint_i >= n ? c.joint_i : c.joint_j) +
                             "; the chain has " + std::to_string(n) + " joints");
        if (c.joint_i == c.joint_j)
            throw ModelError(who + " couples joint " + std::to_string(c.joint_i) + " with itself");
        bool seen[2][2] = {{false, false}, {false, false}};
        for (const QuadrantRow& r : c.rows) {
            if (!(std::isfinite(r.a0) && std::isfinite(r.a1) && std::isfinite(r.a2)))
                throw ModelError(who + " has a non-finite coefficient");
            seen[r.i_nonneg ? 1 : 0][r.j_nonneg ? 1 : 0] = true;
            double* t = c.table[r.i_nonneg ? 1 : 0][r.j_nonneg ? 1 : 0];
            t[0] = r.a0;
            t[1] = r.a1;
            t[2] = r.a2;
            t[3] = r.upper ? 1.0 : -1.0;
        }
        if (!(seen[0][0] && seen[0][1] && seen[1][0] && seen[1][1]))
            throw ModelError(who + " needs exactly one row per sign quadrant");
    }
    if (!(std::isfinite(info_.kinematic_margin) && info_.kinematic_margin >= 0))
        throw ModelError("kinematic_margin must be finite and >= 0; got " +
                         num(info_.kinematic_margin));
    if (info_.role != "arm" && info_.role != "gripper")
        throw ModelError("role must be 'arm' or 'gripper'; got '" + info_.role + "'");
    lower_.resize(n);
    upper_.resize(n);
    vel_.resize(n);
    acc_.resize(n);
    jerk_.resize(n);
    for (int i = 0; i < n; ++i) {
        const Joint& j = joints_[static_cast<size_t>(i)];
        lower_[i] = j.lower;
        upper_[i] = j.upper;
        vel_[i] = j.velocity;
        acc_[i] = j.acceleration;
        jerk_[i] = j.jerk;
    }
    compile();
}

void Chain::compile() {
    const int n = dof();
    double prevC[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    for (int i = 0; i < n; ++i) {
        const Joint& j = joints_[static_cast<size_t>(i)];
        rotation_onto_z(j.axis, Cs_[i]);
        prism_[i] = j.type == JointType::Prismatic;
        // Rs = (prevC^T O_R) C ; ps = prevC^T O_p
        double tmp[3][3];
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) {
                double s = 0.0;
                for (int k = 0; k < 3; ++k) s += prevC[k][r] * j.origin.m[k][c];
                tmp[r][c] = s;
            }
        for (int r = 0; r < 3; ++r) {
            for (int c = 0; c < 3; ++c) {
                double s = 0.0;
                for (int k = 0; k < 3; ++k) s += tmp[r][k] * Cs_[i][k][c];
                Rs_[i][r][c] = s;
            }
            double s = 0.0;
            for (int k = 0; k < 3; ++k) s += prevC[k][r] * j.origin.m[k][3];
            ps_[i][r] = s;
        }
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) prevC[r][c] = Cs_[i][r][c];
    }
    const Mat4 T_end = matmul(T_last_tip_, T_tip_tcp_);
    for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 3; ++c) {
            double s = 0.0;
            for (int k = 0; k < 3; ++k) s += prevC[k][r] * T_end.m[k][c];
            R_end_[r][c] = s;
        }
        double s = 0.0;
        for (int k = 0; k < 3; ++k) s += prevC[k][r] * T_end.m[k][3];
        p_end_[r] = s;
    }
}

int Chain::joint_index(const std::string& name) const {
    for (int i = 0; i < dof(); ++i)
        if (joints_[static_cast<size_t>(i)].name == name) return i;
    return -1;
}

Chain Chain::with_tcp(const Mat4& T, const std::string& name) const {
    ChainInfo info = info_;
    info.tcp_name = name;
    return Chain(joints_, T_last_tip_, T, linear_, quadrant_, info);
}

Chain Chain::without_tcp() const {
    ChainInfo info = info_;
    info.tcp_name.clear();
    return Chain(joints_, T_last_tip_, Mat4{}, linear_, quadrant_, info);
}

Chain Chain::with_base(const Mat4& T_new_old) const {
    std::vector<Joint> joints = joints_;
    joints[0].origin = matmul(T_new_old, joints[0].origin);
    return Chain(joints, T_last_tip_, T_tip_tcp_, linear_, quadrant_, info_);
}

// ---------------------------------------------------------------------------- kinematics
namespace {

struct Frame {
    double r00 = 1, r01 = 0, r02 = 0, r10 = 0, r11 = 1, r12 = 0, r20 = 0, r21 = 0, r22 = 1;
    double p0 = 0, p1 = 0, p2 = 0;
};

// One joint: move to the joint origin (canonical), then apply the joint motion.
inline void advance(Frame& f, const double R[3][3], const double p[3], bool prism, double qi,
                    double* z_out, double* o_out) {
    const double a0 = p[0], a1 = p[1], a2 = p[2];
    f.p0 = f.p0 + f.r00 * a0 + f.r01 * a1 + f.r02 * a2;
    f.p1 = f.p1 + f.r10 * a0 + f.r11 * a1 + f.r12 * a2;
    f.p2 = f.p2 + f.r20 * a0 + f.r21 * a1 + f.r22 * a2;
    const double b00 = R[0][0], b01 = R[0][1], b02 = R[0][2];
    const double b10 = R[1][0], b11 = R[1][1], b12 = R[1][2];
    const double b20 = R[2][0], b21 = R[2][1], b22 = R[2][2];
    double x0 = f.r00 * b00 + f.r01 * b10 + f.r02 * b20, x1 = f.r00 * b01 + f.r01 * b11 + f.r02 * b21,
           x2 = f.r00 * b02 + f.r01 * b12 + f.r02 * b22;
    f.r00 = x0; f.r01 = x1; f.r02 = x2;
    x0 = f.r10 * b00 + f.r11 * b10 + f.r12 * b20; x1 = f.r10 * b01 + f.r11 * b11 + f.r12 * b21;
    x2 = f.r10 * b02 + f.r11 * b12 + f.r12 * b22;
    f.r10 = x0; f.r11 = x1; f.r12 = x2;
    x0 = f.r20 * b00 + f.r21 * b10 + f.r22 * b20; x1 = f.r20 * b01 + f.r21 * b11 + f.r22 * b21;
    x2 = f.r20 * b02 + f.r21 * b12 + f.r22 * b22;
    f.r20 = x0; f.r21 = x1; f.r22 = x2;
    if (z_out != nullptr) {
        z_out[0] = f.r02; z_out[1] = f.r12; z_out[2] = f.r22;
        o_out[0] = f.p0; o_out[1] = f.p1; o_out[2] = f.p2;
    }
    if (!prism) {
        const double c = std::cos(qi), s = std::sin(qi);
        double u = c * f.r00 + s * f.r01, v = -s * f.r00 + c * f.r01;
        f.r00 = u; f.r01 = v;
        u = c * f.r10 + s * f.r11; v = -s * f.r10 + c * f.r11;
        f.r10 = u; f.r11 = v;
        u = c * f.r20 + s * f.r21; v = -s * f.r20 + c * f.r21;
        f.r20 = u; f.r21 = v;
    } else {
        f.p0 += f.r02 * qi;
        f.p1 += f.r12 * qi;
        f.p2 += f.r22 * qi;
    }
}

inline void finish(const Frame& f, const double Re[3][3], const double pe[3], Mat4& T) {
    const double e0 = pe[0], e1 = pe[1], e2 = pe[2];
    T.m[0][3] = f.p0 + f.r00 * e0 + f.r01 * e1 + f.r02 * e2;
    T.m[1][3] = f.p1 + f.r10 * e0 + f.r11 * e1 + f.r12 * e2;
    T.m[2][3] = f.p2 + f.r20 * e0 + f.r21 * e1 + f.r22 * e2;
    for (int c = 0; c < 3; ++c) {
        const double x = Re[0][c], y = Re[1][c], z = Re[2][c];
        T.m[0][c] = f.r00 * x + f.r01 * y + f.r02 * z;
        T.m[1][c] = f.r10 * x + f.r11 * y + f.r12 * z;
        T.m[2][c] = f.r20 * x + f.r21 * y + f.r22 * z;
    }
    T.m[3][0] = 0.0;
    T.m[3][1] = 0.0;
    T.m[3][2] = 0.0;
    T.m[3][3] = 1.0;
}

}  // namespace

bool Chain::fk(const VecN& q, Mat4& T) const {
    const int n = dof();
    if (q.size() != n || !q.all_finite()) return false;
    Frame f;
    for (int i = 0; i < n; ++i) advance(f, Rs_[i], ps_[i], prism_[i], q[i], nullptr, nullptr);
    finish(f, R_end_, p_end_, T);
    return true;
}

bool Chain::jacobian(const VecN& q, Jacobian& J) const {
    Mat4 T;
    return fk_jacobian(q, T, J);
}

bool Chain::fk_jacobian(const VecN& q, Mat4& T, Jacobian& J) const {
    const int n = dof();
    if (q.size() != n || !q.all_finite()) return false;
    if (J.rows() != 6 || J.cols() != n) J.resize(6, n);
    double z[kMaxDof][3], o[kMaxDof][3];
    Frame f;
    for (int i = 0; i < n; ++i) advance(f, Rs_[i], ps_[i], prism_[i], q[i], z[i], o[i]);
    finish(f, R_end_, p_end_, T);
    const double tx = T.m[0][3], ty = T.m[1][3], tz = T.m[2][3];
    for (int i = 0; i < n; ++i) {
        const double zx = z[i][0], zy = z[i][1], zz = z[i][2];
        if (!prism_[i]) {
            const double dx = tx - o[i][0], dy = ty - o[i][1], dz = tz - o[i][2];
            J(0, i) = zy * dz - zz * dy;
            J(1, i) = zz * dx - zx * dz;
            J(2, i) = zx * dy - zy * dx;
            J(3, i) = zx;
            J(4, i) = zy;
            J(5, i) = zz;
        } else {
            J(0, i) = zx;
            J(1, i) = zy;
            J(2, i) = zz;
            J(3, i) = 0.0;
            J(4, i) = 0.0;
            J(5, i) = 0.0;
        }
    }
    return true;
}

bool Chain::fk_links(const VecN& q, Mat4* out) const {
    const int n = dof();
    if (q.size() != n || !q.all_finite()) return false;
    const double zero[3] = {0, 0, 0};
    Frame f;
    for (int i = 0; i < n; ++i) {
        advance(f, Rs_[i], ps_[i], prism_[i], q[i], nullptr, nullptr);
        double CT[3][3];
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) CT[r][c] = Cs_[i][c][r];
        finish(f, CT, zero, out[i]);
    }
    finish(f, R_end_, p_end_, out[n]);
    return true;
}

// ---------------------------------------------------------------------------- limits
bool Chain::within_limits(const VecN& q, double tol, double margin) const {
    if (q.size() != dof()) return false;
    for (int i = 0; i < dof(); ++i)
        if (!(q[i] >= lower_[i] + margin - tol && q[i] <= upper_[i] - margin + tol)) return false;
    return true;
}

double Chain::constraint_residual_max(const VecN& q) const {
    const int n = dof();
    double worst = -INFINITY;
    for (const LinearConstraint& c : linear_)
        for (int r = 0; r < c.rows; ++r) {
            double g = 0.0;
            for (int i = 0; i < n; ++i) g += q[i] * c.A[static_cast<size_t>(r * n + i)];
            g -= c.b[static_cast<size_t>(r)];
            worst = std::max(worst, g);
        }
    for (const QuadrantConstraint& c : quadrant_) worst = std::max(worst, c.residual(q.data()));
    return worst;
}

bool Chain::constraints_satisfied(const VecN& q, double margin) const {
    return constraint_residual_max(q) <= -margin;
}

int Chain::constraint_rows() const {
    int k = static_cast<int>(quadrant_.size());
    for (const LinearConstraint& c : linear_) k += c.rows;
    return k;
}

// ---------------------------------------------------------------------------- DH
Chain Chain::from_dh(const std::vector<std::array<double, 4>>& rows, DHConvention convention,
                     const DHOptions& o) {
    const int n = static_cast<int>(rows.size());
    if (n == 0) throw ModelError("a DH table needs at least one row");
    for (int i = 0; i < n; ++i)
        for (double v : rows[static_cast<size_t>(i)])
            if (!std::isfinite(v))
                throw ModelError("DH row " + std::to_string(i) + " is not finite");
    auto pick = [n](const std::vector<double>& v, double dflt, const char* what) {
        if (v.empty()) return std::vector<double>(static_cast<size_t>(n), dflt);
        if (static_cast<int>(v.size()) != n)
            throw ModelError(std::string(what) + " has " + std::to_string(v.size()) +
                             " values; the DH table has " + std::to_string(n) + " rows");
        return v;
    };
    const auto lo = pick(o.lower, -INFINITY, "lower");
    const auto hi = pick(o.upper, INFINITY, "upper");
    const auto vel = pick(o.velocity, INFINITY, "velocity");
    const auto acc = pick(o.acceleration, INFINITY, "acceleration");
    const auto jerk = pick(o.jerk, INFINITY, "jerk");
    if (!o.joint_types.empty() && static_cast<int>(o.joint_types.size()) != n)
        throw ModelError(std::to_string(o.joint_types.size()) + " joint types for a " +
                         std::to_string(n) + "-row DH table");
    if (!o.joint_names.empty() && static_cast<int>(o.joint_names.size()) != n)
        throw ModelError(std::to_string(o.joint_names.size()) + " joint names for a " +
                         std::to_string(n) + "-row DH table");
    std::vector<Joint> joints(static_cast<size_t>(n));
    Mat4 T_last;
    if (convention == DHConvention::Standard) {
        // joint i turns about frame (i-1)'s z; the rest of link i follows the motion
        Mat4 post;
        for (int i = 0; i < n; ++i) {
            const auto& r = rows[static_cast<size_t>(i)];  // (d, theta, a, alpha)
            joints[static_cast<size_t>(i)].origin = post;
            post = matmul(matmul(matmul(rot_z(r[1]), translation(0, 0, r[0])),
                                 translation(r[2], 0, 0)),
                          rot_x(r[3]));
        }
        T_last = post;
        if (o.has_flange) {
            const auto& f = o.flange;
            T_last = matmul(T_last, matmul(matmul(matmul(rot_z(f[1]), translation(0, 0, f[0])),
                                                  translation(f[2], 0, 0)),
                                           rot_x(f[3])));
        }
    } else {
        Mat4 pre;
        for (int i = 0; i < n; ++i) {
            const auto& r = rows[static_cast<size_t>(i)];  // (alpha, a, d, theta)
            joints[static_cast<size_t>(i)].origin =
                matmul(matmul(matmul(pre, rot_x(r[0])), translation(r[1], 0, 0)), rot_z(r[3]));
            pre = translation(0, 0, r[2]);
        }
        T_last = pre;
        if (o.has_flange) {
            const auto& f = o.flange;
            T_last = matmul(T_last, matmul(matmul(matmul(rot_x(f[0]), translation(f[1], 0, 0)),
                                                  rot_z(f[3])),
                                           translation(0, 0, f[2])));
        }
    }
    for (int i = 0; i < n; ++i) {
        Joint& j = joints[static_cast<size_t>(i)];
        const size_t k = static_cast<size_t>(i);
        j.name = o.joint_names.empty() ? "joint" + std::to_string(i + 1) : o.joint_names[k];
        j.type = o.joint_types.empty() ? JointType::Revolute : o.joint_types[k];
        j.link = "link" + std::to_string(i + 1);
        j.axis = {0.0, 0.0, 1.0};
        j.lower = lo[k];
        j.upper = hi[k];
        j.velocity = vel[k];
        j.acceleration = acc[k];
        j.jerk = jerk[k];
    }
    ChainInfo info = o.info;
    if (info.tip == "tip") info.tip = "flange";
    return Chain(std::move(joints), T_last, Mat4{}, {}, {}, info);
}

}  // namespace ikstack
