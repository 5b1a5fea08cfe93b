"""`eager.train.Checkpoint` ≈ `tf.train.Checkpoint`: object-based saving and restoring.

Keys. A checkpoint walks the object graph breadth-first from its root (`_trackable_children()`
edges, plus list indices and dict keys) and names each variable by the first path that reaches
it, as TensorFlow does: each local name is escaped ("." -> "..", "/" -> ".S"), the names are
joined by "/", and "/.ATTRIBUTES/VARIABLE_VALUE" is appended. So
`Checkpoint(model=m).save(...)` stores `m.layer.kernel` under
`model/layer/kernel/.ATTRIBUTES/VARIABLE_VALUE`, `m.d["b/c"]` under
`model/d/b.Sc/.ATTRIBUTES/VARIABLE_VALUE`, and the counter under
`save_counter/.ATTRIBUTES/VARIABLE_VALUE`: the strings `tf.train.list_variables` shows for the
same structure. A variable reachable by several paths is stored once.

Matching. Restoring does not look keys up by string: like TensorFlow it walks the checkpoint's
object graph (stored in the file, see `_format.py`) in step with the live objects, pairing
children by local name. A checkpoint child with no live counterpart yet is *deferred*: its values
are kept, and whoever adds that child later calls `restore_deferred(parent)` (`Checkpoint`'s own
attribute assignment does; modules and optimizers creating slot variables lazily should), which
restores it then, as TensorFlow restores a slot variable when the optimizer creates it.

All or nothing. The whole file is read and validated (see `_format.py`) and every matched
variable's dtype and shape is checked before any variable is assigned; assignment itself rolls
back if it fails part way. A failed restore leaves every variable as it was.
"""

from __future__ import annotations

import os
import threading

from ..core import context as _context
from ..base import dtypes as _dt
from ..state.trackable import Trackable, is_trackable, tracked
from ..variables import Variable
from . import _format
from . import checkpoint_management as _management
from ._graph import escape_local_name, is_node, object_graph
from ._restore import (CheckpointLoadStatus, InitializationOnlyStatus, _Restoration,
                       restore_deferred)

__all__ = ["Checkpoint", "CheckpointLoadStatus", "InitializationOnlyStatus", "restore_deferred",
           "escape_local_name"]


# -----------------------------------------------------------------------------------------------
# Checkpoint
# -----------------------------------------------------------------------------------------------

