"""`keras.layers.Layer` on eager's `Module`: Keras 3's layer contract.

What a layer does when called (`__call__`), in order, as Keras 3 does it:

1. array inputs become tensors, and floating inputs are cast to the layer's compute dtype
   (`autocast`); only tensors may be passed positionally;
2. the input spec is checked;
3. the first call builds the layer: `build` gets the input shape(s) (by argument name when it
   takes several: `build(self, a_shape, b_shape)`), inside the layer's name scope, so weights
   are named "dense/kernel";
4. `training` is resolved: an explicit argument wins, then the value an enclosing layer's call
   was given, then the default in `call`'s signature; it is passed on to nested layers;
5. `call` runs in the layer's name scope; an activity regularizer adds its loss.

Called on `KerasTensor`s (the functional API), steps 1-3 are the same and step 5 traces `call`
into a throwaway graph for the output shapes (`eager.keras.keras_tensor`), recording a `Node`.

Weights are listed in Keras's order, not `eager.Module`'s sorted walk: the layer's own weights in
creation order (those created trainable first), then each sublayer's, sublayers in the order
they were assigned (attributes, and items of lists and dicts assigned to attributes). Freezing a
layer (`layer.trainable = False`) freezes its weights and its sublayers'.
"""

from __future__ import annotations

import contextlib
import inspect
import threading
import warnings

import numpy as np

from ...base import nest
from ...core import context as _context
from ...core.tensor_conversion import convert_to_tensor
from ...ops import composite_ops as _composite
from ...ops import math_ops as _math
from ...ops.array_ops import shape as _dynamic_shape
from ...state.module import Module, _NameScope
from ...tensor import Tensor
from ...variables import Variable
from .. import backend, constraints, initializers, regularizers
from ..keras_tensor import KerasTensor, Node, any_symbolic_tensors, compute_output_spec
from .. import masking as _mask_store
from ..masking import get_keras_mask, set_keras_mask
from ..serialization import serialize_keras_object
from ..variables import KerasVariable, make_weight
from .call_errors import with_call_arguments
from .input_spec import assert_input_compatibility

__all__ = ["Layer"]

_calls = threading.local()  # .context: the outermost layer call's CallContext on this thread


class CallContext:
    """Values an outer layer call hands to the layers it calls (`training`)."""

    __slots__ = ("entry_layer", "training")

    def __init__(self, entry_layer):
        self.entry_layer = entry_layer
        self.training = None


def _is_default(method) -> bool:
    """Whether a subclass left `method` (e.g. `build`) as Layer's own."""
    return getattr(method, "_keras_default", False)


def _default(method):
    method._keras_default = True
    return method


def _wrap_build(build):
    """A subclass's `build`, run in the layer's name scope and marking the layer built (also
    when user code calls `layer.build(shape)` directly)."""
    def wrapped(self, *args, **kwargs):
        with self._scope():
            build(self, *args, **kwargs)
        self.built = True
    wrapped.__name__ = build.__name__
    wrapped.__qualname__ = build.__qualname__
    wrapped.__doc__ = build.__doc__
    wrapped.__wrapped__ = build
    return wrapped


def _shape_of(x):
    if x is None:
        return None
    shape = x.shape
    if hasattr(shape, "as_list"):
        return tuple(shape.as_list()) if shape.rank is not None else None
    return tuple(shape)


def _is_tensor_like(x) -> bool:
    return isinstance(x, (Tensor, KerasTensor, Variable))


