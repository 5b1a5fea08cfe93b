"""`eager.keras.layers` (≈ `keras.layers`): the layer base class and the built-in layers."""

from .activations import ELU, LeakyReLU, PReLU, ReLU, Softmax
from .convolutional import (Conv1D, Conv1DTranspose, Conv2D, Conv2DTranspose, DepthwiseConv2D,
                            SeparableConv2D)
from .core import Activation, Dense, Identity, Input, InputLayer, Lambda
from .embedding import Embedding
from .input_spec import InputSpec
from .layer import Layer
from .masking import Masking
from .merging import (Add, Average, Concatenate, Dot, Maximum, Minimum, Multiply, Subtract, add,
                      average, concatenate, dot, maximum, minimum, multiply, subtract)
from .normalization import (BatchNormalization, GroupNormalization, LayerNormalization,
                            UnitNormalization)
from .pooling import (AveragePooling1D, AveragePooling2D, GlobalAveragePooling1D,
                      GlobalAveragePooling2D, GlobalMaxPooling1D, GlobalMaxPooling2D,
                      MaxPooling1D, MaxPooling2D)
from .preprocessing import (CategoryEncoding, CenterCrop, Discretization, Normalization,
                            Rescaling, Resizing)
from .regularization import Dropout
from .reshaping import (Cropping1D, Cropping2D, Flatten, Permute, RepeatVector, Reshape,
                        UpSampling1D, UpSampling2D, ZeroPadding1D, ZeroPadding2D)
from .serialization import deserialize, get, register_builtin_layers, serialize
from .rnn import (GRU, Bidirectional, GRUCell, LSTM, LSTMCell, RNN, SimpleRNN, SimpleRNNCell,
                  StackedRNNCells, TimeDistributed)

__all__ = ["InputSpec", "Layer",
           "Activation", "Dense", "Identity", "Input", "InputLayer", "Lambda",
           "Flatten", "Permute", "RepeatVector", "Reshape", "Dropout",
           "ELU", "LeakyReLU", "PReLU", "ReLU", "Softmax",
           "Add", "Average", "Concatenate", "Dot", "Maximum", "Minimum", "Multiply", "Subtract",
           "add", "average", "concatenate", "dot", "maximum", "minimum", "multiply", "subtract",
           "Conv1D", "Conv2D", "AveragePooling1D", "AveragePooling2D", "MaxPooling1D",
           "MaxPooling2D", "GlobalAveragePooling1D", "GlobalAveragePooling2D",
           "GlobalMaxPooling1D", "GlobalMaxPooling2D", "BatchNormalization",
           "LayerNormalization", "Embedding", "RNN", "SimpleRNN", "LSTM", "GRU",
           "SimpleRNNCell", "LSTMCell", "GRUCell"]
__all__ += ["Masking", "Bidirectional", "TimeDistributed", "StackedRNNCells"]
__all__ += ["serialize", "deserialize", "get"]
__all__ += ["Conv1DTranspose", "Conv2DTranspose", "DepthwiseConv2D", "SeparableConv2D"]
__all__ += ["GroupNormalization", "UnitNormalization", "CategoryEncoding", "CenterCrop",
            "Discretization", "Normalization", "Rescaling", "Resizing"]
__all__ += ["Cropping1D", "Cropping2D", "UpSampling1D", "UpSampling2D", "ZeroPadding1D",
            "ZeroPadding2D"]

register_builtin_layers(globals())
del register_builtin_layers
