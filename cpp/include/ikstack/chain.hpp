// The serial chain: joints, limits, coupled-joint constraints, FK and the geometric Jacobian.
//
// Forward kinematics is
//   T_base_tcp = O_1 M_1(q_1) O_2 M_2(q_2) ... O_n M_n(q_n) T_last_tip T_tip_tcp,
// with O_i joint i's origin in the previous joint's frame (fixed joints folded in) and M_i a
// rotation about (revolute, continuous) or a slide along (prismatic) the unit axis of joint i,
// expressed in joint i's frame. Units: metres, radians, seconds.
//
// The Jacobian is 6 x dof with rows [linear; angular] in the base frame, the linear part taken
// at the TCP origin (Pinocchio's LOCAL_WORLD_ALIGNED), exactly as the Python
// ikstack.kinematics.jacobian: column i is [z_i x (p_tcp - p_i); z_i] for a rotating joint and
// [z_i; 0] for a prismatic one.
//
// A Chain is immutable after construction; fk/jacobian allocate nothing and never throw.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "ikstack/errors.hpp"
#include "ikstack/linalg.hpp"

namespace ikstack {

enum class JointType { Revolute = 0, Continuous = 1, Prismatic = 2 };

/// "revolute", "continuous", "prismatic".
const char* joint_type_name(JointType t);

/// One moving joint.
struct Joint {
    std::string name;
    JointType type = JointType::Revolute;
    std::string link;                       ///< the child link it moves ("" -> "link<i+1>")
    Mat4 origin;                            ///< T_prev_joint at zero configuration
    std::array<double, 3> axis{0, 0, 1};   ///< in the joint frame (normalized on construction)
    double lower = -INFINITY;               ///< position limits [rad or m]; +-inf when unbounded
    double upper = INFINITY;
    double velocity = INFINITY;             ///< [rad/s or m/s]; inf when unknown; > 0
    double acceleration = INFINITY;         ///< [rad/s^2]; inf when unknown; > 0
    double jerk = INFINITY;                 ///< [rad/s^3]; inf when unknown; > 0
};

/// Linear rows A q <= b over joint positions (A is rows x dof, row-major).
struct LinearConstraint {
    std::string name = "linear";
    int rows = 0;
    std::vector<double> A;  ///< rows * dof
    std::vector<double> b;  ///< rows
};

/// One sign quadrant of a QuadrantConstraint: active where (q_i >= 0) == i_nonneg and
/// (q_j >= 0) == j_nonneg (zero counts as non-negative); the bound is
/// b(q_i) = a0 q_i^2 + a1 q_i + a2 [rad], q_j <= b when upper, else q_j >= b.
struct QuadrantRow {
    bool i_nonneg = true;
    bool j_nonneg = true;
    double a0 = 0, a1 = 0, a2 = 0;
    bool upper = true;
};

/// A piecewise bound between two joints, one polynomial row per sign quadrant (exactly four,
/// one per quadrant), one residual row g(q) <= 0 (the Tianji Marvin J6/J7 diamond is one).
struct QuadrantConstraint {
    std::string name = "coupled";
    std::string description;
    int joint_i = 0;
    int joint_j = 1;
    std::array<QuadrantRow, 4> rows{};
    /// table[i_nonneg][j_nonneg] = {a0, a1, a2, sense (+1 upper, -1 lower)}; filled by Chain.
    double table[2][2][4] = {};

    /// |q_j| + slope |q_i| <= bound as four quadrant rows.
    static QuadrantConstraint abs_sum(int joint_i, int joint_j, double slope, double bound,
                                      const std::string& name = "coupled");
    /// g(q) [rad]; the constraint holds where g <= 0.
    double residual(const double* q) const;
    /// g and its gradient over (q_i, q_j): g(q + dq) ~ g + d_i dq_i + d_j dq_j.
    void linearize(const double* q, double& g, double& d_i, double& d_j) const;
};

/// Options of Chain's plain constructor.
struct ChainInfo {
    std::string name;
    std::string base = "base";
    std::string tip = "tip";
    std::string tcp_name;        ///< "" when no TCP is set
    std::string role = "arm";    ///< "arm" or "gripper"
    std::string source;          ///< provenance
    std::vector<std::string> notes;
    double kinematic_margin = 0.0;  ///< extra distance to keep from position limits, >= 0
};

/// Denavit-Hartenberg conventions.
///  Standard: link i is Rz(theta_i) Tz(d_i) Tx(a_i) Rx(alpha_i); joint i turns about the
///    previous frame's z. A row is (d, theta_offset, a, alpha).
///  Modified (Craig): link i is Rx(alpha_{i-1}) Tx(a_{i-1}) Rz(theta_i) Tz(d_i); joint i turns
///    about its own z. A row is (alpha, a, d, theta_offset) (Craig's column order).
/// theta_i = q_i + offset_i (revolute) or d_i = q_i + d (prismatic).
enum class DHConvention { Standard, Modified };

struct DHOptions {
    std::vector<JointType> joint_types;   ///< empty: all revolute
    std::vector<double> lower, upper;     ///< empty: unbounded; else dof values
    std::vector<double> velocity, acceleration, jerk;  ///< empty: inf
    bool has_flange = false;              ///< a static last row, same column order
    std::array<double, 4> flange{};
    std::vector<std::string> joint_names; ///< empty: joint1..jointN
    ChainInfo info;                        ///< base defaults to "base", tip to "flange"
};

class Chain {
public:
    /// Validates everything (names unique, axes non-zero, lower <= upper, rate limits > 0,
    /// constraint indices, dof <= kMaxDof) and throws ModelError naming the joint otherwise.
    /// Continuous joints get +-inf limits.
    Chain(std::vector<Joint> joints, const Mat4& T_last_tip, const Mat4& T_tip_tcp = Mat4{},
          std::vector<LinearConstraint> linear = {}, std::vector<QuadrantConstraint> quadrant = {},
          ChainInfo info = {});

