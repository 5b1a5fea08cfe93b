"""The trackable protocol: objects that own variables name their children for checkpoints.

`Module`, optimizers and `train.Checkpoint` implement `_trackable_children()`, a dict from a
child's name (an attribute name) to the child: a variable, another trackable, or a list, tuple or
dict of those (whose items the checkpoint names by index, namedtuple field or key). A checkpoint
walks these edges from its root to give every variable a stable path (TensorFlow's object-graph
keys, e.g. `model/layers/0/kernel`), so restoring needs no pickles and no names stored inside
variables (variable names are not unique).
"""

from __future__ import annotations

import weakref

__all__ = ["Trackable", "is_trackable", "children_added", "set_deferred_restorer",
           "TrackedList", "TrackedDict", "tracked"]

_deferred_restorer = None


def set_deferred_restorer(restorer) -> None:
    """Installed by `eager.train` (a higher layer): `restorer(trackable)` restores checkpointed
    values waiting for children the trackable gained after a `restore`."""
    global _deferred_restorer
    _deferred_restorer = restorer


def children_added(trackable) -> None:
    """Trackables call this after creating children lazily (a module attribute set after a
    restore, an optimizer's slot variables): values a checkpoint restore left waiting for them
    are assigned now (TensorFlow's deferred restoration). Nearly free when nothing waits."""
    if _deferred_restorer is not None:
        _deferred_restorer(trackable)


class Trackable:
    """Base for objects with trackable children (see the module doc)."""

    __slots__ = ()

    def _trackable_children(self) -> dict:
        raise NotImplementedError


def is_trackable(value) -> bool:
    return isinstance(value, Trackable)


# -----------------------------------------------------------------------------------------------
# Containers that say when they gain items
# -----------------------------------------------------------------------------------------------
#
# A checkpoint restored before `model.layers = []` filled has values waiting for `layers/0`;
# nothing would tell it when `model.layers.append(Dense())` adds that child. So lists and dicts
# assigned to a module's or a checkpoint's attributes are kept as these subclasses (TensorFlow
# wraps them too, in `ListWrapper` / `_DictWrapper`): every call that adds items tells the
# owner (`children_added`). They are ordinary lists and dicts otherwise (equal to the value
# assigned, pickled and copied as plain ones); nested lists and dicts are tracked the same way.


def _adding(method):
    def tracked_method(self, *args, **kwargs):
        result = method(self, *args, **kwargs)
        _track_items(self, self._owner)
        owner = self._owner()
        if owner is not None:
            children_added(owner)
        return result
    tracked_method.__name__ = method.__name__
    tracked_method.__doc__ = method.__doc__
    return tracked_method


def _track_items(container, owner_ref) -> None:
    """Items that are plain lists or dicts become tracked ones with the same owner."""
    if container.__class__ is TrackedDict:
        for key, item in list(container.items()):
            if item.__class__ is list or item.__class__ is dict:
                dict.__setitem__(container, key, _tracked(item, owner_ref))
    else:
        for i, item in enumerate(container):
            if item.__class__ is list or item.__class__ is dict:
                list.__setitem__(container, i, _tracked(item, owner_ref))


class TrackedList(list):
    """A list that tells its owner when items are added (see above)."""

    __slots__ = ("_owner", "__weakref__")

    append = _adding(list.append)
    extend = _adding(list.extend)
    insert = _adding(list.insert)
    __setitem__ = _adding(list.__setitem__)
    __iadd__ = _adding(list.__iadd__)

    def __reduce_ex__(self, protocol):
        return list, (list(self),)


class TrackedDict(dict):
    """A dict that tells its owner when items are added (see above)."""

    __slots__ = ("_owner", "__weakref__")

    __setitem__ = _adding(dict.__setitem__)
    update = _adding(dict.update)
    setdefault = _adding(dict.setdefault)
    __ior__ = _adding(dict.__ior__)

    def __reduce_ex__(self, protocol):
        return dict, (dict(self),)


def tracked(value, owner):
    """`value` as trackable `owner` keeps it in an attribute: a list or dict (exactly; a
    subclass may have rules of its own) becomes a `TrackedList` / `TrackedDict` that tells
    `owner` about added items; anything else is returned as is."""
    cls = value.__class__
    if cls is not list and cls is not dict and cls is not TrackedList and cls is not TrackedDict:
        return value
    return _tracked(value, _weak(owner))


def _tracked(value, owner_ref):
    cls = value.__class__
    result = TrackedList(value) if cls is list or cls is TrackedList else TrackedDict(value)
    result._owner = owner_ref
    _track_items(result, owner_ref)
    return result


def _weak(obj):
    try:
        return weakref.ref(obj)
    except TypeError:  # not weak-referenceable: the container keeps it
        return lambda: obj
