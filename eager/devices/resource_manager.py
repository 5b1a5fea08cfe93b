"""Per-device resource managers: the live resources (variable storage, ...) of one device.

A resource is keyed by a process-unique id, never by name (names are for people). Creating,
looking up and destroying are thread-safe; `live_count` is what
`eager.experimental.live_resource_count()` sums over devices.
"""

from __future__ import annotations

import itertools
import threading

__all__ = ["ResourceManager", "next_resource_id"]

next_resource_id = itertools.count(1).__next__


class ResourceManager:
    """One device's live resources, by uid.

    `by_uid` is the table itself (uid -> resource). Hot paths (every variable read and update
    on the fast path looks its storage up) read it directly, `by_uid.get(uid)`, which costs
    less than any method around it; creating and destroying go through the methods, which
    lock.
    """

    __slots__ = ("by_uid", "_lock")

    def __init__(self):
        self.by_uid = {}
        # Re-entrant: deleters destroy from finalizers, which the garbage collector may run on
        # this thread while it holds the lock (creating a resource allocates).
        self._lock = threading.RLock()

    def create(self, uid: int, resource) -> None:
        with self._lock:
            if uid in self.by_uid:
                raise KeyError(f"resource {uid} already exists")
            self.by_uid[uid] = resource

    def lookup(self, uid: int):
        """The resource, or None if it was never created or has been destroyed."""
        return self.by_uid.get(uid)

    def destroy(self, uid: int) -> bool:
        """Removes the resource; False if it was not there (destroying twice is harmless)."""
        with self._lock:
            return self.by_uid.pop(uid, None) is not None

    def live_count(self) -> int:
        return len(self.by_uid)
