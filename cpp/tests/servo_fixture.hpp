// Reader of the servo parity fixture (fixtures/servo_parity.bin, written by
// fixtures/record_servo.py from the Python servo): scenarios of a chain in the canonical
// compiled layout, a configuration, a solver, and per step the inputs and recorded outputs.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ikstack/servo.hpp"

namespace servo_fixture {

struct Step {
    int flags = 0;  // 1 reset before, 2 explicit state, 4 command payload present
    std::int64_t now = 0;
    double dt = 0;
    ikstack::JointState state;  // the state passed (explicit, or the previous reference)
    ikstack::ServoCommand command;
    // recorded outputs
    int action = 0;
    std::uint32_t status = 0;
    std::string message;
    ikstack::ServoVec q_ref{}, dq_ref{};
    double diag[5] = {};  // task residual, nullspace speed, condition, position/orientation error
    int iterations = 0;
};

struct Scenario {
    std::string label;
    ikstack::ServoChain chain;
    ikstack::ServoConfig config;
    ikstack::ServoSolver solver;
    bool custom_solver = false;  // a user DLS subclass (the solve(request) path)
    bool generator = false;      // a BoxIntegrator motion generator
    std::vector<Step> steps;
};

class Reader {
public:
    explicit Reader(const std::string& path) {
        std::ifstream f(path, std::ios::binary);
        if (!f) throw std::runtime_error("cannot open " + path);
        data_.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
        if (data_.size() < 8 || std::memcmp(data_.data(), "IKSERVO1", 8) != 0)
            throw std::runtime_error(path + ": not a servo parity fixture");
        pos_ = 8;
    }

    std::vector<Scenario> read_all() {
        std::vector<Scenario> out;
        const int ns = i32();
        for (int s = 0; s < ns; ++s) out.push_back(scenario());
        if (pos_ != data_.size()) throw std::runtime_error("trailing bytes in the fixture");
        return out;
    }

private:
    template <class T>
    T get() {
        if (pos_ + sizeof(T) > data_.size()) throw std::runtime_error("fixture truncated");
        T v;
        std::memcpy(&v, data_.data() + pos_, sizeof(T));
        pos_ += sizeof(T);
        return v;
    }
    int i32() { return get<std::int32_t>(); }
    std::int64_t i64() { return get<std::int64_t>(); }
    int u8() { return get<std::uint8_t>(); }
    double f64() { return get<double>(); }
    void f64s(double* out, int n) {
        for (int i = 0; i < n; ++i) out[i] = f64();
    }
    std::vector<double> vec(int n) {
        std::vector<double> v(static_cast<size_t>(n));
        f64s(v.data(), n);
        return v;
    }
    std::string text() {
        const int n = i32();
        if (pos_ + static_cast<size_t>(n) > data_.size())
            throw std::runtime_error("fixture truncated");
        std::string s(data_.data() + pos_, static_cast<size_t>(n));
        pos_ += static_cast<size_t>(n);
        return s;
    }

    Scenario scenario() {
        Scenario sc;
        sc.label = text();
        ikstack::ServoChain& c = sc.chain;
        const int n = i32();
        c.dof = n;
        for (int i = 0; i < n; ++i) c.joint_names.push_back(text());
        c.Rs.resize(static_cast<size_t>(n));
        c.ps.resize(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i) f64s(c.Rs[static_cast<size_t>(i)].data(), 9);
        for (int i = 0; i < n; ++i) f64s(c.ps[static_cast<size_t>(i)].data(), 3);
        for (int i = 0; i < n; ++i) c.kinds.push_back(i32());
        f64s(c.R_end.data(), 9);
        f64s(c.p_end.data(), 3);
        c.lower = vec(n);
        c.upper = vec(n);
        c.velocity = vec(n);
        c.acceleration = vec(n);
        c.jerk = vec(n);
        for (int i = 0; i < n; ++i) c.continuous.push_back(i32());
        c.kinematic_margin = f64();
        const int nl = i32();
        for (int r = 0; r < nl; ++r) {
            ikstack::ServoLinearRow row;
            row.a = vec(n);
            row.b = f64();
            row.name = text();
            c.linear_rows.push_back(row);
        }
        const int nq = i32();
        for (int r = 0; r < nq; ++r) {
            ikstack::ServoQuadrantRow row;
            row.i = i32();
            row.j = i32();
            for (auto& t : row.table) f64s(t.data(), 4);
            row.name = text();
            c.quadrant_rows.push_back(row);
        }
        ikstack::ServoConfig& g = sc.config;
        const int m = i32();
        int axes[6];
        for (int r = 0; r < m; ++r) axes[r] = i32();
        g.set_task_axes(axes, m);
        f64s(g.task_weights.data(), 6);
        double* scalars[] = {&g.max_linear_speed,
                             &g.max_angular_speed,
                             &g.pose_gain,
                             &g.position_tolerance,
                             &g.rotation_tolerance,
                             &g.nullspace_gain,
                             &g.joint_centering_gain,
                             &g.damping,
                             &g.command_timeout,
                             &g.stop_velocity,
                             &g.singularity_decelerate,
                             &g.singularity_halt,
                             &g.leaving_multiplier,
                             &g.singularity_probe,
                             &g.halt_scale,
                             &g.leaving_min_scale,
                             &g.escape_speed,
                             &g.joint_limit_margin,
                             &g.state_tolerance,
                             &g.smoothing,
                             &g.max_dt};
        for (double* p : scalars) *p = f64();
        g.has_nullspace_reference = i32() != 0;
        f64s(g.nullspace_reference.data(), n);
        sc.solver.kind = static_cast<ikstack::ServoSolverKind>(i32());
        sc.solver.min_damping = f64();
        sc.solver.max_iterations = i32();
        sc.solver.tolerance = f64();
        sc.custom_solver = i32() != 0;
        sc.generator = i32() != 0;
        const int steps = i32();
        ikstack::ServoCommand cmd;
        ikstack::ServoVec prev_q{}, prev_dq{};
        for (int k = 0; k < steps; ++k) {
            Step st;
            st.flags = u8();
            st.now = i64();
            st.dt = f64();
            st.state.stamp_ns = i64();
            if (st.flags & 2) {
                f64s(st.state.q.data(), n);
                f64s(st.state.dq.data(), n);
            } else {
                st.state.q = prev_q;
                st.state.dq = prev_dq;
            }
            const int type = u8();
            const std::int64_t cstamp = i64();
            if (st.flags & 4) {
                cmd = ikstack::ServoCommand();
                cmd.type = static_cast<ikstack::CommandType>(type);
                if (type == 1) {
                    f64s(cmd.T.data(), 16);
                } else if (type == 2) {
                    f64s(cmd.twist.data(), 6);
                    cmd.frame = i32();
                } else if (type == 3) {
                    f64s(cmd.velocities.data(), n);
                }
            }
            if (static_cast<int>(cmd.type) != type)
                throw std::runtime_error("command type mismatch");
            cmd.stamp_ns = cstamp;
            st.command = cmd;
            st.action = u8();
            st.status = static_cast<std::uint32_t>(i32());
            st.message = text();
            f64s(st.q_ref.data(), n);
            f64s(st.dq_ref.data(), n);
            f64s(st.diag, 5);
            st.iterations = i32();
            prev_q = st.q_ref;
            prev_dq = st.dq_ref;
            sc.steps.push_back(st);
        }
        return sc;
    }

    std::vector<char> data_;
    size_t pos_ = 0;
};

}  // namespace servo_fixture
