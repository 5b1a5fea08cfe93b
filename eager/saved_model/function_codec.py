"""A concrete function as plain data, and back: its graph (`graph_codec`) plus how it is called.

An entry of the file's `concrete_functions` list:

    {"name": "__call__", "graph": {...},                   # graph_codec's form
     "parameters": [["x", "POSITIONAL_OR_KEYWORD"], ["training", "POSITIONAL_OR_KEYWORD"]],
     "defaults": {"training": {"b": false}},              # literal defaults only
     "template": [{"tensor": {"dtype": "float32", "shape": [null, 4], "name": "x",
                              "given": null}}, {"b": false}],   # one per parameter
     "outputs": {"output": 0}}                             # the returned structure

Templates and returned structures use the attribute tags of `graph_codec` for Python values
(`b`, `i`, `f`, `s`, `none`) plus `{"list": [...]}`, `{"tuple": [...]}`, `{"dict": [[key,
value], ...]}`, `{"tensor": spec}` (an argument) and `{"output": i}` (a graph output). A
restored function binds calls exactly as the original did: same parameters, same defaults,
same checks (`ConcreteFunction.from_graph`).
"""

from __future__ import annotations

import inspect
import keyword

from ..base import nest
from ..core.specs import TensorSpec
from ..functions.arguments import Binder
from ..functions.concrete import ConcreteFunction
from ..functions.signatures import TensorSlot, VariableSlot
from ..graph import SymbolicTensor
from .graph_codec import (LOADABLE_DTYPES, FormatError, UnsaveableError, _checked_dims,
                          _decode_attr, _encode_attr, _require, decode_graph, encode_graph)

__all__ = ["encode_concrete", "decode_concrete", "decode_signature", "signature_outputs",
           "encode_input_signature", "decode_input_signature"]

_KINDS = {k.name: k for k in (inspect.Parameter.POSITIONAL_ONLY,
                               inspect.Parameter.POSITIONAL_OR_KEYWORD,
                               inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.KEYWORD_ONLY,
                               inspect.Parameter.VAR_KEYWORD)}
_LITERALS = (type(None), bool, int, float, str)
_MAX_DEPTH = 64


# -- Python structures -----------------------------------------------------------------------------
def _encode_structure(value, leaf, where, depth=0):
    """`value` with `leaf(x)` deciding each leaf (returning None for "not mine")."""
    if depth > _MAX_DEPTH:
        raise UnsaveableError(f"{where} is nested too deeply.")
    mine = leaf(value)
    if mine is not None:
        return mine
    if value.__class__ in _LITERALS:
        return _encode_attr(value, [], where)
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        raise UnsaveableError(f"{where} holds a namedtuple ({type(value).__name__}), which "
                              "eager's SavedModel format cannot hold.")
    if value.__class__ in (list, tuple):
        return {value.__class__.__name__: [_encode_structure(v, leaf, where, depth + 1)
                                           for v in value]}
    if value.__class__ is dict:
        return {"dict": [[_encode_attr(k, [], where) if k.__class__ in _LITERALS else
                          _unsaveable(k, where), _encode_structure(v, leaf, where, depth + 1)]
                         for k, v in value.items()]}
    return _unsaveable(value, where)


def _unsaveable(value, where):
    raise UnsaveableError(f"{where} holds a {type(value).__name__} ({value!r:.60}), which "
                          "eager's SavedModel format cannot hold (tensors, numbers, strings, "
                          "None, lists, tuples and dicts only).")


def _decode_structure(data, leaf, where, depth=0):
    _require(depth <= _MAX_DEPTH, f"{where} is nested too deeply")
    _require(isinstance(data, dict) and len(data) == 1, f"{where} is not a tagged value")
    (tag, v), = data.items()
    mine = leaf(tag, v)
    if mine is not _NOT_MINE:
        return mine
    if tag in ("list", "tuple"):
        _require(type(v) is list, f"{where}: {tag!r} needs a list")
        items = [_decode_structure(x, leaf, where, depth + 1) for x in v]
        return items if tag == "list" else tuple(items)
    if tag == "dict":
        _require(type(v) is list and all(isinstance(p, list) and len(p) == 2 for p in v),
                 f"{where}: 'dict' needs [key, value] pairs")
        out = {}
        for k, x in v:
            key = _decode_attr(k, [], where)
            _require(key.__class__ in _LITERALS, f"{where}: a dict key is not a literal")
            out[key] = _decode_structure(x, leaf, where, depth + 1)
        return out
    _require(tag in ("none", "b", "i", "f", "s"), f"{where} has the unknown tag {tag!r:.40}")
    return _decode_attr(data, [], where)


