"""Restoring: pairing live objects with checkpoint nodes, validating, assigning, and keeping
values for objects that appear later (deferred restoration); and the status objects.

See `checkpoint.py` for the rules. One `_Restoration` holds one file's values; it is referenced
by its status object and by `_PENDING` entries for live objects still missing children the
checkpoint has values for, and reports values never used (unless `expect_partial()`) when it
is collected, as TensorFlow warns.
"""

from __future__ import annotations

import collections
import logging
import weakref

from ..base import dtypes as _dt
from ..base.errors import InvalidArgumentError
from ..ops import resource_ops as _res
from ..core.dispatch import execute
from ..core.tensor_conversion import convert_to_tensor
from ..state.trackable import is_trackable, set_deferred_restorer
from ..variables import ResourceVariable, Variable
from ._graph import children_of, python_variables

_log = logging.getLogger("eager.train.checkpoint")


# -----------------------------------------------------------------------------------------------
# Deferred restoration: children that appear after `restore`
# -----------------------------------------------------------------------------------------------

class _Pending:
    """The restorations waiting for children of one live object: restoration -> node ids."""

    __slots__ = ("ref", "waiting", "__weakref__")

    def __init__(self):
        self.ref = None
        self.waiting = {}


_PENDING: dict[int, _Pending] = {}


def _register(owner, restoration, node_ids) -> None:
    key = id(owner)
    entry = _PENDING.get(key)
    if entry is None or entry.ref() is not owner:
        entry = _Pending()

        # The default is evaluated once, on purpose: the callback holds its entry weakly.
        def gone(_, key=key, entry=weakref.ref(entry)):  # noqa: B008
            if _PENDING.get(key) is entry():
                del _PENDING[key]
        try:
            entry.ref = weakref.ref(owner, gone)
        except TypeError:  # not weak-referenceable: keep it alive while values wait for it
            entry.ref = lambda owner=owner: owner
        _PENDING[key] = entry
    entry.waiting.setdefault(restoration, set()).update(node_ids)
    restoration.registered.add(key)


def _unregister(key, restoration) -> None:
    entry = _PENDING.get(key)
    if entry is not None:
        entry.waiting.pop(restoration, None)
        if not entry.waiting:
            del _PENDING[key]


def restore_deferred(trackable) -> None:
    """Restores checkpointed values for children `trackable` gained since a `restore` (a new
    attribute, a lazily created slot variable). Trackables that create children after
    construction call this; it costs one dict lookup when nothing is pending.

    Raises as `restore` does (ValueError for a shape mismatch, InvalidArgumentError for a dtype
    mismatch), and then assigns nothing."""
    if not _PENDING:
        return
    entry = _PENDING.get(id(trackable))
    if entry is None or entry.ref() is not trackable:
        return
    for restoration, node_ids in list(entry.waiting.items()):
        restoration.resume(trackable, node_ids)


# -----------------------------------------------------------------------------------------------
# One restore: matching, validating, assigning
# -----------------------------------------------------------------------------------------------

class _Ledger:
    """What a restore consumed; shared with the finalizer that reports unused values."""

    __slots__ = ("path", "keys", "node_paths", "consumed", "matched_nodes", "expect_partial")

    def __init__(self, data):
        self.path = data.path
        self.keys = {node["variable"]: i for i, node in enumerate(data.nodes)
                     if node["variable"] is not None}
        self.node_paths = _node_paths(data.nodes)
        self.consumed = set()
        self.matched_nodes = {0}
        self.expect_partial = False

    def unconsumed(self):
        return [key for key in self.keys if key not in self.consumed]


def _node_paths(nodes):
    """Each node's first breadth-first path, as TF prints it: "(root).model.layer.kernel"."""
    paths = {0: "(root)"}
    queue = collections.deque([0])
    while queue:
        i = queue.popleft()
        for name, j in nodes[i]["children"].items():
            if j not in paths:
                paths[j] = f"{paths[i]}.{name}"
                queue.append(j)
    return paths


def _report_unused(ledger):
    if ledger.expect_partial:
        return
    unused = ledger.unconsumed()
    if unused:
        _log.warning("A checkpoint restored from %s is being deleted with unrestored values "
                     "(use status.expect_partial() to silence this): %s", ledger.path,
                     ", ".join(ledger.node_paths.get(ledger.keys[k], k) for k in unused[:20]))


