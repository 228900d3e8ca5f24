"""Names and docstrings of :mod:`ikstack.backends.warp._translate`'s generated functions, so
that the device code reads like its CPU source. Does not import Warp.

- The entries of a ``tup(...)`` parameter (one Warp parameter each) take the names the source
  unpacks them into (``Q, V, base, off, rev = dst``: the parameters ``Q``, ``V``, ``base``...,
  nested tuples too), where that name means that entry only: it is bound nowhere else in the
  function (no other unpack, assignment or loop), is no other parameter or entry, no name of
  the module, of Python's builtins or of the generated module's own (``wp``, ``F``...), does not
  start with ``_`` and does not end in ``_<digits>`` (the translator's own renamings). An
  entry the function does not unpack (``_, h1 = hs``, or passed on whole) takes, on the same
  terms and where the name is not read in the function, the one name the module's callers
  give it (``f((h0, h1))``, or their own name for the entry of a tuple they pass on). Any
  other entry keeps its position, ``dst_0`` (``gate_1_0`` nested), which must be free too.
- The docstring (:func:`device_doc`): the source's, true on the device: the paragraphs after
  the first that name a parameter the device does not take (``none``) are dropped, and a
  closing paragraph says how the device's parameters differ from the CPU's (compiled out,
  always passed, a tuple's entries, a device context's row), naming the CPU function. A
  function without a docstring has none.
"""

from __future__ import annotations

import ast
import re
import textwrap
from typing import Any

from ikstack.backends.warp import _translate_args as args_
from ikstack.backends.warp._translate_types import row_param
from ikstack.errors import TranslateError

_TRANSLATOR_SUFFIX = re.compile(r"_\d+$")


def module_names(tree: ast.Module) -> set[str]:
    """The names a module binds at its top level (functions, imports, constants)."""
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            tgts = node.targets if isinstance(node, ast.Assign) else [node.target]
            out |= {n.id for t in tgts for n in ast.walk(t) if isinstance(n, ast.Name)}
    return out


def _leaves(path: str, t: Any, out: dict[str, Any]) -> dict[str, Any]:
    """``{path: kind}`` of the entries of a ``tup`` kind ``t`` that are not tuples."""
    for k, e in enumerate(t[1]):
        sub = f"{path}_{k}"
        if args_.is_kind(e, "pack"):
            _leaves(sub, e, out)
        else:
            out[sub] = e
    return out


def _unpacked(
    params: list[tuple[str, Any]], node: ast.FunctionDef
) -> tuple[dict[str, str], dict[str, set[str]], set[int], dict[str, str]]:
    """How a function's source unpacks its ``tup`` parameters: ``(wanted, paths_of, unpacked,
    alias)``: the name each entry's first unpack gives it (``{path: name}``), the entries each
    name is unpacked from, the unpack targets' nodes, and the names that stand for a whole
    tuple (the parameters, and names a nested tuple is unpacked into: ``{name: path}``)."""
    alias: dict[str, tuple[str, Any]] = {p: (p, t) for p, t in params if args_.is_kind(t, "pack")}
    wanted: dict[str, str] = {}
    paths_of: dict[str, set[str]] = {}
    unpacked: set[int] = set()

    def visit(tgt: ast.Tuple, path: str, t: Any) -> None:
        if not (args_.is_kind(t, "pack") and len(tgt.elts) == len(t[1])):
            return  # the translation reports it
        for k, (elt, e) in enumerate(zip(tgt.elts, t[1], strict=True)):
            sub = f"{path}_{k}"
            if isinstance(elt, ast.Tuple):
                visit(elt, sub, e)
            elif isinstance(elt, ast.Name) and elt.id != "_":
                if args_.is_kind(e, "pack"):  # a name for a tuple: bound, never an entry's
                    alias[elt.id] = (sub, e)
                    continue
                unpacked.add(id(elt))
                wanted.setdefault(sub, elt.id)
                paths_of.setdefault(elt.id, set()).add(sub)

    unpacks: list[tuple[int, int, ast.Tuple, str]] = []  # (line, column, names, tuple)
    for n in ast.walk(node):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.value, ast.Name):
            tgt = n.targets[0]
            if isinstance(tgt, ast.Tuple):
                unpacks.append((n.lineno, n.col_offset, tgt, n.value.id))
    for _, _, tgt, value in sorted(unpacks, key=lambda u: u[:2]):
        if value in alias:  # in source order: a name bound to a tuple's tuple entry first
            visit(tgt, *alias[value])
    return wanted, paths_of, unpacked, {nm: path for nm, (path, _) in alias.items()}


#: the module's translated functions: ``{name: (params, source)}``
Funcs = dict[str, tuple[list[tuple[str, Any]], ast.FunctionDef]]


