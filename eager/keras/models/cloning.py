"""`keras.models.clone_model` and `keras.models.model_from_json`: a model's architecture with
fresh weights.

Each layer is cloned by `clone_function` (default: `layer.__class__.from_config(
layer.get_config())`, so new, unbuilt weights), once, however often the model uses it. A
`Sequential` model is rebuilt from the clones (on `input_tensors` when given, else on a copy
of its `Input`), and compiled like the original when the original was compiled (as Keras 3);
a functional model replays its recorded calls on the clones from new `Input`s (or
`input_tensors`); any other model is rebuilt from its config."""

from __future__ import annotations

import json

from ...base import nest
from ..keras_tensor import KerasTensor
from ..layers.core.input_layer import Input, InputLayer
from ..serialization import custom_object_scope, deserialize_keras_object, serialize_keras_object
from .functional import Functional
from .layer_configs import builtin_layer_classes
from .sequential import Sequential

__all__ = ["clone_model", "model_from_json"]


def _default_clone(layer):
    return layer.__class__.from_config(layer.get_config())


def _cached(clone_function):
    if clone_function is None:
        clone_function = _default_clone
    elif not callable(clone_function):
        raise ValueError("Expected `clone_function` argument to be a callable. Received: "
                         f"clone_function={clone_function}")
    cache = {}

    def clone(layer):
        if id(layer) not in cache:
            cache[id(layer)] = clone_function(layer)
        return cache[id(layer)]
    return clone


def clone_model(model, input_tensors=None, clone_function=None, call_function=None,
                recursive=False, **kwargs):
    """≈ `keras.models.clone_model(model, input_tensors=None, clone_function=None,
    call_function=None, recursive=False)`."""
    if kwargs:
        raise ValueError(f"Unexpected keyword argument(s): {tuple(kwargs.keys())}")
    if recursive:
        raise NotImplementedError("clone_model: `recursive=True` is not supported by "
                                  "eager.keras; nested models are cloned by `clone_function`.")
    if isinstance(model, Sequential):
        if call_function is not None:
            raise ValueError("`call_function` argument is not supported with Sequential models. "
                             " In a Sequential model, layers aren't called at model-construction "
                             "time (they're merely listed). Use `call_function` with Functional "
                             "models only. Received model of type "
                             f"'{model.__class__.__name__}', with call_function={call_function}")
        return _clone_sequential(model, input_tensors, _cached(clone_function))
    if isinstance(model, Functional):
        return _clone_functional(model, input_tensors, _cached(clone_function), call_function)
    if clone_function or input_tensors:
        raise ValueError("Arguments `clone_function` and `input_tensors` are only supported for "
                         "Sequential models or Functional models. Received model of type "
                         f"'{model.__class__.__name__}', with clone_function={clone_function} "
                         f"and input_tensors={input_tensors}")
    if call_function is not None:
        raise ValueError("Argument `call_function` is only supported for Functional models. "
                         f"Received model of type '{model.__class__.__name__}', with "
                         f"call_function={call_function}")
    config = serialize_keras_object(model)
    config.pop("compile_config", None)
    return deserialize_keras_object(config, module_objects=builtin_layer_classes(),
                                    custom_objects={type(model).__name__: type(model)})


def _clone_sequential(model, input_tensors, clone):
    new_layers = [clone(layer) for layer in model.layers]
    reference = model._input_layer
    name = reference.name if reference is not None else None
    optional = reference.optional if reference is not None else False
    if input_tensors is not None:
        if isinstance(input_tensors, (list, tuple)):
            if len(input_tensors) != 1:
                raise ValueError("Argument `input_tensors` must contain a single tensor.")
            input_tensors = input_tensors[0]
        if not isinstance(input_tensors, KerasTensor):
            raise ValueError("Argument `input_tensors` must be a KerasTensor. Received invalid "
                             f"value: input_tensors={input_tensors}")
        new_layers = [Input(tensor=input_tensors, name=name, optional=optional)] + new_layers
    elif reference is not None:
        new_layers = [Input(batch_shape=reference.batch_shape, dtype=reference.dtype,
                            name=name, optional=optional)] + new_layers
    cloned = Sequential(new_layers, name=model.name, trainable=model.trainable)
    if model.compiled:
        cloned.compile_from_config(model.get_compile_config())
    return cloned


def _clone_functional(model, input_tensors, clone, call_function):
    old_inputs = model.inputs
    if input_tensors is not None:
        new_inputs = nest.flatten(input_tensors)
        if len(new_inputs) != len(old_inputs) or \
                not all(isinstance(x, KerasTensor) for x in new_inputs):
            raise ValueError("Argument `input_tensors` must be a list of KerasTensors, one per "
                             f"model input ({len(old_inputs)}). Received: "
                             f"input_tensors={input_tensors}")
        new_inputs = [x if x._keras_history is not None else Input(tensor=x)
                      for x in new_inputs]
    else:
        new_inputs = []
        for x in old_inputs:
            layer = x._keras_history.operation
            new_inputs.append(Input(batch_shape=layer.batch_shape, dtype=layer.dtype,
                                    name=layer.name, optional=layer.optional))
    values = {id(old): new for old, new in zip(old_inputs, new_inputs)}
    for node in model._nodes:
        if node.is_input:
            continue
        layer = node.operation
        args, kwargs = node.arguments
        args, kwargs = nest.map_structure(
            lambda x: values[id(x)] if isinstance(x, KerasTensor) else x,
            (list(args), dict(kwargs)))
        new_layer = clone(layer) if not isinstance(layer, InputLayer) else layer
        if call_function is not None:
            outputs = call_function(new_layer, *args, **kwargs)
        else:
            outputs = new_layer(*args, **kwargs)
        for old, new in zip(node.outputs, nest.flatten(outputs)):
            values[id(old)] = new
    outputs = nest.pack_sequence_as(model._outputs_struct,
                                    [values[id(x)] for x in model.outputs])
    inputs = nest.pack_sequence_as(model._inputs_struct, new_inputs)
    return Functional(inputs, outputs, name=model.name, trainable=model.trainable)


def model_from_json(json_string, custom_objects=None):
    """≈ `keras.models.model_from_json(json_string, custom_objects=None)`: the model a
    `to_json()` string describes, with fresh weights."""
    config = json.loads(json_string)
    with custom_object_scope(custom_objects or {}):
        return deserialize_keras_object(config, module_objects=builtin_layer_classes(),
                                        printable_module_name="layer")
