"""`InputSpec`: what a layer accepts (rank, dtype, fixed axes), checked on every call so that a
wrong input fails at the layer that cannot take it, with Keras 3's message."""

from __future__ import annotations

from ...base import nest
from .. import backend

__all__ = ["InputSpec", "assert_input_compatibility"]


class InputSpec:
    """≈ `keras.InputSpec(dtype, shape, ndim, max_ndim, min_ndim, axes,
    allow_last_axis_squeeze, name, optional)`."""

    def __init__(self, dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None,
                 axes=None, allow_last_axis_squeeze=False, name=None, optional=False):
        self.dtype = backend.standardize_dtype(dtype) if dtype is not None else None
        if shape is not None:
            self.shape = tuple(None if d is None else int(d) for d in shape)
            self.ndim = len(self.shape)
        else:
            self.shape = None
            self.ndim = ndim
        self.max_ndim = max_ndim
        self.min_ndim = min_ndim
        self.name = name
        self.optional = optional
        self.allow_last_axis_squeeze = allow_last_axis_squeeze
        try:
            axes = axes or {}
            self.axes = {int(k): axes[k] for k in axes}
        except (ValueError, TypeError):
            raise TypeError(f"Argument `axes` must be a dict with integer keys. "
                            f"Received: axes={axes}") from None
        if self.axes and (self.ndim is not None or self.max_ndim is not None):
            max_dim = (self.ndim if self.ndim else self.max_ndim) - 1
            if max(self.axes) > max_dim:
                raise ValueError(f"Axis {max(self.axes)} is greater than the maximum allowed "
                                 f"value: {max_dim}")

    def __repr__(self):
        parts = [f"dtype={self.dtype}" if self.dtype else "",
                 f"shape={self.shape}" if self.shape else "",
                 f"ndim={self.ndim}" if self.ndim else "",
                 f"max_ndim={self.max_ndim}" if self.max_ndim else "",
                 f"min_ndim={self.min_ndim}" if self.min_ndim else "",
                 f"axes={self.axes}" if self.axes else ""]
        return f"InputSpec({', '.join(p for p in parts if p)})"

    def get_config(self) -> dict:
        return {"dtype": self.dtype, "shape": self.shape, "ndim": self.ndim,
                "max_ndim": self.max_ndim, "min_ndim": self.min_ndim, "axes": self.axes,
                "optional": self.optional}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _shape_tuple(x) -> tuple:
    shape = x.shape
    if hasattr(shape, "as_list"):
        return tuple(shape.as_list()) if shape.rank is not None else None
    return tuple(shape)


def assert_input_compatibility(input_spec, inputs, layer_name) -> None:
    """Raises Keras's ValueError when `inputs` do not meet `input_spec` (a spec or a nest)."""
    if not input_spec:
        return
    specs = nest.flatten(input_spec)
    if isinstance(inputs, dict):
        names = [spec.name for spec in specs]
        if all(names):
            for name in names:
                if name not in inputs:
                    raise ValueError(f'Missing data for input "{name}". You passed a data '
                                     f"dictionary with keys {list(inputs.keys())}. Expected "
                                     f"the following keys: {names}")
            inputs = [inputs[name] for name in names]
    flat = nest.flatten(inputs)
    if len(flat) != len(specs):
        raise ValueError(f'Layer "{layer_name}" expects {len(specs)} input(s), but it received '
                         f"{len(flat)} input tensors. Inputs received: {flat}")
    for index, (x, spec) in enumerate(zip(flat, specs)):
        if spec is None or (x is None and spec.optional):
            continue
        if not hasattr(x, "shape"):
            raise ValueError(f"Inputs to a layer should be tensors. Got '{x}' (of type "
                             f"{type(x)}) as input for layer '{layer_name}'.")
        shape = _shape_tuple(x)
        if shape is None:
            continue
        ndim = len(shape)
        head = (f"Input {index} with name '{spec.name}' of layer '{layer_name}' is "
                "incompatible with the layer: ")
        if spec.ndim is not None and not spec.allow_last_axis_squeeze and ndim != spec.ndim:
            raise ValueError(f"{head}expected ndim={spec.ndim}, found ndim={ndim}. Full shape "
                             f"received: {shape}")
        if spec.max_ndim is not None and ndim > spec.max_ndim:
            raise ValueError(f"{head}expected max_ndim={spec.max_ndim}, found ndim={ndim}")
        if spec.min_ndim is not None and ndim < spec.min_ndim:
            raise ValueError(f"{head}expected min_ndim={spec.min_ndim}, found ndim={ndim}. "
                             f"Full shape received: {shape}")
        if spec.dtype is not None:
            dtype = backend.standardize_dtype(x.dtype)
            if dtype != spec.dtype:
                raise ValueError(f"{head}expected dtype={spec.dtype}, found dtype={dtype}")
        for axis, value in spec.axes.items():
            if value is not None and shape[axis] not in {value, None}:
                raise ValueError(f"{head}expected axis {axis} of input shape to have value "
                                 f"{value}, but received input with shape {shape}")
        if spec.shape is not None:
            spec_shape, got = spec.shape, shape
            if spec.allow_last_axis_squeeze:
                got = got[:-1] if got and got[-1] == 1 else got
                spec_shape = spec_shape[:-1] if spec_shape and spec_shape[-1] == 1 else spec_shape
            for spec_dim, dim in zip(spec_shape, got):
                if spec_dim is not None and dim is not None and spec_dim != dim:
                    raise ValueError(f"{head}expected shape={spec.shape}, found shape={shape}")
