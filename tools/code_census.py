"""A census of the source tree: lines, functions by parameter count, and where behaviours live.

Run from the repository root: ``python tools/code_census.py [--json]``. The refactoring
notes quote its figures before and after a change, so that "smaller" and "in one place" are
measured, not claimed.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
from collections import Counter
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "ikstack"

#: behaviour -> a regular expression matching the name of a function that implements it
BEHAVIOURS = {
    "selection (nearest valid slot)": (
        r"^(select\w*|_?select_\w+|\w*nearest\w*select\w*|best_slot\w*)$"
    ),
    "constraint rows": r"^_?constraints?_rows?\w*$",
    "FK pose residual": r"^_?(pose_residual|fk_error\w*)$",
    "status codes": r"^(IKStatus|ServoStatus|DecodeStatus|TargetStatus)$",
}


def _nparams(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    a = fn.args
    n = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs)
    n += (a.vararg is not None) + (a.kwarg is not None)
    if a.args and a.args[0].arg in ("self", "cls"):
        n -= 1
    return n


def census() -> dict:
    lines = 0
    params: list[tuple[int, str]] = []
    places: dict[str, list[str]] = {k: [] for k in BEHAVIOURS}
    status_literals = 0
    offsets = 0
    generated = 0
    files = 0
    warp_fns: dict[str, str] = {}
    cpu_fns: set[str] = set()
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text()
        if path.name.startswith("_gen_"):  # generated from another module's source
            generated += text.count("\n")
            continue
        files += 1
        lines += text.count("\n")
        rel = str(path.relative_to(SRC.parent))
        in_warp = "backends/warp" in rel and not path.name.startswith("_translate")
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                params.append((_nparams(node), f"{rel}:{node.lineno} {node.name}"))
                if not node.name.startswith("__"):
                    if in_warp:
                        warp_fns.setdefault(node.name, f"{rel}:{node.name}")
                    elif "backends/warp" not in rel:
                        cpu_fns.add(node.name)
                for key, pat in BEHAVIOURS.items():
                    if re.match(pat, node.name):
                        places[key].append(f"{rel}:{node.name}")
            if isinstance(node, ast.ClassDef):
                for key, pat in BEHAVIOURS.items():
                    if re.match(pat, node.name):
                        places[key].append(f"{rel}:{node.name}")
        status_literals += len(re.findall(r"^\s*(?:ST_|S_)[A-Z_]+\s*=\s*\d+", text, re.M))
        # layout offsets written by hand: F_NAME = 3, PI_NAME = 0, ... (packed-array indices)
        offsets += len(re.findall(r"^(?:F|I|C|PF|PI)_[A-Z0-9_]+\s*=\s*\d+\s*$", text, re.M))
    n = Counter()
    for k, _ in params:
        n[">10"] += k > 10
        n[">20"] += k > 20
    worst = sorted(params, reverse=True)[:10]
    return {
        "lines": lines,
        "files": files,
        "generated_lines": generated,
        "functions": len(params),
        "params_over_10": n[">10"],
        "params_over_20": n[">20"],
        "worst": [f"{k:3d} {where}" for k, where in worst],
        "places": {k: v for k, v in places.items()},
        "status_constants_retyped": status_literals,
        "hand_written_offsets": offsets,
        "warp_functions": len(warp_fns),
        "warp_same_name_as_cpu": sorted(v for k, v in warp_fns.items() if k in cpu_fns),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    c = census()
    if args.json:
        print(json.dumps(c, indent=1))
        return
    print(
        f"lines in src/: {c['lines']} in {c['files']} files, {c['functions']} functions "
        f"(generated modules apart: {c['generated_lines']} lines)"
    )
    print(f"functions with > 10 parameters: {c['params_over_10']}, > 20: {c['params_over_20']}")
    print("most parameters:")
    for w in c["worst"]:
        print(f"  {w}")
    for k, v in c["places"].items():
        print(f"{k}: {len(v)} places")
        for p in v:
            print(f"  {p}")
    print(f"status codes typed again as module constants: {c['status_constants_retyped']}")
    print(f"packed-array offsets written by hand: {c['hand_written_offsets']}")
    twins = c["warp_same_name_as_cpu"]
    print(
        f"hand-written Warp functions: {c['warp_functions']}, "
        f"with a same-named CPU function: {len(twins)}"
    )
    for t in twins:
        print(f"  {t}")


if __name__ == "__main__":
    main()
