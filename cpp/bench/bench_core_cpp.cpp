// Per-call latency of the C++ core on a 7-joint arm: FK, FK + Jacobian, the warm SVD, the
// nullspace preferred velocity, DampedLeastSquares and BoxQPSolver. Prints a table (median and
// p99 over batches of calls, ns per call) and, given a path, writes it as JSON.
//
//   build/cpp/bench_core_cpp [chain file] [out.json]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "ikstack/diffik.hpp"

using namespace ikstack;

namespace {

struct Row {
    std::string name;
    double median_ns, p99_ns;
};

Row measure(const std::string& name, const std::function<void(int)>& call) {
    const int batch = 100, batches = 3000;
    std::vector<double> per_call;
    per_call.reserve(batches);
    for (int w = 0; w < 20 * batch; ++w) call(w);
    int k = 0;
    for (int b = 0; b < batches; ++b) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < batch; ++i) call(k++);
        const auto t1 = std::chrono::steady_clock::now();
        per_call.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / batch);
    }
    std::sort(per_call.begin(), per_call.end());
    return {name, per_call[per_call.size() / 2], per_call[per_call.size() * 99 / 100]};
}

}  // namespace

int main(int argc, char** argv) {
    const std::string file = argc > 1 ? argv[1] : std::string(IKSTACK_CHAIN_DIR) + "/panda.chain";
    const Chain chain = Chain::from_file(file);
    const int n = chain.dof();
    VecN q(n), dq, pref;
    for (int i = 0; i < n; ++i) q[i] = 0.5 * (chain.lower()[i] + chain.upper()[i]) + 0.1;
    Mat4 T;
    Jacobian J;
    chain.fk_jacobian(q, T, J);
    Mat6 U;
    Vec6 s;
    MatN Vh;
    svd_jacobi(J, U, s, Vh, false);
    DiffIKRequest req;
    req.resize(6, n);
    req.jacobian = J;
    for (int r = 0; r < 6; ++r) req.task[r] = 0.3 * (r % 2 ? -1 : 1);
    for (int i = 0; i < n; ++i) {
        req.lower[i] = -0.2;
        req.upper[i] = 0.2;
    }
    req.damping = 1e-2;
    DampedLeastSquares dls;
    BoxQPSolver qp;
    volatile double sink = 0;
    std::vector<Row> rows;
    rows.push_back(measure("fk", [&](int k) {
        q[0] = 1e-6 * (k & 1023);
        chain.fk(q, T);
        sink = sink + T(0, 3);
    }));
    rows.push_back(measure("fk_jacobian", [&](int k) {
        q[0] = 1e-6 * (k & 1023);
        chain.fk_jacobian(q, T, J);
        sink = sink + J(0, 0);
    }));
    rows.push_back(measure("svd_jacobi (warm)", [&](int) {
        svd_jacobi(J, U, s, Vh, true);
        sink = sink + s[0];
    }));
    rows.push_back(measure("preferred_velocity (cold SVD)", [&](int) {
        preferred_velocity(chain, J, q, &q, 0.5, 0.2, pref);
        sink = sink + pref[0];
    }));
    int active = 0;
    {
        VecN x;
        const DiffIKResult r = qp.solve(req, x);
        for (int i = 0; i < n; ++i) active += r.active[static_cast<size_t>(i)] != 0;
    }
    rows.push_back(measure("DampedLeastSquares.solve", [&](int) {
        dls.solve(req, dq);
        sink = sink + dq[0];
    }));
    rows.push_back(measure("BoxQPSolver.solve (" + std::to_string(active) + " active)", [&](int) {
        qp.solve(req, dq);
        sink = sink + dq[0];
    }));
    std::printf("%s (%d joints), ns per call over 3000 batches of 100 calls\n", file.c_str(), n);
    std::printf("%-34s %10s %10s\n", "call", "median", "p99");
    for (const Row& r : rows) std::printf("%-34s %10.1f %10.1f\n", r.name.c_str(), r.median_ns, r.p99_ns);
    if (argc > 2) {
        FILE* f = std::fopen(argv[2], "w");
        if (f == nullptr) {
            std::fprintf(stderr, "cannot write %s\n", argv[2]);
            return 1;
        }
        std::fprintf(f, "{\n  \"chain\": \"%s\",\n  \"dof\": %d,\n  \"unit\": \"ns per call\",\n  \"rows\": [\n", file.c_str(), n);
        for (size_t i = 0; i < rows.size(); ++i)
            std::fprintf(f, "    {\"call\": \"%s\", \"median\": %.1f, \"p99\": %.1f}%s\n", rows[i].name.c_str(),
                         rows[i].median_ns, rows[i].p99_ns, i + 1 < rows.size() ? "," : "");
        std::fprintf(f, "  ]\n}\n");
        std::fclose(f);
    }
    return 0;
}
