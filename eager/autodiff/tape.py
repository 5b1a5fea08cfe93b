"""The tape: which tensors a gradient tape follows, and the ops that connect them.

A tape is a list of `Entry`s (one per recorded op, in execution order, which is a topological
order) plus the set of tensor ids it follows. A tensor's id lives in its `_tape_id` slot: 0 until
a tape first watches it or records an op producing it, then a process-unique int. Ids are never
reused, so a tape can follow tensors by id without keeping them alive: an entry keeps only what
its op's gradient declared it needs (`keep_inputs` / `keep_outputs` on the OpDef), plus the
inputs' shapes and dtypes. When the tape goes, so do the intermediates (tensors never point back
at entries, so there are no reference cycles).

Recording is a hook that dispatch calls after every op while a tape is active on the thread
(`set_recorder`), for eager and traced ops alike.
"""

from __future__ import annotations

import itertools

from .. import context as _context
from ..dtypes import variant
from ..ops import dispatch as _dispatch
from ..tensor import EagerTensor

__all__ = ["Tape", "Entry", "new_id", "tensor_id", "record_op", "record_custom", "active_tapes",
           "variable_accessed", "watches_variables", "op_backward"]

_next_id = itertools.count(1).__next__


def new_id() -> int:
    return _next_id()


def tensor_id(t) -> int:
    """The tape id of `t`, assigning one if it has none."""
    tid = t._tape_id
    if not tid:
        tid = t._tape_id = _next_id()
    return tid


class Entry:
    """One recorded op: what its gradient needs, and how tensors connect through it.

    Gradient functions receive the entry as their `call` argument: `call.inputs[i]` /
    `call.outputs[i]` are the kept tensors (None where the op's gradient did not ask to keep
    them), `call.attrs` the op's attributes, `call.input_shapes[i]` / `call.input_dtypes[i]`
    every input's static shape and dtype. During the backward pass `call.input_needed[i]` says
    whether input i's gradient is wanted at all, so expensive rules (matmul, convolution) can
    skip the products nobody uses (TensorFlow's `skip_input_indices`), and
    `call.output_filled[k]` says the gradient of output k is zeros filled in because nothing used
    that output (so a rule can drop its terms exactly).
    """

    __slots__ = ("op", "attrs", "input_ids", "output_ids", "inputs", "outputs", "input_dtypes",
                 "output_dtypes", "backward", "input_needed", "output_filled", "_input_shapes",
                 "_output_shapes", "links")

    def __init__(self, op, attrs, input_ids, output_ids, inputs, outputs, input_shapes,
                 input_dtypes, output_shapes, output_dtypes, backward, links=None):
        self.op = op
        # The input then output ids renumbered in the tape's order of first sight
        # (`Tape.numbers`): how entries connect, independent of the ids themselves.
        self.links = links
        self.attrs = attrs
        self.input_ids = input_ids
        self.output_ids = output_ids
        self.inputs = inputs
        self.outputs = outputs
        self._input_shapes = input_shapes  # array shapes (plain tuples) until first asked for
        self.input_dtypes = input_dtypes
        self._output_shapes = output_shapes
        self.output_dtypes = output_dtypes
        self.backward = backward  # backward(entry, *output_grads) -> input grads
        self.input_needed = None  # set by the backward pass
        self.output_filled = None  # set by the backward pass: outputs whose grads are filled zeros

    @property
    def input_shapes(self):
        """Each input's static shape: a plain tuple for eager inputs (compare, index, zip, len),
        a TensorShape (possibly with None dims) for symbolic ones."""
        shapes = self._input_shapes = _settled(self._input_shapes)
        return shapes

    @property
    def output_shapes(self):
        shapes = self._output_shapes = _settled(self._output_shapes)
        return shapes

    @property
    def name(self):
        return self.op.name if self.op is not None else "CustomGradient"

    def __repr__(self):
        return f"<Entry {self.name} in={self.input_ids} out={self.output_ids}>"


def _kept(tensors, keep):
    n = len(tensors)
    if keep is True or (n < 4 and keep == _ALL_KEPT[n]):
        return tensors if tensors.__class__ is tuple else tuple(tensors)
    if not keep:
        return _NOTHING_KEPT[n] if n < 4 else (None,) * n
    kept = [None] * n
    for i in keep:
        if i < n:
            kept[i] = tensors[i]
    return tuple(kept)


