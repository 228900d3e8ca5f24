// Differential IK: one per-cycle velocity solve, pluggable.
//
// A solver maps a DiffIKRequest to joint velocities dq minimizing
//   1/2 ||J dq - task||^2 + 1/2 damping^2 ||dq - preferred_velocity||^2
// subject to lower <= dq <= upper (and A_ineq dq <= b_ineq for solvers that support rows).
// solve() never throws and never allocates for the built-in solvers; a failure is a result
// with success == false and dq zeroed.
#pragma once

#include <array>
#include <cstring>

#include "ikstack/chain.hpp"
#include "ikstack/linalg.hpp"
#include "ikstack/motion.hpp"

namespace ikstack {

/// Most inequality rows a request may carry.
constexpr int kMaxIneqRows = 16;

/// One velocity problem (the Python ikstack.diffik.DiffIKRequest).
struct DiffIKRequest {
    Jacobian jacobian;          ///< (m, dof) task Jacobian, rows already selected and weighted
    Vec6 task;                  ///< (m,) desired task velocity, weighted like the Jacobian
    VecN q;                     ///< (dof,) current joint positions
    VecN lower, upper;          ///< (dof,) velocity bounds for this cycle [rad/s or m/s]
    VecN preferred_velocity;    ///< (dof,) secondary (nullspace) velocity; zeros when none
    double damping = 1e-3;      ///< lambda >= 0
    Matrix<kMaxIneqRows, kMaxDof> A_ineq;  ///< (k, dof); k = 0 when none
    Vector<kMaxIneqRows> b_ineq;           ///< (k,)
    double dt = 0.0;            ///< the cycle's duration [s] (for solvers that need it)

    /// Sizes every member for m task rows and dof joints (zeros; bounds +-inf; no rows).
    void resize(int m, int dof);
};

/// Outcome codes shared by the built-in solvers.
enum class DiffIKStatus {
    Ok = 0,
    IterationLimit = 1,  ///< active-set iteration cap reached before the KKT conditions held
    NotConvex = 2,       ///< H = J^T J + lambda^2 I is not positive definite
    Infeasible = 3,      ///< the box is empty
    Inaccurate = 4,      ///< the final iterate failed the KKT stationarity check
    Singular = 5,        ///< J J^T + lambda^2 I is singular (DLS)
    BadRequest = 6,      ///< wrong sizes or non-finite inputs
    Unsupported = 7,     ///< inequality rows given to a box-only solver
    Failed = 8           ///< any other failure (a user solver)
};

/// A solver's answer (dq is written into the caller's vector).
struct DiffIKResult {
    bool success = true;
    DiffIKStatus status = DiffIKStatus::Ok;
    int iterations = 0;
    /// per joint: 0 free, -1 at lower, +1 at upper, 2 fixed (lower == upper); box solvers only
    std::array<signed char, kMaxDof> active{};
    bool has_active = false;
    char message[200] = "ok";

