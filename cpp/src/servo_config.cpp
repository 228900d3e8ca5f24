// ServoConfig and ServoChain checks (the Python ServoConfig's messages), command builders,
// and the servo's view of a Chain.
#include <algorithm>
#include <cmath>
#include <string>

#include "ikstack/chain.hpp"
#include "ikstack/servo.hpp"
#include "servo_format.hpp"

namespace ikstack {

using servo_detail::append_repr;

ServoCommand ServoCommand::pose(const double* T_row_major, std::int64_t stamp) {
    ServoCommand c;
    c.type = CommandType::POSE;
    for (int i = 0; i < 16; ++i) c.T[static_cast<size_t>(i)] = T_row_major[i];
    c.stamp_ns = stamp;
    return c;
}

ServoCommand ServoCommand::twist_cmd(const double* v6, TwistFrame f, std::int64_t stamp) {
    ServoCommand c;
    c.type = CommandType::TWIST;
    for (int i = 0; i < 6; ++i) c.twist[static_cast<size_t>(i)] = v6[i];
    c.frame = static_cast<int>(f);
    c.stamp_ns = stamp;
    return c;
}

ServoCommand ServoCommand::jog(const double* v, int n, std::int64_t stamp) {
    ServoCommand c;
    c.type = CommandType::JOINT_JOG;
    for (int i = 0; i < n && i < kServoMaxDof; ++i) c.velocities[static_cast<size_t>(i)] = v[i];
    c.stamp_ns = stamp;
    return c;
}

void ServoConfig::set_task_axes(const int* axes, int count) {
    num_task_axes = std::max(0, std::min(count, 6));
    for (int r = 0; r < num_task_axes; ++r) task_axes[static_cast<size_t>(r)] = axes[r];
    std::sort(task_axes.begin(), task_axes.begin() + num_task_axes);
}

double ServoConfig::leaving_halt() const {
    return singularity_decelerate +
           (singularity_halt - singularity_decelerate) * leaving_multiplier;
}

namespace {

std::string tuple_text(const int* v, int n) {
    std::string s = "(";
    for (int i = 0; i < n; ++i) {
        if (i) s += ", ";
        s += std::to_string(v[i]);
    }
    return s + (n == 1 ? ",)" : ")");
}

}  // namespace

std::string ServoConfig::check() const {
    const int m = num_task_axes;
    bool ok = m >= 1 && m <= 6;
    for (int r = 0; ok && r < m; ++r) {
        const int a = task_axes[static_cast<size_t>(r)];
        if (a < 0 || a > 5) ok = false;
        for (int s = 0; s < r; ++s)
            if (task_axes[static_cast<size_t>(s)] == a) ok = false;
    }
    if (!ok)
        return "task_axes must be distinct indices in 0..5; got " +
               tuple_text(task_axes.data(), std::max(0, std::min(m, 6)));
    for (double x : task_weights) {
        if (!(std::isfinite(x) && x > 0)) {
            std::string s = "task_weights must be 6 positive numbers; got (";
            for (int i = 0; i < 6; ++i) {
                if (i) s += ", ";
                append_repr(s, task_weights[static_cast<size_t>(i)]);
            }
            return s + ")";
        }
    }
    const std::pair<const char*, double> positive[] = {
        {"max_linear_speed", max_linear_speed},
        {"max_angular_speed", max_angular_speed},
        {"pose_gain", pose_gain},
        {"position_tolerance", position_tolerance},
        {"rotation_tolerance", rotation_tolerance},
        {"command_timeout", command_timeout},
        {"stop_velocity", stop_velocity},
        {"singularity_decelerate", singularity_decelerate},
        {"singularity_probe", singularity_probe},
        {"max_dt", max_dt}};
    for (const auto& p : positive) {
        if (!(std::isfinite(p.second) && p.second > 0)) {
            std::string s = std::string("ServoConfig.") + p.first + " must be finite and > 0; got ";
            append_repr(s, p.second);
            return s;
        }
    }
    const std::pair<const char*, double> non_negative[] = {
        {"nullspace_gain", nullspace_gain},
        {"joint_centering_gain", joint_centering_gain},
        {"damping", damping},
        {"leaving_multiplier", leaving_multiplier},
        {"escape_speed", escape_speed},
        {"joint_limit_margin", joint_limit_margin},
        {"state_tolerance", state_tolerance}};
    for (const auto& p : non_negative) {
        if (!(std::isfinite(p.second) && p.second >= 0)) {
            std::string s =
                std::string("ServoConfig.") + p.first + " must be finite and >= 0; got ";
            append_repr(s, p.second);
            return s;
        }
    }
    if (!(singularity_halt > singularity_decelerate)) {
        std::string s = "ServoConfig.singularity_halt must exceed singularity_decelerate; got ";
        append_repr(s, singularity_halt);
        s += " <= ";
        append_repr(s, singularity_decelerate);
        return s;
    }
    if (!(0.0 <= halt_scale && halt_scale < 1.0)) {
        std::string s = "ServoConfig.halt_scale must be in [0, 1); got ";
        append_repr(s, halt_scale);
        return s;
    }
    if (!(0.0 <= leaving_min_scale && leaving_min_scale <= 1.0)) {
        std::string s = "ServoConfig.leaving_min_scale must be in [0, 1]; got ";
        append_repr(s, leaving_min_scale);
        return s;
    }
    if (!(0.0 <= smoothing && smoothing < 1.0)) {
        std::string s = "ServoConfig.smoothing must be in [0, 1); got ";
        append_repr(s, smoothing);
        return s;
    }
    if (has_nullspace_reference)
        for (double x : nullspace_reference)
            if (!std::isfinite(x)) return "ServoConfig.nullspace_reference must be finite";
    return "";
}

std::string ServoChain::check() const {
    const int n = dof;
    if (n < 1 || n > kServoMaxDof)
        return "the servo drives 1 to " + std::to_string(kServoMaxDof) + " joints; the chain has " +
               std::to_string(n);
    const auto nn = static_cast<size_t>(n);
    if (joint_names.size() != nn || Rs.size() != nn || ps.size() != nn || kinds.size() != nn ||
        lower.size() != nn || upper.size() != nn || velocity.size() != nn ||
        acceleration.size() != nn || jerk.size() != nn || continuous.size() != nn)
        return "every per-joint field of the servo chain needs " + std::to_string(n) + " entries";
    if (linear_rows.size() + quadrant_rows.size() > static_cast<size_t>(kServoMaxRows))
        return "the servo enforces at most " + std::to_string(kServoMaxRows) +
               " coupled-constraint rows";
    for (const auto& r : linear_rows)
        if (r.a.size() != nn)
            return "coupled constraint " + r.name + " needs " + std::to_string(n) + " coefficients";
    for (const auto& r : quadrant_rows)
        if (r.i < 0 || r.i >= n || r.j < 0 || r.j >= n || r.i == r.j)
            return "coupled constraint " + r.name + " names a joint outside the chain";
    for (size_t i = 0; i < nn; ++i) {
        if (std::isnan(lower[i]) || std::isnan(upper[i]) || lower[i] > upper[i])
            return "joint '" + joint_names[i] + "' has lower > upper";
        if (!(velocity[i] > 0) || !(acceleration[i] > 0) || !(jerk[i] > 0))
            return "joint '" + joint_names[i] + "' needs positive rate limits";
    }
    if (!(std::isfinite(kinematic_margin) && kinematic_margin >= 0))
        return "kinematic_margin must be finite and >= 0";
    return "";
}

Chain ServoChain::kinematics() const {
    std::vector<Joint> joints(static_cast<size_t>(dof));
    for (int i = 0; i < dof; ++i) {
        const size_t s = static_cast<size_t>(i);
        Joint& j = joints[s];
        j.name = "j" + std::to_string(i);  // only the kinematics: names need not be valid
        j.type = kinds[s] == 1 ? JointType::Prismatic : JointType::Revolute;
        for (int r = 0; r < 3; ++r) {
            for (int c = 0; c < 3; ++c) j.origin.m[r][c] = Rs[s][static_cast<size_t>(3 * r + c)];
            j.origin.m[r][3] = ps[s][static_cast<size_t>(r)];
        }
        j.axis = {0.0, 0.0, 1.0};
    }
    Mat4 end;
    for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 3; ++c) end.m[r][c] = R_end[static_cast<size_t>(3 * r + c)];
        end.m[r][3] = p_end[static_cast<size_t>(r)];
    }
    return Chain(joints, end);
}

