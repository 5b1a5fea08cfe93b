"""Keras 3's activation layers: `ReLU`, `LeakyReLU`, `ELU`, `PReLU` (a learned slope) and
`Softmax` (with an optional mask), each a thin layer over `eager.keras.activations`."""

from __future__ import annotations

from ....core.tensor_conversion import convert_to_tensor
from ....ops import math_ops as _math
from ... import activations, constraints, initializers, regularizers
from ..input_spec import InputSpec
from ..layer import Layer

__all__ = ["ReLU", "LeakyReLU", "ELU", "PReLU", "Softmax"]


class ReLU(Layer):
    """≈ `keras.layers.ReLU(max_value=None, negative_slope=0.0, threshold=0.0)`."""

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        if max_value is not None and max_value < 0.0:
            raise ValueError("max_value of a ReLU layer cannot be a negative value. Received: "
                             f"max_value={max_value}")
        if negative_slope is None or negative_slope < 0.0:
            raise ValueError("negative_slope of a ReLU layer cannot be None or a negative "
                             f"value. Received: negative_slope={negative_slope}")
        if threshold is None or threshold < 0.0:
            raise ValueError("threshold of a ReLU layer cannot be None or a negative value. "
                             f"Received: threshold={threshold}")
        self.max_value = max_value
        self.negative_slope = negative_slope
        self.threshold = threshold
        self.supports_masking = True
        self.built = True

    def call(self, inputs):
        return activations.relu(inputs, negative_slope=self.negative_slope,
                                max_value=self.max_value, threshold=self.threshold)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(max_value=self.max_value, negative_slope=self.negative_slope,
                      threshold=self.threshold)
        return config


class LeakyReLU(Layer):
    """≈ `keras.layers.LeakyReLU(negative_slope=0.3)` (`alpha=` is the old name)."""

    def __init__(self, negative_slope=0.3, **kwargs):
        if "alpha" in kwargs:
            negative_slope = kwargs.pop("alpha")
        super().__init__(**kwargs)
        if negative_slope is None or negative_slope < 0:
            raise ValueError("The negative_slope value of a Leaky ReLU layer cannot be None or "
                             "negative value. Expected a float. Received: "
                             f"negative_slope={negative_slope}")
        self.negative_slope = negative_slope
        self.supports_masking = True
        self.built = True

    def call(self, inputs):
        return activations.leaky_relu(inputs, negative_slope=self.negative_slope)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config["negative_slope"] = self.negative_slope
        return config


class ELU(Layer):
    """≈ `keras.layers.ELU(alpha=1.0)`."""

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self.alpha = alpha
        self.supports_masking = True
        self.built = True

    def call(self, inputs):
        return activations.elu(inputs, alpha=self.alpha)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        # Keras 3 puts "alpha" right after "name".
        base = super().get_config()
        config = {"name": base.pop("name"), "alpha": self.alpha}
        config.update(base)
        return config


class PReLU(Layer):
    """≈ `keras.layers.PReLU(alpha_initializer="Zeros", alpha_regularizer=None,
    alpha_constraint=None, shared_axes=None)`: `relu(x) - alpha * relu(-x)` with a learned
    `alpha` per non-batch element (shared along `shared_axes`)."""

    def __init__(self, alpha_initializer="Zeros", alpha_regularizer=None,
                 alpha_constraint=None, shared_axes=None, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.alpha_initializer = initializers.get(alpha_initializer)
        self.alpha_regularizer = regularizers.get(alpha_regularizer)
        self.alpha_constraint = constraints.get(alpha_constraint)
        if shared_axes is None:
            self.shared_axes = None
        elif not isinstance(shared_axes, (list, tuple)):
            self.shared_axes = [shared_axes]
        else:
            self.shared_axes = list(shared_axes)

    def build(self, input_shape):
        param_shape = list(input_shape[1:])
        if self.shared_axes is not None:
            for i in self.shared_axes:
                param_shape[i - 1] = 1
        self.alpha = self.add_weight(shape=param_shape, name="alpha",
                                     initializer=self.alpha_initializer,
                                     regularizer=self.alpha_regularizer,
                                     constraint=self.alpha_constraint)
        axes = {}
        if self.shared_axes:
            axes = {i: input_shape[i] for i in range(1, len(input_shape))
                    if i not in self.shared_axes}
        self.input_spec = InputSpec(ndim=len(input_shape), axes=axes)

    def call(self, inputs):
        positive = activations.relu(inputs)
        negative = _math.multiply(_math.negative(self.alpha), activations.relu(
            _math.negative(inputs)))
        return _math.add(positive, negative)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(alpha_initializer=initializers.serialize(self.alpha_initializer),
                      alpha_regularizer=regularizers.serialize(self.alpha_regularizer),
                      alpha_constraint=constraints.serialize(self.alpha_constraint),
                      shared_axes=self.shared_axes)
        return config


class Softmax(Layer):
    """≈ `keras.layers.Softmax(axis=-1)`; `call(inputs, mask=None)`: masked-out positions
    (mask False) get probability 0."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis
        self.supports_masking = True
        self.built = True

    def call(self, inputs, mask=None):
        if mask is not None:
            # Keras's large negative number for the dtype (float16: -3e4, others -1e9).
            large = -3e4 if inputs.dtype.name == "float16" else -1e9
            mask = _math.cast(convert_to_tensor(mask), inputs.dtype)
            one = convert_to_tensor(1.0, dtype=inputs.dtype)
            inputs = _math.add(inputs, _math.multiply(_math.subtract(one, mask),
                                                      convert_to_tensor(large,
                                                                        dtype=inputs.dtype)))
        outputs = activations.softmax(inputs, axis=self.axis)
        if mask is not None:
            outputs = _math.multiply(outputs, mask)
        return outputs

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config["axis"] = self.axis
        return config
