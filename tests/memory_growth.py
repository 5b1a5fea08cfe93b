"""Memory growth of a loop, for the leak tests: Python's allocations (`tracemalloc`) over
several windows of the loop after a warm-up, per 1,000 iterations. A leak grows in every window;
a cache filling up once grows in some, so tests compare the smallest or the median window."""

import gc
import tracemalloc

import eager as tf


def window_growth_kib_per_1000(step, warmup, windows, per_window) -> list:
    """KiB per 1,000 calls of `step` that each window kept, after `warmup` calls."""
    tracemalloc.start(1)
    try:
        for _ in range(warmup):
            step()
        _settle()
        growth = []
        for _ in range(windows):
            before = tracemalloc.get_traced_memory()[0]
            for _ in range(per_window):
                step()
            _settle()
            growth.append((tracemalloc.get_traced_memory()[0] - before) / 1024 * 1000
                          / per_window)
    finally:
        tracemalloc.stop()
    return growth


def _settle():
    """Lets queued work finish and drops what it held: on a simulated or real GPU a window's
    last kernels still hold their arrays until their stream runs them, which would count as
    growth in one window and as shrinkage in the next."""
    tf.experimental.sync_devices()
    gc.collect()
