"""Fused optimizer updates (≈ TensorFlow's ResourceApply* training ops).

One op updates a variable and its optimizer slots for one step. Fusing matters for two reasons:

* Atomicity. The op holds the locks of every storage it touches for the whole
  read-compute-write, so concurrent applies (two threads training one model) lose no update and
  never see a half-updated (variable, slot) pair. Locks are always acquired in resource-uid
  order, so two applies over overlapping sets of variables cannot deadlock.
* Memory. Each storage is updated in place when `resource_ops.unshared` says nobody else holds
  its array, and copied first otherwise (copy-on-write: a value someone read never changes under
  them). An SGD step on parameters whose forward-pass reads have been dropped therefore writes
  into the existing buffers and allocates no new variable memory. Kernels follow the storage
  rule of `resource_ops`: `unshared` is asked before the kernel takes its own reference.

An update reaching inf or nan stores it, as TensorFlow's kernels do, whatever the user's warning
filters or `np.seterr` say (`eager.base.ieee`): an update is never run twice and never left half
applied, so the several-step ones run under numpy's error state set to ignore and plain gradient
descent keeps what its in-place subtraction wrote.

The arithmetic is Keras 3's, operation for operation (`tf.keras.optimizers`, which
`tf.optimizers` is): momentum `m = m * momentum - g * lr`, Adam `m += (g - m) * (1 - beta1)`,
`v += (g * g - v) * (1 - beta2)`, `var -= m * alpha / (sqrt(v) + epsilon)` with
`alpha = lr * sqrt(1 - beta2_power) / (1 - beta1_power)`. Scalars are inputs of the variable's
dtype, as in TensorFlow, with one difference: the Adam ops take `1 - beta1` and `1 - beta2`
(computed by the caller in double precision) instead of TensorFlow's `beta1` and `beta2`.
Keras computes `1 - beta` in Python, and in float32 `1 - float32(0.999)` is 1.3e-5 (relatively)
away from `float32(1 - 0.999)`: taking beta would make every second moment differ from Keras'.

Sparse gradients (IndexedSlices: `values` at row `indices`) follow what Keras 3 computes, which
is not what TensorFlow's lazy sparse kernels compute:

* ResourceSparseApplyGradientDescent: only the indexed rows change (`var[i] -= lr * values`,
  duplicates accumulate), as Keras' `scatter_sub`.
* ResourceSparseApplyKerasMomentum, ResourceSparseApplyAdam(WithAmsgrad): every row's slots
  decay, as if the dense gradient (zero outside `indices`) had been given. This differs from
  TensorFlow's ResourceSparseApplyKerasMomentum, which touches only the indexed rows; Keras 3
  densifies. For Adam, the second moment receives the sum of the squared `values` of each row
  (Keras squares the slices before densifying), which differs from the square of the summed
  gradient only when `indices` repeat a row.
"""

from __future__ import annotations

import sys
import threading

import numpy as np

from ..base import dtypes as _dt
from ..base.ieee import FP_SIGNALS, quiet, quietly
from ..devices.resource_handles import eager_handle, handle_data
from ..base.tensor_shape import TensorShape
from ..core.registry import op_error, register_op
from .resource_ops import UNSHARED_REFS, checked_rows, keep_where, neutral_addend, unshared
from .cupy_kernels import update_kernel
from .scatter_add import scatter_add

_getrefcount = sys.getrefcount

__all__ = ["APPLY_GRADIENT_DESCENT", "APPLY_KERAS_MOMENTUM", "APPLY_ADAM",
           "APPLY_ADAM_WITH_AMSGRAD", "SPARSE_APPLY_GRADIENT_DESCENT",
           "SPARSE_APPLY_KERAS_MOMENTUM", "SPARSE_APPLY_ADAM", "SPARSE_APPLY_ADAM_WITH_AMSGRAD"]

_FLOATS = frozenset({_dt.float16, _dt.float32, _dt.float64})


# -----------------------------------------------------------------------------------------------
# Storage access: locks in uid order, copy-on-write
# -----------------------------------------------------------------------------------------------

def _writable(storage):
    """The storage's array, ready to be updated in place: the array itself when nobody else
    holds it, else a copy installed in the storage (copy-on-write). Call with the storage
    locked and no reference of the caller's own to its array: `unshared` is calibrated for
    exactly one local reference, the `current` taken here."""
    current = storage.value
    if unshared(storage):
        return current
    current = storage.value = current.copy()
    return current


