"""`keras.layers.InputLayer` and `keras.Input`: the functional API's entry points.

`Input(shape=(784,))` makes an `InputLayer` and returns its one output, a `KerasTensor` whose
history is the layer's input node; a functional `Model` starts its graph walk from there."""

from __future__ import annotations

from ... import backend
from ...keras_tensor import KerasTensor, Node
from ..layer import Layer

__all__ = ["InputLayer", "Input"]


def _standardize_shape(shape) -> tuple:
    if shape is None:
        raise ValueError("Undefined shapes are not supported.")
    if isinstance(shape, int):
        shape = (shape,)
    if hasattr(shape, "as_list"):
        shape = shape.as_list()
    out = []
    for d in shape:
        if d is None:
            out.append(None)
            continue
        if not isinstance(d, int) or isinstance(d, bool) or d < 0:
            raise ValueError(f"Cannot convert '{tuple(shape)}' to a shape. Found invalid "
                             f"dimension '{d}'.")
        out.append(int(d))
    return tuple(out)


class InputLayer(Layer):
    """≈ `keras.layers.InputLayer(shape=None, batch_size=None, dtype=None, sparse=None,
    ragged=None, batch_shape=None, input_tensor=None, optional=False, name=None)`."""

    def __init__(self, shape=None, batch_size=None, dtype=None, sparse=None, ragged=None,
                 batch_shape=None, input_tensor=None, optional=False, name=None, **kwargs):
        super().__init__(name=name)
        if "input_shape" in kwargs:
            shape = kwargs.pop("input_shape")
        if "batch_input_shape" in kwargs:
            batch_shape = kwargs.pop("batch_input_shape")
        if kwargs:
            raise ValueError(f"Unrecognized keyword arguments passed to InputLayer: {kwargs}")
        if sparse or ragged:
            raise ValueError("InputLayer: `sparse=True` and `ragged=True` are not supported by "
                             "eager.keras.")
        if input_tensor is not None:
            if not isinstance(input_tensor, KerasTensor):
                raise ValueError("Argument `input_tensor` must be a KerasTensor. Received "
                                 f"invalid type: input_tensor={input_tensor} (of type "
                                 f"{type(input_tensor)})")
            batch_shape = input_tensor.shape
            dtype = input_tensor.dtype
        else:
            if shape is not None and batch_shape is not None:
                raise ValueError("You cannot pass both `shape` and `batch_shape` at the same "
                                 "time.")
            if batch_size is not None and batch_shape is not None:
                raise ValueError("You cannot pass both `batch_size` and `batch_shape` at the "
                                 "same time.")
            if shape is None and batch_shape is None:
                raise ValueError("You must pass a `shape` argument.")
            if shape is not None:
                batch_shape = (batch_size, *_standardize_shape(shape))
        self._batch_shape = _standardize_shape(batch_shape)
        self._dtype = backend.standardize_dtype(dtype)
        self.sparse = False
        self.ragged = False
        if input_tensor is None:
            input_tensor = KerasTensor(self._batch_shape, dtype=self._dtype, name=name)
        self._input_tensor = input_tensor
        Node(self, (), {}, input_tensor)
        self.built = True
        self.optional = optional

    def call(self):
        return None

    @property
    def batch_shape(self) -> tuple:
        return self._batch_shape

    @property
    def output(self):
        return self._input_tensor

    def get_config(self):
        return {"batch_shape": self._batch_shape, "dtype": self._dtype, "sparse": self.sparse,
                "ragged": self.ragged, "name": self.name, "optional": self.optional}


def Input(shape=None, batch_size=None, dtype=None, sparse=None, ragged=None,  # noqa: N802
          batch_shape=None, name=None, tensor=None, optional=False):
    """≈ `keras.Input(shape=None, batch_size=None, dtype=None, sparse=None, ragged=None,
    batch_shape=None, name=None, tensor=None, optional=False)`: a symbolic input (a
    `KerasTensor` of shape `(batch_size, *shape)`) to build a functional model from."""
    layer = InputLayer(shape=shape, batch_size=batch_size, dtype=dtype, sparse=sparse,
                       ragged=ragged, batch_shape=batch_shape, name=name, input_tensor=tensor,
                       optional=optional)
    return layer.output
