"""`eager.data.Dataset` ≈ `tf.data.Dataset`: the public class, one light object per pipeline
step.

A `Dataset` holds one `Node` (`node.py`): its sources and transformations are nodes in the
modules beside this one, and every method here builds a new node over this one's. Building a
dataset runs nothing but the tracing of its functions; iterating it (`iter`, `for`,
`as_numpy_iterator`, `reduce`) makes an iterator (`iterator.OwnedIterator`) that pulls
elements through the nodes' iterators. Inside an `eager.function`, iteration is a graph op
instead (`in_function.py`), so the function traces once and reads the data when it runs.
"""

from __future__ import annotations

import logging

import numpy as np

from ..autograph.api import converting_call
from ..base import dtypes as _dt
from ..base import errors as _errors
from ..base.rich_display import facts_card, structure_rows
from ..core.tensor_conversion import convert_to_tensor
from ..graph.tracing import get_default_graph
from ..ops import math_ops as _math
from ..ops.debug_ops import assert_that
from ..tensor import wrap_value
from . import batching, buffering, combining, files, functional, ordering, selection, sources
from . import windowing
from . import in_function, iterator_context, symbolic
from . import structure as _st
from .iterator import NumpyIterator, OwnedIterator
from .node import INFINITE, UNKNOWN, Node
from .options import Options
from .traced import StructuredFunction

__all__ = ["Dataset", "DatasetV2"]

_log = logging.getLogger("eager.data")


class _WithOptions(Node):
    tf_name = "_OptionsDataset"

    def __init__(self, node, options):
        self.inputs = (node,)
        self.options = options
        self.element_spec = node.element_spec

    def signature(self):
        return self.inputs[0].signature()

    def cardinality(self):
        return self.inputs[0].cardinality()

    def make_iterator(self):
        return self.inputs[0].make_iterator()


