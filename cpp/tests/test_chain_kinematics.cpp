// FK and Jacobians of exported bundled arms against Pinocchio (fixtures), the Jacobian against
// finite differences, and DH chains against a plain product of DH matrices.
#include <doctest/doctest.h>

#include <cmath>

#include "fixture.hpp"
#include "ikstack/chain.hpp"

using namespace ikstack;

namespace {

const char* const kArms[] = {"planar2", "ur5",    "panda", "panda_hand", "iiwa14", "marvin_left",
                             "marvin_right_taccap", "scara", "rizon4", "arx_x5"};

VecN vec(const std::vector<double>& v) {
    VecN out(static_cast<int>(v.size()));
    for (size_t i = 0; i < v.size(); ++i) out[static_cast<int>(i)] = v[i];
    return out;
}

}  // namespace

TEST_CASE("FK and Jacobian of exported arms match Pinocchio to 1e-12") {
    for (const std::string arm : kArms) {
        CAPTURE(arm);
        const Chain chain = Chain::from_file(fixture::path(std::string(arm) + ".chain"));
        const auto recs = fixture::read(std::string(arm) + ".fk.txt");
        REQUIRE(recs.size() % 3 == 0);
        REQUIRE(recs.size() >= 3);
        double worst_T = 0, worst_J = 0;
        for (size_t k = 0; k < recs.size(); k += 3) {
            const VecN q = vec(recs[k].v);
            REQUIRE(q.size() == chain.dof());
            Mat4 T;
            Jacobian J;
            REQUIRE(chain.fk_jacobian(q, T, J));
            Mat4 T2;
            REQUIRE(chain.fk(q, T2));
            for (int r = 0; r < 4; ++r)
                for (int c = 0; c < 4; ++c) {
                    worst_T = std::max(worst_T, std::abs(T(r, c) - recs[k + 1].v[static_cast<size_t>(4 * r + c)]));
                    CHECK(T2(r, c) == T(r, c));  // one code path: bit-identical
                }
            REQUIRE(recs[k + 2].v.size() == static_cast<size_t>(6 * chain.dof()));
            for (int r = 0; r < 6; ++r)
                for (int c = 0; c < chain.dof(); ++c)
                    worst_J = std::max(worst_J, std::abs(J(r, c) - recs[k + 2].v[static_cast<size_t>(r * chain.dof() + c)]));
        }
        MESSAGE(arm << ": largest |T - T_pinocchio| " << worst_T << ", |J - J_pinocchio| " << worst_J);
        CHECK(worst_T < 1e-12);
        CHECK(worst_J < 1e-12);
    }
}

TEST_CASE("the Jacobian matches central finite differences of FK") {
    for (const std::string arm : kArms) {
        CAPTURE(arm);
        const Chain chain = Chain::from_file(fixture::path(std::string(arm) + ".chain"));
        const auto recs = fixture::read(std::string(arm) + ".fk.txt");
        const VecN q = vec(recs[0].v);
        Jacobian J;
        REQUIRE(chain.jacobian(q, J));
        const double h = 1e-6;
        Mat4 T0;
        chain.fk(q, T0);
        for (int i = 0; i < chain.dof(); ++i) {
            VecN qp = q, qm = q;
            qp[i] += h;
            qm[i] -= h;
            Mat4 Tp, Tm;
            chain.fk(qp, Tp);
            chain.fk(qm, Tm);
            for (int r = 0; r < 3; ++r)
                CHECK(std::abs((Tp(r, 3) - Tm(r, 3)) / (2 * h) - J(r, i)) < 1e-7);
            // angular velocity: vee(dR R^T)
            double W[3][3];
            for (int a = 0; a < 3; ++a)
                for (int b = 0; b < 3; ++b) {
                    double s = 0;
                    for (int k = 0; k < 3; ++k) s += (Tp(a, k) - Tm(a, k)) / (2 * h) * T0(b, k);
                    W[a][b] = s;
                }
            CHECK(std::abs(W[2][1] - J(3, i)) < 1e-7);
            CHECK(std::abs(W[0][2] - J(4, i)) < 1e-7);
            CHECK(std::abs(W[1][0] - J(5, i)) < 1e-7);
        }
    }
}

