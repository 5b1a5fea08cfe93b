"""The recurrent cells: one time step of `SimpleRNN`, `LSTM` and `GRU`, with Keras 3's weights.

Weight layouts are Keras 3's, so weights move between Keras and eager unchanged: `kernel`
(input_dim, k * units), `recurrent_kernel` (units, k * units), `bias`, with the gates side by
side along the last axis — LSTM's in the order i, f, c, o; GRU's z, r, h (GRU's bias is
(2, 3 * units) with `reset_after=True`, the input and recurrent biases in two rows). A cell's
`call(inputs, states, training=False)` returns `(output, new_states)`; `RNN` runs it over time.

`dropout` (on the inputs) and `recurrent_dropout` (on the previous output) apply in training
only, with ONE mask per sequence as in Keras 3: `RNN` draws the masks before its loop
(`get_dropout_mask`/`get_recurrent_dropout_mask`, from eager's stateful dropout op, scaled by
1 / (1 - rate)), every step reuses them, and they are dropped after the call
(`reset_dropout_mask`). A cell called on its own keeps its masks until reset, as Keras's does.
With `recurrent_dropout`, LSTM and GRU switch to Keras's `implementation=1`: a separate mask per
gate (4 for LSTM, 3 for GRU). The masks are eager's random draws, not Keras's.
"""

from __future__ import annotations

import numpy as np

from ....ops import array_ops as _array
from ....ops import creation_ops as _creation
from ....ops import product_ops as _product
from ....ops import random_ops as _random
from ... import activations, constraints, initializers, regularizers
from ..layer import Layer

__all__ = ["SimpleRNNCell", "LSTMCell", "GRUCell"]