def _storages(op_name, handles):
    """The live, initialized storages of `handles`, checked to be distinct and on one device."""
    device = handles[0].device
    for h in handles[1:]:
        if h.device is not device:
            raise op_error(op_name, f"all variables of one update must be on one device: "
                                    f"{handles[0].name} is on {device.name}, {h.name} on "
                                    f"{h.device.name}")
    if len({h.uid for h in handles}) != len(handles):
        raise op_error(op_name, "the same variable is passed twice (as the variable and a slot, "
                                "or as two slots)")
    return [h.storage_or_uninitialized(op_name) for h in handles]


def _shape(array) -> str:
    return str(list(array.shape))


def _check_grad(op_name, var_name, current, grad, dense=True):
    if grad.dtype != current.dtype:
        raise op_error(op_name, f"grad must be {current.dtype.name} (the dtype of var "
                                f"{var_name!r}), got {grad.dtype.name}")
    if dense and grad.shape != current.shape:
        raise op_error(op_name, f"var {var_name!r} and grad do not have the same shape: "
                                f"{_shape(current)} vs. {_shape(grad)}")


def _locked_update(op_name, handles, grad, update, dense=True, xp=None):
    """Runs `update(*writable_arrays)` with every storage of `handles` locked (in uid order),
    after checking the gradient's dtype (and, when `dense`, shape) and the slots' against the
    variable. Bumps every storage's version. With `xp` (a dense elementwise update), `update`
    also receives the gradient, `update(*writable_arrays, grad)`, and runs over blocks of all of
    them (`_in_blocks`)."""
    storages = _storages(op_name, handles)
    locks = [storages[i].lock for i in sorted(range(len(handles)), key=lambda i: handles[i].uid)]

    def locked():
        _check_grad(op_name, handles[0].name, storages[0].value, grad, dense)
        shape = storages[0].value.shape
        for h, s in zip(handles[1:], storages[1:]):
            if s.value.shape != shape or s.value.dtype != storages[0].value.dtype:
                raise op_error(op_name, f"slot {h.name} ({s.value.dtype.name}"
                                        f"{_shape(s.value)}) does not match the variable "
                                        f"{handles[0].name} ({storages[0].value.dtype.name}"
                                        f"{list(shape)})")
        arrays = [_writable(s) for s in storages]
        with quiet():  # several steps: inf/nan as TensorFlow, never half applied (base.ieee)
            if xp is None:
                update(*arrays)
            else:
                _in_blocks(xp, update, (*arrays, grad))
        for s in storages:
            s.version += 1

    _holding(locks, locked)
    return ()


def _holding(locks, run, first=0):
    """`run()` with `locks[first:]` held, taken in order by nested `with` statements: safe
    against a `KeyboardInterrupt` anywhere (see resource_ops.apply_update), as an `acquire()`
    loop followed by `try` is not, and as a loop releasing them in a `finally` is not either
    (its back edge is a place an interrupt lands). A fused update costs far more than `with`."""
    if first == len(locks):
        return run()
    with locks[first]:
        return _holding(locks, run, first + 1)


#: Dense CPU updates of more than `_BLOCKED_ABOVE` elements run `_BLOCK` at a time
#: (`_in_blocks`).
_BLOCK = 16384
_BLOCKED_ABOVE = 4 * _BLOCK


def _in_blocks(xp, update, arrays):
    """Runs the elementwise `update(*arrays)` over consecutive blocks of `_BLOCK` elements when
    the arrays are numpy's, large, and all C-contiguous (they have one shape); in one call
    otherwise.

    Why: numpy evaluates `var -= lr * grad` (or Adam's dozen operations) one pass at a time,
    each producing a temporary as large as the variable. A large temporary is a fresh mapping
    from the kernel (malloc hands out big blocks with mmap), so every step page-faults through
    it, and every pass streams the whole variable through the cache again. Block by block the
    temporaries are small heap blocks that are reused, and a block's passes run in cache;
    the result is the same, element for element, because every operation is elementwise.
    TensorFlow's C++ kernels get this from Eigen's fused expressions; CuPy gets it here from the
    fused kernels."""
    size = arrays[0].size
    if xp is not np or size <= _BLOCKED_ABOVE or not all(a.flags.c_contiguous for a in arrays):
        update(*arrays)
        return
    flat = [a.reshape(-1) for a in arrays]  # views: every array is contiguous
    for start in range(0, size, _BLOCK):
        stop = start + _BLOCK
        update(*[f[start:stop] for f in flat])


