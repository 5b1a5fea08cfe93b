"""Element structures: what one element of a dataset is, and its type, `element_spec`.

An element is a tensor, a dataset (the elements of `window`), or a tuple, namedtuple or dict of
elements, as in TensorFlow's `tf.data`. Lists are not structure: a list given to a source is one
tensor (`from_tensor_slices([[1, 2], [3, 4]])` slices a 2x2 matrix), and a list returned by a
`map` function becomes a tuple. Flattening follows `tf.nest`: tuples in order, dicts by sorted
key; packing keeps each dict's own key order (so `element_spec` shows the keys as given).

Every element tensor lives on the host (`CPU:0`), as TensorFlow's input pipelines run on the CPU;
`prefetch_to_device` moves batches to a GPU at the end.
"""

from __future__ import annotations

import numpy as np

from ..base.tensor_shape import TensorShape, as_shape
from ..core.specs import TensorSpec
from ..core.tensor_conversion import convert_to_tensor
from ..devices import registry as _devices
from ..tensor import EagerTensor, Tensor, wrap_value

__all__ = ["DatasetSpec", "is_structure", "flatten", "pack", "map_structure", "normalize",
           "spec_of", "is_dataset", "set_dataset_type", "wrap_node", "host_array", "host_tensor",
           "cpu_device", "assert_same_structure", "compatible_spec", "batched_spec",
           "unbatched_spec", "describe_types"]

_dataset_type = None


def set_dataset_type(cls) -> None:
    """Installed by `eager.data.dataset` (a module above this one): the class whose instances are
    leaves of a structure, typed by a `DatasetSpec`."""
    global _dataset_type
    _dataset_type = cls


def is_dataset(value) -> bool:
    return _dataset_type is not None and isinstance(value, _dataset_type)


def wrap_node(node):
    """A `Dataset` over `node` (a window's or a group's elements, made below `Dataset`)."""
    return _dataset_type(node)


class DatasetSpec:
    """≈ `tf.data.DatasetSpec(element_spec, dataset_shape=())`: the type of an element that is
    itself a dataset (the windows `Dataset.window` makes)."""

    __slots__ = ("_element_spec", "_dataset_shape")

    def __init__(self, element_spec, dataset_shape=()):
        self._element_spec = element_spec
        self._dataset_shape = as_shape(dataset_shape)

    @property
    def element_spec(self):
        return self._element_spec

    @property
    def shape(self) -> TensorShape:
        return self._dataset_shape

    def __eq__(self, other):
        return (type(other) is DatasetSpec and self._element_spec == other._element_spec
                and self._dataset_shape == other._dataset_shape)

    def __hash__(self):
        return hash((DatasetSpec, repr(self._element_spec), self._dataset_shape))

    def __repr__(self):
        return f"DatasetSpec({self._element_spec!r}, {self._dataset_shape!r})"


# -- nesting ---------------------------------------------------------------------------------------
def is_structure(x) -> bool:
    """Whether `x` is a tuple (namedtuples included) or dict: structure, not a leaf."""
    return isinstance(x, (tuple, dict))


def flatten(structure) -> list:
    """The leaves of `structure` (tuples in order, dicts by sorted key)."""
    if structure.__class__ is tuple:
        if not any(is_structure(x) for x in structure):
            return list(structure)
    out = []
    _flatten_into(structure, out)
    return out


def _flatten_into(structure, out) -> None:
    if isinstance(structure, dict):
        for key in _sorted_keys(structure):
            _flatten_into(structure[key], out)
    elif isinstance(structure, tuple):
        for item in structure:
            _flatten_into(item, out)
    else:
        out.append(structure)


def _sorted_keys(d):
    try:
        return sorted(d)
    except TypeError:
        raise TypeError(f"tf.data only supports dicts with sortable keys, got keys {list(d)}."
                        ) from None


def pack(structure, flat):
    """`structure` rebuilt with the leaves `flat` (in `flatten`'s order)."""
    if structure.__class__ is tuple and len(flat) == len(structure):
        if not any(is_structure(x) for x in structure):
            return tuple(flat)
    packed, used = _pack(structure, flat, 0)
    if used != len(flat):
        raise ValueError(f"The structure has {used} components but {len(flat)} were given.")
    return packed


def _pack(structure, flat, i):
    if isinstance(structure, dict):
        items = {}
        for key in _sorted_keys(structure):
            items[key], i = _pack(structure[key], flat, i)
        return type(structure)((k, items[k]) for k in structure), i
    if isinstance(structure, tuple):
        items = []
        for item in structure:
            value, i = _pack(item, flat, i)
            items.append(value)
        if hasattr(type(structure), "_fields"):
            return type(structure)(*items), i
        return type(structure)(items), i
    if i >= len(flat):
        raise ValueError("The structure has more components than were given.")
    return flat[i], i + 1


