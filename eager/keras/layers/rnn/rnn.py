"""`keras.layers.RNN(cell)`: a cell run over the time axis as ONE loop.

The loop is `eager.while_loop` over a `TensorArray` of time-major inputs, writing each step's
output into another `TensorArray`: eagerly it runs step by step; traced inside an
`eager.function` it is a single While op whatever the sequence length (also an unknown one),
not a Python loop unrolled over time; either way `GradientTape` differentiates through it.
`unroll=True` is accepted and runs the same loop (the numbers are the same).

As in Keras 3, `go_backwards=True` reads the sequence from the end and returns the sequence of
outputs in that (reversed) order. Stateful RNNs are not implemented and are refused.

A mask (batch, time) — passed as `mask=` or carried by the input from `Embedding(mask_zero=True)`
or `Masking` — skips steps as Keras 3 does: at a masked step the states are carried over
unchanged and the output is the previous step's output (zeros before the first unmasked step,
or zeros at every masked step with `zero_output_for_mask=True`); the returned sequence keeps
the input's mask (`compute_mask`) when `return_sequences=True`.
"""

from __future__ import annotations

import numpy as np

from ....base import nest
from ....control_flow.api import while_loop
from ....core import context as _context
from ....core.tensor_conversion import convert_to_tensor
from ....ops import array_ops as _array
from ....ops import composite_ops as _composite
from ....ops import creation_ops as _creation
from ....ops import math_ops as _math
from ....ops.tensor_array import TensorArray
from ...serialization import serialize_keras_object
from ..input_spec import InputSpec
from ..layer import Layer
from ..serialization import deserialize as deserialize_layer
from .stacked_cells import StackedRNNCells

__all__ = ["RNN"]


def _counter():
    """The loop's time counter, 0, on the CPU wherever the cells run: the loop's condition and
    the TensorArrays' indices read it on the host, and on a GPU each read of a device value
    waits for the device (TensorFlow keeps int32 scalars in host memory for this)."""
    with _context.device("CPU:0"):
        return convert_to_tensor(0)


def _next(t):
    with _context.device("CPU:0"):
        return t + 1


def _before(steps):
    """The loop's condition `t < steps`, on the CPU (see `_counter`)."""
    def cond(t, *_):
        with _context.device("CPU:0"):
            return t < steps
    return cond