def caller_names(funcs: Funcs, name: str, path: str, seen: frozenset = frozenset()) -> set[str]:
    """The names the module's callers of ``name`` give the entry ``path`` of one of its
    ``tup`` parameters: a name in the tuple a call builds (``f((h0, h1), ...)``), or where a
    caller passes on a tuple of its own, the name that caller's source (or, in turn, its
    callers) gives that entry."""
    if (name, path) in seen:
        return set()
    seen = seen | {(name, path)}
    params = funcs[name][0]
    out: set[str] = set()
    for caller, (cparams, node) in funcs.items():
        if caller == name:
            continue
        wanted, _, _, alias = _unpacked(cparams, node)
        for call in ast.walk(node):
            if not (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Name)
                and call.func.id == name
                and len(call.args) == len(params)
            ):
                continue
            for arg, (p, _) in zip(call.args, params, strict=True):
                at = re.fullmatch(rf"{re.escape(p)}((?:_\d+)+)", path)
                if at is None:
                    continue
                rest = at.group(1)[1:].split("_")  # the entry's indices in p
                while rest and isinstance(arg, ast.Tuple) and int(rest[0]) < len(arg.elts):
                    arg = arg.elts[int(rest.pop(0))]
                if not isinstance(arg, ast.Name):
                    continue
                if arg.id in alias:  # the caller's own tuple, passed on
                    sub = "_".join([alias[arg.id], *rest])
                    own = wanted.get(sub)
                    out |= {own} if own is not None else caller_names(funcs, caller, sub, seen)
                elif not rest:
                    out.add(arg.id)  # an entry of the tuple this call builds
    return out


def entry_names(
    params: list[tuple[str, Any]],
    node: ast.FunctionDef,
    outside: set[str],
    where: str,
    funcs: Funcs | None = None,
) -> dict[str, str]:
    """``{positional path: Warp name}`` of every entry of the ``tup`` parameters of a function
    (``params``, its source ``node``); ``outside``: the names of the module and the generated
    module the function's names must not shadow; ``where`` names it in errors; ``funcs``: the
    module's translated functions, whose calls name the entries the function does not."""
    packs = {p: t for p, t in params if args_.is_kind(t, "pack")}
    if not packs:
        return {}
    leaves: dict[str, Any] = {}
    for p, t in packs.items():
        _leaves(p, t, leaves)
    wanted, paths_of, unpacked, _ = _unpacked(params, node)
    taken = set(outside) | {p for p, _ in params}
    taken |= {row_param(p) for p, t in params if args_.is_kind(t, "dev", "rows")}
    taken |= {
        n.id
        for n in ast.walk(node)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and id(n) not in unpacked
    }
    loaded = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    out: dict[str, str] = {}
    for path, kind in leaves.items():
        nm = wanted.get(path)
        if nm is None and funcs is not None and node.name in funcs:
            given = caller_names(funcs, node.name, path)
            if len(given) == 1 and not given & loaded:  # one name, not read here for another
                (nm,) = given
                paths_of = {**paths_of, nm: {path}}
        extra = [row_param(nm)] if nm and args_.is_kind(kind, "dev", "rows") else []
        if (
            nm is None
            or nm.startswith("_")
            or _TRANSLATOR_SUFFIX.search(nm)
            or paths_of[nm] != {path}
            or any(x in taken for x in [nm, *extra])
        ):
            nm = path  # its position
            extra = [row_param(nm)] if args_.is_kind(kind, "dev", "rows") else []
            if any(x in taken for x in [nm, *extra]):
                raise TranslateError(
                    f"{where}: the tuple entry {path} collides with a name of the function"
                )
        out[path] = nm
        taken |= {nm, *extra}
    return out


def device_doc(doc: str | None, fn: Any, entry: dict[str, str], qualname: str) -> str | None:
    """The generated function's docstring from the source's ``doc`` (raw, as in the source;
    None where the source has none): see the module."""
    gone = [p for p, t in fn.params if t == args_.NONE]
    notes: list[str] = []
    if gone:
        notes.append(f"{_names(gone)} {'is' if len(gone) == 1 else 'are'} None (compiled out)")
    for p, t in fn.params:
        how = ["always passed"] if p in fn.optional else []
        if args_.is_kind(t, "pack"):
            flat = [x.split(":")[0] for x in args_.params(p, t, lambda _t: "", entry)]
            how.append(f"{'' if how else 'passed '}as {_names(flat)}")
        elif args_.is_kind(t, "dev", "rows"):
            how.append(f"followed by the thread's row ``{row_param(p)}``")
        if how and t != args_.NONE:
            notes.append(f"``{p}`` is {', '.join(how)}")
    if doc is None or not (gone or notes):
        return doc
    paras = re.split(r"\n[ \t]*\n", doc)
    if gone:
        named = re.compile("|".join(rf"``{re.escape(p)}\b" for p in gone))
        paras = paras[:1] + [x for x in paras[1:] if not named.search(x)]
    if not notes:
        return "\n\n".join(paras)
    note = f"On the device (generated from ``{qualname}``): " + "; ".join(notes) + "."
    lines = textwrap.wrap(note, 92, break_on_hyphens=False, break_long_words=False)
    last = paras[-1].rstrip()
    end = paras[-1][len(last) :]  # the closing quotes' own line, if they have one
    if not end and len(paras) == 1 and "\n" not in last:
        end = "\n    "  # a one-line docstring grows: its quotes on their own line
    return "\n\n".join([*paras[:-1], last]) + "\n\n    " + "\n    ".join(lines) + end


def _names(names: list[str]) -> str:
    code = [f"``{n}``" for n in names]
    return code[0] if len(code) == 1 else ", ".join(code[:-1]) + " and " + code[-1]
