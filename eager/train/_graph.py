"""Walking the object graph: the edges out of each object, and the keys variables get.

The edges are `_trackable_children()` for trackables, indices for lists and tuples, keys for
dicts; anything else (numbers, strings, tensors) is not part of the graph. A variable's key is
its first breadth-first path, each component escaped as TensorFlow does ("." -> "..", "/" ->
".S"), joined by "/", plus "/.ATTRIBUTES/VARIABLE_VALUE" (see `checkpoint.py`).

A trackable saved as one value rather than as children (a dataset iterator: TensorFlow writes
its state under `iterator/.ATTRIBUTES/ITERATOR_STATE`) defines `_checkpoint_variable()`, the
variable-like object that stands in its place in the graph, and that object's
`checkpoint_attribute` names the value ("ITERATOR_STATE"; variables: "VARIABLE_VALUE").
"""

from __future__ import annotations

import collections
from collections.abc import Mapping

import numpy as np

from ..state.trackable import is_trackable
from ..variables import Variable
from . import _format

ATTRIBUTES = ".ATTRIBUTES/"


def escape_local_name(name: str) -> str:
    """TensorFlow's escaping of one path component, so that "/" can join components."""
    return name.replace(".", "..").replace("/", ".S")


def is_node(value) -> bool:
    """Whether a value takes part in the object graph (anything else is ignored)."""
    return isinstance(value, (Variable, list, tuple, Mapping)) or is_trackable(value)


def children_of(obj):
    """The (local name, child) edges out of one object, in a stable order."""
    if isinstance(obj, Variable):
        return []
    if is_trackable(obj):
        mapping = obj._trackable_children()
        if not isinstance(mapping, Mapping):
            raise TypeError(f"{type(obj).__name__}._trackable_children() must return a dict of "
                            f"name -> child, got {type(mapping).__name__}.")
        items = list(mapping.items())
    elif isinstance(obj, Mapping):
        items = list(obj.items())
    elif isinstance(obj, tuple) and hasattr(type(obj), "_fields"):  # namedtuple: by field
        items = list(zip(type(obj)._fields, obj))
    elif isinstance(obj, (list, tuple)):
        items = [(str(i), v) for i, v in enumerate(obj)]
    else:
        return []
    out = []
    for name, child in items:
        stand_in = getattr(child, "_checkpoint_variable", None)
        if stand_in is not None and is_trackable(child):
            child = stand_in()
        if not is_node(child):
            continue
        if not isinstance(name, str):
            raise TypeError(f"Checkpoint names must be strings; {type(obj).__name__} has a "
                            f"child under the non-string key {name!r} ({type(name).__name__}).")
        out.append((name, child))
    return out


def python_variables(root):
    """Every variable reachable from `root` (each once)."""
    seen, queue, found = {id(root)}, collections.deque([root]), []
    visited = [root]  # keeps views made on demand alive, so that ids stay unique
    while queue:
        obj = queue.popleft()
        for _, child in children_of(obj):
            if id(child) not in seen:
                seen.add(id(child))
                visited.append(child)
                queue.append(child)
                if isinstance(child, Variable):
                    found.append(child)
    return found


def object_graph(root):
    """(nodes, arrays) for `_format.encode_checkpoint`: the breadth-first graph from `root`, and
    each variable's value under its first path's key."""
    _, nodes, arrays = object_graph_with_objects(root)
    return nodes, arrays


def object_graph_with_objects(root):
    """`object_graph`, plus the objects themselves (`objects[i]` is node i): what a SavedModel
    needs to say which node each function and captured variable is."""
    objects, paths, ids = [root], [()], {id(root): 0}
    nodes = [{"children": []}]
    queue = collections.deque([0])
    while queue:
        index = queue.popleft()
        for name, child in children_of(objects[index]):
            j = ids.get(id(child))
            if j is None:
                j = ids[id(child)] = len(objects)
                objects.append(child)
                paths.append(paths[index] + (name,))
                nodes.append({"children": []})
                queue.append(j)
            nodes[index]["children"].append([name, j])
    arrays = {}
    for index, obj in enumerate(objects):
        if not isinstance(obj, Variable):
            continue
        attribute = ATTRIBUTES + getattr(obj, "checkpoint_attribute", "VARIABLE_VALUE")
        key = "/".join([escape_local_name(n) for n in paths[index]] + [attribute])
        if not _format.saveable_dtype(obj.dtype):
            raise TypeError(f"Cannot checkpoint variable {obj.name} ({key}): dtype "
                            f"{getattr(obj.dtype, 'name', obj.dtype)} is not saveable.")
        # The variable's dtype is the truth (a creator's Variable subclass might read wider);
        # asarray also turns the numpy scalars rank-0 reads give into arrays.
        array = np.asarray(obj.numpy(), dtype=obj.dtype.dtype)
        nodes[index]["variable"] = key
        arrays[key] = (array, getattr(obj, "name", ""))
    return objects, nodes, arrays
