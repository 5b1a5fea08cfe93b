"""The tape: which tensors a gradient tape follows, and the ops that connect them.

A tape is a list of records (one per recorded op, in execution order, which is a topological
order) plus the set of tensor ids it follows. A tensor's id lives in its `_tape_id` slot: 0 until
a tape first watches it or records an op producing it, then a process-unique int. Ids are never
reused, so a tape can follow tensors by id without keeping them alive: a record keeps only what
its op's gradient declared it needs (`keep_inputs` / `keep_outputs` on the OpDef), plus every
input's and output's shape and dtype. When the tape goes, so do the intermediates (tensors never
point back at records, so there are no reference cycles).

A record is a plain tuple (`OP`, `ATTRS`, `BACKWARD`, `INPUT_IDS`, `OUTPUT_IDS`, `KEPT_INPUTS`,
`KEPT_OUTPUTS`, `SIGNATURE` name its positions), not an object: recording runs for every op
under a tape, and a training step's backward pass usually runs a compiled plan that only reads
the kept tensors and signatures (`eager.runtime.tape_backward_plans`), so the gradient rules'
view of a record, a `RecordedOp`, is made only when the backward pass walks op by op. The
signature is everything static about the record in one flat tuple, which is also its part of a
plan's key:

    (op, attrs as a tuple of items (None: cannot key a plan), number of inputs,
     *links, *shapes, *dtypes)          # links, shapes, dtypes: inputs' then outputs'

where the links are the tensors' ids renumbered in the tape's order of first sight
(`Tape.numbers`), so equal structures have equal signatures whatever the ids.

Recording is a hook that dispatch calls after every op while a tape is active on the thread
(`set_recorder`), for eager and traced ops alike.
"""

from __future__ import annotations

import itertools

from ..core import context as _context
from ..core.context import per_thread
from ..base.dtypes import variant
from ..core import dispatch as _dispatch
from ..ops.operators import OPERATOR_OPS as _OPERATOR_OPS
from ..core.registry import NO_ATTRS
from ..core.shapes import RunTimeShape
from ..tensor import EagerTensor, set_operator_recorder

__all__ = ["Tape", "RecordedOp", "OP", "ATTRS", "BACKWARD", "INPUT_IDS", "OUTPUT_IDS",
           "KEPT_INPUTS", "KEPT_OUTPUTS", "SIGNATURE", "new_id", "tensor_id", "record_op",
           "record_operator", "record_custom", "active_tapes", "variable_accessed",
           "watches_variables", "op_backward"]

_next_id = itertools.count(1).__next__


def new_id() -> int:
    return _next_id()


def tensor_id(t) -> int:
    """The tape id of `t`, assigning one if it has none."""
    tid = t._tape_id
    if not tid:
        tid = t._tape_id = _next_id()
    return tid


#: Positions in a record (module doc).
OP, ATTRS, BACKWARD, INPUT_IDS, OUTPUT_IDS, KEPT_INPUTS, KEPT_OUTPUTS, SIGNATURE = range(8)


class RecordedOp:
    """One recorded op as a gradient rule sees it: the rule's first argument, `forward` (the
    forward op as recorded, so rules read `x, y = forward.inputs`). `forward.op` is its OpDef,
    `forward.inputs[i]` / `forward.outputs[i]` the kept tensors (None where the op's gradient did
    not ask to keep them), `forward.attrs` the op's attributes, `forward.input_shapes[i]` /
    `forward.input_dtypes[i]` every input's static shape and dtype. During the backward pass
    `forward.input_needed[i]` says whether input i's gradient is wanted at all, so expensive
    rules (matmul, convolution) can skip the products nobody uses (TensorFlow's
    `skip_input_indices`), and `forward.output_filled[k]` says the gradient of output k is zeros
    filled in because nothing used that output (so a rule can drop its terms exactly).
    """

    __slots__ = ("record", "op", "attrs", "input_ids", "output_ids", "inputs", "outputs",
                 "backward", "input_needed", "output_filled", "_shapes")

    def __init__(self, record):
        self.record = record
        (self.op, self.attrs, self.backward, self.input_ids, self.output_ids, self.inputs,
         self.outputs, _) = record
        self.input_needed = None  # set by the backward pass
        self.output_filled = None  # set by the backward pass: outputs whose grads are filled zeros
        self._shapes = None  # the shapes with pending tensors' settled, once asked for

    @property
    def signature(self) -> tuple:
        return self.record[SIGNATURE]

    @property
    def links(self) -> tuple:
        """The input then output ids renumbered in the tape's order of first sight: how records
        connect, independent of the ids themselves."""
        record = self.record
        return record[SIGNATURE][3:3 + len(record[INPUT_IDS]) + len(record[OUTPUT_IDS])]

    @property
    def input_shapes(self) -> tuple:
        """Each input's static shape: a plain tuple for eager inputs (compare, index, zip, len),
        a TensorShape (possibly with None dims) for symbolic ones."""
        return self._all_shapes()[:len(self.input_ids)]

    @property
    def output_shapes(self) -> tuple:
        return self._all_shapes()[len(self.input_ids):]

    @property
    def input_dtypes(self) -> tuple:
        signature, n = self.record[SIGNATURE], len(self.input_ids)
        start = 3 + 2 * (n + len(self.output_ids))
        return signature[start:start + n]

    @property
    def output_dtypes(self) -> tuple:
        signature = self.record[SIGNATURE]
        return signature[3 + 3 * len(self.input_ids) + 2 * len(self.output_ids):]

    def _all_shapes(self) -> tuple:
        shapes = self._shapes
        if shapes is None:
            signature, count = self.record[SIGNATURE], len(self.input_ids) + len(self.output_ids)
            shapes = self._shapes = _settled(signature[3 + count:3 + 2 * count])
        return shapes

    @property
    def name(self):
        return self.op.name if self.op is not None else "CustomGradient"

    def __repr__(self):
        return f"<RecordedOp {self.name} in={self.input_ids} out={self.output_ids}>"


