// Parity with the Python servo: the recorded 16,000-step sequence (fixtures/servo_parity.bin,
// written by fixtures/record_servo.py from the numba kernel) replayed through ikstack::Servo
// gives the same actions, status bits and messages, and references within 1e-12.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "ikstack/diffik.hpp"
#include "ikstack/motion.hpp"
#include "ikstack/servo.hpp"
#include "servo_fixture.hpp"

namespace {

/// DLS as a user solver (the servo's request path), as the recording's Python subclass
class SubclassDLS : public ikstack::DampedLeastSquares {
public:
    const char* name() const override { return "SubclassDLS"; }
};

bool close(double a, double b, double tol) {
    if (std::isinf(a) || std::isinf(b)) return a == b;
    return std::fabs(a - b) <= tol * (1.0 + std::fabs(a));
}

}  // namespace

TEST_CASE("the servo replays the Python servo's recorded sequence") {
    servo_fixture::Reader reader(std::string(IKSTACK_FIXTURES_DIR) + "/servo_parity.bin");
    auto scenarios = reader.read_all();
    REQUIRE(scenarios.size() == 11);
    long total = 0, bad_action = 0, bad_status = 0, bad_message = 0, bad_diag = 0, exact = 0;
    double worst_q = 0.0, worst_dq = 0.0;
    std::printf(
        "| scenario | steps | max abs q diff | max abs dq diff | bit-identical | "
        "action / status / message mismatches |\n|---|---|---|---|---|---|\n");
    for (auto& sc : scenarios) {
        SubclassDLS custom;
        ikstack::BoxIntegrator generator;
        ikstack::Servo servo(sc.chain, sc.config, sc.solver, sc.custom_solver ? &custom : nullptr,
                             sc.generator ? &generator : nullptr);
        const int n = sc.chain.dof;
        long s_exact = 0, s_act = 0, s_stat = 0, s_msg = 0;
        double s_q = 0.0, s_dq = 0.0;
        int shown = 0;
        for (size_t k = 0; k < sc.steps.size(); ++k) {
            const auto& st = sc.steps[k];
            if (st.flags & 1) servo.reset();
            const ikstack::ServoResult& r = servo.step(st.state, st.command, st.dt, st.now);
            bool same = true;
            for (int i = 0; i < n; ++i) {
                const double dqd = std::fabs(r.dq[i] - st.dq_ref[i]);
                const double qd = std::fabs(r.q[i] - st.q_ref[i]);
                s_q = std::max(s_q, qd);
                s_dq = std::max(s_dq, dqd);
                if (r.q[i] != st.q_ref[i] || r.dq[i] != st.dq_ref[i]) same = false;
            }
            s_exact += same;
            const bool act = static_cast<int>(r.action) == st.action;
            const bool stat = r.status == st.status;
            const bool msg = r.message == st.message;
            const double diag[5] = {r.task_residual, r.nullspace_speed, r.condition_number,
                                    r.position_error, r.rotation_error};
            bool dg = r.solver_iterations == st.iterations;
            for (int i = 0; i < 5; ++i) dg = dg && close(diag[i], st.diag[i], 1e-9);
            s_act += !act;
            s_stat += !stat;
            s_msg += !msg;
            bad_diag += !dg;
            if ((!act || !stat || !msg || !dg || !same) && shown < 3 &&
                (!act || !stat || !msg || !dg)) {
                ++shown;
                std::printf("  %s step %zu: action %d/%d status %u/%u\n    C++: %s\n    Py : %s\n",
                            sc.label.c_str(), k, static_cast<int>(r.action), st.action, r.status,
                            st.status, r.message.c_str(), st.message.c_str());
                for (int i = 0; i < 5; ++i)
                    if (!close(diag[i], st.diag[i], 1e-9))
                        std::printf("    diagnostic %d: %.17g / %.17g\n", i, diag[i], st.diag[i]);
                if (r.solver_iterations != st.iterations)
                    std::printf("    iterations: %d / %d\n", r.solver_iterations, st.iterations);
            }
        }
        std::printf("| %s | %zu | %.3g | %.3g | %ld | %ld / %ld / %ld |\n", sc.label.c_str(),
                    sc.steps.size(), s_q, s_dq, s_exact, s_act, s_stat, s_msg);
        total += static_cast<long>(sc.steps.size());
        exact += s_exact;
        bad_action += s_act;
        bad_status += s_stat;
        bad_message += s_msg;
        worst_q = std::max(worst_q, s_q);
        worst_dq = std::max(worst_dq, s_dq);
    }
    std::printf("| all | %ld | %.3g | %.3g | %ld | %ld / %ld / %ld |\n", total, worst_q, worst_dq,
                exact, bad_action, bad_status, bad_message);
    std::printf(
        "diagnostics (residual, nullspace speed, condition, errors, iterations) "
        "mismatches: %ld\n",
        bad_diag);
    CHECK(total == 16000);
    CHECK(bad_action == 0);
    CHECK(bad_status == 0);
    CHECK(bad_message == 0);
    CHECK(bad_diag == 0);
    CHECK(worst_q <= 1e-12);
    CHECK(worst_dq <= 1e-12);
}

