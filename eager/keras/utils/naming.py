"""Keras's automatic object names: `auto_name("BinaryAccuracy")` is "binary_accuracy" the first
time, then "binary_accuracy_1", "binary_accuracy_2", ... (one process-wide counter per name,
as Keras's `uniquify`)."""

from __future__ import annotations

import collections
import re
import threading

__all__ = ["to_snake_case", "uniquify", "auto_name"]

_uids = collections.defaultdict(int)
_lock = threading.Lock()


def to_snake_case(name: str) -> str:
    """"BinaryAccuracy" -> "binary_accuracy", "AUC" -> "auc" (Keras's rule)."""
    name = re.sub(r"\W+", "", name)
    name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub("([a-z])([A-Z])", r"\1_\2", name).lower()


def uniquify(name: str) -> str:
    with _lock:
        unique = f"{name}_{_uids[name]}" if name in _uids else name
        _uids[name] += 1
    return unique


def auto_name(prefix: str) -> str:
    return uniquify(to_snake_case(prefix))