TEST_CASE("fk rejects non-finite and wrong-sized q without touching the output") {
    const Chain chain = Chain::from_file(fixture::path("panda.chain"));
    Mat4 T;
    T(0, 0) = 42.0;
    VecN q(7);
    q[3] = NAN;
    CHECK_FALSE(chain.fk(q, T));
    CHECK(T(0, 0) == 42.0);
    CHECK_FALSE(chain.fk(VecN(6), T));
    Jacobian J;
    CHECK_FALSE(chain.jacobian(q, J));
}

TEST_CASE("fk_links ends at the TCP and puts each link frame on its joint") {
    const Chain chain = Chain::from_file(fixture::path("panda_hand.chain"));
    const auto recs = fixture::read("panda_hand.fk.txt");
    const VecN q = vec(recs[0].v);
    Mat4 frames[kMaxDof + 1];
    REQUIRE(chain.fk_links(q, frames));
    Mat4 T;
    chain.fk(q, T);
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c) CHECK(std::abs(frames[chain.dof()](r, c) - T(r, c)) < 1e-15);
    Jacobian J;
    chain.jacobian(q, J);
    // each revolute joint axis (in the link frame) mapped to the base is the Jacobian's z_i
    for (int i = 0; i < chain.dof(); ++i) {
        const auto& ax = chain.joint(i).axis;
        for (int r = 0; r < 3; ++r) {
            const double z = frames[i](r, 0) * ax[0] + frames[i](r, 1) * ax[1] + frames[i](r, 2) * ax[2];
            CHECK(std::abs(z - J(3 + r, i)) < 1e-14);
        }
    }
}

namespace {

// A_i of standard DH written out by hand: Rz(theta) Tz(d) Tx(a) Rx(alpha)
Mat4 std_dh(double theta, double d, double a, double alpha) {
    const double ct = std::cos(theta), st = std::sin(theta), ca = std::cos(alpha), sa = std::sin(alpha);
    Mat4 T;
    T.m[0][0] = ct; T.m[0][1] = -st * ca; T.m[0][2] = st * sa;  T.m[0][3] = a * ct;
    T.m[1][0] = st; T.m[1][1] = ct * ca;  T.m[1][2] = -ct * sa; T.m[1][3] = a * st;
    T.m[2][0] = 0;  T.m[2][1] = sa;       T.m[2][2] = ca;       T.m[2][3] = d;
    return T;
}

// modified DH (Craig) by hand: Rx(alpha) Tx(a) Rz(theta) Tz(d)
Mat4 mod_dh(double alpha, double a, double theta, double d) {
    const double ct = std::cos(theta), st = std::sin(theta), ca = std::cos(alpha), sa = std::sin(alpha);
    Mat4 T;
    T.m[0][0] = ct;      T.m[0][1] = -st;      T.m[0][2] = 0;    T.m[0][3] = a;
    T.m[1][0] = st * ca; T.m[1][1] = ct * ca;  T.m[1][2] = -sa;  T.m[1][3] = -sa * d;
    T.m[2][0] = st * sa; T.m[2][1] = ct * sa;  T.m[2][2] = ca;   T.m[2][3] = ca * d;
    return T;
}

double max_diff(const Mat4& A, const Mat4& B) {
    double w = 0;
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c) w = std::max(w, std::abs(A(r, c) - B(r, c)));
    return w;
}

}  // namespace

