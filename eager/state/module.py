"""`eager.Module` (≈ `tf.Module`): an object that finds its variables and submodules by itself.

A module keeps no registry: `variables`, `trainable_variables`, `submodules` walk the object's
attributes each time they are asked, so `self.layers = []` followed by
`self.layers.append(Dense(...))` is seen by the walk. Assigning an attribute tells a pending
checkpoint restore that a child may have appeared (`eager.state.trackable.children_added`), so
values restored before the attribute existed reach it; a list or dict assigned is kept as a
`TrackedList` / `TrackedDict` (a copy, as TensorFlow's `ListWrapper` is not the list assigned)
that does the same when items are added to it later.

The walk is TensorFlow's, so the same program lists the same variables in the same order:

* attributes in sorted name order; inside an attribute, nested lists and tuples in order,
  dicts (any Mapping) by sorted key, namedtuples in field order; any other object is a leaf
  (it is not searched, even if it holds variables: make it a Module);
* every value is reported once (deduplicated by identity), the first time it is reached;
* a module's own attributes come first, then each submodule's in the order they were found,
  recursively; a reference back to a module being walked is not followed (cycles are fine).

Checkpoints use a second, separate view: `_trackable_children()` (see `eager.state.trackable`),
which names each child instead of ordering it. Its naming is documented on
`Module._trackable_children`.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Mapping

from ..core import context as _context
from .module_display import module_html
from .trackable import Trackable, children_added, tracked
from ..variables import Variable

__all__ = ["Module"]

_CAMEL_TO_SNAKE = re.compile(r"((?<=[a-z0-9])[A-Z]|(?!^)[A-Z](?=[a-z]))")
_VALID_IDENTIFIER = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


def camel_to_snake(name: str) -> str:
    """'MyDense' -> 'my_dense', 'HTTPServer2' -> 'http_server2' (TensorFlow's rule)."""
    return _CAMEL_TO_SNAKE.sub(r"_\1", name).lower()


# -----------------------------------------------------------------------------------------------
# Name scopes
# -----------------------------------------------------------------------------------------------

class _NameScope:
    """A module's name scope: entering it makes `name` (absolute, ending in "/") the thread's
    current name scope (`eager.core.context.thread_state().name_scope`), and returns it.

    The same object is entered again and again (`with m.name_scope:` on every call, possibly
    from several threads at once), so what to restore on exit is kept per thread."""

    __slots__ = ("_name", "_saved")

    def __init__(self, name):
        self._name = name
        self._saved = threading.local()

    @property
    def name(self) -> str:
        return self._name

    def __enter__(self):
        st = _context.thread_state()
        stack = getattr(self._saved, "stack", None)
        if stack is None:
            stack = self._saved.stack = []
        stack.append(st.name_scope)
        st.name_scope = self._name
        return self._name

    def __exit__(self, *exc):
        _context.thread_state().name_scope = self._saved.stack.pop()
        return False

    def __repr__(self):
        return f"<name_scope {self._name!r}>"


# -----------------------------------------------------------------------------------------------
# The walk (TensorFlow's order; see the module doc)
# -----------------------------------------------------------------------------------------------

def _is_namedtuple(value) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def _leaves(value, path):
    """(path, leaf) pairs of a nested structure, in tf.nest order."""
    if isinstance(value, Mapping):
        for key in sorted(value):  # unsortable keys raise TypeError (the caller explains)
            yield from _leaves(value[key], path + (key,))
    elif _is_namedtuple(value):
        for field, item in zip(type(value)._fields, value):
            yield from _leaves(item, path + (field,))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from _leaves(item, path + (index,))
    else:
        yield path, value


def _walk(module, predicate, recursive, with_path, path, seen, stack, traversal_key):
    module_id = id(module)
    if module_id in stack:  # a back edge: report this module's leaves, do not go deeper
        recursive = False
    ignored = getattr(module, "_TF_MODULE_IGNORED_PROPERTIES", frozenset())
    attributes = vars(module)
    submodules = []
    for key in sorted(attributes, key=traversal_key):
        if key in ignored:
            continue
        value = attributes[key]
        try:
            leaves = list(_leaves(value, (key,)))
        except Exception as cause:  # noqa: BLE001 - e.g. a dict with unsortable keys
            raise ValueError(f"Error processing property {key!r} of {value!r}") from cause
        for leaf_path, leaf in leaves:
            if not with_path:
                if id(leaf) in seen:
                    continue
                seen.add(id(leaf))
            if predicate(leaf):
                yield (path + leaf_path, leaf) if with_path else leaf
            if recursive and isinstance(leaf, Module):
                submodules.append((path + leaf_path, leaf))
    stack.append(module_id)
    for sub_path, submodule in submodules:
        yield from _walk(submodule, predicate, recursive, with_path, sub_path, seen, stack,
                         traversal_key)
    stack.pop()


def _is_variable(value) -> bool:
    return isinstance(value, Variable)


def _is_trainable_variable(value) -> bool:
    return isinstance(value, Variable) and value.trainable


def _is_non_trainable_variable(value) -> bool:
    return isinstance(value, Variable) and not value.trainable


def _is_module(value) -> bool:
    return isinstance(value, Module)


def _path_label(path) -> str:
    """An attribute path as Python reads it: ("layers", 0, "w") -> "layers[0]['w']" (the first
    part is the attribute; the rest index into the lists and dicts it holds)."""
    return str(path[0]) + "".join(f"[{part!r}]" for part in path[1:])


# -----------------------------------------------------------------------------------------------
# Trackable children
# -----------------------------------------------------------------------------------------------

def _holds_trackables(value, seen) -> bool:
    """Whether a nested list/tuple/dict contains a variable or a trackable anywhere."""
    if isinstance(value, (Variable, Trackable)):
        return True
    if isinstance(value, (list, tuple, Mapping)):
        if id(value) in seen:  # a container holding itself
            return False
        seen.add(id(value))
        items = value.values() if isinstance(value, Mapping) else value
        return any(_holds_trackables(item, seen) for item in items)
    return False


def _child(value):
    """The checkpoint child for an attribute, or None if it holds nothing a checkpoint saves."""
    if isinstance(value, (Variable, Trackable)):
        return value
    if isinstance(value, (list, tuple, Mapping)) and _holds_trackables(value, set()):
        return value  # the checkpoint walks containers itself (indices, fields, keys)
    return None


# -----------------------------------------------------------------------------------------------
# Module
# -----------------------------------------------------------------------------------------------

class Module(Trackable):
    """≈ `tf.Module`: base class for objects that own variables and other modules.

    `Module(name=None)`: the name defaults to the class name in snake case (`MyDense` ->
    "my_dense"); it is not made unique (TensorFlow does not either) and must be a valid Python
    identifier. `name_scope` is the scope the module was created in followed by its name
    ("outer/my_dense/"); `with m.name_scope:` makes it the thread's current name scope
    (`eager.core.context.thread_state().name_scope`), so variables created inside are named
    "my_dense/w:0", as in TensorFlow. Names are never keys here (checkpoints use object paths).

    `variables`, `trainable_variables`, `non_trainable_variables` and `submodules` are tuples
    found by walking attributes in TensorFlow's order (see the module doc).
    """

    # Attribute names the walk skips (TensorFlow's hook; subclasses may extend it).
    _TF_MODULE_IGNORED_PROPERTIES = frozenset()

    def __init__(self, name=None):
        if name is None:
            name = camel_to_snake(type(self).__name__)
        elif not isinstance(name, str) or not _VALID_IDENTIFIER.match(name):
            raise ValueError(f"{name!r} is not a valid module name. Module names must be valid "
                             "Python identifiers (e.g. a valid class name).")
        self._name = name
        self._name_scope = _NameScope(_context.thread_state().name_scope + name + "/")

    def __setattr__(self, name, value):
        # A child attached after a checkpoint restore gets the values waiting for it (as
        # TensorFlow's tracking on attribute assignment does); free when nothing waits. A list
        # or dict is kept as a tracked one, which does the same for items added to it later.
        if not name.startswith("__"):
            value = tracked(value, self)
        object.__setattr__(self, name, value)
        if isinstance(value, (Variable, Trackable, list, tuple, Mapping)):
            children_added(self)

    @property
    def name(self) -> str:
        """The module's name (not unique)."""
        return self._name

    @property
    def name_scope(self) -> _NameScope:
        """The module's name scope, a context manager; its `.name` ends with "/"."""
        return self._name_scope

    @property
    def variables(self) -> tuple:
        """Every variable of this module and its submodules, each once, in TensorFlow's order."""
        return tuple(self._flatten(predicate=_is_variable))

    @property
    def trainable_variables(self) -> tuple:
        """The variables with `trainable=True` (what a training loop differentiates)."""
        return tuple(self._flatten(predicate=_is_trainable_variable))

    @property
    def non_trainable_variables(self) -> tuple:
        return tuple(self._flatten(predicate=_is_non_trainable_variable))

    @property
    def submodules(self) -> tuple:
        """Every module reachable from this one (not including itself), each once."""
        return tuple(self._flatten(predicate=_is_module))

    def _flatten(self, recursive=True, predicate=None, attribute_traversal_key=None,
                 with_path=False, expand_composites=False):
        """≈ `tf.Module._flatten`: a generator of the values (or, with `with_path`, the
        (path, value) pairs; then values reachable by several paths are reported once per
        path) that satisfy `predicate`. Paths are tuples of attribute names, indices and keys.
        `expand_composites` is accepted for compatibility (eager has no composite tensors to
        expand here)."""
        predicate = predicate or (lambda _: True)
        return _walk(self, predicate, recursive, with_path, (), {id(self)}, [],
                     attribute_traversal_key)

    @classmethod
    def with_name_scope(cls, method):
        """Decorator: runs `method` inside `self.name_scope` (≈ `tf.Module.with_name_scope`)."""
        @functools.wraps(method)
        def wrapped(self, *args, **kwargs):
            with self.name_scope:
                return method(self, *args, **kwargs)
        return wrapped

    def _trackable_children(self) -> dict:
        """The module's checkpoint children, by attribute name, in attribute-assignment order
        (as TensorFlow's AutoTrackable):

        * an attribute holding a Variable, a Module or any other `Trackable` is a child under
          the attribute's name (private names such as "_w" included);
        * an attribute holding a list, tuple or dict that contains (at any depth) a variable or
          a trackable is a child too: the container itself, whose items the checkpoint names
          by index ("0", "1"), namedtuple field, or dict key (which must be a string), exactly
          as TensorFlow names the items of its list and dict wrappers; containers nest. The
          container is returned as is (no wrapper), so it is the same object on every call and
          a checkpoint can wait on it for items added after a restore;
        * anything else (numbers, strings, tensors, other objects, containers holding no
          trackable) is not part of a checkpoint.

        So `self.layers = [Dense(), Dense()]` with `Dense.w` gives the path "layers/0/w".
        The same variable reachable through several names appears under each; the checkpoint
        saves it once.
        """
        ignored = self._TF_MODULE_IGNORED_PROPERTIES
        children = {}
        for key, value in vars(self).items():
            if key in ignored:
                continue
            child = _child(value)
            if child is not None:
                children[key] = child
        return children

    # -- notebook display (`eager.state.module_display`) -----------------------------------------
    def _display_children(self) -> list:
        """(label, submodule) for each submodule held directly, labelled by its attribute path
        ("layers[0]")."""
        return [(_path_label(path), module) for path, module in
                self._flatten(recursive=False, predicate=_is_module, with_path=True)]

    def _display_variables(self) -> list:
        """(label, variable) for each variable held directly (not by a submodule)."""
        return [(_path_label(path), variable) for path, variable in
                self._flatten(recursive=False, predicate=_is_variable, with_path=True)]

    def _display_parameters(self) -> tuple:
        return self.variables

    def _repr_html_(self):
        """A notebook's display: the tree of submodules with parameter counts and shapes."""
        return module_html(self)

    def __repr__(self):
        name = vars(self).get("_name")  # None when a subclass skipped Module.__init__
        return f"<{type(self).__module__}.{type(self).__qualname__} name={name!r}>"
