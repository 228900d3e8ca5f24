"""The chain description file (``ikstack-chain 1``): exact round trips, malformed files naming
the line and field, and the ``ikstack export`` command."""

from __future__ import annotations

import math
import os
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ikstack import robots
from ikstack.cli.main import main
from ikstack.errors import ChainFileError, InputError, StorageError
from ikstack.model import (
    Chain,
    JointType,
    LinearJointConstraint,
    QuadrantPolynomialConstraint,
    from_dh,
)
from ikstack.model.chain_file import chain_from_text, chain_to_text


def assert_same(a: Chain, b: Chain) -> None:
    """Every field equal, floats bit for bit."""
    for name in (
        "joint_names",
        "joint_types",
        "link_names",
        "base",
        "tip",
        "tcp_name",
        "role",
        "name",
        "source",
        "notes",
        "kinematic_margin",
    ):
        assert getattr(a, name) == getattr(b, name), name
    for name in (
        "axes",
        "origins",
        "T_last_tip",
        "T_tip_tcp",
        "lower",
        "upper",
        "velocity_limits",
        "acceleration_limits",
        "jerk_limits",
    ):
        x, y = getattr(a, name), getattr(b, name)
        assert x.shape == y.shape and np.array_equal(x, y), name
        assert np.array_equal(np.signbit(x), np.signbit(y)), name
    assert len(a.constraints) == len(b.constraints)
    for c, d in zip(a.constraints, b.constraints, strict=True):
        assert type(c) is type(d) and c.name == d.name
        if isinstance(c, LinearJointConstraint):
            assert np.array_equal(c.A, d.A) and np.array_equal(c.b, d.b)
        else:
            assert (c.joint_i, c.joint_j, c.rows, c.description) == (
                d.joint_i,
                d.joint_j,
                d.rows,
                d.description,
            )


@pytest.mark.parametrize("name", robots.names())
def test_every_bundled_robot_round_trips_exactly(name, tmp_path):
    chain = robots.load(name)
    path = tmp_path / f"{name}.chain"
    chain.to_file(path)
    back = Chain.from_file(path)
    assert_same(chain, back)
    assert chain_to_text(back) == path.read_text()


def _rotation(v: np.ndarray) -> np.ndarray:
    """A rotation from a rotation vector (Rodrigues), written here."""
    th = float(np.linalg.norm(v))
    if th < 1e-12:
        return np.eye(3)
    k = v / th
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(th) * K + (1 - math.cos(th)) * K @ K


finite = st.floats(-10, 10, allow_nan=False, allow_subnormal=True)


@st.composite
def chains(draw) -> Chain:
    n = draw(st.integers(1, 7))
    types = [draw(st.sampled_from(list(JointType))) for _ in range(n)]
    origins = []
    for _ in range(n):
        T = np.eye(4)
        T[:3, :3] = _rotation(np.array([draw(finite) for _ in range(3)]))
        T[:3, 3] = [draw(finite) for _ in range(3)]
        origins.append(T)
    axes = np.array([[draw(finite) for _ in range(3)] for _ in range(n)]) + np.array([0, 0, 11.0])
    lo = np.array([draw(st.one_of(st.just(-math.inf), st.floats(-5, -1e-3))) for _ in range(n)])
    hi = np.array([draw(st.one_of(st.just(math.inf), st.floats(1e-3, 5))) for _ in range(n)])
    rate = st.one_of(st.just(math.inf), st.floats(1e-6, 1e6))
    cons: list = []
    if draw(st.booleans()):
        A = np.array([[draw(finite) for _ in range(n)] for _ in range(draw(st.integers(1, 3)))])
        cons.append(LinearJointConstraint(A, np.array([draw(finite) for _ in A]), name="lin"))
    if n >= 2 and draw(st.booleans()):
        cons.append(
            QuadrantPolynomialConstraint.abs_sum(
                0, n - 1, draw(st.floats(0, 3)), draw(st.floats(0.1, 3)), name="quad"
            )
        )
    chain = Chain(
        joint_names=tuple(f"j{i}" for i in range(n)),
        joint_types=tuple(types),
        axes=axes,
        origins=np.array(origins),
        T_last_tip=origins[-1],
        lower=lo,
        upper=hi,
        velocity_limits=np.array([draw(rate) for _ in range(n)]),
        acceleration_limits=np.array([draw(rate) for _ in range(n)]),
        jerk_limits=np.array([draw(rate) for _ in range(n)]),
        constraints=tuple(cons),
        kinematic_margin=draw(st.floats(0, 0.2)),
        name=draw(st.sampled_from(["", "arm x"])),
        notes=("a note",) if draw(st.booleans()) else (),
    )
    if draw(st.booleans()):
        chain = chain.with_tcp(origins[0], "tool")
    return chain