class _Restoration:
    """The values read from one file, and which live objects they went to."""

    def __init__(self, data, start, root_alias=None):
        """`start` is paired with node 0; `root_alias` (a `Checkpoint(root=...)`'s root) is
        another object whose new children belong at node 0, so it waits for them too."""
        self.data = data
        self.nodes = data.nodes
        self.ledger = _Ledger(data)
        self.bound = {}  # id(variable) -> weak reference: variables this restore assigned
        self.registered = set()  # ids in _PENDING under which this restoration waits
        self.start_object = _weak(start)
        self.root_alias = None if root_alias is None else _weak(root_alias)

    def is_bound(self, variable) -> bool:
        ref = self.bound.get(id(variable))
        return ref is not None and ref() is variable

    # -- the parallel walk ---------------------------------------------------------------------
    def _plan(self, starts):
        """Pairs live objects with checkpoint nodes from `starts` [(node id, object)]. Returns
        (assignments [(variable, key, node id)], matched node ids, waiting [(owners, missing
        child node ids)], where owners are the trackables on the path, each with its node).
        Changes nothing."""
        queue = collections.deque((nid, obj, ()) for nid, obj in starts)
        seen = {(nid, id(obj)) for nid, obj in starts}
        keep_alive = [obj for _, obj in starts]  # ids must stay unique while the walk runs
        assignments, assigned, matched, waiting = [], set(), set(), []
        while queue:
            nid, obj, owners = queue.popleft()
            matched.add(nid)
            node = self.nodes[nid]
            if isinstance(obj, Variable):
                key = node["variable"]
                if key is not None and not self.is_bound(obj) and id(obj) not in assigned:
                    assigned.add(id(obj))
                    assignments.append((obj, key, nid))
                continue
            if is_trackable(obj):
                owners = owners + ((obj, nid),)
            present = set()
            for name, child in children_of(obj):
                present.add(name)
                cid = node["children"].get(name)
                if cid is not None and (cid, id(child)) not in seen:
                    seen.add((cid, id(child)))
                    keep_alive.append(child)
                    queue.append((cid, child, owners))
            missing = [cid for name, cid in node["children"].items() if name not in present]
            if missing:
                waiting.append((owners, missing))
        return assignments, matched, waiting

    def _validate(self, assignments):
        """Checks every dtype and shape, then converts every value; raises before anything is
        assigned."""
        values = []
        for variable, key, _ in assignments:
            array = self.data.arrays[key]
            if _dt.as_dtype(array.dtype) is not variable.dtype:
                raise InvalidArgumentError(
                    None, None, f"tensor_name = {key}; expected dtype "
                    f"{variable.dtype.name} does not equal original dtype "
                    f"{_dt.as_dtype(array.dtype).name} (restoring variable {variable.name} "
                    f"from {self.data.path}).")
            if not variable.shape.is_compatible_with(array.shape):
                raise ValueError(f"Received incompatible tensor with shape {array.shape} when "
                                 f"attempting to restore variable with shape {variable.shape} "
                                 f"and name {variable.name} (checkpoint key '{key}' in "
                                 f"{self.data.path}).")
            values.append(convert_to_tensor(array, dtype=variable.dtype))
        return values

    def _apply(self, starts):
        assignments, matched, waiting = self._plan(starts)
        values = self._validate(assignments)
        _assign_all([a[0] for a in assignments], values)
        ledger = self.ledger
        for variable, key, _ in assignments:
            self.bound[id(variable)] = _weak(variable)
            ledger.consumed.add(key)
        ledger.matched_nodes.update(matched)
        return waiting

    def _wait_for(self, waiting):
        """Registers, for each missing child that still leads to unconsumed values, every
        trackable on its path: the nearest may be a view made on demand (a module's list
        container) that nobody will notify, so its persistent ancestors wait too."""
        if not self.ledger.unconsumed():
            self.cancel()
            return
        live = self._live_nodes()
        by_owner = {}
        for owners, missing in waiting:
            if any(cid in live for cid in missing):
                for owner, nid in owners:
                    by_owner.setdefault(id(owner), (owner, set()))[1].add(nid)
        for owner, nids in by_owner.values():
            _register(owner, self, nids)
            if 0 in nids and self.root_alias is not None and owner is self.start_object():
                alias = self.root_alias()
                if alias is not None:
                    _register(alias, self, {0})

    def _live_nodes(self):
        """Nodes from which an unconsumed value can be reached (reverse breadth-first search)."""
        parents = collections.defaultdict(list)
        for i, node in enumerate(self.nodes):
            for j in node["children"].values():
                parents[j].append(i)
        live = {self.ledger.keys[k] for k in self.ledger.unconsumed()}
        queue = collections.deque(live)
        while queue:
            for p in parents[queue.popleft()]:
                if p not in live:
                    live.add(p)
                    queue.append(p)
        return live

    def start(self):
        self._wait_for(self._apply([(0, self.start_object())]))
        # Only a restore that happened can leave values unused worth a warning.
        weakref.finalize(self, _report_unused, self.ledger).atexit = False

    def resume(self, owner, node_ids):
        waiting = self._apply([(nid, owner) for nid in sorted(node_ids)])
        _unregister(id(owner), self)
        self.registered.discard(id(owner))
        self._wait_for(waiting)

    def cancel(self):
        for key in self.registered:
            _unregister(key, self)
        self.registered.clear()


