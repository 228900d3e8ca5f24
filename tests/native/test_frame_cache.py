"""The C++ module's frame cache: the interpreter's frame-stack chunks kept for reuse while it is
on, given back with the interpreter's allocator when it ends, and on only during ikstack's own
kernel compilations (also when one fails)."""

from __future__ import annotations

import pytest

from fresh_process import KERNEL_MAKER, run_python

pytest.importorskip("ikstack._native", reason="the C++ module is not built")


def _run(code: str, **env: str) -> list[str]:
    p = run_python(code, **env)
    assert p.returncode == 0, p.stderr
    return p.stdout.splitlines()


def test_recursion_across_chunk_edges_reuses_kept_chunks_and_stop_gives_them_back():
    # each descent to depth 900 needs new 16 KiB chunks and each return gives them back: with
    # the cache on, the later descents take the kept ones; after the last stop nothing is
    # kept, the interpreter's allocator is back and nothing more is reused
    code = (
        "from ikstack import _native as n\n"
        "def down(d):\n"
        "    return 0 if d == 0 else down(d - 1) + 1\n"
        "def walk():\n"
        "    for _ in range(20):\n"
        "        assert down(900) == 900\n"
        "s = n.frame_cache_state\n"
        "n.frame_cache_stop()\n"  # without a start: nothing to end
        "print(s()['caching'], s()['installed'])\n"
        "r0 = s()['reused']\n"
        "walk()\n"
        "print(s()['reused'] == r0)\n"
        "print(n.frame_cache_start(), n.frame_cache_start())\n"  # nested
        "walk()\n"
        "a = s()\n"
        "print(a['caching'], a['installed'], a['reused'] - r0 >= 19, 0 < a['kept'] <= 64)\n"
        "n.frame_cache_stop()\n"
        "print(s()['caching'], s()['installed'])\n"  # the outer start still holds it
        "n.frame_cache_stop()\n"
        "b = s()\n"
        "print(b['caching'], b['installed'], b['kept'])\n"
        "walk()\n"
        "print(s()['reused'] == b['reused'])\n"
    )
    assert _run(code) == [
        "False False",
        "True",
        "True True",
        "True True True True",
        "True True",
        "False False 0",
        "True",
    ]


def test_the_cache_is_on_only_while_an_ikstack_kernel_compiles(tmp_path):
    # a listener registered after ikstack's sees the cache inside the compilation; it is off
    # after it, also after a kernel that fails to type; a user's own kernel is left alone
    code = (
        KERNEL_MAKER + "from numba.core import event\n"
        "import ikstack.spatial\n"  # installs ikstack's listener first
        "from ikstack import _native as n\n"
        "seen = []\n"
        "class L(event.Listener):\n"
        "    def on_start(self, ev):\n"
        "        st = n.frame_cache_state()\n"
        "        seen.append((st['caching'], st['installed']))\n"
        "    def on_end(self, ev): pass\n"
        "event.register('numba:compile', L())\n"
        "def now():\n"
        "    st = n.frame_cache_state()\n"
        "    return st['caching'], st['installed'], st['kept']\n"
        "three_compiles(lambda p: print(p + str(seen[-1]), now()))\n"
    )
    out = _run(code, NUMBA_CACHE_DIR=str(tmp_path), IKSTACK_COMPILE_NOTICE="0")
    assert out == [
        "(True, True) (False, False, 0)",
        "TypingError (True, True) (False, False, 0)",
        "(False, False) (False, False, 0)",
    ]
