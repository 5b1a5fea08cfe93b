"""An iterator's saved position as bytes, and the pieces of it that are elements or random
streams.

`NodeIterator.save()` returns a tree of plain values: ints, floats, bools, strings, None, numpy
arrays, and lists and dicts of those. `encode` writes it as one `.npz` archive (the arrays as
entries, string arrays packed as bytes by `eager.base.string_arrays`, the rest as JSON in an
entry of its own) and returns the bytes as a uint8 array, which
a checkpoint stores like a variable's value; `decode` reads it back without pickles, so a
checkpoint file cannot run code.
"""

from __future__ import annotations

import io
import json

import numpy as np

from ..base import errors as _errors
from ..base import string_arrays as _string_arrays
from ..tensor import wrap_value
from . import structure as _st
from .node import not_checkpointable

__all__ = ["encode", "decode", "element_arrays", "element_from_arrays", "rng_state",
           "set_rng_state"]

_META = "state.json"


def encode(state) -> np.ndarray:
    arrays = []

    def tree(value):
        if isinstance(value, np.ndarray) and value.dtype.hasobject:  # strings: as bytes
            arrays.append(_string_arrays.pack(value))
            return {"__strings__": len(arrays) - 1, "shape": list(value.shape)}
        if isinstance(value, np.ndarray):
            arrays.append(value)
            return {"__array__": len(arrays) - 1}
        if isinstance(value, dict):
            return {str(k): tree(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [tree(v) for v in value]
        if isinstance(value, np.generic):
            return value.item()
        return value

    meta = json.dumps(tree(state))
    out = io.BytesIO()
    entries = {f"a{i}": a for i, a in enumerate(arrays)}
    entries[_META] = np.frombuffer(meta.encode(), np.uint8)
    np.savez(out, **entries)
    return np.frombuffer(out.getvalue(), np.uint8).copy()


def decode(data) -> object:
    try:
        with np.load(io.BytesIO(np.asarray(data, np.uint8).tobytes()),
                     allow_pickle=False) as archive:
            meta = json.loads(archive[_META].tobytes().decode())
            arrays = {name: archive[name] for name in archive.files if name != _META}
    except (ValueError, OSError, KeyError, json.JSONDecodeError) as exc:
        raise _errors.DataLossError(None, "DeserializeIterator",
                                    f"The saved iterator state is damaged: {exc}") from None

    try:
        return _tree(meta, arrays)
    except (ValueError, KeyError, TypeError) as exc:
        raise _errors.DataLossError(None, "DeserializeIterator",
                                    f"The saved iterator state is damaged: {exc}") from None


def _tree(meta, arrays):
    def tree(value):
        if isinstance(value, dict):
            if set(value) == {"__array__"}:
                return arrays[f"a{value['__array__']}"]
            if set(value) == {"__strings__", "shape"}:
                return _string_arrays.unpack(arrays[f"a{value['__strings__']}"],
                                             value["shape"])
            return {k: tree(v) for k, v in value.items()}
        if isinstance(value, list):
            return [tree(v) for v in value]
        return value

    return tree(meta)


def element_arrays(element, spec) -> list:
    """The host arrays of an element's components, for saving (buffers of shuffle, prefetch)."""
    arrays = []
    for leaf in _st.flatten(element):
        if _st.is_dataset(leaf):
            raise not_checkpointable("A dataset element that is a dataset")
        arrays.append(np.asarray(_st.host_array(leaf), order="C"))
    return arrays


def element_from_arrays(arrays, spec):
    """The element saved by `element_arrays`, as host tensors."""
    device = _st.cpu_device()
    return _st.pack(spec, [wrap_value(np.asarray(a), device) for a in arrays])


def rng_state(rng) -> dict:
    state = rng.bit_generator.state
    return {"state": str(state["state"]["state"]), "inc": str(state["state"]["inc"]),
            "has_uint32": int(state["has_uint32"]), "uinteger": int(state["uinteger"])}


def set_rng_state(rng, saved) -> None:
    rng.bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {"state": int(saved["state"]), "inc": int(saved["inc"])},
        "has_uint32": int(saved["has_uint32"]), "uinteger": int(saved["uinteger"])}