def _weak(obj):
    """A weak reference, or (for objects that refuse one) a strong one with the same call."""
    try:
        return weakref.ref(obj)
    except TypeError:
        return lambda: obj


def _assign_all(variables, values):
    """Assigns every value, or (if an assignment fails) puts back the values read before."""
    before = [v.read_value() for v in variables]
    done = 0
    try:
        for variable, value in zip(variables, values):
            _raw_assign(variable, value)
            done += 1
    except BaseException:
        for variable, old in zip(variables[:done], before[:done]):
            try:
                _raw_assign(variable, old)
            except Exception:  # noqa: BLE001 - keep the original error
                pass
        raise


def _raw_assign(variable, value):
    """Restoring sets the stored value: no constraint runs (as in TensorFlow)."""
    if isinstance(variable, ResourceVariable):
        execute(_res.ASSIGN, (variable.handle, value),
                {"validate_shape": variable.shape.is_fully_defined()})
    else:
        variable.assign(value)


# -----------------------------------------------------------------------------------------------
# Status objects
# -----------------------------------------------------------------------------------------------

class CheckpointLoadStatus:
    """What `Checkpoint.restore` returns: assertions about how well the checkpoint matched."""

    def __init__(self, restoration, root):
        self._restoration = restoration
        self._root = root

    def assert_consumed(self):
        """Every value in the checkpoint went to a live variable, and (as
        `assert_existing_objects_matched`) every live variable got a value."""
        ledger = self._restoration.ledger
        unused = ledger.unconsumed()
        if unused:
            key = unused[0]
            raise AssertionError(
                f"Unresolved object in checkpoint {ledger.node_paths.get(ledger.keys[key], '?')}"
                f": checkpoint key '{key}' was not restored into any variable"
                + (f" ({len(unused) - 1} more unresolved)" if len(unused) > 1 else "") + ".")
        return self.assert_existing_objects_matched()

    def assert_existing_objects_matched(self):
        """Every variable now reachable from the root was restored from the checkpoint (values
        in the checkpoint with no live variable are allowed)."""
        unmatched = [v for v in python_variables(self._root)
                     if not self._restoration.is_bound(v)]
        if unmatched:
            shown = ", ".join(repr(v) for v in unmatched[:10])
            raise AssertionError(
                f"Found {len(unmatched)} Python objects that were not bound to checkpointed "
                f"values, likely due to changes in the Python program. Showing "
                f"{min(len(unmatched), 10)} of {len(unmatched)} unmatched objects: [{shown}]")
        return self

    def assert_nontrivial_match(self):
        """Something besides the root matched the checkpoint."""
        if len(self._restoration.ledger.matched_nodes) <= 1:
            raise AssertionError(
                "Nothing except the root object matched a checkpointed value. Typically this "
                "means that the checkpoint does not match the Python program.")
        return self

    def expect_partial(self):
        """Silences the warning about checkpoint values never restored."""
        self._restoration.ledger.expect_partial = True
        return self

    def run_restore_ops(self, session=None):
        """Values are assigned eagerly; nothing to run (kept for TF compatibility)."""

    def initialize_or_restore(self, session=None):
        """Values are assigned eagerly; nothing to run (kept for TF compatibility)."""


class InitializationOnlyStatus:
    """What `restore(None)` returns: nothing was restored, so every assertion fails."""

    def _fail(self):
        raise AssertionError("No checkpoint specified (save_path=None); nothing is being "
                             "restored.")

    def assert_consumed(self):
        self._fail()

    def assert_existing_objects_matched(self):
        self._fail()

    def assert_nontrivial_match(self):
        self._fail()

    def expect_partial(self):
        return self

    def run_restore_ops(self, session=None):
        """Nothing to run."""

    def initialize_or_restore(self, session=None):
        """Variables are initialized on creation in eager; nothing to run."""


set_deferred_restorer(restore_deferred)