class RNN(Layer):
    """≈ `keras.layers.RNN(cell, return_sequences=False, return_state=False,
    go_backwards=False, stateful=False, unroll=False, zero_output_for_mask=False)`."""

    def __init__(self, cell, return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, unroll=False, zero_output_for_mask=False, **kwargs):
        if isinstance(cell, (list, tuple)):
            cell = StackedRNNCells(cell)
        if "call" not in dir(cell):
            raise ValueError(f"Argument `cell` should have a `call` method. Received: "
                             f"cell={cell}")
        if "state_size" not in dir(cell):
            raise ValueError("The RNN cell should have a `state_size` attribute (single "
                             "integer or list of integers, one integer per RNN state). "
                             f"Received: cell={cell}")
        super().__init__(**kwargs)
        if stateful:
            raise NotImplementedError(f"{type(self).__name__}: stateful=True is not supported "
                                      "by eager.keras; carry the states yourself with "
                                      "`return_state=True` and `initial_state=`.")
        self.zero_output_for_mask = zero_output_for_mask
        self.cell = cell
        self.return_sequences = return_sequences
        self.return_state = return_state
        self.go_backwards = go_backwards
        self.stateful = stateful
        self.unroll = unroll
        self.supports_masking = True
        self.input_spec = None
        self.states = None
        state_size = cell.state_size
        self.single_state = not isinstance(state_size, (list, tuple))
        self.state_size = [state_size] if self.single_state else list(state_size)

    def build(self, sequences_shape):
        if len(sequences_shape) != 3:
            raise ValueError(f"Input should have rank 3 (batch, time, features); received "
                             f"input shape {tuple(sequences_shape)} for layer '{self.name}'.")
        step_shape = (sequences_shape[0], *sequences_shape[2:])
        if not self.cell.built:
            with self.cell._scope():
                self.cell.build(step_shape)
            self.cell.built = True
        self.input_spec = InputSpec(min_ndim=3)

    def get_initial_state(self, batch_size):
        get = getattr(self.cell, "get_initial_state", None)
        if get is not None:
            return list(get(batch_size))
        from .cells import _CellBase   # noqa: PLC0415 - the zeros helper, for duck-typed cells
        return _CellBase.get_initial_state(self.cell, batch_size)

    def call(self, sequences, initial_state=None, mask=None, training=False):
        if mask is not None:
            mask = nest.flatten(mask)[0]
        batch = sequences.shape[0]
        if batch is None:
            batch = _array.shape(sequences)[0]
        if initial_state is None:
            states = nest.flatten(self.get_initial_state(batch))
        else:
            states = list(nest.flatten(initial_state))
            expected = len(nest.flatten(self.state_size))
            if len(states) != expected:
                raise ValueError(f"Layer {self.name} expects {expected} "
                                 f"state(s), but it received {len(states)} initial state(s).")
        dropout_cells = self._draw_dropout_masks(sequences, states) if training else []
        try:
            last, outputs, states = self._scan(sequences, states, training, mask, batch)
        finally:
            for cell in dropout_cells:
                cell.reset_dropout_mask()
                cell.reset_recurrent_dropout_mask()
        output = outputs if self.return_sequences else last
        if self.return_state:
            return [output, *nest.pack_sequence_as(self.state_size, states)]
        return output

    def _draw_dropout_masks(self, sequences, states) -> list:
        """Has each cell that uses dropout draw its masks for this sequence, before the loop
        (Keras 3: one mask per sequence): the input mask shaped like the cell's step input,
        the recurrent one like its first state. Returns those cells, to reset after."""
        stacked = getattr(self.cell, "cells", None)
        cells = stacked or [self.cell]
        per_cell = nest.pack_sequence_as(self.state_size, states) if stacked else [states]
        step, used = sequences[:, 0], []
        for cell, cell_states in zip(cells, per_cell):
            first_state = nest.flatten(cell_states)[0]
            if hasattr(cell, "get_dropout_mask") and (getattr(cell, "dropout", 0) or
                                                      getattr(cell, "recurrent_dropout", 0)):
                if cell.dropout > 0:
                    cell.get_dropout_mask(step)
                if cell.recurrent_dropout > 0:
                    cell.get_recurrent_dropout_mask(first_state)
                used.append(cell)
            step = first_state     # the next cell's input is shaped like this one's output
        return used

    def _scan(self, sequences, states, training, mask=None, batch=None):
        """(last output, [batch, time, units] outputs or None, final states): one while_loop.
        With a mask, the loop also carries the previous output and selects, per sample,
        between the step's results and what it carries (see the module doc)."""
        time_major = _array.transpose(sequences, [1, 0, 2])
        if self.go_backwards:
            time_major = _composite.reverse(time_major, [0])
        steps = sequences.shape[1]
        if steps is None:
            steps = _array.shape(sequences)[1]
        inputs = TensorArray(sequences.dtype, size=steps).unstack(time_major)
        written = TensorArray(sequences.dtype, size=steps)
        cell = self.cell
        takes_training = isinstance(cell, Layer) and cell._call_has_training_arg
        cell_kwargs = {"training": training} if takes_training else {}

        if mask is None:
            def body(t, written, *states):
                # The cell gets its states as a list, a single state too (Keras's contract);
                # a stack of cells gets one entry per cell.
                output, new_states = cell(inputs.read(t), self._pack_states(states),
                                          **cell_kwargs)
                new_states = nest.flatten(new_states)
                return (_next(t), written.write(t, output), *new_states)

            result = while_loop(_before(steps), body, (_counter(), written, *states))
            written, final_states = result[1], list(result[2:])
        else:
            written, final_states = self._masked_loop(inputs, written, states, mask, steps,
                                                      batch, cell_kwargs)
        # A TensorArray read consumes its element (clear_after_read), so the last output is
        # taken from the stacked sequence when that is wanted too.
        if self.return_sequences:
            outputs = _array.transpose(written.stack(), [1, 0, 2])
            return outputs[:, -1], outputs, final_states
        return written.read(steps - 1), None, final_states

    def _masked_loop(self, inputs, written, states, mask, steps, batch, cell_kwargs):
        """The loop of `_scan` for a masked sequence: (written outputs, final states)."""
        if mask.dtype.name != "bool":
            mask = _math.cast(mask, "bool")
        steps_mask = _array.transpose(_array.expand_dims(mask, -1), [1, 0, 2])  # time, batch, 1
        if self.go_backwards:
            steps_mask = _composite.reverse(steps_mask, [0])
        masks = TensorArray("bool", size=steps).unstack(steps_mask)
        cell = self.cell
        size = getattr(cell, "output_size", None) or self.state_size[0]
        shape = (int(batch), size) if isinstance(batch, (int, np.integer)) else \
            _array.stack([batch, size])
        zeros = _creation.zeros(shape, dtype=inputs.dtype)
        zero_output = self.zero_output_for_mask

        def body(t, written, previous, *states):
            output, new_states = cell(inputs.read(t), self._pack_states(states), **cell_kwargs)
            keep = masks.read(t)
            output = _math.where(keep, output, zeros if zero_output else previous)
            new_states = [_math.where(keep, new, old)
                          for new, old in zip(nest.flatten(new_states), states)]
            return (_next(t), written.write(t, output), output, *new_states)

        result = while_loop(_before(steps), body, (_counter(), written, zeros, *states))
        return result[1], list(result[3:])

    def _pack_states(self, flat_states) -> list:
        return nest.pack_sequence_as(self.state_size, list(flat_states))

    def compute_mask(self, _, mask):
        """The output sequence keeps the input's mask (`return_sequences=True`); the last
        output and the states have none."""
        mask = nest.flatten(mask)[0] if mask is not None else None
        output_mask = mask if self.return_sequences else None
        if self.return_state:
            return [output_mask] + [None for _ in self.state_size]
        return output_mask

    def compute_output_shape(self, sequences_shape, initial_state_shape=None):
        batch, steps = sequences_shape[0], sequences_shape[1]
        size = getattr(self.cell, "output_size", None) or self.state_size[0]
        output = (batch, steps, size) if self.return_sequences else (batch, size)
        if self.return_state:
            return [output, *(nest.map_structure(lambda s: (batch, s), size)
                              if isinstance(size, (list, tuple)) else (batch, size)
                              for size in self.state_size)]
        return output

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({
            "return_sequences": self.return_sequences, "return_state": self.return_state,
            "go_backwards": self.go_backwards, "stateful": self.stateful,
            "unroll": self.unroll, "zero_output_for_mask": self.zero_output_for_mask,
            "cell": serialize_keras_object(self.cell)})
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        config["cell"] = deserialize_layer(config["cell"], custom_objects)
        return cls(**config)