class Layer(Module):
    """≈ `keras.layers.Layer(activity_regularizer=None, trainable=True, dtype=None,
    autocast=True, name=None)`: subclass it, create weights in `__init__` or `build`, compute in
    `call` (see the module doc for what a call does)."""

    _TF_MODULE_IGNORED_PROPERTIES = frozenset({
        "_own_variables", "_inbound_nodes", "_outbound_nodes", "_losses", "_call_signature",
        "_build_shapes_dict", "_input_spec", "_scope_depth", "_auto_config"})

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        build = cls.__dict__.get("build")
        if build is not None and not hasattr(build, "__wrapped__"):
            cls.build = _wrap_build(build)

    def __new__(cls, *args, **kwargs):
        obj = super().__new__(cls)
        object.__setattr__(obj, "_auto_config", _auto_config(cls, args, kwargs))
        return obj

    def __init__(self, *, activity_regularizer=None, trainable=True, dtype=None, autocast=True,
                 name=None, **kwargs):
        setattr_ = object.__setattr__
        setattr_(self, "_own_variables", [])   # (variable, created trainable), creation order
        setattr_(self, "_inbound_nodes", [])
        setattr_(self, "_outbound_nodes", [])
        setattr_(self, "_losses", [])
        setattr_(self, "_scope_depth", threading.local())
        if name is None:
            name = backend.auto_name(type(self).__name__)
        elif not isinstance(name, str) or "/" in name:
            raise ValueError("Argument `name` must be a string and cannot contain character "
                             f"`/`. Received: name={name} (of type {type(name)})")
        setattr_(self, "_name", name)
        setattr_(self, "_name_scope", _NameScope(name + "/"))
        input_dim = kwargs.pop("input_dim", None)
        input_shape = (input_dim,) if input_dim is not None else kwargs.pop("input_shape", None)
        batch_size = kwargs.pop("batch_size", None)
        batch_input_shape = kwargs.pop("batch_input_shape", None)
        if kwargs:
            raise ValueError(f"Unrecognized keyword arguments passed to {type(self).__name__}: "
                             f"{kwargs}")
        if batch_input_shape is not None:
            self._batch_input_shape = tuple(batch_input_shape)
        elif input_shape is not None:
            warnings.warn("Do not pass an `input_shape`/`input_dim` argument to a layer. When "
                          "using Sequential models, prefer using an `Input(shape)` object as "
                          "the first layer in the model instead.", UserWarning, stacklevel=2)
            self._batch_input_shape = (batch_size, *tuple(input_shape))
        if not isinstance(trainable, bool):
            raise ValueError(f"Expected `trainable` to be a boolean. Received: "
                             f"trainable={trainable} (of type {type(trainable)})")
        self._trainable = trainable
        self._dtype = _dtype_argument(dtype)
        self.autocast = autocast
        self.activity_regularizer = regularizers.get(activity_regularizer)
        self.built = _is_default(type(self).build)
        self._called = False
        setattr_(self, "_input_spec", None)
        setattr_(self, "_build_shapes_dict", None)
        signature = inspect.signature(self.call)
        setattr_(self, "_call_signature", signature)
        self._call_has_training_arg = "training" in signature.parameters
        self._call_has_mask_arg = "mask" in signature.parameters
        self.supports_masking = not _is_default(type(self).compute_mask)

    # -- names and scopes --------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def path(self) -> str:
        return self._name

    @contextlib.contextmanager
    def _scope(self):
        """The layer's name scope, relative to the current one ("outer/dense/"), entered once
        however many nested `build`/`call` wrappers of this layer run inside each other."""
        local = self._scope_depth
        depth = getattr(local, "n", 0)
        if depth:
            local.n = depth + 1
            try:
                yield
            finally:
                local.n -= 1
            return
        st = _context.thread_state()
        saved = st.name_scope
        st.name_scope = saved + self._name + "/"
        local.n = 1
        try:
            yield
        finally:
            local.n = 0
            st.name_scope = saved

    # -- dtypes ------------------------------------------------------------------------------
    @property
    def dtype(self) -> str:
        """The dtype of the layer's weights (Keras 3: the variable dtype)."""
        return self._dtype

    compute_dtype = variable_dtype = input_dtype = dtype

    @property
    def dtype_policy(self) -> str:
        return self._dtype

    # -- input spec --------------------------------------------------------------------------
    @property
    def input_spec(self):
        return self._input_spec

    @input_spec.setter
    def input_spec(self, value):
        object.__setattr__(self, "_input_spec", value)

    # -- weights -----------------------------------------------------------------------------
    def __setattr__(self, name, value):
        if isinstance(value, Variable) and not name.startswith("__"):
            self._track_variable(value)
        super().__setattr__(name, value)

    def _track_variable(self, variable) -> None:
        own = self._own_variables
        if not any(v is variable for v, _ in own):
            own.append((variable, bool(variable.trainable)))

    def add_weight(self, shape=None, initializer=None, dtype=None, trainable=True, autocast=True,
                   regularizer=None, constraint=None, aggregation="none",
                   overwrite_with_gradient=False, name=None):
        """A new weight of this layer: `shape` (default scalar), `initializer` (default
        "glorot_uniform" for floating dtypes, "zeros" otherwise), `dtype` (default the
        layer's), `regularizer` (its penalty joins `layer.losses`), `constraint` (applied after
        each optimizer step)."""
        if isinstance(shape, str) and name is None:
            raise ValueError(f"`name` must be passed as a keyword argument. Received: "
                             f"add_weight('{shape}', ...). Use: add_weight(shape=..., "
                             f"name='{shape}').")
        shape = () if shape is None else tuple(shape)
        if any(d is None for d in shape):
            raise ValueError(f"Shapes of weights must be fully defined. Received: "
                             f"shape={shape} for weight {name!r} of layer '{self.name}'")
        dtype = self._dtype if dtype is None else backend.standardize_dtype(dtype)
        if initializer is None:
            initializer = "glorot_uniform" if backend.is_float_dtype(dtype) else "zeros"
        init = initializers.get(initializer)
        with self._scope():
            variable = make_weight(init, shape, dtype, trainable=trainable, name=name,
                                   aggregation=aggregation,
                                   regularizer=regularizers.get(regularizer),
                                   constraint=constraints.get(constraint), autocast=autocast,
                                   overwrite_with_gradient=overwrite_with_gradient)
        self._track_variable(variable)
        return variable

    add_variable = add_weight

    def _sublayers(self) -> list:
        """Direct sublayers in assignment order (attributes, then items of containers)."""
        found, seen = [], set()

        def visit(value):
            if isinstance(value, Layer):
                if id(value) not in seen and value is not self:
                    seen.add(id(value))
                    found.append(value)
            elif isinstance(value, (list, tuple)):
                for item in value:
                    visit(item)
            elif isinstance(value, dict):
                for item in value.values():
                    visit(item)

        ignored = self._TF_MODULE_IGNORED_PROPERTIES
        for key, value in vars(self).items():
            if key not in ignored:
                visit(value)
        return found

    @property
    def _layers(self) -> list:
        return self._sublayers()

    def _flatten_layers(self, include_self=True, recursive=True) -> list:
        layers = [self] if include_self else []
        seen = {id(self)}
        stack = list(reversed(self._sublayers()))
        while stack:
            layer = stack.pop()
            if id(layer) in seen:
                continue
            seen.add(id(layer))
            layers.append(layer)
            if recursive:
                stack.extend(reversed(layer._sublayers()))
        return layers

    @property
    def weights(self) -> list:
        """Own weights (created-trainable first, each in creation order), then sublayers'."""
        own = self._own_variables
        result = [v for v, t in own if t] + [v for v, t in own if not t]
        seen = {id(v) for v in result}
        for layer in self._sublayers():
            for v in layer.weights:
                if id(v) not in seen:
                    seen.add(id(v))
                    result.append(v)
        return result

    @property
    def trainable_weights(self) -> list:
        if not self._trainable:
            return []
        return [v for v in self.weights if v.trainable]

    @property
    def non_trainable_weights(self) -> list:
        if not self._trainable:
            return self.weights
        return [v for v in self.weights if not v.trainable]

    variables = weights
    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights

    @property
    def trainable(self) -> bool:
        return self._trainable

    @trainable.setter
    def trainable(self, value) -> None:
        value = bool(value)
        object.__setattr__(self, "_trainable", value)
        for variable, created_trainable in self._own_variables:
            if not created_trainable:
                continue
            # A weight made under a strategy's scope is distributed: freeze every component.
            parts = variable.values if getattr(variable, "_is_distributed_variable", False) \
                else (variable,)
            for part in parts:
                if isinstance(part, KerasVariable):
                    part.trainable = value
        for layer in self._sublayers():
            layer.trainable = value

    def get_weights(self) -> list:
        """The weights' values as numpy arrays, in `weights` order."""
        return [np.array(v.numpy()) for v in self.weights]

    def set_weights(self, weights) -> None:
        """Assigns numpy values to `weights`, all shapes checked before any is assigned."""
        mine = self.weights
        if len(weights) != len(mine):
            raise ValueError(f"You called `set_weights(weights)` on layer '{self.name}' with a "
                             f"weight list of length {len(weights)}, but the layer was "
                             f"expecting {len(mine)} weights.")
        arrays = []
        for variable, value in zip(mine, weights):
            array = np.asarray(value)
            if tuple(variable.shape) != array.shape:
                raise ValueError(f"Layer {self.name} weight shape {tuple(variable.shape)} is "
                                 f"not compatible with provided weight shape {array.shape}.")
            arrays.append(array)
        for variable, array in zip(mine, arrays):
            variable.assign(array.astype(variable.dtype.as_numpy_dtype, copy=False))

    def count_params(self) -> int:
        if not self.built:
            raise ValueError(f"You tried to call `count_params` on layer '{self.name}', but the "
                             "layer isn't built. You can build it manually via: "
                             "`layer.build(input_shape)`.")
        return int(sum(int(np.prod(v.shape)) for v in self.weights))

    # -- losses ------------------------------------------------------------------------------
    def add_loss(self, loss) -> None:
        """Adds a scalar loss (during `call`) that `losses` reports until the next outermost
        call of this layer clears it."""
        for x in nest.flatten(loss):
            if not isinstance(x, Tensor):
                raise ValueError("`add_loss()` can only be called from inside `build()` or "
                                 f"`call()`, on a tensor input. Received invalid value: {x}")
            self._losses.append(x)

    @property
    def losses(self) -> list:
        """`add_loss` losses of this layer and its sublayers, then weight regularizers."""
        result = []
        for layer in self._flatten_layers():
            result.extend(layer._losses)
        for variable in self.trainable_weights:
            regularizer = getattr(variable, "regularizer", None)
            if regularizer is not None:
                result.append(regularizer(variable))
        return result

    def _clear_losses(self) -> None:
        for layer in self._flatten_layers():
            layer._losses.clear()

    # -- building ----------------------------------------------------------------------------
    @_default
    def build(self, input_shape):
        self.built = True

    def _maybe_build(self, bound: dict, tensor_names: list) -> None:
        if self.built:
            return
        if _is_default(type(self).build):
            self.built = True
            return
        params = [p for p in inspect.signature(self.build).parameters.values()
                  if p.kind in (p.POSITIONAL_OR_KEYWORD, p.POSITIONAL_ONLY, p.KEYWORD_ONLY)]
        shapes = {name: nest.map_structure(_shape_of, bound[name]) for name in tensor_names}
        object.__setattr__(self, "_build_shapes_dict", shapes)  # summary() reads it
        if len(params) <= 1:
            first = next(iter(shapes.values()), None)
            self.build(first) if params else self.build()
        else:
            kwargs = {}
            for p in params:
                if not p.name.endswith("_shape"):
                    raise ValueError(
                        "For a `build()` method with more than one argument, all arguments "
                        "should have a `_shape` suffix and match an argument from `call()`. "
                        f"E.g. `build(self, foo_shape, bar_shape)`  For layer "
                        f"'{type(self).__name__}', Received `build()` argument `{p.name}`, "
                        "which does not end in `_shape`.")
                arg = p.name[:-len("_shape")]
                if arg not in bound:
                    raise ValueError(
                        "For a `build()` method with more than one argument, all arguments "
                        "should have a `_shape` suffix and match an argument from `call()`. "
                        f"E.g. `build(self, foo_shape, bar_shape)`  For layer "
                        f"'{type(self).__name__}', received `build()` argument `{p.name}`, but "
                        f"`call()` does not have argument `{arg}`.")
                if arg in shapes:
                    kwargs[p.name] = shapes[arg]
            self.build(**kwargs)
        self.built = True

    # -- calling -----------------------------------------------------------------------------
    def call(self, *args, **kwargs):
        raise NotImplementedError(f"Layer {type(self).__name__} does not have a `call()` method "
                                  "implemented.")

    def _convert_input(self, x):
        if isinstance(x, KerasTensor):
            return x
        if isinstance(x, Variable):
            x = x.value()
        elif not isinstance(x, Tensor):
            if not hasattr(x, "__array__"):
                return x
            x = convert_to_tensor(x)
        if self.autocast and x.dtype.is_floating and x.dtype.name != self._dtype and \
                backend.is_float_dtype(self._dtype):
            if isinstance(x, Tensor):
                mask = get_keras_mask(x)
                x = _math.cast(x, self._dtype)
                if mask is not None:   # the cast input keeps its mask, as in Keras
                    set_keras_mask(x, mask)
        return x

    def __call__(self, *args, **kwargs):
        if "_own_variables" not in vars(self):
            raise RuntimeError(f"In layer '{type(self).__name__}', you forgot to call "
                               "`super().__init__()` as the first statement in the `__init__()` "
                               "method. Go add it!")
        self._called = True
        args = tuple(nest.map_structure(self._convert_input, list(args)))
        kwargs = {k: (v if k == "training" else nest.map_structure(self._convert_input, v))
                  for k, v in kwargs.items()}
        for arg in nest.flatten(args):
            if arg is not None and not _is_tensor_like(arg):
                raise ValueError("Only input tensors may be passed as positional arguments. The "
                                 f"following argument value should be passed as a keyword "
                                 f"argument: {arg} (of type {type(arg)})")
        explicit_training = "training" in kwargs
        training_value = kwargs.pop("training", None) if not self._call_has_training_arg \
            else kwargs.get("training")
        arguments = self._call_signature.bind(*args, **kwargs).arguments
        tensor_names = [n for n, v in arguments.items()
                        if n not in ("training", "mask") and nest.flatten(v) and
                        all(x is None or _is_tensor_like(x) for x in nest.flatten(v)) and
                        any(_is_tensor_like(x) for x in nest.flatten(v))]
        first = arguments[next(iter(arguments))] if arguments else None
        previous_mask, filled_masks = self._populate_masks(arguments, tensor_names, first,
                                                           kwargs)
        assert_input_compatibility(self._input_spec, first, self.name)
        if not self.built:
            with self._scope():
                self._maybe_build(arguments, tensor_names)
            assert_input_compatibility(self._input_spec, first, self.name)

        context = getattr(_calls, "context", None)
        entered = context is None
        if entered:
            context = _calls.context = CallContext(self)
            self._clear_losses()
        try:
            if explicit_training and training_value is not None:
                training = training_value
            elif context.training is not None:
                training = context.training
            else:
                parameter = self._call_signature.parameters.get("training")
                training = None if parameter is None or \
                    parameter.default is inspect.Parameter.empty else parameter.default
            saved_training = context.training
            context.training = training
            if self._call_has_training_arg and training is not None:
                kwargs["training"] = training
            try:
                symbolic = any_symbolic_tensors(args, kwargs)
                try:
                    if symbolic:
                        outputs = self._symbolic_call(args, kwargs, filled_masks)
                    else:
                        with self._scope():
                            outputs = self.call(*args, **kwargs)
                except Exception as e:  # noqa: BLE001 - re-raised, with the call's arguments
                    raised = with_call_arguments(e, type(self).__name__, self._call_signature,
                                                 args, kwargs)
                    raise raised.with_traceback(e.__traceback__) from None
                if not symbolic and self.activity_regularizer is not None:
                    self._add_activity_loss(outputs)
                if previous_mask is not None:
                    self._pass_mask_on(first, outputs, previous_mask, symbolic)
                elif self.supports_masking and not _is_default(type(self).compute_mask):
                    self._set_mask_metadata(first, outputs, None, symbolic)
            finally:
                context.training = saved_training
        finally:
            if entered:
                _calls.context = None
        return outputs

    # -- masking -----------------------------------------------------------------------------
    def _populate_masks(self, arguments, tensor_names, first, kwargs):
        """Keras 3's mask plumbing before `call`: fills in `mask` (one tensor argument) or
        `<name>_mask` (several) from the masks the inputs carry (`eager.keras.masking`), in
        `kwargs`. Returns (the mask the outputs' masks derive from: the `mask` argument, else
        the first argument's, or None when there is none; the argument names filled in)."""
        if isinstance(first, Tensor) and not _mask_store.any_masks():
            return None, ()   # fast path: no live tensor carries a mask
        filled = ()
        if self._call_has_mask_arg and len(tensor_names) == 1:
            if arguments.get("mask") is None:
                mask = nest.map_structure(get_keras_mask, arguments[tensor_names[0]])
                if any(m is not None for m in nest.flatten(mask)):
                    kwargs["mask"] = mask
                    filled = ("mask",)
        elif len(tensor_names) > 1:
            names = self._call_signature.parameters
            for name in tensor_names:
                key = name + "_mask"
                if key in names and arguments.get(key) is None:
                    mask = nest.map_structure(get_keras_mask, arguments[name])
                    if any(m is not None for m in nest.flatten(mask)):
                        kwargs[key] = mask
                        filled += (key,)
        mask = kwargs.get("mask")
        if mask is None:
            mask = nest.map_structure(get_keras_mask, first) if first is not None else None
        if mask is None or not any(m is not None for m in nest.flatten(mask)):
            return None, filled
        return mask, filled

    def _pass_mask_on(self, inputs, outputs, previous_mask, symbolic) -> None:
        """After `call`, with an input mask: a layer that supports masking gives its outputs
        `compute_mask(inputs, previous_mask)`; one that does not drops the mask with Keras's
        warning."""
        if self.supports_masking:
            self._set_mask_metadata(inputs, outputs, previous_mask, symbolic)
        else:
            warnings.warn(f"Layer '{self.name}' (of type {type(self).__name__}) was passed an "
                          "input with a mask attached to it. However, this layer does not "
                          "support masking and will therefore destroy the mask information. "
                          "Downstream layers will not see the mask.", stacklevel=3)

    def _set_mask_metadata(self, inputs, outputs, previous_mask, symbolic) -> None:
        flat_outputs = nest.flatten(outputs)
        if all(get_keras_mask(x) is not None for x in flat_outputs):
            return   # `call` set them itself (e.g. `Masking`)
        if symbolic:
            # KerasTensors have no values: trace compute_mask for the masks' specs.
            masks = compute_output_spec(self.compute_mask, inputs, previous_mask)
        else:
            masks = self.compute_mask(inputs, previous_mask)
        if masks is None:
            return
        for tensor, mask in zip(flat_outputs, nest.flatten(masks)):
            if mask is not None and get_keras_mask(tensor) is None:
                set_keras_mask(tensor, mask)

    @_default
    def compute_mask(self, inputs, previous_mask):
        """The mask of the outputs, from the inputs and their mask: by default the input's
        mask, passed on unchanged (Keras 3's)."""
        return previous_mask

    def _add_activity_loss(self, outputs) -> None:
        for output in nest.flatten(outputs):
            if isinstance(output, Tensor):
                loss = self.activity_regularizer(output)
                if output.shape.rank:
                    batch = output.shape[0]
                    batch = _dynamic_shape(output)[0] if batch is None else batch
                    loss = _composite.divide_no_nan(loss, _math.cast(batch, loss.dtype))
                self.add_loss(loss)

    def _symbolic_call(self, args, kwargs, filled_masks=()):
        """The functional API's call: KerasTensors out, a Node recorded (see the module doc)."""
        saved_losses = list(self._losses)
        try:
            if not _is_default(type(self).compute_output_shape):
                outputs = self.compute_output_spec(*args, **kwargs)
            else:
                def run(*a, **k):
                    with self._scope():
                        return self.call(*a, **k)
                outputs = compute_output_spec(run, *args, **kwargs)
        finally:
            self._losses[:] = saved_losses
        # The node is recorded without the masks `__call__` filled in from the inputs: running
        # the model fills them in again from the actual tensors.
        Node(self, args, {k: v for k, v in kwargs.items() if k not in filled_masks}, outputs)
        return outputs

    def compute_output_spec(self, *args, **kwargs):
        """KerasTensors for the outputs, from `compute_output_shape` (the first argument's
        shape) when the layer defines it, else by tracing `call`."""
        if _is_default(type(self).compute_output_shape):
            return compute_output_spec(self.call, *args, **kwargs)
        shape = self.compute_output_shape(
            nest.map_structure(_shape_of, args[0]) if args else None)
        return _keras_tensors(shape, self._dtype)

    @_default
    def compute_output_shape(self, *args, **kwargs):
        raise NotImplementedError(f"Layer {type(self).__name__} should implement "
                                  "`def compute_output_shape(self, input_shape)`.")

    # -- configuration -----------------------------------------------------------------------
    def get_config(self) -> dict:
        """The constructor arguments that rebuild this layer (`from_config`). A subclass that
        does not override it gets the arguments its `__init__` was called with (defaults
        included), when they are plain values or Keras objects (Keras 3's automatic config);
        otherwise Keras's NotImplementedError. As in Keras, "name" is left out when the
        subclass's `__init__` neither takes `name` nor passes `**kwargs` on."""
        config = {"name": self.name}
        if _is_default(type(self).get_config):
            auto = vars(self).get("_auto_config")
            if auto is None:
                raise NotImplementedError(_NO_AUTO_CONFIG.format(name=type(self).__name__))
            arguments, keeps_name = auto
            config.update(arguments)
            if not keeps_name:
                config.pop("name", None)
        config.update(trainable=self.trainable, dtype=_dtype_config(self._dtype))
        if self.activity_regularizer is not None:
            config["activity_regularizer"] = regularizers.serialize(self.activity_regularizer)
        return config

    get_config._keras_default = True

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        try:
            return cls(**config)
        except (TypeError, ValueError) as e:
            raise TypeError(f"Error when deserializing class '{cls.__name__}' using "
                            f"config={config}.\n\nException encountered: {e}") from None

    # -- notebook display (`eager.state.module_display`): Keras's sublayers and weights ------------
    def _display_children(self) -> list:
        return [(layer.name, layer) for layer in self._sublayers()]

    def _display_variables(self) -> list:
        return [(variable.name, variable) for variable, _ in self._own_variables]

    def _display_parameters(self) -> list:
        return self.weights

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}, built={self.built}>"

    __str__ = __repr__


