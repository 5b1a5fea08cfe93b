"""Recurrent layers (≈ `keras.layers.SimpleRNN`, `LSTM`, `GRU`, their cells, `RNN`,
`StackedRNNCells`, and the `Bidirectional` and `TimeDistributed` wrappers)."""

from .cells import GRUCell, LSTMCell, SimpleRNNCell
from .layers import GRU, LSTM, SimpleRNN
from .bidirectional import Bidirectional
from .rnn import RNN
from .stacked_cells import StackedRNNCells
from .time_distributed import TimeDistributed

__all__ = ["RNN", "SimpleRNN", "LSTM", "GRU", "SimpleRNNCell", "LSTMCell", "GRUCell",
           "StackedRNNCells", "Bidirectional", "TimeDistributed"]
