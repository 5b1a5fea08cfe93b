"""Optional comparison frameworks: imported only if installed (never required)."""

from __future__ import annotations

import importlib
import os


def load(name):
    """The module, or None if it is not installed or fails to import."""
    try:
        if name == "tensorflow":
            os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        return importlib.import_module(name)
    except Exception:  # noqa: BLE001 - any import failure means "not available"
        return None


def available():
    found = {}
    for name in ("torch", "jax", "tensorflow", "autograd"):
        mod = load(name)
        if mod is not None:
            found[name] = mod
    return found