@settings(max_examples=60, deadline=None)
@given(chains())
def test_random_chains_round_trip_exactly(chain):
    assert_same(chain, chain_from_text(chain_to_text(chain)))


def test_dh_chain_round_trips_with_its_fk(tmp_path):
    chain = from_dh(
        [[0.1, 0.0, 0.2, 0.5], [0.0, 0.3, 0.4, -1.0]],
        "standard",
        joint_types=["revolute", "prismatic"],
        lower=[-1, 0],
        upper=[1, 0.3],
    )
    chain.to_file(tmp_path / "dh.chain")
    back = Chain.from_file(tmp_path / "dh.chain")
    q = np.array([0.4, 0.1])
    assert np.array_equal(back.fk(q), chain.fk(q))


GOOD = """ikstack-chain 1
# a comment
name two links
base base
tip tool
role arm
margin 0.01
joint j1 revolute l1 0 0 0 1 0 0 0 1 0 0 0 1 0 0 1 -3 3 2 3 inf
joint j2 continuous l2 0.5 0 0 1 0 0 0 1 0 0 0 1 0 0 1 -inf inf 2 3 inf
tip_transform 0.5 0 0 1 0 0 0 1 0 0 0 1
tcp pen 0 0 0.1 1 0 0 0 1 0 0 0 1
constraint linear sum 1 1 2.5
constraint linear sum -1 -1 2.5
constraint quadrant diamond 0 1 1 1 0 -1 2 1 0 1 0 1 2 1 0 0 0 -1 -2 0 1 0 0 1 -2 0 a diamond
"""

J1 = "joint j1 revolute l1 0 0 0 1 0 0 0 1 0 0 0 1 0 0 1"
QUAD = "constraint quadrant diamond 0"

#: (line replaced, new text, line named, field named, piece of the message) as in the C++ test
BAD = [
    (1, "ikstack-chian 1", 1, "header", "expected 'ikstack-chain 1'"),
    (1, "ikstack-chain 2", 1, "version", "unsupported version '2'"),
    (8, f"{J1} -3 abc 2 3 inf", 8, "upper", "expected a number, got 'abc'"),
    (8, f"{J1} -3 3 2 3", 8, "", "23 fields"),
    (8, J1.replace("revolute", "rotary") + " -3 3 2 3 inf", 8, "type", "'rotary'"),
    (8, f"{J1} -3 3 0 3 inf", 8, "velocity", "must be positive"),
    (8, f"{J1} -3 3 2 nan inf", 8, "acceleration", "NaN"),
    (
        8,
        J1.replace("0 0 0 1 0 0", "0 0 0 1 0.5 0", 1) + " -3 3 2 3 inf",
        8,
        "origin.r00",
        "orthonormal",
    ),
    (8, J1.replace("l1 0 0 0", "l1 0 0 inf", 1) + " -3 3 2 3 inf", 8, "origin.z", "finite"),
    (8, J1[:-1] + "0 -3 3 2 3 inf", 8, "axis.x", "zero"),
    (8, f"{J1} 3 -3 2 3 inf", 8, "upper", "upper < lower"),
    (
        9,
        "joint j1 continuous l2 0.5 0 0 1 0 0 0 1 0 0 0 1 0 0 1 -inf inf 2 3 inf",
        9,
        "name",
        "named twice",
    ),
    (5, "tip", 5, "tip", "one name"),
    (6, "role arms", 6, "role", "'arm' or 'gripper'"),
    (7, "margin -1", 7, "margin", ">= 0"),
    (3, "base base", 4, "base", "given twice"),
    (3, "flange 1 2 3", 3, "keyword", "unknown keyword 'flange'"),
    (10, None, 13, "tip_transform", "no 'tip_transform'"),
    (10, "tip_transform 0.5 0 0 1 0 0 0 1 0 0 0", 10, "", "needs 12 values"),
    (11, "tcp pen 0 0 0.1 1 0 0 0 1 0 0 0 -1", 11, "r00", "orthonormal"),
    (12, "constraint linear sum 1 2.5", 12, "", "a linear row has 2 coefficients"),
    (12, "constraint linear sum 1 x 2.5", 12, "a1", "expected a number, got 'x'"),
    (12, "constraint cubic sum 1 1 2.5", 12, "kind", "unknown constraint kind 'cubic'"),
    (
        14,
        f"{QUAD} 5 1 1 0 -1 2 1 0 1 0 1 2 1 0 0 0 -1 -2 0 1 0 0 1 -2 0",
        14,
        "j",
        "joint index 5 does not exist",
    ),
    (
        14,
        f"{QUAD} 1 2 1 0 -1 2 1 0 1 0 1 2 1 0 0 0 -1 -2 0 1 0 0 1 -2 0",
        14,
        "row1.i_nonneg",
        "0 or 1",
    ),
    (
        14,
        f"{QUAD} 1 1 1 0 -1 2 1 1 1 0 1 2 1 0 0 0 -1 -2 0 1 0 0 1 -2 0",
        14,
        "row2.i_nonneg",
        "same sign quadrant",
    ),
    (14, f"{QUAD} 1 1 1 0 -1 2 1", 14, "", "needs 28 values"),
]


