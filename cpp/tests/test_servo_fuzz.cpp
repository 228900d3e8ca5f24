// Fuzz the servo: every reference, on every cycle, inside every limit and coupled constraint.
//
// Closed-loop episodes on marvin_left, panda (with acceleration and jerk limits) and ur5, with
// the built-in DLS and BoxQP solvers and a faulty custom solver (throws, NaN, wrong sizes,
// huge steps, and otherwise a step that ignores the velocity box), drive the servo with random
// joint jogs, twists and pose jumps, stale and future command stamps, missing commands,
// resets while moving, unusable (NaN) states and fresh at-rest states inside the
// kinematic-margin band or against the J6/J7 diamond. The measured state is the previous
// reference unless an event replaces it.
//
// The checker shares no code with the servo: it reads the chain's limits and writes the
// Marvin J6/J7 interference out by hand, and counts references that are non-finite, outside a
// position limit or the constraint, above a velocity limit, that change velocity faster than
// the acceleration limit from the measured state (from the previous reference when the state
// is unusable), or whose position jumps (differs from the measured position plus the
// reference velocity times dt by more than 1e-6). Every count must be 0.
//
// IKSTACK_SERVO_FUZZ_CYCLES sets the total (default 90,000; the full run is 10^6).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>

#include "fixture.hpp"
#include "ikstack/chain.hpp"
#include "ikstack/diffik.hpp"
#include "ikstack/servo.hpp"

