"""The servo cycle compiles once: the one-call PoseCommand path, its fault cycle and the
general path (other commands) share one specialization of the compiled cycle.

Each extra specialization of ``packed_cycle`` recompiles the whole cycle with its solvers (tens
of seconds on a first run); a literal argument at a compiled call site (``False``, ``1``, a
module constant) is enough to create one.
"""

from __future__ import annotations

import numpy as np

import ikstack.robots as robots
from ikstack.diffik import BoxQPSolver
from ikstack.servo import JointState, PoseCommand, Servo, ServoConfig, TwistCommand, pose_cycle
from ikstack.servo.cycle import packed_cycle


def _packed_cycle_calls_in_pose_step() -> set[str]:
    """Argument types of pose_step's calls to packed_cycle, by numba's type inference alone
    (no code generation; callees load from the cache or compile, as on a first call)."""
    from numba.core.compiler import CompilerBase, DefaultPassBuilder, Flags
    from numba.core.compiler_machinery import PassManager
    from numba.core.registry import cpu_target

    class TypeOnly(CompilerBase):
        def define_pipelines(self):
            pm = PassManager("type_only")
            for p in (DefaultPassBuilder.define_untyped_pipeline(self.state).passes
                      + DefaultPassBuilder.define_typed_pipeline(self.state).passes):
                pm.add_pass(*p)
            pm.finalize()
            return [pm]

    sig = pose_cycle._SIGNATURE
    flags = Flags()
    flags.nrt = True  # as numba's own jit: callees compiled from here may allocate arrays
    c = TypeOnly(cpu_target.typing_context, cpu_target.target_context, None, sig.args,
                 sig.return_type, flags, {})
    try:
        c.compile_extra(pose_cycle.pose_step.py_func)
    except AttributeError:  # no lowering stage, so no compile result: typing is all we need
        pass
    st = c.state
    return {str(s.args) for e, s in st.calltypes.items()
            if getattr(e, "op", None) == "call" and s is not None
            and "packed_cycle" in str(st.typemap.get(e.func.name, ""))}


def test_pose_step_calls_the_cycle_without_literal_arguments():
    """A literal at a compiled call site (False, 1, a module constant) types as Literal[...]
    and makes numba compile the whole cycle again for it; both calls must share one type."""
    called = _packed_cycle_calls_in_pose_step()
    assert len(called) == 1, called
    assert "Literal" not in next(iter(called))


def test_pose_twist_and_fault_cycles_share_one_compiled_cycle():
    arm = robots.load("panda").with_limits(acceleration=[15, 7.5, 10, 12.5, 15, 20, 20])
    servo = Servo(arm, ServoConfig(), differential_ik=BoxQPSolver())
    q = np.array([0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.785])
    dq = np.zeros(7)
    T = arm.fk(q)
    T[:3, 3] += 0.01
    r = servo.step(JointState(q, dq, 0), PoseCommand(T, 0), 0.001, 0)  # the one-call path
    assert r.action.name == "TRACK"
    twist = TwistCommand(np.array([0.01, 0.0, 0.0, 0.0, 0.0, 0.0]), "base", 1_000_000)
    r = servo.step(JointState(q, dq, 1_000_000), twist, 0.001, 1_000_000)  # the general path
    assert r.action.name == "TRACK"
    assert len(packed_cycle.signatures) == 1, packed_cycle.signatures
