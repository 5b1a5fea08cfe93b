"""Device names: parsing TensorFlow's short and long forms into one `DeviceSpec`.

Accepted: "CPU:0", "gpu:1", "/device:GPU:0", "/GPU:0", "GPU" (any index),
"/job:localhost/replica:0/task:0/device:CPU:1", and partial specs such as "/job:localhost".
"""

from __future__ import annotations

import functools

__all__ = ["DeviceSpec", "parse", "canonical_name"]

_KNOWN_TYPES = {"CPU", "GPU"}


class DeviceSpec:
    """≈ `tf.DeviceSpec`: each field is None when unconstrained."""

    __slots__ = ("job", "replica", "task", "device_type", "device_index")

    def __init__(self, job=None, replica=None, task=None, device_type=None, device_index=None):
        self.job = job
        self.replica = replica
        self.task = task
        self.device_type = device_type.upper() if device_type else None
        self.device_index = device_index

    @classmethod
    def from_string(cls, spec: str) -> "DeviceSpec":
        return parse(spec)

    def make_merged_spec(self, dev: "DeviceSpec") -> "DeviceSpec":
        """`dev`'s fields where set, else this spec's (how nested device scopes combine)."""
        return DeviceSpec(
            dev.job if dev.job is not None else self.job,
            dev.replica if dev.replica is not None else self.replica,
            dev.task if dev.task is not None else self.task,
            dev.device_type if dev.device_type is not None else self.device_type,
            dev.device_index if dev.device_type is not None else self.device_index)

    def to_string(self) -> str:
        parts = []
        if self.job is not None:
            parts.append(f"/job:{self.job}")
        if self.replica is not None:
            parts.append(f"/replica:{self.replica}")
        if self.task is not None:
            parts.append(f"/task:{self.task}")
        if self.device_type is not None:
            index = "*" if self.device_index is None else self.device_index
            parts.append(f"/device:{self.device_type}:{index}")
        return "".join(parts)

    @property
    def short_name(self):
        if self.device_type is None:
            return None
        return f"{self.device_type}:{0 if self.device_index is None else self.device_index}"

    def __eq__(self, other):
        return isinstance(other, DeviceSpec) and self.to_string() == other.to_string()

    def __hash__(self):
        return hash(self.to_string())

    def __repr__(self):
        return f"DeviceSpec({self.to_string()!r})"


def _int_field(name, value, spec):
    if value == "*":
        return None
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"Invalid device specification {spec!r}: {name} must be an integer, "
                         f"got {value!r}.") from None


@functools.lru_cache(maxsize=256)
def parse(spec: str) -> DeviceSpec:
    """Parses a device name; raises ValueError (naming the spec) when it is malformed."""
    if not isinstance(spec, str):
        raise TypeError(f"A device name must be a string, got {type(spec).__name__}.")
    job = replica = task = dtype = index = None
    text = spec.strip()
    pieces = [p for p in text.split("/") if p]
    for piece in pieces:
        fields = piece.split(":")
        key = fields[0].lower()
        if key == "job" and len(fields) == 2:
            job = fields[1]
        elif key == "replica" and len(fields) == 2:
            replica = _int_field("replica", fields[1], spec)
        elif key == "task" and len(fields) == 2:
            task = _int_field("task", fields[1], spec)
        elif key == "device" and len(fields) in (2, 3):
            dtype = fields[1].upper()
            index = _int_field("device index", fields[2], spec) if len(fields) == 3 else None
        elif fields[0].upper() in _KNOWN_TYPES and len(fields) in (1, 2):
            dtype = fields[0].upper()
            index = _int_field("device index", fields[1], spec) if len(fields) == 2 else None
        else:
            raise ValueError(f"Invalid device specification {spec!r}: cannot parse {piece!r}. "
                             "Use a name such as 'CPU:0', 'GPU:1' or '/device:GPU:0'.")
    if dtype is not None and dtype not in _KNOWN_TYPES:
        raise ValueError(f"Invalid device specification {spec!r}: unknown device type {dtype!r} "
                         f"(known: {', '.join(sorted(_KNOWN_TYPES))}).")
    if index is not None and index < 0:
        raise ValueError(f"Invalid device specification {spec!r}: negative device index.")
    if job not in (None, "localhost") or replica not in (None, 0) or task not in (None, 0):
        raise ValueError(f"Device {spec!r} is remote; eager runs on "
                         "/job:localhost/replica:0/task:0 only.")
    return DeviceSpec(job, replica, task, dtype, index)


def canonical_name(spec: str) -> str:
    """The short name ("GPU:0") of a fully specified device name."""
    parsed = parse(spec)
    if parsed.device_type is None:
        raise ValueError(f"Device name {spec!r} names no device type.")
    return parsed.short_name