namespace {

constexpr double TOL = 1e-9;
const double kDiamond = 110.5 * M_PI / 180.0;

struct Counts {
    long cycles = 0, nonfinite = 0, position = 0, constraint = 0, velocity = 0, acceleration = 0,
         jump = 0;
    long resets = 0, nan_states = 0, new_states = 0, future = 0, stale = 0, rejects = 0,
         coupled = 0, solver_errors = 0;
    double worst_accel_ratio = 0.0, worst_constraint = -1e300;
};

/// a misbehaving custom solver
class FaultySolver : public ikstack::DifferentialIK {
public:
    explicit FaultySolver(std::mt19937_64& rng) : rng_(rng) {}
    ikstack::DiffIKResult solve(const ikstack::DiffIKRequest& req, ikstack::VecN& dq) override {
        const int n = req.q.size();
        std::uniform_real_distribution<double> u01(0.0, 1.0);
        const double u = u01(rng_);
        if (u < 0.002) throw std::runtime_error("faulty solver raised");
        if (u < 0.004) {
            dq.resize(n, NAN);
            return ikstack::DiffIKResult();
        }
        if (u < 0.006) {
            dq.resize(n + 1, 0.0);
            return ikstack::DiffIKResult();
        }
        if (u < 0.05) {
            std::normal_distribution<double> big(0.0, 1e3);
            dq.resize(n);
            for (int i = 0; i < n; ++i) dq[i] = big(rng_);
            return ikstack::DiffIKResult();
        }
        ikstack::VecN lo(n, -INFINITY), hi(n, INFINITY), zero(n, 0.0);
        dq.resize(n);
        ikstack::DampedLeastSquares::solve_arrays(req.jacobian, req.task, zero, 1e-4, lo, hi, dq);
        return ikstack::DiffIKResult();
    }
    const char* name() const override { return "FaultySolver"; }

private:
    std::mt19937_64& rng_;
};

struct Robot {
    std::string name;
    ikstack::Chain chain;
    ikstack::ServoChain sc;
};

Robot load(const std::string& name) {
    ikstack::Chain chain = ikstack::Chain::from_file(fixture::path(name + ".chain"));
    ikstack::ServoChain sc = ikstack::ServoChain::from_chain(chain);
    if (name == "panda") {
        const double acc[] = {15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0};
        for (int i = 0; i < 7; ++i) {
            sc.acceleration[static_cast<size_t>(i)] = acc[i];
            sc.jerk[static_cast<size_t>(i)] = 500.0 * acc[i];
        }
    } else if (name == "ur5") {
        for (auto& a : sc.acceleration) a = 15.0;
    }
    return Robot{name, chain, sc};
}

double diamond(const ikstack::ServoVec& q) {
    return std::fabs(q[6]) + 1.025 * std::fabs(q[5]) - kDiamond;
}

ikstack::ServoVec random_legal_state(const Robot& r, std::mt19937_64& rng, bool band) {
    const auto& c = r.sc;
    const int n = c.dof;
    const double km = c.kinematic_margin;
    std::uniform_real_distribution<double> u01(0.0, 1.0);
    const bool marvin = r.name.rfind("marvin", 0) == 0;
    ikstack::ServoVec q{};
    for (int attempt = 0; attempt < 1000; ++attempt) {
        for (int i = 0; i < n; ++i) {
            const double lo = c.lower[static_cast<size_t>(i)] + km,
                         hi = c.upper[static_cast<size_t>(i)] - km;
            q[static_cast<size_t>(i)] = lo + (hi - lo) * u01(rng);
        }
        if (band) {
            const int j = static_cast<int>(u01(rng) * n);
            const double d = km > 0 ? km * u01(rng) : 0.02 * u01(rng);
            q[static_cast<size_t>(j)] = u01(rng) < 0.5 ? c.upper[static_cast<size_t>(j)] - d
                                                       : c.lower[static_cast<size_t>(j)] + d;
            if (marvin && u01(rng) < 0.5) {
                const double b = kDiamond - 2 * km * u01(rng);
                const double lim = std::min(c.upper[5], b / 1.025);
                const double q6 = -lim + 2 * lim * u01(rng);
                double q7 = (u01(rng) < 0.5 ? -1.0 : 1.0) * (b - 1.025 * std::fabs(q6));
                q7 = std::min(std::max(q7, c.lower[6]), c.upper[6]);
                q[5] = q6;
                q[6] = q7;
            }
        }
        if (!marvin || diamond(q) <= 0.0) return q;
    }
    for (int i = 0; i < n; ++i)
        q[static_cast<size_t>(i)] =
            0.5 * (c.lower[static_cast<size_t>(i)] + c.upper[static_cast<size_t>(i)]);
    return q;
}

void check(const Robot& r, const ikstack::ServoVec& qb, const ikstack::ServoVec& vb,
           const ikstack::ServoResult& res, double dt, Counts& k) {
    const auto& c = r.sc;
    const int n = c.dof;
    bool finite = true;
    for (int i = 0; i < n; ++i)
        finite = finite && std::isfinite(res.q[static_cast<size_t>(i)]) &&
                 std::isfinite(res.dq[static_cast<size_t>(i)]);
    k.cycles += 1;
    if (!finite) {
        k.nonfinite += 1;
        return;
    }
    bool pos = false, vel = false, acc = false, jump = false;
    for (int i = 0; i < n; ++i) {
        const size_t s = static_cast<size_t>(i);
        const double q = res.q[s], v = res.dq[s];
        if (q < c.lower[s] - TOL || q > c.upper[s] + TOL) pos = true;
        if (std::fabs(v) > c.velocity[s] * (1 + TOL) + TOL) vel = true;
        const double dv = std::fabs(v - vb[s]);
        if (dv > c.acceleration[s] * dt * (1 + 1e-9) + TOL) acc = true;
        k.worst_accel_ratio = std::max(k.worst_accel_ratio, dv / (c.acceleration[s] * dt));
        if (std::fabs(q - qb[s] - v * dt) > 1e-6) jump = true;
    }
    k.position += pos;
    k.velocity += vel;
    k.acceleration += acc;
    k.jump += jump;
    if (r.name.rfind("marvin", 0) == 0) {
        const double g = diamond(res.q);
        k.worst_constraint = std::max(k.worst_constraint, g);
        k.constraint += g > TOL;
    }
}

void episode(const Robot& r, int solver_kind, int cycles, std::mt19937_64& rng, Counts& k) {
    std::uniform_real_distribution<double> u01(0.0, 1.0);
    std::normal_distribution<double> nrm(0.0, 1.0);
    const double dts[] = {0.001, 0.004, 0.01};
    const double dt = dts[static_cast<int>(u01(rng) * 3) % 3];
    const std::int64_t dt_ns = static_cast<std::int64_t>(std::llround(dt * 1e9));
    ikstack::ServoConfig cfg;
    ikstack::ServoSolver builtin;
    builtin.kind =
        solver_kind == 1 ? ikstack::ServoSolverKind::BOX_QP : ikstack::ServoSolverKind::DLS;
    FaultySolver faulty(rng);
    ikstack::Servo servo(r.sc, cfg, builtin, solver_kind == 2 ? &faulty : nullptr, nullptr);
    const auto& c = r.sc;
    const int n = c.dof;
    const bool marvin = r.name.rfind("marvin", 0) == 0;
    ikstack::ServoVec q = random_legal_state(r, rng, u01(rng) < 0.3), dq{}, last_v{};
    std::int64_t now = static_cast<std::int64_t>(u01(rng) * 1e12);
    ikstack::ServoCommand cmd;
    std::int64_t cmd_stamp = now;
    for (int step = 0; step < cycles; ++step) {
        now += dt_ns;
        const double u = u01(rng);
        if (u < 0.03 || (cmd.type == ikstack::CommandType::NONE && u < 0.2)) {
            const int kind = static_cast<int>(u01(rng) * 5);
            cmd_stamp = now;
            cmd = ikstack::ServoCommand();
            if (kind == 0) {
                cmd.type = ikstack::CommandType::JOINT_JOG;
                const bool on = u01(rng) < 0.5;
                for (int i = 0; i < n; ++i)
                    cmd.velocities[static_cast<size_t>(i)] =
                        on ? (-2 + 4 * u01(rng)) * c.velocity[static_cast<size_t>(i)] : 0.0;
                if (u01(rng) < 0.5) {
                    cmd.velocities.fill(0.0);
                    int j = static_cast<int>(u01(rng) * n);
                    if (marvin && u01(rng) < 0.7) {
                        j = u01(rng) < 0.5 ? 5 : 6;
                        cmd.velocities[static_cast<size_t>(11 - j)] =
                            (u01(rng) < 0.5 ? -1 : 1) * c.velocity[static_cast<size_t>(11 - j)] *
                            u01(rng);
                    }
                    cmd.velocities[static_cast<size_t>(j)] = (u01(rng) < 0.5 ? -1 : 1) *
                                                             c.velocity[static_cast<size_t>(j)] *
                                                             (0.2 + 1.8 * u01(rng));
                }
            } else if (kind == 1) {
                cmd.type = ikstack::CommandType::TWIST;
                for (int i = 0; i < 3; ++i) cmd.twist[static_cast<size_t>(i)] = 0.3 * nrm(rng);
                for (int i = 3; i < 6; ++i) cmd.twist[static_cast<size_t>(i)] = nrm(rng);
                cmd.frame = u01(rng) < 0.5 ? 0 : 1;
            } else if (kind == 2 || kind == 3) {
                ikstack::ServoVec target = random_legal_state(r, rng, false);
                if (kind == 3)
                    for (int i = 0; i < n; ++i) {
                        const size_t s = static_cast<size_t>(i);
                        target[s] =
                            std::min(std::max(q[s] + 0.1 * nrm(rng), c.lower[s]), c.upper[s]);
                    }
                ikstack::VecN tq(n);
                for (int i = 0; i < n; ++i) tq[i] = target[static_cast<size_t>(i)];
                ikstack::Mat4 T;
                r.chain.fk(tq, T);
                cmd.type = ikstack::CommandType::POSE;
                for (int i = 0; i < 16; ++i) cmd.T[static_cast<size_t>(i)] = T.data()[i];
            }
        }
        // events
        const double e = u01(rng);
        ikstack::JointState state;
        state.q = q;
        state.dq = dq;
        state.stamp_ns = now;
        if (e < 0.002) {
            servo.reset();
            k.resets += 1;
        } else if (e < 0.004 && step > 0) {
            state.q[static_cast<size_t>(u01(rng) * n)] = NAN;
            k.nan_states += 1;
        } else if (e < 0.009) {
            state.q = random_legal_state(r, rng, u01(rng) < 0.7);
            state.dq.fill(0.0);
            k.new_states += 1;
        }
        std::int64_t c_stamp = cmd_stamp;
        if (u01(rng) < 0.01) {
            c_stamp = now + 1 + static_cast<std::int64_t>(u01(rng) * 1e8);
            k.future += 1;
        } else if (u01(rng) < 0.01) {
            c_stamp = now - 100000000 - static_cast<std::int64_t>(u01(rng) * 9e8);
            k.stale += 1;
        }
        cmd.stamp_ns = c_stamp;
        const ikstack::ServoResult& res = servo.step(state, cmd, dt, now);
        bool usable = true;
        for (int i = 0; i < n; ++i)
            usable = usable && std::isfinite(state.q[static_cast<size_t>(i)]);
        check(r, usable ? state.q : q, usable ? state.dq : last_v, res, dt, k);
        k.rejects += res.action == ikstack::Action::REJECT;
        k.coupled += (res.status & ikstack::ServoStatus::COUPLED_BOUND) != 0;
        k.solver_errors += (res.status & ikstack::ServoStatus::SOLVER_ERROR) != 0;
        if (servo.faulted() && u01(rng) < 0.05) {
            servo.reset();
            k.resets += 1;
        }
        q = res.q;
        dq = res.dq;
        last_v = dq;
    }
}

}  // namespace