def _kept(tensors, keep) -> tuple:
    """The tensors a gradient keeps (`keep`: True for all, else indices), None for the
    others."""
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
    keeps its value alive as long as the tape: the price of a shape known only from data. A
    symbolic tensor with unknown dimensions is recorded with a `RunTimeShape`, which remembers
    it (it has no value to keep)."""
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
            shape = t.shape
            if shape._rank_known and None in shape:
                # A symbolic tensor's dimensions known only when the graph runs: rules that
                # need them take `shape(t)` then (`RunTimeShape`).
                shape = RunTimeShape(t)
            shapes.append(shape)
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
                 "_variable_ids", "numbers", "keyed", "__weakref__")

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self.ids = set()
        self.entries = []
        self.persistent = persistent
        self.watch_accessed_variables = watch_accessed_variables
        # Watched variables, in watch order (eager.variables plugs in), and the id() of each
        # (a read must not scan the list): made at the first watched variable.
        self.variables = self._variable_ids = None
        # Tape id -> its number in order of first sight in the entries (0: untracked), which
        # each entry's links use: a backward planner keys a whole tape by them without
        # renumbering its entries.
        self.numbers = {0: 0}
        # Whether every entry's signature can key a plan (an op with a gradient rule, not a
        # custom gradient or control flow re-running user code).
        self.keyed = True

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
        seen = self._variable_ids
        if seen is None:
            seen = self._variable_ids = set()
            self.variables = []
        if key not in seen:
            seen.add(key)
            self.variables.append(variable)

    def watched_variables(self) -> tuple:
        return tuple(self.variables) if self.variables else ()

    def forget_variables(self) -> None:
        self.variables = self._variable_ids = None

    def is_watched(self, t) -> bool:
        return bool(t._tape_id) and t._tape_id in self.ids

    def record(self, op, inputs, attrs, outputs, backward, keep_inputs, keep_outputs,
               attrs_key=None):
        """Adds a record if any input is followed by this tape; returns whether it did.
        `attrs_key` is `attrs` as a tuple of items where the record can key a plan (a
        registered op's gradient rule), None where it cannot (module doc). Any inputs and
        outputs: pending and symbolic tensors, several outputs (`record_eager` takes the
        usual op faster)."""
        ids = self.ids
        for t in inputs:
            if t._tape_id in ids:
                break
        else:
            return False
        if attrs_key is None:
            self.keyed = False
        numbers = self.numbers
        input_ids, input_shapes, input_dtypes = _describe(inputs)
        output_ids, output_shapes, output_dtypes = _describe(outputs, ids)
        signature = (op, attrs_key, len(inputs), *_numbered(numbers, input_ids),
                     *_numbered(numbers, output_ids), *input_shapes, *output_shapes,
                     *input_dtypes, *output_dtypes)
        self.entries.append((op, attrs, backward, input_ids, output_ids,
                             _kept(inputs, keep_inputs), _kept(outputs, keep_outputs),
                             signature))
        return True

    def record_eager(self, op, inputs, attrs, out, keep_inputs, keep_outputs, attrs_key):
        """`record` of an op with one or two eager inputs (a tuple) and one eager output
        `out`, under a registered op's gradient rule (`op_backward`): most ops, and every
        operator of the tensors' fast path. Hot path while recording: straight-line code that
        builds the record's tuples directly, shapes being the arrays' own tuples."""
        ids = self.ids
        pair = len(inputs) == 2
        if pair:
            a, b = inputs
            a_id = a._tape_id
            b_id = b._tape_id
            if a_id not in ids and b_id not in ids:
                return
        else:
            a = inputs[0]
            a_id = a._tape_id
            if a_id not in ids:
                return
        numbers = self.numbers
        a_number = numbers.get(a_id)
        if a_number is None:
            a_number = numbers[a_id] = len(numbers)
        if pair:
            b_number = numbers.get(b_id)
            if b_number is None:
                b_number = numbers[b_id] = len(numbers)
        dtype = out._meta.dtype
        if dtype._inexact or dtype is variant:  # followed (TensorLists carry gradients too)
            tid = out._tape_id
            if not tid:
                tid = out._tape_id = _next_id()
            ids.add(tid)
        else:
            tid = 0
        number = numbers.get(tid)
        if number is None:
            number = numbers[tid] = len(numbers)
        if pair:
            input_ids = (a_id, b_id)
            signature = (op, attrs_key, 2, a_number, b_number, number, a._value.shape,
                         b._value.shape, out._value.shape, a._meta.dtype, b._meta.dtype, dtype)
            if keep_inputs is True or keep_inputs == _ALL_KEPT[2]:
                kept_inputs = inputs
            else:
                kept_inputs = _kept(inputs, keep_inputs)
        else:
            input_ids = (a_id,)
            signature = (op, attrs_key, 1, a_number, number, a._value.shape, out._value.shape,
                         a._meta.dtype, dtype)
            kept_inputs = inputs if keep_inputs else _NOTHING_KEPT[1]
        if attrs_key is None:
            self.keyed = False
        self.entries.append((op, attrs, op_backward, input_ids, (tid,), kept_inputs,
                             (out,) if keep_outputs else _NOTHING_KEPT[1], signature))

    def as_recorded_ops(self) -> list:
        """Every record as a `RecordedOp` (for inspection: a walk makes them as it goes)."""
        return [RecordedOp(record) for record in self.entries]

    def release(self):
        self.entries = []
        self.ids = set()
        self.numbers = {0: 0}
        self.keyed = True


def _numbered(numbers, ids) -> list:
    """The numbers of `ids` (`Tape.numbers`), numbering those not seen yet."""
    out = []
    for i in ids:
        number = numbers.get(i)
        if number is None:
            number = numbers[i] = len(numbers)
        out.append(number)
    return out


def active_tapes():
    return _context.thread_state().tapes


def record_op(tapes, op, inputs, attrs, outputs):
    """Dispatch's recorder hook: called after every op while a tape is active on the thread.
    Hot path while recording."""
    if not op.differentiable:
        return
    if op.gradient is None:
        # Recorded anyway so that gradient() can say which op lacks a gradient, as TF does;
        # such a tape is never planned.
        keep_in = keep_out = ()
        attrs_key = None
    else:
        keep_in, keep_out = op.grad_keeps_inputs, op.grad_keeps_outputs
        if op.replay is not None:  # control flow: its gradient re-runs user code
            attrs_key = None
        else:
            attrs_key = tuple(attrs.items()) if attrs else ()
    if outputs.__class__ is not tuple:
        n = len(inputs)
        if outputs.__class__ is EagerTensor and (
                n == 2 and inputs[0].__class__ is EagerTensor
                and inputs[1].__class__ is EagerTensor
                or n == 1 and inputs[0].__class__ is EagerTensor):
            for tape in tapes:
                tape.record_eager(op, inputs, attrs, outputs, keep_in, keep_out, attrs_key)
            return
        outputs = (outputs,)
    for tape in tapes:
        tape.record(op, inputs, attrs, outputs, op_backward, keep_in, keep_out, attrs_key)


def record_operator(name, x, y, out):
    """The tensor operators' recorder (installed with `eager.tensor.set_operator_recorder`): the
    fast path computed `out` from the eager tensors `x` and `y` with the operator `name` ("add",
    "sub", "mul", "truediv"), without dispatch; this thread's tapes record it as `record_op`
    would."""
    tapes = per_thread.state.tapes
    if tapes:
        op = _OPERATOR_OPS[name]
        inputs = (x, y)
        keep_in, keep_out = op.grad_keeps_inputs, op.grad_keeps_outputs
        attrs_key = () if op.gradient is not None else None  # as `record_op`
        for tape in tapes:
            tape.record_eager(op, inputs, NO_ATTRS, out, keep_in, keep_out, attrs_key)


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
set_operator_recorder(record_operator)
