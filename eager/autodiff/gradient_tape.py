"""`eager.GradientTape` ≈ `tf.GradientTape`: record ops, then differentiate."""

from __future__ import annotations

import contextlib
import enum
import logging
import sys

import numpy as np

from ..core import context as _context
from ..core.context import per_thread
from ..base import nest
from ..ops.array_ops import broadcast_to, concat, reshape, stack, transpose
from ..ops.array_ops import shape as shape_of
from ..base import dtypes as _dt
from ..ops.creation_ops import ones, zeros, zeros_like
from ..devices.resource_handles import handle_data
from ..tensor import EagerTensor, IndexedSlices, Tensor
from ..core.tensor_conversion import convert_to_tensor
from . import tape as _tape
from .tape_backward import (aggregate, backward, backward_batched, backward_single_source,
                            ones_seed)

__all__ = ["GradientTape", "UnconnectedGradients", "set_gradient_ready_hook"]

_log = logging.getLogger("eager")


class UnconnectedGradients(enum.Enum):
    """≈ `tf.UnconnectedGradients`: what `gradient` returns for a source the target does not
    depend on."""

    NONE = "none"
    ZERO = "zero"


_NONE = UnconnectedGradients.NONE


def _float_like(dtype) -> bool:
    return dtype._inexact


def _unconnected(value):
    if value.__class__ is UnconnectedGradients:
        return value
    return UnconnectedGradients(value)


_NESTED = (list, tuple, dict)

#: `hook(sources, source_tensors)` -> None or `on_ready(source_id, gradient)`: see
#: `set_gradient_ready_hook`.
_READY_HOOK = None


def set_gradient_ready_hook(hook) -> None:
    """Installs `hook(sources, source_tensors)`, asked by every `gradient` call with a list of
    sources (the flat sources as given, variables included, and the tensors differentiated
    with respect to, whose `_tape_id`s the callback is given) for a callback
    `on_ready(source_id, gradient)` that the backward walk calls as soon as each source's
    gradient is final, or None (the usual answer: no callback, a compiled plan may run). The
    data-parallel strategies install one to start all-reducing gradient buckets during the
    backward pass; autodiff never imports them. `None` uninstalls it."""
    global _READY_HOOK
    _READY_HOOK = hook


def _flat_sequence(structure) -> bool:
    """Whether `structure` is a plain list or tuple of leaves: the usual `sources` (a model's
    variables), which needs none of `nest`'s recursion."""
    cls = structure.__class__
    if cls is not list and cls is not tuple:
        return False
    for item in structure:
        if isinstance(item, _NESTED):
            return False
    return True


def _flatten(structure):
    """nest.flatten with shortcuts for a single tensor and a flat list or tuple."""
    if isinstance(structure, Tensor):
        return [structure]
    if _flat_sequence(structure):
        return list(structure)
    return nest.flatten(structure)


def _pack(structure, flat):
    if isinstance(structure, Tensor):
        return flat[0]
    if _flat_sequence(structure) and len(flat) == len(structure):
        return structure.__class__(flat)
    return nest.pack_sequence_as(structure, flat)


_getrefcount = sys.getrefcount


def _stack_refs(stack, index):
    """The reference count of `stack[index]` as `_drop_abandoned` sees it."""
    return _getrefcount(stack[index])


#: `_stack_refs` of a tape that only its stack holds: its GradientTape is gone.
_ABANDONED_REFS = _stack_refs([_tape.Tape()], 0)


def _drop_abandoned(stack):
    """Pops the tapes on `stack` that nothing else refers to. A GradientTape always holds its
    tape, so such a tape's GradientTape is gone without having stopped recording, which only a
    `KeyboardInterrupt` at the very entry of its `__exit__` does: a call's entry is an interrupt
    point no Python code can guard (see `push_tape`). Nobody can ever stop or use it, so it is
    dropped at the next tape entry on its thread, instead of recording forever."""
    for index in range(len(stack) - 1, -1, -1):
        if index < len(stack) and _stack_refs(stack, index) == _ABANDONED_REFS:
            _context.pop_tape(stack, stack[index])