_NOTHING_KEPT = ((), (None,), (None, None), (None, None, None))
_ALL_KEPT = ((), (0,), (0, 1), (0, 1, 2))


def op_backward(entry, *grads):
    """The backward of an entry recorded for a registered op: its gradient rule."""
    return entry.op.gradient(entry, *grads)


def _describe(tensors, follow=None):
    """(tape ids, shapes, dtypes) of `tensors`, as tuples. With `follow` (a tape's id set), the
    tensors are an op's outputs: each differentiable one gets an id and is followed; the others
    get id 0.

    A pending tensor (asynchronous dispatch) whose shape inference could not fully determine
    is recorded as itself in place of its shape, which is known once it has run: the entry's
    `input_shapes`/`output_shapes` settle it when a gradient rule asks (`_settled`). That
    keeps its value alive as long as the tape: the price of a shape known only from data."""
    tids, shapes, dtypes = [], [], []
    for t in tensors:
        if t.__class__ is EagerTensor:
            shapes.append(t._value.shape)
            dtype = t._meta.dtype
        elif hasattr(t, "_resolve"):  # pending: its inferred shape, read without waiting
            shape = t._shape
            shapes.append(shape if shape.is_fully_defined() else t)
            dtype = t.dtype
        else:
            shapes.append(t.shape)
            dtype = t.dtype
        dtypes.append(dtype)
        if follow is None:
            tids.append(t._tape_id)
        elif dtype._inexact or dtype is variant:  # TensorLists carry gradients too
            tid = t._tape_id
            if not tid:
                tid = t._tape_id = _next_id()
            follow.add(tid)
            tids.append(tid)
        else:
            tids.append(0)
    return tuple(tids), tuple(shapes), tuple(dtypes)


def _settled(shapes):
    """`shapes` itself, or, when it holds pending tensors recorded in place of their shapes
    (`_describe`), a copy with their computed shapes (waiting for them)."""
    for shape in shapes:
        if hasattr(shape, "_resolve"):
            return tuple(s._resolve()._value.shape if hasattr(s, "_resolve") else s
                         for s in shapes)
    return shapes


