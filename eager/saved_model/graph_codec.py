"""A traced graph as typed JSON, and back: the function part of eager's SavedModel format.

A graph is written as plain data (see `docs/architecture.md`, "SavedModel"):

    {"ops": [{"name": "MatMul", "op": "MatMul", "inputs": [["x", 0], ["ReadVariableOp", 0]],
              "control": [], "device": "", "attrs": {"transpose_a": {"b": false}, ...},
              "outputs": [["float32", [null, 8]]]}, ...],
     "inputs": ["x", "capture", ...],            # placeholders: arguments, then captures
     "captures": [{"variable": 3}, {"constant": 0}],   # what each capture placeholder is fed
     "outputs": [["Mul", 0]], "control_outputs": ["AssignVariableOp"]}

Attribute values are tagged: `{"b": bool}`, `{"i": int}`, `{"f": float or "nan"/"inf"/"-inf"}`,
`{"s": str}`, `{"none": null}`, `{"dtype": name}`, `{"shape": null or [dims]}`, `{"tuple": [..]}`,
`{"list": [..]}`, `{"const": index}` (an entry of the file's constant table: dtype, shape and the
`.npy` bytes, base64). Nothing else exists in the format, so no attribute can be a Python object.

Reading treats the data as hostile (`decode_graph`): every op name must be registered (else
NotFoundError, TensorFlow's "Op type not registered"), every attribute is one of the tags above
with checked types and ranges, constants' `.npy` headers must match their declared dtype and shape
and their byte counts (nothing is allocated from a claimed size), and every op is re-inferred
from its inputs and attributes with its own `infer`, which must give the recorded output types;
no output may claim more than `MAX_ELEMENTS` elements. Any other inconsistency is a
DataLossError. Nothing is executed while reading.
"""

from __future__ import annotations

import base64
import binascii
import io
import math

import numpy as np

from ..base import dtypes as _dt
from ..base import string_arrays as _string_arrays
from ..base.errors import DataLossError, NotFoundError
from ..base.tensor_shape import TensorShape
from ..core import context as _context
from ..core.registry import get_op
from ..core.tensor_conversion import convert_to_tensor
from ..graph import Graph
from ..graph.constant import CONST, ConstantValue
from ..graph.placeholder import PLACEHOLDER

__all__ = ["encode_graph", "decode_graph", "encode_constant", "decode_constant", "MAX_ELEMENTS",
           "FormatError"]

#: The most elements any tensor of a loaded graph may claim (2**34: 64 GiB of float32).
MAX_ELEMENTS = 1 << 34
_MAX_RANK = 32
_INT64 = (-(1 << 63), (1 << 63) - 1)
#: dtypes a graph's tensors and attributes may name (resource: capture placeholders).
LOADABLE_DTYPES = {d.name: d for d in (*_dt.ALL_AND_STRING, _dt.resource)}
_DTYPES = LOADABLE_DTYPES
#: dtypes a constant may hold.
_CONSTANT_DTYPES = {d.name: d for d in _dt.ALL_AND_STRING}


class FormatError(Exception):
    """Internal: why a SavedModel's content is unusable; the loader turns it into DataLossError
    naming the directory."""


def _require(condition, reason):
    if not condition:
        raise FormatError(reason)


# -----------------------------------------------------------------------------------------------
# Writing
# -----------------------------------------------------------------------------------------------

class UnsaveableError(ValueError):
    """A graph holds something the format cannot express (an op outside the registry, an
    attribute that is a Python object)."""


def encode_constant(array) -> dict:
    """A constant table entry: dtype, shape, and the `.npy` bytes (string arrays packed as in
    checkpoints: lengths, then bytes) in base64."""
    array = np.asarray(array)
    dtype = _dt.as_dtype(array.dtype)
    if dtype.name not in _CONSTANT_DTYPES:
        raise UnsaveableError(f"a constant of dtype {dtype.name} cannot be saved.")
    if dtype is _dt.string:
        data = _string_arrays.pack(array)
    else:
        data = np.require(array.astype(array.dtype.newbyteorder("<"), copy=False),
                          requirements="C")
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, data, allow_pickle=False)
    return {"dtype": dtype.name, "shape": [int(d) for d in array.shape],
            "npy": base64.b64encode(buffer.getvalue()).decode("ascii")}