def map_structure(fn, structure):
    return pack(structure, [fn(x) for x in flatten(structure)])


def assert_same_structure(a, b, what) -> None:
    """TypeError unless `a` and `b` nest alike (same container types, keys and lengths)."""
    if not _same(a, b):
        raise TypeError(f"{what}: the two structures don't have the same nested structure.\n\n"
                        f"First structure: {a!r}\n\nSecond structure: {b!r}")


def _same(a, b) -> bool:
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and set(a) == set(b)
                and all(_same(a[k], b[k]) for k in a))
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (type(a) is type(b) and len(a) == len(b)
                and all(_same(x, y) for x, y in zip(a, b)))
    return True


# -- values ----------------------------------------------------------------------------------------
def cpu_device():
    return _devices.lookup("CPU:0")


def host_array(tensor) -> np.ndarray:
    """The host array behind an eager tensor (copied off a GPU)."""
    if tensor.__class__ is EagerTensor and tensor._meta.device.inline:
        return tensor._value
    return np.asarray(tensor.numpy())


def host_tensor(value) -> EagerTensor:
    """`value` (a tensor, or anything `convert_to_tensor` takes) as a tensor on the host."""
    if not isinstance(value, Tensor):
        value = convert_to_tensor(value)
    if value.__class__ is EagerTensor and value._meta.device.inline:
        return value
    if value.is_symbolic:
        raise TypeError(f"tf.data needs an eager tensor here; got {value!r}, a symbolic tensor "
                        "(inside eager.function, only from_tensor_slices, from_tensors and "
                        "range take the function's symbolic tensors).")
    return wrap_value(host_array(value), cpu_device())


def normalize(value, what="element", keep_symbolic=False):
    """`value` as an element: tuples, namedtuples and dicts kept as structure, datasets kept, any
    other leaf (a list included) converted to a host tensor (with `keep_symbolic`, a symbolic
    tensor is kept as it is)."""
    if isinstance(value, dict):
        return type(value)((k, normalize(v, what, keep_symbolic)) for k, v in value.items())
    if isinstance(value, tuple):
        items = [normalize(v, what, keep_symbolic) for v in value]
        return type(value)(*items) if hasattr(type(value), "_fields") else tuple(items)
    if is_dataset(value):
        return value
    if value is None:
        raise TypeError(f"Failed to convert {what}: None is not a valid component of a "
                        "tf.data element.")
    if keep_symbolic and isinstance(value, Tensor) and value.is_symbolic:
        return value
    return host_tensor(value)


def spec_of(element):
    """The `element_spec` of an element: TensorSpecs and DatasetSpecs in its structure."""
    return map_structure(_leaf_spec, element)


def _leaf_spec(leaf):
    if is_dataset(leaf):
        return DatasetSpec(leaf.element_spec)
    return TensorSpec(leaf.shape, leaf.dtype)


# -- specs -----------------------------------------------------------------------------------------
def compatible_spec(a, b, what):
    """The most specific spec both `a` and `b` fit (dims that differ become None), or TensorFlow's
    TypeError for elements of different structures or dtypes."""
    try:
        assert_same_structure(a, b, what)
        flat = [_compatible_leaf(x, y) for x, y in zip(flatten(a), flatten(b))]
    except (TypeError, ValueError):
        raise TypeError(f"Incompatible dataset elements:\n  {a!r} vs.   {b!r}") from None
    return pack(a, flat)


def _compatible_leaf(x, y):
    if isinstance(x, DatasetSpec) or isinstance(y, DatasetSpec):
        if x != y:
            raise TypeError("datasets differ")
        return x
    if x.dtype != y.dtype:
        raise TypeError("dtypes differ")
    return TensorSpec(x.shape.most_specific_compatible_shape(y.shape), x.dtype)


def batched_spec(spec, batch_size):
    """The spec of a batch of `spec` elements (`batch_size` None: unknown)."""
    def leaf(s):
        if isinstance(s, DatasetSpec):
            raise TypeError("Batching datasets is not supported: tf.data elements that are "
                            "datasets cannot be batched.")
        return TensorSpec(TensorShape([batch_size]).concatenate(s.shape), s.dtype)
    return map_structure(leaf, spec)


def unbatched_spec(spec):
    """The spec of one row of a batch of `spec` (ValueError for a scalar component)."""
    def leaf(s):
        if s.shape.rank == 0:
            raise ValueError("Cannot unbatch an input with scalar components.")
        if s.shape.rank is None:
            return TensorSpec(TensorShape(None), s.dtype)
        return TensorSpec(s.shape[1:], s.dtype)
    return map_structure(leaf, spec)


def describe_types(spec) -> str:
    """The dtypes of a spec, TensorFlow's way ("(tf.int64, tf.float32)"), for messages."""
    return repr(map_structure(lambda s: f"tf.{s.dtype.name}" if hasattr(s, "dtype") else s, spec))
