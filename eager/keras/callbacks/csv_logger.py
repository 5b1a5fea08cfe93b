"""`keras.callbacks.CSVLogger`: one CSV row of logs per epoch."""

from __future__ import annotations

import collections
import csv
import os

import numpy as np

from .callback import Callback

__all__ = ["CSVLogger"]


def _cell(value):
    if isinstance(value, str):
        return value
    if isinstance(value, collections.abc.Iterable) and not (
            isinstance(value, np.ndarray) and value.ndim == 0):
        return f'"[{", ".join(map(str, value))}]"'
    return value


class CSVLogger(Callback):
    """≈ `keras.callbacks.CSVLogger(filename, separator=",", append=False)`: columns are
    "epoch" then the first epoch's log names sorted (plus their `val_` names when the first
    epoch had no validation); a missing value is written "NA"."""

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.sep = separator
        self.filename = os.fspath(filename)
        self.append = append
        self.writer = None
        self.keys = None
        self.append_header = True
        self.csv_file = None

    def on_train_begin(self, logs=None):
        if self.append:
            if os.path.exists(self.filename):
                with open(self.filename) as f:
                    self.append_header = not bool(len(f.readline()))
            mode = "a"
        else:
            mode = "w"
        if self.csv_file and not self.csv_file.closed:
            self.csv_file.close()
        self.csv_file = open(self.filename, mode, newline="")  # noqa: SIM115 - open for fit
        self.writer = None
        self.keys = None

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs.keys())
            if self.keys and not any(k.startswith("val_") for k in self.keys):
                self.keys.extend([f"val_{k}" for k in self.keys])
        if not self.writer:
            sep = self.sep

            class Dialect(csv.excel):
                delimiter = sep
            self.writer = csv.DictWriter(self.csv_file, fieldnames=["epoch"] + self.keys,
                                         dialect=Dialect)
            if self.append_header:
                self.writer.writeheader()
        row = {"epoch": epoch}
        row.update((key, _cell(logs.get(key, "NA"))) for key in self.keys)
        self.writer.writerow(row)
        self.csv_file.flush()

    def on_train_end(self, logs=None):
        if self.csv_file and not self.csv_file.closed:
            self.csv_file.close()
        self.writer = None