def _encode_attr(value, constants, where):
    if value is None:
        return {"none": None}
    if value.__class__ is bool:
        return {"b": value}
    if value.__class__ is int:
        return {"i": value}
    if value.__class__ is float:
        return {"f": value if math.isfinite(value) else repr(value)}
    if value.__class__ is str:
        return {"s": value}
    if isinstance(value, _dt.DType):
        return {"dtype": value.name}
    if isinstance(value, TensorShape):
        return {"shape": None if value.rank is None else list(value.as_list())}
    if value.__class__ in (tuple, list):
        return {value.__class__.__name__: [_encode_attr(v, constants, where) for v in value]}
    if isinstance(value, ConstantValue):
        constants.append(encode_constant(value.host))
        return {"const": len(constants) - 1}
    raise UnsaveableError(f"{where} is a {type(value).__name__}, which eager's SavedModel format "
                          "cannot hold (attributes must be numbers, strings, dtypes, shapes or "
                          "tuples of them).")


def encode_graph(graph, capture_sources, constants) -> dict:
    """`graph` (a traced function's) as plain data. `capture_sources` gives, per capture
    placeholder in capture order, what feeds it (`{"variable": node}` or `{"constant": i}`);
    constants go into the shared `constants` list. UnsaveableError for anything the format
    cannot express."""
    ops = []
    for op in graph.get_operations():
        try:
            registered = get_op(op.type)
        except KeyError:
            registered = None
        if registered is not op.op_def:
            raise UnsaveableError(
                f"op {op.name!r} of type {op.type} is not a registered op (control flow and "
                "py_function cannot be saved in eager's SavedModel format yet).")
        attrs = {k: _encode_attr(v, constants, f"attribute {k!r} of op {op.name!r} ({op.type})")
                 for k, v in sorted(op.attrs.items())}
        ops.append({"name": op.name, "op": op.type,
                    "inputs": [[t.op.name, t.value_index] for t in op.inputs],
                    "control": [c.name for c in op.control_inputs], "device": op.device,
                    "attrs": attrs,
                    "outputs": [[t.dtype.name, _shape_list(t.shape)] for t in op.outputs]})
    return {"ops": ops, "inputs": [t.op.name for t in graph.inputs],
            "captures": list(capture_sources),
            "outputs": [[t.op.name, t.value_index] for t in graph.outputs],
            "control_outputs": [op.name for op in graph.control_outputs]}


def _shape_list(shape):
    return None if shape.rank is None else list(shape.as_list())


# -----------------------------------------------------------------------------------------------
# Reading
# -----------------------------------------------------------------------------------------------

def decode_constant(entry, where):
    """The numpy array of a constant table entry, validated (module doc)."""
    _require(isinstance(entry, dict), f"{where} is not an object")
    dtype = _CONSTANT_DTYPES.get(entry.get("dtype"))
    _require(dtype is not None, f"{where} has an unsupported dtype {entry.get('dtype')!r}")
    shape = _checked_dims(entry.get("shape"), where, allow_none=False)
    _require(shape is not None, f"{where} has no shape")
    count = math.prod(shape)
    text = entry.get("npy")
    _require(isinstance(text, str), f"{where} has no data")
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise FormatError(f"{where}: its data is not valid base64") from None
    stream = io.BytesIO(raw)
    try:
        version = np.lib.format.read_magic(stream)
        _require(version in ((1, 0), (2, 0)), f"{where}: npy format version {version}")
        read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                       else np.lib.format.read_array_header_2_0)
        file_shape, fortran_order, file_dtype = read_header(stream)
    except ValueError as exc:
        raise FormatError(f"{where}: its .npy header is invalid ({exc})") from None
    strings = dtype is _dt.string
    want_dtype = np.dtype(np.uint8) if strings else dtype.dtype.newbyteorder("<")
    body = memoryview(raw)[stream.tell():]
    if strings:
        _require(file_dtype == want_dtype and not fortran_order and len(file_shape) == 1
                 and file_shape[0] == len(body), f"{where}: its .npy header does not match "
                 "its string data")
        try:
            return _string_arrays.unpack(body, shape)
        except ValueError as exc:
            raise FormatError(f"{where}: {exc}") from None
    _require(file_dtype == want_dtype and not fortran_order and tuple(file_shape) == shape,
             f"{where}: the .npy header ({file_dtype.str}, {tuple(file_shape)}) does not match "
             f"the declared dtype and shape ({want_dtype.str}, {shape})")
    _require(len(body) == count * want_dtype.itemsize,
             f"{where} holds {len(body)} bytes; shape {list(shape)} of {dtype.name} needs "
             f"{count * want_dtype.itemsize} (truncated?)")
    return np.frombuffer(body, dtype=want_dtype, count=count).reshape(shape).astype(
        dtype.dtype, copy=False)