_NO_AUTO_CONFIG = (
    "\nObject {name} was created by passing\nnon-serializable argument values in `__init__()`,"
    "\nand therefore the object must override `get_config()` in\norder to be serializable. "
    "Please implement `get_config()`.\n\nExample:\n\n\nclass CustomLayer(keras.layers.Layer):"
    "\n    def __init__(self, arg1, arg2, **kwargs):\n        super().__init__(**kwargs)\n"
    "        self.arg1 = arg1\n        self.arg2 = arg2\n\n    def get_config(self):\n"
    "        config = super().get_config()\n        config.update({{\n"
    '            "arg1": self.arg1,\n            "arg2": self.arg2,\n        }})\n'
    "        return config\n")


def _auto_config(cls, args, kwargs):
    """(arguments, keeps_name) for Keras 3's automatic `get_config`: the `__init__` call's
    arguments with defaults, `**kwargs` spread out; None when one is not serializable."""
    try:
        signature = inspect.signature(cls.__init__)
        bound = signature.bind(None, *args, **kwargs)
    except (TypeError, ValueError):
        return None
    bound.apply_defaults()
    arguments = {}
    varkw = None
    for index, (name, value) in enumerate(bound.arguments.items()):
        kind = signature.parameters[name].kind
        if index == 0 or kind is inspect.Parameter.VAR_POSITIONAL:
            continue
        if kind is inspect.Parameter.VAR_KEYWORD:
            varkw = name
            arguments.update(value)
        else:
            arguments[name] = value
    if not _serializable(arguments):
        return None
    arguments = {k: _serialized(v) for k, v in arguments.items()}
    keeps_name = varkw == "kwargs" or "name" in signature.parameters
    return arguments, keeps_name


