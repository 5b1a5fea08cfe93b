"""Resource-variable ops: the storage behind a variable handle, and the ops that read and write it.

Semantics (TensorFlow's resource-variable model, see docs/semantics.md):

* Every op on a variable is atomic: it holds the storage's lock for its whole read, or its whole
  read-compute-write. Concurrent `assign_add`s lose no update.
* Reads are snapshots. A read hands out the storage's current array itself (no copy); a later
  write that finds the array still referenced elsewhere (its reference count is above what the
  storage alone holds) writes a new array instead (copy-on-write), and one that finds it
  unshared updates it in place. So an optimizer step on a variable nobody else holds allocates
  nothing, and a value someone read never changes under them.
* Sparse access (gather, scatter) switches the variable to copy-on-read (reads return copies),
  so sparse updates can always be in place: the trade TensorFlow makes for embedding tables.
"""

from __future__ import annotations

import sys
import threading

import numpy as np

from ..base import device_checks, dtypes as _dt
from ..base.errors import InvalidArgumentError
from ..base.ieee import FP_SIGNALS, quietly
from ..devices import registry as _registry
from ..devices.resource_manager import next_resource_id
from ..devices.resource_handles import ResourceHandle, handle_data
from ..tensor import IndexedSlices
from ..core.specs import TensorSpec
from ..base.tensor_shape import TensorShape
from .grad_utils import dense_shape_tensor
from ..core.buffer_reuse import calibrate
from ..core.registry import op_error, register_op
from .cupy_kernels import index_rows
from .scatter_add import scatter_add
from .slicing_ops import index_position

__all__ = ["VariableStorage", "create_variable_handle", "apply_update", "VAR_HANDLE", "READ",
           "ASSIGN",
           "ASSIGN_ADD",
           "ASSIGN_SUB", "GATHER", "SCATTER_UPDATE", "SCATTER_ADD", "IS_INITIALIZED",
           "DESTROY", "unshared", "checked_rows", "keep_where", "neutral_addend"]

_getrefcount = sys.getrefcount


class VariableStorage:
    """What a variable handle names: the current array, a lock, the sharing policy.

    The lock is re-entrant so that the hot paths can take it safely against a
    `KeyboardInterrupt` (Ctrl-C) at no cost (see `apply_update`): an RLock knows its owner."""

    __slots__ = ("value", "lock", "copy_on_read", "dtype", "shape", "validate_shape", "version")

    def __init__(self, dtype, shape, validate_shape=True):
        self.value = None
        self.lock = threading.RLock()
        self.copy_on_read = False
        self.dtype = dtype
        self.shape = TensorShape(shape)
        self.validate_shape = validate_shape
        self.version = 0  # bumped by every write (UnreadVariable uses it)


def _value_refcount(storage):
    return _getrefcount(storage.value)


def _storage_probe(storage):
    """The update kernels' frame at their check: one local reference to the array, `current`."""
    current = storage.value  # noqa: F841 - the reference the kernels hold
    return _value_refcount(storage)


def _storage_counts(holders):
    storage = VariableStorage(_dt.float32, ())
    storage.value = np.empty(1)
    held = [storage.value] * holders  # noqa: F841 - other holders (a read snapshot)
    return _storage_probe(storage)


#: The reference count of a storage's array that only the storage holds (and the kernel's one
#: local `current`), measured (`buffer_reuse.calibrate`), not assumed. When calibration fails
#: every update copies.
UNSHARED_REFS = calibrate("variable storage", lambda: _storage_counts(0),
                          lambda: _storage_counts(1))
if UNSHARED_REFS is None:
    UNSHARED_REFS = 0


def unshared(storage) -> bool:
    """True when nothing but the storage (and the calling kernel's one local `current`)
    refers to its array: it may be updated in place."""
    return _value_refcount(storage) <= UNSHARED_REFS


def create_variable_handle(device, dtype, shape, name, validate_shape=True):
    """A new (uninitialized) variable storage on `device` and the handle naming it."""
    uid = next_resource_id()
    device.resources.create(uid, VariableStorage(dtype, shape, validate_shape))
    return ResourceHandle(uid, device, "Variable", name, dtype, shape)


