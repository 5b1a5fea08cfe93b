"""The threads behind `eager.data`'s input pipelines: elements made ahead of the consumer.

One module per job:

* `channel`: the bounded buffer between a producer thread and its consumer, carrying elements,
  errors (raised at the consumer's matching `next()`) and the end.
* `lifecycle`: stopping threads: `close()`, abandoned iterators, interpreter exit, fork.
* `prefetch`: `Prefetcher`, one producer thread reading a source ahead (`prefetch`).
* `parallel_map`: `ParallelMap`, a bounded pool applying a function (`map` with
  `num_parallel_calls`), in order or as finished.
* `staging`: `stage_to_device`, elements copied to a device ahead of the consumer
  (`prefetch_to_device`, `copy_to_device`).
* `autotune`: what `AUTOTUNE` chooses.
* `inherited`: what a pipeline thread takes from the thread that starts it (the device scope).

The contract every iterator here keeps. A source is a zero-argument callable returning an
iterator over elements (nested structures of tensors); it is called on the pipeline's own
thread. The iterator returns what `next()` on the source would have, in the same order
(`ParallelMap` with `deterministic=False`: in the order finished), each error raised at its
element's `next()`, as TensorFlow's iterators do. Every buffer is bounded. `close()`, dropping
the iterator, and interpreter exit stop every thread (`lifecycle`). Threads never refer to the
iterator that owns them; a source must not either (it would keep an abandoned iterator alive).
An iterator that wraps another may name it as its `pipeline_source`, so that stopping a
pipeline reaches the one below it.
"""

from .autotune import AUTOTUNE
from .lifecycle import CLOSE_TIMEOUT_S, PipelineIterator, live_threads
from .parallel_map import ParallelMap, parallel_map
from .prefetch import Prefetcher
from .staging import copy_to, resolve_device, stage_to_device

__all__ = ["AUTOTUNE", "Prefetcher", "ParallelMap", "parallel_map", "stage_to_device",
           "copy_to", "resolve_device", "PipelineIterator", "live_threads", "CLOSE_TIMEOUT_S"]
