"""A worker that fails must not leave the others waiting forever in a collective.

Without help, a Python exception in one MPI process is a silent hang: the failing interpreter
exits through `MPI_Finalize`, which waits for the other processes, while they wait inside a
collective for the one that left. `abort_on_uncaught_error` installs an excepthook that first
prints the traceback and one line naming the failing worker, then calls `MPI_Abort`: the MPI
launcher then ends every process of the job, so the run fails at once and its output says
which worker failed and why. (A process that dies from a signal is reported and cleaned up by
the launcher itself.)

The hook waits `FORWARD_GRACE_S` between printing and aborting: the launcher relays each
process's output through a pipe, and an abort tears the job down at once, dropping whatever the
relay had not yet read: without the pause, on a busy machine, the traceback and the line
naming the worker can be lost (only the launcher's own "job failed" line remains).
"""

from __future__ import annotations

import os
import sys
import time

_installed_for = None

#: Seconds between printing a failing worker's traceback and aborting the job (see the doc).
FORWARD_GRACE_S = 1.0


def failure_message(rank: int, size: int, exc: BaseException) -> str:
    """The line a failing worker prints before the job is aborted."""
    return (f"eager.distribute: worker {rank} of {size} (pid {os.getpid()}) failed with "
            f"{type(exc).__name__}: {exc}; aborting all {size} workers (MPI_Abort) so none "
            f"waits forever in a collective.")


def abort_on_uncaught_error(comm) -> None:
    """Make an uncaught exception in this process abort the whole MPI job (idempotent).

    The previous excepthook still runs first (the traceback is printed as usual)."""
    global _installed_for
    if _installed_for is not None or comm.Get_size() < 2:
        return
    _installed_for = comm
    previous = sys.excepthook
    rank, size = comm.Get_rank(), comm.Get_size()

    def excepthook(exc_type, exc, tb):
        try:
            previous(exc_type, exc, tb)
            print(failure_message(rank, size, exc), file=sys.stderr, flush=True)
            sys.stdout.flush()
            time.sleep(FORWARD_GRACE_S)
        finally:
            comm.Abort(1)

    sys.excepthook = excepthook
