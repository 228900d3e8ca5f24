// The MotionGenerator extension point: turns a desired velocity into the cycle's reference.
//
// The servo hands a generator the measured state, the desired velocity (solver output after
// singularity scaling and smoothing) and this cycle's velocity box (velocity, acceleration,
// braking-distance and jerk bounds combined). A custom generator (an online trajectory
// generator, a spline) is a trusted numerical backend: it must keep the whole interval and the
// stopping trajectory after it within limits and continuity, and honour any jerk contract it
// declares. The servo re-validates only its final reference (finite, inside the box, inside
// the position limits); a reference that fails becomes a latched SOLVER_ERROR and a smooth
// halt.
#pragma once

#include "ikstack/linalg.hpp"

namespace ikstack {

class MotionGenerator {
public:
    virtual ~MotionGenerator() = default;
    /// The reference at the end of the cycle into q_ref and dq_ref (dof entries each).
    /// q, dq: measured state [rad, rad/s]; desired_velocity: what the task asks for;
    /// lower, upper: the cycle's velocity box; q_lower, q_upper: hard position limits;
    /// dt: cycle duration [s]. Returns false on failure (the servo latches a SOLVER_ERROR);
    /// `error()` may then say why. Must not throw in a real-time loop (the servo also catches).
    virtual bool generate(const VecN& q, const VecN& dq, const VecN& desired_velocity,
                          const VecN& lower, const VecN& upper, const VecN& q_lower,
                          const VecN& q_upper, double dt, VecN& q_ref, VecN& dq_ref) = 0;
    /// Forget internal state (called by the servo's reset).
    virtual void reset() {}
    /// Why the last generate() failed ("" when it did not).
    virtual const char* error() const { return ""; }
};

/// The default: scale into the box (direction kept where possible), then q + dq dt clipped to
/// the position limits.
class BoxIntegrator : public MotionGenerator {
public:
    bool generate(const VecN& q, const VecN& dq, const VecN& desired_velocity,
                  const VecN& lower, const VecN& upper, const VecN& q_lower,
                  const VecN& q_upper, double dt, VecN& q_ref, VecN& dq_ref) override;
};

}  // namespace ikstack