class Dataset:
    """≈ `tf.data.Dataset`: a pipeline of elements (see the module doc)."""

    __slots__ = ("_node", "__weakref__")

    def __init__(self, node):
        if not isinstance(node, Node):
            raise TypeError("Dataset is built by its static methods (Dataset.from_tensor_slices, "
                            "Dataset.range, ...), not called directly.")
        self._node = node

    # -- what it is ------------------------------------------------------------------------------
    @property
    def element_spec(self):
        """The type of one element: a nested structure of `TensorSpec` (and `DatasetSpec`)."""
        return self._node.element_spec

    def cardinality(self):
        """The number of elements as an int64 scalar tensor, or `INFINITE_CARDINALITY` (-1) or
        `UNKNOWN_CARDINALITY` (-2)."""
        return _int64(self._node.cardinality())

    def __len__(self):
        n = self._node.cardinality()
        if n == INFINITE:
            raise TypeError("The dataset is infinite.")
        if n == UNKNOWN:
            raise TypeError("The dataset length is unknown.")
        return n

    def __bool__(self):
        return True  # a dataset is never "empty" as a condition (it defines __len__)

    def __repr__(self):
        return f"<{self._node.tf_name} element_spec={self.element_spec!r}>"

    def _repr_html_(self):
        """A notebook's display: the dataset's kind, its cardinality and its `element_spec`, one
        row per component. Nothing is iterated."""
        n = self._node.cardinality()
        cardinality = "infinite" if n == INFINITE else "unknown" if n == UNKNOWN else f"{n:,}"
        facts = [("cardinality", cardinality), *structure_rows(self.element_spec, "element")]
        return facts_card(self._node.tf_name, facts)

    def options(self):
        """The options set on this pipeline (`with_options`), merged, later ones winning."""
        return iterator_context.merged_options(self._node)

    def with_options(self, options, name=None):
        """The pipeline with `options` applied to all of it (`iterator_context` says what they
        change); a field set here replaces the value set upstream, with TensorFlow's warning."""
        if not isinstance(options, Options):
            raise TypeError(f"Expected `tf.data.Options` but got {type(options)}.")
        for field, old, new in iterator_context.merged_options(self._node).changes(options):
            _log.warning("Changing the value of option %s from %r to %r.", field, old, new)
        return Dataset(_WithOptions(self._node, options))

    # -- iterating -------------------------------------------------------------------------------
    def __iter__(self):
        """An iterator over the elements: eagerly an `OwnedIterator`; while an `eager.function`
        is traced, one whose `next` is a graph op."""
        if get_default_graph() is not None:
            return in_function.GraphIterator(self._node)
        return OwnedIterator(self._node)

    def __eager_for_loop__(self, loop):
        """AutoGraph's hook for `for element in dataset:` (see `in_function.dataset_for_loop`)."""
        in_function.dataset_for_loop(self._node, loop)

    def as_numpy_iterator(self):
        """An iterator over the elements as numpy values (`NumpyIterator`)."""
        for s in _st.flatten(self.element_spec):
            if isinstance(s, _st.DatasetSpec):
                raise TypeError(f"Dataset.as_numpy_iterator() is not supported for datasets that "
                                f"produce values of type {type(s)}")
        return NumpyIterator(self._node)

    def get_single_element(self, name=None):
        it = OwnedIterator(self._node)
        try:
            element = next(it)
        except StopIteration:
            raise _errors.InvalidArgumentError(
                None, "DatasetToSingleElement", "Dataset was empty. [Op:DatasetToSingleElement]"
            ) from None
        try:
            next(it)
        except StopIteration:
            return element
        raise _errors.InvalidArgumentError(
            None, "DatasetToSingleElement", "Dataset had more than one element. "
                                            "[Op:DatasetToSingleElement]")

    def reduce(self, initial_state, reduce_func, name=None):
        """`reduce_func(state, element) -> state` over every element, traced once with the
        state's spec; returns the final state."""
        initial = _st.normalize(initial_state, "initial_state")
        state_spec = _st.spec_of(initial)
        converted = converting_call(reduce_func)
        function = StructuredFunction(lambda s, e: _call_with_state(converted, s, e),
                                      (state_spec, self.element_spec), "reduce",
                                      autograph=False, user_function=reduce_func)
        new_spec = function.output_spec
        _check_state(state_spec, new_spec, "reduce")
        if get_default_graph() is not None:
            return in_function.graph_reduce(self._node, initial, function)
        state = initial
        for element in OwnedIterator(self._node):
            state = function((state, element))
        return state

    # -- sources ---------------------------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors, name=None):
        return Dataset(symbolic.symbolic_slices(tensors) or sources.TensorSlices(tensors))

    @staticmethod
    def from_tensors(tensors, name=None):
        return Dataset(symbolic.symbolic_tensors(tensors) or sources.Tensors(tensors))

    @staticmethod
    def range(*args, output_type=_dt.int64, name=None):  # noqa: A003 - TensorFlow's name
        return Dataset(symbolic.symbolic_range(args, output_type)
                       or sources.Range(args, output_type))

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None,
                       output_signature=None, name=None):
        signature = sources.generator_signature(output_types, output_shapes, output_signature)
        args = () if args is None else tuple(_generator_argument(a) for a in args)
        return Dataset(sources.Generator(generator, signature, args))

    @staticmethod
    def zip(*args, datasets=None, name=None):
        if datasets is not None and args:
            raise TypeError("Both `*args` and `datasets` cannot be set.")
        if datasets is None:
            if not args:
                raise TypeError("Must pass at least one dataset to `zip`.")
            datasets = args[0] if len(args) == 1 else tuple(args)
        if _st.is_dataset(datasets):
            return datasets
        return Dataset(combining.Zip(datasets))

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None, name=None):
        """The files matching a glob pattern (or patterns), sorted, then shuffled unless
        `shuffle=False` (a buffer of every name, reshuffled each iteration; `seed` makes it
        reproducible). No match is TensorFlow's InvalidArgumentError."""
        matches = files.matched_files(file_pattern)
        dataset = Dataset(sources.TensorSlices(matches))
        if shuffle is None or shuffle:
            dataset = dataset.shuffle(int(matches.shape[0]), seed=seed)
        return dataset

    @staticmethod
    def counter(start=0, step=1, dtype=_dt.int64, name=None):
        return Dataset(sources.Counter(start, step, dtype))

    @staticmethod
    def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
        spec = getattr(choice_dataset, "element_spec", None)
        if not (_st.is_dataset(choice_dataset) and hasattr(spec, "dtype")
                and spec.dtype == _dt.int64 and spec.shape.rank == 0):
            raise TypeError(f"Invalid `choice_dataset`. Elements of `choice_dataset` must be "
                            f"scalar of `tf.int64` dtype, but got {spec!r}.")
        return Dataset(combining.DirectedInterleave(datasets, choice_dataset._node, None, 0,
                                                    bool(stop_on_empty_dataset)))

    @staticmethod
    def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False,
                             rerandomize_each_iteration=None):
        datasets = list(datasets)
        if weights is None:
            weights = [1.0 / len(datasets)] * len(datasets) if datasets else []
        weights = [float(w) for w in np.asarray(getattr(weights, "numpy", lambda: weights)())]
        if len(weights) != len(datasets):
            raise ValueError(f"Invalid `weights`. The shape of `weights` should be compatible "
                             f"with `[len(datasets)]` but is {[len(weights)]}.")
        return Dataset(combining.DirectedInterleave(datasets, None, weights,
                                                    ordering.shuffle_seed(seed),
                                                    bool(stop_on_empty_dataset)))

    def concatenate(self, dataset, name=None):
        return Dataset(combining.Concatenate(self._node, dataset._node))

    # -- transformations -------------------------------------------------------------------------
    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):  # noqa: A003
        return Dataset(functional.Map(self._node, map_func, num_parallel_calls, deterministic))

    def filter(self, predicate, name=None):  # noqa: A003 - TensorFlow's name
        return Dataset(selection.Filter(self._node, predicate))

    def take_while(self, predicate, name=None):
        return Dataset(selection.TakeWhile(self._node, predicate))

    def unique(self, name=None):
        return Dataset(selection.Unique(self._node))

    def flat_map(self, map_func, name=None):
        spec = _inner_spec(self, map_func, "flat_map")
        return Dataset(functional.FlatMap(self._node, map_func, spec))

    def interleave(self, map_func, cycle_length=None, block_length=None,
                   num_parallel_calls=None, deterministic=None, name=None):
        spec = _inner_spec(self, map_func, "interleave")
        return Dataset(functional.Interleave(self._node, map_func, spec, cycle_length,
                                             block_length, num_parallel_calls, deterministic))

    def scan(self, initial_state, scan_func, name=None):
        return Dataset(functional.Scan(self._node, initial_state, scan_func))

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None,
              deterministic=None, name=None):
        node = self._node
        batch_size = _integer(batch_size, "batch", "batch_size")
        if isinstance(node, sources.TensorSlices) and node.fusable and num_parallel_calls is None:
            return Dataset(node.batched(batching.check_batch_size(batch_size),
                                        bool(drop_remainder)))
        return Dataset(batching.Batch(node, batch_size, drop_remainder, num_parallel_calls,
                                      deterministic))

    def ragged_batch(self, batch_size, drop_remainder=False, row_splits_dtype=_dt.int64,
                     name=None):
        """≈ `tf.data.Dataset.ragged_batch`: `batch`, with components of different lengths
        batched into ragged tensors."""
        batch_size = _integer(batch_size, "ragged_batch", "batch_size")
        return Dataset(batching.RaggedBatch(self._node, batch_size, drop_remainder,
                                            _dt.as_dtype(row_splits_dtype)))

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None,
                     drop_remainder=False, name=None):
        batch_size = _integer(batch_size, "padded_batch", "batch_size")
        return Dataset(batching.PaddedBatch(self._node, batch_size, padded_shapes,
                                            padding_values, drop_remainder))

    def unbatch(self, name=None):
        return Dataset(batching.Unbatch(self._node))

    def window(self, size, shift=None, stride=1, drop_remainder=False, name=None):
        size = _integer(size, "window", "size")
        shift = None if shift is None else _integer(shift, "window", "shift")
        stride = _integer(stride, "window", "stride")
        return Dataset(windowing.Window(self._node, size, shift, stride, drop_remainder))

    def group_by_window(self, key_func, reduce_func, window_size=None, window_size_func=None,
                        name=None):
        if (window_size is None) == (window_size_func is None):
            raise ValueError("Either the `window_size` argument or the `window_size_func` "
                             "argument must be specified.")
        if window_size is not None:
            size = int(window_size)
            window_size_func = lambda key: size  # noqa: E731
        probe = windowing.ElementList([], self.element_spec)
        spec = reduce_func(_int64(0), Dataset(probe)).element_spec
        return Dataset(windowing.GroupByWindow(self._node, key_func, reduce_func,
                                               window_size_func, spec))

    def bucket_by_sequence_length(self, element_length_func, bucket_boundaries,
                                  bucket_batch_sizes, padded_shapes=None, padding_values=None,
                                  pad_to_bucket_boundary=False, no_padding=False,
                                  drop_remainder=False, name=None):
        """Batches elements of similar length together (TensorFlow's construction over
        `group_by_window`): bucket `i` holds lengths in `[boundaries[i-1], boundaries[i])`."""
        boundaries = [int(b) for b in bucket_boundaries]
        sizes = [int(b) for b in bucket_batch_sizes]
        if len(sizes) != len(boundaries) + 1:
            raise ValueError(f"`len(bucket_batch_sizes)` must equal `len(bucket_boundaries) + "
                             f"1` but `len(bucket_batch_sizes)={len(sizes)}` and "
                             f"`len(bucket_boundaries)={len(boundaries)}`.")
        if boundaries != sorted(boundaries):
            raise ValueError("`bucket_boundaries` must be sorted.")

        length_of = converting_call(element_length_func)

        def key(*element):
            length = length_of(*element)
            index = _math.cast(length >= boundaries[0], _dt.int64) if boundaries else \
                _math.cast(length * 0, _dt.int64)
            for b in boundaries[1:]:
                index = index + _math.cast(length >= b, _dt.int64)
            return index

        def reduce(bucket, group):
            bucket = int(bucket)
            if no_padding:
                return group.batch(sizes[bucket], drop_remainder=drop_remainder)
            shapes = padded_shapes
            if pad_to_bucket_boundary:
                group = group.map(_bucket_assertion(element_length_func, boundaries))
                if shapes is None:
                    bound = boundaries[bucket] - 1 if bucket < len(boundaries) else None
                    shapes = _st.map_structure(
                        lambda s: [bound] + [None] * (s.shape.rank - 1) if s.shape.rank else [],
                        self.element_spec)
            return group.padded_batch(sizes[bucket], shapes, padding_values, drop_remainder)

        return self.group_by_window(key, reduce, window_size_func=lambda k: sizes[int(k)])

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None, name=None):
        buffer_size = _integer(buffer_size, "shuffle", "buffer_size")
        return Dataset(ordering.Shuffle(self._node, buffer_size, seed, reshuffle_each_iteration))

    def repeat(self, count=None, name=None):
        return Dataset(ordering.Repeat(self._node, _count(count, "repeat")))

    def take(self, count, name=None):
        return Dataset(ordering.Take(self._node, _count(count, "take")))

    def skip(self, count, name=None):
        return Dataset(ordering.Skip(self._node, _count(count, "skip")))

    def shard(self, num_shards, index, name=None):
        return Dataset(ordering.Shard(self._node, _integer(num_shards, "shard", "num_shards"),
                                      _integer(index, "shard", "index")))

    def enumerate(self, start=0, name=None):  # noqa: A003 - TensorFlow's name
        return Dataset(ordering.Enumerate(self._node, start))

    def prefetch(self, buffer_size, name=None):
        buffer_size = _integer(buffer_size, "prefetch", "buffer_size")
        return Dataset(buffering.Prefetch(self._node, buffer_size))

    def cache(self, filename="", name=None):
        return Dataset(buffering.Cache(self._node, filename))

    def apply(self, transformation_func):
        result = transformation_func(self)
        if not isinstance(result, Dataset):
            raise TypeError(f"`transformation_func` must return a `tf.data.Dataset` object. Got "
                            f"{type(result)}.")
        return result