def _var_handle_kernel(xp, dtype, shape, shared_name, device, validate_shape=True):
    # `device` is the placement device's name, given by the caller: a kernel sees only `xp`,
    # and an op with no inputs is placed exactly where the caller's scope says.
    return create_variable_handle(_registry.lookup(device), dtype, shape, shared_name,
                                  validate_shape)


def _var_handle_infer(dtype, shape, shared_name, device, validate_shape=True):
    return TensorSpec([], _dt.resource)


VAR_HANDLE = register_op("VarHandleOp", _var_handle_kernel, _var_handle_infer, stateful=True,
                         differentiable=False)


# -----------------------------------------------------------------------------------------------
# Inference helpers
# -----------------------------------------------------------------------------------------------

def _check_handle(op_name, handle):
    if handle.dtype is not _dt.resource:
        raise op_error(op_name, f"expected a resource handle, got a {handle.dtype.name} tensor")
    return handle_data(handle)


def _check_value(op_name, handle, value, exact_shape=True):
    dtype, shape = _check_handle(op_name, handle)
    if value.dtype is not dtype:
        raise op_error(op_name, f"Trying to assign a {value.dtype.name} value to a variable of "
                                f"dtype {dtype.name}", [value])
    if exact_shape and not shape.is_compatible_with(value.shape):
        raise op_error(op_name, f"Shape mismatch: the variable's shape {shape} and the value's "
                                f"shape {value.shape} are incompatible")
    return dtype, shape


def _no_outputs(*inputs, **attrs):
    return ()


# -----------------------------------------------------------------------------------------------
# Read
# -----------------------------------------------------------------------------------------------

def _read_kernel(xp, handle):
    storage = handle.storage_or_uninitialized("ReadVariableOp")
    lock = storage.lock
    try:  # safe against Ctrl-C, and cheaper than `with` (see `apply_update`)
        lock.acquire()
    except BaseException:
        if lock._is_owned():
            lock.release()
        raise
    try:
        value = storage.value
        if storage.copy_on_read:
            value = value.copy()
    finally:
        lock.release()
    return value


def _read_infer(handle):
    dtype, shape = _check_handle("ReadVariableOp", handle)
    return TensorSpec(shape, dtype)


READ = register_op("ReadVariableOp", _read_kernel, _read_infer, resource_reads=(0,),
                   dtypes=frozenset({_dt.resource}))


@READ.def_gradient
def _read_grad(forward, dy):
    return dy  # flows to the handle: the gradient with respect to the variable


# -----------------------------------------------------------------------------------------------
# Writes
# -----------------------------------------------------------------------------------------------

def _assign_kernel(xp, handle, value, validate_shape=True):
    storage = handle.resource("AssignVariableOp")
    value = xp.asarray(value)
    # Both must ask for the check: the variable (created with validate_shape) and the assign
    # (TensorFlow's Python passes validate_shape=False when the variable's shape is not fully
    # defined: `Variable(x, shape=TensorShape(None))` takes values of any shape).
    if (validate_shape and storage.validate_shape and storage.value is not None
            and value.shape != storage.value.shape):
        raise op_error("AssignVariableOp", f"Shape mismatch: the variable's shape "
                                           f"{TensorShape(storage.value.shape)} and the value's "
                                           f"shape {TensorShape(value.shape)} are incompatible")
    with storage.lock:
        current = storage.value
        if current is not None and current.shape == value.shape and unshared(storage):
            current[...] = value  # in place: nobody else can see the old value
        else:
            storage.value = value.copy()
        storage.version += 1
    return ()


def _assign_infer(handle, value, validate_shape=True):
    _check_value("AssignVariableOp", handle, value, exact_shape=validate_shape)
    return ()


ASSIGN = register_op("AssignVariableOp", _assign_kernel, _assign_infer, resource_writes=(0,),
                     num_outputs=0, differentiable=False)