#: Largest temporary (in bytes) `_scratch_like` keeps per thread and dtype; larger updates run
#: in blocks instead.
_SCRATCH_MAX_BYTES = 32 << 20
_scratch = threading.local()


def _scratch_like(array):
    """A C-contiguous buffer of `array`'s shape and dtype, reused across calls on this thread
    (the one temporary of a large plain SGD update), or None above `_SCRATCH_MAX_BYTES` or for
    a non-contiguous array.

    Why, beside `_in_blocks`: a reused buffer never page-faults, whatever the process's heap
    history, and the update stays two ufunc calls instead of a Python loop over blocks (for a
    784x256 float32 variable: about 90 µs against 123 µs in blocks, measured)."""
    if array.nbytes > _SCRATCH_MAX_BYTES or not array.flags.c_contiguous:
        return None
    buffers = getattr(_scratch, "buffers", None)
    if buffers is None:
        buffers = _scratch.buffers = {}
    flat = buffers.get(array.dtype)
    if flat is None or flat.size < array.size:
        flat = buffers[array.dtype] = np.empty(array.size, array.dtype)
    return flat[:array.size].reshape(array.shape)


def _sparse_rows(op_name, xp, var_shape, values, indices):
    """`(flat, rows, bad)` of IndexedSlices for a variable of `var_shape`: the row indices
    flattened, the slices as one row each, and the device flag the update gates its write on
    (None on the host). Checks the shapes at once, and the indices as
    `resource_ops.checked_rows` does: at once on the host, on the device's flag on a GPU."""
    flat, rows = _flat_slices(op_name, var_shape, values, indices)
    flat, bad = checked_rows(op_name, xp, flat, var_shape[0])
    return flat, rows, bad


def _dense(xp, var_shape, dtype, flat, rows):
    """The dense gradient of slices `rows` at `flat` (from `_sparse_rows`), duplicate rows
    summed: for the kernels whose Keras 3 arithmetic is dense."""
    dense = xp.zeros(var_shape, dtype)
    scatter_add(xp, dense, flat, rows)
    return dense


def _skip_flag(xp, bad):
    """The fused sparse kernels' `skip` input: `bad`, or false where nothing was checked on
    the device (no index)."""
    return xp.zeros((), np.bool_) if bad is None else bad


def _flat_slices(op_name, var_shape, values, indices):
    if len(var_shape) == 0:
        raise op_error(op_name, "a sparse update needs a variable of rank >= 1, got a scalar")
    expected = tuple(indices.shape) + tuple(var_shape[1:])
    if tuple(values.shape) != expected:
        raise op_error(op_name, f"grad must have shape indices.shape + var.shape[1:] = "
                                f"{list(expected)}, got {_shape(values)}")
    flat = indices.reshape(-1)
    return flat, values.reshape((flat.size,) + tuple(var_shape[1:]))


# -----------------------------------------------------------------------------------------------
# The arithmetic (Keras 3's, operation for operation; see the module doc)
# -----------------------------------------------------------------------------------------------

def _momentum_math(xp, var, accum, scaled, momentum, use_nesterov):
    """`scaled` is grad * lr (for sparse gradients Keras scales the slices, then densifies)."""
    xp.multiply(accum, momentum, out=accum)
    xp.subtract(accum, scaled, out=accum)
    if use_nesterov:
        step = xp.multiply(accum, momentum, out=xp.empty_like(var))  # out=: arrays even at 0-d
        xp.subtract(step, scaled, out=step)
        xp.add(var, step, out=var)
    else:
        xp.add(var, accum, out=var)


