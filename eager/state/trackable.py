"""The trackable protocol: objects that own variables name their children for checkpoints.

`Module`, optimizers and `train.Checkpoint` implement `_trackable_children()`, a dict from a
child's name (an attribute name) to the child: a variable, another trackable, or a list, tuple or
dict of those (whose items the checkpoint names by index, namedtuple field or key). A checkpoint
walks these edges from its root to give every variable a stable path (TensorFlow's object-graph
keys, e.g. `model/layers/0/kernel`), so restoring needs no pickles and no names stored inside
variables (variable names are not unique).
"""

from __future__ import annotations

__all__ = ["Trackable", "is_trackable", "children_added", "set_deferred_restorer"]

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