    /// Reads a chain description file ("ikstack-chain 1", docs/chain-file.md). Throws
    /// ChainFileError naming the file, line and field.
    static Chain from_file(const std::string& path);
    /// The same from a string; `origin` names it in error messages.
    static Chain from_string(const std::string& text, const std::string& origin = "<string>");
    /// Writes the description file (17 significant digits; reading it back is exact).
    void to_file(const std::string& path) const;
    std::string to_string() const;

    /// A chain from DH rows (dof x 4, row-major in `rows`), see DHConvention.
    static Chain from_dh(const std::vector<std::array<double, 4>>& rows, DHConvention convention,
                         const DHOptions& options = {});

    /// A chain from a URDF file between two links (only when built with IKSTACK_WITH_URDFDOM;
    /// otherwise throws ModelError saying so). Velocity limits of 0 read as "not given".
    static Chain from_urdf(const std::string& path, const std::string& base,
                           const std::string& tip);
    /// Whether from_urdf is available in this build.
    static bool has_urdf_support();

    // ---------------------------------------------------------------- data
    int dof() const { return static_cast<int>(joints_.size()); }
    const std::vector<Joint>& joints() const { return joints_; }
    const Joint& joint(int i) const { return joints_[static_cast<size_t>(i)]; }
    /// Index of a joint by name, or -1.
    int joint_index(const std::string& name) const;
    const VecN& lower() const { return lower_; }
    const VecN& upper() const { return upper_; }
    const VecN& velocity_limits() const { return vel_; }
    const VecN& acceleration_limits() const { return acc_; }
    const VecN& jerk_limits() const { return jerk_; }
    /// Whether joint i is continuous (its posture difference wraps into [-pi, pi)).
    bool is_continuous(int i) const { return joints_[static_cast<size_t>(i)].type == JointType::Continuous; }
    bool is_prismatic(int i) const { return joints_[static_cast<size_t>(i)].type == JointType::Prismatic; }
    const Mat4& T_last_tip() const { return T_last_tip_; }
    const Mat4& T_tip_tcp() const { return T_tip_tcp_; }
    const ChainInfo& info() const { return info_; }
    double kinematic_margin() const { return info_.kinematic_margin; }
    const std::vector<LinearConstraint>& linear_constraints() const { return linear_; }
    const std::vector<QuadrantConstraint>& quadrant_constraints() const { return quadrant_; }

    /// A copy with a tool frame T_tip_tcp (in the tip frame) / without one.
    Chain with_tcp(const Mat4& T_tip_tcp, const std::string& name = "tcp") const;
    Chain without_tcp() const;
    /// A copy whose base frame is moved: FK becomes T_new_base_old_base * FK (folded into the
    /// first joint's origin; the Jacobian is then expressed in the new base frame).
    Chain with_base(const Mat4& T_new_old) const;

    // ---------------------------------------------------------------- kinematics
    /// T_base_tcp for q (dof entries). False (T untouched) when q is not finite or has the
    /// wrong size.
    bool fk(const VecN& q, Mat4& T) const;
    /// The geometric Jacobian (resized to 6 x dof).
    bool jacobian(const VecN& q, Jacobian& J) const;
    /// Both from one pass.
    bool fk_jacobian(const VecN& q, Mat4& T, Jacobian& J) const;
    /// Frames of each joint's child link (dof of them) then the TCP, into out (dof + 1).
    bool fk_links(const VecN& q, Mat4* out) const;

    // ---------------------------------------------------------------- limits and constraints
    bool within_limits(const VecN& q, double tol = 0.0, double margin = 0.0) const;
    /// Largest residual g(q) over every coupled-constraint row (-inf when there are none).
    double constraint_residual_max(const VecN& q) const;
    bool constraints_satisfied(const VecN& q, double margin = 0.0) const;
    /// Total coupled-constraint rows (linear rows + one per quadrant constraint).
    int constraint_rows() const;

    // ---------------------------------------------------------------- compiled layout
    /// The canonical compiled data FK and the Jacobian run on (each joint axis rotated onto
    /// local z, as the Python kinematics module's compile step): joint i's origin rotation
    /// (row-major 3x3) and translation, then the last joint's canonical frame to the TCP.
    /// The servo kernel reads these (ikstack::ServoChain::from_chain).
    const double* canonical_rotation(int i) const { return &Rs_[i][0][0]; }
    const double* canonical_translation(int i) const { return ps_[i]; }
    const double* canonical_end_rotation() const { return &R_end_[0][0]; }
    const double* canonical_end_translation() const { return p_end_; }

private:
    void compile();

    std::vector<Joint> joints_;
    Mat4 T_last_tip_;
    Mat4 T_tip_tcp_;
    std::vector<LinearConstraint> linear_;
    std::vector<QuadrantConstraint> quadrant_;
    ChainInfo info_;
    VecN lower_, upper_, vel_, acc_, jerk_;
    // canonical compiled data (each axis rotated onto local z), as the Python kernels use
    double Rs_[kMaxDof][3][3] = {};
    double ps_[kMaxDof][3] = {};
    double Cs_[kMaxDof][3][3] = {};
    bool prism_[kMaxDof] = {};
    double R_end_[3][3] = {};
    double p_end_[3] = {};
};

}  // namespace ikstack
