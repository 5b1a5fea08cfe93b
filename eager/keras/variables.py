"""`KerasVariable`: the variable `Layer.add_weight` makes, an `eager.Variable` with Keras 3's
face.

Keras 3 names a weight by its short name (`kernel`) and keeps where it lives as its `path`
(`sequential/dense/kernel`); it carries its regularizer and constraint, and its `trainable`
flag can be switched (a frozen layer freezes its weights). Everything else — reads, `assign*`,
tapes, optimizers, checkpoints, functions — is the `ResourceVariable` underneath, so a layer's
weights work wherever an `eager.Variable` does (`isinstance(w, eager.Variable)` holds, unlike
Keras 3 on TensorFlow, where weights wrap a `tf.Variable`).

The initial value is computed in `init_scope`: a layer built while a function is being traced
(its first call inside `eager.function`) still gets concrete, eagerly initialised weights, as
variables lifted out of a trace are.
"""

from __future__ import annotations

import numpy as np

from ..functions.lifting import init_scope
from ..core import context as _context
from ..variables import ResourceVariable

__all__ = ["KerasVariable"]


class KerasVariable(ResourceVariable):
    """A layer's weight (see the module doc). Build one with `Layer.add_weight`."""

    __slots__ = ("_short_name", "_path", "regularizer", "overwrite_with_gradient", "autocast")

    def __init__(self, initializer, shape, dtype, trainable=True, name=None, regularizer=None,
                 constraint=None, autocast=True, overwrite_with_gradient=False):
        short = "variable" if name is None else str(name)
        if "/" in short:
            raise ValueError("Argument `name` must be a string and cannot contain character `/`. "
                             f"Received: name={short}")
        path = _context.thread_state().name_scope + short
        with init_scope():
            value = initializer(tuple(shape), dtype=dtype) if callable(initializer) \
                else initializer
            super().__init__(value, trainable=trainable, name=short, dtype=dtype,
                             constraint=constraint)
        self._short_name = short
        self._path = path
        self.regularizer = regularizer
        self.overwrite_with_gradient = bool(overwrite_with_gradient)
        self.autocast = bool(autocast)

    @property
    def name(self) -> str:
        """The short name given to `add_weight` ("kernel"), as Keras 3 reports it."""
        return self._short_name

    @property
    def path(self) -> str:
        """Where the weight lives: the enclosing layers' names and its own ("dense/kernel")."""
        return self._path

    @property
    def trainable(self) -> bool:
        return self._trainable

    @trainable.setter
    def trainable(self, value) -> None:
        self._trainable = bool(value)

    def __repr__(self):
        value = np.array2string(self.numpy(), separator=" ") if self.shape.rank else \
            repr(self.numpy().item())
        return (f"<Variable path={self._path}, shape={tuple(self.shape)}, "
                f"dtype={self.dtype.name}, value={value}>")
