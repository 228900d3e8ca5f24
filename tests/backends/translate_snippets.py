"""Snippets of CPU source through the CPU-kernel -> Warp translator, for the translator's
tests: a snippet translated with declared signatures, one function of the generated text, and
a scratch record as the kernels define one."""

from __future__ import annotations

import textwrap

from ikstack._records import B, F, Record
from ikstack.backends.warp._translate import Translator


def translate(src: str, sigs: dict[str, str], records: dict | None = None) -> str:
    tr = Translator(signatures={"snippet": sigs}, modules={}, records=records)
    return tr.translate("snippet", textwrap.dedent(src))


#: a scratch record as the kernels define one
WORK = Record("Work", __name__, [("J", F, (6, "n")), ("held", B, ("n",)), ("lam", F, ())])


def source_of(code: str, name: str) -> str:
    return code[code.index(f"def {name}(") :]
