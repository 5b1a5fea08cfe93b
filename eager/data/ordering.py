"""Transformations that choose and order elements without looking into them: `repeat`, `take`,
`skip`, `shard`, `shuffle`, `enumerate`.

`shuffle` is TensorFlow's algorithm: a buffer filled with the first `buffer_size` elements; each
output is a uniformly random slot of the buffer, which the next input element then fills (once
the input is exhausted, the slot is dropped). The random stream is a seeded numpy `Generator`:
the dataset draws one seed when it is built (from `seed`, or from the global seed
`eager.random.set_seed` sets, or from the OS), and each iteration (each epoch under `repeat`)
derives its own stream from (that seed, iteration number) when `reshuffle_each_iteration`,
else reuses the first one. The iteration number counts the iterators the dataset has made; a
restored iterator puts the count back where the saved one had it, so the epochs after a
restore shuffle as they would have. So a seeded shuffle gives the same orders run after run
and a new order per epoch; the order is a permutation but not TensorFlow's bit for bit
(TensorFlow's Philox stream is not numpy's).
"""

from __future__ import annotations

import numpy as np

from ..base import errors as _errors
from ..base.dtypes import int64
from ..core.specs import TensorSpec
from ..ops.random_ops import get_seed
from ..tensor import wrap_value
from . import structure as _st
from . import element_state as _es
from . import iterator_context
from .node import INFINITE, UNKNOWN, Node, NodeIterator

__all__ = ["Repeat", "Take", "Skip", "Shard", "Shuffle", "Enumerate", "shuffle_seed"]


class Repeat(Node):
    tf_name = "_RepeatDataset"

    def __init__(self, node, count):
        self.inputs = (node,)
        self.count = -1 if count is None else int(count)
        self.element_spec = node.element_spec

    def cardinality(self):
        n = self.inputs[0].cardinality()
        if self.count == 0 or n == 0:
            return 0
        if self.count < 0:
            return INFINITE
        if n < 0:
            return n
        return n * self.count

    def make_iterator(self):
        return _RepeatIterator(self)


class _RepeatIterator(NodeIterator):
    """Makes a fresh input iterator per repetition (a shuffle below reshuffles: each iterator
    is a new epoch)."""

    __slots__ = ("_node", "_input", "_done", "_epoch_empty", "_context")

    def __init__(self, node):
        self._node = node
        self._context = iterator_context.current()
        self._input = None
        self._done = 0  # repetitions finished
        self._epoch_empty = True

    def __next__(self):
        count = self._node.count
        while count < 0 or self._done < count:
            if self._input is None:
                self._input = iterator_context.make_under(self._context, self._node.inputs[0])
                self._epoch_empty = True
            try:
                element = next(self._input)
            except StopIteration:
                self._input.close()
                self._input = None
                self._done += 1
                if self._epoch_empty and count < 0:
                    break  # an empty input repeated forever is empty
                continue
            self._epoch_empty = False
            return element
        raise StopIteration

    def save(self):
        return {"done": self._done, "empty": self._epoch_empty,
                "input": None if self._input is None else self._input.save()}

    def restore(self, state):
        self._done = int(state["done"])
        self._epoch_empty = bool(state["empty"])
        if state["input"] is None:
            self._input = None
        else:
            self._input = iterator_context.make_under(self._context, self._node.inputs[0])
            self._input.restore(state["input"])

    def close(self):
        if self._input is not None:
            self._input.close()


class Take(Node):
    tf_name = "_TakeDataset"

    def __init__(self, node, count):
        self.inputs = (node,)
        self.count = int(count)
        self.element_spec = node.element_spec

    def cardinality(self):
        n = self.inputs[0].cardinality()
        if self.count < 0:
            return n
        if n == INFINITE:
            return self.count
        if n == UNKNOWN:
            return UNKNOWN
        return min(n, self.count)

    def make_iterator(self):
        return _TakeIterator(self)


