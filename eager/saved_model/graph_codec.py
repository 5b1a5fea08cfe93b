"""A traced graph as typed JSON, and back: the function part of eager's SavedModel format.

A graph is written as plain data (see `docs/architecture.md`, "SavedModel"):

    {"ops": [{"name": "MatMul", "op": "MatMul", "inputs": [["x", 0], ["ReadVariableOp", 0]],
              "control": [], "device": "", "attrs": {"transpose_a": {"b": false}, ...},
              "outputs": [["float32", [null, 8]]]}, ...],
     "inputs": ["x", "capture", ...],            # placeholders: arguments, then captures
     "captures": [{"variable": 3}, {"constant": 0}],   # what each capture placeholder is fed
     "outputs": [["Mul", 0]], "control_outputs": ["AssignVariableOp"]}

Control-flow ops (`If`, `Case`, `While`) have one attribute, `body`: `{"case": {"branches":
[library index, ...], "positions": [[op input, ...], ...]}}` or `{"while": {"cond": i, "body": j,
"num_vars": n, "has_max": bool, "positions": [[...], [...]], "accumulating": bool}}`. The graphs
live in the file's `library` (`GraphLibrary`: each once, with `"arguments"`, how many of its
inputs are loop variables; the rest capture the op's inputs at `positions`).

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
from ..control_flow.ops import (BranchGraph, CaseBody, WhileBody, control_flow_op_def,
                                restored_case_body, restored_while_body)
from ..graph import Graph
from ..graph.constant import CONST, ConstantValue
from ..graph.placeholder import PLACEHOLDER

__all__ = ["encode_graph", "decode_graph", "encode_constant", "decode_constant", "MAX_ELEMENTS",
           "FormatError", "GraphLibrary", "LibraryReader"]

#: The most elements any tensor of a loaded graph may claim (2**34: 64 GiB of float32).
MAX_ELEMENTS = 1 << 34
_MAX_RANK = 32
_INT64 = (-(1 << 63), (1 << 63) - 1)
#: dtypes a graph's tensors and attributes may name (resource: capture placeholders; variant:
#: TensorLists, a TensorArray's flow through a loop).
LOADABLE_DTYPES = {d.name: d for d in (*_dt.ALL_AND_STRING, _dt.resource, _dt.variant)}
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


#: TensorFlow's op types that run a Python function, and the eager function making each.
_PYTHON_OPS = {"EagerPyFunc": "py_function", "PyFunc": "numpy_function",
               "PyFuncStateless": "numpy_function"}
#: The control-flow op types: not registered (each op has its own OpDef, see
#: `eager.control_flow.ops`); their branches and loop bodies are library functions.
CONTROL_FLOW_OPS = ("If", "Case", "While")


class GraphLibrary:
    """The nested functions of one save: every branch and loop cond/body graph reachable from
    the saved functions, each once (by identity), in the order a reader can rebuild them (a
    graph after the graphs its control-flow ops call). Shares the save's constant table."""

    def __init__(self, constants):
        self.constants = constants
        self.entries = []
        self._index = {}  # id(graph) -> entry index
        self._open = set()  # ids of graphs being encoded (a graph inside itself)
        self._keep = []  # the graphs, so that ids stay unique

    def add(self, graph, where) -> int:
        i = self._index.get(id(graph))
        if i is not None:
            return i
        if id(graph) in self._open:
            raise UnsaveableError(f"{where}: the graph {graph.name!r} contains itself.")
        self._open.add(id(graph))
        try:
            ops = _encode_ops(graph, self, where)
        finally:
            self._open.discard(id(graph))
        self.entries.append({
            "name": graph.name, "ops": ops, "inputs": [t.op.name for t in graph.inputs],
            "arguments": len(graph.inputs) - len(graph.captures),
            "outputs": [[t.op.name, t.value_index] for t in graph.outputs],
            "control_outputs": [op.name for op in graph.control_outputs]})
        self._index[id(graph)] = len(self.entries) - 1
        self._keep.append(graph)
        return len(self.entries) - 1


def encode_graph(graph, capture_sources, constants, library=None, fname=None) -> dict:
    """`graph` (a traced function's) as plain data. `capture_sources` gives, per capture
    placeholder in capture order, what feeds it (`{"variable": node}` or `{"constant": i}`);
    constants go into the shared `constants` list, nested branch and loop graphs into `library`
    (a GraphLibrary on that list). UnsaveableError for anything the format cannot express."""
    if library is None:
        library = GraphLibrary(constants)
    where = f"function {fname or graph.name!r}"
    return {"ops": _encode_ops(graph, library, where),
            "inputs": [t.op.name for t in graph.inputs],
            "captures": list(capture_sources),
            "outputs": [[t.op.name, t.value_index] for t in graph.outputs],
            "control_outputs": [op.name for op in graph.control_outputs]}


