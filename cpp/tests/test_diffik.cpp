// Differential IK: DLS vs the closed-form damped pseudo-inverse, BoxQP vs brute-force
// enumeration of active sets and vs the Python BoxQPSolver, the SVD and nullspace terms vs the
// Python kernels, joint-limit cost vs finite differences, the BoxIntegrator.
#include <doctest/doctest.h>

#include <random>

#include "fixture.hpp"
#include "ikstack/diffik.hpp"

using namespace ikstack;

namespace {

// Dense Gaussian elimination with partial pivoting (the independent reference solver).
std::vector<double> gauss(std::vector<std::vector<double>> A, std::vector<double> b) {
    const size_t n = b.size();
    for (size_t c = 0; c < n; ++c) {
        size_t p = c;
        for (size_t r = c + 1; r < n; ++r)
            if (std::abs(A[r][c]) > std::abs(A[p][c])) p = r;
        std::swap(A[c], A[p]);
        std::swap(b[c], b[p]);
        for (size_t r = c + 1; r < n; ++r) {
            const double f = A[r][c] / A[c][c];
            for (size_t k = c; k < n; ++k) A[r][k] -= f * A[c][k];
            b[r] -= f * b[c];
        }
    }
    std::vector<double> x(n);
    for (size_t i = n; i-- > 0;) {
        double s = b[i];
        for (size_t k = i + 1; k < n; ++k) s -= A[i][k] * x[k];
        x[i] = s / A[i][i];
    }
    return x;
}

struct Problem {
    int m = 0, n = 0;
    Jacobian J;
    Vec6 t;
    VecN p, lo, hi;
    double lam = 0;
};

Problem random_problem(std::mt19937_64& rng, int n, int m, double lam, double box) {
    std::normal_distribution<double> N(0.0, 1.0);
    std::uniform_real_distribution<double> U(0.05, box);
    Problem P;
    P.m = m;
    P.n = n;
    P.J.resize(m, n);
    P.t.resize(m);
    P.p.resize(n);
    P.lo.resize(n);
    P.hi.resize(n);
    for (int r = 0; r < m; ++r) {
        for (int c = 0; c < n; ++c) P.J(r, c) = N(rng);
        P.t[r] = 2.0 * N(rng);
    }
    for (int c = 0; c < n; ++c) {
        P.p[c] = 0.3 * N(rng);
        const double centre = 0.5 * N(rng), w = U(rng);
        P.lo[c] = centre - w;
        P.hi[c] = centre + w;
    }
    P.lam = lam;
    return P;
}

DiffIKRequest request_of(const Problem& P) {
    DiffIKRequest r;
    r.resize(P.m, P.n);
    r.jacobian = P.J;
    r.task = P.t;
    r.preferred_velocity = P.p;
    r.lower = P.lo;
    r.upper = P.hi;
    r.damping = P.lam;
    return r;
}

double objective(const Problem& P, const std::vector<double>& x) {
    double f = 0;
    for (int r = 0; r < P.m; ++r) {
        double e = -P.t[r];
        for (int c = 0; c < P.n; ++c) e += P.J(r, c) * x[static_cast<size_t>(c)];
        f += 0.5 * e * e;
    }
    for (int c = 0; c < P.n; ++c) {
        const double d = x[static_cast<size_t>(c)] - P.p[c];
        f += 0.5 * P.lam * P.lam * d * d;
    }
    return f;
}

// The box QP by enumerating all 3^n assignments (free, at lower, at upper): each is an
// equality-constrained least squares solved by Gaussian elimination; the best feasible point
// is the minimizer (strictly convex).
std::vector<double> brute_force(const Problem& P) {
    const int n = P.n;
    int total = 1;
    for (int i = 0; i < n; ++i) total *= 3;
    std::vector<double> best;
    double best_f = INFINITY;
    for (int code = 0; code < total; ++code) {
        std::vector<int> s(static_cast<size_t>(n));
        int c = code;
        for (int i = 0; i < n; ++i) {
            s[static_cast<size_t>(i)] = c % 3;
            c /= 3;
        }
        std::vector<double> x(static_cast<size_t>(n), 0.0);
        std::vector<int> freev;
        for (int i = 0; i < n; ++i) {
            if (s[static_cast<size_t>(i)] == 1) x[static_cast<size_t>(i)] = P.lo[i];
            else if (s[static_cast<size_t>(i)] == 2) x[static_cast<size_t>(i)] = P.hi[i];
            else freev.push_back(i);
        }
        if (!freev.empty()) {
            // (J_F^T J_F + lam^2 I) x_F = J_F^T (t - J_B x_B) + lam^2 p_F
            const size_t f = freev.size();
            std::vector<std::vector<double>> A(f, std::vector<double>(f, 0.0));
            std::vector<double> b(f, 0.0);
            for (size_t a = 0; a < f; ++a) {
                const int i = freev[a];
                for (size_t bb = 0; bb < f; ++bb) {
                    const int j = freev[bb];
                    double sum = 0;
                    for (int r = 0; r < P.m; ++r) sum += P.J(r, i) * P.J(r, j);
                    A[a][bb] = sum + (a == bb ? P.lam * P.lam : 0.0);
                }
                double sum = 0;
                for (int r = 0; r < P.m; ++r) {
                    double res = P.t[r];
                    for (int k = 0; k < n; ++k)
                        if (s[static_cast<size_t>(k)] != 0) res -= P.J(r, k) * x[static_cast<size_t>(k)];
                    sum += P.J(r, i) * res;
                }
                b[a] = sum + P.lam * P.lam * P.p[i];
            }
            const auto xf = gauss(A, b);
            bool feasible = true;
            for (size_t a = 0; a < f; ++a) {
                const int i = freev[a];
                if (xf[a] < P.lo[i] || xf[a] > P.hi[i]) feasible = false;
                x[static_cast<size_t>(i)] = xf[a];
            }
            if (!feasible) continue;
        }
        const double fx = objective(P, x);
        if (fx < best_f) {
            best_f = fx;
            best = x;
        }
    }
    return best;
}

}  // namespace