class _TakeIterator(NodeIterator):
    __slots__ = ("_input", "_left")

    def __init__(self, node):
        self._input = node.inputs[0].make_iterator() if node.count != 0 else None
        self._left = node.count

    def __next__(self):
        if self._left == 0:
            raise StopIteration
        element = next(self._input)
        self._left -= 1
        return element

    def save(self):
        return {"left": self._left, "input": None if self._input is None else self._input.save()}

    def restore(self, state):
        self._left = int(state["left"])
        if self._input is not None:
            self._input.restore(state["input"])

    def close(self):
        if self._input is not None:
            self._input.close()


class Skip(Node):
    tf_name = "_SkipDataset"

    def __init__(self, node, count):
        self.inputs = (node,)
        self.count = int(count)
        self.element_spec = node.element_spec

    def cardinality(self):
        n = self.inputs[0].cardinality()
        if n < 0:
            return n
        if self.count < 0:
            return 0
        return max(0, n - self.count)

    def make_iterator(self):
        return _SkipIterator(self)


class _SkipIterator(NodeIterator):
    __slots__ = ("_input", "_to_skip")

    def __init__(self, node):
        self._input = node.inputs[0].make_iterator()
        self._to_skip = node.count

    def __next__(self):
        while self._to_skip != 0:
            next(self._input)  # StopIteration ends the skip and the dataset
            if self._to_skip > 0:
                self._to_skip -= 1
        return next(self._input)

    def save(self):
        return {"to_skip": self._to_skip, "input": self._input.save()}

    def restore(self, state):
        self._to_skip = int(state["to_skip"])
        self._input.restore(state["input"])

    def close(self):
        self._input.close()


class Shard(Node):
    """`shard(num_shards, index)`: elements `index`, `index + num_shards`, ..."""

    tf_name = "_ShardDataset"

    def __init__(self, node, num_shards, index):
        num_shards, index = int(num_shards), int(index)
        if num_shards <= 0:
            raise _errors.InvalidArgumentError(
                None, "ShardDataset", f"Number of shards must be greater than zero (currently "
                                      f"num_shards = {num_shards}). [Op:ShardDataset]")
        if not 0 <= index < num_shards:
            raise _errors.InvalidArgumentError(
                None, "ShardDataset", f"Index must be between 0 and {num_shards - 1} (currently "
                                      f"index = {index}). [Op:ShardDataset]")
        self.inputs = (node,)
        self.num_shards, self.index = num_shards, index
        self.element_spec = node.element_spec

    def cardinality(self):
        n = self.inputs[0].cardinality()
        if n < 0:
            return n
        return n // self.num_shards + (1 if self.index < n % self.num_shards else 0)

    def make_iterator(self):
        return _ShardIterator(self)


class _ShardIterator(NodeIterator):
    __slots__ = ("_input", "_num_shards", "_index", "_started")

    def __init__(self, node):
        self._input = node.inputs[0].make_iterator()
        self._num_shards, self._index = node.num_shards, node.index
        self._started = False

    def __next__(self):
        source = self._input
        for _ in range(self._num_shards - 1 if self._started else self._index):
            next(source)
        self._started = True
        return next(source)

    def save(self):
        return {"started": self._started, "input": self._input.save()}

    def restore(self, state):
        self._started = bool(state["started"])
        self._input.restore(state["input"])

    def close(self):
        self._input.close()


# -- shuffle ---------------------------------------------------------------------------------------
def shuffle_seed(seed) -> int:
    """The seed a shuffle's streams derive from: TensorFlow's (seed, seed2) pair for the op seed
    and the global seed (`random_ops.get_seed`), or fresh entropy when neither is set."""
    pair = get_seed(seed, "shuffle")
    if pair == (0, 0):
        return int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> np.uint64(1))
    return pair[0] << 32 | pair[1]


