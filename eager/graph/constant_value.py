"""Trace-time values: what a symbolic tensor holds when no function input's value decides it.

Ops here take their sizes as static attributes (a shape, a tile count, a one-hot depth), known
when the op is created. A traced function often computes such a size from what *is* known at
trace time: `tf.reshape(x, [tf.shape(x)[0], -1])` with x's shape fully known, or
`tf.zeros(tf.stack([n, 2]))` with `n` a captured constant. TensorFlow's `constant_value`
(`tensor_util`) answers those by partial evaluation; `constant_value` here does the same:

* a captured eager tensor is its value;
* `Shape`, `Size` and `Rank` of a tensor whose static shape answers them are that answer;
* any other op with no effects (not stateful, touching no resource, not control flow) is run
  on the CPU when every input has a trace-time value (recursively).

Anything else (an argument's value, a random draw, a variable's value, a shape the trace left
partial) has none: None.

A size known only when the function runs still has parts the trace knows: `tf.shape(x)` of x
of static shape [None, 3] is [?, 3], and `tf.stack([n, 3])` is [?, 3] whatever `n` is.
`partial_value` answers with those parts (TensorFlow's `constant_value_as_shape`), so that an op
whose output shape comes from a run-time shape tensor still infers every dimension it can. Ops
that only move elements (slices, stacks, concatenations, reshapes) are run on object arrays
holding None where an element is unknown; `constant_value` uses that too, so `tf.shape(x)[1]`
of that x is 3. Work is bounded (`MAX_OPS` ops evaluated, results of at most
`MAX_ELEMENTS` elements), since the answer is only ever a size; a kernel that fails here also
means None, and the op that needed the value reports that it is unknown.
"""

from __future__ import annotations

import numpy as np

from ..devices import registry as _devices
from ..core import dispatch as _dispatch
from ..ops.array_ops import (CONCAT, EXPAND_DIMS, IDENTITY, PACK, RANK, RESHAPE, SHAPE, SIZE,
                              SQUEEZE)
from ..ops.math_ops import CAST
from ..ops.slicing_ops import STRIDED_SLICE
from ..tensor import EagerTensor
from .placeholder import PLACEHOLDER

__all__ = ["constant_value", "partial_value", "shape_stand_in", "MAX_OPS", "MAX_ELEMENTS"]

#: Ops evaluated for one question, at most.
MAX_OPS = 64
#: Largest value (in elements) evaluated or returned.
MAX_ELEMENTS = 4096

_SHAPE_OPS = (SHAPE, SIZE, RANK)

#: Ops whose kernels only move their inputs' elements: run on object arrays holding None for
#: unknown elements, they give each output element's knowledge (`partial_value`).
_MOVING = frozenset({IDENTITY, STRIDED_SLICE, PACK, CONCAT, RESHAPE, EXPAND_DIMS, SQUEEZE})


def constant_value(t):
    """The numpy value of symbolic tensor `t` if the trace determines it (module doc), else
    None. An EagerTensor is its own value."""
    return _value(t, {}, [MAX_OPS])


def _value(t, memo, budget):
    if t.__class__ is EagerTensor:
        if not t.dtype.is_numpy_compatible:  # a resource handle, a TensorList
            return None
        return _small(np.asarray(t.numpy()))
    op = getattr(t, "op", None)
    if op is None:
        return None
    key = id(t)
    if key in memo:
        return memo[key]
    memo[key] = None  # (a cycle cannot occur in a graph; this also bounds repeated work)
    value = _evaluate(t, op, memo, budget)
    if value is None and op.op_def in _MOVING and t.dtype.is_integer:
        # A slice of a partly known shape may be known (`tf.shape(x)[1]`, x [None, 3]).
        known = _partial(t, {}, budget)
        if known is not None and not any(v is None for v in known.flat):
            value = known.astype(t.dtype.as_numpy_dtype)
    memo[key] = value
    return value


def _evaluate(t, op, memo, budget):
    d = op.op_def
    if d is PLACEHOLDER:
        captured = op.graph.captured_value(t)
        return None if captured is None else _value(captured, memo, budget)
    if d.stateful or d.resource_reads or d.replay is not None or budget[0] <= 0:
        return None
    budget[0] -= 1
    if d in _SHAPE_OPS:
        stand_in = shape_stand_in(d, op.inputs[0].shape, np.float32)
        if stand_in is None:
            return None
        inputs = (stand_in,)
    else:
        inputs = []
        for i in op.inputs:
            v = _value(i, memo, budget)
            if v is None:
                return None
            inputs.append(v)
    cpu = _devices.lookup("CPU:0")
    try:
        wrapped = tuple(_dispatch.wrap_output(v, cpu, d) for v in inputs)
        out = _dispatch.run_kernel(d, wrapped, op.attrs, cpu)
    except Exception:  # noqa: BLE001 - the op that needed the value says it is unknown
        return None
    if out.__class__ is tuple:
        out = out[t.value_index]
    return _small(np.asarray(out._value))


def partial_value(t):
    """What the trace knows of integer tensor `t`'s elements (module doc): a numpy object array
    of t's shape holding a Python int per known element and None per unknown one; None when t's
    own shape is not fully known (or too large to be a size). An EagerTensor is its value."""
    return _partial(t, {}, [MAX_OPS])


def _partial(t, memo, budget):
    shape = t.shape
    if not t.dtype.is_integer or not shape.is_fully_defined() or (
            shape.num_elements() > MAX_ELEMENTS):
        return None
    key = id(t)
    if key in memo:
        return memo[key]
    memo[key] = None
    known = _partial_of(t, memo, budget, tuple(shape))
    memo[key] = known
    return known


def _unknown(dims):
    return np.full(dims, None, dtype=object)


def _partial_of(t, memo, budget, dims):
    op = getattr(t, "op", None)
    d = None if op is None else op.op_def
    if d is SHAPE:
        source = op.inputs[0].shape
        if source.rank is None:
            return _unknown(dims)
        return np.array(list(source), dtype=object).reshape(dims)
    if d is CAST:
        inner = _partial(op.inputs[0], memo, budget)
        return _unknown(dims) if inner is None else inner
    if d not in _MOVING:
        value = _value(t, {}, budget)
        if value is None:
            return _unknown(dims)
        return np.array(value.tolist(), dtype=object).reshape(dims)
    if budget[0] <= 0:
        return _unknown(dims)
    budget[0] -= 1
    inputs = []
    for i in op.inputs:
        inner = _partial(i, memo, budget)
        if inner is None:
            return _unknown(dims)
        inputs.append(inner)
    try:
        out = d.kernel(np, *inputs, **op.attrs)
        if out.__class__ is tuple:
            out = out[t.value_index]
        out = np.asarray(out, dtype=object).reshape(dims)
    except Exception:  # noqa: BLE001 - nothing known then
        return _unknown(dims)
    return out


def shape_stand_in(op_def, shape, dtype):
    """An array standing for a value of static `shape` (numpy `dtype`), for running an op that
    reads only its input's shape (`Shape`, `Size`, `Rank`, `OnesLike`, `ZerosLike`) without
    the data; None when the static shape does not answer the op (Rank needs the rank, the
    others every dimension). It is a zero-stride view: it has the shape and costs no memory."""
    if op_def is RANK:
        if shape.rank is None:
            return None
        dims = (1,) * shape.rank
    elif not shape.is_fully_defined():
        return None
    else:
        dims = tuple(shape)
    return np.broadcast_to(np.zeros((), dtype), dims)


def _small(value):
    if value.dtype == object or value.size > MAX_ELEMENTS:
        return None
    return value