class _CellBase(Layer):
    """Arguments, checks and config shared by the three cells."""

    _gates = 1

    def __init__(self, units, activation="tanh", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, seed=None,
                 **kwargs):
        if units <= 0:
            raise ValueError("Received an invalid value for argument `units`, expected a "
                             f"positive integer, got {units}.")
        self.implementation = kwargs.pop("implementation", 2)
        super().__init__(**kwargs)
        self.units = units
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.recurrent_constraint = constraints.get(recurrent_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.dropout = min(1.0, max(0.0, dropout))
        self.recurrent_dropout = min(1.0, max(0.0, recurrent_dropout))
        self.seed = seed
        if self.recurrent_dropout != 0.0 and self._gates > 1:
            self.implementation = 1
        self.state_size = units
        self.output_size = units
        self._dropout_mask = None
        self._recurrent_dropout_mask = None

    # -- dropout masks (one per sequence, see the module doc) ----------------------------------
    def _mask_count(self):
        return self._gates if self._gates > 1 and self.implementation == 1 else None

    def _create_dropout_mask(self, step_input, rate):
        ones = _creation.ones_like(step_input)
        count = self._mask_count()
        if count is None:
            return _random.dropout(ones, rate, seed=self.seed)
        return [_random.dropout(ones, rate, seed=self.seed) for _ in range(count)]

    def get_dropout_mask(self, step_input):
        if self._dropout_mask is None and self.dropout > 0:
            self._dropout_mask = self._create_dropout_mask(step_input, self.dropout)
        return self._dropout_mask

    def get_recurrent_dropout_mask(self, step_input):
        if self._recurrent_dropout_mask is None and self.recurrent_dropout > 0:
            self._recurrent_dropout_mask = self._create_dropout_mask(step_input,
                                                                     self.recurrent_dropout)
        return self._recurrent_dropout_mask

    def reset_dropout_mask(self):
        self._dropout_mask = None

    def reset_recurrent_dropout_mask(self):
        self._recurrent_dropout_mask = None

    def _input_masks(self, inputs, training):
        return self.get_dropout_mask(inputs) if training and 0.0 < self.dropout < 1.0 \
            else None

    def _recurrent_masks(self, h_prev, training):
        return self.get_recurrent_dropout_mask(h_prev) \
            if training and 0.0 < self.recurrent_dropout < 1.0 else None

    @staticmethod
    def _project(x, kernel, masks):
        """x @ kernel; with dropout, x times its mask first (one mask per gate: each gate's
        columns of the kernel get the input under its own mask)."""
        if masks is None:
            return _product.matmul(x, kernel)
        if not isinstance(masks, list):
            return _product.matmul(x * masks, kernel)
        parts = _array.split(kernel, len(masks), axis=-1)
        return _array.concat([_product.matmul(x * m, k) for m, k in zip(masks, parts)],
                             axis=-1)

    def _build_kernels(self, input_dim, bias_shape, bias_initializer):
        width = self._gates * self.units
        self.kernel = self.add_weight(shape=(input_dim, width), name="kernel",
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight(shape=(self.units, width),
                                                name="recurrent_kernel",
                                                initializer=self.recurrent_initializer,
                                                regularizer=self.recurrent_regularizer,
                                                constraint=self.recurrent_constraint)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(shape=bias_shape, name="bias",
                                        initializer=bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)

    def get_initial_state(self, batch_size=None):
        sizes = self.state_size if isinstance(self.state_size, (list, tuple)) \
            else [self.state_size]
        return [_creation.zeros(_array.stack([batch_size, size]) if not
                                isinstance(batch_size, (int, np.integer)) else
                                (int(batch_size), size), dtype=self.dtype) for size in sizes]

    def _config(self) -> dict:
        return {
            "units": self.units, "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
            "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "recurrent_initializer": initializers.serialize(self.recurrent_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
            "recurrent_regularizer": regularizers.serialize(self.recurrent_regularizer),
            "bias_regularizer": regularizers.serialize(self.bias_regularizer),
            "kernel_constraint": constraints.serialize(self.kernel_constraint),
            "recurrent_constraint": constraints.serialize(self.recurrent_constraint),
            "bias_constraint": constraints.serialize(self.bias_constraint),
            "dropout": self.dropout, "recurrent_dropout": self.recurrent_dropout,
            "seed": self.seed}

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(self._config())
        return config


def _state(states):
    return states[0] if isinstance(states, (list, tuple)) else states


class SimpleRNNCell(_CellBase):
    """≈ `keras.layers.SimpleRNNCell(units, activation="tanh", use_bias=True, ...)`:
    h = activation(x @ kernel + bias + h_prev @ recurrent_kernel)."""

    def build(self, input_shape):
        self._build_kernels(input_shape[-1], (self.units,), self.bias_initializer)

    def call(self, sequence, states, training=False):
        h_prev = _state(states)
        h = self._project(sequence, self.kernel, self._input_masks(sequence, training))
        if self.bias is not None:
            h = h + self.bias
        output = h + self._project(h_prev, self.recurrent_kernel,
                                   self._recurrent_masks(h_prev, training))
        if self.activation is not None:
            output = self.activation(output)
        return output, ([output] if isinstance(states, (list, tuple)) else output)


class LSTMCell(_CellBase):
    """≈ `keras.layers.LSTMCell(units, activation="tanh", recurrent_activation="sigmoid",
    use_bias=True, unit_forget_bias=True, ...)`; states [h, c]; gates i, f, c, o."""

    _gates = 4

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid",
                 use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, seed=None,
                 **kwargs):
        super().__init__(units, activation=activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer,
                         recurrent_initializer=recurrent_initializer,
                         bias_initializer=bias_initializer,
                         kernel_regularizer=kernel_regularizer,
                         recurrent_regularizer=recurrent_regularizer,
                         bias_regularizer=bias_regularizer, kernel_constraint=kernel_constraint,
                         recurrent_constraint=recurrent_constraint,
                         bias_constraint=bias_constraint, dropout=dropout,
                         recurrent_dropout=recurrent_dropout, seed=seed, **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.unit_forget_bias = unit_forget_bias
        self.state_size = [units, units]

    def build(self, input_shape):
        bias_initializer = self.bias_initializer
        if self.use_bias and self.unit_forget_bias:
            base, units = self.bias_initializer, self.units

            def bias_initializer(shape, dtype=None):
                # The forget gate's bias starts at 1 (Jozefowicz et al.), the rest as asked.
                return np.concatenate([np.asarray(base((units,), dtype=dtype)),
                                       np.ones((units,), dtype=dtype),
                                       np.asarray(base((2 * units,), dtype=dtype))])
        self._build_kernels(input_shape[-1], (4 * self.units,), bias_initializer)

    def call(self, inputs, states, training=False):
        h_prev, c_prev = states[0], states[1]
        z = self._project(inputs, self.kernel, self._input_masks(inputs, training)) + \
            self._project(h_prev, self.recurrent_kernel, self._recurrent_masks(h_prev, training))
        if self.bias is not None:
            z = z + self.bias
        z0, z1, z2, z3 = _array.split(z, 4, axis=-1)
        i = self.recurrent_activation(z0)
        f = self.recurrent_activation(z1)
        c = f * c_prev + i * self.activation(z2)
        o = self.recurrent_activation(z3)
        h = o * self.activation(c)
        return h, [h, c]

    def _config(self) -> dict:
        config = super()._config()
        config["recurrent_activation"] = activations.serialize(self.recurrent_activation)
        config["unit_forget_bias"] = self.unit_forget_bias
        return config


class GRUCell(_CellBase):
    """≈ `keras.layers.GRUCell(units, activation="tanh", recurrent_activation="sigmoid",
    use_bias=True, reset_after=True, ...)`; gates z, r, h. With `reset_after` the reset gate
    multiplies the recurrent projection after the matmul (cuDNN's form, Keras's default)."""

    _gates = 3

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid",
                 use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 kernel_constraint=None, recurrent_constraint=None, bias_constraint=None,
                 dropout=0.0, recurrent_dropout=0.0, reset_after=True, seed=None, **kwargs):
        super().__init__(units, activation=activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer,
                         recurrent_initializer=recurrent_initializer,
                         bias_initializer=bias_initializer,
                         kernel_regularizer=kernel_regularizer,
                         recurrent_regularizer=recurrent_regularizer,
                         bias_regularizer=bias_regularizer, kernel_constraint=kernel_constraint,
                         recurrent_constraint=recurrent_constraint,
                         bias_constraint=bias_constraint, dropout=dropout,
                         recurrent_dropout=recurrent_dropout, seed=seed, **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.reset_after = reset_after

    def build(self, input_shape):
        shape = (2, 3 * self.units) if self.reset_after else (3 * self.units,)
        self._build_kernels(input_shape[-1], shape, self.bias_initializer)

    def call(self, inputs, states, training=False):
        h_prev = _state(states)
        units = self.units
        x = self._project(inputs, self.kernel, self._input_masks(inputs, training))
        masks = self._recurrent_masks(h_prev, training)
        if masks is not None and not isinstance(masks, list):
            masks = [masks] * 3
        if self.bias is not None:
            input_bias, recurrent_bias = (self.bias[0], self.bias[1]) if self.reset_after \
                else (self.bias, None)
            x = x + input_bias
        x_z, x_r, x_h = _array.split(x, 3, axis=-1)
        if self.reset_after:
            inner = self._project(h_prev, self.recurrent_kernel, masks)
            if self.bias is not None:
                inner = inner + recurrent_bias
            in_z, in_r, in_h = _array.split(inner, 3, axis=-1)
            z = self.recurrent_activation(x_z + in_z)
            r = self.recurrent_activation(x_r + in_r)
            hh = self.activation(x_h + r * in_h)
        else:
            u_zr = self.recurrent_kernel[:, :2 * units]
            in_z, in_r = _array.split(
                self._project(h_prev, u_zr, None if masks is None else masks[:2]), 2, axis=-1)
            z = self.recurrent_activation(x_z + in_z)
            r = self.recurrent_activation(x_r + in_r)
            h_reset = r * (h_prev if masks is None else h_prev * masks[2])
            hh = self.activation(x_h + _product.matmul(h_reset,
                                                       self.recurrent_kernel[:, 2 * units:]))
        h = z * h_prev + (1.0 - z) * hh
        return h, ([h] if isinstance(states, (list, tuple)) else h)

    def _config(self) -> dict:
        config = super()._config()
        config["recurrent_activation"] = activations.serialize(self.recurrent_activation)
        config["reset_after"] = self.reset_after
        return config
