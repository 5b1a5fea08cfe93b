"""What an iterator tree is made under (≈ TensorFlow's `IteratorContext`): the pipeline's options
and, inside an `eager.function`, the values of the symbolic tensors its sources were built from.

`OwnedIterator` (and the graph ops that make iterators) enter a context while they call the top
node's `make_iterator()`; node iterators read `current()` as they are made, and one that makes
input iterators later (a `repeat` each epoch, a `concatenate` its second input) keeps the
context it was made under and makes them with `make_under`. So a `with_options` anywhere in a
pipeline reaches every step of it, as TensorFlow applies a dataset's options to the whole
pipeline, and a source built from a function's argument reads that argument's value for the
call that iterates it.

What the options change (the rest is accepted and recorded only; docs/API.md lists which):
`deterministic` (a parallel `map`/`batch` whose own `deterministic` is None), the thread limit
(`threading.private_threadpool_size`: at most that many function calls of the pipeline run at
once, and no parallel step starts more workers), and AUTOTUNE's choices (`autotune.enabled`
False keeps an autotuned prefetch buffer at its first size; `autotune.cpu_budget` caps the
workers AUTOTUNE starts; `autotune.ram_budget` caps how deep an autotuned prefetch buffer grows,
from the element size its spec gives).
"""

from __future__ import annotations

import threading

import numpy as np

from .options import Options

__all__ = ["IteratorContext", "current", "entered", "make_under", "for_pipeline"]


class IteratorContext:
    """The options an iterator tree runs with, read once (see the module doc); `bindings` maps
    a symbolic source node to the arrays of its tensors for one call."""

    __slots__ = ("options", "deterministic", "thread_limit", "autotune", "cpu_budget",
                 "ram_budget", "call_gate", "bindings")

    def __init__(self, options=None, bindings=None):
        options = Options() if options is None else options
        self.options = options
        self.deterministic = options.deterministic  # None: the transformation's default (True)
        limit = options.threading.private_threadpool_size
        self.thread_limit = limit if limit is not None and limit > 0 else None
        self.autotune = options.autotune.enabled is not False
        budget = options.autotune.cpu_budget
        self.cpu_budget = budget if budget is not None and budget > 0 else None
        ram = options.autotune.ram_budget
        self.ram_budget = ram if ram is not None and ram > 0 else None
        # One gate for the whole pipeline: its function calls share the thread limit.
        self.call_gate = None if self.thread_limit is None else \
            threading.BoundedSemaphore(self.thread_limit)
        self.bindings = bindings or {}

    def deterministic_for(self, own):
        """A parallel step's order: its own `deterministic` argument when given, else the
        options', else True."""
        if own is not None:
            return bool(own)
        return self.deterministic is not False

    def parallel_calls(self, requested, available):
        """How many workers a parallel step with `num_parallel_calls=requested` (AUTOTUNE: -1)
        starts; `available()` is what AUTOTUNE picks without options."""
        if self.cpu_budget is None and self.thread_limit is None:
            return requested
        n = available() if requested == -1 else requested
        if requested == -1 and self.cpu_budget is not None:
            n = min(n, self.cpu_budget)
        if self.thread_limit is not None:
            n = min(n, self.thread_limit)
        return max(1, n)

    def gated(self, fn):
        """`fn` called under the pipeline's thread limit (itself when there is none)."""
        gate = self.call_gate
        if gate is None:
            return fn

        def call(element):
            with gate:
                return fn(element)
        return call

    def prefetch_limit(self, limit, spec_bytes):
        """The deepest an autotuned prefetch buffer (first size .. `limit`) may grow, for
        elements of `spec_bytes` bytes (None when the spec leaves sizes open)."""
        if not self.autotune:
            return 0  # no growth
        if self.ram_budget is not None and spec_bytes:
            return min(limit, self.ram_budget // spec_bytes)
        return limit


DEFAULT = IteratorContext()
_local = threading.local()


def current() -> IteratorContext:
    """The context iterators being made now run under (`DEFAULT` outside any)."""
    return getattr(_local, "context", DEFAULT)


class entered:  # noqa: N801 - used as a `with` statement
    """`with entered(context):` makes iterators under `context` (nests; restores the outer)."""

    __slots__ = ("_context", "_outer")

    def __init__(self, context):
        self._context = context

    def __enter__(self):
        self._outer = getattr(_local, "context", DEFAULT)
        _local.context = self._context
        return self._context

    def __exit__(self, *exc):
        _local.context = self._outer
        return False


def make_under(context, node):
    """`node.make_iterator()` under `context` (for iterators that make inputs later)."""
    if context is current():
        return node.make_iterator()
    with entered(context):
        return node.make_iterator()


def _options_found(node) -> list:
    """The `with_options` of the pipeline ending at `node`, downstream (and later inputs) first."""
    found = []
    stack = [node]
    while stack:
        step = stack.pop()
        if step.options is not None:
            found.append(step.options)
        stack.extend(step.inputs)
    return found


def merged_options(node) -> Options:
    """The options of the pipeline ending at `node`: every `with_options` in it merged, a later
    one (downstream, or in a later input) winning field by field, as TensorFlow merges them."""
    found = _options_found(node)
    merged = Options()
    for options in reversed(found):
        merged = merged.merge(options)
    return merged


def for_pipeline(node, bindings=None) -> IteratorContext:
    """The context to make the iterators of the pipeline ending at `node` under (the shared
    default when its options are the defaults and nothing is bound). Made once per iterator
    (an epoch): a pipeline without `with_options` costs one walk of its steps."""
    if not bindings and not _options_found(node):
        return DEFAULT
    options = merged_options(node)
    if not bindings and options == _DEFAULT_OPTIONS:
        return DEFAULT
    return IteratorContext(options, bindings)


_DEFAULT_OPTIONS = Options()


def spec_bytes(spec_leaves) -> int | None:
    """Bytes of one element whose leaves are `TensorSpec`s with known shapes; else None."""
    total = 0
    for s in spec_leaves:
        shape = getattr(s, "shape", None)
        if shape is None or not shape.is_fully_defined() or not s.dtype.is_numpy_compatible:
            return None
        total += int(np.prod(shape.as_list(), dtype=np.int64)) * s.dtype.as_numpy_dtype().itemsize
    return total
