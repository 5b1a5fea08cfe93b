"""`eager.keras.layers` (≈ `keras.layers`): the layer base class and the built-in layers."""

from .convolutional import Conv1D, Conv2D
from .embedding import Embedding
from .input_spec import InputSpec
from .layer import Layer
from .masking import Masking
from .normalization import BatchNormalization, LayerNormalization
from .rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, SimpleRNN, SimpleRNNCell
from .pooling import (AveragePooling1D, AveragePooling2D, GlobalAveragePooling1D,
                      GlobalAveragePooling2D, GlobalMaxPooling1D, GlobalMaxPooling2D,
                      MaxPooling1D, MaxPooling2D)

__all__ = ["InputSpec", "Layer"]
__all__ += ["Conv1D", "Conv2D", "AveragePooling1D", "AveragePooling2D", "MaxPooling1D",
            "MaxPooling2D", "GlobalAveragePooling1D", "GlobalAveragePooling2D",
            "GlobalMaxPooling1D", "GlobalMaxPooling2D", "BatchNormalization",
            "LayerNormalization", "Embedding", "RNN", "SimpleRNN", "LSTM", "GRU",
            "SimpleRNNCell", "LSTMCell", "GRUCell"]
__all__ += ["Masking"]
