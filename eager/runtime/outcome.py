"""`Outcome`: one result a graph may produce, in a form sets and `==` work on.

An outcome is what the semantics explorer (`explorer.allowed_outcomes`) enumerates and what a
real run is compared with (`outcome_of`): the fetched values and the final value of every
variable the graph touches, turned into plain hashable Python (`tolist()` tuples; every NaN is
one shared object so NaNs compare equal), plus the error class name when an execution order
fails. Kept apart from the explorer so tests and stress runs can build outcomes of real runs
without the exploration machinery.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..base import nest
from ..core.context import wait_for_pending_work
from ..devices.resource_handles import ResourceHandle
from ..tensor import Tensor

__all__ = ["Outcome", "outcome_of", "DESTROYED", "plain_value", "host_value", "as_handle"]

#: The value an outcome gives a variable whose resource was destroyed.
DESTROYED = "<destroyed>"

_NAN = math.nan  # the one NaN outcomes hold (equal to itself by identity, one hash)


@dataclass(frozen=True, slots=True)
class Outcome:
    """One allowed result of running a graph (see the module doc for the representation)."""

    fetches: tuple = ()
    variables: tuple = ()  # ((name, value), ...) in resource uid order
    error: str | None = None

    def variable(self, name):
        """The final value of the variable called `name` (KeyError if none is, ValueError if
        several are)."""
        found = [value for n, value in self.variables if n == name]
        if not found:
            raise KeyError(f"No variable named {name!r} in this outcome.")
        if len(found) > 1:
            raise ValueError(f"Several variables are named {name!r}; read `variables` by "
                             "position (uid order).")
        return found[0]


# -- plain values --------------------------------------------------------------------------------
def _tupled(x):
    if isinstance(x, list):
        return tuple(_tupled(e) for e in x)
    if isinstance(x, float) and x != x:
        return _NAN
    return x


def host_value(value):
    """A numpy array (or other host value) for a kernel-level value: cupy arrays are copied."""
    if getattr(value, "__cuda_array_interface__", None) is not None:
        return value.get()
    return value


def plain_value(value):
    """The hashable Python form of one value (see the module doc)."""
    if value is None or value is DESTROYED:
        return value
    if isinstance(value, Tensor):
        value = value.numpy()  # waits for pending work, copies from the device
    if isinstance(value, ResourceHandle):
        return ("resource", value.name, value.uid)
    value = host_value(value)
    if isinstance(value, np.ndarray | np.generic):
        return _tupled(value.tolist())
    if isinstance(value, float | int | bool | complex | str | bytes):
        return _tupled(value)
    return value  # an opaque value (a TensorList): compared by identity


def outcome_of(fetched, variables=(), error=None) -> Outcome:
    """The `Outcome` of a real run, to compare with `allowed_outcomes`: `fetched` is what the run
    returned (a tensor or a nested structure of them, flattened in `eager.base.nest` order; pass the
    function's tensor outputs, not Python values it returns), `variables` the variables (or
    resource handle tensors, or `ResourceHandle`s) the graph touches, read now. `error` (an
    exception or its class name) makes an error outcome, as the explorer records failures."""
    if error is not None:
        return Outcome(error=error if isinstance(error, str) else type(error).__name__)
    fetches = tuple(plain_value(t) for t in nest.flatten(fetched))  # (pending ones wait)
    # "Now" is after everything issued so far: updates queued on async executors land first.
    wait_for_pending_work()
    handles = sorted((as_handle(v) for v in variables), key=lambda h: h.uid)
    values = []
    for h in handles:
        if not h.device.inline:
            h.device.synchronize()  # updates still queued on the device's stream land first
        storage = h.device.resources.lookup(h.uid)
        if storage is None:
            values.append((h.name, DESTROYED))
            continue
        with storage.lock:
            current = storage.value
            values.append((h.name, None if current is None else plain_value(current)))
    return Outcome(fetches, tuple(values))


def as_handle(v) -> ResourceHandle:
    if isinstance(v, ResourceHandle):
        return v
    handle = getattr(v, "handle", v)  # a Variable: its handle tensor
    value = getattr(handle, "_value", None)
    if not isinstance(value, ResourceHandle):
        raise TypeError(f"outcome_of: expected variables or resource handles, got {v!r}.")
    return value
