"""Where the pipeline's background work comes from: `Prefetcher`, `parallel_map` and
`stage_to_device` (the threads of `eager.data.threads`), with the interface `_pipeline_api.md`
describes. Every dataset reaches them through this module, so datasets depend on that interface
and not on how the threads are built."""

from .threads import AUTOTUNE, Prefetcher, parallel_map, stage_to_device
from .threads.autotune import PREFETCH_LIMIT, available_cpus

__all__ = ["Prefetcher", "parallel_map", "stage_to_device", "AUTOTUNE", "PREFETCH_LIMIT",
           "available_cpus"]