class Shuffle(Node):
    tf_name = "_ShuffleDataset"

    def __init__(self, node, buffer_size, seed, reshuffle_each_iteration):
        self.inputs = (node,)
        buffer_size = int(buffer_size)
        if buffer_size == -2:  # UNKNOWN_CARDINALITY: the whole input
            n = node.cardinality()
            buffer_size = n if n > 0 else -2
        if buffer_size <= 0 and buffer_size != -2:
            raise _errors.InvalidArgumentError(
                None, "ShuffleDatasetV3", "buffer_size must be greater than zero or "
                                          "UNKNOWN_CARDINALITY [Op:ShuffleDatasetV3]")
        self.buffer_size = buffer_size
        self.seed = shuffle_seed(seed)
        self.reshuffle = True if reshuffle_each_iteration is None else \
            bool(reshuffle_each_iteration)
        self.element_spec = node.element_spec
        self.iterations = 0  # iterators made: the next one's iteration number

    def cardinality(self):
        return self.inputs[0].cardinality()

    def node_state(self):
        return {"seed": self.seed, "iterations": self.iterations}

    def set_node_state(self, state):
        self.seed = int(state["seed"])
        self.iterations = int(state["iterations"])

    def make_iterator(self):
        epoch = self.iterations
        self.iterations = epoch + 1
        return _ShuffleIterator(self, epoch)


class _ShuffleIterator(NodeIterator):
    __slots__ = ("_node", "_input", "_buffer", "_rng", "_epoch", "_exhausted")

    def __init__(self, node, epoch):
        self._node = node
        self._input = node.inputs[0].make_iterator()
        self._buffer = []
        self._exhausted = False
        self._seed_for(epoch)

    def _seed_for(self, epoch):
        self._epoch = epoch
        key = epoch if self._node.reshuffle else 0
        self._rng = np.random.Generator(np.random.PCG64([self._node.seed, key]))

    def __next__(self):
        buffer = self._buffer
        size = self._node.buffer_size
        while not self._exhausted and (size < 0 or len(buffer) < size):
            try:
                buffer.append(next(self._input))
            except StopIteration:
                self._exhausted = True
        if not buffer:
            raise StopIteration
        k = int(self._rng.integers(len(buffer)))
        element = buffer[k]
        if not self._exhausted:
            try:
                buffer[k] = next(self._input)
                return element
            except StopIteration:
                self._exhausted = True
        buffer[k] = buffer[-1]
        buffer.pop()
        return element

    def save(self):
        spec = self._node.element_spec
        return {"seed": self._node.seed, "epoch": self._epoch, "exhausted": self._exhausted,
                "rng": _es.rng_state(self._rng),
                "buffer": [_es.element_arrays(e, spec) for e in self._buffer],
                "input": self._input.save()}

    def restore(self, state):
        self._node.seed = int(state["seed"])  # an unseeded shuffle's order comes back too
        self._seed_for(int(state["epoch"]))
        self._node.iterations = self._epoch + 1
        _es.set_rng_state(self._rng, state["rng"])
        self._exhausted = bool(state["exhausted"])
        spec = self._node.element_spec
        self._buffer = [_es.element_from_arrays(a, spec) for a in state["buffer"]]
        self._input.restore(state["input"])

    def close(self):
        self._input.close()


# -- enumerate -------------------------------------------------------------------------------------
class Enumerate(Node):
    tf_name = "_ZipDataset"  # TensorFlow builds it as zip(range(start, inf), dataset)

    def __init__(self, node, start):
        self.inputs = (node,)
        self.start = int(start)
        self.element_spec = (TensorSpec([], int64), node.element_spec)

    def cardinality(self):
        return self.inputs[0].cardinality()

    def make_iterator(self):
        return _EnumerateIterator(self)


class _EnumerateIterator(NodeIterator):
    __slots__ = ("_input", "_index", "_device")

    def __init__(self, node):
        self._input = node.inputs[0].make_iterator()
        self._index = node.start
        self._device = _st.cpu_device()

    def __next__(self):
        element = next(self._input)
        index = self._index
        self._index = index + 1
        return (wrap_value(np.array(index, np.int64), self._device), element)

    def save(self):
        return {"index": self._index, "input": self._input.save()}

    def restore(self, state):
        self._index = int(state["index"])
        self._input.restore(state["input"])

    def close(self):
        self._input.close()
