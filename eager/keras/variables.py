"""`KerasVariable`: the variable `Layer.add_weight` makes, an `eager.Variable` with Keras 3's
face.

Keras 3 names a weight by its short name (`kernel`) and keeps where it lives as its `path`
(`sequential/dense/kernel`); it carries its regularizer and constraint, and its `trainable`
flag can be switched (a frozen layer freezes its weights). Everything else — reads, `assign*`,
tapes, optimizers, checkpoints, functions — is the `ResourceVariable` underneath, so a layer's
weights work wherever an `eager.Variable` does (`isinstance(w, eager.Variable)` holds, unlike
Keras 3 on TensorFlow, where weights wrap a `tf.Variable`).

Under a distribution strategy's `scope()`, `make_weight` hands the weight to the strategy's
variable creator (the one `eager.Variable(...)` goes through), with a `KerasVariable` at the
bottom: the weight becomes a `MirroredVariable` (a metric's state, made with
`synchronization="on_read"`, a `SyncOnReadVariable`) whose components are `KerasVariable`s
with the same name and path.

The initial value is computed in `init_scope`: a layer built while a function is being traced
(its first call inside `eager.function`) still gets concrete, eagerly initialised weights, as
variables lifted out of a trace are.
"""

from __future__ import annotations

import numpy as np

from ..functions.lifting import init_scope
from ..core import context as _context
from ..distribute import strategy as _strategy
from ..variables import ResourceVariable, VariableAggregation, VariableSynchronization

__all__ = ["KerasVariable", "make_weight"]

_AGGREGATION = {"none": VariableAggregation.NONE, "sum": VariableAggregation.SUM,
                "mean": VariableAggregation.MEAN,
                "only_first_replica": VariableAggregation.ONLY_FIRST_REPLICA}
_SYNCHRONIZATION = {"auto": VariableSynchronization.AUTO,
                    "on_read": VariableSynchronization.ON_READ,
                    "on_write": VariableSynchronization.ON_WRITE}


def make_weight(initializer, shape, dtype, trainable=True, name=None, aggregation="none",
                synchronization="auto", **keras_kwargs):
    """A `KerasVariable`, or, inside a strategy's `scope()`, the strategy's distributed
    variable whose components are `KerasVariable`s (see the module doc)."""
    if not _strategy.has_strategy():  # the common case: no lookup beyond this
        return KerasVariable(initializer, shape, dtype, trainable=trainable, name=name,
                             **keras_kwargs)
    agg = _AGGREGATION.get(aggregation, VariableAggregation.NONE) \
        if isinstance(aggregation, str) else aggregation
    sync = _SYNCHRONIZATION[synchronization] if isinstance(synchronization, str) \
        else synchronization

    def bottom(next_creator=None, initial_value=None, trainable=True, **_):
        # Replica components are named "<name>/replica_i" by the strategy; a Keras weight
        # keeps its short name and path on every component.
        return KerasVariable(initial_value, shape, dtype, trainable=trainable, name=name,
                             **keras_kwargs)

    def initial_value():
        with init_scope():
            return initializer(tuple(shape), dtype=dtype) if callable(initializer) \
                else initializer

    return _strategy.get_strategy()._create_variable(
        bottom, initial_value=initial_value, trainable=trainable, name=name, dtype=dtype,
        synchronization=sync, aggregation=agg)


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