def _encode_ops(graph, library, where) -> list:
    constants = library.constants
    ops = []
    for op in graph.get_operations():
        body = op.attrs.get("body")
        if op.type in CONTROL_FLOW_OPS and isinstance(body, (CaseBody, WhileBody)):
            attrs = {"body": _encode_control_flow(body, library, f"{where}, op {op.name!r}")}
        else:
            _check_saveable(op, where)
            attrs = {k: _encode_attr(v, constants,
                                     f"attribute {k!r} of op {op.name!r} ({op.type})")
                     for k, v in sorted(op.attrs.items())}
        ops.append({"name": op.name, "op": op.type,
                    "inputs": [[t.op.name, t.value_index] for t in op.inputs],
                    "control": [c.name for c in op.control_inputs], "device": op.device,
                    "attrs": attrs,
                    "outputs": [[t.dtype.name, _shape_list(t.shape)] for t in op.outputs]})
    return ops


def _check_saveable(op, where):
    try:
        registered = get_op(op.type)
    except KeyError:
        registered = None
    if op.type in _PYTHON_OPS and registered is op.op_def:
        # TensorFlow 2.21 saves the op without its Python function; calling the loaded
        # function in another process then fails with the words quoted here.
        raise UnsaveableError(
            f"{where} cannot be saved: op {op.name!r} ({op.type}) runs a Python function "
            f"(eager.{_PYTHON_OPS[op.type]}), and a SavedModel holds graphs, not Python code. "
            "(TensorFlow saves such a graph, but calling it after loading in a new process fails "
            f"with \"Could not find callback with key=pyfunc_0 in the registry.\" at node "
            f"{op.type}.) Write the computation with eager ops, or keep the Python function "
            "outside the saved function.")
    if registered is not op.op_def:
        raise UnsaveableError(
            f"{where}: op {op.name!r} of type {op.type} is not a registered op, so eager's "
            "SavedModel format cannot hold it.")


def _encode_control_flow(body, library, where) -> dict:
    """The `body` attribute of an If/Case/While op: its graphs as library indices, which op
    inputs each graph captures, and (While) the loop's shape."""
    if isinstance(body, CaseBody):
        return {"case": {"branches": [library.add(g, where) for g in body.branches],
                         "positions": [list(p) for p in body.positions]}}
    return {"while": {"cond": library.add(body.cond, where),
                      "body": library.add(body.body, where), "num_vars": body.num_vars,
                      "has_max": body.has_max,
                      "positions": [list(p) for p in body.positions],
                      "accumulating": body.accumulate is not None}}


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


def decode_graph(data, name, capture_values, constants, library=None) -> Graph:
    """The Graph that `data` (`encode_graph`'s output, untrusted) describes, with its capture
    placeholders standing for `capture_values` (eager tensors, in capture order), `Const`
    attributes taken from `constants` (eager tensors) and the graphs its control-flow ops call
    from `library` (a LibraryReader; None: the file has none). FormatError or NotFoundError (an
    op type that is not registered) for bad data; nothing is executed."""
    _require(isinstance(data, dict), f"function {name!r} is not an object")
    inputs = data.get("inputs")
    _require(isinstance(inputs, list), f"function {name!r} has no input list")
    _require(len(capture_values) <= len(inputs),
             f"function {name!r} has more captures than inputs")
    graph = Graph(name, auto_control_deps=False)
    graph.building_function = True
    return _decode_into(graph, data, name, len(inputs) - len(capture_values), capture_values,
                        constants, library or LibraryReader([], constants))


def _decode_into(graph, data, name, n_args, capture_values, constants, library) -> Graph:
    """Fills `graph` with the ops of `data`: its first `n_args` inputs are placeholders, the
    others capture `capture_values`."""
    raw_ops, inputs = data.get("ops"), data.get("inputs")
    _require(isinstance(raw_ops, list) and isinstance(inputs, list),
             f"function {name!r} has no op list or input list")
    capture_of = {}
    for i, input_name in enumerate(inputs):
        _require(isinstance(input_name, str), f"function {name!r} has an invalid input name")
        if i >= n_args:
            capture_of[input_name] = capture_values[i - n_args]
    by_name = {}
    placeholders = []
    st = _context.thread_state()
    saved_scope, st.name_scope = st.name_scope, ""
    try:
        for index, raw in enumerate(raw_ops):
            op = _decode_op(graph, raw, index, name, by_name, constants, capture_of, library)
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


