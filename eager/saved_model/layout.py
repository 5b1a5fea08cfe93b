"""The SavedModel directory: which files, how they are sealed, how a save replaces a directory.

    export_dir/
      saved_model.json      the object graph's extra facts, functions, signatures, constants
      variables/variables   the variables: an eager checkpoint file (`eager.train._format`)

`saved_model.json` is UTF-8 JSON followed by one line, `eager.saved_model sha256:<hex>`, the
SHA-256 of every byte before that line; the JSON records the checkpoint file's own digest (its
last 64 bytes), so a variables file from another save is noticed too. A save writes the whole
directory under a temporary name beside `export_dir` and renames it into place (an existing
directory is moved aside first and removed after), so readers see the old model or the new
one, never a mix.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil

from ..base.errors import DataLossError, NotFoundError
from ..train import _format

__all__ = ["MODEL_FILE", "VARIABLES_FILE", "FORMAT", "VERSION", "write_directory", "read_model",
           "checkpoint_digest"]

MODEL_FILE = "saved_model.json"
VARIABLES_FILE = os.path.join("variables", "variables")
FORMAT = "eager.saved_model"
VERSION = 1
_SEAL = b"\neager.saved_model sha256:"
_SEAL_SIZE = len(_SEAL) + 64 + 1


def encode_model(meta) -> bytes:
    body = json.dumps(meta, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")
    return body + _SEAL + hashlib.sha256(body).hexdigest().encode("ascii") + b"\n"


def checkpoint_digest(path) -> str:
    """The digest an eager checkpoint file ends with (its own seal), read from its last bytes."""
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        if f.tell() < 64:
            return ""
        f.seek(-64, os.SEEK_END)
        return f.read(64).decode("ascii", "replace")


def write_directory(export_dir, model_meta, nodes, arrays) -> None:
    """Writes the directory atomically (module doc)."""
    export_dir = os.path.abspath(os.fspath(export_dir))
    parent = os.path.dirname(export_dir)
    os.makedirs(parent, exist_ok=True)
    token = secrets.token_hex(6)
    tmp = os.path.join(parent, f".{os.path.basename(export_dir)}.tmp-{token}")
    try:
        os.makedirs(os.path.join(tmp, "variables"))
        variables = os.path.join(tmp, VARIABLES_FILE)
        _format.atomic_write(variables, lambda f: _format.encode_checkpoint(f, nodes, arrays))
        model_meta["variables_sha256"] = checkpoint_digest(variables)
        _format.atomic_write(os.path.join(tmp, MODEL_FILE),
                             lambda f: f.write(encode_model(model_meta)))
        if os.path.isdir(export_dir):
            old = os.path.join(parent, f".{os.path.basename(export_dir)}.old-{token}")
            os.rename(export_dir, old)
            os.rename(tmp, export_dir)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, export_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def read_model(export_dir):
    """The validated JSON of `export_dir`'s model file (NotFoundError without one, DataLossError
    when the seal does not match or the JSON is not an eager SavedModel's)."""
    path = os.path.join(os.fspath(export_dir), MODEL_FILE)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError) as e:
        hint = ""
        if os.path.exists(os.path.join(os.fspath(export_dir), "saved_model.pb")):
            hint = (" (this is a TensorFlow SavedModel; eager reads only its own format, "
                    "see docs/API.md)")
        raise NotFoundError(None, None, f"SavedModel file does not exist at: {path}{hint}") \
            from e
    damaged = DataLossError(None, None, f"The SavedModel file {path} is damaged (truncated or "
                            "changed: it does not match its SHA-256 seal).")
    if len(raw) < _SEAL_SIZE or raw[-_SEAL_SIZE:-65] != _SEAL or raw[-1:] != b"\n":
        raise damaged
    body = memoryview(raw)[:-_SEAL_SIZE]
    if hashlib.sha256(body).hexdigest().encode("ascii") != raw[-65:-1]:
        raise damaged
    try:
        meta = json.loads(bytes(body).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise DataLossError(None, None, f"The SavedModel file {path} is not valid JSON: "
                            f"{exc}") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise DataLossError(None, None, f"{path} is not an eager SavedModel file.")
    version = meta.get("version")
    if type(version) is not int or version > VERSION:
        raise DataLossError(None, None, f"{path} has format version {version!r}, newer than "
                            f"this eager reads ({VERSION}).")
    return meta
