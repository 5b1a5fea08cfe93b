"""The hierarchical all-reduce (`collectives/hierarchical.py`) on real MPI processes, with
several hosts simulated on this machine through `MPICollectives(host_of_rank=...)`.

Each test writes a worker script and starts it with `python -m eager.distribute.run -n N`
under a generous timeout (a hang becomes a failure). Every worker checks its results against
numpy's reduction of every rank's inputs (which it regenerates from their seeds) and writes a
digest of each result's bytes, so the test can check that every rank read the same bits.
Skipped when mpi4py or mpiexec (the `distributed` extra) is missing.
"""

import json
import subprocess

import pytest

from mpi_jobs import rank_results, run_job, skip_module_without_mpi

skip_module_without_mpi()

#: The longest a job here may take; a hang becomes a failure after it.
JOB_TIMEOUT_S = 240


def launch(tmp_path, body: str, processes: int, *args) -> subprocess.CompletedProcess:
    return run_job(tmp_path, body, *args, processes=processes, timeout_s=JOB_TIMEOUT_S)


ALL_REDUCE_WORKER = """
    import hashlib
    import json
    import sys

    import numpy as np
    from eager import errors
    from eager.distribute.collectives import shared_memory
    from eager.distribute.collectives.mpi import MPICollectives

    hosts = json.loads(sys.argv[1])
    c = MPICollectives(host_of_rank=hosts, timeout_seconds=float(sys.argv[2]) or None)
    r, size = c.rank, c.size
    out = {"engine": type(c._node).__name__, "hosts": getattr(c._node, "hosts", None),
           "digests": {}, "wrong": [], "cases": 0}

    def parts_of(dtype, shape, seed):
        rng = np.random.default_rng(seed)
        if np.dtype(dtype).kind in "iu":
            return [rng.integers(-1000, 1000, shape).astype(dtype) for _ in range(size)]
        if np.dtype(dtype).kind == "c":
            return [(rng.standard_normal(shape) + 1j * rng.standard_normal(shape))
                    .astype(dtype) for _ in range(size)]
        return [(rng.standard_normal(shape) * 10).astype(dtype) for _ in range(size)]

    def expected(parts, op):
        dtype = parts[0].dtype
        if op in ("max", "min"):
            return (np.maximum if op == "max" else np.minimum).reduce(parts)
        total = np.sum(np.stack(parts), axis=0, dtype=np.float64 if dtype.kind == "f"
                       else None).astype(dtype)
        if op == "mean":
            total = total // size if dtype.kind in "iu" else total / dtype.type(size)
        return total

    def check(name, got, want, mine, before):
        out["cases"] += 1
        out["digests"][name] = hashlib.sha256(np.ascontiguousarray(got).tobytes()).hexdigest()
        if got.shape != want.shape or got.dtype != want.dtype:
            out["wrong"].append(f"{name}: {got.dtype}{got.shape} != {want.dtype}{want.shape}")
        elif want.dtype.kind in "iub":
            if not np.array_equal(got, want):
                out["wrong"].append(f"{name}: values")
        elif not np.allclose(got, want, rtol=64 * np.finfo(want.dtype).eps,
                             atol=64 * np.finfo(want.dtype).eps * np.abs(want).max()):
            out["wrong"].append(f"{name}: values, max error {np.abs(got - want).max()}")
        if not np.array_equal(mine, before):
            out["wrong"].append(f"{name}: the input was written")

    # below and above the window's threshold, and over one piece (several pieces)
    itemsizes = {np.float32: 4, np.float64: 8, np.int32: 4}
    for dtype, itemsize in itemsizes.items():
        for n in (10, shared_memory.MIN_BYTES // itemsize - 1, 20_000,
                  2 * shared_memory.PIECE_BYTES // itemsize + 12_345):
            parts = parts_of(dtype, n, n)
            for op in ("sum", "mean", "max", "min"):
                mine = parts[r].copy()
                got = c.all_reduce([mine], op)[0]
                check(f"{np.dtype(dtype).name}/{n}/{op}", got, expected(parts, op), mine,
                      parts[r])
    # other dtypes through the window; bools' max/min are or/and
    for dtype in (np.float16, np.int64, np.uint8, np.complex64):
        parts = parts_of(dtype, (200, 300), 7)
        mine = parts[r].copy()
        check(f"{np.dtype(dtype).name}/sum", c.all_reduce([mine])[0], expected(parts, "sum"),
              mine, parts[r])
    flags = [np.random.default_rng(k).random(50_000) > 0.5 for k in range(size)]
    for op in ("max", "min"):
        mine = flags[r].copy()
        check(f"bool/{op}", c.all_reduce([mine], op)[0], expected(flags, op), mine, flags[r])
    # 0-d arrays, alone and in buckets of one dtype (one round through the window)
    for dtype in (np.float32, np.int32):
        scalars = parts_of(dtype, (), 3)
        bucket = [parts_of(dtype, (), 11), parts_of(dtype, (3, 4), 12),
                  parts_of(dtype, (50_000,), 13), parts_of(dtype, (7,), 14)]
        for op in ("sum", "mean", "max", "min"):
            mine = scalars[r].copy()
            check(f"{np.dtype(dtype).name}/0-d/{op}", c.all_reduce([mine], op)[0],
                  expected(scalars, op), mine, scalars[r])
            mine = [p[r].copy() for p in bucket]
            got = c.all_reduce(mine, op)
            for k, (g, p) in enumerate(zip(got, bucket)):
                check(f"{np.dtype(dtype).name}/bucket{k}/{op}", g, expected(p, op), mine[k],
                      p[r])
    try:
        c.all_reduce([np.ones(40_000, np.complex64)], "max")
        out["complex_max"] = "no error"
    except errors.InvalidArgumentError as e:
        out["complex_max"] = str(e)
    # mismatched buffers: the same error on every rank, and the engine still works after it
    if c._node is not None:
        n = 100_000
        for name, buffer, op in [
                ("count", np.ones(n + (r == size - 1), np.float32), "sum"),
                ("dtype", np.ones(n, np.float64 if r == 1 else np.float32), "sum"),
                ("op", np.ones(n, np.float32), "max" if r == 2 % size else "sum")]:
            try:
                c.all_reduce([buffer], op)
                out["mismatch_" + name] = "no error"
            except errors.InvalidArgumentError as e:
                out["mismatch_" + name] = str(e)
        out["after_mismatch"] = c.all_reduce([np.ones(n, np.float32)])[0][:2].tolist()
    c.close()
    with open(f"result_{r}.json", "w") as file:
        json.dump(out, file)
"""

