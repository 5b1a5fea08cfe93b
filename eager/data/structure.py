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
from ..core.composite import CompositeTensor, TypeSpec
from ..core.specs import TensorSpec
from ..core.tensor_conversion import convert_to_tensor
from ..devices import registry as _devices
from ..ops import ragged_tensor as _ragged
from ..ops import sparse_tensor as _sparse
from ..tensor import EagerTensor, Tensor, wrap_value

__all__ = ["DatasetSpec", "is_structure", "flatten", "pack", "map_structure", "normalize",
           "spec_of", "is_dataset", "set_dataset_type", "wrap_node", "host_array", "host_tensor",
           "cpu_device", "assert_same_structure", "compatible_spec", "batched_spec",
           "unbatched_spec", "describe_types", "flatten_components", "pack_components",
           "component_specs", "has_composites"]

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


# -- composites ------------------------------------------------------------------------------------
# A ragged or sparse tensor is one leaf of an element (batching, checkpoints and `element_spec`
# see it whole), but what crosses a traced function's boundary or a graph op is its component
# tensors: `flatten_components` lists them (a composite value or TypeSpec expands to its
# components, in its spec's order), `pack_components` rebuilds the composites from the spec.
def has_composites(spec) -> bool:
    """Whether `spec` (or an element) holds a composite tensor or TypeSpec."""
    return any(isinstance(x, (TypeSpec, CompositeTensor)) for x in flatten(spec))


def flatten_components(structure) -> list:
    """The leaves of `structure` with each composite value replaced by its component tensors
    and each composite TypeSpec by its component TensorSpecs."""
    out = []
    for leaf in flatten(structure):
        if isinstance(leaf, CompositeTensor):
            out.extend(leaf._type_spec.to_components(leaf))
        elif isinstance(leaf, TypeSpec):
            out.extend(leaf.component_specs)
        else:
            out.append(leaf)
    return out


def component_specs(spec) -> list:
    """The TensorSpecs of `spec`'s components (`flatten_components` of a spec)."""
    return flatten_components(spec)


def pack_components(spec, flat):
    """`spec`'s structure rebuilt from component tensors (`flatten_components`' order), each
    composite made by its TypeSpec's `from_components`."""
    leaves = flatten(spec)
    if not any(isinstance(s, TypeSpec) for s in leaves):
        return pack(spec, flat)
    values, i = [], 0
    for s in leaves:
        if isinstance(s, TypeSpec):
            n = len(s.component_specs)
            values.append(s.from_components(list(flat[i:i + n])))
            i += n
        else:
            values.append(flat[i])
            i += 1
    return pack(spec, values)


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
    if isinstance(value, CompositeTensor):
        spec = value._type_spec
        parts = spec.to_components(value)
        if keep_symbolic and any(isinstance(t, Tensor) and t.is_symbolic for t in parts):
            return value
        return spec.from_components([host_tensor(t) for t in parts])
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
    if isinstance(leaf, CompositeTensor):
        return leaf._type_spec
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
    if isinstance(x, TypeSpec) or isinstance(y, TypeSpec):
        return _compatible_composite(x, y)
    if x.dtype != y.dtype:
        raise TypeError("dtypes differ")
    return TensorSpec(x.shape.most_specific_compatible_shape(y.shape), x.dtype)


def _compatible_composite(x, y):
    """Two composite specs of one type, dtype and partitioning, with their shapes relaxed."""
    if type(x) is not type(y) or x._key()[1:] != y._key()[1:]:
        raise TypeError("composite types differ")
    if x == y:
        return x
    shape = x.shape.most_specific_compatible_shape(y.shape)
    if isinstance(x, _ragged.RaggedTensorSpec):
        return _ragged.RaggedTensorSpec(shape, x.dtype, x.ragged_rank, x.row_splits_dtype)
    return type(x)(shape, x.dtype)


def batched_spec(spec, batch_size):
    """The spec of a batch of `spec` elements (`batch_size` None: unknown). A ragged element's
    batch is ragged one level deeper; a sparse one's gains a leading dimension, as in
    TensorFlow."""
    def leaf(s):
        if isinstance(s, DatasetSpec):
            raise TypeError("Batching datasets is not supported: tf.data elements that are "
                            "datasets cannot be batched.")
        shape = TensorShape([batch_size]).concatenate(s.shape)
        if isinstance(s, _ragged.RaggedTensorSpec):
            return _ragged.RaggedTensorSpec(shape, s.dtype, s.ragged_rank + 1,
                                            s.row_splits_dtype)
        if isinstance(s, _sparse.SparseTensorSpec):
            return _sparse.SparseTensorSpec(shape, s.dtype)
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