def test_the_hand_written_file_reads():
    c = chain_from_text(GOOD, "good.chain")
    assert c.dof == 2 and c.name == "two links" and c.tcp_name == "pen"
    assert c.joint_types[1] == JointType.CONTINUOUS
    lin, quad = c.constraints
    assert lin.num_rows == 2 and quad.description == "a diamond"
    assert c.constraints_satisfied(np.array([0.5, 0.5]))
    assert not c.constraints_satisfied(np.array([0.5, 1.6]))


@pytest.mark.parametrize(
    "line,text,want_line,field,says", BAD, ids=[f"{b[3] or 'count'}-{i}" for i, b in enumerate(BAD)]
)
def test_malformed_files_name_the_line_and_field(line, text, want_line, field, says, tmp_path):
    rows = GOOD.splitlines()
    if text is None:
        del rows[line - 1]
    else:
        rows[line - 1] = text
    path = tmp_path / "arm.chain"
    path.write_text("\n".join(rows) + "\n")
    with pytest.raises(ChainFileError) as e:
        Chain.from_file(path)
    err = e.value
    assert isinstance(err, InputError)
    assert (err.path, err.line, err.field) == (str(path), want_line, field)
    msg = str(err)
    assert msg.startswith(f"{path}:{want_line}: ")
    assert says in msg
    if field:
        assert f"field '{field}'" in msg
    assert "\n" not in msg
    assert str(pickle.loads(pickle.dumps(err))) == msg


def test_empty_missing_and_binary_files(tmp_path):
    with pytest.raises(ChainFileError, match=r"^e.chain:1: empty file"):
        chain_from_text("# nothing\n\n", "e.chain")
    with pytest.raises(StorageError, match="cannot read"):
        Chain.from_file(tmp_path / "missing.chain")
    (tmp_path / "bin.chain").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ChainFileError, match="not UTF-8"):
        Chain.from_file(tmp_path / "bin.chain")


def test_the_writer_refuses_what_the_file_cannot_hold(tmp_path):
    chain = robots.load("planar2")
    bad = chain.replace(joint_names=("joint 1", "joint2"))
    with pytest.raises(InputError, match="whitespace"):
        bad.to_file(tmp_path / "x.chain")
    with pytest.raises(InputError, match="line break"):
        chain.replace(name="two\nlines").to_file(tmp_path / "x.chain")
    with pytest.raises(InputError, match="not .json"):
        chain.to_file(tmp_path / "x.json")
    assert os.listdir(tmp_path) == []


def run_cli(argv, capsys):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_export_cli_writes_a_file_that_reads_back(tmp_path, capsys):
    path = tmp_path / "m.chain"
    code, out, err = run_cli(["export", "--robot", "marvin_left", "-o", str(path)], capsys)
    assert code == 0, err
    assert "7 joints" in out and "1 coupled constraint" in out
    assert_same(robots.load("marvin_left"), Chain.from_file(path))
    urdf = robots.data_path("planar2.urdf")
    path2 = tmp_path / "p.chain"
    code, out, err = run_cli(
        [
            "export",
            "--urdf",
            str(urdf),
            "--base",
            "base",
            "--tip",
            "tool",
            "-o",
            str(path2),
            "--json",
        ],
        capsys,
    )
    assert code == 0, err
    assert '"dof": 2' in out
    assert Chain.from_file(path2).dof == 2


@pytest.mark.parametrize(
    "argv,code,says",
    [
        (["--robot", "nope"], 2, "unknown robot 'nope'"),
        (["--robot", "ur5", "-o", "{tmp}/x.yaml"], 2, "not .yaml"),
        (["--robot", "ur5", "-o", "{tmp}/no/such/dir/x.chain"], 4, "cannot write"),
        (["--robot", "ur5", "--urdf", "a.urdf", "-o", "{tmp}/x.chain"], 2, "--urdf"),
    ],
)
def test_export_cli_errors_are_one_line(argv, code, says, tmp_path, capsys):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    if "-o" not in argv:
        argv += ["-o", str(tmp_path / "x.chain")]
    try:
        got, out, err = run_cli(["export", *argv], capsys)
    except SystemExit as stop:  # argparse usage errors
        got, err = stop.code, capsys.readouterr().err
    assert got == code
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ikstack export: error:") and says in lines[0]
    assert "Traceback" not in err
    assert not any(p.name.endswith(".tmp") or p.suffix == ".chain" for p in tmp_path.rglob("*"))