class Checkpoint(Trackable):
    """≈ `tf.train.Checkpoint(root=None, **kwargs)`: its keyword arguments (variables,
    trackables, lists and dicts of them) are its children and are saved with it; with `root`,
    the saved graph's root is `root` and the keyword arguments hang beside its own children.

    Attributes assigned later are tracked too, and are restored at once if a pending restore
    has values for them.
    """

    def __init__(self, root=None, **kwargs):
        object.__setattr__(self, "_children", {})
        object.__setattr__(self, "_save_counter", None)
        # Creating the counter and taking a number from it are one step for every thread that
        # saves (see `_take_save_number`); reentrant, since the counter's creation restores it.
        object.__setattr__(self, "_numbering", threading.RLock())
        object.__setattr__(self, "_newest_recorded", {})  # state directory -> newest number
        object.__setattr__(self, "_restoration", None)
        if root is not None and not is_trackable(root):
            raise ValueError(f"`Checkpoint` was expecting root to be a trackable object (an "
                             f"object with _trackable_children), got {root!r}.")
        object.__setattr__(self, "_root", root)
        for name in sorted(kwargs):
            value = kwargs[name]
            if name == "save_counter":
                raise ValueError("`save_counter` is reserved: the Checkpoint tracks its own.")
            if not is_node(value):
                raise ValueError(f"`Checkpoint` was expecting {name} to be a trackable object "
                                 f"(a Variable, a trackable, or a list or dict of them), got "
                                 f"{value!r}.")
            self._children[name] = tracked(value, self)

    # -- children -----------------------------------------------------------------------------
    def __setattr__(self, name, value):
        if name.startswith("_") or not is_node(value):
            self._children.pop(name, None)
            object.__setattr__(self, name, value)
            return
        if name == "save_counter":
            raise AttributeError("save_counter is managed by the Checkpoint.")
        self.__dict__.pop(name, None)
        self._children[name] = tracked(value, self)  # tells restores about items added later
        restore_deferred(self)

    def __getattr__(self, name):
        children = self.__dict__.get("_children")
        if children is not None and name in children:
            return children[name]
        raise AttributeError(f"'Checkpoint' object has no attribute {name!r}")

    def __delattr__(self, name):
        if name in self._children:
            del self._children[name]
        else:
            object.__delattr__(self, name)

    def _trackable_children(self):
        children = {}
        if self._root is not None:
            children.update(self._root._trackable_children())
        children.update(self._children)
        if self._save_counter is not None:
            children["save_counter"] = self._save_counter
        return children

    @property
    def save_counter(self):
        """The number of `save` calls (an int64 variable, created on first use and checkpointed
        as `save_counter`, so numbering continues after a restore)."""
        self._maybe_create_save_counter()
        return self._save_counter

    def _maybe_create_save_counter(self):
        if self._save_counter is not None:
            return
        with self._numbering:  # two threads' first saves must not make two counters
            if self._save_counter is None:
                with _context.device("/cpu:0"):
                    counter = Variable(0, dtype=_dt.int64, trainable=False, name="save_counter")
                object.__setattr__(self, "_save_counter", counter)
                restore_deferred(self)

    def _take_save_number(self) -> int:
        """Increments `save_counter` and returns its new value, atomically: concurrent saves
        (threads sharing this checkpoint, or a `CheckpointManager` of it) get distinct numbers,
        so no save overwrites another's file."""
        with self._numbering:
            counter = self.save_counter
            counter.assign_add(1)
            return int(counter.numpy())

    def _return_save_number(self, number) -> None:
        """Gives back the number of a save that failed, unless a later save took one since (then
        putting the counter back would hand out that later number again)."""
        with self._numbering:
            counter = self._save_counter
            if int(counter.numpy()) == number:
                counter.assign(number - 1)

    def _is_newest(self, directory, number) -> bool:
        """Whether `number` is the highest this checkpoint saved into `directory` so far (the one
        the state file should name); called with `_numbering` held."""
        newest = self._newest_recorded.get(directory)
        if newest is not None and newest > number:
            return False
        self._newest_recorded[directory] = number
        return True

    # -- writing -------------------------------------------------------------------------------
    def write(self, file_prefix, options=None):
        """Writes a checkpoint to exactly `file_prefix` (no counter, no state file) and returns
        that path. Atomic: a failure leaves any file already there unchanged. In a multi-worker
        job only the chief's file lands there (`checkpoint_management.worker_temp_path`)."""
        _check_options(options)
        path = os.fspath(file_prefix)
        nodes, arrays = object_graph(self)
        temp = _management.worker_temp_path(path)  # a non-chief worker of a multi-worker job
        target = path if temp is None else temp
        if temp is not None:
            os.makedirs(os.path.dirname(temp), exist_ok=True)
        _format.atomic_write(target, lambda f: _format.encode_checkpoint(f, nodes, arrays))
        if temp is not None:
            _management.remove_worker_temp(temp)
        return path

    def save(self, file_prefix, options=None):
        """Increments `save_counter`, writes `{file_prefix}-{save_counter}`, records it in the
        directory's `checkpoint` state file (for `latest_checkpoint`), and returns the path.
        Thread-safe: concurrent saves get distinct numbers, and the state file names the
        highest."""
        _check_options(options)
        file_prefix = os.fspath(file_prefix)
        number = self._take_save_number()
        try:
            path = self.write(f"{file_prefix}-{number}")
        except BaseException:
            self._return_save_number(number)  # a failed save does not use up a number
            raise
        directory = os.path.dirname(file_prefix) or "."
        with self._numbering:  # the state file names the newest save, whichever ends last
            if self._is_newest(os.path.abspath(directory), number) \
                    and _management.worker_temp_path(path) is None:  # the chief's state file
                _management.update_checkpoint_state(directory, path, [path])
        return path

    # -- reading -------------------------------------------------------------------------------
    def restore(self, save_path, options=None):
        """Restores the values in `save_path` into this checkpoint's objects (creating
        `save_counter` first, so it is restored too) and returns a `CheckpointLoadStatus`.
        Values for objects that do not exist yet wait for them (see the module doc).

        Raises NotFoundError (no such file), DataLossError (a damaged file), ValueError (a shape
        mismatch) or InvalidArgumentError (a dtype mismatch); then no variable has changed.
        `restore(None)` restores nothing and returns an `InitializationOnlyStatus`."""
        _check_options(options)
        if save_path is None:
            return InitializationOnlyStatus()
        data = _format.read_checkpoint(save_path)
        self._maybe_create_save_counter()
        return self._restore(data)

    def read(self, save_path, options=None):
        """Like `restore`, for files from `write`: does not create `save_counter`."""
        _check_options(options)
        return self._restore(_format.read_checkpoint(save_path))

    def _restore(self, data):
        restoration = _Restoration(data, self, self._root)
        restoration.start()
        previous = self._restoration
        if previous is not None:
            previous.cancel()  # a newer restore supersedes values still waiting
        object.__setattr__(self, "_restoration", restoration)
        return CheckpointLoadStatus(restoration, self)

    def __repr__(self):
        return f"<eager.train.Checkpoint children={sorted(self._trackable_children())}>"


def _check_options(options):
    if options is not None:
        raise NotImplementedError("eager.train.Checkpoint does not support CheckpointOptions.")
