"""The `.keras` file: a zip of Keras 3's `metadata.json` and `config.json`, and the weights.

Keras 3 stores the weights as HDF5 (`model.weights.h5`), which needs h5py. Here the weights
member is eager's pickle-free checkpoint (`eager.train`'s format: `.npy` arrays, a JSON object
graph, a whole-file SHA-256), named `model.weights.eager_checkpoint` so that nothing takes it
for HDF5 (Keras itself rejects the archive: it finds no `model.weights.h5`). It holds the
model's weights in `model.weights` order (`layer_weight_0`, ...) and the optimizer's variables
in `optimizer.variables` order (`optimizer_variable_0`, ...).

Reading treats the archive as hostile: only the three members may be present, the JSON members
are read with a size cap, the weights member must be stored uncompressed and is checked by the
checkpoint reader (checksum, schema, every array's header before its data). Nothing in the
file is executed, unpickled or imported."""

from __future__ import annotations

import datetime
import io
import json
import os
import tempfile
import zipfile

import numpy as np

from ...train import Checkpoint
from ...train import _format
from ...train._graph import object_graph

__all__ = ["CONFIG", "METADATA", "WEIGHTS", "write_archive", "read_archive", "KerasArchive"]

CONFIG = "config.json"
METADATA = "metadata.json"
WEIGHTS = "model.weights.eager_checkpoint"
KERAS_VERSION = "3.15.1"  # the Keras 3 release whose formats eager.keras follows
_JSON_LIMIT = 64 << 20    # bytes a JSON member may expand to
_VALUE = "/.ATTRIBUTES/VARIABLE_VALUE"


def _layer_key(i) -> str:
    return f"layer_weight_{i}"


def _optimizer_key(i) -> str:
    return f"optimizer_variable_{i}"


def encode_weights(weights, optimizer_variables) -> bytes:
    """The checkpoint bytes of `weights` and `optimizer_variables` (in their list orders)."""
    entries = {_layer_key(i): w for i, w in enumerate(weights)}
    entries.update({_optimizer_key(i): v for i, v in enumerate(optimizer_variables)})
    nodes, arrays = object_graph(Checkpoint(**entries))
    buffer = io.BytesIO()
    _format.encode_checkpoint(buffer, nodes, arrays)
    return buffer.getvalue()


def write_archive(filepath, config: dict, weights, optimizer_variables) -> None:
    """Writes the archive next to `filepath` and moves it into place (a failure leaves any file
    already there unchanged)."""
    metadata = {"keras_version": KERAS_VERSION,
                "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S"),
                "weights_format": _format.FORMAT}
    config_text = json.dumps(config)
    weights_bytes = encode_weights(weights, optimizer_variables)

    def write(f):
        with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED) as zf:
            zf.writestr(METADATA, json.dumps(metadata))
            zf.writestr(CONFIG, config_text)
            zf.writestr(WEIGHTS, weights_bytes)

    _format.atomic_write(os.fspath(filepath), write)


class KerasArchive:
    """A validated `.keras` file: `config` and `metadata` (parsed JSON), `layer_weights` and
    `optimizer_variables` (lists of read-only numpy arrays, in saved order)."""

    __slots__ = ("path", "config", "metadata", "layer_weights", "optimizer_variables")

    def __init__(self, path, config, metadata, layer_weights, optimizer_variables):
        self.path, self.config, self.metadata = path, config, metadata
        self.layer_weights, self.optimizer_variables = layer_weights, optimizer_variables


def _damaged(path, reason):
    return ValueError(f"The file {path} is not a valid `.keras` archive written by eager.keras: "
                      f"{reason}. Nothing was loaded.")


def _read_json(zf, name, path):
    with zf.open(name) as member:
        raw = member.read(_JSON_LIMIT + 1)
    if len(raw) > _JSON_LIMIT:
        raise _damaged(path, f"its member {name} is larger than {_JSON_LIMIT} bytes")
    try:
        value = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as e:
        raise _damaged(path, f"its member {name} is not valid JSON ({e})") from None
    if not isinstance(value, dict):
        raise _damaged(path, f"its member {name} does not hold a JSON object")
    return value


def _indexed(arrays, prefix, path) -> list:
    found = {}
    for key, value in arrays.items():
        if not key.endswith(_VALUE):
            continue
        name = key[:-len(_VALUE)]
        if name.startswith(prefix) and name[len(prefix):].isdigit():
            found[int(name[len(prefix):])] = value
    if sorted(found) != list(range(len(found))):
        raise _damaged(path, f"the weights member's {prefix}N entries are not numbered 0..N-1")
    return [found[i] for i in range(len(found))]


def read_archive(filepath) -> KerasArchive:
    path = os.fspath(filepath)
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        raise _damaged(path, f"it is not a zip file ({e})") from None
    with zf:
        try:
            infos = zf.infolist()
        except Exception as e:  # noqa: BLE001 - a hostile directory
            raise _damaged(path, f"its zip directory is unreadable ({e})") from None
        names = [i.filename for i in infos]
        if len(set(names)) != len(names):
            raise _damaged(path, "its zip directory lists a member twice")
        if WEIGHTS not in names and "model.weights.h5" in names:
            raise _damaged(path, "its weights are HDF5 (`model.weights.h5`, written by Keras), "
                                 "which eager.keras does not read; load the architecture with "
                                 "`keras.models.model_from_json`/`from_config` and the weights "
                                 "by hand")
        missing = sorted({CONFIG, METADATA, WEIGHTS} - set(names))
        extra = sorted(set(names) - {CONFIG, METADATA, WEIGHTS})
        if missing or extra:
            raise _damaged(path, f"missing members {missing}, unexpected members {extra}")
        try:
            config = _read_json(zf, CONFIG, path)
            metadata = _read_json(zf, METADATA, path)
            info = zf.getinfo(WEIGHTS)
            if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1:
                raise _damaged(path, f"its member {WEIGHTS} is compressed or encrypted")
            weights_bytes = zf.read(WEIGHTS)
        except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError,
                RuntimeError) as e:
            raise _damaged(path, f"a member cannot be read ({e})") from None
    with tempfile.TemporaryDirectory() as tmp:
        weights_path = os.path.join(tmp, WEIGHTS)
        with open(weights_path, "wb") as f:
            f.write(weights_bytes)
        try:
            data = _format.read_checkpoint(weights_path)
        except Exception as e:  # noqa: BLE001 - DataLossError and anything else: damaged
            raise _damaged(path, f"its weights member is damaged ({e})") from None
    arrays = data.arrays
    return KerasArchive(path, config, metadata, _indexed(arrays, "layer_weight_", path),
                        _indexed(arrays, "optimizer_variable_", path))


def assign_all(pairs) -> None:
    """Assigns each (variable, array) pair; callers check every shape first."""
    for variable, value in pairs:
        variable.assign(np.asarray(value, dtype=variable.dtype.as_numpy_dtype))