class GradientTape:
    """Records operations on watched tensors so their gradients can be computed.

    As TensorFlow's: `persistent=False` allows one `gradient`/`jacobian` call, after which
    everything the tape kept is released; trainable variables read inside the tape are watched
    automatically unless `watch_accessed_variables=False`; tapes nest (an outer tape records the
    inner tape's gradient computation, which gives higher-order derivatives); tapes are
    per-thread.
    """

    __slots__ = ("_tape", "_recording", "_used", "_stack", "__weakref__")

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._tape = _tape.Tape(True if persistent else False,
                                True if watch_accessed_variables else False)
        self._recording = False
        self._used = False
        self._stack = None  # the thread's tape stack while recording

    # -- recording --------------------------------------------------------------------------
    def __enter__(self):
        """Starts recording on this thread (every training step comes here, and
        `stop_recording` resumes through here).

        A `KeyboardInterrupt` can arrive anywhere (Ctrl-C); `push_tape` pushes and counts the
        tape together, so after one the tape is either recording or not on the stack at all:
        the `with` statement does not call `__exit__` when `__enter__` raises, so the push is
        undone here."""
        if self._recording:
            raise ValueError("Tape is still recording; this can happen if you try to re-enter "
                             "an already-active tape.")
        tape = self._tape
        stack = self._stack = per_thread.state.tapes
        if stack:
            _drop_abandoned(stack)
        try:
            _context.push_tape(stack, tape)
        except BaseException:
            _context.pop_tape(stack, tape)  # a no-op unless the push had happened
            raise
        self._recording = True
        return self

    def __exit__(self, exc_type=None, exc_value=None, traceback=None):
        """Stops recording, if it is on (`stop_recording` pauses through here). An interrupt at
        `pop_tape`'s entry is met by popping again (a no-op once popped)."""
        if self._recording:
            self._recording = False
            stack = self._stack
            tape = self._tape
            try:
                _context.pop_tape(stack, tape)
            except BaseException:
                _context.pop_tape(stack, tape)
                raise
        return False

    @contextlib.contextmanager
    def stop_recording(self):
        """Ops inside are not recorded on this tape."""
        if not self._recording:
            raise ValueError("Tape must be recording to stop recording.")
        self.__exit__()
        try:
            yield
        finally:
            self.__enter__()

    def reset(self):
        """Forgets everything recorded so far (recording continues if it was on)."""
        self._tape.release()
        self._tape.forget_variables()
        self._used = False

    def watch(self, tensor):
        """Ensures `tensor` (or every tensor/variable in a nested structure) is followed."""
        if tensor.__class__ is EagerTensor and tensor._meta.dtype._inexact:  # the usual call
            self._tape.watch(tensor)
            return
        for t in _flatten(tensor):
            if not isinstance(t, Tensor):
                watch_hook = getattr(t, "_watch_on_tape", None)
                if watch_hook is not None:  # variables (eager.variables) know how to be watched
                    watch_hook(self._tape)
                    continue
                raise ValueError(f"Passed in object {t!r} of type {type(t).__name__!r}, not "
                                 "a Tensor or a Variable, to GradientTape.watch.")
            if not _float_like(t.dtype):
                _log.warning("The dtype of the watched tensor must be floating (e.g. "
                             "eager.float32), got %r", t.dtype)
                continue
            self._tape.watch(t)

    def watched_variables(self):
        return self._tape.watched_variables()

    # -- differentiation --------------------------------------------------------------------
    def _check_usable(self):
        if self._used and not self._tape.persistent:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one "
                               "set of gradients (or jacobians)")
        if self._recording and self._tape.persistent:
            _log.warning("Calling GradientTape.gradient on a persistent tape inside its context "
                         "is significantly less efficient than calling it outside the context "
                         "(it causes the gradient ops to be recorded on the tape, leading to "
                         "increased CPU and memory usage). Only call GradientTape.gradient "
                         "inside the context if you actually want to trace the gradient in "
                         "order to compute higher order derivatives.")

    def _finish(self):
        self._used = True
        if not self._tape.persistent:
            self._tape.release()

    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE):
        """d(sum of targets)/d(source) for each source in the (nested) `sources`.

        Hot path of every training step, and most of a tiny gradient's cost: the usual call
        (one eager target, a tensor or a flat list of sources, NONE for unconnected ones)
        takes no detours through the general structure handling."""
        tape = self._tape
        if (target.__class__ is EagerTensor and sources.__class__ is EagerTensor
                and output_gradients is None and unconnected_gradients is _NONE
                and not self._used and not self._recording and not tape.persistent):
            # The usual call: one eager tensor with respect to one, outside the context of a
            # tape used once (nothing to pause, nothing to keep).
            if not (target._meta.dtype._inexact and sources._meta.dtype._inexact):
                _warn_integer(target, sources)
            result = backward_single_source(tape, target, sources._tape_id)
            if result is None and target is sources:  # d x / d x, x not followed: ones
                result = ones_seed(target)
            self._finish()
            return result
        if self._used or tape.persistent:
            self._check_usable()
        unconnected = _unconnected(unconnected_gradients)
        if output_gradients is None and target.__class__ is EagerTensor:  # the common case
            flat_targets, flat_out = [target], [None]
            if not target._meta.dtype._inexact:
                _warn_integer_target(target._meta.dtype)
        else:
            flat_targets, flat_out = _targets_and_seeds(target, output_gradients)
        if sources.__class__ is EagerTensor:  # one tensor: no structure to flatten or pack
            (result,) = self._gradients(flat_targets, flat_out, _source_tensors([sources]),
                                        unconnected)
            self._finish()
            return result
        flat_sources = _flatten(sources)
        source_tensors = _source_tensors(flat_sources)
        on_ready = None
        if _READY_HOOK is not None:
            on_ready = _READY_HOOK(flat_sources, source_tensors)
        results = self._gradients(flat_targets, flat_out, source_tensors, unconnected, on_ready)
        self._finish()
        return _pack(sources, results)

    def _gradients(self, targets, target_grads, source_tensors, unconnected, on_ready=None):
        """The gradients for `source_tensors` (from `_source_tensors`); `on_ready` as
        `tape_backward.backward`'s."""
        ids = [s._tape_id for s in source_tensors]
        paused = self._pause()
        try:
            grads = backward(self._tape, targets, target_grads, ids, on_ready)
        finally:
            if paused is not None:  # (see `_pause`)
                paused[0].insert(paused[1], self._tape)
        if None in grads:
            _seed_targets_that_are_sources(grads, targets, target_grads, source_tensors)
        if unconnected is UnconnectedGradients.ZERO:
            grads = [_zeros_for(t) if g is None else g for t, g in zip(source_tensors, grads)]
        return grads

    def _batched_gradients(self, target, stacked_seeds, sources):
        """Per source, the gradients for every row of `stacked_seeds` as one tensor with a
        leading batch axis (None where unconnected), from one vectorised backward pass; or None
        when it cannot be vectorised (the caller runs the rows one by one)."""
        ids = [s._tape_id for s in _source_tensors(sources, warn=False)]
        paused = self._pause()
        try:
            return backward_batched(self._tape, target, stacked_seeds, ids)
        finally:
            if paused is not None:  # (see `_pause`)
                paused[0].insert(paused[1], self._tape)

    def _pause(self):
        """Takes this tape off the thread's stack for a backward pass, which is not recorded on
        it unless it is persistent (TensorFlow records it then, which is what higher order on
        one tape needs). Returns (stack, index), for the caller's `finally` to put it back with
        `stack.insert(index, tape)` (a call to a helper there could be interrupted at its entry,
        leaving the tape off), or None."""
        tape = self._tape
        if tape.persistent or not self._recording:  # not on the stack: nothing to take off
            return None
        tapes = self._stack
        index = tapes.index(tape)
        del tapes[index]
        return tapes, index

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True):
        """d target / d source, shaped target.shape + source.shape, for each source.

        Vectorised where the ops allow (TensorFlow's pfor): one backward pass seeded with every
        row of the identity at once (`eager.runtime.vectorize`), or with `parallel_iterations`
        rows at a time (memory grows with the rows run together); otherwise, or with
        `experimental_use_pfor=False`, one backward pass per target element.
        """
        self._check_usable()
        unconnected = _unconnected(unconnected_gradients)
        target = _as_target(target)
        flat_sources = _flatten(sources)
        n = _static_size(target, "jacobian")
        columns = None
        if experimental_use_pfor and n > 1:
            columns = self._vectorised_rows(target, n, flat_sources, parallel_iterations)
        if columns is None:
            rows = []
            source_tensors = _source_tensors(flat_sources)
            for i in range(n):  # seeds shaped like the target: nothing new to record on the tape
                seed = _one_hot_seed(i, target)
                rows.append(self._gradients([target], [seed], source_tensors,
                                            UnconnectedGradients.NONE))
            columns = []
            for k in range(len(flat_sources)):
                column = [row[k] for row in rows]
                if not column or any(g is None for g in column):
                    columns.append(None)
                    continue
                columns.append(stack([convert_to_tensor(g) if isinstance(g, IndexedSlices)
                                      else g for g in column]))
        results = []
        for s, stacked in zip(flat_sources, columns):
            shape = list(target.shape) + list(s.shape)
            if stacked is None:
                if unconnected is UnconnectedGradients.ZERO or n == 0:
                    results.append(zeros(shape, _gradient_dtype(s)))
                else:
                    results.append(None)
                continue
            results.append(reshape(stacked, shape))
        self._finish()
        return _pack(sources, results)

    def _vectorised_rows(self, target, n, sources, parallel_iterations):
        """Per source, the n Jacobian rows stacked ([n, *source shape]; None where unconnected),
        or None when the backward passes cannot be vectorised."""
        eye = np.eye(n, dtype=target.dtype.as_numpy_dtype).reshape((n, *tuple(target.shape)))
        return self._vectorised(target, eye, sources, parallel_iterations)

    def _vectorised(self, target, seeds, sources, parallel_iterations):
        """Per source, the gradients for each row of `seeds` (a numpy array [n, *target
        shape]) stacked, from vectorised backward passes of `parallel_iterations` rows each
        (all at once by default); None when they cannot be vectorised."""
        n = seeds.shape[0]
        chunk = n if not parallel_iterations else max(1, min(int(parallel_iterations), n))
        parts = []
        for start in range(0, n, chunk):
            found = self._batched_gradients(target, convert_to_tensor(seeds[start:start + chunk]),
                                            sources)
            if found is None:
                return None
            parts.append(found)
        if len(parts) == 1:
            return parts[0]
        return [None if part[0] is None else concat(list(part), 0)
                for part in zip(*parts)]

    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True):
        """Per-example Jacobians: target [b, ...] and source [b, ...] give [b, t..., s...].

        Rows of different examples are assumed independent (as TensorFlow does): column j of
        every example's Jacobian comes from the backward pass of sum over the batch of
        target[:, j]; those passes run vectorised where the ops allow, all at once or
        `parallel_iterations` at a time (otherwise, or with `experimental_use_pfor=False`, one
        pass per column).
        """
        self._check_usable()
        unconnected = _unconnected(unconnected_gradients)
        target = _as_target(target)
        tshape, sshape = list(target.shape), list(source.shape)
        if not tshape or not sshape or tshape[0] != sshape[0]:
            raise ValueError(f"batch_jacobian needs target and source with the same first "
                             f"(batch) dimension; got shapes {tshape} and {sshape}.")
        batch = tshape[0]
        if batch is None and None not in tshape[1:] + sshape[1:]:
            # A batch size known only when a traced function runs: one pass per column.
            batch, experimental_use_pfor = -1, False
        per_example = int(np.prod(tshape[1:], dtype=np.int64))
        if experimental_use_pfor and per_example > 1:
            seeds = np.zeros((per_example, batch, per_example), target.dtype.as_numpy_dtype)
            seeds[np.arange(per_example), :, np.arange(per_example)] = 1
            found = self._vectorised(target, seeds.reshape((per_example, *tshape)), [source],
                                     parallel_iterations)
            if found is not None:
                self._finish()
                (g,) = found
                if g is None:
                    if unconnected is UnconnectedGradients.ZERO:
                        return zeros(tshape + sshape[1:], _gradient_dtype(source))
                    return None
                g = transpose(reshape(g, [per_example, batch, -1]), [1, 0, 2])
                return reshape(g, tshape + sshape[1:])
        columns = []
        source_tensors = _source_tensors([source])
        for j in range(per_example):
            seed = _column_seed(j, target)
            (g,) = self._gradients([target], [seed], source_tensors, unconnected)
            if g is None:
                self._finish()
                return None
            g = convert_to_tensor(g) if isinstance(g, IndexedSlices) else g
            columns.append(reshape(g, [batch, -1] if batch != -1 else
                                   [-1, int(np.prod(sshape[1:], dtype=np.int64))]))
        result = stack(columns, axis=1) if columns else None
        self._finish()
        if result is None:
            return zeros_like(reshape(target, [batch, 0]))
        return reshape(result, [batch] + tshape[1:] + sshape[1:])