#: How deeply library functions may call each other (cond inside while inside cond ...).
_MAX_NESTING = 64


class LibraryReader:
    """The file's library of nested functions (`GraphLibrary`'s entries, untrusted), rebuilt on
    first use: each entry once, as a branch graph whose capture placeholders stand for the
    first calling op's inputs (a control-flow op reads only its graphs' placeholders, so later
    callers share it, as traced ops share graphs). A function may not call itself, directly or
    through others, and every call must feed it inputs of its placeholders' types."""

    def __init__(self, entries, constants):
        self.entries = entries
        self.constants = constants
        self._built = {}
        self._open = []

    def graph(self, index, outer, n_args, values, where) -> Graph:
        """Library function `index`, called by an op of `outer` with `n_args` loop variables
        and `values` (the op's inputs its captures stand for)."""
        _require(type(index) is int and 0 <= index < len(self.entries),
                 f"{where} calls no library function ({index!r:.40})")
        graph = self._built.get(index)
        if graph is None:
            if index in self._open:
                raise FormatError(f"{where}: library function {index} calls itself (through "
                                  f"{self._open[self._open.index(index):]}); recursion cannot "
                                  "be saved or loaded")
            _require(len(self._open) < _MAX_NESTING,
                     f"{where}: library functions are nested more than {_MAX_NESTING} deep")
            entry = self.entries[index]
            _require(isinstance(entry, dict) and isinstance(entry.get("name"), str)
                     and isinstance(entry.get("inputs"), list),
                     f"library function {index} has no name or input list")
            name = entry["name"][:200]
            _require(entry.get("arguments") == n_args
                     and len(entry["inputs"]) == n_args + len(values),
                     f"{where}: library function {index} ({name!r}) takes "
                     f"{len(entry['inputs'])} inputs, {entry.get('arguments')!r:.20} of them "
                     f"loop variables; the op feeds it {n_args} loop variables and "
                     f"{len(values)} captures")
            self._open.append(index)
            try:
                graph = _decode_into(BranchGraph(name, outer, auto_control_deps=False), entry,
                                     name, n_args, values, self.constants, self)
            finally:
                self._open.pop()
            self._built[index] = graph
        inputs = graph.inputs
        _require(len(inputs) == n_args + len(values),
                 f"{where}: library function {index} ({graph.name!r}) takes {len(inputs)} "
                 f"inputs, the op feeds it {n_args + len(values)}")
        for p, v in zip(inputs[n_args:], values):
            _require(p.dtype == v.dtype and p.shape.is_compatible_with(v.shape),
                     f"{where}: library function {index} ({graph.name!r}) takes "
                     f"{p.dtype.name} {_shape_list(p.shape)} for {p.op.name!r}, the op feeds "
                     f"it {v.dtype.name} {_shape_list(v.shape)}")
        return graph


def _positions(raw, count, where) -> tuple:
    """A graph's capture positions among an op's `count` capture inputs: distinct indices."""
    _require(isinstance(raw, list) and all(type(j) is int and 0 <= j < count for j in raw)
             and len(set(raw)) == len(raw),
             f"{where} has invalid capture positions {raw!r:.80}")
    return tuple(raw)


def _scalar_of(t, dtypes, what, where):
    _require(t.dtype in dtypes and (t.shape.rank is None or t.shape.rank == 0),
             f"{where}: {what} is {t.dtype.name} {_shape_list(t.shape)}, not a scalar of "
             f"{' or '.join(d.name for d in dtypes)}")


def _decode_case(op_type, spec, inputs, graph, library, where):
    raw_branches, raw_positions = spec.get("branches"), spec.get("positions")
    _require(isinstance(raw_branches, list) and isinstance(raw_positions, list)
             and len(raw_branches) == len(raw_positions) and raw_branches
             and (op_type != "If" or len(raw_branches) == 2),
             f"{where} has no valid branch list")
    _require(len(inputs) >= 1, f"{where} has no selector input")
    _scalar_of(inputs[0], (_dt.bool,) if op_type == "If" else (_dt.int32, _dt.int64),
               "its selector", where)
    captures = inputs[1:]
    positions = [_positions(p, len(captures), where) for p in raw_positions]
    branches = [library.graph(i, graph, 0, [captures[j] for j in p], f"branch {k} of {where}")
                for k, (i, p) in enumerate(zip(raw_branches, positions))]
    first = branches[0].outputs
    for k, b in enumerate(branches[1:], 1):
        _require(len(b.outputs) == len(first)
                 and all(x.dtype == y.dtype for x, y in zip(first, b.outputs)),
                 f"{where}: branch {k} returns {[t.dtype.name for t in b.outputs][:8]}, branch 0 "
                 f"{[t.dtype.name for t in first][:8]}")
    return restored_case_body(op_type == "If", branches, positions)


