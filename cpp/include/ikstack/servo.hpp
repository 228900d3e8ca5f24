// The real-time servo kernel: one safe joint reference per control cycle.
//
// One cycle: validate the input; joint state + command -> task (pose error or twist, selected
// and weighted) -> Jacobian and SVD -> this cycle's velocity box (velocity, next-cycle
// acceleration, sampled braking distance to the position limits, jerk) -> the
// differential-IK solver -> singularity scaling -> smoothing -> the chain's coupled-joint
// constraints (the velocity held back until the stop after it stays inside) -> motion
// generator -> re-validation -> ServoResult. Nothing reaches the output that has not passed
// the last check, and a solver or generator fault latches (SOLVER_ERROR) until reset().
//
// The same commands, actions, status bits, bounds, messages and operation order as the
// Python package's servo. step() allocates nothing: every buffer is sized at construction.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ikstack {

class Chain;            // chain.hpp
class DifferentialIK;   // diffik.hpp: a custom per-cycle solver
class MotionGenerator;  // motion.hpp: a custom reference generator

/// joints a servo can drive (fixed capacity: no allocation per cycle)
constexpr int kServoMaxDof = 16;
/// coupled-constraint rows a servo can enforce
constexpr int kServoMaxRows = 32;

using ServoVec = std::array<double, kServoMaxDof>;

/// Why the reference is what it is; several may be set at once (ServoResult::status). The
/// bit values of the Python package's ServoStatus, under the same names.
struct ServoStatus {
    static constexpr std::uint32_t NONE = 0;
    static constexpr std::uint32_t GOAL_REACHED = 1u << 0;  // the pose is within tolerance
    static constexpr std::uint32_t VELOCITY_SCALED =
        1u << 1;  // scaled/clipped by velocity or acceleration
    static constexpr std::uint32_t SINGULARITY_DECELERATE =
        1u << 2;  // slowing down approaching a singularity
    static constexpr std::uint32_t SINGULARITY_HALT =
        1u << 3;  // halted: moving further would enter one
    static constexpr std::uint32_t SINGULARITY_LEAVING = 1u << 4;  // moving away from a singularity
    static constexpr std::uint32_t JOINT_BOUND = 1u
                                                 << 5;  // held back by a position limit (braking)
    static constexpr std::uint32_t STALE_COMMAND = 1u << 6;  // the command is too old, or missing
    static constexpr std::uint32_t SOLVER_ERROR = 1u << 7;   // solver or generator failed (latched)
    static constexpr std::uint32_t INVALID_INPUT = 1u << 8;  // the input was rejected
    static constexpr std::uint32_t LIMIT_CONFLICT = 1u
                                                    << 9;  // limits incompatible; priority applied
    static constexpr std::uint32_t JERK_RELAXED = 1u << 10;  // the jerk limit had to yield
    static constexpr std::uint32_t SINGULARITY_ESCAPE =
        1u << 11;  // escape motion at an exact singularity
    static constexpr std::uint32_t COUPLED_BOUND =
        1u << 12;  // a coupled-joint constraint holds it back
};

/// What the caller should do with a result's reference.
enum class Action : int { TRACK = 0, HOLD = 1, REJECT = 2 };

/// The frame a twist command is expressed in.
enum class TwistFrame : int { BASE = 0, TOOL = 1 };

enum class CommandType : int { NONE = 0, POSE = 1, TWIST = 2, JOINT_JOG = 3 };

/// The measured (or previously commanded) joint state; stamp in integer nanoseconds.
struct JointState {
    ServoVec q{};
    ServoVec dq{};
    std::int64_t stamp_ns = 0;
};

/// The latest command (or none: a smooth halt, then HOLD).
/// POSE: T_base_target, row-major 4x4 pose of the tool in the base frame.
/// TWIST: [v; w] of the tool origin, in `frame` (0 base, 1 tool; other values are refused).
/// JOINT_JOG: joint velocities.
struct ServoCommand {
    CommandType type = CommandType::NONE;
    std::array<double, 16> T{};
    std::array<double, 6> twist{};
    int frame = 0;
    ServoVec velocities{};
    std::int64_t stamp_ns = 0;

    static ServoCommand none() { return ServoCommand{}; }
    static ServoCommand pose(const double* T_row_major, std::int64_t stamp);
    static ServoCommand twist_cmd(const double* v6, TwistFrame f, std::int64_t stamp);
    static ServoCommand jog(const double* v, int n, std::int64_t stamp);
};