TEST_CASE("DLS equals the closed-form damped pseudo-inverse when the box is inactive") {
    std::mt19937_64 rng(7);
    DampedLeastSquares dls;
    for (int trial = 0; trial < 200; ++trial) {
        const int n = 1 + trial % 9, m = 1 + trial % 6;
        Problem P = random_problem(rng, n, m, 0.05 + 0.01 * (trial % 5), 1.0);
        for (int i = 0; i < n; ++i) {
            P.lo[i] = -1e6;
            P.hi[i] = 1e6;
        }
        // reference: (J^T J + lam^2 I) dq = J^T t + lam^2 p  (the n x n normal equations)
        std::vector<std::vector<double>> A(static_cast<size_t>(n), std::vector<double>(static_cast<size_t>(n)));
        std::vector<double> b(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i) {
            for (int j = 0; j < n; ++j) {
                double s = 0;
                for (int r = 0; r < m; ++r) s += P.J(r, i) * P.J(r, j);
                A[static_cast<size_t>(i)][static_cast<size_t>(j)] = s + (i == j ? P.lam * P.lam : 0.0);
            }
            double s = 0;
            for (int r = 0; r < m; ++r) s += P.J(r, i) * P.t[r];
            b[static_cast<size_t>(i)] = s + P.lam * P.lam * P.p[i];
        }
        const auto ref = gauss(A, b);
        VecN dq;
        const DiffIKResult res = dls.solve(request_of(P), dq);
        REQUIRE(res.success);
        double scale = 1;
        for (double v : ref) scale = std::max(scale, std::abs(v));
        for (int i = 0; i < n; ++i) CHECK(std::abs(dq[i] - ref[static_cast<size_t>(i)]) < 1e-9 * scale);
    }
}

TEST_CASE("DLS keeps the direction when it scales into a box that contains zero") {
    Problem P;
    std::mt19937_64 rng(3);
    P = random_problem(rng, 4, 3, 0.1, 1.0);
    for (int i = 0; i < 4; ++i) {
        P.lo[i] = -0.01;
        P.hi[i] = 0.02;
    }
    VecN free_dq, dq;
    Problem Q = P;
    for (int i = 0; i < 4; ++i) {
        Q.lo[i] = -INFINITY;
        Q.hi[i] = INFINITY;
    }
    DampedLeastSquares dls;
    REQUIRE(dls.solve(request_of(Q), free_dq).success);
    REQUIRE(dls.solve(request_of(P), dq).success);
    double s = dq[0] / free_dq[0];
    CHECK(s > 0);
    CHECK(s < 1);
    for (int i = 0; i < 4; ++i) {
        CHECK(dq[i] == doctest::Approx(s * free_dq[i]).epsilon(1e-12));
        CHECK(dq[i] >= P.lo[i]);
        CHECK(dq[i] <= P.hi[i]);
    }
}

