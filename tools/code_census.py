"""A census of the source tree: lines, functions by parameter count, and where behaviours live.

Run from the repository root: ``python tools/code_census.py [--json]``. The refactoring
notes quote its figures before and after a change, so that "smaller" and "in one place" are
measured, not claimed.

Where a behaviour lives: its places are the functions named for it, and those whose source
writes it out under another name (a signature per behaviour). A place *implements* the
behaviour when its body writes it out or when it reaches no other place of it; otherwise it
*calls* one that does (an entry point, a wrapper, a batch or thread driver), found by following
what each function's body refers to (names defined in its module or imported into it, across
re-exports; a generated Warp function stands for the CPU function it is generated from). One
implementation and many callers is one source; two implementations are two copies to keep
equal. Status enums are listed, and a module that types two or more members of one again as
int constants (``CODE_SUCCESS = 0``) is counted, as are offsets written by hand: module int
constants that index a packed array or tuple (``w[F_J]``, ``b[STATE]``), wherever they are
used.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "ikstack"

#: behaviour -> (a regular expression matching the name of a function that implements it or is
#: an entry point to it, a regular expression matching the source of a function that computes
#: it under another name, or None)
BEHAVIOURS: dict[str, tuple[str, str | None]] = {
    # the pick written out: a slot's distance compared with the best one's (``D[k] < D[best]``)
    "selection (nearest valid slot)": (
        r"^(select\w*|_?select_\w+|\w*nearest\w*select\w*|best_slot\w*)$",
        r"([\w.]+)\[[^\]]*\] < \1\[[^\]]*\bbest\]",
    ),
    "constraint rows": (r"^_?constraints?_rows?\w*$", None),
    # the residual of a pose against a target: position error and the rotation R_t R^T,
    # written out element by element (its first diagonal term is the signature)
    "FK pose residual": (
        r"^_?(pose_residual|pose_errs?|pose_errors|fk_error\w*|position_rotation_error)$",
        r"(\w+)\[0, 0\] \* (\w+)\[0, 0\] \+ \1\[0, 1\] \* \2\[0, 1\]",
    ),
    # the rotation vector of a rotation matrix by Shepperd's quaternion (the largest of w, x,
    # y, z first: ``0.25 * s`` is the signature)
    "rotation vector (log map)": (
        r"^_?(rotation_vector|rotvec_of|rotvec6?|quat_log)$",
        r"\b0\.25 \* s\b",
    ),
}

#: status enums: a class whose name ends in ``Status`` (one per package is the design)
STATUS_CLASS = re.compile(r"^\w+Status$")
#: prefixes of module constants that stand for a status member (``CODE_SUCCESS = 0``)
STATUS_PREFIXES = ("", "CODE_", "ST_", "S_", "STATUS_")


def _nparams(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    a = fn.args
    n = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs)
    n += (a.vararg is not None) + (a.kwarg is not None)
    if a.args and a.args[0].arg in ("self", "cls"):
        n -= 1
    return n


def _int_value(node: ast.expr) -> int | None:
    """The int of ``3``, ``-1`` or ``wp.constant(3)``; None for anything else."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        f = node.func
        if (isinstance(f, ast.Attribute) and f.attr == "constant") or (
            isinstance(f, ast.Name) and f.id == "int"
        ):
            node = node.args[0]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _int_value(node.operand)
        return None if v is None else -v
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(tree: ast.Module, module: str, is_package: bool) -> dict[str, str]:
    """A module's imported names: local name -> dotted target (``pkg.mod`` for a module,
    ``pkg.mod.name`` for a name imported from one), wherever the import stands."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = module.split(".") if is_package else module.split(".")[:-1]
                pkg = pkg[: len(pkg) - node.level + 1]
                base = ".".join(pkg + ([base] if base else []))
            for a in node.names:
                if a.name != "*":
                    out[a.asname or a.name] = f"{base}.{a.name}"
    return out


def _refs(fn: ast.AST, module: str, imported: dict[str, str], local: set[str]) -> set[str]:
    """The functions a function's body refers to (calls, and functions passed or picked as
    values: ``kern = a if parallel else b``), as ``module.name``: bare names defined in its
    module or imported into it, and ``alias.name`` of an imported module."""
    out = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Name):
            if node.id in imported:
                out.add(imported[node.id])
            elif node.id in local:
                out.add(f"{module}.{node.id}")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            target = imported.get(node.value.id)
            if target is not None:
                out.add(f"{target}.{node.attr}")
    return out


def _reaches(start: str, refs: dict[str, set[str]], targets: set[str]) -> str | None:
    """The first of ``targets`` (other than ``start``) that function ``start`` reaches through
    what the bodies on the way refer to; None when it reaches none."""
    seen = {start}
    todo = sorted(refs.get(start, ()))
    while todo:
        name = todo.pop(0)
        if name in seen:
            continue
        seen.add(name)
        if name in targets:
            return name
        todo.extend(sorted(refs.get(name, ())))
    return None


def _resolve(name: str, aliases: dict[str, str]) -> str:
    """``name`` with re-exports followed (``ikstack.ik.fk_errors`` -> ``ikstack.ik.result.
    fk_errors``)."""
    seen = set()
    while name in aliases and name not in seen:
        seen.add(name)
        name = aliases[name]
    return name


_GENERATED_FROM = re.compile(r"GENERATED from ``src/([\w/]+)\.py``")


def census(src: Path = SRC) -> dict:
    """The figures of the package at ``src`` (ikstack's by default)."""
    lines = 0
    params: list[tuple[int, str]] = []
    places: dict[str, list[str]] = {k: [] for k in BEHAVIOURS}
    # behaviour -> (where, "module.function", whether its body writes the behaviour out)
    place_fn: dict[str, list[tuple[str, str, bool]]] = {k: [] for k in BEHAVIOURS}
    status_enums: list[str] = []
    members: dict[str, dict[str, int]] = {}  # status enum -> its int members' values
    constants: list[tuple[str, str, int]] = []  # (where, name, value) of module-level ints
    # "module.NAME" -> where, of module-level int constants; per module, the names its
    # subscripts index with (resolved through its imports after the scan)
    int_consts: dict[str, str] = {}
    index_uses: list[str] = []
    generated = 0
    files = 0
    opt_outs: list[str] = []
    warp_fns: dict[str, str] = {}
    cpu_fns: set[str] = set()
    # "module.function" -> the functions its body refers to, over every module (the generated
    # ones included: a generated function stands for its CPU source's function)
    refs: dict[str, set[str]] = {}
    aliases: dict[str, str] = {}  # "package.name" -> what the package imported under that name
    for path in sorted(src.rglob("*.py")):
        text = path.read_text()
        rel = str(path.relative_to(src.parent))
        tree = ast.parse(text)
        module = _module_name(path, src.parent)
        if text.startswith("# mypy: ignore-errors"):
            opt_outs.append(rel)
        imported = _imports(tree, module, path.name == "__init__.py")
        for name, target in imported.items():  # re-exports: ikstack.ik.fk_errors is result's
            aliases.setdefault(f"{module}.{name}", target)
        local = {
            n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        source = _GENERATED_FROM.search(text)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                key = f"{module}.{node.name}"
                refs.setdefault(key, set()).update(_refs(node, module, imported, local) - {key})
                if source is not None:  # the generated copy is its source's function
                    refs[key].add(source.group(1).replace("/", ".") + "." + node.name)
        if path.name.startswith("_gen_"):  # generated from another module's source
            generated += text.count("\n")
            continue
        files += 1
        lines += text.count("\n")
        in_warp = "backends/warp" in rel and not path.name.startswith("_translate")
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                params.append((_nparams(node), f"{rel}:{node.lineno} {node.name}"))
                if not node.name.startswith("__"):
                    if in_warp:
                        warp_fns.setdefault(node.name, f"{rel}:{node.name}")
                    elif "backends/warp" not in rel:
                        cpu_fns.add(node.name)
                body = ast.get_source_segment(text, node) or ""
                for key, (pat, sig) in BEHAVIOURS.items():
                    own = sig is not None and re.search(sig, body) is not None
                    if own or re.match(pat, node.name):
                        places[key].append(f"{rel}:{node.name}")
                        place_fn[key].append((f"{rel}:{node.name}", f"{module}.{node.name}", own))
            if isinstance(node, ast.ClassDef) and STATUS_CLASS.match(node.name):
                status_enums.append(f"{rel}:{node.name}")
                values = members.setdefault(node.name, {})
                for item in node.body:
                    if isinstance(item, ast.Assign) and len(item.targets) == 1:
                        t = item.targets[0]
                        v = _int_value(item.value)
                        if isinstance(t, ast.Name) and v is not None:
                            values[t.id] = v
        for node in tree.body:  # module-level int constants
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                t = node.targets[0]
                v = _int_value(node.value)
                if isinstance(t, ast.Name) and v is not None:
                    constants.append((f"{rel}:{node.lineno}", t.id, v))
        # offsets written by hand: module constants (``F_J = 3``, ``STATE, _REP = 7, 8``) that
        # index a packed array or tuple (``w[F_J]``, ``b[_REP + 1]``; a slice bound is a count)
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                lhs, rhs = node.targets[0], node.value
                pairs: Iterable[tuple[ast.expr, ast.expr]] = (
                    zip(lhs.elts, rhs.elts, strict=True)
                    if isinstance(lhs, ast.Tuple) and isinstance(rhs, ast.Tuple)
                    else [(lhs, rhs)]
                )
                for lhs_part, rhs_part in pairs:
                    if isinstance(lhs_part, ast.Name) and _int_value(rhs_part) is not None:
                        int_consts[f"{module}.{lhs_part.id}"] = f"{rel}:{node.lineno} {lhs_part.id}"
        for node in ast.walk(tree):
            if isinstance(node, ast.Subscript):
                sl = node.slice
                for part in sl.elts if isinstance(sl, ast.Tuple) else [sl]:
                    if isinstance(part, ast.Slice):
                        continue
                    for sub in ast.walk(part):
                        if isinstance(sub, ast.Name):
                            target = imported.get(sub.id, f"{module}.{sub.id}")
                            index_uses.append(target)
    resolved = (_resolve(t, aliases) for t in index_uses)
    offsets = sorted({int_consts[t] for t in resolved if t in int_consts})
    for key in refs:  # follow re-exports to the function they name
        refs[key] = {_resolve(t, aliases) for t in refs[key]}
    # a behaviour's place implements it (its body writes the behaviour out, or it reaches no
    # other place of it) or calls another place that does (an entry point, a wrapper, a batch or
    # thread driver, a loop around the one implementation)
    implementations: dict[str, list[str]] = {}
    entry_points: dict[str, list[str]] = {}
    for key, fns in place_fn.items():
        names = {name for _, name, _ in fns}
        implementations[key], entry_points[key] = [], []
        for where, name, own in fns:
            via = _reaches(name, refs, names - {name})
            if own or via is None:
                implementations[key].append(where)
            else:
                entry_points[key].append(f"{where} -> {via.rsplit('.', 1)[1]}")
    # status members typed again as module constants: two or more constants of one module that
    # carry members' names (maybe behind a CODE_ prefix) and values of one status enum (the
    # kernels should read the enum's values instead)
    by_module: dict[tuple[str, str], list[str]] = {}
    for where, name, value in constants:
        for enum, values in members.items():
            for prefix in STATUS_PREFIXES:
                member = name[len(prefix) :] if name.startswith(prefix) else None
                if member and values.get(member) == value:
                    by_module.setdefault((where.split(":")[0], enum), []).append(
                        f"{where} {name} = {value} ({enum}.{member})"
                    )
                    break
    retyped = [w for hits in by_module.values() if len(hits) >= 2 for w in hits]
    n: Counter[str] = Counter()
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
        "implementations": implementations,
        "entry_points": entry_points,
        "status_enums": status_enums,
        "status_constants_retyped": len(retyped),
        "status_constants_retyped_where": retyped,
        "hand_written_offsets": len(offsets),
        "hand_written_offsets_where": offsets,
        "mypy_opt_outs": opt_outs,
        "warp_functions": len(warp_fns),
        "warp_same_name_as_cpu": sorted(v for k, v in warp_fns.items() if k in cpu_fns),
        "warp_hooks": sorted(_declared_hooks(src)),
    }


def _declared_hooks(src: Path) -> set[str]:
    """``module:function`` of the device steps the generated code calls by design: the hooks
    the Warp translator declares (``HOOKS`` in ``backends/warp/_translate.py``: per source
    module, the device module and its functions)."""
    path = src / "backends" / "warp" / "_translate.py"
    if not path.exists():
        return set()
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        target: ast.expr | None = None
        value: ast.expr | None = None
        if isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        if not (isinstance(target, ast.Name) and target.id == "HOOKS" and value is not None):
            continue
        hooks = ast.literal_eval(value)
        for device_module, funcs in hooks.values():
            rel = device_module.removeprefix("ikstack.").replace(".", "/") + ".py"
            out.update(f"ikstack/{rel}:{f}" for f in funcs)
    return out


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
        impl, entry = c["implementations"][k], c["entry_points"][k]
        print(
            f"{k}: {len(v)} places: {len(impl)} implementing it, {len(entry)} calling one "
            "that does (entry points, wrappers, drivers)"
        )
        for p in impl:
            print(f"  implements: {p}")
        for p in entry:
            print(f"  calls:      {p}")
    print(f"status enums: {len(c['status_enums'])}")
    for p in c["status_enums"]:
        print(f"  {p}")
    print(
        "status codes typed again as module constants (a status member's name and value): "
        f"{c['status_constants_retyped']}"
    )
    for p in c["status_constants_retyped_where"]:
        print(f"  {p}")
    print(
        "offsets written by hand (module int constants indexing a packed array or tuple): "
        f"{c['hand_written_offsets']}"
    )
    for p in c["hand_written_offsets_where"]:
        print(f"  {p}")
    outs = c["mypy_opt_outs"]
    gen = sum("/_gen_" in p for p in outs)
    print(f"modules mypy skips (# mypy: ignore-errors): {len(outs)} ({gen} generated)")
    for p in outs:
        if "/_gen_" not in p:
            print(f"  {p}")
    twins = c["warp_same_name_as_cpu"]
    hooks = [t for t in twins if t in c["warp_hooks"]]
    print(
        f"hand-written Warp functions: {c['warp_functions']}, "
        f"with a same-named CPU function: {len(twins)} "
        f"({len(hooks)} of them device steps the translator declares as hooks)"
    )
    for t in twins:
        print(f"  {t}{'  (hook)' if t in hooks else ''}")


if __name__ == "__main__":
    main()
