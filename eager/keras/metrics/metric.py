"""`keras.metrics.Metric`: state held in non-trainable variables, so metrics trace and save.

A metric creates its state with `add_variable(shape, initializer, dtype, aggregation, name)`;
`update_state(...)` assigns to those variables (inside an `eager.function` the assigns are
traced ops, so a compiled train step updates the metric), `result()` reads them, and
`reset_state()` zeroes them. `__call__(...)` is `update_state(...)` then `result()`.

Metrics are `Trackable`: a metric assigned to a `Module` or `eager.train.Checkpoint` is saved
and restored with it (its variables named by the attributes that hold them), and a variable a
metric creates after a restore (an `AUC` that builds on its first update) gets the restored
value when it appears.
"""

from __future__ import annotations

import numpy as np

from ...core.context import name_scope
from ...state.trackable import Trackable, children_added
from ...distribute import strategy as _strategy
from ...variables import Variable, VariableAggregation, VariableSynchronization
from ..losses.loss import _float_dtype
from ..utils import loss_ops as kops
from ..backend import auto_name

__all__ = ["Metric"]

_AGGREGATIONS = {"none": VariableAggregation.NONE, "mean": VariableAggregation.MEAN,
                 "sum": VariableAggregation.SUM,
                 "only_first_replica": VariableAggregation.ONLY_FIRST_REPLICA}


def _initial_value(initializer, shape, dtype):
    """The starting value for `add_variable`: "zeros"/"ones"/None, a number, or a Keras-style
    initializer (a callable taking `(shape, dtype=...)`)."""
    if initializer is None or initializer == "zeros":
        return np.zeros(shape, dtype=dtype)
    if initializer == "ones":
        return np.ones(shape, dtype=dtype)
    if isinstance(initializer, (int, float)):
        return np.full(shape, initializer, dtype=dtype)
    if callable(initializer):
        return kops.convert(initializer(shape, dtype=dtype), dtype)
    raise ValueError(f"Could not interpret initializer identifier: {initializer}")


class Metric(Trackable):
    """≈ `keras.metrics.Metric(dtype=None, name=None)`. Subclasses create their state in
    `__init__` with `add_variable`, and implement `update_state` and `result`."""

    def __init__(self, dtype=None, name=None):
        self.name = name or auto_name(self.__class__.__name__)
        self._dtype = _float_dtype(dtype)
        self._metrics = []
        self._variables = []

    # -- state -----------------------------------------------------------------------------

    def add_variable(self, shape, initializer, dtype=None, aggregation="sum", name=None):
        """A non-trainable variable holding part of the metric's state (tracked by the metric).
        `aggregation` is one of Keras's: "none", "mean", "sum", "only_first_replica"; the
        variable is synchronised on read under a strategy (as Keras on TensorFlow makes it): in a
        strategy's `scope()` each replica updates its own component and a cross-replica read
        aggregates them this way."""
        self._check_super_called()
        if aggregation not in _AGGREGATIONS:
            raise ValueError("Invalid value for argument `aggregation`. Expected one of "
                             f"{list(_AGGREGATIONS)}. Received: aggregation={aggregation}")
        dtype = _float_dtype(dtype)
        shape = tuple(int(d) for d in shape)
        with name_scope(self.name.replace("/", ">")):
            replicated = {}
            if _strategy.has_strategy():  # plain variables take neither argument
                replicated = {"synchronization": VariableSynchronization.ON_READ,
                              "aggregation": _AGGREGATIONS[aggregation]}
            variable = Variable(_initial_value(initializer, shape, dtype), trainable=False,
                                name=name, dtype=dtype, **replicated)
        self._variables.append(variable)
        children_added(self)
        return variable

    def add_weight(self, shape=(), initializer=None, dtype=None, name=None):
        """The older name of `add_variable` (Keras keeps it)."""
        return self.add_variable(shape=shape, initializer=initializer, dtype=dtype, name=name)

    @property
    def variables(self) -> list:
        """The metric's variables in creation order, then its sub-metrics'."""
        variables = list(self._variables)
        for metric in self._metrics:
            variables.extend(metric.variables)
        return variables

    @property
    def dtype(self) -> str:
        return self._dtype

    def reset_state(self):
        """Zero every state variable."""
        for variable in self.variables:
            variable.assign(kops.zeros(variable.shape, dtype=variable.dtype))

    # -- the interface subclasses implement -------------------------------------------------

    def update_state(self, *args, **kwargs):
        raise NotImplementedError

    def result(self):
        raise NotImplementedError

    def __call__(self, *args, **kwargs):
        self._check_super_called()
        self.update_state(*args, **kwargs)
        return self.result()

    # -- config ------------------------------------------------------------------------------

    def get_config(self) -> dict:
        return {"name": self.name, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    # -- tracking ----------------------------------------------------------------------------

    def __setattr__(self, name, value):
        # Sub-metrics are tracked as Keras tracks them; a variable or metric attached after a
        # checkpoint restore gets the values waiting for it under this attribute's name.
        object.__setattr__(self, name, value)
        if isinstance(value, Metric) and "_metrics" in vars(self):
            if not any(m is value for m in self._metrics):
                self._metrics.append(value)
        if isinstance(value, (Variable, Metric)):
            children_added(self)

    def _trackable_children(self) -> dict:
        """Checkpoint children: each state variable under the attribute that holds it (or
        "variable_<i>" when none does), and each sub-metric under its attribute."""
        children = {}
        for key, value in vars(self).items():
            if isinstance(value, (Variable, Metric)):
                children[key] = value
        named = {id(v) for v in children.values()}
        for i, variable in enumerate(self._variables):
            if id(variable) not in named:
                children[f"variable_{i}"] = variable
        return children

    def _check_super_called(self):
        if "_variables" not in vars(self):
            raise RuntimeError("You forgot to call `super().__init__()` in the `__init__()` "
                               "method. Go add it!")

    def __repr__(self):
        return f"<{self.__class__.__name__} name={self.name}>"

    def __str__(self):
        return self.__repr__()