def _gradient_dtype(source):
    """The dtype of gradients with respect to `source` (a variable's, for a variable)."""
    (tensor,) = _source_tensors([source], False)
    return handle_data(tensor)[0] if tensor.dtype is _dt.resource else tensor.dtype


def _source_tensors(sources, warn=True) -> list:
    """The tensors gradients are taken with respect to: a variable's handle for a variable."""
    tensors = []
    for s in sources:
        if s.__class__ is EagerTensor:  # the usual source: no lookups
            if warn and not s._meta.dtype._inexact:
                _warn_integer_source(s._meta.dtype)
            tensors.append(s)
            continue
        dtype = getattr(s, "dtype", None)
        if not isinstance(s, Tensor):
            handle = getattr(s, "_tape_source", None)
            if handle is None:
                raise ValueError(f"Source {s!r} of type {type(s).__name__} is not a Tensor "
                                 "or a Variable.")
            s = handle()  # a variable: differentiate with respect to its handle
        if warn and not dtype._inexact:
            _warn_integer_source(dtype)
        tensors.append(s)
    return tensors


def _targets_and_seeds(target, output_gradients):
    """The flat targets of `gradient` and their seeds (None: ones), checked and warned about as
    TensorFlow does. A variable target is its handle, as a variable source is, seeded with ones
    shaped like the variable: the gradient of `r = v` with respect to `v` is then ones, as in
    TensorFlow, whether or not the tape saw `v` read."""
    given = _flatten(target)
    flat_targets = [_as_gradient_target(t) for t in given]
    if output_gradients is None:
        flat_out = [None] * len(flat_targets)
    else:
        flat_out = [None if g is None else convert_to_tensor(g)
                    for g in nest.flatten(output_gradients)]
        if len(flat_out) != len(flat_targets):
            raise ValueError(f"output_gradients has {len(flat_out)} entries for "
                             f"{len(flat_targets)} targets.")
    for k, (t, g) in enumerate(zip(flat_targets, given)):
        dtype = t.dtype
        if t is not g:  # a variable's handle
            dtype = g.dtype
            if flat_out[k] is None:
                flat_out[k] = ones(list(g.shape), dtype)
        if not dtype._inexact:
            _warn_integer_target(dtype)
    return flat_targets, flat_out


