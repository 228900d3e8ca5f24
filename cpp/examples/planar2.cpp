// The servo's planar two-link example in C++: servo the tool of a 2-link planar arm (two 0.5 m
// links, acceleration limits 3 rad/s^2) to a position target with the BoxQP solver, feeding
// each reference back as the next state, until the servo answers HOLD.
//
// The C++ twin of the published Python example (ikstack's Servo, ServoConfig(task_axes=(0, 1),
// max_linear_speed=0.5), BoxQPSolver()). Exits 0 when the target is reached within 1.1e-4 m.
#include <cmath>
#include <cstdio>

#include "ikstack/chain.hpp"
#include "ikstack/servo.hpp"

int main() {
    using namespace ikstack;
    // the arm: joint 1 at the base, joint 2 at the end of link 1, the tool at the end of link 2
    std::vector<Joint> joints(2);
    for (int i = 0; i < 2; ++i) {
        Joint& j = joints[static_cast<size_t>(i)];
        j.name = "joint" + std::to_string(i + 1);
        j.lower = -3.0;
        j.upper = 3.0;
        j.velocity = 2.0;
        j.acceleration = 3.0;
    }
    joints[1].origin = translation(0.5, 0.0, 0.0);
    ChainInfo info;
    info.name = "planar2";
    info.tip = "tool";
    const Chain model(joints, translation(0.5, 0.0, 0.0), Mat4{}, {}, {}, info);

    ServoConfig config;
    const int axes[] = {0, 1};
    config.set_task_axes(axes, 2);
    config.max_linear_speed = 0.5;
    ServoSolver solver;
    solver.kind = ServoSolverKind::BOX_QP;
    Servo servo(model, config, solver);

    JointState state;
    state.q[0] = 0.5;
    state.q[1] = -1.0;
    VecN goal_q(2);
    goal_q[0] = 0.7;
    goal_q[1] = -0.7;
    Mat4 target;
    model.fk(goal_q, target);
    const ServoResult* result = nullptr;
    for (int tick = 0; tick < 1200; ++tick) {
        const std::int64_t now = static_cast<std::int64_t>(tick) * 10000000;
        state.stamp_ns = now;
        result = &servo.step(state, ServoCommand::pose(target.data(), now), 0.01, now);
        if (result->action == Action::REJECT) {
            std::fprintf(stderr, "rejected: %s\n", result->message.c_str());
            return 1;
        }
        state.q = result->q;
        state.dq = result->dq;
    }
    // checked with plain planar forward kinematics, not the library's
    const double q0 = state.q[0], q1 = state.q[1];
    const double x = 0.5 * std::cos(q0) + 0.5 * std::cos(q0 + q1);
    const double y = 0.5 * std::sin(q0) + 0.5 * std::sin(q0 + q1);
    const double err = std::hypot(x - target(0, 3), y - target(1, 3));
    std::printf("action %s, status %u, \"%s\"; tool error %.2e m\n",
                result->action == Action::HOLD ? "HOLD" : "TRACK", result->status,
                result->message.c_str(), err);
    if (result->action != Action::HOLD || !(err < 1.1e-4)) {
        std::fprintf(stderr, "the planar arm did not reach its target\n");
        return 1;
    }
    std::printf("QP pose target reached\n");
    return 0;
}
