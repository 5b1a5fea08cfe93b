"""Where the pipeline's background work comes from: `Prefetcher`, `parallel_map` and
`stage_to_device`, with the interface `_pipeline_api.md` describes. Every dataset reaches them
through this module, so one import line chooses the implementation (today the sequential
stand-ins in `_sequential.py`)."""

from ._sequential import Prefetcher, parallel_map, stage_to_device

__all__ = ["Prefetcher", "parallel_map", "stage_to_device", "AUTOTUNE"]

#: ≈ `tf.data.AUTOTUNE`: let the background module choose a size.
AUTOTUNE = -1