PREFIX = ("all_reduce: the workers passed different buffers (every worker must reduce the "
          "same element count, dtype and reduction in the same order): ")


def _mismatches(processes):
    def described(changed, text):
        return PREFIX + "; ".join(
            f"worker {k}: {text if k == changed else '100000 x float32 (sum)'}"
            for k in range(processes))
    return {"count": described(processes - 1, "100001 x float32 (sum)"),
            "dtype": described(1, "100000 x float64 (sum)"),
            "op": described(2 % processes, "100000 x float32 (max)")}


@pytest.mark.parametrize("hosts, engine, timeout", [
    ([0, 0, 1, 1], "HostsAllReduce", 0),       # 2 simulated hosts of 2
    ([0, 1, 0, 1], "HostsAllReduce", 60),      # interleaved ranks; deadlines on every wait
    ([0, 0, 0, 1], "HostsAllReduce", 0),       # hosts of different sizes
    ([0, 1], "NoneType", 0),                    # 2 hosts of 1: MPI's Allreduce
    (None, "NodeAllReduce", 0),                 # 1 host of 4: the one-host window
], ids=["2x2", "2x2-interleaved-timeout", "3+1", "2x1", "1x4"])
def test_all_reduce_across_simulated_hosts_matches_numpy_with_identical_bits(
        tmp_path, hosts, engine, timeout):
    """Every dtype, size and reduction gives numpy's result, and every rank the same bytes;
    mismatched buffers anywhere are the same `InvalidArgumentError` on every rank."""
    processes = 4 if hosts is None else len(hosts)
    proc = launch(tmp_path, ALL_REDUCE_WORKER, processes, json.dumps(hosts), str(timeout))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = rank_results(tmp_path, proc, processes)
    for out in results:
        assert out["engine"] == engine
        assert out["hosts"] == (len(set(hosts)) if engine == "HostsAllReduce" else None)
        assert out["wrong"] == []
        assert out["cases"] == 3 * 4 * 4 + 4 + 2 + 2 * 4 * 5
        assert out["digests"] == results[0]["digests"]  # bit for bit on every rank
        # (one host reduces complex max/min in numpy's order, as before; MPI refuses them)
        assert (out["complex_max"] == "no error" if engine == "NodeAllReduce" else
                out["complex_max"].startswith("all_reduce: MPI cannot reduce complex64")), \
            out["complex_max"]
        if engine != "NoneType":
            for name, message in _mismatches(processes).items():
                assert out["mismatch_" + name] == message
            assert out["after_mismatch"] == [float(processes)] * 2