def _adam_math(xp, var, m, v, vhat, beta1_power, beta2_power, lr, one_minus_beta1,
               one_minus_beta2, epsilon, grad, grad_sq=None):
    alpha = lr * xp.sqrt(1 - beta2_power) / (1 - beta1_power)
    tmp = xp.subtract(grad, m, out=xp.empty_like(var))  # out=: arrays even at rank 0
    xp.multiply(tmp, one_minus_beta1, out=tmp)
    xp.add(m, tmp, out=m)
    if grad_sq is None:
        xp.multiply(grad, grad, out=tmp)
        xp.subtract(tmp, v, out=tmp)
    else:
        xp.subtract(grad_sq, v, out=tmp)
    xp.multiply(tmp, one_minus_beta2, out=tmp)
    xp.add(v, tmp, out=v)
    if vhat is not None:
        xp.maximum(vhat, v, out=vhat)
        v = vhat
    xp.sqrt(v, out=tmp)
    xp.add(tmp, epsilon, out=tmp)
    step = xp.multiply(m, alpha, out=xp.empty_like(var))
    xp.divide(step, tmp, out=step)
    xp.subtract(var, step, out=var)


# -----------------------------------------------------------------------------------------------
# Kernels
# -----------------------------------------------------------------------------------------------

_GD = "ResourceApplyGradientDescent"
_SPARSE_GD = "ResourceSparseApplyGradientDescent"
_MOMENTUM = "ResourceApplyKerasMomentum"
_SPARSE_MOMENTUM = "ResourceSparseApplyKerasMomentum"
_ADAM = "ResourceApplyAdam"
_AMSGRAD = "ResourceApplyAdamWithAmsgrad"
_SPARSE_ADAM = "ResourceSparseApplyAdam"
_SPARSE_AMSGRAD = "ResourceSparseApplyAdamWithAmsgrad"


def _gd_kernel(xp, var, alpha, delta):
    """var -= alpha * delta. Hot path (an SGD step runs it once per variable): the storage
    lookup and `unshared` are inlined."""
    storage = var.device.resources.lookup(var.uid)
    if storage is None or storage.value is None:
        storage = var.storage_or_uninitialized(_GD)  # raises TensorFlow's error
    lock = storage.lock
    try:  # safe against Ctrl-C, and cheaper than `with` (see resource_ops.apply_update)
        lock.acquire()
    except BaseException:
        if lock._is_owned():
            lock.release()
        raise
    try:
        current = storage.value  # the one local reference `unshared` is calibrated for
        if current.shape != delta.shape or current.dtype != delta.dtype:
            _check_grad(_GD, var.name, current, delta)
        if _getrefcount(current) > UNSHARED_REFS:  # shared: copy-on-write
            current = storage.value = current.copy()
        if xp is np:
            scratch = None if current.size <= _BLOCKED_ABOVE else _scratch_like(current)
            if scratch is not None or current.size <= _BLOCKED_ABOVE:
                # Two passes (with `scratch`, no fresh temporary: see _scratch_like). An inf or
                # nan signalled by the user's warning filters or np.seterr (base.ieee): the
                # product has touched no state, so it is made again quietly; the subtraction
                # signals after writing all of `current`, whose IEEE result then stands.
                try:
                    scaled = np.multiply(delta, alpha, scratch)
                except FP_SIGNALS:
                    scaled = quietly(np.multiply, delta, alpha, scratch)
                try:
                    np.subtract(current, scaled, out=current)
                except FP_SIGNALS:
                    pass
            else:
                with quiet():  # block by block: never left half applied
                    _in_blocks(np, lambda c, d: np.subtract(c, np.multiply(d, alpha), out=c),
                               (current, delta))
        else:
            _fused_gradient_descent(xp, current.dtype)(alpha, delta, current)
        storage.version += 1
    finally:
        lock.release()
    return ()


def _fused_gradient_descent(xp, dtype):
    """On a GPU, `var -= alpha * delta` as one kernel launch instead of two (a multiply into a
    temporary, then the subtract): an SGD step runs it once per variable, and at training batch
    sizes a step's time on the GPU is mostly launches. (The fused sources live in
    `cupy_kernels.UPDATES`, compiled so that each operation rounds on its own, as the numpy
    arithmetic above does: the GPU's updates then equal the CPU's.)"""
    return update_kernel(xp, "gradient_descent", dtype)


def _fusable(xp, grad) -> bool:
    """Whether a momentum or Adam update runs as one of the GPU kernels of
    `cupy_kernels.UPDATES`: on CuPy, for float32 and float64 (float16 keeps CuPy's own ufuncs,
    which compute each step in float32). Plain gradient descent, one multiply and one subtract,
    is fused for every dtype."""
    return xp is not np and grad.dtype.kind == "f" and grad.dtype.itemsize >= 4