DatasetV2 = Dataset
_st.set_dataset_type(Dataset)


# -- helpers ---------------------------------------------------------------------------------------
def _int64(value):
    return wrap_value(np.array(value, np.int64), _st.cpu_device())


def _count(count, what, name="count"):
    """An integer argument (a Python or numpy integer, or a scalar integer tensor); TensorFlow's
    errors for anything else, naming the argument."""
    if count is None:
        if what == "repeat":
            return -1
        raise ValueError("Attempt to convert a value (None) with an unsupported type (<class "
                         "'NoneType'>) to a Tensor.")
    return _integer(count, what, name)


def _integer(value, what, name):
    if hasattr(value, "numpy"):
        value = value.numpy()
    array = np.asarray(value)
    if array.shape != () or array.dtype.kind not in "iu":
        raise TypeError(f"{what}: `{name}` must be a scalar integer, got {value!r}.")
    return int(array)


def _generator_argument(value):
    """An `args` item of from_generator: TensorFlow passes it through a tensor, so the
    generator receives a numpy value."""
    return convert_to_tensor(value).numpy()


def _call_with_state(func, state, element):
    return func(state, *element) if element.__class__ is tuple else func(state, element)


def _check_state(state_spec, new_spec, what):
    try:
        _st.assert_same_structure(state_spec, new_spec, what)
    except TypeError:
        raise TypeError(f"The element classes for the new state must match the initial state. "
                        f"Expected {state_spec!r}; got {new_spec!r}.") from None
    for a, b in zip(_st.flatten(state_spec), _st.flatten(new_spec)):
        if a.dtype != b.dtype:
            raise TypeError(f"The element types for the new state must match the initial state. "
                            f"Expected {_st.describe_types(state_spec)}; got "
                            f"{_st.describe_types(new_spec)}.")


