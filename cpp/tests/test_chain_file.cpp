// The chain-file reader: files written by Python read back and re-written byte for byte;
// malformed files fail with the file, line and field named.
#include <doctest/doctest.h>

#include <cstdio>

#include "fixture.hpp"
#include "ikstack/chain.hpp"

using namespace ikstack;

namespace {

const char* const kFiles[] = {"planar2", "ur5",    "panda", "panda_hand", "iiwa14", "marvin_left",
                              "marvin_right_taccap", "scara", "rizon4", "arx_x5"};

const std::string kGood =
    "ikstack-chain 1\n"                                                           // 1
    "# a comment\n"                                                               // 2
    "name two links\n"                                                            // 3
    "base base\n"                                                                 // 4
    "tip tool\n"                                                                  // 5
    "role arm\n"                                                                  // 6
    "margin 0.01\n"                                                               // 7
    "joint j1 revolute l1 0 0 0 1 0 0 0 1 0 0 0 1 0 0 1 -3 3 2 3 inf\n"           // 8
    "joint j2 continuous l2 0.5 0 0 1 0 0 0 1 0 0 0 1 0 0 1 -inf inf 2 3 inf\n"   // 9
    "tip_transform 0.5 0 0 1 0 0 0 1 0 0 0 1\n"                                   // 10
    "tcp pen 0 0 0.1 1 0 0 0 1 0 0 0 1\n"                                         // 11
    "constraint linear sum 1 1 2.5\n"                                             // 12
    "constraint linear sum -1 -1 2.5\n"                                           // 13
    "constraint quadrant diamond 0 1 1 1 0 -1 2 1 0 1 0 1 2 1 0 0 0 -1 -2 0 1 0 0 1 -2 0 a diamond\n";  // 14

// kGood with line `no` (1-based) replaced by `text` ("" deletes it)
std::string with_line(int no, const std::string& text) {
    std::string out;
    size_t start = 0;
    for (int k = 1; start < kGood.size(); ++k) {
        const size_t end = kGood.find('\n', start);
        const std::string line = kGood.substr(start, end - start);
        if (k != no)
            out += line + "\n";
        else if (!text.empty())
            out += text + "\n";
        start = end + 1;
    }
    return out;
}

struct Bad {
    int line;             // the line to replace
    const char* text;     // its new text ("" deletes)
    int want_line;        // the line the error must name
    const char* field;    // the field it must name
    const char* says;     // a piece of the message
};

const Bad kBad[] = {
    {1, "ikstack-chian 1", 1, "header", "expected 'ikstack-chain 1'"},
    {1, "ikstack-chain 2", 1, "version", "unsupported version '2'"},
    {8, "joint j1 revolute l1 0 0 0 1 0 0 0 1 0 0 0 1 0 0 1 -3 abc 2 3 inf", 8, "upper", "expected a number, got 'abc'"},
    {8, "joint j1 revolute l1 0 0 0 1 0 0 0 1 0 0 0 1 0 0 1 -3 3 2 3", 8, "", "23 fields"},
    {8, "joint j1 rotary l1 0 0 0 1 0 0 0 1 0 0 0 1 0 0 1 -3 3 2 3 inf", 8, "type", "'rotary'"},
    {8, "joint j1 revolute l1 0 0 0 1 0 0 0 1 0 0 0 1 0 0 1 -3 3 0 3 inf", 8, "velocity", "must be positive"},
    {8, "joint j1 revolute l1 0 0 0 1 0 0 0 1 0 0 0 1 0 0 1 -3 3 2 nan inf", 8, "acceleration", "NaN"},
    {8, "joint j1 revolute l1 0 0 0 1 0.5 0 0 1 0 0 0 1 0 0 1 -3 3 2 3 inf", 8, "origin.r00", "orthonormal"},
    {8, "joint j1 revolute l1 0 0 inf 1 0 0 0 1 0 0 0 1 0 0 1 -3 3 2 3 inf", 8, "origin.z", "finite"},
    {8, "joint j1 revolute l1 0 0 0 1 0 0 0 1 0 0 0 1 0 0 0 -3 3 2 3 inf", 8, "axis.x", "zero"},
    {8, "joint j1 revolute l1 0 0 0 1 0 0 0 1 0 0 0 1 0 0 1 3 -3 2 3 inf", 8, "upper", "upper < lower"},
    {9, "joint j1 continuous l2 0.5 0 0 1 0 0 0 1 0 0 0 1 0 0 1 -inf inf 2 3 inf", 9, "name", "named twice"},
    {5, "tip", 5, "tip", "one name"},
    {6, "role arms", 6, "role", "'arm' or 'gripper'"},
    {7, "margin -1", 7, "margin", ">= 0"},
    {3, "base base", 4, "base", "given twice"},
    {3, "flange 1 2 3", 3, "keyword", "unknown keyword 'flange'"},
    {10, "", 13, "tip_transform", "no 'tip_transform'"},
    {10, "tip_transform 0.5 0 0 1 0 0 0 1 0 0 0", 10, "", "needs 12 values"},
    {11, "tcp pen 0 0 0.1 1 0 0 0 1 0 0 0 -1", 11, "r00", "orthonormal"},
    {12, "constraint linear sum 1 2.5", 12, "", "a linear row has 2 coefficients (one per joint) and b; got 2 values"},
    {12, "constraint linear sum 1 x 2.5", 12, "a1", "expected a number, got 'x'"},
    {12, "constraint cubic sum 1 1 2.5", 12, "kind", "unknown constraint kind 'cubic'"},
    {14, "constraint quadrant diamond 0 5 1 1 0 -1 2 1 0 1 0 1 2 1 0 0 0 -1 -2 0 1 0 0 1 -2 0", 14, "j", "joint index 5 does not exist"},
    {14, "constraint quadrant diamond 0 1 2 1 0 -1 2 1 0 1 0 1 2 1 0 0 0 -1 -2 0 1 0 0 1 -2 0", 14, "row1.i_nonneg", "0 or 1"},
    {14, "constraint quadrant diamond 0 1 1 1 0 -1 2 1 1 1 0 1 2 1 0 0 0 -1 -2 0 1 0 0 1 -2 0", 14, "row2.i_nonneg", "same sign quadrant"},
    {14, "constraint quadrant diamond 0 1 1 1 0 -1 2 1", 14, "", "needs 28 values"},
};

}  // namespace

