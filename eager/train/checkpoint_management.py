"""The `checkpoint` state file, `latest_checkpoint`, `CheckpointManager`, and file inspection.

The state file is TensorFlow's: a text protocol buffer named `checkpoint` in the save directory,

    model_checkpoint_path: "ckpt-3"
    all_model_checkpoint_paths: "ckpt-2"
    all_model_checkpoint_paths: "ckpt-3"

(paths relative to the directory when they are inside it; `CheckpointManager` adds
`all_model_checkpoint_timestamps` and `last_preserved_timestamp`). Keeping TF's format means
tools that read it keep working; it is written atomically like the checkpoints themselves. A
state file that cannot be parsed is ignored with a warning, as TensorFlow does, so a damaged
one never stops a program that would start from scratch anyway.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time

from ..base.errors import NotFoundError
from . import _format

__all__ = ["CheckpointManager", "CheckpointState", "get_checkpoint_state", "latest_checkpoint",
           "update_checkpoint_state", "list_variables", "load_variable"]

_log = logging.getLogger(__name__)
_STATE_FILE = "checkpoint"
_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*?)\s*$")
_SIMPLE_ESCAPES = {"n": b"\n", "r": b"\r", "t": b"\t", '"': b'"', "'": b"'", "\\": b"\\",
                   "a": b"\a", "b": b"\b", "f": b"\f", "v": b"\v", "?": b"?"}


class CheckpointState:
    """≈ TF's CheckpointState proto: the latest checkpoint and those still kept."""

    def __init__(self, model_checkpoint_path="", all_model_checkpoint_paths=(),
                 all_model_checkpoint_timestamps=(), last_preserved_timestamp=None):
        self.model_checkpoint_path = model_checkpoint_path
        self.all_model_checkpoint_paths = list(all_model_checkpoint_paths)
        self.all_model_checkpoint_timestamps = list(all_model_checkpoint_timestamps)
        self.last_preserved_timestamp = last_preserved_timestamp

    def __repr__(self):
        return (f"CheckpointState(model_checkpoint_path={self.model_checkpoint_path!r}, "
                f"all_model_checkpoint_paths={self.all_model_checkpoint_paths!r})")


# -- the text format -----------------------------------------------------------------------------

def _quote(text: str) -> str:
    """A protobuf text-format string literal (non-ASCII as octal UTF-8 bytes, as TF writes)."""
    out = []
    for byte in text.encode("utf-8"):
        ch = chr(byte)
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif 32 <= byte < 127:
            out.append(ch)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def _unquote(literal: str) -> str:
    if len(literal) < 2 or literal[0] != literal[-1] or literal[0] not in "\"'":
        raise ValueError(f"not a string literal: {literal[:40]!r}")
    body, out, i = literal[1:-1], bytearray(), 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out += ch.encode("utf-8")
            i += 1
            continue
        if i + 1 >= len(body):
            raise ValueError("a string ends with a lone backslash")
        nxt = body[i + 1]
        if nxt in _SIMPLE_ESCAPES:
            out += _SIMPLE_ESCAPES[nxt]
            i += 2
        elif nxt in "01234567":
            digits = re.match(r"[0-7]{1,3}", body[i + 1:]).group()
            out.append(int(digits, 8) & 0xFF)
            i += 1 + len(digits)
        elif nxt in "xX":
            digits = re.match(r"[0-9A-Fa-f]{1,2}", body[i + 2:])
            if digits is None:
                raise ValueError("\\x with no hex digits")
            out.append(int(digits.group(), 16))
            i += 2 + len(digits.group())
        else:
            raise ValueError(f"unknown escape \\{nxt}")
    return out.decode("utf-8")


def _parse_state(text: str) -> CheckpointState:
    state = CheckpointState()
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = _LINE.match(line)
        if match is None:
            raise ValueError(f"line {number} is not `field: value`")
        field, value = match.groups()
        if field == "model_checkpoint_path":
            state.model_checkpoint_path = _unquote(value)
        elif field == "all_model_checkpoint_paths":
            state.all_model_checkpoint_paths.append(_unquote(value))
        elif field == "all_model_checkpoint_timestamps":
            state.all_model_checkpoint_timestamps.append(float(value))
        elif field == "last_preserved_timestamp":
            state.last_preserved_timestamp = float(value)
        # Other fields (from newer TensorFlow versions) are ignored, as a proto parser would
        # not be, but a reader that only needs paths can afford to be lenient.
    return state


