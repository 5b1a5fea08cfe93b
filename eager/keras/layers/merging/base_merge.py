"""The merge layers' shared base: a list of same-shaped tensors in, one tensor out, combined
element-wise with broadcasting over the non-batch axes (Keras 3's `Merge`)."""

from __future__ import annotations

from ..layer import Layer

__all__ = ["Merge"]


def _broadcast_shape(shape1, shape2):
    """Keras's element-wise output shape of two shapes without their batch axis."""
    if shape1 is None or shape2 is None:
        return None
    if len(shape1) < len(shape2):
        return _broadcast_shape(shape2, shape1)
    if not shape2:
        return tuple(shape1)
    out = list(shape1[:-len(shape2)])
    for a, b in zip(shape1[-len(shape2):], shape2):
        if a is None or b is None:
            out.append(None)
        elif a == 1:
            out.append(b)
        elif b == 1 or a == b:
            out.append(a)
        else:
            raise ValueError("Inputs have incompatible shapes. "
                             f"Received shapes {tuple(shape1)} and {tuple(shape2)}")
    return tuple(out)


class Merge(Layer):
    """Base of `Add`, `Subtract`, `Multiply`, `Average`, `Maximum`, `Minimum`: subclasses give
    `_merge_function(inputs)`."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def _merge_function(self, inputs):
        raise NotImplementedError

    def build(self, input_shape):
        if not isinstance(input_shape[0], (tuple, list)):
            raise ValueError("A merge layer should be called on a list of inputs. "
                             f"Received: input_shape={input_shape} (not a list of shapes)")
        if len(input_shape) < 1:
            raise ValueError("A merge layer should be called on a list of at least 1 input. "
                             f"Received {len(input_shape)} inputs. Full input_shape "
                             f"received: {input_shape}")
        batch_sizes = {s[0] for s in input_shape if s} - {None}
        if len(batch_sizes) > 1:
            raise ValueError("Cannot merge tensors with different batch sizes. Received "
                             f"tensors with shapes {input_shape}")
        self._output_tail(input_shape)

    def _output_tail(self, input_shape):
        tail = tuple(input_shape[0])[1:] if input_shape[0] is not None else None
        for shape in input_shape[1:]:
            tail = _broadcast_shape(tail, None if shape is None else tuple(shape)[1:])
        return tail

    def call(self, inputs):
        if not isinstance(inputs, (list, tuple)):
            raise ValueError("A merge layer should be called on a list of inputs. Received: "
                             f"inputs={inputs} (not a list of tensors)")
        return self._merge_function(list(inputs))

    def compute_output_shape(self, input_shape):
        batch_sizes = {s[0] for s in input_shape if s} - {None}
        batch = next(iter(batch_sizes)) if len(batch_sizes) == 1 else None
        tail = self._output_tail(input_shape)
        return None if tail is None else (batch, *tail)

    def get_config(self):
        return super().get_config()
