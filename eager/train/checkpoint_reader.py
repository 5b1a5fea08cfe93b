"""`eager.train.load_checkpoint` ≈ `tf.train.load_checkpoint`: a reader of one checkpoint file.

The file is read and validated once (`_format.read_checkpoint`: checksums, sizes, dtypes) when
the reader is made; its methods then answer from memory. Keys are TensorFlow's, and the object
graph is listed as TensorFlow lists it: `_CHECKPOINTABLE_OBJECT_GRAPH`, a string scalar (its
value here is the object graph's JSON, in TensorFlow a serialized protocol buffer).
"""

from __future__ import annotations

import json

from ..base import dtypes as _dt
from ..base.errors import NotFoundError
from . import _format
from .checkpoint_management import OBJECT_GRAPH_KEY, _resolve

__all__ = ["CheckpointReader", "load_checkpoint"]


class CheckpointReader:
    """≈ TensorFlow's `CheckpointReader`: `get_tensor(key)`, `has_tensor(key)`,
    `get_variable_to_shape_map()`, `get_variable_to_dtype_map()`, `debug_string()`."""

    def __init__(self, path):
        self._data = _format.read_checkpoint(path)

    def has_tensor(self, key) -> bool:
        return key == OBJECT_GRAPH_KEY or key in self._data.arrays

    def get_tensor(self, key):
        """The value stored under `key`: a numpy array (a copy), bytes for the object graph.
        NotFoundError (TensorFlow's words) for a key the file does not hold."""
        if key == OBJECT_GRAPH_KEY:
            return json.dumps(self._data.nodes, sort_keys=True).encode("utf-8")
        array = self._data.arrays.get(key)
        if array is None:
            raise NotFoundError(None, None, f"Key {key} not found in checkpoint")
        return array.copy()

    def get_variable_to_shape_map(self) -> dict:
        shapes = {key: list(array.shape) for key, array in self._data.arrays.items()}
        shapes[OBJECT_GRAPH_KEY] = []
        return shapes

    def get_variable_to_dtype_map(self) -> dict:
        dtypes = {key: _dt.as_dtype(array.dtype) for key, array in self._data.arrays.items()}
        dtypes[OBJECT_GRAPH_KEY] = _dt.string
        return dtypes

    def debug_string(self) -> bytes:
        """One line per key, sorted, as TensorFlow prints them: `key (DT_FLOAT) [1,2]`."""
        dtypes = self.get_variable_to_dtype_map()
        lines = [f"{key} ({_enum_name(dtypes[key])}) "
                 f"[{','.join(str(d) for d in shape)}]\n"
                 for key, shape in sorted(self.get_variable_to_shape_map().items())]
        return "".join(lines).encode("utf-8")

    def __repr__(self):
        return f"<eager.train.CheckpointReader {self._data.path!r}>"


#: TensorFlow's DataType enum names where they are not the dtype's name in capitals.
_ENUM_NAMES = {"float32": "DT_FLOAT", "float64": "DT_DOUBLE", "float16": "DT_HALF"}


def _enum_name(dtype) -> str:
    return _ENUM_NAMES.get(dtype.name, "DT_" + dtype.name.upper())


def load_checkpoint(ckpt_dir_or_file) -> CheckpointReader:
    """≈ `tf.train.load_checkpoint`: a reader of a checkpoint file, or of a directory's latest
    checkpoint. NotFoundError when there is none, DataLossError for a damaged file."""
    return CheckpointReader(_resolve(ckpt_dir_or_file))
