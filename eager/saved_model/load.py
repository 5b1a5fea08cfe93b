"""`eager.saved_model.load` ≈ `tf.saved_model.load`, and `contains_saved_model`.

Loading needs no Python source: the objects are rebuilt from the object graph (`_UserObject`s,
lists, tuples, dicts, new variables holding the saved values), and each function from its
graph (`function_codec`), whose captures are the new variables' handles. Restored functions are
ordinary `ConcreteFunction`s: they run through the compiled graph runtime, are differentiable
(so a loaded model can be fine-tuned), and can be saved again.

Everything read is untrusted (see `graph_codec`): a damaged file is a DataLossError naming it, a
missing one a NotFoundError, an unregistered op a NotFoundError naming it; the checks all run
before any object is returned, and nothing from the directory is executed while loading.
"""

from __future__ import annotations

import keyword
import os

import numpy as np

from ..base.errors import DataLossError, NotFoundError
from ..train import _format
from ..variables import Variable
from . import layout
from .function_codec import decode_concrete, decode_input_signature, decode_signature
from .graph_codec import FormatError, constant_tensors, data_loss, decode_constant
from .options import check_load_options
from .restored import RestoredFunction, SignatureMap, _UserObject

__all__ = ["load", "contains_saved_model"]

_KINDS = ("object", "variable", "list", "tuple", "dict")


def contains_saved_model(export_dir) -> bool:
    """≈ `tf.saved_model.contains_saved_model`: whether `export_dir` holds an eager SavedModel
    (its model file exists; it is not read)."""
    return os.path.isfile(os.path.join(os.fspath(export_dir), layout.MODEL_FILE))


def load(export_dir, tags=None, options=None):
    """≈ `tf.saved_model.load(export_dir, tags=None, options=None)` (module doc). `tags`, if
    given, must be "serve" (the one tag eager's SavedModels have)."""
    check_load_options(options)
    export_dir = os.fspath(export_dir)
    if tags is not None:
        wanted = {tags} if isinstance(tags, str) else set(tags)
        if wanted - {"serve"}:
            raise RuntimeError(f"MetaGraphDef associated with tags {sorted(wanted)!r} could not "
                               f"be found in SavedModel, with available tags '[{{'serve'}}]'. "
                               f"To inspect available tag-sets in the SavedModel, please use "
                               f"the SavedModel CLI: `saved_model_cli`.")
    meta = layout.read_model(export_dir)
    variables_path = os.path.join(export_dir, layout.VARIABLES_FILE)
    if not os.path.isfile(variables_path):
        raise NotFoundError(None, None, f"The SavedModel at {export_dir} has no variables file "
                            f"({variables_path}).")
    if layout.checkpoint_digest(variables_path) != meta.get("variables_sha256"):
        raise DataLossError(None, None, f"The variables file {variables_path} does not belong "
                            f"to the SavedModel at {export_dir} (its checksum is not the one "
                            "the model file records).")
    checkpoint = _format.read_checkpoint(variables_path)
    try:
        return _build(meta, checkpoint)
    except FormatError as exc:
        raise data_loss(export_dir, exc) from None


def _require(condition, reason):
    if not condition:
        raise FormatError(reason)