def _state_path(checkpoint_dir, latest_filename):
    return os.path.join(os.fspath(checkpoint_dir), latest_filename or _STATE_FILE)


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """≈ `tf.train.get_checkpoint_state`: the parsed state file (paths joined to
    `checkpoint_dir` when relative), or None if there is none or it cannot be parsed."""
    path = _state_path(checkpoint_dir, latest_filename)
    try:
        with open(path, "rb") as f:
            state = _parse_state(f.read().decode("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        _log.warning("%s: %s: checkpoint state ignored", path, e)
        return None
    if not state.model_checkpoint_path:
        return None

    def absolute(p):
        return p if os.path.isabs(p) else os.path.join(os.fspath(checkpoint_dir), p)
    state.model_checkpoint_path = absolute(state.model_checkpoint_path)
    state.all_model_checkpoint_paths = [absolute(p) for p in state.all_model_checkpoint_paths]
    return state


#: Set by `eager.distribute` in a multi-worker job: `worker_temp_path(path)` gives a non-chief
#: worker's temporary stand-in for `path` (None on the chief, or with no multi-worker job). Every
#: worker computes and writes a checkpoint (reading sync-on-read variables takes collectives
#: every worker must join), but only the chief's lands at `path`; the others' are deleted.
WORKER_TEMP_PATH = None


def worker_temp_path(path):
    """This worker's temporary path for a checkpoint at `path`, or None to write `path`."""
    hook = WORKER_TEMP_PATH
    return None if hook is None else hook(path)


def remove_worker_temp(temp_path) -> None:
    """Deletes a non-chief worker's temporary checkpoint and its directory."""
    for name in (temp_path, os.path.dirname(temp_path)):
        try:
            (os.rmdir if name != temp_path else os.remove)(name)
        except OSError:
            pass


def update_checkpoint_state(save_dir, model_checkpoint_path, all_model_checkpoint_paths=None,
                            latest_filename=None, all_model_checkpoint_timestamps=None,
                            last_preserved_timestamp=None):
    """Writes the state file atomically; paths inside `save_dir` are stored relative to it."""
    save_dir = os.fspath(save_dir)
    paths = list(all_model_checkpoint_paths or [])
    if model_checkpoint_path not in paths:
        paths.append(model_checkpoint_path)

    def relative(p):
        rel = os.path.relpath(os.path.abspath(p), os.path.abspath(save_dir))
        return os.path.abspath(p) if rel.startswith(os.pardir) else rel
    lines = [f"model_checkpoint_path: {_quote(relative(model_checkpoint_path))}"]
    lines += [f"all_model_checkpoint_paths: {_quote(relative(p))}" for p in paths]
    lines += [f"all_model_checkpoint_timestamps: {t!r}"
              for t in all_model_checkpoint_timestamps or []]
    if last_preserved_timestamp is not None:
        lines.append(f"last_preserved_timestamp: {last_preserved_timestamp!r}")
    text = ("\n".join(lines) + "\n").encode("utf-8")
    _format.atomic_write(_state_path(save_dir, latest_filename), lambda f: f.write(text))


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """≈ `tf.train.latest_checkpoint`: the path of the newest checkpoint recorded in
    `checkpoint_dir`'s state file, or None if there is none or its file is gone."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state is None:
        return None
    path = state.model_checkpoint_path
    if not os.path.isfile(path):
        _log.error("Couldn't find the checkpoint file %s named by %s", path,
                   _state_path(checkpoint_dir, latest_filename))
        return None
    return path


# -- inspection ----------------------------------------------------------------------------------

def _resolve(ckpt_dir_or_file):
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        latest = latest_checkpoint(path)
        if latest is None:
            raise NotFoundError(None, None, f"No checkpoint state found in directory {path}.")
        return latest
    return path


#: The key TensorFlow lists for a checkpoint's object graph (a scalar string tensor there).
OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"


def list_variables(ckpt_dir_or_file):
    """≈ `tf.train.list_variables`: sorted (key, shape) pairs of a checkpoint (a file, or a
    directory's latest), TensorFlow's `_CHECKPOINTABLE_OBJECT_GRAPH` entry (shape `[]`, the
    object graph) included."""
    data = _format.read_checkpoint(_resolve(ckpt_dir_or_file))
    return sorted([(OBJECT_GRAPH_KEY, [])]
                  + [(key, list(array.shape)) for key, array in data.arrays.items()])


def load_variable(ckpt_dir_or_file, name):
    """≈ `tf.train.load_variable`: one value (a numpy array) by its checkpoint key; the
    object graph (`_CHECKPOINTABLE_OBJECT_GRAPH`) is bytes, as in TensorFlow, here its JSON."""
    data = _format.read_checkpoint(_resolve(ckpt_dir_or_file))
    if name == OBJECT_GRAPH_KEY:
        return json.dumps(data.nodes).encode()
    if name not in data.arrays and name + "/.ATTRIBUTES/VARIABLE_VALUE" in data.arrays:
        name += "/.ATTRIBUTES/VARIABLE_VALUE"
    if name not in data.arrays:
        raise NotFoundError(None, None, f"Key {name} not found in checkpoint {data.path}.")
    return data.arrays[name].copy()


# -- CheckpointManager ---------------------------------------------------------------------------

class CheckpointManager:
    """≈ `tf.train.CheckpointManager`: numbered saves in one directory, keeping the newest
    `max_to_keep` (None keeps all) plus, with `keep_checkpoint_every_n_hours`, one per that
    many hours. It picks up the checkpoints a previous run recorded in the state file."""

    def __init__(self, checkpoint, directory, max_to_keep, keep_checkpoint_every_n_hours=None,
                 checkpoint_name="ckpt", step_counter=None, checkpoint_interval=None,
                 init_from_checkpoint_fn=None):
        if max_to_keep is not None and max_to_keep <= 0:
            raise ValueError(f"Expected a positive integer or `None` for `max_to_keep`, got "
                             f"{max_to_keep}.")
        if checkpoint_interval is not None and step_counter is None:
            raise ValueError("`step_counter` should be passed if `checkpoint_interval` is "
                             "not None.")
        self._checkpoint = checkpoint
        self._directory = os.fspath(directory)
        self._max_to_keep = max_to_keep
        self._keep_every = keep_checkpoint_every_n_hours
        self._prefix = os.path.join(self._directory, checkpoint_name)
        self._step_counter = step_counter
        self._checkpoint_interval = checkpoint_interval
        self._init_fn = init_from_checkpoint_fn
        self._last_step = None
        self._checkpoints = {}  # path -> timestamp, oldest first
        self._bookkeeping = threading.Lock()
        self._last_preserved = time.time()
        state = get_checkpoint_state(self._directory)
        if state is not None:
            stamps = state.all_model_checkpoint_timestamps
            if len(stamps) != len(state.all_model_checkpoint_paths):
                stamps = [self._last_preserved] * len(state.all_model_checkpoint_paths)
            for path, stamp in zip(state.all_model_checkpoint_paths, stamps):
                if os.path.isfile(path):
                    self._checkpoints[path] = stamp
            if state.last_preserved_timestamp is not None:
                self._last_preserved = state.last_preserved_timestamp

    @property
    def directory(self):
        return self._directory

    @property
    def checkpoint(self):
        return self._checkpoint

    @property
    def checkpoint_interval(self):
        return self._checkpoint_interval

    @property
    def checkpoints(self):
        """The kept checkpoints' paths, oldest first."""
        return list(self._checkpoints)

    @property
    def latest_checkpoint(self):
        return next(reversed(self._checkpoints), None) if self._checkpoints else None

    def save(self, checkpoint_number=None, check_interval=True, options=None):
        """Writes `{directory}/{checkpoint_name}-{n}` (n: `checkpoint_number`, else the
        incremented save counter), drops checkpoints beyond `max_to_keep`, records the state
        and returns the path; None when `checkpoint_interval` says it is too early."""
        if self._checkpoint_interval is not None and check_interval:
            step = int(self._step_counter.numpy())
            if self._last_step is not None and step < self._last_step + self._checkpoint_interval:
                return None
            self._last_step = step
        taken = self._checkpoint._take_save_number()  # atomic: threads get distinct numbers
        number = taken if checkpoint_number is None else int(checkpoint_number)
        try:
            path = self._checkpoint.write(f"{self._prefix}-{number}", options=options)
        except BaseException:
            self._checkpoint._return_save_number(taken)
            raise
        with self._bookkeeping:  # one save at a time updates the list, the files, the state
            self._checkpoints.pop(path, None)  # an overwritten number moves to the end
            self._checkpoints[path] = time.time()
            if worker_temp_path(path) is not None:  # a non-chief worker: the chief's files
                while self._max_to_keep is not None \
                        and len(self._checkpoints) > self._max_to_keep:
                    self._checkpoints.pop(next(iter(self._checkpoints)))
                return path
            self._sweep()
            update_checkpoint_state(
                self._directory, path, list(self._checkpoints),
                all_model_checkpoint_timestamps=list(self._checkpoints.values()),
                last_preserved_timestamp=self._last_preserved)
        return path

    def _sweep(self):
        if self._max_to_keep is None:
            return
        while len(self._checkpoints) > self._max_to_keep:
            path = next(iter(self._checkpoints))
            stamp = self._checkpoints.pop(path)
            if (self._keep_every is not None
                    and stamp - self._last_preserved >= self._keep_every * 3600.0):
                self._last_preserved = stamp  # kept for good: no longer managed
                continue
            try:
                os.remove(path)
            except FileNotFoundError:
                pass

    def restore_or_initialize(self):
        """Restores the latest checkpoint and returns its path, or calls
        `init_from_checkpoint_fn` (if any) and returns None."""
        latest = self.latest_checkpoint
        if latest is not None:
            self._checkpoint.restore(latest)
            return latest
        if self._init_fn is not None:
            self._init_fn(self)
        return None