def _decode_while(spec, inputs, graph, library, where):
    n, has_max, accumulating = spec.get("num_vars"), spec.get("has_max"), \
        spec.get("accumulating")
    _require(type(n) is int and type(has_max) is bool and type(accumulating) is bool
             and 0 <= n and n + has_max <= len(inputs),
             f"{where}: invalid loop shape (num_vars, has_max, accumulating)")
    raw_positions = spec.get("positions")
    _require(isinstance(raw_positions, list) and len(raw_positions) == 2,
             f"{where} has no capture positions for its cond and body")
    base = n + has_max
    if has_max:
        _scalar_of(inputs[n], (_dt.int32, _dt.int64), "its maximum_iterations", where)
    captures = inputs[base:]
    p_cond, p_body = (_positions(p, len(captures), where) for p in raw_positions)
    cond = library.graph(spec.get("cond"), graph, n, [captures[j] for j in p_cond],
                         f"the cond of {where}")
    body = library.graph(spec.get("body"), graph, n, [captures[j] for j in p_body],
                         f"the body of {where}")
    _require(len(cond.outputs) == 1, f"{where}: its cond returns {len(cond.outputs)} values")
    _scalar_of(cond.outputs[0], (_dt.bool,), "its cond's result", where)
    _require(len(body.outputs) == n, f"{where}: its body returns {len(body.outputs)} values for "
             f"{n} loop variables")
    for k, (x, c, out, p) in enumerate(zip(inputs[:n], cond.inputs, body.outputs, body.inputs)):
        _require(x.dtype == c.dtype == out.dtype == p.dtype
                 and all(t.shape.is_compatible_with(p.shape) for t in (x, c, out)),
                 f"{where}: loop variable {k} is {x.dtype.name} {_shape_list(x.shape)}; its "
                 f"cond takes {c.dtype.name} {_shape_list(c.shape)}, its body takes "
                 f"{p.dtype.name} {_shape_list(p.shape)} and returns {out.dtype.name} "
                 f"{_shape_list(out.shape)}")
    return restored_while_body(cond, body, n, has_max, (p_cond, p_body), accumulating)


def _decode_control_flow(graph, op_type, raw_attrs, inputs, control, op_name, where, library):
    """An If/Case/While op, its graphs from the library, checked against its inputs."""
    tag = "while" if op_type == "While" else "case"
    spec = raw_attrs.get("body") if isinstance(raw_attrs, dict) and len(raw_attrs) == 1 \
        else None
    _require(isinstance(spec, dict) and len(spec) == 1 and isinstance(spec.get(tag), dict),
             f"{where}: a control-flow op needs exactly the attribute 'body' ({{{tag!r}: ...}})")
    spec = spec[tag]
    if op_type == "While":
        body = _decode_while(spec, inputs, graph, library, where)
    else:
        body = _decode_case(op_type, spec, inputs, graph, library, where)
    op_def = control_flow_op_def(op_type, body, inputs)
    try:
        return graph.add_op(op_def, inputs, {"body": body}, control_inputs=control,
                            name=op_name)
    except (TypeError, ValueError, LookupError) as exc:
        raise FormatError(f"{where} does not accept its inputs: {type(exc).__name__}: "
                          f"{exc}") from None


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


def _decode_op(graph, raw, index, fname, by_name, constants, capture_of, library):
    where = f"op {index} of function {fname!r}"
    _require(isinstance(raw, dict), f"{where} is not an object")
    op_name, op_type = raw.get("name"), raw.get("op")
    _require(isinstance(op_name, str) and op_name and op_name not in by_name,
             f"{where} has a missing or repeated name {op_name!r:.80}")
    _require(isinstance(op_type, str), f"{where} has no op type")
    where = f"op {op_name!r} ({op_type}) of function {fname!r}"
    control_flow = op_type in CONTROL_FLOW_OPS
    op_def = None
    if not control_flow:
        try:
            op_def = get_op(op_type)
        except KeyError:
            raise NotFoundError(None, None, f"Op type not registered '{op_type}' in binary "
                                f"running on eager (op {op_name!r} of function {fname!r}); "
                                "eager loads only its registered ops.") from None
    raw_attrs = raw.get("attrs", {})
    _require(isinstance(raw_attrs, dict), f"{where}: attrs are not an object")
    attrs = {}
    if not control_flow:
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
    if control_flow:
        new = _decode_control_flow(graph, op_type, raw_attrs, inputs, control, op_name, where,
                                   library)
    elif op_def is PLACEHOLDER:
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
