"""A generated corpus of malformed URDFs: every one is a named error (the element and its
line), from the library and from every command that takes a URDF, and nothing is written."""

from __future__ import annotations

import pytest
from reliability_corpus import write_case
from urdf_corpus import URDF_ARG_CASES, good, j2, joint, robot, urdf_cases

from ikstack.cli.main import main
from ikstack.errors import ModelError, URDFError
from ikstack.model import load_urdf

CASES = urdf_cases()


def test_the_corpus_holds_at_least_50_malformed_urdfs():
    assert len(CASES) + len(URDF_ARG_CASES) >= 50
    assert len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_malformed_urdf_is_a_named_error(case, tmp_path):
    cid, content, err, words = case
    path = write_case(tmp_path, f"{cid}.urdf", content)
    with pytest.raises(ModelError) as info:
        load_urdf(path)
    assert type(info.value) is err, f"{cid}: {type(info.value).__name__}: {info.value}"
    msg = str(info.value)
    assert "\n" not in msg
    for w in words:
        assert w in msg, f"{cid}: {w!r} not in {msg!r}"
    if err is URDFError:
        assert str(path) in msg
    if isinstance(content, str):  # the same text given as a string (when it looks like XML)
        if content.lstrip().startswith("<"):
            with pytest.raises(err):
                load_urdf(content)


@pytest.mark.parametrize("case", URDF_ARG_CASES, ids=[c[0] for c in URDF_ARG_CASES])
def test_unknown_or_unconnected_base_and_tip_are_named(case):
    cid, kwargs, err, words = case
    with pytest.raises(err) as info:
        load_urdf(good(), **kwargs)
    for w in words:
        assert w in str(info.value)


@pytest.mark.parametrize("case", CASES[::4], ids=[c[0] for c in CASES[::4]])
def test_every_command_taking_a_urdf_answers_with_one_line_and_writes_nothing(
    case, tmp_path, capsys
):
    cid, content, err, words = case
    path = write_case(tmp_path, f"{cid}.urdf", content)
    episodes = tmp_path / "episodes"
    write_case(episodes, "e.csv", "timestamp,x,y,z,qw,qx,qy,qz\n0,0.4,0,0.4,1,0,0,0\n")
    out = tmp_path / "out"
    for argv in (
        ["fk", "--urdf", str(path)],
        ["ik", "--urdf", str(path), "--pose", "0.4", "0", "0.4", "1", "0", "0", "0"],
        ["servo-demo", "--urdf", str(path), "--steps", "2"],
        ["validate", str(path), "--no-progress"],
        ["solve", "--urdf", str(path), str(episodes), "-o", str(out)],
    ):
        assert main(argv) == 2, argv
        cap = capsys.readouterr()
        lines = cap.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"ikstack {argv[0]}: error:"), cap.err
        assert words[0] in lines[0]
        assert "Traceback" not in cap.err and cap.out == ""
    assert not out.exists()


def test_a_latin1_urdf_that_declares_its_encoding_loads(tmp_path):
    text = '<?xml version="1.0" encoding="ISO-8859-1"?>\n' + good().replace('"l3"', '"l3_\xe9"')
    path = tmp_path / "latin.urdf"
    path.write_bytes(text.encode("latin-1"))
    chain = load_urdf(path)
    assert chain.tip == "l3_\xe9" and chain.dof == 3
    assert load_urdf(text).tip == "l3_\xe9"  # the same document given as text


def test_a_zero_velocity_limit_is_unlimited_and_said_in_the_description():
    chain = load_urdf(j2(limit='<limit lower="-1" upper="1" velocity="0"/>'))
    assert chain.velocity_limits[1] == float("inf")
    assert chain.velocity_limits[0] == 1.0
    assert any("j2" in n and "0" in n for n in chain.notes)
    assert "note:" in chain.describe() and "j2" in chain.describe()


def test_a_cycle_with_the_base_or_tip_in_it_does_not_hang():
    text = robot(["w", "a", "b"], [joint("ja", "a", "b"), joint("jb", "b", "a")])
    for kw in ({"base": "a", "tip": "b"}, {"base": "w", "tip": "a"}, {"tip": "b"}):
        with pytest.raises(URDFError, match="cycle"):
            load_urdf(text, **kw)
