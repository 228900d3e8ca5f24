"""Names and docstrings of :mod:`ikstack.backends.warp._translate`'s generated functions, so
that the device code reads like its CPU source. Does not import Warp.

- The entries of a ``tup(...)`` parameter (one Warp parameter each) take the names the source
  unpacks them into (``Q, V, base, off, rev = dst``: the parameters ``Q``, ``V``, ``base``...,
  nested tuples too), where that name means that entry only: it is bound nowhere else in the
  function (no other unpack, assignment or loop), is no other parameter or entry, no name of
  the module, of Python's builtins or of the generated module's own (``wp``, ``F``...), does not
  start with ``_`` and does not end in ``_<digits>`` (the translator's own renamings). Any
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


def entry_names(
    params: list[tuple[str, Any]], node: ast.FunctionDef, outside: set[str], where: str
) -> dict[str, str]:
    """``{positional path: Warp name}`` of every entry of the ``tup`` parameters of a function
    (``params``, its source ``node``); ``outside``: the names of the module and the generated
    module the function's names must not shadow; ``where`` names it in errors."""
    packs = {p: t for p, t in params if args_.is_kind(t, "pack")}
    if not packs:
        return {}
    leaves: dict[str, Any] = {}
    for p, t in packs.items():
        _leaves(p, t, leaves)
    alias: dict[str, tuple[str, Any]] = {p: (p, t) for p, t in packs.items()}
    wanted: dict[str, str] = {}  # path -> the name its first unpack gives it
    paths_of: dict[str, set[str]] = {}  # name -> the paths unpacked into it
    unpacked: set[int] = set()  # the Name nodes that are an entry's unpack target

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
    taken = set(outside) | {p for p, _ in params}
    taken |= {row_param(p) for p, t in params if args_.is_kind(t, "dev", "rows")}
    taken |= {
        n.id
        for n in ast.walk(node)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and id(n) not in unpacked
    }
    out: dict[str, str] = {}
    for path, kind in leaves.items():
        nm = wanted.get(path)
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