def _build(meta, checkpoint):
    objects_meta = meta.get("objects")
    nodes = checkpoint.nodes
    _require(isinstance(objects_meta, list) and len(objects_meta) == len(nodes),
             "its object list does not match the variables file's object graph")
    kinds = []
    for i, m in enumerate(objects_meta):
        _require(isinstance(m, dict) and m.get("kind") in _KINDS, f"object {i} has no kind")
        kind = m["kind"]
        _require((kind == "variable") == (nodes[i]["variable"] is not None),
                 f"object {i}: its kind does not match the variables file")
        kinds.append(kind)
    _require(kinds[0] == "object", "the root is not an object")
    built = _objects(kinds, objects_meta, nodes, checkpoint)
    constants = [decode_constant(c, f"constant {i}")
                 for i, c in enumerate(_list(meta.get("constants", []), "the constant table"))]
    constants = constant_tensors(constants)

    def captures_of(entry, where):
        sources = _list(entry.get("graph", {}).get("captures", []) if isinstance(
            entry.get("graph"), dict) else [], f"{where}'s captures")
        values = []
        for s in sources:
            _require(isinstance(s, dict) and len(s) == 1, f"{where} has an invalid capture")
            if "variable" in s:
                node = s["variable"]
                _require(type(node) is int and 0 <= node < len(built)
                         and kinds[node] == "variable", f"{where} captures a non-variable")
                values.append(built[node].handle)
            else:
                c = s.get("constant")
                _require(type(c) is int and 0 <= c < len(constants),
                         f"{where} captures an unknown constant")
                values.append(constants[c])
        return values

    entries = _list(meta.get("concrete_functions", []), "the function list")
    concretes = []
    for i, entry in enumerate(entries):
        _require(isinstance(entry, dict), f"concrete function {i} is not an object")
        concretes.append(decode_concrete(entry, captures_of(entry, f"concrete function {i}"),
                                         constants))
    functions = []
    for i, f in enumerate(_list(meta.get("functions", []), "the function table")):
        where = f"function {i}"
        _require(isinstance(f, dict) and isinstance(f.get("name"), str), f"{where} has no name")
        ids = _list(f.get("concrete"), f"{where}'s traces")
        _require(ids and all(type(c) is int and 0 <= c < len(concretes) for c in ids),
                 f"{where} refers to unknown traces")
        signature = f.get("input_signature")
        if signature is not None:
            signature = decode_input_signature(signature, f"{where}'s input_signature")
        functions.append(RestoredFunction(f["name"], [concretes[c] for c in ids], signature))
    for i, m in enumerate(objects_meta):
        attached = m.get("functions", {})
        _require(isinstance(attached, dict), f"object {i}'s functions are not an object")
        if attached:
            _require(kinds[i] == "object", f"object {i} ({kinds[i]}) cannot hold functions")
        for name, index in attached.items():
            _require(_attribute_name(name, function=True) and type(index) is int
                     and 0 <= index < len(functions), f"object {i} has an invalid function "
                     f"{name!r:.80}")
            object.__setattr__(built[i], name, functions[index])
    signatures = {}
    raw_signatures = meta.get("signatures", {})
    _require(isinstance(raw_signatures, dict), "the signature table is not an object")
    for key, s in raw_signatures.items():
        _require(isinstance(s, dict) and type(s.get("concrete")) is int
                 and 0 <= s["concrete"] < len(entries), f"signature {key!r:.80} is invalid")
        entry = entries[s["concrete"]]
        signatures[key] = decode_signature(entry, s, key, captures_of(entry, f"signature {key!r}"),
                                           constants)
    object.__setattr__(built[0], "signatures", SignatureMap(signatures))
    return built[0]


def _list(value, where):
    _require(isinstance(value, list), f"{where} is not a list")
    return value


def _attribute_name(name, function=False) -> bool:
    """Names set as attributes: identifiers that cannot replace the object's own machinery
    (no dunders but `__call__`, nothing `_UserObject` already defines)."""
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        return False
    if name.startswith("__"):
        return function and name == "__call__"
    return not hasattr(_UserObject, name)


def _objects(kinds, objects_meta, nodes, checkpoint):
    """The restored objects, by node: variables with their saved values, containers, and
    `_UserObject`s with their children attached."""
    built = [None] * len(kinds)
    for i, kind in enumerate(kinds):
        if kind == "variable":
            key = nodes[i]["variable"]
            trainable = objects_meta[i].get("trainable", True)
            _require(type(trainable) is bool, f"variable {i} has an invalid 'trainable'")
            name = checkpoint.names.get(key, "") or "Variable"
            built[i] = Variable(np.array(checkpoint.arrays[key]), trainable=trainable,
                                name=name[:-2] if name.endswith(":0") else name)
        elif kind == "object":
            built[i] = _UserObject()
        elif kind == "list":
            built[i] = []
        elif kind == "dict":
            built[i] = {}
    for i, kind in enumerate(kinds):
        if kind == "variable":
            _require(not nodes[i]["children"], f"variable {i} has children")
        elif kind != "tuple":
            _fill(i, kinds, nodes, built, set())
    for i, kind in enumerate(kinds):
        if kind == "tuple":
            _tuple(i, kinds, nodes, built, set())
    for i, kind in enumerate(kinds):  # containers held by objects, now complete
        if kind == "object":
            for name, child in nodes[i]["children"].items():
                _require(_attribute_name(name), f"object {i} has an invalid attribute "
                         f"name {name!r:.80}")
                setattr(built[i], name, _value(child, kinds, nodes, built))
    return built


def _value(index, kinds, nodes, built):
    if kinds[index] == "tuple" and built[index] is None:
        _tuple(index, kinds, nodes, built, set())
    return built[index]


def _indexed(children, where):
    names = list(children)
    _require(names == [str(i) for i in range(len(names))],
             f"{where}'s items are not numbered 0..n-1")
    return [children[n] for n in names]


def _fill(i, kinds, nodes, built, _seen):
    kind, children = kinds[i], nodes[i]["children"]
    if kind == "list":
        for child in _indexed(children, f"list {i}"):
            built[i].append(_value(child, kinds, nodes, built))
    elif kind == "dict":
        for name, child in children.items():
            built[i][name] = _value(child, kinds, nodes, built)


def _tuple(i, kinds, nodes, built, seen):
    if built[i] is not None:
        return built[i]
    _require(i not in seen, f"tuple {i} contains itself")
    seen.add(i)
    items = []
    for child in _indexed(nodes[i]["children"], f"tuple {i}"):
        if kinds[child] == "tuple":
            _tuple(child, kinds, nodes, built, seen)
        items.append(built[child])
    built[i] = tuple(items)
    return built[i]