TEST_CASE("a chain read from its description file replays the recording just the same") {
    // Chain::from_file -> ServoChain::from_chain: what a C++ user does. The recording's Panda
    // has Franka's acceleration and jerk limits, which the file does not carry.
    servo_fixture::Reader reader(std::string(IKSTACK_FIXTURES_DIR) + "/servo_parity.bin");
    auto scenarios = reader.read_all();
    long total = 0, exact = 0, mismatched = 0;
    for (auto& sc : scenarios) {
        const std::string robot = sc.label.substr(0, sc.label.find(' '));
        ikstack::ServoChain c = ikstack::ServoChain::from_chain(
            ikstack::Chain::from_file(std::string(IKSTACK_FIXTURES_DIR) + "/" + robot + ".chain"));
        const ikstack::ServoChain& rec = sc.chain;
        CHECK(c.joint_names == rec.joint_names);
        CHECK(c.Rs == rec.Rs);  // the compiled layout, bit for bit
        CHECK(c.ps == rec.ps);
        CHECK(c.kinds == rec.kinds);
        CHECK(c.R_end == rec.R_end);
        CHECK(c.p_end == rec.p_end);
        CHECK(c.lower == rec.lower);
        CHECK(c.upper == rec.upper);
        CHECK(c.velocity == rec.velocity);
        CHECK(c.continuous == rec.continuous);
        CHECK(c.kinematic_margin == rec.kinematic_margin);
        REQUIRE(c.quadrant_rows.size() == rec.quadrant_rows.size());
        for (size_t r = 0; r < c.quadrant_rows.size(); ++r) {
            CHECK(c.quadrant_rows[r].table == rec.quadrant_rows[r].table);
            CHECK(c.quadrant_rows[r].name == rec.quadrant_rows[r].name);
        }
        CHECK(c.linear_rows.size() == rec.linear_rows.size());
        c.acceleration = rec.acceleration;
        c.jerk = rec.jerk;
        SubclassDLS custom;
        ikstack::BoxIntegrator generator;
        ikstack::Servo servo(c, sc.config, sc.solver, sc.custom_solver ? &custom : nullptr,
                             sc.generator ? &generator : nullptr);
        for (const auto& st : sc.steps) {
            if (st.flags & 1) servo.reset();
            const ikstack::ServoResult& r = servo.step(st.state, st.command, st.dt, st.now);
            bool same = true;
            for (int i = 0; i < c.dof; ++i)
                same = same && r.q[i] == st.q_ref[i] && r.dq[i] == st.dq_ref[i];
            exact += same;
            mismatched += static_cast<int>(r.action) != st.action || r.status != st.status ||
                          r.message != st.message;
            ++total;
        }
    }
    std::printf(
        "chain files: %ld of %ld references bit-identical, %ld action/status/message "
        "mismatches\n",
        exact, total, mismatched);
    CHECK(total == 16000);
    CHECK(exact == total);
    CHECK(mismatched == 0);
}