def _debug_shape(shape):
    """A shape as TensorFlow's `TensorShape::DebugString` writes it: `[2,3]`, `[]`, `[?,3]`."""
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def _check_update_shape(op_name, var_shape, delta_shape):
    """The update ops' shape rule, TensorFlow's: the value has exactly the variable's shape (no
    broadcasting, not even of a scalar). Raised by the kernel, and by inference wherever the
    shapes already disagree before the kernel runs (`None` dimensions match anything there)."""
    raise op_error(op_name, f"Cannot update variable with shape {_debug_shape(var_shape)} "
                            f"using a Tensor with shape {_debug_shape(delta_shape)}, shapes "
                            f"must be equal.")


def apply_update(storage, xp, ufunc, delta, op_name):
    """`storage.value = ufunc(storage.value, delta)` atomically: in place when unshared, else
    copy-on-write. Shared by the kernel and by Variable's fast path (which already holds the
    storage and passes numpy's ufunc). An overflow gives inf, as in TensorFlow, whatever the
    user's warning filters (`eager.base.ieee`): never a half-applied or repeated update. Hot
    path.

    How the hot paths take a storage's lock. A `KeyboardInterrupt` (Ctrl-C) reaches the main
    thread where CPython (3.10+) next checks for signals: after a call returns, on a loop's
    back edge, at a function's entry (bpo-29988). `lock.acquire()` followed by `try:` leaves
    the lock held when one lands as `acquire()` returns. `with lock:` is safe (`BEFORE_WITH`
    acquires, and the block's handler is in force from the next instruction, with no check
    between) but costs about 45 ns more than this form, which a small update cannot spare: the
    acquire sits in a `try` of its own, whose handler releases the lock if it was taken. Only
    an RLock can say so (`_is_owned`): an acquire that a signal interrupts while it blocks
    raises without taking the lock, and one that already owned it never blocks, so never
    raises before taking it. On the normal path the extra `try` costs nothing (3.11's
    exception tables)."""
    lock = storage.lock
    try:
        lock.acquire()
    except BaseException:
        if lock._is_owned():
            lock.release()
        raise
    try:
        current = storage.value
        if current.shape != delta.shape:
            _check_update_shape(op_name, current.shape, delta.shape)
        if _getrefcount(storage.value) <= UNSHARED_REFS:  # unshared(storage), inlined
            try:
                ufunc(current, delta, current)  # positional out: cheaper than the keyword
            except FP_SIGNALS:  # after writing all of `current`: the IEEE result stands
                pass
        else:  # asarray: numpy returns scalars for 0-d results; storage keeps arrays
            try:
                updated = ufunc(current, delta)
            except FP_SIGNALS:  # nothing written yet: the IEEE result, computed quietly
                updated = quietly(ufunc, current, delta)
            storage.value = xp.asarray(updated)
        storage.version += 1
    finally:
        lock.release()


def _update_kernel(op_name, ufunc_name):
    def kernel(xp, handle, delta):
        apply_update(handle.storage_or_uninitialized(op_name), xp, getattr(xp, ufunc_name),
                     delta, op_name)
        return ()
    kernel.numpy_ufunc = getattr(np, ufunc_name)
    return kernel


def _update_infer(op_name):
    def infer(handle, delta):
        _, shape = _check_value(op_name, handle, delta, exact_shape=False)
        # The kernel's shape rule, decided before it runs as far as the shapes are known
        # (TensorFlow's shape function merges the two): the error is then immediate where
        # kernels run later (asynchronous dispatch, the simulated GPU) and at trace time.
        if not shape.is_compatible_with(delta.shape):
            _check_update_shape(op_name, shape, delta.shape)
        return ()
    return infer


ASSIGN_ADD = register_op("AssignAddVariableOp",
                         _update_kernel("AssignAddVariableOp", "add"),
                         _update_infer("AssignAddVariableOp"), resource_writes=(0,),
                         num_outputs=0, differentiable=False)