TEST_CASE("fuzzed servo references stay inside every limit and constraint") {
    long total = 90000;
    if (const char* env = std::getenv("IKSTACK_SERVO_FUZZ_CYCLES")) total = std::atol(env);
    const char* robots[] = {"marvin_left", "panda", "ur5"};
    const char* solvers[] = {"dls", "boxqp", "faulty"};
    std::mt19937_64 rng(14);
    Counts all;
    std::printf(
        "| robot | solver | cycles | nonfinite | position | constraint | velocity | "
        "acceleration | jump | coupled | reject | solver errors |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    const long share = total / 9;
    for (const char* name : robots) {
        Robot r = load(name);
        for (int s = 0; s < 3; ++s) {
            Counts k;
            long done = 0;
            while (done < share) {
                const int m = static_cast<int>(std::min<long>(400, share - done));
                episode(r, s, m, rng, k);
                done += m;
            }
            std::printf("| %s | %s | %ld | %ld | %ld | %ld | %ld | %ld | %ld | %ld | %ld | %ld |\n",
                        name, solvers[s], k.cycles, k.nonfinite, k.position, k.constraint,
                        k.velocity, k.acceleration, k.jump, k.coupled, k.rejects, k.solver_errors);
            all.cycles += k.cycles;
            all.nonfinite += k.nonfinite;
            all.position += k.position;
            all.constraint += k.constraint;
            all.velocity += k.velocity;
            all.acceleration += k.acceleration;
            all.jump += k.jump;
            all.resets += k.resets;
            all.nan_states += k.nan_states;
            all.new_states += k.new_states;
            all.future += k.future;
            all.stale += k.stale;
            all.rejects += k.rejects;
            all.coupled += k.coupled;
            all.solver_errors += k.solver_errors;
            all.worst_accel_ratio = std::max(all.worst_accel_ratio, k.worst_accel_ratio);
            all.worst_constraint = std::max(all.worst_constraint, k.worst_constraint);
        }
    }
    std::printf(
        "total %ld cycles; events: %ld resets, %ld NaN states, %ld at-rest states, %ld "
        "future and %ld stale stamps, %ld rejects, %ld constraint-binding cycles, %ld "
        "solver errors; worst acceleration use %.17g x the limit, closest approach to "
        "the diamond %.3g rad\n",
        all.cycles, all.resets, all.nan_states, all.new_states, all.future, all.stale, all.rejects,
        all.coupled, all.solver_errors, all.worst_accel_ratio, all.worst_constraint);
    CHECK(all.nonfinite == 0);
    CHECK(all.position == 0);
    CHECK(all.constraint == 0);
    CHECK(all.velocity == 0);
    CHECK(all.acceleration == 0);
    CHECK(all.jump == 0);
    CHECK(all.coupled > 0);
    CHECK(all.solver_errors > 0);
    CHECK(all.rejects > 0);
}