def _inner_spec(dataset, map_func, what):
    """The element spec of the datasets `map_func` returns, from one call on a zero element
    (TensorFlow learns it by tracing; here the function runs eagerly per element)."""
    spec = dataset.element_spec
    if any(isinstance(s, _st.DatasetSpec) for s in _st.flatten(spec)):
        probe = _st.map_structure(
            lambda s: Dataset(windowing.ElementList([], s.element_spec))
            if isinstance(s, _st.DatasetSpec) else _zero(s), spec)
    else:
        probe = _st.map_structure(_zero, spec)
    result = map_func(*probe) if probe.__class__ is tuple else map_func(probe)
    if not isinstance(result, Dataset):
        raise TypeError(f"The function passed to `{what}` must return a `tf.data.Dataset` "
                        f"object, got {type(result).__name__}.")
    return result.element_spec


def _zero(spec):
    shape = [0 if d is None else d for d in (spec.shape if spec.shape.rank is not None else [])]
    return wrap_value(np.zeros(shape, spec.dtype.as_numpy_dtype), _st.cpu_device())


def _bucket_assertion(element_length_func, boundaries):
    limit = max(boundaries)

    length_of = converting_call(element_length_func)

    def check(*element):
        length = length_of(*element)
        assert_that(_math.less(_math.cast(length, _dt.int64), limit),
                    "When pad_to_bucket_boundary=True, elements must have length < "
                    "max(bucket_boundaries).")
        return element[0] if len(element) == 1 else element
    return check