class Tape:
    """The recording state of one GradientTape."""

    __slots__ = ("ids", "entries", "persistent", "watch_accessed_variables", "variables",
                 "_variable_ids", "numbers", "__weakref__")

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self.ids = set()
        self.entries = []
        self.persistent = persistent
        self.watch_accessed_variables = watch_accessed_variables
        self.variables = []  # watched variables, in watch order (eager.variables plugs in)
        self._variable_ids = set()  # id() of each of them: a read must not scan the list
        # Tape id -> its number in order of first sight in the entries (0: untracked), which
        # each entry's `links` use: a backward planner keys a whole tape by them without
        # renumbering its entries.
        self.numbers = {0: 0}

    def watch(self, t) -> int:
        tid = tensor_id(t)
        self.ids.add(tid)
        return tid

    def watch_variable(self, variable, handle) -> None:
        """Follows `handle` (the variable's resource tensor) and lists `variable` once, in
        watch order. Called on every read of a trainable variable under the tape: constant
        time, whatever the number of variables."""
        self.watch(handle)
        key = id(variable)
        if key not in self._variable_ids:
            self._variable_ids.add(key)
            self.variables.append(variable)

    def forget_variables(self) -> None:
        self.variables.clear()
        self._variable_ids.clear()

    def is_watched(self, t) -> bool:
        return bool(t._tape_id) and t._tape_id in self.ids

    def record(self, op, inputs, attrs, outputs, backward, keep_inputs, keep_outputs):
        """Adds an entry if any input is followed by this tape; returns whether it did.

        Hot path while recording (every op under a tape): one pass over inputs and one over
        outputs, shapes stored as the arrays' own tuples; ops with one or two eager inputs and
        one output (most of them) build their tuples without intermediate lists.
        """
        ids = self.ids
        for t in inputs:
            if t._tape_id in ids:
                break
        else:
            return False
        numbers = self.numbers
        n = len(inputs)
        if n == 2 and inputs[0].__class__ is EagerTensor and inputs[1].__class__ is EagerTensor:
            a, b = inputs
            a_id, b_id = input_ids = (a._tape_id, b._tape_id)
            input_shapes = (a._value.shape, b._value.shape)
            input_dtypes = (a._meta.dtype, b._meta.dtype)
            a_number = numbers.get(a_id)
            if a_number is None:
                a_number = numbers[a_id] = len(numbers)
            b_number = numbers.get(b_id)
            if b_number is None:
                b_number = numbers[b_id] = len(numbers)
            links = (a_number, b_number)
        elif n == 1 and inputs[0].__class__ is EagerTensor:
            a = inputs[0]
            a_id = a._tape_id
            input_ids = (a_id,)
            input_shapes = (a._value.shape,)
            input_dtypes = (a._meta.dtype,)
            a_number = numbers.get(a_id)
            if a_number is None:
                a_number = numbers[a_id] = len(numbers)
            links = (a_number,)
        else:
            input_ids, input_shapes, input_dtypes = _describe(inputs)
            links = _numbered(numbers, input_ids)
        if len(outputs) == 1 and outputs[0].__class__ is EagerTensor:
            out = outputs[0]
            dtype = out._meta.dtype
            output_shapes = (out._value.shape,)
            output_dtypes = (dtype,)
            if dtype._inexact or dtype is variant:  # TensorLists carry gradients too
                tid = out._tape_id
                if not tid:
                    tid = out._tape_id = _next_id()
                    number = numbers[tid] = len(numbers)  # a new id: a new number
                else:
                    number = numbers.get(tid)
                    if number is None:
                        number = numbers[tid] = len(numbers)
                ids.add(tid)
                output_ids = (tid,)
                links += (number,)
            else:
                output_ids = (0,)
                links += (0,)
        else:
            output_ids, output_shapes, output_dtypes = _describe(outputs, ids)
            links += _numbered(numbers, output_ids)
        # What the gradient keeps: the two usual answers (all, nothing) without a call.
        if keep_inputs is True and inputs.__class__ is tuple:
            kept_inputs = inputs
        else:
            kept_inputs = _NOTHING_KEPT[n] if not keep_inputs and n < 4 else _kept(
                inputs, keep_inputs)
        if keep_outputs is True and outputs.__class__ is tuple:
            kept_outputs = outputs
        elif not keep_outputs and len(outputs) == 1:
            kept_outputs = _NOTHING_KEPT[1]
        else:
            kept_outputs = _kept(outputs, keep_outputs)
        self.entries.append(Entry(
            op, attrs, input_ids, output_ids, kept_inputs, kept_outputs, input_shapes,
            input_dtypes, output_shapes, output_dtypes, backward, links))
        return True

    def release(self):
        self.entries = []
        self.ids = set()
        self.numbers = {0: 0}


def _numbered(numbers, ids) -> tuple:
    """The numbers of `ids` (`Tape.numbers`), numbering those not seen yet."""
    out = []
    for i in ids:
        number = numbers.get(i)
        if number is None:
            number = numbers[i] = len(numbers)
        out.append(number)
    return tuple(out)


def active_tapes():
    return _context.thread_state().tapes


def record_op(tapes, op, inputs, attrs, outputs):
    """Dispatch's recorder hook: called after every op while a tape is active on the thread.
    Hot path while recording."""
    if not op.differentiable:
        return
    if op.gradient is None:
        # Recorded anyway so that gradient() can say which op lacks a gradient, as TF does.
        keep_in = keep_out = ()
    else:
        keep_in, keep_out = op.grad_keeps_inputs, op.grad_keeps_outputs
    outs = outputs if outputs.__class__ is tuple else (outputs,)
    for tape in tapes:
        tape.record(op, inputs, attrs, outs, op_backward, keep_in, keep_out)


def variable_accessed(variable):
    """Called by eager.variables whenever a trainable variable is read while this thread has
    tapes or variable watchers (`watches_variables`): every active tape of this thread that
    watches accessed variables (the default) starts following it, and every watcher hears of
    it. This is the hook the variables layer plugs into; autodiff never imports variables."""
    st = _context.thread_state()
    for tape in st.tapes:
        if tape.watch_accessed_variables:
            variable._watch_on_tape(tape)
    for watcher in st.variable_watchers:
        watcher.saw(variable)


def watches_variables(st) -> bool:
    """Whether a trainable variable read on the thread of `st` must call `variable_accessed`."""
    return bool(st.tapes or st.variable_watchers)


def record_custom(inputs, outputs, backward, keep_inputs=True, keep_outputs=True):
    """Records a composite step (custom gradient, function call) on every active tape."""
    for tape in _context.thread_state().tapes:
        tape.record(None, inputs, None, tuple(outputs), backward, keep_inputs, keep_outputs)


_dispatch.set_recorder(record_op)
