"""A generated corpus of malformed URDFs for the reliability tests (each one built in a
temporary folder by the tests; nothing here is checked in as data).

Each case is ``(id, content, error class, words the message must contain)``: the element
(joint or link name) and, where the parser gives one, its line.
"""

from __future__ import annotations

from ikstack.errors import UnknownLinkError, UnsupportedJointError, URDFError

LIMIT = '<limit lower="-2" upper="2" velocity="1" effort="1"/>'


def joint(
    name: str,
    parent: str,
    child: str,
    jtype: str = "revolute",
    *,
    xyz: str = "0 0 0.1",
    rpy: str = "0 0 0",
    axis: str = "0 0 1",
    limit: str | None = LIMIT,
    extra: str = "",
) -> str:
    """One ``<joint>`` element on one line."""
    lim = limit if limit is not None else ""
    type_attr = f' type="{jtype}"' if jtype is not None else ""
    return (
        f'<joint name="{name}"{type_attr}><parent link="{parent}"/><child link="{child}"/>'
        f'<origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/>{lim}{extra}</joint>'
    )


def robot(links: list[str], joints: list[str], head: str = "") -> str:
    """A URDF with one element per line: line 1 ``<robot>`` (after ``head``), then the links,
    then the joints."""
    body = [f'<link name="{n}"/>' for n in links] + joints
    return head + '<robot name="r">\n' + "\n".join(body) + "\n</robot>\n"


LINKS = ["base", "l1", "l2", "l3"]


def good(**over: str) -> str:
    """A valid 3-joint arm; ``over`` replaces joint ``j2``'s element (keyword: its text)."""
    js = [
        joint("j1", "base", "l1"),
        over.get("j2", joint("j2", "l1", "l2")),
        joint("j3", "l2", "l3"),
    ]
    return robot(LINKS, js)


def j2(**kw: object) -> str:
    """A valid 3-joint arm whose joint j2 (line 7) takes these keyword arguments."""
    return good(j2=joint("j2", "l1", "l2", **kw))  # type: ignore[arg-type]


URDFCase = tuple[str, "str | bytes", type, list[str]]


