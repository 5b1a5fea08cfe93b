"""`map_fn`, `scan`, `foldl`, `foldr`: a Python function applied along the leading axis.

Each is one `while_loop` over TensorArrays, as TensorFlow builds them: the elements are
unstacked into TensorArrays, the body reads element i, calls `fn`, and writes its result (or
carries the accumulator); the results are stacked after the loop. Eagerly that loop is a
Python loop over ordinary ops (gradient tapes see every op); traced, it is one `While` op whose
body is `fn`'s graph, differentiated by the loop's gradient. Nested structures of tensors are
accepted for the elements, the initializer and the results, as in TensorFlow.
"""

from __future__ import annotations

from ..base import dtypes as _dt
from ..base import nest
from ..control_flow.api import while_loop
from ..core.specs import TensorSpec
from ..core.tensor_conversion import convert_to_tensor
from ..ops import math_ops as m
from ..ops.array_ops import shape as _shape
from ..ops.tensor_array import TensorArray

__all__ = ["map_fn", "scan", "foldl", "foldr"]


def _check_callable(fn):
    if not callable(fn):
        raise TypeError(f"The provided function {getattr(fn, '__name__', fn)!r} is not "
                        f"callable. fn must be callable.")


def _unstacked(elems):
    """(flat elements as tensors, their length n: an int or a scalar tensor)."""
    flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
    if not flat:
        raise ValueError("elems must be a Tensor or (possibly nested) sequence of Tensors. "
                         "Got an empty structure.")
    for e in flat:
        if e.shape.rank == 0:
            raise ValueError("Elements in elems must be 1+ dimensional Tensors, not scalars")
    sizes = {e.shape[0] for e in flat if e.shape.rank is not None and e.shape[0] is not None}
    if len(sizes) > 1:
        raise ValueError(f"All elements in elems must have the same size in the first "
                         f"dimension, got {[tuple(e.shape) for e in flat]}.")
    n = sizes.pop() if sizes else _shape(flat[0], out_type=_dt.int32)[0]
    return flat, n


def _arrays_of(flat, n):
    return [TensorArray(e.dtype, size=n, element_shape=e.shape[1:] if e.shape.rank else None,
                        infer_shape=True).unstack(e) for e in flat]


def _spec(signature):
    if isinstance(signature, TensorSpec):
        return signature
    return TensorSpec(None, _dt.as_dtype(signature))


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False,
           infer_shape=True, name=None, fn_output_signature=None):
    """≈ `tf.map_fn`: stacks `fn(x)` for each x unstacked from `elems` along axis 0 (a nested
    structure of tensors gives nested x). The results' structure and dtypes are
    `fn_output_signature` (dtypes or TensorSpecs; `dtype` is its old name), by default the
    structure and dtypes of `elems` (any shape: `fn` may return a scalar per row).
    `parallel_iterations`, `back_prop`, `swap_memory` are accepted and ignored."""
    del parallel_iterations, back_prop, swap_memory, name
    _check_callable(fn)
    if fn_output_signature is None:
        fn_output_signature = dtype
    flat, n = _unstacked(elems)
    if fn_output_signature is None:  # the elements' dtypes, not their shapes (TensorFlow's)
        signature = nest.pack_sequence_as(elems, [TensorSpec(None, e.dtype) for e in flat])
    else:
        signature = nest.map_structure(_spec, fn_output_signature)
    flat_sig = nest.flatten(signature)
    inputs = _arrays_of(flat, n)
    outputs = [TensorArray(s.dtype, size=n, infer_shape=infer_shape,
                           element_shape=s.shape if s.shape.rank is not None else None)
               for s in flat_sig]

    def body(i, *arrays):
        x = nest.pack_sequence_as(elems, [ta.read(i) for ta in inputs])
        values = nest.flatten(fn(x))
        if len(values) != len(flat_sig):
            raise ValueError(f"The structure of fn's result does not match fn_output_signature "
                             f"{signature}: got {len(values)} tensors, expected "
                             f"{len(flat_sig)}.")
        written = []
        for ta, v, s in zip(arrays, values, flat_sig):
            v = convert_to_tensor(v, dtype=s.dtype)
            written.append(ta.write(i, v))
        return (i + 1, *written)

    _, *arrays = while_loop(lambda i, *_: m.less(i, n), body,
                            (convert_to_tensor(0, dtype=_dt.int32), *outputs))
    return nest.pack_sequence_as(signature, [ta.stack() for ta in arrays])


def _fold(fn, elems, initializer, reverse, keep_all):
    """The shared loop of scan (keep_all: every accumulator, stacked) and foldl/foldr (the
    last one). Without an initializer the first element visited starts the accumulator."""
    _check_callable(fn)
    flat, n = _unstacked(elems)
    inputs = _arrays_of(flat, n)
    last = n - 1 if isinstance(n, int) else m.subtract(n, 1)

    def element(i):
        return nest.pack_sequence_as(elems, [ta.read(i) for ta in inputs])

    def position(k):  # the k-th element visited
        return m.subtract(last, k) if reverse else k

    if initializer is None:
        if isinstance(n, int) and n == 0:
            raise ValueError("elems must have at least one element when no initializer is "
                             "given.")
        acc_structure = elems
        acc = [convert_to_tensor(e)[last if reverse else 0] for e in flat]
        start = 1
    else:
        acc_structure = initializer
        acc = [convert_to_tensor(a) for a in nest.flatten(initializer)]
        start = 0
    outputs = [TensorArray(a.dtype, size=n, element_shape=a.shape) for a in acc] if keep_all \
        else []
    if keep_all and start == 1:
        outputs = [ta.write(position(0), a) for ta, a in zip(outputs, acc)]
    k_acc = len(acc)

    def body(k, *carried):
        a = nest.pack_sequence_as(acc_structure, list(carried[:k_acc]))
        i = position(k)
        new = nest.flatten(fn(a, element(i)))
        if len(new) != k_acc:
            raise ValueError(f"fn's result must have the accumulator's structure "
                             f"{acc_structure}: got {len(new)} tensors, expected {k_acc}.")
        new = [convert_to_tensor(v, dtype=old.dtype) for v, old in zip(new, carried[:k_acc])]
        arrays = [ta.write(i, v) for ta, v in zip(carried[k_acc:], new)]
        return (k + 1, *new, *arrays)

    _, *carried = while_loop(lambda k, *_: m.less(k, n), body,
                             (convert_to_tensor(start, dtype=_dt.int32), *acc, *outputs))
    if keep_all:
        return nest.pack_sequence_as(acc_structure, [ta.stack() for ta in carried[k_acc:]])
    return nest.pack_sequence_as(acc_structure, list(carried[:k_acc]))


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
         swap_memory=False, infer_shape=True, reverse=False, name=None):
    """≈ `tf.scan`: the accumulators a_i = fn(a_{i-1}, x_i) for each x_i along axis 0 of `elems`
    (from the end with `reverse`), stacked; a_0 is `initializer`, or without one the first
    element (which is then the first output)."""
    del parallel_iterations, back_prop, swap_memory, infer_shape, name
    return _fold(fn, elems, initializer, bool(reverse), keep_all=True)


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """≈ `tf.foldl`: fn(...fn(fn(initializer, x_0), x_1)..., x_n-1), the elements taken from
    the front (without an initializer the first element starts it)."""
    del parallel_iterations, back_prop, swap_memory, name
    return _fold(fn, elems, initializer, False, keep_all=False)


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """≈ `tf.foldr`: as `foldl` with the elements taken from the back."""
    del parallel_iterations, back_prop, swap_memory, name
    return _fold(fn, elems, initializer, True, keep_all=False)