ASSIGN_SUB = register_op("AssignSubVariableOp",
                         _update_kernel("AssignSubVariableOp", "subtract"),
                         _update_infer("AssignSubVariableOp"), resource_writes=(0,),
                         num_outputs=0, differentiable=False)


# -----------------------------------------------------------------------------------------------
# Sparse access: gather and scatter (switch the variable to copy-on-read)
# -----------------------------------------------------------------------------------------------

def _check_indices(op_name, indices, n, xp=None):
    """Every index in [0, n), else TensorFlow's error: at once on numpy (two reductions);
    given the `xp` of a device (a kernel that writes only its output), the check stays there
    (`device_checks.require`). A kernel writing a variable calls `checked_rows` instead."""
    if not indices.size:
        return
    if xp is not None and xp is not np:
        device_checks.require(xp, ((indices < 0) | (indices >= n)).any(),
                              lambda: _index_error(op_name, indices, n))
        return
    if indices.min() < 0 or indices.max() >= n:
        raise _index_error(op_name, indices, n)


def checked_rows(op_name, xp, indices, n):
    """`(rows, bad)` for a kernel about to write rows `indices` of a variable of `n` rows.

    On the host (numpy, or no index at all) the check runs at once, raising TensorFlow's
    error, and gives `(indices, None)`. On a device, reading the answer would make the host
    wait for everything queued there, once per step of a model with an embedding. So the check
    stays on the device (`device_checks.require`: TensorFlow's CPU error at the next
    synchronization), and the kernel gets `indices` moved into [0, n) (so no write lands
    outside the variable) with `bad`, a 0-d device flag, true when some index was out of
    range, on which it gates its whole write (`keep_where`, `neutral_addend`): a bad index
    never half-applies an update, on a device either."""
    if xp is np or not indices.size:
        _check_indices(op_name, indices, n)
        return indices, None
    if n == 0:  # every index is out of range: no need to ask the device
        raise _index_error(op_name, indices, n)
    fused = index_rows(xp, indices, n) if hasattr(xp, "ElementwiseKernel") else None
    if fused is None:
        rows, bad = indices % n, ((indices < 0) | (indices >= n)).any()
    else:  # CuPy: one launch for the rows and the per-index flags
        rows, bad = fused[0], fused[1].any()
    device_checks.require(xp, bad, lambda: _index_error(op_name, indices, n))
    return rows, bad


def keep_where(xp, bad, arrays, update):
    """Runs `update()`, which changes `arrays` in place, then restores them all where `bad`
    (a 0-d device flag from `checked_rows`) is true: the gate of a multi-step update with no
    fused kernel. With `bad` None (checked on the host already) it only runs `update()`."""
    if bad is None:
        update()
        return
    kept = [a.copy() for a in arrays]
    update()
    for array, old in zip(arrays, kept):
        xp.copyto(array, old, where=bad)


def neutral_addend(xp, bad, rows):
    """`rows`, or where `bad` (a 0-d device flag) is true, zeros that leave every value they are
    added to unchanged, bit for bit: -0 for floats (x + -0.0 is x, -0.0 included; +0.0 would
    turn -0.0 into +0.0), -0-0j for complex numbers, 0 for integers."""
    return xp.where(bad, xp.negative(xp.zeros((), rows.dtype)), rows)


def _index_error(op_name, indices, n):
    """TensorFlow's message, naming the first bad index and where it is ("indices[1] = 7 is
    not in [0, 3)")."""
    flat_indices = indices.reshape(-1)
    flat = int(((flat_indices < 0) | (flat_indices >= n)).argmax())
    return op_error(op_name, f"indices{index_position(indices.shape, flat)} = "
                             f"{int(flat_indices[flat])} is not in [0, {n})")


def _gather_kernel(xp, handle, indices):
    storage = handle.storage_or_uninitialized("ResourceGather")
    with storage.lock:
        storage.copy_on_read = True
        value = storage.value
        _check_indices("ResourceGather", indices, value.shape[0], xp)
        return xp.take(value, indices, axis=0)


