"""`keras.layers.Lambda`: a Python function as a layer without weights."""

from __future__ import annotations

import inspect

from ...keras_tensor import KerasTensor, compute_output_spec
from ...serialization import get_registered_object, in_safe_mode
from ..layer import Layer

__all__ = ["Lambda"]


class Lambda(Layer):
    """≈ `keras.layers.Lambda(function, output_shape=None, mask=None, arguments=None)`.

    `function(inputs, **arguments)` runs on each call (with `mask=`/`training=` too when it
    takes them). The output shape comes from `output_shape` (a tuple without the batch axis, or
    a function of the input shape) when given, else from tracing the function. Its config names
    the function (`{"class_name": "__lambda__" | "function", ...}`) but, unlike Keras, does not
    carry marshalled bytecode, so `from_config` needs the function among `custom_objects`."""

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        if not callable(function):
            raise ValueError(f"Argument `function` must be callable. Received: "
                             f"function={function}")
        self.function = function
        self.arguments = dict(arguments or {})
        self.mask = mask
        self._output_shape = output_shape
        parameters = inspect.signature(function).parameters
        self._fn_takes_mask = "mask" in parameters
        self._fn_takes_training = "training" in parameters
        self.supports_masking = mask is not None

    def call(self, inputs, mask=None, training=None):
        kwargs = dict(self.arguments)
        if self._fn_takes_mask:
            kwargs["mask"] = mask
        if self._fn_takes_training:
            kwargs["training"] = training
        return self.function(inputs, **kwargs)

    def compute_output_shape(self, input_shape):
        if self._output_shape is None:
            raise NotImplementedError("Lambda: pass `output_shape` or call it on a tensor.")
        if callable(self._output_shape):
            return tuple(self._output_shape(input_shape))
        return (input_shape[0], *tuple(self._output_shape))

    def compute_output_spec(self, *args, **kwargs):
        """From `output_shape` when given, else by tracing the function once."""
        if self._output_shape is None:
            def run(*a, **k):
                with self._scope():
                    return self.call(*a, **k)
            return compute_output_spec(run, *args, **kwargs)
        x = args[0]
        return KerasTensor(self.compute_output_shape(tuple(x.shape)), dtype=x.dtype)

    def get_config(self):
        config = super().get_config()
        name = getattr(self.function, "__name__", "function")
        config["function"] = {"class_name": "__lambda__" if name == "<lambda>" else "function",
                              "config": name}
        if self._output_shape is not None:
            config["output_shape"] = self._output_shape if not callable(self._output_shape) \
                else getattr(self._output_shape, "__name__", "function")
        config["arguments"] = self.arguments
        return config


    @classmethod
    def from_config(cls, config, custom_objects=None, safe_mode=None):
        """The function comes from `custom_objects` or the registered objects by its name:
        configs carry no code. A Python lambda is refused in safe mode (the default, and
        `load_model(safe_mode=True)`) with Keras 3's error; with `safe_mode=False` it must be
        supplied by name too."""
        config = dict(config)
        safe = (safe_mode if safe_mode is not None else in_safe_mode()) is not False
        for key in ("function", "output_shape"):
            spec = config.get(key)
            if not isinstance(spec, dict) or "class_name" not in spec:
                continue
            if spec["class_name"] == "__lambda__" and safe:
                raise ValueError(_LAMBDA_UNSAFE)
            name = spec.get("config")
            fn = get_registered_object(name, custom_objects) \
                if isinstance(name, str) and name != "<lambda>" else None
            if not callable(fn):
                raise ValueError(f"Lambda layer '{config.get('name')}': its `{key}` "
                                 f"({name!r}) is not among `custom_objects` or the registered "
                                 "Keras objects: it cannot be rebuilt from the config, which names "
                                 "it but carries no code; pass it in `custom_objects`.")
            config[key] = fn
        if isinstance(config.get("output_shape"), list):
            config["output_shape"] = tuple(config["output_shape"])
        return super().from_config(config)


_LAMBDA_UNSAFE = (
    "Requested the deserialization of a `Lambda` layer whose `function` is a Python lambda. "
    "This carries a potential risk of arbitrary code execution and thus it is disallowed by "
    "default. If you trust the source of the artifact, you can override this error by passing "
    "`safe_mode=False` to the loading function, or calling "
    "`keras.config.enable_unsafe_deserialization().")