def _checked_dims(dims, where, allow_none=True):
    """A shape from the file: None (unknown rank) or a tuple of non-negative ints / None."""
    if dims is None and allow_none:
        return None
    _require(isinstance(dims, list) and len(dims) <= _MAX_RANK,
             f"{where} has an invalid shape {dims!r:.80}")
    for d in dims:
        _require(d is None and allow_none or (type(d) is int and 0 <= d <= MAX_ELEMENTS),
                 f"{where} has an invalid dimension {d!r:.40}")
    known = [d for d in dims if d is not None]
    _require(math.prod(known) <= MAX_ELEMENTS,
             f"{where} claims a shape of {math.prod(known)} elements, more than eager loads "
             f"({MAX_ELEMENTS})")
    return tuple(dims)


def _decode_attr(value, constants, where):
    _require(isinstance(value, dict) and len(value) == 1,
             f"{where} is not a tagged value: {value!r:.80}")
    (tag, v), = value.items()
    if tag == "none":
        _require(v is None, f"{where}: a 'none' tag holds a value")
        return None
    if tag == "b":
        _require(type(v) is bool, f"{where}: 'b' needs true or false")
        return v
    if tag == "i":
        _require(type(v) is int and _INT64[0] <= v <= _INT64[1], f"{where}: 'i' needs an int64")
        return v
    if tag == "f":
        if type(v) is str:
            _require(v in ("nan", "inf", "-inf"), f"{where}: 'f' holds the string {v!r:.40}")
            return float(v)
        _require(type(v) in (int, float), f"{where}: 'f' needs a number")
        return float(v)
    if tag == "s":
        _require(type(v) is str, f"{where}: 's' needs a string")
        return v
    if tag == "dtype":
        _require(v in _DTYPES, f"{where}: unknown dtype {v!r:.40}")
        return _DTYPES[v]
    if tag == "shape":
        dims = _checked_dims(v, where)
        return TensorShape(None if dims is None else list(dims))
    if tag in ("tuple", "list"):
        _require(type(v) is list, f"{where}: {tag!r} needs a list")
        items = [_decode_attr(x, constants, f"{where}[{i}]") for i, x in enumerate(v)]
        return tuple(items) if tag == "tuple" else items
    if tag == "const":
        _require(type(v) is int and 0 <= v < len(constants),
                 f"{where}: 'const' refers to no constant ({v!r:.40})")
        return ConstantValue(constants[v])
    raise FormatError(f"{where} has the unknown tag {tag!r:.40} (eager's SavedModel attributes "
                      "are numbers, strings, dtypes, shapes, tuples and constants only)")


def constant_tensors(arrays):
    """Eager tensors (on the CPU) for decoded constant arrays: what `Const` attributes and
    constant captures hold."""
    with _context.device("/cpu:0"):
        return [convert_to_tensor(a) for a in arrays]


def decode_graph(data, name, capture_values, constants) -> Graph:
    """The Graph that `data` (`encode_graph`'s output, untrusted) describes, with its capture
    placeholders standing for `capture_values` (eager tensors, in capture order) and `Const`
    attributes taken from `constants` (eager tensors). FormatError or NotFoundError (an op type
    that is not registered) for bad data; nothing is executed."""
    _require(isinstance(data, dict), f"function {name!r} is not an object")
    raw_ops, inputs = data.get("ops"), data.get("inputs")
    _require(isinstance(raw_ops, list) and isinstance(inputs, list),
             f"function {name!r} has no op list or input list")
    _require(len(capture_values) <= len(inputs),
             f"function {name!r} has more captures than inputs")
    n_args = len(inputs) - len(capture_values)
    capture_of = {}
    for i, input_name in enumerate(inputs):
        _require(isinstance(input_name, str), f"function {name!r} has an invalid input name")
        if i >= n_args:
            capture_of[input_name] = capture_values[i - n_args]
    graph = Graph(name, auto_control_deps=False)
    graph.building_function = True
    by_name = {}
    placeholders = []
    st = _context.thread_state()
    saved_scope, st.name_scope = st.name_scope, ""
    try:
        for index, raw in enumerate(raw_ops):
            op = _decode_op(graph, raw, index, name, by_name, constants, capture_of)
            by_name[op.name] = op
            if op.op_def is PLACEHOLDER:
                placeholders.append(op.name)
    finally:
        st.name_scope = saved_scope
    _require(placeholders == inputs, f"function {name!r}: its placeholders {placeholders[:4]} "
             f"are not its inputs {inputs[:4]}")
    graph.outputs = [_tensor(by_name, ref, f"an output of function {name!r}")
                     for ref in _list(data.get("outputs"), f"function {name!r}'s outputs")]
    graph.control_outputs = [_op(by_name, n, f"a control output of function {name!r}")
                             for n in _list(data.get("control_outputs", []),
                                            f"function {name!r}'s control outputs")]
    return graph


def _list(value, where):
    _require(isinstance(value, list), f"{where} is not a list")
    return value


