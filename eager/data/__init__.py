"""`eager.data` ≈ `tf.data`: input pipelines.

`Dataset` builds pipelines from sources and transformations with TensorFlow 2.21's names,
element structures, `element_spec`s and cardinalities; iterating one eagerly gives host
tensors, inside `eager.function` a graph op (the function traces once). The pieces: `dataset.py`
(the public class), `node.py` (the protocol of a pipeline step), `structure.py` (elements and
their specs), the steps by theme (`sources`, `ordering`, `selection`, `functional`,
`batching`, `windowing`, `combining`, `buffering`, `files`), `file_datasets.py` (the file
datasets' classes), `traced.py` (user functions traced once),
`iterator.py` (iterators, checkpointable), `iterator_context.py` (what iterators are made under:
options), `in_function.py` (graph ops), `symbolic.py` (sources over a function's symbolic
tensors), `element_state.py`
(saved positions), `background.py` (threads behind prefetch and parallel calls).
"""

from . import experimental
from .background import AUTOTUNE
from .dataset import Dataset, DatasetV2
from .file_datasets import TextLineDataset, TFRecordDataset
from .iterator import OwnedIterator as Iterator
from .node import INFINITE as INFINITE_CARDINALITY
from .node import UNKNOWN as UNKNOWN_CARDINALITY
from .options import Options, ThreadingOptions
from .structure import DatasetSpec

__all__ = ["Dataset", "DatasetV2", "DatasetSpec", "TextLineDataset", "TFRecordDataset",
           "Iterator", "Options", "ThreadingOptions",
           "AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "experimental"]
