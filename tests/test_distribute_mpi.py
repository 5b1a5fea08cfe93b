"""The MPI collectives and failure handling on 2 real processes on loopback.

Each test writes a small worker script and starts it with `python -m eager.distribute.run -n 2`
(the launcher wraps the venv's `mpiexec`), always under a generous timeout: the property of the
failure tests is that the job ends instead of hanging. Skipped when mpi4py (the `distributed`
extra) is not installed.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mpi4py")

from eager.distribute.run import find_mpiexec  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: The longest a 2-process job here may take; a hang becomes a failure after it.
JOB_TIMEOUT_S = 180

try:
    find_mpiexec()
except FileNotFoundError:
    pytest.skip("no mpiexec (install the `distributed` extra)", allow_module_level=True)


def run_job(tmp_path, body: str, *args) -> subprocess.CompletedProcess:
    script = tmp_path / "worker.py"
    script.write_text(textwrap.dedent(body))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("TF_CONFIG", None)
    return subprocess.run(
        [sys.executable, "-m", "eager.distribute.run", "-n", "2", str(script), *args],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=JOB_TIMEOUT_S)


def results_by_rank(tmp_path, proc) -> dict:
    """Each worker writes its results to its own file (their stdouts interleave)."""
    found = {rank: json.loads((tmp_path / f"result_{rank}.json").read_text())
             for rank in (0, 1) if (tmp_path / f"result_{rank}.json").exists()}
    assert sorted(found) == [0, 1], proc.stdout + proc.stderr
    return found


COLLECTIVES_WORKER = """
    import json
    import numpy as np
    from eager import errors
    from eager.distribute.collectives.mpi import MPICollectives

    c = MPICollectives()
    r = c.rank
    out = {"rank": r, "size": c.size}
    f = np.array([1.5, -2.0, 3.0], np.float32) * (r + 1)
    ints = np.array([3, -7, 10], np.int32) + r
    contiguous = f.copy()
    res = c.all_reduce([contiguous, ints.copy(), f.copy(), f.copy()], "sum")
    out["in_place"] = res[0] is contiguous
    out["sum"] = res[0].tolist()
    out["int_sum"] = res[1].tolist()
    out["mean"] = c.all_reduce([f.copy()], "mean")[0].tolist()
    out["int_mean"] = c.all_reduce([ints.copy()], "mean")[0].tolist()
    out["max"] = c.all_reduce([f.copy()], "max")[0].tolist()
    out["min"] = c.all_reduce([f.copy()], "min")[0].tolist()
    out["dtype"] = str(c.all_reduce([f.astype(np.float16)], "sum")[0].dtype)
    strided = (np.arange(12, dtype=np.float64).reshape(3, 4) * (r + 1))[:, ::2]
    before = strided.copy()
    reduced = c.all_reduce([strided])[0]
    out["strided"] = reduced.tolist()
    out["strided_input_kept"] = bool((strided == before).all())
    flags = np.array([r == 0, True, False])
    out["bool_max"] = c.all_reduce([flags.copy()], "max")[0].tolist()
    out["bool_min"] = c.all_reduce([flags.copy()], "min")[0].tolist()
    out["gather0"] = c.all_gather(np.full((1, 2), r, np.int64)).tolist()
    out["gather1"] = c.all_gather(np.full((2, r + 1), r, np.int64), axis=1).tolist()
    out["gather_scalar"] = c.all_gather(np.float32(r + 0.5)).tolist()
    out["bcast"] = c.broadcast(np.array([r, r * 10], np.int32), root=1).tolist()
    c.barrier()
    for name, call in [
            ("gather_mismatch", lambda: c.all_gather(np.zeros((2, 3 + r), np.float32))),
            ("bool_sum", lambda: c.all_reduce([flags.copy()], "sum")),
            ("bad_op", lambda: c.all_reduce([f.copy()], "prod")),
            ("bad_root", lambda: c.broadcast(f.copy(), root=2)),
            ("bad_timeout", lambda: MPICollectives(timeout_seconds=0))]:
        try:
            call()
            out[name] = "no error"
        except (errors.OpError, ValueError) as e:
            out[name] = f"{type(e).__name__}: {e}"
    c.barrier()
    c.close()
    try:
        c.barrier()
    except errors.FailedPreconditionError as e:
        out["closed"] = str(e)
    with open(f"result_{r}.json", "w") as file:
        json.dump(out, file)