_NOT_MINE = object()


def _spec_data(spec, given):
    shape = spec.shape
    return {"dtype": spec.dtype.name, "shape": None if shape.rank is None else shape.as_list(),
            "name": spec.name, "given": given}


def _spec_from(v, where):
    _require(isinstance(v, dict), f"{where}: a tensor spec is not an object")
    dtype = LOADABLE_DTYPES.get(v.get("dtype"))
    _require(dtype is not None, f"{where}: a tensor spec has an unknown dtype")
    dims = _checked_dims(v.get("shape"), where)
    name, given = v.get("name"), v.get("given")
    _require(name is None or isinstance(name, str), f"{where}: a spec name is not a string")
    _require(given is None or isinstance(given, str), f"{where}: a spec name is not a string")
    return TensorSpec(None if dims is None else list(dims), dtype, name), given


# -- encoding --------------------------------------------------------------------------------------
def encode_concrete(concrete, name, capture_sources, constants) -> dict:
    """See the module doc. UnsaveableError for what the format cannot hold (Variable
    arguments, namedtuples, Python objects)."""
    where = f"function {name!r}"
    graph = concrete.graph
    signature = concrete._binder.signature
    if signature is None:
        raise UnsaveableError(f"{where} has no introspectable Python signature.")
    parameters, defaults = [], {}
    for p in signature.parameters.values():
        parameters.append([p.name, p.kind.name])
        if p.default is not inspect.Parameter.empty and p.default.__class__ in _LITERALS:
            defaults[p.name] = _encode_attr(p.default, [], where)

    def template_leaf(value):
        if isinstance(value, VariableSlot):
            raise UnsaveableError(f"{where} takes a Variable argument, which eager's SavedModel "
                                  "format cannot hold; capture the variable instead.")
        if isinstance(value, TensorSlot):
            return {"tensor": _spec_data(value.spec, value.given_name)}
        return None

    outputs = {id(t): i for i, t in reversed(list(enumerate(graph.outputs)))}

    def output_leaf(value):
        if isinstance(value, SymbolicTensor):
            return {"output": outputs[id(value)]}
        return None

    return {"name": name, "graph": encode_graph(graph, capture_sources, constants),
            "parameters": parameters, "defaults": defaults,
            "template": [_encode_structure(v, template_leaf, where) for v in concrete._template],
            "outputs": _encode_structure(graph.structured_outputs, output_leaf,
                                         f"the value returned by {where}")}


def signature_outputs(concrete, key_name) -> list:
    """[[key, graph output index]] of a signature function's outputs as TensorFlow names them:
    a dict's string keys, else `output_0`, `output_1`, ... in flattened order. ValueError for a
    value that is not a tensor."""
    graph = concrete.graph
    index = {id(t): i for i, t in reversed(list(enumerate(graph.outputs)))}
    structure = graph.structured_outputs
    if isinstance(structure, dict) and all(isinstance(k, str) for k in structure):
        items = sorted(structure.items())
    else:
        items = [(f"output_{i}", v) for i, v in enumerate(nest.flatten(structure))]
    pairs = []
    for key, value in items:
        if not isinstance(value, SymbolicTensor) or id(value) not in index:
            raise ValueError(f"Got a non-Tensor value {value!r:.80} for key '{key}' in the "
                             f"output of the function {concrete.name} used to generate the "
                             f"SavedModel signature '{key_name}'. Outputs for functions used "
                             "as signatures must be a single Tensor, a sequence of Tensors, or "
                             "a dictionary from string to Tensor.")
        pairs.append([key, index[id(value)]])
    return pairs


def encode_input_signature(signature, name):
    """A Function's `input_signature` (nested TensorSpecs) as tagged data."""
    def leaf(value):
        if isinstance(value, TensorSpec):
            return {"tensor": _spec_data(value, value.name)}
        return None
    return _encode_structure(tuple(signature), leaf, f"the input_signature of {name!r}")


def decode_input_signature(data, where):
    def leaf(tag, v):
        if tag != "tensor":
            return _NOT_MINE
        return _spec_from(v, where)[0]
    signature = _decode_structure(data, leaf, where)
    _require(isinstance(signature, tuple), f"{where} is not a tuple")
    return signature


# -- decoding --------------------------------------------------------------------------------------
class _RestoredBody:
    """The Python function of a restored concrete function: it has the original's signature
    (`inspect.signature` reads `__signature__`, and binding uses it) but no body; the graph is
    what runs."""

    def __init__(self, name, signature):
        self.__name__ = name
        self.__signature__ = signature

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.__name__} was loaded from a SavedModel: its Python code was not "
                        "saved, so it cannot be traced again.")