TEST_CASE("chain files written by Python read back and re-write byte for byte") {
    for (const std::string name : kFiles) {
        CAPTURE(name);
        const std::string file = fixture::path(name + ".chain");
        const std::string text = fixture::slurp(file);
        const Chain chain = Chain::from_file(file);
        CHECK(chain.to_string() == text);
        // and the C++ writer's file reads back to the same text again
        const std::string tmp = "ikstack_test_" + name + ".chain";
        chain.to_file(tmp);
        CHECK(Chain::from_file(tmp).to_string() == text);
        std::remove(tmp.c_str());
    }
}

TEST_CASE("a hand-written file: every field lands where it should") {
    const Chain c = Chain::from_string(kGood, "good.chain");
    CHECK(c.dof() == 2);
    CHECK(c.info().name == "two links");
    CHECK(c.info().tcp_name == "pen");
    CHECK(c.kinematic_margin() == 0.01);
    CHECK(c.joint(1).type == JointType::Continuous);
    CHECK(std::isinf(c.upper()[1]));
    CHECK(std::isinf(c.jerk_limits()[0]));
    REQUIRE(c.linear_constraints().size() == 1);  // two consecutive rows, one constraint
    CHECK(c.linear_constraints()[0].rows == 2);
    REQUIRE(c.quadrant_constraints().size() == 1);
    CHECK(c.quadrant_constraints()[0].description == "a diamond");
    CHECK(c.constraint_rows() == 3);
    VecN q(2);
    q[0] = 0.5;
    q[1] = 0.5;
    CHECK(c.constraints_satisfied(q));  // |q1| + |q0| = 1 <= 2 and sum 1 <= 2.5
    q[1] = 1.6;
    CHECK_FALSE(c.constraints_satisfied(q));
    CHECK(c.constraint_residual_max(q) == doctest::Approx(0.1));
    Mat4 T;
    c.fk(VecN(2), T);
    CHECK(T(0, 3) == doctest::Approx(1.0));
    CHECK(T(2, 3) == doctest::Approx(0.1));
}

TEST_CASE("malformed chain files name the file, the line and the field") {
    for (const Bad& b : kBad) {
        const std::string text = with_line(b.line, b.text);
        CAPTURE(text);
        bool thrown = false;
        try {
            Chain::from_string(text, "arm.chain");
        } catch (const ChainFileError& e) {
            thrown = true;
            const std::string what = e.what();
            CAPTURE(what);
            CHECK(e.file() == "arm.chain");
            CHECK(e.line() == b.want_line);
            CHECK(e.field() == b.field);
            CHECK(what.rfind("arm.chain:" + std::to_string(b.want_line) + ": ", 0) == 0);
            CHECK(what.find(b.says) != std::string::npos);
            if (*b.field) CHECK(what.find(std::string("field '") + b.field + "'") != std::string::npos);
        }
        CHECK(thrown);
    }
}

TEST_CASE("empty and missing files") {
    CHECK_THROWS_WITH_AS(Chain::from_string("# only a comment\n\n", "e.chain"),
                         "e.chain:1: empty file; expected 'ikstack-chain 1'", ChainFileError);
    CHECK_THROWS_WITH_AS(Chain::from_file("/nonexistent/arm.chain"),
                         "/nonexistent/arm.chain:0: cannot open the file", ChainFileError);
    CHECK_THROWS_AS(Chain::from_string("ikstack-chain 1\ntip_transform 0 0 0 1 0 0 0 1 0 0 0 1\n"),
                    ChainFileError);
}

TEST_CASE("the writer refuses names it cannot hold") {
    std::vector<Joint> joints(1);
    joints[0].name = "has space";
    const Chain c(joints, Mat4{});
    CHECK_THROWS_AS(c.to_string(), InputError);
}
