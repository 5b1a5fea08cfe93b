"""Recurrent layers (≈ `keras.layers.SimpleRNN`, `LSTM`, `GRU`, their cells, `RNN`)."""

from .cells import GRUCell, LSTMCell, SimpleRNNCell
from .layers import GRU, LSTM, SimpleRNN
from .rnn import RNN

__all__ = ["RNN", "SimpleRNN", "LSTM", "GRU", "SimpleRNNCell", "LSTMCell", "GRUCell"]