TEST_CASE("standard DH (UR5 table) equals the product of hand-written DH matrices") {
    const double pi = 3.14159265358979323846;
    // (d, theta_offset, a, alpha)
    const std::vector<std::array<double, 4>> rows = {{0.089159, 0, 0, pi / 2}, {0, 0, -0.425, 0},
                                                     {0, 0, -0.39225, 0},     {0.10915, 0, 0, pi / 2},
                                                     {0.09465, 0.3, 0, -pi / 2}, {0.0823, 0, 0, 0}};
    const Chain chain = Chain::from_dh(rows, DHConvention::Standard);
    CHECK(chain.dof() == 6);
    CHECK(chain.info().tip == "flange");
    const double qs[3][6] = {{0, 0, 0, 0, 0, 0}, {0.3, -1.2, 0.7, 2.0, -0.4, 1.1}, {-2, 1, -1, 0.5, 3, -3}};
    for (const auto& qa : qs) {
        VecN q(6);
        Mat4 ref;
        for (int i = 0; i < 6; ++i) {
            q[i] = qa[i];
            ref = matmul(ref, std_dh(qa[i] + rows[static_cast<size_t>(i)][1], rows[static_cast<size_t>(i)][0],
                                     rows[static_cast<size_t>(i)][2], rows[static_cast<size_t>(i)][3]));
        }
        Mat4 T;
        REQUIRE(chain.fk(q, T));
        CHECK(max_diff(T, ref) < 1e-14);
    }
}

TEST_CASE("modified DH (the Marvin table) equals hand-written Craig matrices and the Pinocchio fixture") {
    const double d2r = 3.14159265358979323846 / 180.0;
    // (alpha deg, a mm, d mm, theta deg) from the published table; flange is a static last row
    const double tab[7][4] = {{0, 0, 174.5, 0}, {90, 0, 0, 0},    {-90, 0, 287, 0}, {90, 18, 0, 180},
                              {90, 18, 314, 180}, {90, 0, 0, 90}, {90, 0, 0, 90}};
    const double flange[4] = {90, 0, 95, 90};
    std::vector<std::array<double, 4>> rows;
    for (const auto& r : tab) rows.push_back({r[0] * d2r, r[1] * 1e-3, r[2] * 1e-3, r[3] * d2r});
    DHOptions opt;
    opt.has_flange = true;
    opt.flange = {flange[0] * d2r, flange[1] * 1e-3, flange[2] * 1e-3, flange[3] * d2r};
    const Chain chain = Chain::from_dh(rows, DHConvention::Modified, opt);
    const auto recs = fixture::read("marvin_left.fk.txt");
    for (size_t k = 0; k < recs.size(); k += 3) {
        VecN q(7);
        Mat4 ref;
        for (int i = 0; i < 7; ++i) {
            q[i] = recs[k].v[static_cast<size_t>(i)];
            ref = matmul(ref, mod_dh(rows[static_cast<size_t>(i)][0], rows[static_cast<size_t>(i)][1],
                                     q[i] + rows[static_cast<size_t>(i)][3], rows[static_cast<size_t>(i)][2]));
        }
        ref = matmul(ref, mod_dh(opt.flange[0], opt.flange[1], opt.flange[3], opt.flange[2]));
        Mat4 T, P;
        REQUIRE(chain.fk(q, T));
        for (int r = 0; r < 4; ++r)
            for (int c = 0; c < 4; ++c) P(r, c) = recs[k + 1].v[static_cast<size_t>(4 * r + c)];
        CHECK(max_diff(T, ref) < 1e-14);
        CHECK(max_diff(T, P) < 1e-12);
    }
}

