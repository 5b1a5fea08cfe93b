"""`SimpleRNN`, `LSTM`, `GRU`: `RNN` over the matching cell, with the cell's arguments flat
(Keras 3's layers). Their weights live in the cell ("lstm/lstm_cell/kernel") and their config
is the cell's arguments plus the RNN's flags, as Keras writes it."""

from __future__ import annotations

from .cells import GRUCell, LSTMCell, SimpleRNNCell
from .rnn import RNN

__all__ = ["SimpleRNN", "LSTM", "GRU"]

_RNN_FLAGS = ("return_sequences", "return_state", "go_backwards", "stateful", "unroll")


class _CellRNN(RNN):
    """An RNN that makes its own cell from the flat arguments (`_cell_class`)."""

    _cell_class = None

    def __init__(self, units, activity_regularizer=None, return_sequences=False,
                 return_state=False, go_backwards=False, stateful=False, unroll=False,
                 zero_output_for_mask=False, **cell_kwargs):
        layer_kwargs = {k: cell_kwargs.pop(k) for k in
                        ("name", "trainable", "dtype", "input_shape", "batch_size",
                         "batch_input_shape", "input_dim", "autocast")
                        if k in cell_kwargs}
        cell_kwargs.pop("use_cudnn", None)
        cell = self._cell_class(units, name=_cell_name(self._cell_class),
                                dtype=layer_kwargs.get("dtype"), **cell_kwargs)
        super().__init__(cell, return_sequences=return_sequences, return_state=return_state,
                         go_backwards=go_backwards, stateful=stateful, unroll=unroll,
                         zero_output_for_mask=zero_output_for_mask,
                         activity_regularizer=activity_regularizer, **layer_kwargs)
        self.input_spec = None

    def __getattr__(self, name):
        # The cell's arguments read through the layer (`lstm.units`, `lstm.kernel`...).
        cell = vars(self).get("cell")
        if cell is not None and not name.startswith("_"):
            return getattr(cell, name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def get_config(self) -> dict:
        config = super().get_config()
        del config["cell"]
        config.update(self.cell._config())
        config["activity_regularizer"] = config.get("activity_regularizer")
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return cls(**config)


def _cell_name(cell_class) -> str:
    return {"SimpleRNNCell": "simple_rnn_cell", "LSTMCell": "lstm_cell",
            "GRUCell": "gru_cell"}[cell_class.__name__]


class SimpleRNN(_CellRNN):
    """≈ `keras.layers.SimpleRNN(units, activation="tanh", use_bias=True, ...,
    return_sequences=False, return_state=False, go_backwards=False)`."""

    _cell_class = SimpleRNNCell

    def get_config(self) -> dict:
        config = super().get_config()
        del config["seed"]   # Keras 3's SimpleRNN config has no seed (its cell's has)
        return config


class LSTM(_CellRNN):
    """≈ `keras.layers.LSTM(units, activation="tanh", recurrent_activation="sigmoid",
    use_bias=True, unit_forget_bias=True, ..., return_sequences=False, return_state=False,
    go_backwards=False)`; returns [output, h, c] with `return_state`."""

    _cell_class = LSTMCell


class GRU(_CellRNN):
    """≈ `keras.layers.GRU(units, activation="tanh", recurrent_activation="sigmoid",
    use_bias=True, reset_after=True, ..., return_sequences=False, return_state=False,
    go_backwards=False)`."""

    _cell_class = GRUCell
