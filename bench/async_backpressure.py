"""Back-pressure under asynchronous dispatch: memory and read latency while one thread loops
on variable updates and another reads.

    python bench/async_backpressure.py [--seconds 20] [--size 20000] [--simulated-gpus N]

The updater issues `v.assign_add(ones)` under `async_scope()` as fast as it can; each update is
cheap to issue and costs its worker more to run, so without a bound the queue (and the process's
memory) grows for as long as the loop runs. The reader loops on `sync_devices()` then
`v.numpy()`: the time of one read is how long a sync point waits for the work issued before it.
Prints the resident memory's growth over the run (from /proc/self/statm, after a warm-up
second), the slowest and median read, the most ops the updater's executor held (issued, not
finished: `eager.experimental.MAX_PENDING_OPS` bounds it), and the update rate. With
`--simulated-gpus N` the variable lives on simulated GPU:0, whose streams add their own queues
(bounded by `MAX_PENDING_LAUNCHES`); with two or more, each read first copies the variable to
GPU:1, so reads also wait on a second device's copy stream.

Not a test: its numbers depend on the machine. `tests/test_async_robustness.py` asserts the
bound and prompt reads at a small scale.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

import eager  # noqa: E402
from eager.async_exec import _current_executor  # noqa: E402


def resident_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def run(seconds: float, size: int, read_on: str | None = None) -> dict:
    v = eager.Variable(np.zeros(size, np.float32))
    ones = eager.constant(np.ones(size, np.float32))
    stop = threading.Event()
    started = threading.Event()
    executors, issued, reads, pending = [], [0], [], []

    def updater():
        with eager.experimental.async_scope():
            executors.append(_current_executor())
            started.set()
            while not stop.is_set():
                v.assign_add(ones)
                issued[0] += 1

    def reader():
        started.wait()
        while not stop.is_set():
            began = time.monotonic()
            eager.experimental.sync_devices()
            if read_on is None:
                v.numpy()
            else:
                with eager.device(read_on):
                    eager.identity(v).numpy()
            reads.append(time.monotonic() - began)
            time.sleep(0.05)

    threads = [threading.Thread(target=updater, daemon=True),
               threading.Thread(target=reader, daemon=True)]
    for t in threads:
        t.start()
    started.wait()
    time.sleep(1.0)  # warm-up: caches, pools, the first pages
    base = peak = resident_mb()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        peak = max(peak, resident_mb())
        queue = getattr(executors[0], "pending", None)
        pending.append(len(executors[0]._queue) if queue is None else queue)
        time.sleep(0.01)
    issued_at_end = issued[0]
    stop.set()
    for t in threads:
        t.join()
    return {"rss_growth_mb": peak - base, "slowest_read_s": max(reads, default=float("nan")),
            "median_read_s": statistics.median(reads) if reads else float("nan"),
            "reads": len(reads), "most_pending": max(pending),
            "updates_per_s": issued_at_end / (seconds + 1.0)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--size", type=int, default=20000, help="elements of the variable")
    parser.add_argument("--simulated-gpus", type=int, default=0)
    args = parser.parse_args()
    if args.simulated_gpus:
        eager.config.experimental.set_simulated_gpus(args.simulated_gpus)
    r = run(args.seconds, args.size, "GPU:1" if args.simulated_gpus >= 2 else None)
    print(f"device {eager.constant(0.0).device}"
          f"{', reads on GPU:1' if args.simulated_gpus >= 2 else ''}, {args.seconds:g} s, "
          f"variable of {args.size} float32")
    print(f"resident memory growth  {r['rss_growth_mb']:8.1f} MB")
    print(f"slowest read            {r['slowest_read_s']:8.3f} s   (median "
          f"{r['median_read_s']:.3f} s over {r['reads']} reads)")
    print(f"most ops pending        {r['most_pending']:8d}")
    print(f"updates issued          {r['updates_per_s']:8.0f} /s")


if __name__ == "__main__":
    main()