def urdf_cases() -> list[URDFCase]:
    """At least 50 malformed URDFs."""
    L6 = "line 7"  # joint j2's line
    cases: list[URDFCase] = [
        # --- structure and XML
        ("empty", "", URDFError, ["malformed XML", "line 1"]),
        ("not_xml", "hello world\n", URDFError, ["malformed XML", "line 1"]),
        ("truncated", good()[:120], URDFError, ["malformed XML", "line"]),
        ("unclosed_tag", good().replace("</robot>", ""), URDFError, ["malformed XML"]),
        (
            "mismatched_tag",
            good().replace("</robot>", "</robt>"),
            URDFError,
            ["malformed XML", "mismatched tag"],
        ),
        ("root_not_robot", "<model><link name='a'/></model>", URDFError, ["<model>", "<robot>"]),
        ("binary", bytes(range(256)) * 4, URDFError, ["malformed XML"]),
        (
            "latin1_undeclared",
            good().replace('"r"', '"r\xe9"').encode("latin-1"),
            URDFError,
            ["line 1", "0xe9", "UTF-8", "encoding"],
        ),
        (
            "undefined_entity",
            good().replace('name="r"', 'name="&robotname;"'),
            URDFError,
            ["malformed XML", "line 1", "undefined entity"],
        ),
        (
            "declared_utf8_is_latin1",
            ('<?xml version="1.0" encoding="UTF-8"?>\n' + good().replace('"r"', '"r\xe9"')).encode(
                "latin-1"
            ),
            URDFError,
            ["malformed XML", "line 2"],
        ),
        ("no_links", "<robot name='r'></robot>", URDFError, ["one root link"]),
        ("link_no_name", robot(["base", ""], []), URDFError, ["<link>", "line 3", "no name"]),
        (
            "duplicate_link",
            robot(["base", "l1", "l2", "l1"], [joint("j1", "base", "l1")]),
            URDFError,
            ["'l1'", "line 5", "line 3", "twice"],
        ),
        (
            "duplicate_joint",
            robot(
                LINKS, [joint("j1", "base", "l1"), joint("j2", "l1", "l2"), joint("j2", "l2", "l3")]
            ),
            URDFError,
            ["'j2'", "line 8", "line 7", "twice"],
        ),
        ("joint_no_type", j2(jtype=None), URDFError, ["'j2'", L6, "no type"]),
        ("joint_empty_type", j2(jtype=""), URDFError, ["'j2'", L6, "no type"]),
        ("joint_unknown_type", j2(jtype="hinge"), URDFError, ["'j2'", L6, "'hinge'"]),
        (
            "joint_no_name",
            good(j2='<joint type="revolute"><parent link="l1"/><child link="l2"/></joint>'),
            URDFError,
            ["<joint>", L6, "no name"],
        ),
        (
            "joint_no_parent",
            good(j2='<joint name="j2" type="fixed"><child link="l2"/></joint>'),
            URDFError,
            ["'j2'", L6, "parent"],
        ),
        (
            "joint_no_child",
            good(j2='<joint name="j2" type="fixed"><parent link="l1"/></joint>'),
            URDFError,
            ["'j2'", L6, "child"],
        ),
        (
            "undefined_parent",
            good(j2=joint("j2", "ghost", "l2")),
            URDFError,
            ["'j2' (line 7)", "'ghost'", "not defined"],
        ),
        ("undefined_child", good(j2=joint("j2", "l1", "ghost")), URDFError, ["'j2'", "'ghost'"]),
        (
            "two_parents",
            robot(
                LINKS,
                [joint("j1", "base", "l1"), joint("j2", "l1", "l2"), joint("j3", "base", "l2")],
            ),
            URDFError,
            ["'l2'", "'j2' (line 7)", "'j3' (line 8)", "tree"],
        ),
        # --- cycles
        (
            "cycle_base_in_loop",
            robot(["w", "a", "b"], [joint("ja", "a", "b"), joint("jb", "b", "a")]),
            URDFError,
            ["cycle", "'ja'", "'jb'"],
        ),
        (
            "pure_cycle",
            robot(["a", "b"], [joint("ja", "a", "b"), joint("jb", "b", "a")]),
            URDFError,
            ["cycle", "'ja' (line 4)", "'jb' (line 5)"],
        ),
        (
            "three_cycle",
            robot(
                ["base", "a", "b", "c"],
                [
                    joint("j0", "base", "a"),
                    joint("jab", "a", "b"),
                    joint("jbc", "b", "c"),
                    joint("jca", "c", "a"),
                ],
            ),
            URDFError,
            ["'a'"],
        ),
        (
            "disconnected_cycle",
            robot(
                ["base", "l1", "a", "b"],
                [joint("j1", "base", "l1"), joint("ja", "a", "b"), joint("jb", "b", "a")],
            ),
            URDFError,
            ["cycle", "'ja'", "'jb'"],
        ),
        (
            "self_loop",
            robot(["base", "l1"], [joint("j1", "base", "l1"), joint("jself", "l1", "l1")]),
            URDFError,
            ["'l1'"],
        ),
        (
            "self_loop_only",
            robot(["a"], [joint("jself", "a", "a")]),
            URDFError,
            ["cycle", "'jself'"],
        ),
        # --- numbers
        ("xyz_huge", j2(xyz="1e308 0 0"), URDFError, ["'j2'", L6, "xyz", "1e308"]),
        ("xyz_absurd", j2(xyz="0 0 50000"), URDFError, ["'j2'", L6, "xyz"]),
        ("xyz_nan", j2(xyz="nan 0 0"), URDFError, ["'j2'", L6, "xyz", "finite"]),
        ("xyz_inf", j2(xyz="0 inf 0"), URDFError, ["'j2'", L6, "xyz", "finite"]),
        ("xyz_two_numbers", j2(xyz="0 0"), URDFError, ["'j2'", L6, "xyz", "3"]),
        ("xyz_four_numbers", j2(xyz="0 0 0 0"), URDFError, ["'j2'", L6, "xyz"]),
        ("xyz_letters", j2(xyz="a b c"), URDFError, ["'j2'", L6, "xyz"]),
        ("xyz_empty", j2(xyz=""), URDFError, ["'j2'", L6, "xyz"]),
        ("rpy_nan", j2(rpy="0 nan 0"), URDFError, ["'j2'", L6, "rpy"]),
        ("rpy_absurd", j2(rpy="0 0 1e300"), URDFError, ["'j2'", L6, "rpy"]),
        ("rpy_comma_separated", j2(rpy="0,0,0"), URDFError, ["'j2'", L6, "rpy"]),
        ("axis_zero", j2(axis="0 0 0"), URDFError, ["'j2'", L6, "zero axis"]),
        ("axis_nan", j2(axis="0 nan 1"), URDFError, ["'j2'", L6, "axis"]),
        ("axis_huge", j2(axis="0 0 1e300"), URDFError, ["'j2'", L6, "axis"]),
        (
            "limit_lower_nan",
            j2(limit='<limit lower="nan" upper="1" velocity="1"/>'),
            URDFError,
            ["'j2'", L6, "lower"],
        ),
        (
            "limit_upper_inf",
            j2(limit='<limit lower="-1" upper="inf" velocity="1"/>'),
            URDFError,
            ["'j2'", L6, "upper"],
        ),
        (
            "limit_upper_text",
            j2(limit='<limit lower="-1" upper="one" velocity="1"/>'),
            URDFError,
            ["'j2'", L6, "upper", "'one'"],
        ),
        (
            "limit_absurd",
            j2(limit='<limit lower="-1e300" upper="1" velocity="1"/>'),
            URDFError,
            ["'j2'", L6, "lower"],
        ),
        (
            "limit_inverted",
            j2(limit='<limit lower="1" upper="-1" velocity="1"/>'),
            URDFError,
            ["'j2'", L6, "lower", "upper"],
        ),
        (
            "velocity_negative",
            j2(limit='<limit lower="-1" upper="1" velocity="-5"/>'),
            URDFError,
            ["'j2'", L6, "velocity", "negative"],
        ),
        (
            "velocity_nan",
            j2(limit='<limit lower="-1" upper="1" velocity="nan"/>'),
            URDFError,
            ["'j2'", L6, "velocity"],
        ),
        (
            "velocity_text",
            j2(limit='<limit lower="-1" upper="1" velocity="fast"/>'),
            URDFError,
            ["'j2'", L6, "velocity", "'fast'"],
        ),
        (
            "velocity_inf",
            j2(limit='<limit lower="-1" upper="1" velocity="inf"/>'),
            URDFError,
            ["'j2'", L6, "velocity"],
        ),
        ("revolute_no_limit", j2(limit=None), URDFError, ["'j2'", L6, "<limit>"]),
        (
            "prismatic_no_limit",
            j2(jtype="prismatic", limit=None),
            URDFError,
            ["'j2'", L6, "<limit>"],
        ),
        # --- what a serial chain cannot hold
        (
            "mimic_on_path",
            j2(extra='<mimic joint="j1"/>'),
            UnsupportedJointError,
            ["'j2'", L6, "mimic"],
        ),
        (
            "floating_on_path",
            j2(jtype="floating", limit=None),
            UnsupportedJointError,
            ["'j2'", L6, "floating"],
        ),
        (
            "planar_on_path",
            j2(jtype="planar", limit=None),
            UnsupportedJointError,
            ["'j2'", L6, "planar"],
        ),
        (
            "all_fixed",
            robot(["a", "b"], [joint("jf", "a", "b", "fixed", limit=None)]),
            URDFError,
            ["no moving joint", "'a'", "'b'"],
        ),
        (
            "several_leaves",
            robot(["base", "l1", "l2"], [joint("j1", "base", "l1"), joint("j2", "base", "l2")]),
            URDFError,
            ["several tip links", "'l1'", "'l2'"],
        ),
    ]
    return cases


#: (id, kwargs to load_urdf, error, words) cases that need base/tip arguments
URDF_ARG_CASES = [
    ("unknown_base", {"base": "nope"}, UnknownLinkError, ["'nope'", "base"]),
    ("unknown_tip", {"tip": "nope"}, UnknownLinkError, ["'nope'", "l3"]),
    ("tip_not_below_base", {"base": "l2", "tip": "l1"}, URDFError, ["'l1'", "'l2'", "below"]),
]
