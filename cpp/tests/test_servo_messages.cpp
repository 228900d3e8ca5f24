// The servo's text matches the Python package's: float repr (expected strings printed by
// CPython's repr()), configuration errors (printed by the Python ServoConfig), and the
// reject() entry point a binding uses for inputs it cannot read.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "../src/servo_format.hpp"
#include "fixture.hpp"
#include "ikstack/chain.hpp"
#include "ikstack/servo.hpp"

TEST_CASE("float repr matches CPython's") {
    const struct {
        double x;
        const char* text;
    } cases[] = {
        {0.1, "0.1"},
        {1.0, "1.0"},
        {100.0, "100.0"},
        {1e-05, "1e-05"},
        {1.5e-07, "1.5e-07"},
        {1e+16, "1e+16"},
        {1000000000000000.0, "1000000000000000.0"},
        {1.2345678901234568e+17, "1.2345678901234568e+17"},
        {0.001, "0.001"},
        {0.0001, "0.0001"},
        {-0.0, "-0.0"},
        {2.5, "2.5"},
        {0.3333333333333333, "0.3333333333333333"},
        {0.00030000000000000003, "0.00030000000000000003"},
        {NAN, "nan"},
        {INFINITY, "inf"},
        {-INFINITY, "-inf"},
        {5e-324, "5e-324"},
        {1.7976931348623157e+308, "1.7976931348623157e+308"},
        {0.30000000000000004, "0.30000000000000004"},
        {123.456, "123.456"},
        {-2.0, "-2.0"},
    };
    for (const auto& c : cases) CHECK(ikstack::servo_detail::py_repr(c.x) == c.text);
}

TEST_CASE("configuration errors say what the Python ServoConfig says") {
    auto message = [](void (*edit)(ikstack::ServoConfig&)) {
        ikstack::ServoConfig c;
        edit(c);
        return c.check();
    };
    CHECK(message([](ikstack::ServoConfig& c) { c.smoothing = 1.0; }) ==
          "ServoConfig.smoothing must be in [0, 1); got 1.0");
    CHECK(message([](ikstack::ServoConfig& c) {
              const int a[] = {0, 0};
              c.set_task_axes(a, 2);
          }) == "task_axes must be distinct indices in 0..5; got (0, 0)");
    CHECK(message([](ikstack::ServoConfig& c) {
              const int a[] = {7};
              c.set_task_axes(a, 1);
          }) == "task_axes must be distinct indices in 0..5; got (7,)");
    CHECK(message([](ikstack::ServoConfig& c) { c.task_weights[5] = 0.0; }) ==
          "task_weights must be 6 positive numbers; got (1.0, 1.0, 1.0, 1.0, 1.0, 0.0)");
    CHECK(message([](ikstack::ServoConfig& c) { c.max_dt = 0.0; }) ==
          "ServoConfig.max_dt must be finite and > 0; got 0.0");
    CHECK(message([](ikstack::ServoConfig& c) { c.damping = -1.0; }) ==
          "ServoConfig.damping must be finite and >= 0; got -1.0");
    CHECK(message([](ikstack::ServoConfig& c) { c.singularity_halt = 10.0; }) ==
          "ServoConfig.singularity_halt must exceed singularity_decelerate; got 10.0 <= 17.0");
    CHECK(message([](ikstack::ServoConfig& c) { c.halt_scale = 1.0; }) ==
          "ServoConfig.halt_scale must be in [0, 1); got 1.0");
    CHECK(message([](ikstack::ServoConfig& c) { c.leaving_min_scale = 1.5; }) ==
          "ServoConfig.leaving_min_scale must be in [0, 1]; got 1.5");
    CHECK(message([](ikstack::ServoConfig& c) { c.command_timeout = INFINITY; }) ==
          "ServoConfig.command_timeout must be finite and > 0; got inf");
    CHECK(ikstack::ServoConfig().check().empty());
}

TEST_CASE("a servo refuses a bad configuration at construction") {
    const ikstack::Chain chain = ikstack::Chain::from_file(fixture::path("planar2.chain"));
    ikstack::ServoConfig c;
    c.smoothing = 1.0;
    CHECK_THROWS_WITH_AS(ikstack::Servo(ikstack::ServoChain::from_chain(chain), c),
                         "ServoConfig.smoothing must be in [0, 1); got 1.0", std::invalid_argument);
}

TEST_CASE("reject() for unreadable input: the middle of the limits, then the last reference") {
    const ikstack::Chain chain = ikstack::Chain::from_file(fixture::path("marvin_left.chain"));
    ikstack::Servo servo(ikstack::ServoChain::from_chain(chain));
    // nothing known yet: the reference is the middle of the limits (inside the constraint), at rest
    const ikstack::ServoResult& r0 =
        servo.reject(nullptr, "state must be a JointState; got NoneType", NAN);
    CHECK(r0.action == ikstack::Action::REJECT);
    CHECK(r0.status == ikstack::ServoStatus::INVALID_INPUT);
    CHECK(r0.message == "state must be a JointState; got NoneType");
    for (int i = 0; i < 7; ++i) {
        CHECK(r0.q[static_cast<size_t>(i)] ==
              doctest::Approx(0.5 * (chain.lower()[i] + chain.upper()[i])));
        CHECK(r0.dq[static_cast<size_t>(i)] == 0.0);
    }
    // one accepted cycle, moving; then an unusable state brakes from the last reference
    ikstack::JointState s;
    s.q[1] = 0.3;
    s.dq[1] = 0.5;
    s.stamp_ns = 1000;
    const double v[7] = {0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0};
    const ikstack::ServoResult& r1 =
        servo.step(s, ikstack::ServoCommand::jog(v, 7, 1000), 0.004, 1000);
    CHECK(r1.action == ikstack::Action::TRACK);
    const double q1 = r1.q[1], v1 = r1.dq[1];
    s.q[0] = NAN;
    const ikstack::ServoResult& r2 = servo.reject(&s, "state.q must be a (7,) array", 0.004);
    CHECK(r2.message ==
          "state.q must be a (7,) array; the state is unusable: holding the last safe reference");
    const double c = chain.acceleration_limits()[1] * 0.004;
    CHECK(r2.dq[1] == doctest::Approx(v1 - c));
    CHECK(r2.q[1] == doctest::Approx(q1 + (v1 - c) * 0.004));
}