def _gather_infer(handle, indices):
    dtype, shape = _check_handle("ResourceGather", handle)
    if indices.dtype is not _dt.int32 and indices.dtype is not _dt.int64:
        raise op_error("ResourceGather", f"indices dtype {indices.dtype.name} is not in the list "
                                         "of allowed values: int32, int64; cast with eager.cast "
                                         "first")
    if shape.rank == 0:
        raise op_error("ResourceGather", "cannot gather from a scalar variable")
    return TensorSpec(indices.shape.concatenate(shape[1:]), dtype)


GATHER = register_op("ResourceGather", _gather_kernel, _gather_infer, resource_reads=(0,))


@GATHER.def_gradient(keep_inputs=True)  # the handle (no data) and the indices
def _gather_grad(forward, dy):
    handle, indices = forward.inputs
    return IndexedSlices(dy, indices, dense_shape_tensor(handle_data(handle)[1])), None


def _scatter_kernel(op_name, add):
    def kernel(xp, handle, indices, updates):
        storage = handle.storage_or_uninitialized(op_name)
        with storage.lock:
            storage.copy_on_read = True
            current = storage.value
            expected = tuple(indices.shape) + tuple(current.shape[1:])
            if tuple(updates.shape) != expected and updates.ndim != 0:
                raise op_error(op_name, f"updates must have shape {list(expected)}, got "
                                        f"{list(updates.shape)}")
            indices, bad = checked_rows(op_name, xp, indices, current.shape[0])
            if not unshared(storage):
                current = storage.value = current.copy()
            if add:
                flat = indices.reshape(-1)
                upd = xp.broadcast_to(updates, expected).reshape((flat.size,) + current.shape[1:])
                if bad is not None:
                    upd = neutral_addend(xp, bad, upd)
                scatter_add(xp, current, flat, upd)
            else:
                if bad is not None:  # a bad index: each row written back as it was
                    updates = xp.where(bad, current[indices], updates)
                current[indices] = updates
            storage.version += 1
        return ()
    return kernel


def _scatter_infer(op_name):
    def infer(handle, indices, updates):
        dtype, shape = _check_handle(op_name, handle)
        if updates.dtype is not dtype:
            raise op_error(op_name, f"updates must be {dtype.name}, got {updates.dtype.name}")
        if not indices.dtype.is_integer:
            raise op_error(op_name, f"indices must be integers, got {indices.dtype.name}")
        return ()
    return infer


SCATTER_UPDATE = register_op("ResourceScatterUpdate",
                             _scatter_kernel("ResourceScatterUpdate", False),
                             _scatter_infer("ResourceScatterUpdate"), resource_writes=(0,),
                             num_outputs=0, differentiable=False)
SCATTER_ADD = register_op("ResourceScatterAdd", _scatter_kernel("ResourceScatterAdd", True),
                          _scatter_infer("ResourceScatterAdd"), resource_writes=(0,),
                          num_outputs=0, differentiable=False)


# -----------------------------------------------------------------------------------------------
# Status and destruction
# -----------------------------------------------------------------------------------------------

def _is_initialized_kernel(xp, handle):
    found = handle.device.resources.lookup(handle.uid)
    # xp: the result lives on the resource's device (a numpy array there would be a host array
    # inside a GPU tensor, which cupy ops reject).
    return xp.asarray(found is not None and found.value is not None)


IS_INITIALIZED = register_op("VarIsInitializedOp", _is_initialized_kernel,
                             lambda handle: TensorSpec([], _dt.bool), resource_reads=(0,),
                             differentiable=False, device_types=frozenset({"CPU", "GPU"}))


def _destroy_kernel(xp, handle, ignore_lookup_error=True):
    if not handle.device.resources.destroy(handle.uid) and not ignore_lookup_error:
        raise op_error("DestroyResourceOp", f"Resource {handle.name} (id {handle.uid}) does not "
                                            "exist.", cls=InvalidArgumentError)
    return ()


DESTROY = register_op("DestroyResourceOp", _destroy_kernel, _no_outputs, resource_writes=(0,),
                      num_outputs=0, differentiable=False)