/// Settings of the servo (SI units; MoveIt Servo defaults). See the Python ServoConfig.
struct ServoConfig {
    std::array<int, 6> task_axes{{0, 1, 2, 3, 4, 5}};
    int num_task_axes = 6;
    std::array<double, 6> task_weights{{1.0, 1.0, 1.0, 1.0, 1.0, 1.0}};
    double max_linear_speed = 0.4;
    double max_angular_speed = 0.8;
    double pose_gain = 10.0;
    double position_tolerance = 0.001;
    double rotation_tolerance = 0.01;
    double nullspace_gain = 0.0;
    bool has_nullspace_reference = false;
    ServoVec nullspace_reference{};
    double joint_centering_gain = 0.0;
    double damping = 1e-3;
    double command_timeout = 0.1;
    double stop_velocity = 1e-4;
    double singularity_decelerate = 17.0;
    double singularity_halt = 30.0;
    double leaving_multiplier = 2.0;
    double singularity_probe = 0.01;
    double halt_scale = 0.05;
    double leaving_min_scale = 0.5;
    double escape_speed = 0.1;
    double joint_limit_margin = 0.1;
    double state_tolerance = 1e-6;
    double smoothing = 0.0;
    double max_dt = 1.0;

    /// task axes from a list (sorted, as the Python config stores them)
    void set_task_axes(const int* axes, int count);
    /// the halt threshold when moving away from a singularity
    double leaving_halt() const;
    /// "" when valid, else the message of the configuration error
    std::string check() const;
};

/// A coupled-joint constraint row g(q) <= 0 the servo enforces.
struct ServoLinearRow {  // sum_i a_i q_i - b <= 0
    std::vector<double> a;
    double b = 0.0;
    std::string name;  // "name (description)" as the messages show it
};
struct ServoQuadrantRow {  // g = q_j - b(q_i) (upper) or b(q_i) - q_j, per sign quadrant
    int i = 0, j = 1;
    // table[(qi >= 0) * 2 + (qj >= 0)] = {a0, a1, a2, sense (+1 upper, -1 lower)}
    std::array<std::array<double, 4>, 4> table{};
    std::string name;
};

/// The chain as the servo needs it: canonical joint data (every axis rotated onto local z,
/// the kinematics module's compiled layout), limits, margin and constraints.
struct ServoChain {
    int dof = 0;
    std::vector<std::string> joint_names;
    std::vector<std::array<double, 9>> Rs;  // row-major canonical origin rotations
    std::vector<std::array<double, 3>> ps;  // canonical origin translations
    std::vector<int> kinds;                 // 0 revolute, 1 prismatic
    std::array<double, 9> R_end{};          // last joint frame (canonical) to TCP
    std::array<double, 3> p_end{};
    std::vector<double> lower, upper, velocity, acceleration, jerk;
    std::vector<int> continuous;  // 1 for a continuous joint (posture wraps)
    double kinematic_margin = 0.0;
    std::vector<ServoLinearRow> linear_rows;
    std::vector<ServoQuadrantRow> quadrant_rows;
    /// "" when consistent, else what is wrong
    std::string check() const;
    /// The servo's view of a Chain (its compiled layout, limits, margin and constraints).
    static ServoChain from_chain(const Chain& chain);
    /// A Chain with this compiled layout (every axis already z), for FK and the Jacobian: its
    /// compile step reproduces the canonical data exactly.
    Chain kinematics() const;
};

/// The built-in per-cycle solvers (called directly, no virtual dispatch).
enum class ServoSolverKind : int { DLS = 0, BOX_QP = 1 };
struct ServoSolver {
    ServoSolverKind kind = ServoSolverKind::DLS;
    double min_damping = 0.0;  // DLS: a floor on lambda
    int max_iterations = 100;  // BoxQP
    double tolerance = 1e-12;  // BoxQP
};

/// One cycle's answer. The reference is always finite, within limits and constraints.
struct ServoResult {
    Action action = Action::HOLD;
    std::uint32_t status = ServoStatus::NONE;
    std::string message;  // capacity reserved at construction
    int dof = 0;
    ServoVec q{};   // reference positions at the end of the cycle
    ServoVec dq{};  // reference velocities over the cycle
    double task_residual = 0.0;
    double nullspace_speed = 0.0;
    double condition_number = 1.0;
    double position_error = 0.0;
    double rotation_error = 0.0;
    int solver_iterations = 0;
};

