// No heap allocation on the per-cycle paths: fk, jacobian, the solvers, the nullspace terms and
// the BoxIntegrator, counted by replacing the global operator new.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "fixture.hpp"
#include "ikstack/diffik.hpp"

namespace {
std::atomic<long> g_allocations{0};
}

void* operator new(std::size_t n) {
    ++g_allocations;
    if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
    ++g_allocations;
    if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

using namespace ikstack;

TEST_CASE("fk, jacobian, DLS, BoxQP, nullspace and BoxIntegrator allocate nothing") {
    const Chain chain = Chain::from_file(fixture::path("marvin_left.chain"));
    DampedLeastSquares dls;
    BoxQPSolver qp;
    BoxIntegrator gen;
    DiffIKRequest req;
    req.resize(6, chain.dof());
    VecN q(chain.dof()), dq, q_ref, dq_ref, pref, grad, w(chain.dof(), 1.0);
    for (int i = 0; i < chain.dof(); ++i) q[i] = 0.1 * (i + 1);
    Mat4 T;
    Jacobian J;
    Mat6 U;
    Vec6 s;
    MatN Vh, N;
    // warm the outputs' sizes once (resizing a fixed-capacity vector never allocates anyway)
    const long before = g_allocations.load();
    long bad_path = 0;
    for (int cycle = 0; cycle < 100; ++cycle) {
        q[0] += 1e-3;
        chain.fk(q, T);
        chain.fk_jacobian(q, T, J);
        req.jacobian = J;
        for (int r = 0; r < 6; ++r) req.task[r] = 0.01 * (r + 1);
        for (int i = 0; i < chain.dof(); ++i) {
            req.lower[i] = -0.1;
            req.upper[i] = 0.1;
        }
        svd_jacobi(J, U, s, Vh, cycle > 0);
        preferred_velocity(chain, J, q, &q, 0.5, 0.2, pref);
        projector_from_svd(s, Vh, kNullspaceRcond, N);
        project(N, pref, pref);
        req.preferred_velocity = pref;
        if (!dls.solve(req, dq).success) ++bad_path;
        if (!qp.solve(req, dq).success) ++bad_path;
        joint_limit_cost(q, chain.lower(), chain.upper(), w, 0.3, grad);
        gen.generate(q, dq, dq, req.lower, req.upper, chain.lower(), chain.upper(), 1e-3, q_ref, dq_ref);
        chain.constraint_residual_max(q);
        // failure paths too: a NaN task, an empty box
        req.task[0] = NAN;
        dls.solve(req, dq);
        req.task[0] = 0.0;
        req.lower[0] = 1.0;
        qp.solve(req, dq);
    }
    CHECK(g_allocations.load() - before == 0);
    CHECK(bad_path == 0);
}
