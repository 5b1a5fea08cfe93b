"""Checks of a kernel's data that give TensorFlow's error without making the host wait for a GPU.

A kernel that validates its data (a gather's indices, a loss's labels) asks whether any element
is bad. On the CPU the answer is at hand, and the op raises TensorFlow's CPU error at once. On a
GPU the answer is on the device: reading it makes the host wait for everything queued before it,
one full synchronization per gather or loss, and the host can no longer issue the next ops while
the device works.

`require` keeps such a check on the device instead. The check's flag (a 0-d boolean array, true
when the check failed) is kept with a function that builds the error, and the first failed check
is raised at the next synchronization of a GPU (a copy to the host, `sync_devices`): where CUDA
reports a kernel's own failures and PyTorch its device-side asserts, and where the simulated GPUs
report a failed kernel. The error is TensorFlow's CPU error, message and all; only the moment it
surfaces differs.

A deferred kernel runs on before its check is read, on indices wrapped into range (CuPy wraps
integer array indexing and `take`; the scatters wrap theirs explicitly), so it reads and writes
no memory outside its arrays. A kernel that writes a variable gates its whole write on the
check's flag (`resource_ops.checked_rows`), so a bad index never half-applies an update.

At most `MAX_PENDING_CHECKS` checks wait: the one after them reads them all then (one
synchronization per that many checks in a program that never reads a result)."""

from __future__ import annotations

import threading

import numpy as np

__all__ = ["MAX_PENDING_CHECKS", "require", "raise_failed", "pending_checks", "discard_pending"]

#: Checks kept on the devices before they are read without waiting for a synchronization.
MAX_PENDING_CHECKS = 64

_pending = []  # (xp, failed flag, error factory), in the order the checks were issued
_lock = threading.Lock()


def require(xp, failed, error) -> None:
    """Raises `error()` if `failed` (a 0-d boolean array of `xp`) is true: at once with numpy;
    at the next GPU synchronization (`raise_failed`) with a device array module. `error` runs
    only for a failed check, when it is raised; it may read the data it closes over."""
    if xp is np or isinstance(failed, (bool, np.bool_)):  # on the host already
        if failed:
            raise error()
        return
    with _lock:
        _pending.append((xp, failed, error))
        full = len(_pending) > MAX_PENDING_CHECKS
    if full:
        raise_failed()


def raise_failed() -> None:
    """Reads every pending check (a synchronization with the devices they are on) and raises the
    error of the first that failed; the checks are then done, failed or not, so each failure is
    reported once. Called by a GPU backend at each synchronization."""
    if not _pending:  # (read without the lock: a check issued meanwhile waits for the next)
        return
    with _lock:
        checks = _pending[:]
        del _pending[:]
    first = _first_failed(checks)
    if first is not None:
        raise first()


def _first_failed(checks):
    """The error factory of the first failed check, or None; one read of all the flags where
    they are on one device of one array module, else one read per flag."""
    xp = checks[0][0]
    if len(checks) > 1 and all(c[0] is xp for c in checks):
        try:
            failed = xp.stack([flag for _, flag, _ in checks])
        except Exception:  # noqa: BLE001 - flags on several devices: read one by one below
            failed = None
        if failed is not None:
            if not bool(failed.any()):
                return None
            return checks[int(xp.argmax(failed))][2]
    for _, flag, error in checks:
        if bool(flag):
            return error
    return None


def pending_checks() -> int:
    """How many checks wait for a synchronization (tests look at it)."""
    return len(_pending)


def discard_pending() -> None:
    """Drops the pending checks unread (the devices they were issued on are being reset)."""
    with _lock:
        del _pending[:]
