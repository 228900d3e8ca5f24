// Servo step latency in C++ alone (no Python): the loop of the Python bench_servo.py.
//
// Panda (Franka's acceleration limits) tracks a pose target on a 5 cm circle at 0.2 Hz at
// 1 kHz, with the built-in DLS and BoxQP solvers; marvin_left the same circle inside its
// J6/J7 diamond, and a pose beyond it that the constraint holds back (the median over the
// cycles in which it bound). One step is Servo::step (FK, Jacobian, SVD, bounds, the solver,
// singularity scaling, coupled constraints, integration, checks). Prints a markdown table.
//
//   bench_servo_cpp [steps=100000] [chain directory]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ikstack/chain.hpp"
#include "ikstack/servo.hpp"

#ifndef IKSTACK_CHAIN_DIR
#define IKSTACK_CHAIN_DIR "."
#endif

namespace {

struct Stats {
    double median, p99, mean, max;
    long samples;
};

Stats stats(std::vector<double> us) {
    std::sort(us.begin(), us.end());
    Stats s{};
    s.samples = static_cast<long>(us.size());
    if (us.empty()) return s;
    s.median = us[us.size() / 2];
    s.p99 = us[std::min(us.size() - 1, static_cast<size_t>(0.99 * static_cast<double>(us.size())))];
    double sum = 0.0;
    for (double x : us) sum += x;
    s.mean = sum / static_cast<double>(us.size());
    s.max = us.back();
    return s;
}

void circle(const ikstack::Mat4& T0, long k, double dt, double* T) {
    const double a = 2 * M_PI * 0.2 * static_cast<double>(k) * dt;
    for (int i = 0; i < 16; ++i) T[i] = T0.data()[i];
    T[3] += 0.05 * (std::cos(a) - 1.0);
    T[7] += 0.05 * std::sin(a);
    T[11] += 0.05 * 0.3 * std::sin(2 * a);
}

Stats run(const ikstack::Chain& chain, ikstack::ServoChain sc, ikstack::ServoSolverKind kind,
          const ikstack::VecN& q0, const ikstack::VecN* beyond, long steps, double* bound_frac,
          double* err) {
    ikstack::ServoSolver solver;
    solver.kind = kind;
    ikstack::Servo servo(sc, ikstack::ServoConfig(), solver);
    const int n = sc.dof;
    const double dt = 0.001;
    ikstack::Mat4 T0, Tb;
    chain.fk(q0, T0);
    if (beyond) chain.fk(*beyond, Tb);
    ikstack::JointState st;
    for (int i = 0; i < n; ++i) st.q[static_cast<size_t>(i)] = q0[i];
    ikstack::ServoCommand cmd = ikstack::ServoCommand::pose(T0.data(), 0);
    std::vector<double> us;
    us.reserve(static_cast<size_t>(steps));
    long bound = 0;
    const long warmup = steps / 20;
    for (long k = 0; k < steps; ++k) {
        const std::int64_t now = (k + 1) * 1000000;
        if (beyond)
            for (int i = 0; i < 16; ++i) cmd.T[static_cast<size_t>(i)] = Tb.data()[i];
        else
            circle(T0, k, dt, cmd.T.data());
        cmd.stamp_ns = now;
        st.stamp_ns = now;
        const auto t0 = std::chrono::steady_clock::now();
        const ikstack::ServoResult& r = servo.step(st, cmd, dt, now);
        const auto t1 = std::chrono::steady_clock::now();
        const bool b = (r.status & ikstack::ServoStatus::COUPLED_BOUND) != 0;
        if (k >= warmup && (!beyond || b))
            us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        bound += k >= warmup && b;
        st.q = r.q;
        st.dq = r.dq;
    }
    *bound_frac = static_cast<double>(bound) / static_cast<double>(steps - warmup);
    ikstack::VecN q(n);
    for (int i = 0; i < n; ++i) q[i] = st.q[static_cast<size_t>(i)];
    ikstack::Mat4 T;
    chain.fk(q, T);
    double e2 = 0.0;
    for (int i = 0; i < 3; ++i) {
        const double d = T(i, 3) - cmd.T[static_cast<size_t>(i * 4 + 3)];
        e2 += d * d;
    }
    *err = std::sqrt(e2);
    return stats(us);
}

}  // namespace

int main(int argc, char** argv) {
    const long steps = argc > 1 ? std::atol(argv[1]) : 100000;
    const std::string dir = argc > 2 ? argv[2] : IKSTACK_CHAIN_DIR;
    ikstack::Chain panda = ikstack::Chain::from_file(dir + "/panda.chain");
    ikstack::ServoChain ps = ikstack::ServoChain::from_chain(panda);
    const double acc[] = {15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0};
    for (int i = 0; i < 7; ++i) ps.acceleration[static_cast<size_t>(i)] = acc[i];
    ikstack::Chain marvin = ikstack::Chain::from_file(dir + "/marvin_left.chain");
    ikstack::ServoChain ms = ikstack::ServoChain::from_chain(marvin);
    ikstack::VecN pq(7), mq(7), mb(7);
    const double p0[] = {0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.785};
    const double m0[] = {0.0, 30.0, 0.0, -60.0, 0.0, 40.0, 50.0};
    for (int i = 0; i < 7; ++i) {
        pq[i] = p0[i];
        mq[i] = m0[i] * M_PI / 180.0;
        mb[i] = mq[i];
    }
    mb[6] = 85.0 * M_PI / 180.0;  // 41 + 85 = 126 deg against 110.5
    std::printf(
        "| C++ servo step, %ld steps | median [us] | p99 [us] | mean [us] | max [us] | "
        "samples | note |\n|---|---|---|---|---|---|---|\n",
        steps);
    struct Case {
        const char* name;
        const ikstack::Chain* chain;
        const ikstack::ServoChain* sc;
        ikstack::ServoSolverKind kind;
        const ikstack::VecN* q0;
        const ikstack::VecN* beyond;
    } cases[] = {
        {"Panda DLS", &panda, &ps, ikstack::ServoSolverKind::DLS, &pq, nullptr},
        {"Panda BoxQP", &panda, &ps, ikstack::ServoSolverKind::BOX_QP, &pq, nullptr},
        {"marvin_left DLS, circle", &marvin, &ms, ikstack::ServoSolverKind::DLS, &mq, nullptr},
        {"marvin_left BoxQP, circle", &marvin, &ms, ikstack::ServoSolverKind::BOX_QP, &mq, nullptr},
        {"marvin_left DLS, held at J6/J7", &marvin, &ms, ikstack::ServoSolverKind::DLS, &mq, &mb},
        {"marvin_left BoxQP, held at J6/J7", &marvin, &ms, ikstack::ServoSolverKind::BOX_QP, &mq,
         &mb},
    };
    for (const Case& c : cases) {
        double frac = 0.0, err = 0.0;
        Stats s = run(*c.chain, *c.sc, c.kind, *c.q0, c.beyond, steps, &frac, &err);
        char note[96];
        if (c.beyond)
            std::snprintf(note, sizeof(note), "constraint bound %.0f%% of cycles", 100.0 * frac);
        else
            std::snprintf(note, sizeof(note), "final tracking error %.1e m", err);
        std::printf("| %s | %.2f | %.2f | %.2f | %.1f | %ld | %s |\n", c.name, s.median, s.p99,
                    s.mean, s.max, s.samples, note);
    }
    return 0;
}
