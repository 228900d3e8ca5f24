"""MJCF models the MJCF-loader tests and the FK table share.

Reference values always come from MuJoCo's own ``mj_kinematics``; nothing here calls ikstack
to compute a pose.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: a hand-written arm exercising what the compiler folds: degrees, euler and axisangle
#: orientations, a <frame>, a hinge with a reference angle, two joints in one body (one
#: off-centre), a slide joint, an unlimited hinge, a tool site, a gripper branch, a ball joint
#: on a side branch and a free-floating object (neither on the chain's path).
HAND_WRITTEN = """
<mujoco model="handwritten">
  <compiler angle="degree" eulerseq="xyz"/>
  <default>
    <joint damping="0.1" limited="true" range="-150 150"/>
    <geom size="0.03" mass="0.5"/>
  </default>
  <worldbody>
    <body name="object" pos="1 1 0"><freejoint name="object_free"/>
      <geom type="box" size=".02 .02 .02"/></body>
    <body name="pedestal" pos="0.1 -0.2 0.3" euler="0 0 30">
      <geom type="cylinder" size="0.05 0.1"/>
      <body name="l1" pos="0 0 0.1">
        <joint name="j1" axis="0 0 1" ref="20"/>
        <geom type="capsule" fromto="0 0 0 0 0 0.2"/>
        <frame pos="0 0.05 0.2" euler="90 0 0">
          <body name="l2" axisangle="0 1 0 15">
            <joint name="j2" axis="1 0 0"/>
            <joint name="j2b" axis="0 1 1" pos="0.02 0.03 -0.01" range="-60 80"/>
            <geom type="capsule" fromto="0 0 0 0.3 0 0"/>
            <body name="l3" pos="0.3 0 0" quat="0.9 0.1 -0.2 0.3">
              <joint name="slide" type="slide" axis="1 0.5 0" range="-0.05 0.1" ref="0.02"/>
              <geom type="box" size=".02 .02 .02"/>
              <body name="l4" pos="0.1 0.02 0">
                <joint name="roll" axis="1 0 0" limited="false"/>
                <geom type="capsule" fromto="0 0 0 0.1 0 0"/>
                <site name="tool" pos="0.12 0.01 -0.02" euler="10 -20 30"/>
                <body name="finger_a" pos="0.1 0.02 0">
                  <joint name="fa" type="slide" axis="0 1 0" range="0 0.04"/>
                  <geom type="box" size=".01 .01 .02"/>
                </body>
                <body name="finger_b" pos="0.1 -0.02 0">
                  <joint name="fb" type="slide" axis="0 -1 0" range="0 0.04"/>
                  <geom type="box" size=".01 .01 .02"/>
                </body>
              </body>
            </body>
          </body>
        </frame>
      </body>
      <body name="camera_mount" pos="0 0.1 0">
        <joint name="pan_tilt" type="ball" limited="false"/>
        <geom type="sphere" size="0.02"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

#: bundled URDFs MuJoCo converts to MJCF (name, file, tip body in the converted model)
BUNDLED_URDFS = (
    ("ur5 (Universal Robots)", "ur5.urdf", "tool0"),
    ("iiwa14 (KUKA)", "iiwa14.urdf", "iiwa_link_ee"),
    ("panda (Franka)", "panda.urdf", "panda_hand_tcp"),
    ("rizon4 (Flexiv)", "rizon4.urdf", "flange"),
    ("arx_x5 (ARX)", "arx_x5.urdf", "eef_link"),
    ("marvin_left (Tianji)", "marvin_left.urdf", "flange"),
    ("scara", "scara.urdf", "flange"),
)


@dataclass(frozen=True)
class MJCFCase:
    label: str
    path: Path
    base: str | None
    tip: str


def urdf_to_mjcf(urdf: Path, out: Path) -> Path:
    """Let MuJoCo compile a URDF (static bodies kept, tiny masses bounded) and save its MJCF."""
    import mujoco

    text = urdf.read_text(encoding="utf-8")
    ext = '<mujoco><compiler boundmass="0.01" boundinertia="0.0001" fusestatic="false"/></mujoco>'
    text = re.sub(r"(<robot[^>]*>)", lambda m: m.group(1) + ext, text, count=1)
    model = mujoco.MjModel.from_xml_string(text)
    mujoco.mj_saveLastXML(str(out), model)
    return out


def mujoco_pose(model, data, base: str | None, tip: str) -> np.ndarray:
    """``T_base_tip`` from MuJoCo's own kinematics (``data`` already run through mj_kinematics)."""
    import mujoco

    def frame(kind: str, name: str) -> np.ndarray:
        T = np.eye(4)
        if kind == "site":
            i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, name)
            T[:3, :3] = data.site_xmat[i].reshape(3, 3)
            T[:3, 3] = data.site_xpos[i]
        else:
            i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, name)
            T[:3, :3] = data.xmat[i].reshape(3, 3)
            T[:3, 3] = data.xpos[i]
        return T

    is_site = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, tip) >= 0
    T_world_tip = frame("site" if is_site else "body", tip)
    if base is None:
        return T_world_tip
    T_world_base = frame("body", base)
    R, p = T_world_base[:3, :3], T_world_base[:3, 3]
    T_base_world = np.eye(4)
    T_base_world[:3, :3] = R.T
    T_base_world[:3, 3] = -R.T @ p
    return T_base_world @ T_world_tip


def max_fk_gap(chain, path: Path, base: str | None, tip: str, n: int, seed: int) -> float:
    """Largest |T_chain - T_mujoco| entry over ``n`` random configurations (other joints random
    too)."""
    import mujoco

    model = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(model)
    rng = np.random.default_rng(seed)
    adr = [
        int(model.jnt_qposadr[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, j)])
        for j in chain.joint_names
    ]
    worst = 0.0
    for _ in range(n):
        data.qpos[:] = model.qpos0 + rng.uniform(-0.5, 0.5, model.nq)
        q = chain.random_q(rng, unbounded_range=4.0)
        data.qpos[adr] = q
        mujoco.mj_normalizeQuat(model, data.qpos)
        mujoco.mj_kinematics(model, data)
        worst = max(worst, float(np.abs(chain.fk(q) - mujoco_pose(model, data, base, tip)).max()))
    return worst
