"""File names for generated source (compiled programs, fused kernels): one per live object,
reused once that object is garbage.

Generated code is compiled under a file name that `linecache` maps to its source, so tracebacks
show the generated lines. CPython (3.11) keeps every file name `compile()` has seen for the life
of the process, so a fresh name per compiled object (`<eager plan f#1>`, `#2`, ...) grows memory
by its size forever, even after the object and its `linecache` entry are gone: about 160 bytes
per `eager.function` made and dropped. Names here are `<{label}#{n}>` with `n` the smallest
number free for that label: a name goes back to its label's pool when its owner dies (together
with the `linecache` entry), so the names ever made are bounded by the objects alive at once.
"""

from __future__ import annotations

import heapq
import linecache
import threading
import weakref

__all__ = ["take_filename", "register_source", "release_filename"]

_lock = threading.Lock()
_free: dict[str, list] = {}  # label -> heap of released numbers
_next: dict[str, int] = {}  # label -> the first number never handed out


def take_filename(label: str) -> str:
    """A file name `<{label}#{n}>` no live generated source has; give it back with
    `release_filename` if compiling fails before `register_source`."""
    with _lock:
        free = _free.get(label)
        if free:
            n = heapq.heappop(free)
        else:
            n = _next.get(label, 1)
            _next[label] = n + 1
    return f"<{label}#{n}>"


def register_source(filename: str, source: str, owner) -> None:
    """Makes `source` what `linecache` reads for `filename` while `owner` lives; when it dies,
    the entry goes and the name is released."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    weakref.finalize(owner, release_filename, filename)


def release_filename(filename: str) -> None:
    """Drops `filename`'s `linecache` entry and makes the name available again."""
    linecache.cache.pop(filename, None)
    label, _, number = filename[1:-1].rpartition("#")
    with _lock:
        heapq.heappush(_free.setdefault(label, []), int(number))