def test_a_missing_worker_on_another_host_is_a_deadline_not_a_hang(tmp_path):
    """Rank 3 (not a leader) never calls the all-reduce: its host's leader waits at the
    host's barrier, the other host's at the leaders' exchange; the bounded waits raise and
    the uncaught error aborts the job."""
    proc = launch(tmp_path, """
        import numpy as np
        from eager.distribute.collectives.mpi import MPICollectives

        c = MPICollectives(timeout_seconds=2, host_of_rank=[0, 0, 1, 1])
        if c.rank != 3:
            c.all_reduce([np.ones((300, 1000), np.float32)])
    """, 4)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    assert "DeadlineExceededError: Collective all_reduce" in output
    assert "did not complete within 2 s" in output


def test_host_of_rank_is_checked(tmp_path):
    proc = launch(tmp_path, """
        import json
        from eager.distribute.collectives.mpi import MPICollectives

        out = {}
        for hosts in ([0], [0, -1], [0, "a"], [0, 1.5]):
            try:
                MPICollectives(host_of_rank=hosts, abort_on_error=False)
                out[str(hosts)] = "no error"
            except ValueError as e:
                out[str(hosts)] = str(e)
        from mpi4py import MPI
        with open(f"result_{MPI.COMM_WORLD.Get_rank()}.json", "w") as file:
            json.dump(out, file)
    """, 2)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for out in rank_results(tmp_path, proc, 2):
        assert out == {str(h): f"host_of_rank must hold one non-negative int per rank (2), "
                               f"got {h!r}." for h in ([0], [0, -1], [0, "a"], [0, 1.5])}


def test_processes_that_group_themselves_differently_all_get_the_same_error(tmp_path):
    """Every process compares its `host_of_rank` with the others' before using it: a process
    passing another grouping (or none, or an invalid one) gets the error on every process
    instead of the windows waiting on each other forever."""
    proc = launch(tmp_path, """
        import json
        from mpi4py import MPI
        from eager.distribute.collectives.mpi import MPICollectives

        rank = MPI.COMM_WORLD.Get_rank()
        out = {}
        for case, hosts in (("other", [[0, 1], [0, 0]]), ("none", [[0, 0], None]),
                            ("invalid", [[0, 0], [0]]), ("same", [[0, 1], [0, 1]])):
            try:
                c = MPICollectives(host_of_rank=hosts[rank], abort_on_error=False)
                c.close()
                out[case] = "no error"
            except ValueError as e:
                out[case] = str(e)
        with open(f"result_{rank}.json", "w") as file:
            json.dump(out, file)
    """, 2)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    first, second = rank_results(tmp_path, proc, 2)
    prefix = "every process must pass the same host_of_rank: "
    assert first["other"] == second["other"] == (
        prefix + "rank 0 passed [0, 1]; rank 1 passed [0, 0].")
    assert first["none"] == second["none"] == prefix + "rank 0 passed [0, 0]; rank 1 passed None."
    assert first["invalid"] == prefix + "rank 0 passed [0, 0]; rank 1 passed an invalid list."
    assert second["invalid"] == ("host_of_rank must hold one non-negative int per rank (2), "
                                 "got [0].")
    assert first["same"] == second["same"] == "no error"