TEST_CASE("DLS and BoxQP report bad requests and singular problems as failures, dq zero") {
    DampedLeastSquares dls;
    BoxQPSolver qp;
    std::mt19937_64 rng(5);
    Problem P = random_problem(rng, 3, 2, 0.1, 1.0);
    DiffIKRequest r = request_of(P);
    r.task[0] = NAN;
    VecN dq;
    DiffIKResult res = dls.solve(r, dq);
    CHECK_FALSE(res.success);
    CHECK(res.status == DiffIKStatus::BadRequest);
    CHECK(std::string(res.message).find("task") != std::string::npos);
    CHECK(dq.size() == 3);
    CHECK(dq[0] == 0.0);
    res = qp.solve(r, dq);
    CHECK(res.status == DiffIKStatus::BadRequest);
    // singular: two equal rows, no damping
    r = request_of(P);
    for (int c = 0; c < 3; ++c) r.jacobian(1, c) = r.jacobian(0, c);
    r.damping = 0.0;
    res = dls.solve(r, dq);
    CHECK(res.status == DiffIKStatus::Singular);
    CHECK(std::string(res.message) == "J J^T + lambda^2 I is singular; use damping > 0");
    // an empty box
    r = request_of(P);
    r.lower[1] = 1.0;
    r.upper[1] = 0.0;
    res = qp.solve(r, dq);
    CHECK(res.status == DiffIKStatus::Infeasible);
    // inequality rows are not for the box solver
    r = request_of(P);
    r.A_ineq.resize(1, 3);
    r.b_ineq.resize(1);
    res = qp.solve(r, dq);
    CHECK(res.status == DiffIKStatus::Unsupported);
    CHECK_THROWS_AS(DampedLeastSquares(-1.0), InputError);
    CHECK_THROWS_AS(BoxQPSolver(0), InputError);
}

TEST_CASE("BoxQP equals a brute-force enumeration of active sets") {
    std::mt19937_64 rng(11);
    BoxQPSolver qp;
    int active_total = 0;
    for (int trial = 0; trial < 300; ++trial) {
        const int n = 1 + trial % 6, m = 1 + (trial / 6) % 6;
        const double lam = trial % 3 == 0 ? 1e-2 : 0.2;
        Problem P = random_problem(rng, n, m, lam, trial % 2 ? 0.3 : 1.5);
        VecN dq;
        const DiffIKResult res = qp.solve(request_of(P), dq);
        REQUIRE(res.success);
        const auto ref = brute_force(P);
        REQUIRE(ref.size() == static_cast<size_t>(n));
        double scale = 1;
        for (double v : ref) scale = std::max(scale, std::abs(v));
        for (int i = 0; i < n; ++i) {
            CHECK(std::abs(dq[i] - ref[static_cast<size_t>(i)]) < 1e-9 * scale);
            CHECK(dq[i] >= P.lo[i]);
            CHECK(dq[i] <= P.hi[i]);
            active_total += res.active[static_cast<size_t>(i)] != 0;
        }
    }
    CHECK(active_total > 100);  // the enumeration exercised active bounds, not just the interior
}

TEST_CASE("BoxQP and DLS reproduce the Python solvers' outputs to 1e-12") {
    const auto recs = fixture::read("box_qp.txt");
    BoxQPSolver qp;
    DampedLeastSquares dls;
    int cases = 0;
    double worst_box = 0, worst_dls = 0;
    for (size_t k = 0; k < recs.size(); ++k) {
        if (recs[k].tag != "case") continue;
        ++cases;
        const int n = static_cast<int>(recs[k].v[0]), m = static_cast<int>(recs[k].v[1]);
        auto get = [&](const char* tag) -> const std::vector<double>& {
            for (size_t j = k + 1; j < recs.size() && recs[j].tag != "case"; ++j)
                if (recs[j].tag == tag) return recs[j].v;
            throw std::runtime_error(std::string("fixture misses ") + tag);
        };
        DiffIKRequest r;
        r.resize(m, n);
        for (int a = 0; a < m; ++a) {
            for (int c = 0; c < n; ++c) r.jacobian(a, c) = get("J")[static_cast<size_t>(a * n + c)];
            r.task[a] = get("t")[static_cast<size_t>(a)];
        }
        for (int c = 0; c < n; ++c) {
            r.preferred_velocity[c] = get("p")[static_cast<size_t>(c)];
            r.lower[c] = get("lo")[static_cast<size_t>(c)];
            r.upper[c] = get("hi")[static_cast<size_t>(c)];
        }
        r.damping = get("lam")[0];
        VecN dq;
        const DiffIKResult res = qp.solve(r, dq);
        CHECK(res.success == (get("box_ok")[0] == 1.0));
        CHECK(res.iterations == static_cast<int>(get("box_ok")[1]));
        for (int c = 0; c < n; ++c) {
            worst_box = std::max(worst_box, std::abs(dq[c] - get("box")[static_cast<size_t>(c)]));
            CHECK(res.active[static_cast<size_t>(c)] == static_cast<int>(get("state")[static_cast<size_t>(c)]));
        }
        const DiffIKResult rd = dls.solve(r, dq);
        CHECK(rd.success == (get("dls_ok")[0] == 1.0));
        for (int c = 0; c < n; ++c)
            worst_dls = std::max(worst_dls, std::abs(dq[c] - get("dls")[static_cast<size_t>(c)]));
    }
    CHECK(cases == 60);
    MESSAGE("largest |dq_cpp - dq_python|: BoxQP " << worst_box << ", DLS " << worst_dls);
    CHECK(worst_box <= 1e-12);
    CHECK(worst_dls <= 1e-12);
}