"""


def test_collectives_on_two_processes_match_numpy(tmp_path):
    proc = run_job(tmp_path, COLLECTIVES_WORKER)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = results_by_rank(tmp_path, proc)
    f = np.array([1.5, -2.0, 3.0], np.float32)
    ints = np.array([3, -7, 10], np.int32)
    strided = np.arange(12, dtype=np.float64).reshape(3, 4)[:, ::2]
    for rank, out in results.items():
        assert (out["rank"], out["size"]) == (rank, 2)
        assert out["in_place"] is True  # a contiguous, writable buffer is reduced in place
        np.testing.assert_array_equal(out["sum"], f * 1 + f * 2)
        np.testing.assert_array_equal(out["int_sum"], ints * 2 + 1)
        np.testing.assert_array_equal(out["mean"], (f * 1 + f * 2) / 2)
        np.testing.assert_array_equal(out["int_mean"], (ints * 2 + 1) // 2)  # floor, like TF
        np.testing.assert_array_equal(out["max"], np.maximum(f, f * 2))
        np.testing.assert_array_equal(out["min"], np.minimum(f, f * 2))
        assert out["dtype"] == "float16"
        np.testing.assert_array_equal(out["strided"], strided * 3)
        assert out["strided_input_kept"] is True
        assert out["bool_max"] == [True, True, False]
        assert out["bool_min"] == [False, True, False]
        assert out["gather0"] == [[0, 0], [1, 1]]
        assert out["gather1"] == [[0, 1, 1], [0, 1, 1]]
        assert out["gather_scalar"] == [0.5, 1.5]
        assert out["bcast"] == [1, 10]
        assert out["gather_mismatch"] == (
            "InvalidArgumentError: all_gather: the workers' tensors differ in dtype or in shape "
            "outside the gathered axis (worker 0: float32[2, 3]; worker 1: float32[2, 4]); "
            "every worker must pass the same dtype and shape.")
        assert out["bool_sum"].startswith(
            "InvalidArgumentError: all_reduce: reduction 'sum' is not defined for bool tensors "
            "(bool[3])")
        assert out["bad_op"].startswith("ValueError: Unsupported reduction 'prod'")
        assert out["bad_root"] == ("ValueError: broadcast: root 2 is not a rank of this group "
                                   "of 2 workers.")
        assert out["bad_timeout"] == ("ValueError: timeout_seconds must be a positive number "
                                      "of seconds or None, got 0.")
        assert "was closed" in out["closed"]


def test_a_worker_that_raises_ends_the_job_naming_it(tmp_path):
    proc = run_job(tmp_path, """
        import numpy as np
        from eager.distribute.collectives.mpi import MPICollectives

        c = MPICollectives()
        buffer = np.ones(1000, np.float32)
        c.all_reduce([buffer])
        if c.rank == 1:
            raise ValueError("bad batch on this worker")
        while True:  # rank 0 would wait here forever for rank 1
            c.all_reduce([buffer])
    """)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    assert "ValueError: bad batch on this worker" in output
    assert "eager.distribute: worker 1 of 2" in output
    assert "aborting all 2 workers" in output
    assert "eager.distribute.run: the job failed" in output


def test_a_worker_that_dies_ends_the_job(tmp_path):
    proc = run_job(tmp_path, """
        import os, signal
        import numpy as np
        from eager.distribute.collectives.mpi import MPICollectives

        c = MPICollectives()
        buffer = np.ones(1000, np.float32)
        c.all_reduce([buffer])
        if c.rank == 1:
            os.kill(os.getpid(), signal.SIGKILL)
        while True:
            c.all_reduce([buffer])
    """)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    assert "eager.distribute.run: the job failed" in output


def test_a_timeout_turns_a_missing_worker_into_deadline_exceeded(tmp_path):
    """Rank 1 leaves without its share of collectives; rank 0's bounded wait raises, and the
    uncaught error then aborts the job."""
    proc = run_job(tmp_path, """
        import numpy as np
        from eager.distribute.collectives.mpi import MPICollectives

        c = MPICollectives(timeout_seconds=2)
        if c.rank == 0:
            c.all_reduce([np.ones((4, 5), np.float32)])
    """)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    assert ("DeadlineExceededError: Collective all_reduce of float32[4, 5] on worker 0 of 2 "
            "did not complete within 2 s") in output
    assert "eager.distribute: worker 0 of 2" in output