def _op(by_name, op_name, where):
    _require(isinstance(op_name, str) and op_name in by_name,
             f"{where} refers to an unknown op {op_name!r:.80}")
    return by_name[op_name]


def _tensor(by_name, ref, where):
    _require(isinstance(ref, list) and len(ref) == 2 and type(ref[1]) is int,
             f"{where} is not an [op, index] pair")
    op = _op(by_name, ref[0], where)
    _require(0 <= ref[1] < len(op.outputs), f"{where} refers to output {ref[1]} of {op.name!r}, "
             f"which has {len(op.outputs)}")
    return op.outputs[ref[1]]


def _decode_op(graph, raw, index, fname, by_name, constants, capture_of):
    where = f"op {index} of function {fname!r}"
    _require(isinstance(raw, dict), f"{where} is not an object")
    op_name, op_type = raw.get("name"), raw.get("op")
    _require(isinstance(op_name, str) and op_name and op_name not in by_name,
             f"{where} has a missing or repeated name {op_name!r:.80}")
    _require(isinstance(op_type, str), f"{where} has no op type")
    where = f"op {op_name!r} ({op_type}) of function {fname!r}"
    try:
        op_def = get_op(op_type)
    except KeyError:
        raise NotFoundError(None, None, f"Op type not registered '{op_type}' in binary running "
                            f"on eager (op {op_name!r} of function {fname!r}); eager loads only "
                            "its registered ops.") from None
    raw_attrs = raw.get("attrs", {})
    _require(isinstance(raw_attrs, dict), f"{where}: attrs are not an object")
    attrs = {}
    for key, value in raw_attrs.items():
        attrs[key] = _decode_attr(value, constants, f"attribute {key!r} of {where}")
    if op_def is CONST:
        _require(set(attrs) == {"value"} and isinstance(attrs["value"], ConstantValue),
                 f"{where}: a Const needs one constant 'value'")
    inputs = []
    for ref in _list(raw.get("inputs", []), f"{where}'s inputs"):
        t = _tensor(by_name, ref, f"an input of {where}")
        # A capture's inference sees the captured value, as when the graph was traced.
        captured = graph.captured_value(t)
        inputs.append(t if captured is None else captured)
    control = [_op(by_name, n, f"a control input of {where}")
               for n in _list(raw.get("control", []), f"{where}'s control inputs")]
    device = raw.get("device", "")
    _require(isinstance(device, str) and len(device) < 256, f"{where} has an invalid device")
    outputs = _list(raw.get("outputs"), f"{where}'s outputs")
    if op_def is PLACEHOLDER:
        _require(not inputs and not control and set(attrs) == {"dtype", "shape"}
                 and isinstance(attrs["dtype"], _dt.DType)
                 and isinstance(attrs["shape"], TensorShape),
                 f"{where}: a placeholder needs exactly a dtype and a shape")
        value = capture_of.get(op_name)
        if value is not None:
            placeholder = graph.capture(value, name=op_name)
            _require(placeholder.op.name == op_name and value.dtype == attrs["dtype"],
                     f"{where}: the capture does not match its placeholder")
            new = placeholder.op
        else:
            new = graph.placeholder(attrs["dtype"], attrs["shape"], name=op_name).op
    else:
        try:
            new = graph.add_op(op_def, inputs, attrs, control_inputs=control, name=op_name)
        except (TypeError, ValueError, LookupError, ArithmeticError, AttributeError) as exc:
            raise FormatError(f"{where} does not accept its inputs and attributes: "
                              f"{type(exc).__name__}: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - an op's own errors on hostile attributes
            if getattr(exc, "error_code", None) is None:
                raise
            raise FormatError(f"{where} does not accept its inputs and attributes: "
                              f"{type(exc).__name__}: {exc}") from None
    _require(new.name == op_name, f"{where}: its name is not unique")
    new._device = device
    _require(len(outputs) == len(new.outputs),
             f"{where} records {len(outputs)} outputs, its inference gives {len(new.outputs)}")
    for i, (recorded, t) in enumerate(zip(outputs, new.outputs)):
        _require(isinstance(recorded, list) and len(recorded) == 2,
                 f"{where}: output {i} is not a [dtype, shape] pair")
        dims = _checked_dims(recorded[1], f"output {i} of {where}")
        _require(recorded[0] == t.dtype.name and dims == (
            None if t.shape.rank is None else tuple(t.shape.as_list())),
            f"{where}: output {i} is recorded as {recorded[0]} {recorded[1]}, the op infers "
            f"{t.dtype.name} {_shape_list(t.shape)}")
    return new


def data_loss(directory, reason) -> DataLossError:
    return DataLossError(None, None, f"The SavedModel at {directory} is damaged or is not an "
                         f"eager SavedModel: {reason}")