TEST_CASE("svd_jacobi and the nullspace preferred velocity match the Python kernels") {
    const auto recs = fixture::read("svd.txt");
    const Chain chain = Chain::from_file(fixture::path("panda.chain"));
    double worst_s = 0, worst_V = 0, worst_p = 0, worst_J = 0;
    for (size_t k = 0; k + 6 < recs.size(); k += 7) {
        const int n = 7;
        VecN q(n), post(n);
        for (int i = 0; i < n; ++i) {
            q[i] = recs[k].v[static_cast<size_t>(i)];
            post[i] = recs[k + 5].v[static_cast<size_t>(i)];
        }
        Jacobian J;
        REQUIRE(chain.jacobian(q, J));
        for (int i = 0; i < 6 * n; ++i) worst_J = std::max(worst_J, std::abs(J.data()[i] - recs[k + 1].v[static_cast<size_t>(i)]));
        // the Python SVD ran on the Python Jacobian: feed the same bits
        for (int i = 0; i < 6 * n; ++i) J.data()[i] = recs[k + 1].v[static_cast<size_t>(i)];
        Mat6 U;
        Vec6 s;
        MatN Vh;
        svd_jacobi(J, U, s, Vh, false);
        for (int i = 0; i < 6; ++i) worst_s = std::max(worst_s, std::abs(s[i] - recs[k + 3].v[static_cast<size_t>(i)]));
        for (int i = 0; i < n * n; ++i) worst_V = std::max(worst_V, std::abs(Vh.data()[i] - recs[k + 4].v[static_cast<size_t>(i)]));
        VecN pv;
        preferred_velocity(chain, J, q, &post, 0.7, 0.3, pv);
        for (int i = 0; i < n; ++i) worst_p = std::max(worst_p, std::abs(pv[i] - recs[k + 6].v[static_cast<size_t>(i)]));
        // the projected velocity lies in the nullspace: J pv = 0
        for (int r = 0; r < 6; ++r) {
            double acc = 0;
            for (int i = 0; i < n; ++i) acc += J(r, i) * pv[i];
            CHECK(std::abs(acc) < 1e-12);
        }
    }
    MESSAGE("largest differences: J " << worst_J << ", s " << worst_s << ", Vh " << worst_V << ", preferred " << worst_p);
    CHECK(worst_J < 1e-12);
    CHECK(worst_s < 1e-12);
    CHECK(worst_V < 1e-12);
    CHECK(worst_p < 1e-12);  // Python's projector is from numpy's SVD: the same subspace
}

