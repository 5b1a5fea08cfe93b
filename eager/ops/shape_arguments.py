"""Shape arguments known only when a traced function runs.

Ops here take their shapes as static attributes, known when the op is made, which is what
eager execution always has and what fast kernels want. Inside a traced function a shape may
depend on the arguments' values or on dimensions the input signature leaves as None
(`tf.zeros([tf.shape(x)[0], 3])`, `tf.reshape(x, [n, -1])`, `tf.range(n)`). TensorFlow then
passes the shape as a tensor input read when the op runs; so do Reshape, Fill, BroadcastTo and
Range here, with their static attribute set to None (the random ops do the same with their
`shape`). This module turns a shape argument into one form or the other, so that every op
gives the same answer for the same argument: static dims when they are known as the op is made
(`core.shapes.static_dims`, including sizes the trace determines), else one int32/int64 vector
tensor. A list holding symbolic scalars is stacked into one, as TensorFlow packs it.

It also holds the kernels' side: `read_dims` reads such a tensor's value as Python ints.

It sits below `creation_ops` and `array_ops` and never imports them: the ops it needs to build
a shape tensor (`Pack`, `Reshape`, `Cast`) are looked up in the op registry by name.
"""

from __future__ import annotations

from ..base import dtypes as _dt
from ..core.argument_conversion import as_tensor
from ..core.dispatch import execute
from ..core.registry import get_op, op_error
from ..core.shapes import HINTED, UnknownDimensionError, known_elements, static_dims
from ..tensor import Tensor

__all__ = ["shape_argument", "size_argument", "read_dims", "shape_elements", "SHAPE_DTYPES"]

#: The dtypes a shape tensor may have (TensorFlow's `Tshape`/`index_type` attrs).
SHAPE_DTYPES = frozenset({_dt.int32, _dt.int64})


def _holds_symbolic(value) -> bool:
    if isinstance(value, Tensor):
        return value.is_symbolic
    if isinstance(value, (list, tuple)):
        return any(_holds_symbolic(v) for v in value)
    return False


def shape_argument(op_name, value, what="shape", scalar_is_vector=False, conversion=HINTED):
    """`(dims, None)` with a tuple of ints when `value`'s sizes are known as the op is made,
    else `(None, tensor)`: a 1-D int32/int64 tensor of the sizes, for ops that read it when
    they run (module doc). `scalar_is_vector`: a scalar tensor counts as a one-element shape
    (TensorFlow's zeros and ones reshape it so). Errors are the static path's for anything
    without a symbolic tensor in it; `conversion` says how bools in a list read
    (`check_bools_in_dims`)."""
    try:
        return static_dims(op_name, value, what, conversion), None
    except UnknownDimensionError:
        if not _holds_symbolic(value):
            raise
    return None, _shape_tensor(op_name, value, what, scalar_is_vector)


def size_argument(op_name, value, dtype, what):
    """A scalar argument (range's start, limit or delta) known only when the function runs, as
    a scalar tensor of `dtype` (TensorFlow casts range's arguments to its dtype)."""
    t = as_tensor(value)
    if t.shape.rank not in (0, None):
        raise op_error(op_name, f"{what} must be a scalar, not shape {list(t.shape)}")
    if t.dtype is not dtype:
        t = execute(get_op("Cast"), (t,), {"dtype": dtype})
    return t


def _shape_tensor(op_name, value, what, scalar_is_vector):
    if isinstance(value, Tensor):
        t = value
        if t.dtype not in SHAPE_DTYPES:
            raise TypeError(f"{op_name}: {what} must be an int32 or int64 tensor, got "
                            f"{t.dtype.name}.")
    else:
        t = _packed(op_name, value, what)
    rank = t.shape.rank
    if rank == 0 and scalar_is_vector:
        return execute(get_op("Reshape"), (t,), {"shape": (1,)})
    if rank not in (1, None):
        raise op_error(op_name, f"{what} must be a vector, got shape "
                                f"{list(t.shape)}")
    return t


def _packed(op_name, values, what):
    """A list of ints and scalar int tensors as one vector (TensorFlow's auto-packing): int64
    if a tensor is int64, else int32; tensors of both dtypes are Pack's TypeError."""
    if not isinstance(values, (list, tuple)):
        raise TypeError(f"{op_name}: {what} must be a list of ints and integer scalars, got "
                        f"{values!r}.")
    tensors = [v for v in values if isinstance(v, Tensor)]
    dtypes = sorted({t.dtype.name for t in tensors})
    if len(dtypes) > 1 or dtypes[0] not in ("int32", "int64"):
        raise TypeError(f"Tensors in list passed to 'values' of 'Pack' Op have types "
                        f"[{', '.join(t.dtype.name for t in tensors)}] that don't all match "
                        f"(building {op_name}'s {what}).")
    dtype = tensors[0].dtype
    items = []
    for v in values:
        t = as_tensor(v, None if isinstance(v, Tensor) else dtype)
        if t.shape.rank not in (0, None):
            raise op_error(op_name, f"{what}: every size must be a scalar, got shape "
                                    f"{list(t.shape)}")
        items.append(t)
    return execute(get_op("Pack"), tuple(items), {"axis": 0})


def shape_elements(op_name, t, what="shape"):
    """What shape inference knows of the sizes that shape tensor `t` holds: a tuple with an
    int per size known as the op is made and None per size known only when it runs; None when
    not even their number is known. A tensor of another dtype or rank is the op's error."""
    if t.dtype not in SHAPE_DTYPES:
        raise op_error(op_name, f"{what} must be an int32 or int64 tensor, got {t.dtype.name}")
    if t.shape.rank not in (1, None):
        raise op_error(op_name, f"{what} must be a vector, got shape {list(t.shape)}")
    return known_elements(t)


def read_dims(op_name, array, what="shape") -> tuple:
    """The sizes a shape tensor holds, as Python ints, in a kernel (`array` is the device's:
    a numpy array, or a CuPy one, whose `tolist` copies to the host)."""
    if array.ndim != 1 or array.dtype.kind not in "iu":
        raise op_error(op_name, f"{what} must be an integer vector, got {array.dtype}"
                                f"{list(array.shape)}")
    return tuple(array.tolist())