def _decode_parameters(entry, where):
    raw, defaults = entry.get("parameters"), entry.get("defaults", {})
    _require(isinstance(raw, list) and isinstance(defaults, dict),
             f"{where} has no parameter list")
    params = []
    for p in raw:
        _require(isinstance(p, list) and len(p) == 2 and isinstance(p[0], str)
                 and p[0].isidentifier() and not keyword.iskeyword(p[0]) and p[1] in _KINDS,
                 f"{where} has an invalid parameter {p!r:.80}")
        default = inspect.Parameter.empty
        if p[0] in defaults:
            default = _decode_attr(defaults[p[0]], [], f"the default of {p[0]!r} in {where}")
        try:
            params.append(inspect.Parameter(p[0], _KINDS[p[1]], default=default))
        except (ValueError, TypeError) as exc:
            raise FormatError(f"{where}: parameter {p[0]!r}: {exc}") from None
    try:
        return inspect.Signature(params)
    except (ValueError, TypeError) as exc:
        raise FormatError(f"{where} has an invalid parameter list: {exc}") from None


def decode_concrete(entry, capture_values, constants) -> ConcreteFunction:
    """The restored ConcreteFunction of a file entry (untrusted; FormatError or NotFoundError)."""
    _require(isinstance(entry, dict) and isinstance(entry.get("name"), str),
             "a concrete function entry has no name")
    name = entry["name"]
    where = f"function {name!r}"
    graph = decode_graph(entry.get("graph"), name, capture_values, constants)
    signature = _decode_parameters(entry, where)
    arguments = graph.inputs[:len(graph.inputs) - len(capture_values)]
    slots = []

    def template_leaf(tag, v):
        if tag != "tensor":
            return _NOT_MINE
        spec, given = _spec_from(v, where)
        slots.append(spec)
        return TensorSlot(spec, given)

    raw_template = entry.get("template")
    _require(isinstance(raw_template, list) and len(raw_template) == len(signature.parameters),
             f"{where}: its argument template does not match its parameters")
    template = tuple(_decode_structure(v, template_leaf, where) for v in raw_template)
    _require(len(slots) == len(arguments), f"{where}: {len(slots)} tensor arguments for "
             f"{len(arguments)} argument placeholders")
    for spec, placeholder in zip(slots, arguments):
        _require(spec.dtype == placeholder.dtype
                 and spec.shape.is_compatible_with(placeholder.shape),
                 f"{where}: argument {spec.name!r} is {spec}, its placeholder "
                 f"{placeholder.dtype.name} {placeholder.shape}")

    def output_leaf(tag, v):
        if tag != "output":
            return _NOT_MINE
        _require(type(v) is int and 0 <= v < len(graph.outputs),
                 f"{where}: a returned value refers to no output")
        return graph.outputs[v]

    graph.structured_outputs = _decode_structure(entry.get("outputs"), output_leaf, where)
    body = _RestoredBody(name, signature)
    return ConcreteFunction.from_graph(graph, body, Binder(body), template,
                                       graph.structured_outputs)


def decode_signature(entry, signature_entry, key, capture_values, constants):
    """A signature function: the concrete function `entry`'s graph called with keyword
    arguments named by its tensor arguments, returning a dict of its outputs."""
    where = f"signature {key!r}"
    graph = decode_graph(entry.get("graph"), entry.get("name", key), capture_values, constants)
    arguments = graph.inputs[:len(graph.inputs) - len(capture_values)]
    names = signature_entry.get("inputs")
    _require(isinstance(names, list) and len(names) == len(arguments)
             and all(isinstance(n, str) and n.isidentifier() and not keyword.iskeyword(n)
                     for n in names) and len(set(names)) == len(names),
             f"{where} has invalid input names")
    outputs = signature_entry.get("outputs")
    _require(isinstance(outputs, list) and all(
        isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) and type(p[1]) is int
        and 0 <= p[1] < len(graph.outputs) for p in outputs), f"{where} has invalid outputs")
    signature = inspect.Signature([inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY)
                                   for n in names])
    template = tuple(TensorSlot(TensorSpec(p.shape, p.dtype, n), n)
                     for n, p in zip(names, arguments))
    graph.structured_outputs = {k: graph.outputs[i] for k, i in outputs}
    body = _RestoredBody(key, signature)
    return ConcreteFunction.from_graph(graph, body, Binder(body), template,
                                       graph.structured_outputs)