    void set_message(const char* text) {
        size_t k = 0;
        for (; text != nullptr && text[k] != '\0' && k + 1 < sizeof(message); ++k) message[k] = text[k];
        message[k] = '\0';
    }
    static DiffIKResult failure(DiffIKStatus s, const char* text, int iterations = 0) {
        DiffIKResult r;
        r.success = false;
        r.status = s;
        r.iterations = iterations;
        r.set_message(text);
        return r;
    }
};

/// The text the Python solvers give for each status ("ok", "active-set iteration cap ...").
const char* status_message(DiffIKStatus s);

/// Checks a request's sizes and finiteness (Jacobian, task, preferred finite; bounds not NaN;
/// damping finite >= 0). Returns Ok or BadRequest with the problem in `why` (if given).
DiffIKStatus check_request(const DiffIKRequest& request, DiffIKResult* why = nullptr);

/// A per-cycle velocity solver. Callers (the servo) treat a failure, a wrong size or a
/// non-finite dq as a solver error and still pass a valid output through their own limits.
class DifferentialIK {
public:
    virtual ~DifferentialIK() = default;
    /// Joint velocities for `request` into dq (resized to dof); on failure dq is zeros.
    virtual DiffIKResult solve(const DiffIKRequest& request, VecN& dq) = 0;
    /// Whether the solver honours A_ineq/b_ineq rows.
    virtual bool supports_inequalities() const { return false; }
    /// The name used in messages ("DampedLeastSquares", "BoxQPSolver", ...).
    virtual const char* name() const { return "DifferentialIK"; }
};

/// Damped least squares, dq = p + J^T (J J^T + lambda^2 I)^-1 (t - J p), then MoveIt Servo's
/// rule into the box: scale the whole vector by the worst joint's ratio and clip joints whose
/// box excludes zero (scale_into_box). lambda = max(request.damping, min_damping).
class DampedLeastSquares : public DifferentialIK {
public:
    explicit DampedLeastSquares(double min_damping = 0.0);  ///< throws InputError if < 0 / NaN
    DiffIKResult solve(const DiffIKRequest& request, VecN& dq) override;
    const char* name() const override { return "DampedLeastSquares"; }
    double min_damping() const { return min_damping_; }
    /// The raw kernel (no request checks), for callers that hold the arrays: false when
    /// J J^T + lambda^2 I is not positive definite or the result is not finite (out zeroed).
    static bool solve_arrays(const Jacobian& J, const Vec6& task, const VecN& preferred,
                             double damping, const VecN& lower, const VecN& upper, VecN& out,
                             double* scale = nullptr);

private:
    double min_damping_;
};

/// ikstack's primal active-set method (Nocedal and Wright, Algorithm 16.3) for
///   min 1/2 x^T H x + g^T x  s.t.  lower <= x <= upper,
/// H = J^T J + lambda^2 I, g = -(J^T t + lambda^2 p): the same steps, order and tolerances as
/// the Python BoxQPSolver, so results agree to round-off. Box bounds only.
class BoxQPSolver : public DifferentialIK {
public:
    explicit BoxQPSolver(int max_iterations = 100, double tolerance = 1e-12);  ///< InputError
    DiffIKResult solve(const DiffIKRequest& request, VecN& dq) override;
    const char* name() const override { return "BoxQPSolver"; }
    int max_iterations() const { return max_iterations_; }
    double tolerance() const { return tolerance_; }

    /// The raw QP on (H, g) of size n = g.size(): x and state written; returns the status and
    /// the iterations used. x is zeros unless Ok.
    static DiffIKStatus solve_qp(const MatN& H, const VecN& g, const VecN& lower,
                                 const VecN& upper, VecN& x, std::array<signed char, kMaxDof>& state,
                                 int max_iterations, double tolerance, int& iterations);

private:
    int max_iterations_;
    double tolerance_;
};

/// H = J^T J + lambda^2 I and g = -(J^T task + lambda^2 preferred) (resized to n).
void normal_matrices(const Jacobian& J, const Vec6& task, const VecN& preferred, double damping,
                     MatN& H, VecN& g);

// -------------------------------------------------------------------- secondary objectives
/// Relative singular-value cutoff of the nullspace projector.
constexpr double kNullspaceRcond = 1e-10;

/// Unprojected secondary velocity: posture_gain * diff(posture, q) (continuous joints wrapped
/// into [-pi, pi)) plus centering_gain * (mid - q) for joints with finite limits.
/// continuous: dof flags (nullptr: none).
void secondary_velocity(const VecN& q, const VecN& posture, double posture_gain,
                        const VecN& lower, const VecN& upper, const bool* continuous,
                        double centering_gain, VecN& out);
/// N = I - V_r V_r^T over the right singular vectors (rows of Vh) with s_k > rcond * s_max.
void projector_from_svd(const Vec6& s, const MatN& Vh, double rcond, MatN& N);
/// out = N v; returns ||out||.
double project(const MatN& N, const VecN& v, VecN& out);
/// The projected secondary velocity N (k_p diff(posture, q) + k_c (mid - q)) of one
/// configuration for `chain` and task Jacobian J (posture == nullptr disables the posture
/// term). Uses svd_jacobi (cold start).
void preferred_velocity(const Chain& chain, const Jacobian& J, const VecN& q,
                        const VecN* posture, double nullspace_gain, double centering_gain,
                        VecN& out, double rcond = kNullspaceRcond);

/// Joint-limit avoidance cost and its gradient (grad resized to n); band <= 0 selects the
/// global form c = 1/(2n) sum w_i ((q_i - mid_i) / span_i)^2, band > 0 the band form
/// c = 1/(2n) sum_{m_i < B} w_i ((B - m_i) / B)^2 with m_i the distance to the nearest limit.
/// Joints without finite limits never contribute. Returns c.
double joint_limit_cost(const VecN& q, const VecN& lower, const VecN& upper,
                        const VecN& weights, double band, VecN& grad);

}  // namespace ikstack