TEST_CASE("DH options: prismatic joints, limits, names; bad tables are ModelErrors") {
    DHOptions opt;
    opt.joint_types = {JointType::Revolute, JointType::Prismatic};
    opt.lower = {-1, 0};
    opt.upper = {1, 0.5};
    opt.joint_names = {"a", "b"};
    const Chain chain = Chain::from_dh({{0.1, 0, 0.2, 0}, {0, 0, 0, 0}}, DHConvention::Standard, opt);
    CHECK(chain.joint(1).type == JointType::Prismatic);
    CHECK(chain.joint(1).name == "b");
    VecN q(2);
    q[1] = 0.25;
    Mat4 T0, T1;
    chain.fk(VecN(2), T0);
    chain.fk(q, T1);
    CHECK(std::abs(T1(2, 3) - T0(2, 3) - 0.25) < 1e-15);  // slides along the previous z
    CHECK_THROWS_AS(Chain::from_dh({}, DHConvention::Standard), ModelError);
    DHOptions bad;
    bad.lower = {0, 1, 2};
    CHECK_THROWS_AS(Chain::from_dh({{0, 0, 0, 0}}, DHConvention::Standard, bad), ModelError);
    CHECK_THROWS_AS(Chain::from_dh({{0, NAN, 0, 0}}, DHConvention::Modified), ModelError);
}

TEST_CASE("with_base and with_tcp move the frames as documented") {
    const Chain chain = Chain::from_file(fixture::path("ur5.chain"));
    VecN q(6);
    for (int i = 0; i < 6; ++i) q[i] = 0.1 * (i + 1);
    const Mat4 B = xyz_rpy(0.1, -0.2, 0.3, 0.2, -0.1, 0.4);
    const Mat4 tool = xyz_rpy(0, 0, 0.1, 0, 0, 0.5);
    Mat4 T, Tb, Tt;
    chain.fk(q, T);
    chain.with_base(B).fk(q, Tb);
    chain.with_tcp(tool).fk(q, Tt);
    CHECK(max_diff(Tb, matmul(B, T)) < 1e-14);
    CHECK(max_diff(Tt, matmul(T, tool)) < 1e-14);
    CHECK(chain.with_tcp(tool).without_tcp().info().tcp_name.empty());
}

TEST_CASE("the URDF loader (urdfdom) agrees with the Pinocchio fixtures when built in") {
    if (!Chain::has_urdf_support()) {
        CHECK_THROWS_AS(Chain::from_urdf("x.urdf", "a", "b"), ModelError);
        return;
    }
    struct Case { const char* arm; const char* urdf; const char* base; const char* tip; };
    const Case cases[] = {{"ur5", "ur5.urdf", "base_link", "tool0"},
                          {"panda", "panda.urdf", "panda_link0", "panda_link8"},
                          {"iiwa14", "iiwa14.urdf", "iiwa_link_0", "iiwa_link_ee"},
                          {"scara", "scara.urdf", "base_link", "flange"}};
    for (const Case& c : cases) {
        const std::string arm = c.arm;
        CAPTURE(arm);
        const Chain chain = Chain::from_urdf(std::string(IKSTACK_ROBOT_DATA_DIR) + "/" + c.urdf, c.base, c.tip);
        const Chain ref = Chain::from_file(fixture::path(std::string(c.arm) + ".chain"));
        REQUIRE(chain.dof() == ref.dof());
        const auto recs = fixture::read(std::string(c.arm) + ".fk.txt");
        for (size_t k = 0; k < recs.size(); k += 3) {
            const VecN q = vec(recs[k].v);
            Mat4 T, P;
            REQUIRE(chain.fk(q, T));
            for (int r = 0; r < 4; ++r)
                for (int cc = 0; cc < 4; ++cc) P(r, cc) = recs[k + 1].v[static_cast<size_t>(4 * r + cc)];
            CHECK(max_diff(T, P) < 1e-12);
        }
        for (int i = 0; i < chain.dof(); ++i) {
            CHECK(chain.joint(i).name == ref.joint(i).name);
            CHECK(chain.lower()[i] == ref.lower()[i]);
            CHECK(chain.upper()[i] == ref.upper()[i]);
            CHECK(chain.velocity_limits()[i] == ref.velocity_limits()[i]);
        }
    }
    CHECK_THROWS_AS(Chain::from_urdf(std::string(IKSTACK_ROBOT_DATA_DIR) + "/ur5.urdf", "base_link", "nope"), ModelError);
}
