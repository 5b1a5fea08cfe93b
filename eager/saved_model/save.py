"""`eager.saved_model.save` ≈ `tf.saved_model.save`: an object's variables, traced functions
and signatures, in eager's own format (`layout`, `graph_codec`, `function_codec`).

What is saved, as TensorFlow saves it:

* the object graph from `obj` (the checkpoint's: attributes holding variables, modules, other
  trackables, and lists and dicts of them), every variable once, in `variables/variables`;
* on every object of that graph, each `eager.function` attribute (class-level methods and
  instance attributes; and restored functions of a loaded model) with the traces it has: one
  with an `input_signature` is traced from it if it was not called yet; one without, every trace
  made so far (none: it is left out, as TensorFlow leaves out untraced functions);
* signatures: `signatures` (a Function with an input_signature, a ConcreteFunction, or a dict
  of them by key; one that is not a dict is `serving_default`), or, when not given, the one
  `eager.function` with an input_signature found on `obj` itself (TensorFlow's rule), or the
  signatures of an object that was itself loaded.

A function that captures a variable that is not in the object graph cannot be saved
(TensorFlow's AssertionError about an 'untracked' resource); neither can a graph holding an op
outside the registry (control flow, `py_function`) or an attribute that is a Python object.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..base import dtypes as _dt
from ..functions.concrete import ConcreteFunction
from ..functions.polymorphic import Function
from ..state.trackable import is_trackable
from ..train._graph import object_graph_with_objects
from ..variables import Variable, variable_for_handle
from . import layout
from .function_codec import encode_concrete, encode_input_signature, signature_outputs
from .graph_codec import UnsaveableError, encode_constant
from .options import check_save_options
from .restored import RestoredFunction, SignatureMap

__all__ = ["save", "DEFAULT_SERVING_SIGNATURE_DEF_KEY"]

DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"


def _kind(obj) -> str:
    if isinstance(obj, Variable):
        return "variable"
    if isinstance(obj, Mapping) and not is_trackable(obj):
        return "dict"
    if isinstance(obj, tuple):
        return "tuple"
    if isinstance(obj, list):
        return "list"
    return "object"


def functions_of(obj) -> dict:
    """The `eager.function` attributes of `obj` (name -> Function or RestoredFunction), in a
    stable order: methods defined in its class, then instance attributes."""
    if not is_trackable(obj) or isinstance(obj, Variable):
        return {}
    found = {}
    for klass in reversed(type(obj).__mro__):
        for name, value in vars(klass).items():
            if isinstance(value, Function):
                found[name] = getattr(obj, name)
    for name, value in vars(obj).items():
        if isinstance(value, (Function, RestoredFunction)):
            found[name] = value
    return found


def _traces(fn) -> tuple:
    if isinstance(fn, RestoredFunction):
        return fn.concrete_functions
    if fn.input_signature is not None:
        fn.get_concrete_function()
    return fn.concrete_functions


def _signature_concrete(value, key):
    if isinstance(value, ConcreteFunction):
        return value
    if isinstance(value, (Function, RestoredFunction)) and value.input_signature is not None:
        return value.get_concrete_function()
    raise ValueError(f"Expected a TensorFlow function for which to generate a signature, but "
                     f"got {value!r:.200}. Only `tf.functions` with an input signature or "
                     "concrete functions can be used as a signature.")


def _signatures(obj, signatures) -> dict:
    if signatures is None:
        loaded = vars(obj).get("signatures") if hasattr(obj, "__dict__") else None
        if isinstance(loaded, SignatureMap):
            return dict(loaded)
        candidates = [fn for fn in functions_of(obj).values()
                      if fn.input_signature is not None]
        if len(candidates) != 1:
            return {}
        signatures = candidates[0]
    if not isinstance(signatures, Mapping):
        signatures = {DEFAULT_SERVING_SIGNATURE_DEF_KEY: signatures}
    out = {}
    for key, value in signatures.items():
        if not isinstance(key, str):
            raise ValueError(f"Signature keys must be strings, got {key!r:.80}.")
        out[key] = _signature_concrete(value, key)
    return out


class _Writer:
    """Collects the concrete functions and constants of one save."""

    def __init__(self, node_of):
        self.node_of = node_of
        self.concretes = []
        self.index = {}  # id(ConcreteFunction) -> entry index
        self.constants = []
        self.keep = []  # keeps the concretes alive so that ids stay unique

    def add(self, concrete, name) -> int:
        i = self.index.get(id(concrete))
        if i is not None:
            return i
        sources = []
        for value, _ in concrete.graph.captures:
            variable = variable_for_handle(value)
            if variable is not None:
                node = self.node_of.get(id(variable))
                if node is None:
                    raise AssertionError(
                        "Tried to export a function which references an 'untracked' resource. "
                        "TensorFlow objects (e.g. tf.Variable) captured by functions must be "
                        "'tracked' by assigning them to an attribute of a tracked object or "
                        "assigned to an attribute of the main object directly. See the "
                        f"information below:\n\tFunction name = {name}\n\tTrackable "
                        f"referencing this tensor = {variable!r}")
                sources.append({"variable": node})
            elif value.dtype is _dt.resource or value.dtype is _dt.variant:
                raise UnsaveableError(f"function {name!r} captures a {value.dtype.name} tensor "
                                      "that is not a tracked variable's handle; it cannot be "
                                      "saved.")
            else:
                self.constants.append(encode_constant(value.numpy()))
                sources.append({"constant": len(self.constants) - 1})
        entry = encode_concrete(concrete, name, sources, self.constants)
        self.index[id(concrete)] = len(self.concretes)
        self.concretes.append(entry)
        self.keep.append(concrete)
        return self.index[id(concrete)]


def save(obj, export_dir, signatures=None, options=None):
    """≈ `tf.saved_model.save(obj, export_dir, signatures=None, options=None)` (module doc).

    Raises ValueError (or AssertionError, as TensorFlow, for an untracked variable) before
    anything is written; the directory is replaced atomically."""
    check_save_options(options)
    if not is_trackable(obj):
        raise ValueError(f"Expected an object of type `Trackable`, such as `tf.Module` or a "
                         f"subclass of the `Trackable` class, for export. Got {obj!r:.200} with "
                         f"type {type(obj)}.")
    objects, nodes, arrays = object_graph_with_objects(obj)
    node_of = {id(o): i for i, o in enumerate(objects)}
    writer = _Writer(node_of)
    functions, object_meta = [], []
    for o in objects:
        meta = {"kind": _kind(o)}
        if isinstance(o, Variable):
            meta["trainable"] = bool(o.trainable)
        attached = {}
        for name, fn in functions_of(o).items():
            traces = _traces(fn)
            if not traces:
                continue
            signature = fn.input_signature
            functions.append({
                "name": name,
                "concrete": [writer.add(c, name) for c in traces],
                "input_signature": None if signature is None else
                encode_input_signature(signature, name)})
            attached[name] = len(functions) - 1
        if attached:
            meta["functions"] = attached
        object_meta.append(meta)
    signature_meta = {}
    for key, concrete in _signatures(obj, signatures).items():
        index = writer.add(concrete, getattr(concrete, "name", key))
        names = [s.name for s in concrete.tensor_specs()]
        if len(set(names)) != len(names):
            raise ValueError(f"Signature {key!r}: its inputs need distinct names, got {names}.")
        signature_meta[key] = {"concrete": index, "inputs": names,
                               "outputs": signature_outputs(concrete, key)}
    meta = {"format": layout.FORMAT, "version": layout.VERSION, "tags": ["serve"],
            "objects": object_meta, "functions": functions,
            "concrete_functions": writer.concretes, "signatures": signature_meta,
            "constants": writer.constants}
    layout.write_directory(export_dir, meta, nodes, arrays)