def _as_gradient_target(t):
    """A target of `gradient`: a tensor as it is, a variable's handle for a variable (see
    `_targets_and_seeds`), anything else converted."""
    if isinstance(t, Tensor):
        return t
    handle = getattr(t, "_tape_source", None)
    if handle is not None:
        return handle()
    return convert_to_tensor(t)


def _seed_targets_that_are_sources(grads, targets, target_grads, sources):
    """Fills in, for each source with no gradient (`grads[k]` None), the seeds of the targets
    that are that very tensor: d x / d x is the seed (ones by default) even where the tape never
    followed `x` (TensorFlow's answer; a followed one already has it from the walk)."""
    for k, source in enumerate(sources):
        if grads[k] is not None:
            continue
        seeds = [ones_seed(t) if g is None else g
                 for t, g in zip(targets, target_grads) if t is source]
        if seeds:
            grads[k] = aggregate(seeds)


def _warn_integer(target, source):
    """The warnings of `gradient` for an integer target or source."""
    if not target._meta.dtype._inexact:
        _warn_integer_target(target._meta.dtype)
    if not source._meta.dtype._inexact:
        _warn_integer_source(source._meta.dtype)


def _warn_integer_target(dtype):
    _log.warning("The dtype of the target tensor must be floating (e.g. eager.float32) when "
                 "calling GradientTape.gradient, got %r", dtype)