def _sparse_gd_kernel(xp, var, alpha, grad, indices):
    """var[indices] -= alpha * grad (duplicate indices accumulate); other rows untouched."""
    storage = var.storage_or_uninitialized(_SPARSE_GD)
    with storage.lock:
        _check_grad(_SPARSE_GD, var.name, storage.value, grad, dense=False)
        flat, rows, bad = _sparse_rows(_SPARSE_GD, xp, storage.value.shape, grad, indices)
        current = _writable(storage)
        with quiet():  # inf/nan as TensorFlow whatever the user's filters (base.ieee)
            scaled = xp.multiply(rows, alpha)
            if xp is np:
                np.subtract.at(current, flat, scaled)
            else:
                delta = -scaled
                if bad is not None:  # a bad index: nothing subtracted
                    delta = neutral_addend(xp, bad, delta)
                scatter_add(xp, current, flat, delta)
        storage.version += 1
    return ()


def _momentum_kernel(xp, var, accum, lr, grad, momentum, use_nesterov=False):
    if _fusable(xp, grad):  # a GPU: one kernel launch per variable
        fused = update_kernel(xp, "nesterov" if use_nesterov else "momentum", grad.dtype)
        return _locked_update(_MOMENTUM, (var, accum), grad,
                              lambda v, a: fused(grad, lr, momentum, v, a))
    return _locked_update(
        _MOMENTUM, (var, accum), grad,
        lambda v, a, g: _momentum_math(xp, v, a, xp.multiply(g, lr), momentum, use_nesterov),
        xp=xp)


def _sparse_momentum_kernel(xp, var, accum, lr, grad, indices, momentum, use_nesterov=False):
    def update(v, a):
        flat, rows, bad = _sparse_rows(_SPARSE_MOMENTUM, xp, v.shape, grad, indices)
        scaled = _dense(xp, v.shape, v.dtype, flat, rows * lr)
        if _fusable(xp, grad):  # a GPU: one launch, gated on the indices' check
            fused = update_kernel(xp, "sparse_nesterov" if use_nesterov else "sparse_momentum",
                                  grad.dtype)
            fused(scaled, momentum, _skip_flag(xp, bad), v, a)
            return
        keep_where(xp, bad, (v, a), lambda: _in_blocks(
            xp, lambda v, a, s: _momentum_math(xp, v, a, s, momentum, use_nesterov),
            (v, a, scaled)))
    return _locked_update(_SPARSE_MOMENTUM, (var, accum), grad, update, dense=False)


def _adam_kernel(xp, var, m, v, beta1_power, beta2_power, lr, one_minus_beta1,
                 one_minus_beta2, epsilon, grad):
    scalars = (beta1_power, beta2_power, lr, one_minus_beta1, one_minus_beta2, epsilon)
    if _fusable(xp, grad):  # a GPU: one kernel launch per variable instead of about a dozen
        return _locked_update(_ADAM, (var, m, v), grad,
                              lambda w, m_, v_: update_kernel(xp, "adam", grad.dtype)(
                                  grad, *scalars, w, m_, v_))
    return _locked_update(_ADAM, (var, m, v), grad,
                          lambda w, m_, v_, g: _adam_math(xp, w, m_, v_, None, *scalars, g),
                          xp=xp)


def _amsgrad_kernel(xp, var, m, v, vhat, beta1_power, beta2_power, lr, one_minus_beta1,
                    one_minus_beta2, epsilon, grad):
    scalars = (beta1_power, beta2_power, lr, one_minus_beta1, one_minus_beta2, epsilon)
    if _fusable(xp, grad):
        fused = update_kernel(xp, "amsgrad", grad.dtype)
        return _locked_update(_AMSGRAD, (var, m, v, vhat), grad,
                              lambda w, m_, v_, h: fused(grad, *scalars, w, m_, v_, h))
    return _locked_update(_AMSGRAD, (var, m, v, vhat), grad,
                          lambda w, m_, v_, h, g: _adam_math(xp, w, m_, v_, h, *scalars, g),
                          xp=xp)