ServoChain ServoChain::from_chain(const Chain& chain) {
    ServoChain c;
    const int n = chain.dof();
    c.dof = n;
    for (int i = 0; i < n; ++i) {
        const Joint& j = chain.joint(i);
        c.joint_names.push_back(j.name);
        std::array<double, 9> R{};
        std::array<double, 3> p{};
        for (int k = 0; k < 9; ++k) R[static_cast<size_t>(k)] = chain.canonical_rotation(i)[k];
        for (int k = 0; k < 3; ++k) p[static_cast<size_t>(k)] = chain.canonical_translation(i)[k];
        c.Rs.push_back(R);
        c.ps.push_back(p);
        c.kinds.push_back(chain.is_prismatic(i) ? 1 : 0);
        c.lower.push_back(chain.lower()[i]);
        c.upper.push_back(chain.upper()[i]);
        c.velocity.push_back(chain.velocity_limits()[i]);
        c.acceleration.push_back(chain.acceleration_limits()[i]);
        c.jerk.push_back(chain.jerk_limits()[i]);
        c.continuous.push_back(chain.is_continuous(i) ? 1 : 0);
    }
    for (int k = 0; k < 9; ++k) c.R_end[static_cast<size_t>(k)] = chain.canonical_end_rotation()[k];
    for (int k = 0; k < 3; ++k)
        c.p_end[static_cast<size_t>(k)] = chain.canonical_end_translation()[k];
    c.kinematic_margin = chain.kinematic_margin();
    // packed order: every linear row, then every quadrant row (the Python servo's order)
    for (const LinearConstraint& lc : chain.linear_constraints()) {
        for (int r = 0; r < lc.rows; ++r) {
            ServoLinearRow row;
            for (int i = 0; i < n; ++i) row.a.push_back(lc.A[static_cast<size_t>(r * n + i)]);
            row.b = lc.b[static_cast<size_t>(r)];
            row.name = lc.name;
            c.linear_rows.push_back(row);
        }
    }
    for (const QuadrantConstraint& qc : chain.quadrant_constraints()) {
        ServoQuadrantRow row;
        row.i = qc.joint_i;
        row.j = qc.joint_j;
        for (int a = 0; a < 2; ++a)
            for (int b = 0; b < 2; ++b)
                for (int k = 0; k < 4; ++k)
                    row.table[static_cast<size_t>(a * 2 + b)][static_cast<size_t>(k)] =
                        qc.table[a][b][k];
        row.name = qc.name + (qc.description.empty() ? std::string() : " (" + qc.description + ")");
        c.quadrant_rows.push_back(row);
    }
    return c;
}

}  // namespace ikstack
