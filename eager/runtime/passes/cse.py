"""Common-subexpression elimination: a pure computation done twice is done once.

Two nodes are the same computation when they apply the same `OpDef` (the same object) to the
same input values with equal attributes, wait for the same control inputs (as a set) and ask
for the same device. The later one is removed: its outputs are renamed to the earlier one's
everywhere (inputs, fetches), and control inputs and targets naming it name the kept node.

Never merged: stateful nodes and nodes on resources (`Node.is_stateful`: two random draws, two
prints, two reads of a variable with a write between them are different events), unfed
Placeholders, sub-graph ops, and nodes with no outputs.

Small constants with the same dtype, shape, device and bits are first merged into one value,
so that `x * 2.0` traced twice (each 2.0 a separate capture) is recognised as one computation.

One pass in topological order suffices for chains: a node's inputs and control inputs are
renamed before its key is computed, so once `a1 == a2` is found, `exp(a1)` and `exp(a2)` get
equal keys when they are reached.

Addition and multiplication of real numbers are commutative in IEEE arithmetic too (the
result is the exactly rounded sum or product either way), so `AddV2`/`Mul` of real operands
match with their inputs in either order: the gradient of `x * x` computes `dy * x` and `x * dy`,
one product. (Complex products are left alone: a fused multiply-add may round the two orders
differently.)

Attribute comparison is exact and conservative: values are compared together with their types
(`1`, `1.0` and `True` differ), floats by their bits (`0.0` and `-0.0` differ; NaN equals a NaN
with the same bits), containers element by element; a value that cannot be hashed or compared
reliably (a numpy array, an object whose `==` raises) makes the node unmergeable rather than
risk merging two different computations.
"""

from __future__ import annotations

import math
import struct

import numpy as np

from ...base.errors import OpError
from ...graph.placeholder import PLACEHOLDER
from ...ops import math_ops as _m
from ...tensor import EagerTensor
from ...base.tensor_shape import TensorShape

__all__ = ["eliminate_common_subexpressions"]

#: Constants up to this size are compared by value (reading a larger one just to compare it
#: would cost more than CSE saves).
_CONSTANT_COMPARE_BYTES = 1024


def eliminate_common_subexpressions(program):
    """The program with duplicate pure computations merged (see the module doc). Returns
    `program` itself when nothing merges."""
    renamed = _merge_equal_constants(program)  # value id -> the value id replacing it
    merged = {}  # removed node name -> kept node name
    seen = {}  # key -> kept node
    nodes = []
    for node in program.nodes:
        inputs = tuple(renamed.get(v, v) for v in node.inputs)
        controls = _unique(merged.get(c, c) for c in node.control_inputs)
        if inputs != node.inputs or controls != node.control_inputs:
            node = node.replace(inputs=inputs, control_inputs=controls)
        key = _key(node, program.specs)
        if key is not None:
            kept = seen.get(key)
            if kept is not None:
                renamed.update(zip(node.outputs, kept.outputs))
                merged[node.name] = kept.name
                continue
            seen[key] = node
        nodes.append(node)
    if not renamed and not merged:
        return program
    constants = {v: t for v, t in program.constants.items() if v not in renamed}
    return program.replace(
        nodes=nodes, constants=constants,
        fetches=tuple(renamed.get(v, v) for v in program.fetches),
        targets=_unique(merged.get(t, t) for t in program.targets))


def _key(node, specs):
    """What makes two nodes the same computation, or None when `node` must never be merged."""
    op_def = node.op_def
    if (node.is_stateful or op_def is PLACEHOLDER or op_def.replay is not None
            or not node.outputs):
        return None
    attrs = _attr_key(node.attrs)
    if attrs is _UNMERGEABLE:
        return None
    inputs = node.inputs
    if op_def in _COMMUTATIVE and _real(specs.get(inputs[0])) and _real(specs.get(inputs[1])):
        inputs = tuple(sorted(inputs))
    return (id(op_def), inputs, attrs, frozenset(node.control_inputs), node.device,
            len(node.outputs))


#: Binary ops whose result does not depend on the order of two real operands.
_COMMUTATIVE = frozenset({_m.ADD, _m.MUL})


def _real(spec) -> bool:
    dtype = None if spec is None else spec.dtype
    return dtype is not None and (dtype.is_floating or dtype.is_integer)


class _Unmergeable:
    __slots__ = ()


_UNMERGEABLE = _Unmergeable()


def _attr_key(value):
    """A hashable key equal for two attribute values exactly when they are interchangeable, or
    _UNMERGEABLE."""
    kind = type(value)
    if value is None or kind is bool or kind is int or kind is str or kind is bytes:
        return (kind, value)
    if kind is float:
        return (kind, struct.pack("<d", value))
    if kind is complex:
        return (kind, struct.pack("<dd", value.real, value.imag))
    if isinstance(value, np.generic):
        return (kind, value.tobytes())
    if kind is tuple or kind is list or kind is frozenset:
        items = sorted(value, key=repr) if kind is frozenset else value
        keys = tuple(_attr_key(v) for v in items)
        return _UNMERGEABLE if _UNMERGEABLE in keys else (kind, keys)
    if kind is dict:
        keys = []
        for name in sorted(value, key=repr):
            k = _attr_key(value[name])
            if k is _UNMERGEABLE:
                return _UNMERGEABLE
            keys.append((_attr_key(name), k))
        return (kind, tuple(keys))
    if isinstance(value, TensorShape):
        return (TensorShape, None if value.rank is None else tuple(value))
    if isinstance(value, np.ndarray):
        return _UNMERGEABLE
    try:
        hash(value)
    except Exception:  # noqa: BLE001
        return _UNMERGEABLE
    return (kind, _Opaque(value))


class _Opaque:
    """An attribute value of another type (a DType, a function): equal when it is the same
    object or compares equal without error (an error or a non-bool answer means different)."""

    __slots__ = ("value", "_hash")

    def __init__(self, value):
        self.value = value
        self._hash = hash(value)

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        if not isinstance(other, _Opaque):
            return NotImplemented
        if self.value is other.value:
            return True
        try:
            equal = self.value == other.value
        except Exception:  # noqa: BLE001
            return False
        return equal if type(equal) is bool else False


def _merge_equal_constants(program) -> dict:
    """value id -> earlier value id, for small constants equal in dtype, shape, device and bits."""
    first = {}
    renamed = {}
    for v, t in program.constants.items():
        if t.__class__ is not EagerTensor or not t.dtype.is_numpy_compatible:
            continue
        if math.prod(t.shape) * t.dtype.size > _CONSTANT_COMPARE_BYTES:
            continue
        try:
            data = np.asarray(t.numpy()).tobytes()
        except OpError:
            # Reading the value synchronized its device, which reports (once) an earlier
            # kernel's failure (a simulated GPU's, an async executor's): the caller's error to
            # see, not a constant this pass may skip. Swallowed, it was lost for good and the
            # failed op's output read as whatever its buffer held.
            raise
        except Exception:  # noqa: BLE001
            continue
        key = (t.dtype, tuple(t.shape), t._meta.device, data)
        kept = first.setdefault(key, v)
        if kept != v:
            renamed[v] = kept
    return renamed


def _unique(names) -> tuple:
    return tuple(dict.fromkeys(names))