def _sparse_adam_update(op_name, xp, grad, indices, scalars):
    def update(w, m_, v_, h=None):
        flat, rows, bad = _sparse_rows(op_name, xp, w.shape, grad, indices)
        dense = _dense(xp, w.shape, w.dtype, flat, rows)
        dense_sq = _dense(xp, w.shape, w.dtype, flat, rows * rows)
        arrays = (w, m_, v_) + (() if h is None else (h,))
        if _fusable(xp, grad):  # a GPU: one launch, gated on the indices' check
            fused = update_kernel(xp, "sparse_adam" if h is None else "sparse_amsgrad",
                                  grad.dtype)
            fused(dense, dense_sq, *scalars, _skip_flag(xp, bad), *arrays)
            return
        keep_where(xp, bad, arrays, lambda: _in_blocks(
            xp, lambda g, g2, w, m_, v_, h=None: _adam_math(xp, w, m_, v_, h, *scalars, g, g2),
            (dense, dense_sq) + arrays))
    return update


def _sparse_adam_kernel(xp, var, m, v, beta1_power, beta2_power, lr, one_minus_beta1,
                        one_minus_beta2, epsilon, grad, indices):
    scalars = (beta1_power, beta2_power, lr, one_minus_beta1, one_minus_beta2, epsilon)
    return _locked_update(_SPARSE_ADAM, (var, m, v), grad,
                          _sparse_adam_update(_SPARSE_ADAM, xp, grad, indices, scalars),
                          dense=False)


def _sparse_amsgrad_kernel(xp, var, m, v, vhat, beta1_power, beta2_power, lr, one_minus_beta1,
                           one_minus_beta2, epsilon, grad, indices):
    scalars = (beta1_power, beta2_power, lr, one_minus_beta1, one_minus_beta2, epsilon)
    return _locked_update(_SPARSE_AMSGRAD, (var, m, v, vhat), grad,
                          _sparse_adam_update(_SPARSE_AMSGRAD, xp, grad, indices, scalars),
                          dense=False)


# -----------------------------------------------------------------------------------------------
# Inference (types only; never touches data)
# -----------------------------------------------------------------------------------------------

def _handle_name(h, i):
    """The variable's name a handle tensor carries, as the kernel's errors name it (an eager
    handle's); for a traced handle, the input's position."""
    handle = eager_handle(h)
    return handle.name if handle is not None and handle.name else f"input {i}"


def _shape_text(shape) -> str:
    """A TensorShape as the kernel's errors write shapes ("[3, 2]"); "<unknown>" without rank."""
    shape = TensorShape(shape)
    return str(shape.as_list()) if shape.rank is not None else "<unknown>"


def _handle_key(h):
    """What tells two handle tensors apart at inference: an eager handle's resource id, else
    the tensor itself (a traced handle: two different tensors may still name one variable,
    which the kernel catches)."""
    handle = eager_handle(h)
    return ("uid", handle.uid) if handle is not None else ("tensor", id(h))


