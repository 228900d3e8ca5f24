"""The A/B benchmark tool's two trees: the base revision in a temporary git worktree, with a
servo module of its own sources (the head's copy, or one built from the base tree), and the
head's scripts in a scratch copy next to links to the working tree.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SITECUSTOMIZE = """\
import sys
# an editable install's import hook would load ikstack from the installed tree, not PYTHONPATH
sys.meta_path[:] = [
    f for f in sys.meta_path
    if "editable" not in type(f).__module__ and "skbc" not in type(f).__module__
]
"""


def git(*args: str) -> str:
    r = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True)
    return r.stdout.strip()


@dataclass
class Side:
    name: str
    root: Path  # a tree with benchmarks/ and src/
    env: dict[str, str]
    # this side's library with the head's copy of the scripts (the base side only)
    head_scripts: Side | None = None


def remove_worktree(wt: Path) -> None:
    subprocess.run(["git", "worktree", "remove", "--force", str(wt)], cwd=ROOT, capture_output=True)
    shutil.rmtree(wt, ignore_errors=True)


# --------------------------------------------------------------------------- the servo module

#: what the compiled module ``ikstack._native`` is built from (the root CMakeLists builds the
#: C++ library of cpp/ and the bindings; cpp/'s tests, examples and benchmarks are not built)
NATIVE_SOURCES = ("CMakeLists.txt", "cpp/CMakeLists.txt", "cpp/include", "cpp/src", "bindings")
#: in the base tree (git-ignored build/): the digest of the sources its module was built from
NATIVE_STAMP = Path("build") / "bench_ab_native.txt"


def native_digest(root: Path) -> str:
    """One digest of the module's sources in a tree (paths and contents of ``NATIVE_SOURCES``)."""
    h = hashlib.sha256()
    for rel in NATIVE_SOURCES:
        top = root / rel
        files = sorted(top.rglob("*")) if top.is_dir() else [top]
        for f in files:
            if f.is_file():
                h.update(f.relative_to(root).as_posix().encode() + b"\0")
                h.update(hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()


def native_action(head: str, base: str, installed: str | None) -> str:
    """How the base tree gets its servo module, from the digests of the head's and the base's
    sources and of the sources the module now in the base tree was built from (None: none):
    ``copy`` the head's (same sources), ``reuse`` the module there (built from the base's
    sources by an earlier ``--keep`` run) or ``build`` the base's own."""
    if head == base:
        return "copy"
    return "reuse" if installed == base else "build"


def _native_modules(folder: Path) -> list[Path]:
    return sorted(folder.glob("_native*.so")) + sorted(folder.glob("_native*.pyd"))


def build_native(tree: Path, python: str, scratch: Path) -> Path:
    """Build ``tree``'s own servo module: ``pip wheel --no-deps`` of the tree into ``scratch``
    (pip makes the build environment the project's build-system table asks for, as an
    install does; with the tree's build/ folder CMake's files stay in the tree for the next
    build), then the module is taken out of the wheel into the tree's ``src/ikstack``.
    Nothing is installed anywhere. Returns the module's path."""
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    cmd = [python, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir", "-w", str(scratch)]
    r = subprocess.run([*cmd, str(tree)], capture_output=True, text=True)
    wheels = sorted(scratch.glob("*.whl"))
    if r.returncode or not wheels:
        tail = "\n".join((r.stderr.strip() or r.stdout.strip()).splitlines()[-15:])
        raise SystemExit(f"building the base's servo module failed ({shlex.join(cmd)}):\n{tail}")
    dest = tree / "src" / "ikstack"
    with zipfile.ZipFile(wheels[0]) as z:
        names = [
            n
            for n in z.namelist()
            if n.startswith("ikstack/_native") and n.endswith((".so", ".pyd"))
        ]
        if len(names) != 1:
            raise SystemExit(f"{wheels[0].name}: expected one ikstack/_native module, got {names}")
        for old in _native_modules(dest):
            old.unlink()
        out = dest / Path(names[0]).name
        out.write_bytes(z.read(names[0]))
    shutil.rmtree(scratch, ignore_errors=True)
    return out


def base_native(tree: Path, python: str, scratch: Path) -> str:
    """Give the base tree its servo module (see ``native_action``); returns what was done."""
    stamp = tree / NATIVE_STAMP
    head_d, base_d = native_digest(ROOT), native_digest(tree)
    have = _native_modules(tree / "src" / "ikstack")
    installed = stamp.read_text().strip() if stamp.exists() and have else None
    action = native_action(head_d, base_d, installed)
    stamp.parent.mkdir(parents=True, exist_ok=True)
    if action == "copy":
        for old in have:
            old.unlink()
        for so in _native_modules(ROOT / "src" / "ikstack"):
            shutil.copy2(so, tree / "src" / "ikstack" / so.name)
    elif action == "build":
        stamp.unlink(missing_ok=True)  # a failed build leaves no stamp that vouches for it
        print("building the base's servo module (its C++ or bindings differ) ...", file=sys.stderr)
        t0 = time.perf_counter()
        so = build_native(tree, python, scratch)
        print(f"  built {so.name} in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    stamp.write_text(base_d + "\n")
    return action


# --------------------------------------------------------------------------- the two trees


def _overlay(dst: Path, scripts: Path, rest: Path) -> None:
    """A tree at ``dst``: a copy of ``scripts``'s benchmarks/ next to links to the rest of
    ``rest``'s entries (the scripts write their results into the copy)."""
    shutil.rmtree(dst, ignore_errors=True)
    dst.mkdir()
    shutil.copytree(
        scripts / "benchmarks", dst / "benchmarks", ignore=shutil.ignore_patterns("__pycache__")
    )
    for entry in rest.iterdir():
        if entry.name != "benchmarks":
            (dst / entry.name).symlink_to(entry)


def prepare(work: Path, base: str, python: str) -> tuple[Side, Side]:
    """The two sides in ``work``: a worktree of ``base`` (kept from an earlier ``--keep`` run
    at the same commit, with its compiled caches) and a copy of the working tree's scripts."""
    site = work / "site"
    site.mkdir(parents=True, exist_ok=True)
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    wt = work / "base"
    head_of = ["git", "-C", str(wt), "rev-parse", "HEAD"]
    if not (wt / ".git").exists() or subprocess.getoutput(shlex.join(head_of)) != base:
        remove_worktree(wt)
        git("worktree", "add", "--force", "--detach", str(wt), base)  # force: a stale entry
    action = base_native(wt, python, work / "wheel")
    print(f"base servo module: {action}", file=sys.stderr)
    head = work / "head"
    _overlay(head, ROOT, ROOT)
    # the head's scripts on the base's tree, for a script whose base copy cannot run there
    _overlay(work / "base_head_scripts", ROOT, wt)

    def side(name: str, root: Path, src: Path) -> Side:
        return Side(name, root, dict(os.environ, PYTHONPATH=f"{site}{os.pathsep}{src}"))

    srcs = (wt / "src", ROOT / "src")
    sides = (side("base", wt, srcs[0]), side("head", head, srcs[1]))
    sides[0].head_scripts = side("base", work / "base_head_scripts", srcs[0])
    for s, src in zip(sides, srcs, strict=True):
        r = subprocess.run(
            [python, "-c", "import ikstack; print(ikstack.__file__)"],
            env=s.env,
            capture_output=True,
            text=True,
            cwd=s.root,
        )
        got = Path(r.stdout.strip() or "?").resolve()
        if not got.is_relative_to(src.resolve()):
            raise SystemExit(f"{s.name}: ikstack imports from {got}, not {src}: {r.stderr}")
    return sides