def _serialized(value):
    if hasattr(value, "get_config") and not isinstance(value, type):
        return serialize_keras_object(value)
    return value


def _serializable(value) -> bool:
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if hasattr(value, "get_config") and not isinstance(value, type):
        return True
    if isinstance(value, (list, tuple)):
        return all(_serializable(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _serializable(v) for k, v in value.items())
    return False


def _dtype_config(dtype) -> dict:
    return {"module": "keras", "class_name": "DTypePolicy", "config": {"name": dtype},
            "registered_name": None}


def _dtype_argument(dtype):
    """A layer's `dtype=`: None, a name, an eager/numpy dtype, or a DTypePolicy config."""
    if isinstance(dtype, dict):
        dtype = dtype.get("config", {}).get("name")
    return backend.standardize_dtype(getattr(dtype, "name", dtype))


def _keras_tensors(shape, dtype):
    """KerasTensors for a shape, or for a list/tuple/dict of shapes."""
    if shape is None or (isinstance(shape, (list, tuple)) and
                         all(d is None or isinstance(d, (int, np.integer)) for d in shape)):
        return KerasTensor(tuple(shape or ()), dtype=dtype)
    if isinstance(shape, dict):
        return {k: _keras_tensors(v, dtype) for k, v in shape.items()}
    return type(shape)(_keras_tensors(s, dtype) for s in shape) if isinstance(shape, tuple) \
        else [_keras_tensors(s, dtype) for s in shape]