def _infer(op_name, n_handles, scalars, grad_at, indices_at=None):
    """An inference function for an op whose first `n_handles` inputs are the variable and its
    slots, whose inputs at `scalars` are rank-0 and whose input `grad_at` is the gradient
    (dense, or the slices' values when `indices_at` is given)."""
    def infer(*inputs, **attrs):
        dtype = shape = None
        for i in range(n_handles):
            h = inputs[i]
            if h.dtype is not _dt.resource:
                raise op_error(op_name, f"input {i} must be a resource handle, got a "
                                        f"{h.dtype.name} tensor")
            d, s = handle_data(h)
            if i == 0:
                dtype, shape = d, s
                if dtype not in _FLOATS:
                    raise op_error(op_name, f"var must be float16, float32 or float64, got "
                                            f"{dtype.name}")
            elif d is not dtype or not s.is_compatible_with(shape):
                raise op_error(op_name, f"slot {_handle_name(h, i)} ({d.name}{s.as_list()}) "
                                        f"does not match the variable "
                                        f"{_handle_name(inputs[0], 0)} "
                                        f"({dtype.name}{shape.as_list()})")
        if n_handles > 1 and len({_handle_key(inputs[i]) for i in range(n_handles)}) < n_handles:
            raise op_error(op_name, "the same variable is passed twice (as the variable and a "
                                    "slot, or as two slots)")
        for i in scalars:
            x = inputs[i]
            if x.dtype is not dtype:
                raise op_error(op_name, f"input {i} must be {dtype.name} (the variable's dtype), "
                                        f"got {x.dtype.name}")
            if x.shape.rank is not None and x.shape.rank != 0:
                raise op_error(op_name, f"input {i} must be a scalar, got shape {x.shape}")
        grad = inputs[grad_at]
        # Worded as the kernel's errors (`_check_grad`): a device that infers before it runs
        # the kernel (a simulated GPU, async dispatch) reports the same text.
        var_name = _handle_name(inputs[0], 0)
        if grad.dtype is not dtype:
            raise op_error(op_name, f"grad must be {dtype.name} (the dtype of var "
                                    f"{var_name!r}), got {grad.dtype.name}")
        if indices_at is None:
            if not shape.is_compatible_with(grad.shape):
                raise op_error(op_name, f"var {var_name!r} and grad do not have the same shape: "
                                        f"{_shape_text(shape)} vs. {_shape_text(grad.shape)}")
        else:
            indices = inputs[indices_at]
            if not indices.dtype.is_integer:
                raise op_error(op_name, f"indices must be integers, got {indices.dtype.name}")
            if shape.rank == 0:
                raise op_error(op_name, "a sparse update needs a variable of rank >= 1")
            if shape.rank is not None:
                expected = TensorShape(indices.shape).concatenate(shape[1:])
                if not expected.is_compatible_with(grad.shape):
                    raise op_error(op_name, f"grad must have shape indices.shape + "
                                            f"var.shape[1:] = {expected}, got {grad.shape}")
        return ()
    return infer


def _register(name, kernel, n_handles, scalars, grad_at, indices_at=None):
    return register_op(name, kernel, _infer(name, n_handles, scalars, grad_at, indices_at),
                       resource_writes=tuple(range(n_handles)), num_outputs=0,
                       differentiable=False, doc=kernel.__doc__ or "")


#: (var, alpha, delta): var -= alpha * delta.
APPLY_GRADIENT_DESCENT = _register(_GD, _gd_kernel, 1, (1,), 2)
#: (var, alpha, grad, indices): var[indices] -= alpha * grad.
SPARSE_APPLY_GRADIENT_DESCENT = _register(_SPARSE_GD, _sparse_gd_kernel, 1, (1,), 2, 3)
#: (var, accum, lr, grad, momentum; use_nesterov).
APPLY_KERAS_MOMENTUM = _register(_MOMENTUM, _momentum_kernel, 2, (2, 4), 3)
#: (var, accum, lr, grad, indices, momentum; use_nesterov): dense decay, see the module doc.
SPARSE_APPLY_KERAS_MOMENTUM = _register(_SPARSE_MOMENTUM, _sparse_momentum_kernel, 2, (2, 5),
                                        3, 4)
#: (var, m, v, beta1_power, beta2_power, lr, one_minus_beta1, one_minus_beta2, epsilon, grad).
APPLY_ADAM = _register(_ADAM, _adam_kernel, 3, (3, 4, 5, 6, 7, 8), 9)
#: (var, m, v, vhat, beta1_power, beta2_power, lr, one_minus_beta1, one_minus_beta2, epsilon,
#: grad).
APPLY_ADAM_WITH_AMSGRAD = _register(_AMSGRAD, _amsgrad_kernel, 4, (4, 5, 6, 7, 8, 9), 10)
#: ResourceApplyAdam's inputs plus indices; the grad input is the slices' values.
SPARSE_APPLY_ADAM = _register(_SPARSE_ADAM, _sparse_adam_kernel, 3, (3, 4, 5, 6, 7, 8), 9, 10)
#: ResourceApplyAdamWithAmsgrad's inputs plus indices.
SPARSE_APPLY_ADAM_WITH_AMSGRAD = _register(_SPARSE_AMSGRAD, _sparse_amsgrad_kernel, 4,
                                           (4, 5, 6, 7, 8, 9), 10, 11)


# The machinery the other training-op modules (`training_ops_adaptive`, `training_ops_options`,
# `training_ops_grouped`) share with this one, under the names they use.
locked_update = _locked_update
check_grad = _check_grad
holding = _holding
storages_of = _storages
handle_key = _handle_key
writable = _writable
in_blocks = _in_blocks
sparse_rows = _sparse_rows
densified = _dense
register_update = _register