def _warn_integer_source(dtype):
    _log.warning("The dtype of the source tensor must be floating (e.g. eager.float32) when "
                 "calling GradientTape.gradient, got %r", dtype)


def _zeros_for(source):
    """Zeros shaped like what a source stands for (a variable's handle: the variable)."""
    if source.dtype is _dt.resource:
        dtype, shape = handle_data(source)
        return zeros(list(shape), dtype)
    return zeros_like(source)


def _as_target(t):
    if isinstance(t, Tensor):
        return t
    handle = getattr(t, "_tape_target", None)
    if handle is not None:
        return handle()
    return convert_to_tensor(t)


def _static_size(t, what):
    n = t.shape.num_elements()
    if n is None:
        raise ValueError(f"{what} needs a target with a fully defined shape, got {t.shape}.")
    return n


def _one_hot_seed(i, like):
    """1 at flat position i of an array shaped like `like`, 0 elsewhere."""
    seed = np.zeros(int(np.prod(like.shape, dtype=np.int64)), dtype=like.dtype.as_numpy_dtype)
    seed[i] = 1
    return convert_to_tensor(seed.reshape(tuple(like.shape)))


def _column_seed(j, like):
    """1 at per-example flat position j of every example of a [batch, ...] array."""
    shape = tuple(like.shape)
    if shape[0] is None:  # the batch size is read when the traced function runs
        row = np.zeros(int(np.prod(shape[1:], dtype=np.int64)), like.dtype.as_numpy_dtype)
        row[j] = 1
        return broadcast_to(convert_to_tensor(row.reshape(shape[1:])), shape_of(like))
    seed = np.zeros((shape[0], int(np.prod(shape[1:], dtype=np.int64))),
                    dtype=like.dtype.as_numpy_dtype)
    seed[:, j] = 1
    return convert_to_tensor(seed.reshape(shape))
