"""How the reliability corpora (``urdf_corpus.py``: malformed URDFs; ``dataset_corpus.py``:
corrupted episode files) become files: each case is written into a temporary folder by the
tests; nothing of them is checked in as data.
"""

from __future__ import annotations

from pathlib import Path


def write_case(folder: Path, name: str, content: str | bytes) -> Path:
    """Write ``content`` to ``folder/name`` and return the path."""
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / name
    if isinstance(content, str):
        p.write_text(content, encoding="utf-8")
    else:
        p.write_bytes(content)
    return p
