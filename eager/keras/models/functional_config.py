"""A functional model's config (Keras 3's structure) and the model a config rebuilds.

The config lists the model's layers (Keras's order), each as its serialized config plus its
`name` and `inbound_nodes`: for each call of the layer inside this model, the call's `args`
and `kwargs` with every symbolic input written as `{"class_name": "__keras_tensor__",
"config": {"shape", "dtype", "keras_history": [layer name, node index, tensor index]}}`.
Node indices count only the calls that belong to this model (a layer shared with another
model keeps its other calls out). `input_layers`/`output_layers` give the model's inputs and
outputs as such triples, in the structure the model was made with (one triple, a list, or a
dict).

Rebuilding creates every layer from its config, then replays the calls: a call waits until
the layers that make its inputs have made them (configs may list a layer before the layers
it reads), and a config whose calls can never all be made is rejected before any model is
returned."""

from __future__ import annotations

from ..keras_tensor import KerasTensor
from ..serialization import serialize_keras_object
from .layer_configs import deserialize_layer

__all__ = ["functional_get_config", "functional_from_config"]


def _model_node_indices(model) -> dict:
    """id(node) -> the node's index among its layer's calls that belong to `model`."""
    in_model = {id(n) for n in model._nodes}
    index = {}
    for layer in model.layers:
        count = 0
        for node in layer._inbound_nodes:
            if id(node) in in_model:
                index[id(node)] = count
                count += 1
    return index


def _history(tensor, node_index) -> list:
    history = tensor._keras_history
    node = history.operation._inbound_nodes[history.node_index]
    return [history.operation.name, node_index[id(node)], history.tensor_index]


def _serialize_argument(value, node_index):
    if isinstance(value, KerasTensor):
        return {"class_name": "__keras_tensor__",
                "config": {"shape": list(value.shape), "dtype": value.dtype,
                           "keras_history": _history(value, node_index)}}
    if isinstance(value, (list, tuple)):
        return [_serialize_argument(v, node_index) for v in value]
    if isinstance(value, dict):
        return {k: _serialize_argument(v, node_index) for k, v in value.items()}
    return serialize_keras_object(value)


def _io_config(structure, node_index):
    if isinstance(structure, dict):
        return {k: _history(v, node_index) for k, v in structure.items()}
    if isinstance(structure, (list, tuple)):
        return [_history(v, node_index) for v in structure]
    return _history(structure, node_index)


def functional_get_config(model) -> dict:
    node_index = _model_node_indices(model)
    in_model = {id(n) for n in model._nodes}
    layers = []
    for layer in model.layers:
        entry = serialize_keras_object(layer)
        entry["name"] = layer.name
        nodes = []
        for node in layer._inbound_nodes:
            if id(node) not in in_model or node.is_input:
                continue
            args, kwargs = node.arguments
            nodes.append({"args": _serialize_argument(list(args), node_index),
                          "kwargs": _serialize_argument(dict(kwargs), node_index)})
        entry["inbound_nodes"] = nodes
        layers.append(entry)
    return {"name": model.name, "trainable": model.trainable, "layers": layers,
            "input_layers": _io_config(model._inputs_struct, node_index),
            "output_layers": _io_config(model._outputs_struct, node_index)}


def _is_triple(value) -> bool:
    return isinstance(value, (list, tuple)) and len(value) == 3 and \
        isinstance(value[0], str) and isinstance(value[1], int) and isinstance(value[2], int)


class _UnresolvedError(Exception):
    """A call's input is not made yet (its layer's call comes later in the replay)."""


def _tensor(created, triple):
    name, node_index, tensor_index = triple
    layer = created.get(name)
    if layer is None:
        raise ValueError(f"The functional config refers to layer '{name}', which is not among "
                         "its layers.")
    if node_index >= len(layer._inbound_nodes):
        raise _UnresolvedError(name)
    outputs = layer._inbound_nodes[node_index].outputs
    if tensor_index >= len(outputs):
        raise ValueError(f"The functional config refers to output {tensor_index} of layer "
                         f"'{name}', which has {len(outputs)} output(s).")
    return outputs[tensor_index]


def _deserialize_argument(value, created):
    if isinstance(value, dict):
        if value.get("class_name") == "__keras_tensor__":
            return _tensor(created, value["config"]["keras_history"])
        return {k: _deserialize_argument(v, created) for k, v in value.items()}
    if isinstance(value, list):
        return [_deserialize_argument(v, created) for v in value]
    return value


def _io_tensors(structure, created, what):
    if _is_triple(structure):
        return _tensor(created, structure)
    if isinstance(structure, dict):
        return {k: _tensor(created, v) for k, v in structure.items()}
    if isinstance(structure, list) and all(_is_triple(v) for v in structure):
        return [_tensor(created, v) for v in structure]
    raise ValueError(f"Invalid `{what}` in a functional config: {structure!r}")


def functional_from_config(cls, config, custom_objects=None):
    if not isinstance(config.get("layers"), list):
        raise ValueError("A functional config needs a list of `layers`.")
    created, pending = {}, []
    for entry in config["layers"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise ValueError(f"Invalid layer entry in a functional config: {entry!r}")
        layer = deserialize_layer(entry, custom_objects=custom_objects)
        if entry["name"] in created:
            raise ValueError(f"The functional config lists layer '{entry['name']}' twice.")
        created[entry["name"]] = layer
        pending.append((layer, list(entry.get("inbound_nodes") or [])))
    while any(nodes for _, nodes in pending):
        progress = False
        for layer, nodes in pending:
            while nodes:
                node = nodes[0]
                try:
                    args = _deserialize_argument(node.get("args", []), created)
                    kwargs = _deserialize_argument(node.get("kwargs", {}), created)
                except _UnresolvedError:
                    break
                layer(*args, **kwargs)
                nodes.pop(0)
                progress = True
        if not progress:
            stuck = [layer.name for layer, nodes in pending if nodes]
            raise ValueError(f"The functional config cannot be rebuilt: the calls of layers "
                             f"{stuck} need tensors that no layer of the config makes.")
    inputs = _io_tensors(config["input_layers"], created, "input_layers")
    outputs = _io_tensors(config["output_layers"], created, "output_layers")
    model = cls(inputs=inputs, outputs=outputs, name=config.get("name"))
    if config.get("trainable") is False:
        model.trainable = False
    return model