namespace servo_detail {
struct Work;  // the fixed-size workspace (servo_work.hpp)
}

/// The servo. Typical use (see examples/planar2.cpp):
///
///   Servo servo(chain, config, solver);             // a Chain, or a ServoChain
///   const ServoResult& r = servo.step(state, ServoCommand::pose(T, now), dt, now);
///   if (r.action == Action::REJECT) ...;             // r.message says why
///   send(r.q, r.dq);
///
/// A binding that wants the Python servo's references to the last bit builds the ServoChain
/// from the Python chain's compiled arrays (Rs, ps, kinds, R_end, p_end) directly; a Chain
/// compiles its own canonical data, equal to them up to rounding.
class Servo {
public:
    /// A servo with a built-in solver. Throws std::invalid_argument for a bad chain or config.
    Servo(const ServoChain& chain, const ServoConfig& config = ServoConfig(),
          const ServoSolver& solver = ServoSolver());
    explicit Servo(const Chain& chain, const ServoConfig& config = ServoConfig(),
                   const ServoSolver& solver = ServoSolver());
    /// A servo with a custom solver and/or motion generator (either may be null; a null
    /// solver means the built-in one in `solver`). They must outlive the servo.
    Servo(const ServoChain& chain, const ServoConfig& config, const ServoSolver& solver,
          DifferentialIK* custom_solver, MotionGenerator* generator);
    ~Servo();
    Servo(const Servo&) = delete;
    Servo& operator=(const Servo&) = delete;

    /// One cycle. Never throws for bad input: it answers Action::REJECT. The result lives in
    /// the servo until the next call (copy what you keep); nothing is allocated.
    const ServoResult& step(const JointState& state, const ServoCommand& command, double dt,
                            std::int64_t now_ns);
    /// REJECT with `message` (for inputs a binding could not even read): a stop within the
    /// acceleration limits from `state` when usable, else from the last reference (a hold
    /// once stopped), else the state's finite positions or the middle of the limits, at rest.
    /// As the Python servo: `state` null is "no JointState at all"; a state that is there but
    /// unusable (wrong shapes: pass NaN positions) appends "; the state is unusable: holding
    /// the last safe reference" once a reference exists. dt outside (0, max_dt] (NaN too)
    /// brakes over the previous cycle's dt. The result lives until the next call.
    const ServoResult& reject(const JointState* state, const char* message, double dt);
    /// Clear a latched SOLVER_ERROR and forget timing history.
    void reset();
    bool faulted() const { return !fault_.empty(); }
    const std::string& fault_message() const { return fault_; }
    int dof() const { return n_; }
    const ServoConfig& config() const { return cfg_; }
    const ServoResult& last_result() const { return result_; }

private:
    void init(const ServoChain& chain, const ServoConfig& config, const ServoSolver& solver);
    const ServoResult& reject_at(double dt, const JointState* state);
    bool cycle(const double* dq, const double* a_prev, bool use_jerk, double dt, int mode,
               const ServoCommand& cmd, int prev_flags, int* flags, bool* moving);
    bool builtin_solve(int* iterations);
    void general_cycle(const double* dq, const double* a_prev, bool use_jerk, double dt, int mode,
                       const ServoCommand& cmd, int prev_flags, int* flags, bool* moving);
    void latch(const char* reason);
    void solver_failure_reason();
    void fault_cycle(const double* dq, const double* a_prev, bool use_jerk, double dt, int* flags,
                     bool* moving);
    void compose_message(int flags, bool moving);

    int n_ = 0;
    int m_ = 0;
    ServoConfig cfg_;
    ServoSolver solver_;
    DifferentialIK* custom_ = nullptr;
    MotionGenerator* generator_ = nullptr;
    std::vector<std::string> joint_names_;
    std::vector<std::string> row_names_;
    std::string solver_name_;
    std::unique_ptr<Chain> kin_;  // the kinematics (built from the canonical data)
    std::unique_ptr<servo_detail::Work> w_;
    std::string fault_;
    std::string scratch_;  // message building
    ServoResult result_;
    bool has_last_now_ = false, has_last_stamp_ = false;
    std::int64_t last_now_ = 0, last_stamp_ = 0;
    bool has_last_ref_ = false;
};

}  // namespace ikstack
