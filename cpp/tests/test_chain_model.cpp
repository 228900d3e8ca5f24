// Chain construction: what it validates (each error names the joint or constraint), the
// coupled-constraint residuals and linearization against their definition.
#include <doctest/doctest.h>

#include <string>

#include "ikstack/chain.hpp"

using namespace ikstack;

namespace {

std::vector<Joint> joints(int n) {
    std::vector<Joint> out(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
        out[static_cast<size_t>(i)].name = "j" + std::to_string(i);
        out[static_cast<size_t>(i)].origin = translation(0.1, 0, 0);
        out[static_cast<size_t>(i)].lower = -1;
        out[static_cast<size_t>(i)].upper = 1;
    }
    return out;
}

std::string error_of(const std::vector<Joint>& js, std::vector<LinearConstraint> lin = {},
                     std::vector<QuadrantConstraint> quad = {}, ChainInfo info = {}) {
    try {
        Chain c(js, Mat4{}, Mat4{}, lin, quad, info);
    } catch (const ModelError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("up to kMaxDof joints; more is a ModelError") {
    CHECK(Chain(joints(kMaxDof), Mat4{}).dof() == kMaxDof);
    CHECK(error_of(joints(kMaxDof + 1)).find("at most 16") != std::string::npos);
    CHECK(error_of({}).find("at least one moving joint") != std::string::npos);
}

TEST_CASE("joint validation names the joint") {
    auto js = joints(3);
    js[2].name = "j0";
    CHECK(error_of(js).find("repeat: 'j0'") != std::string::npos);
    js = joints(3);
    js[1].axis = {0, 0, 0};
    CHECK(error_of(js).find("joint 'j1': the axis") != std::string::npos);
    js = joints(3);
    js[2].lower = 2;
    CHECK(error_of(js).find("joint 'j2': lower > upper") != std::string::npos);
    js = joints(3);
    js[0].velocity = 0;
    CHECK(error_of(js).find("joint 'j0': the velocity limit must be positive") != std::string::npos);
    js = joints(3);
    js[1].jerk = NAN;
    CHECK(error_of(js).find("joint 'j1': the jerk limit") != std::string::npos);
    js = joints(3);
    js[1].origin(0, 3) = INFINITY;
    CHECK(error_of(js).find("joint 'j1': the origin must be finite") != std::string::npos);
    ChainInfo info;
    info.kinematic_margin = -0.1;
    CHECK(error_of(joints(2), {}, {}, info).find("kinematic_margin") != std::string::npos);
}

TEST_CASE("continuous joints are unbounded; axes are normalized; link names default") {
    auto js = joints(2);
    js[1].type = JointType::Continuous;
    js[0].axis = {0, 3, 4};
    const Chain c(js, Mat4{});
    CHECK(std::isinf(c.lower()[1]));
    CHECK(std::isinf(c.upper()[1]));
    CHECK(c.joint(0).axis[1] == doctest::Approx(0.6));
    CHECK(c.joint(0).link == "link1");
    CHECK(c.is_continuous(1));
    CHECK(c.joint_index("j1") == 1);
    CHECK(c.joint_index("nope") == -1);
}

TEST_CASE("constraint validation names the constraint") {
    LinearConstraint lin;
    lin.name = "row";
    lin.rows = 1;
    lin.A = {1, 2};
    lin.b = {1};
    CHECK(error_of(joints(3), {lin}).find("constraint 'row'") != std::string::npos);
    QuadrantConstraint q = QuadrantConstraint::abs_sum(0, 5, 1.0, 1.0, "quad");
    CHECK(error_of(joints(3), {}, {q}).find("constraint 'quad' refers to joint index 5") != std::string::npos);
    q = QuadrantConstraint::abs_sum(1, 1, 1.0, 1.0, "self");
    CHECK(error_of(joints(3), {}, {q}).find("with itself") != std::string::npos);
    q = QuadrantConstraint::abs_sum(0, 1, 1.0, 1.0, "gap");
    q.rows[3] = q.rows[0];
    CHECK(error_of(joints(3), {}, {q}).find("one row per sign quadrant") != std::string::npos);
}

TEST_CASE("the abs-sum diamond: residual and linearization follow |q_j| + s |q_i| <= b") {
    const double slope = 1.025, bound = 1.9;
    const QuadrantConstraint c = QuadrantConstraint::abs_sum(0, 1, slope, bound);
    double q[2];
    for (double qi : {-1.0, -0.2, 0.0, 0.3, 1.1})
        for (double qj : {-1.5, -0.1, 0.0, 0.4, 2.0}) {
            q[0] = qi;
            q[1] = qj;
            CHECK(c.residual(q) == doctest::Approx(std::abs(qj) + slope * std::abs(qi) - bound));
            double g, di, dj;
            c.linearize(q, g, di, dj);
            CHECK(g == doctest::Approx(c.residual(q)));
            // away from the axes the gradient is the one of |q_j| + s |q_i|
            if (qi != 0.0 && qj != 0.0) {
                CHECK(di == doctest::Approx(slope * (qi > 0 ? 1 : -1)));
                CHECK(dj == doctest::Approx(qj > 0 ? 1 : -1));
            }
        }
}

TEST_CASE("chain limits and linear constraints") {
    LinearConstraint lin;
    lin.name = "sum";
    lin.rows = 1;
    lin.A = {1, 1};
    lin.b = {0.5};
    const Chain c(joints(2), Mat4{}, Mat4{}, {lin});
    VecN q(2);
    q[0] = 0.2;
    q[1] = 0.2;
    CHECK(c.within_limits(q));
    CHECK(c.constraints_satisfied(q, 0.05));
    CHECK_FALSE(c.constraints_satisfied(q, 0.2));
    CHECK(c.constraint_residual_max(q) == doctest::Approx(-0.1));
    q[0] = 1.01;
    CHECK_FALSE(c.within_limits(q));
    CHECK(c.within_limits(q, 0.02));
    CHECK_FALSE(c.within_limits(q, 0.02, 0.05));
}