TEST_CASE("svd_jacobi reconstructs A, warm or cold, and completes the nullspace at a singularity") {
    std::mt19937_64 rng(17);
    std::normal_distribution<double> N(0, 1);
    for (int trial = 0; trial < 50; ++trial) {
        const int m = 1 + trial % 6, n = 1 + (trial * 7) % 9;
        Jacobian A(m, n);
        for (int r = 0; r < m; ++r)
            for (int c = 0; c < n; ++c) A(r, c) = N(rng);
        if (n > 1 && trial % 4 == 0)
            for (int r = 0; r < m; ++r) A(r, n - 1) = A(r, 0);
        Mat6 U;
        Vec6 s;
        MatN Vh;
        svd_jacobi(A, U, s, Vh, false);
        Mat6 U2;
        Vec6 s2;
        MatN Vh2 = Vh;
        svd_jacobi(A, U2, s2, Vh2, true);
        const int k = std::min(m, n);
        for (int r = 0; r < m; ++r)
            for (int c = 0; c < n; ++c) {
                double x = 0, y = 0;
                for (int a = 0; a < k; ++a) {
                    x += U(r, a) * s[a] * Vh(a, c);
                    y += U2(r, a) * s2[a] * Vh2(a, c);
                }
                CHECK(std::abs(x - A(r, c)) < 1e-12);
                CHECK(std::abs(y - A(r, c)) < 1e-12);
            }
        for (int a = 0; a + 1 < k; ++a) CHECK(s[a] >= s[a + 1]);
        for (int a = 0; a < n; ++a)
            for (int b = 0; b < n; ++b) {
                double d = 0;
                for (int c = 0; c < n; ++c) d += Vh(a, c) * Vh(b, c);
                CHECK(std::abs(d - (a == b ? 1.0 : 0.0)) < 1e-12);
            }
    }
}

TEST_CASE("secondary velocity: posture wraps continuous joints, centering skips unbounded ones") {
    VecN q(3), post(3), lo(3), hi(3), out;
    q[0] = 3.0;  post[0] = -3.0;  // continuous: the short way is +0.283...
    q[1] = 0.2;  post[1] = 0.5;
    q[2] = 1.0;  post[2] = 1.0;
    lo[0] = -INFINITY; hi[0] = INFINITY;
    lo[1] = -1; hi[1] = 3;
    lo[2] = -INFINITY; hi[2] = 2;
    const bool cont[3] = {true, false, false};
    secondary_velocity(q, post, 2.0, lo, hi, cont, 0.5, out);
    const double pi = 3.14159265358979323846;
    CHECK(out[0] == doctest::Approx(2.0 * (2 * pi - 6.0)));
    CHECK(out[1] == doctest::Approx(2.0 * 0.3 + 0.5 * (1.0 - 0.2)));
    CHECK(out[2] == 0.0);
}

TEST_CASE("joint-limit cost: gradient matches finite differences in both forms") {
    std::mt19937_64 rng(23);
    std::uniform_real_distribution<double> U(-1.0, 1.0);
    VecN lo(5), hi(5), w(5), q(5), g, gp, gm;
    for (int i = 0; i < 5; ++i) {
        lo[i] = -2 - i * 0.1;
        hi[i] = 2 + i * 0.2;
        w[i] = 1 + i;
    }
    hi[4] = INFINITY;
    for (double band : {-1.0, 0.8}) {
        for (int trial = 0; trial < 20; ++trial) {
            for (int i = 0; i < 5; ++i) q[i] = 1.9 * U(rng);
            joint_limit_cost(q, lo, hi, w, band, g);
            CHECK(g[4] == 0.0);
            for (int i = 0; i < 4; ++i) {
                VecN a = q, b = q;
                a[i] += 1e-6;
                b[i] -= 1e-6;
                const double fd = (joint_limit_cost(a, lo, hi, w, band, gp) - joint_limit_cost(b, lo, hi, w, band, gm)) / 2e-6;
                CHECK(std::abs(fd - g[i]) < 1e-6);
            }
        }
    }
}

TEST_CASE("scale_into_box and the BoxIntegrator") {
    VecN v(3), lo(3), hi(3), out;
    v[0] = 2; v[1] = -1; v[2] = 0.5;
    lo[0] = -1; hi[0] = 1;
    lo[1] = -1; hi[1] = 1;
    lo[2] = 0.6; hi[2] = 1;  // excludes zero: clipped, not scaled by
    const double s = scale_into_box(v, lo, hi, out);
    CHECK(s == 0.5);
    CHECK(out[0] == 1.0);
    CHECK(out[1] == -0.5);
    CHECK(out[2] == 0.6);
    BoxIntegrator gen;
    VecN q(3), ql(3), qu(3), q_ref, dq_ref;
    q[0] = 0.99; ql.fill(-1); qu.fill(1);
    REQUIRE(gen.generate(q, VecN(3), v, lo, hi, ql, qu, 0.1, q_ref, dq_ref));
    CHECK(q_ref[0] == 1.0);  // clipped to the position limit
    CHECK(q_ref[1] == doctest::Approx(-0.05));
    CHECK(dq_ref[2] == 0.6);
}
