// The servo's step() allocates nothing after construction: 10,000 cycles per servo (pose,
// twist, jog and missing commands, stale and future stamps, NaN states and bad dt (REJECT
// with messages), latched solver faults, resets, a coupled constraint binding) counted by
// replacing the global operator new.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>
#include <random>

#include "fixture.hpp"
#include "ikstack/chain.hpp"
#include "ikstack/diffik.hpp"
#include "ikstack/motion.hpp"
#include "ikstack/servo.hpp"

namespace {
std::atomic<long> g_news{0};
long g_rejects = 0, g_faults = 0, g_stale = 0, g_coupled = 0, g_tracks = 0;
}  // namespace

void* operator new(std::size_t n) {
    g_news.fetch_add(1);
    if (void* p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
    g_news.fetch_add(1);
    if (void* p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
    std::free(p);
}
void operator delete[](void* p) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
    std::free(p);
}

namespace {

long run(const std::string& robot, ikstack::ServoSolver solver, bool secondary, int cycles,
         ikstack::DifferentialIK* custom = nullptr, ikstack::MotionGenerator* gen = nullptr) {
    ikstack::Chain chain = ikstack::Chain::from_file(fixture::path(robot + ".chain"));
    ikstack::ServoChain sc = ikstack::ServoChain::from_chain(chain);
    for (auto& a : sc.acceleration)
        if (!std::isfinite(a)) a = 10.0;
    for (auto& j : sc.jerk) j = 5000.0;
    ikstack::ServoConfig cfg;
    if (secondary) {
        cfg.nullspace_gain = 0.5;
        cfg.has_nullspace_reference = true;
        for (int i = 0; i < sc.dof; ++i)
            cfg.nullspace_reference[static_cast<size_t>(i)] =
                0.5 * (sc.lower[static_cast<size_t>(i)] + sc.upper[static_cast<size_t>(i)]);
        cfg.joint_centering_gain = 0.2;
        cfg.smoothing = 0.2;
    }
    ikstack::Servo servo(sc, cfg, solver, custom, gen);
    const int n = sc.dof;
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u01(0.0, 1.0);
    ikstack::JointState state;
    for (int i = 0; i < n; ++i)
        state.q[static_cast<size_t>(i)] =
            0.5 * (sc.lower[static_cast<size_t>(i)] + sc.upper[static_cast<size_t>(i)]);
    ikstack::VecN q0(n);
    for (int i = 0; i < n; ++i) q0[i] = state.q[static_cast<size_t>(i)] + 0.3;
    ikstack::Mat4 T;
    chain.fk(q0, T);
    ikstack::ServoCommand pose = ikstack::ServoCommand::pose(T.data(), 0);
    const double tw[6] = {0.1, -0.2, 0.05, 0.3, 0.0, -0.4};
    ikstack::ServoCommand twist =
        ikstack::ServoCommand::twist_cmd(tw, ikstack::TwistFrame::TOOL, 0);
    double v[ikstack::kServoMaxDof] = {};
    for (int i = 0; i < n; ++i) v[i] = (i % 2 ? -0.5 : 0.5) * sc.velocity[static_cast<size_t>(i)];
    ikstack::ServoCommand jog = ikstack::ServoCommand::jog(v, n, 0);
    ikstack::ServoCommand none;
    std::int64_t now = 1000000000;
    const double dt = 0.004;
    long news = 0;
    for (int k = 0; k < cycles; ++k) {
        now += 4000000;
        const int phase = (k / 500) % 4;
        ikstack::ServoCommand& cmd = phase == 0   ? pose
                                     : phase == 1 ? twist
                                     : phase == 2 ? jog
                                                  : none;
        cmd.stamp_ns = u01(rng) < 0.02 ? now - 500000000 : now;
        if (u01(rng) < 0.01) cmd.stamp_ns = now + 1000;
        ikstack::JointState s = state;
        s.stamp_ns = now;
        if (u01(rng) < 0.01) s.q[0] = NAN;
        double step_dt = u01(rng) < 0.005 ? -1.0 : dt;
        const long before = g_news.load();
        const ikstack::ServoResult& r = servo.step(s, cmd, step_dt, now);
        if (u01(rng) < 0.003 || (servo.faulted() && u01(rng) < 0.05)) servo.reset();
        news += g_news.load() - before;
        g_rejects += r.action == ikstack::Action::REJECT;
        g_tracks += r.action == ikstack::Action::TRACK;
        g_faults += (r.status & ikstack::ServoStatus::SOLVER_ERROR) != 0;
        g_stale += (r.status & ikstack::ServoStatus::STALE_COMMAND) != 0;
        g_coupled += (r.status & ikstack::ServoStatus::COUPLED_BOUND) != 0;
        state.q = r.q;
        state.dq = r.dq;
    }
    return news;
}

}  // namespace

TEST_CASE("step() allocates nothing after construction") {
    ikstack::ServoSolver dls;
    ikstack::ServoSolver qp;
    qp.kind = ikstack::ServoSolverKind::BOX_QP;
    ikstack::ServoSolver capped = qp;
    capped.max_iterations = 2;  // fails whenever the box binds: latched faults and messages
    CHECK(run("panda", dls, false, 10000) == 0);
    CHECK(run("panda", qp, true, 10000) == 0);
    CHECK(run("panda", capped, false, 10000) == 0);
    CHECK(run("marvin_left", qp, true, 10000) == 0);
    CHECK(run("marvin_left", dls, false, 10000) == 0);
    // the general path: a user solver (called through solve(request)) and a motion generator
    ikstack::DampedLeastSquares user_solver;
    ikstack::BoxIntegrator generator;
    CHECK(run("marvin_left", dls, true, 10000, &user_solver, &generator) == 0);
    CHECK(run("panda", dls, false, 10000, &user_solver, nullptr) == 0);
    // the paths ran
    CHECK(g_rejects > 0);
    CHECK(g_tracks > 0);
    CHECK(g_faults > 0);
    CHECK(g_stale > 0);
    MESSAGE("rejects " << g_rejects << ", faults " << g_faults << ", stale " << g_stale
                       << ", coupled " << g_coupled << ", track " << g_tracks);
    // the counter works: a string that outgrows its buffer allocates
    const long before = g_news.load();
    std::string s(200, 'x');
    CHECK(g_news.load() > before);
}
