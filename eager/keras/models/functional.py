"""`Functional`: the model `keras.Model(inputs, outputs)` makes.

At construction it walks the `Node`s recorded by the symbolic layer calls back from `outputs`
to `inputs` and keeps them in an order where every node comes after the nodes that made its
inputs. Calling the model converts and checks the inputs (dtype cast to each `Input`'s,
shape against each `Input`'s, with Keras's messages), then runs each node's layer on the
values computed so far, eagerly or inside a trace alike."""

from __future__ import annotations

from ...base import nest
from ...core.tensor_conversion import convert_to_tensor
from ...ops import math_ops as _math
from ...tensor import Tensor
from .. import backend
from ..keras_tensor import KerasTensor
from ..layers.input_spec import InputSpec, assert_input_compatibility
from .functional_config import functional_get_config
from .model import Model

__all__ = ["Functional"]


def _flatten_io(value, what):
    flat = nest.flatten(value)
    for x in flat:
        if not isinstance(x, KerasTensor):
            raise ValueError(f"All `{what}` values must be KerasTensors. Received: "
                             f"{what}={value} including invalid value {x} of type {type(x)}")
    return flat


def _node_of(tensor):
    history = tensor._keras_history
    if history is None:
        raise ValueError(f"Output {tensor} was not produced by a layer call on `keras.Input` "
                         "tensors, so the functional model cannot trace it back to its inputs.")
    return history.operation._inbound_nodes[history.node_index]


def _map_graph(inputs, outputs):
    """The nodes between `inputs` and `outputs`, parents before children, and the layers in
    Keras's order (deepest first, then in the order they were reached)."""
    order, depth, visiting = [], {}, set()

    def visit(node):
        if node in depth or id(node) in visiting:
            return
        visiting.add(id(node))
        for x in node.input_tensors:
            visit(_node_of(x))
        visiting.discard(id(node))
        depth[node] = 0
        order.append(node)

    for x in inputs:
        visit(_node_of(x))
    for x in outputs:
        visit(_node_of(x))
    # Depth: longest path to an output (Keras orders layers by decreasing depth).
    for node in reversed(order):
        for parent in node.parent_nodes:
            if parent in depth:
                depth[parent] = max(depth[parent], depth[node] + 1)
    reachable_inputs = {id(_node_of(x)) for x in inputs}
    for node in order:
        if node.is_input and id(node) not in reachable_inputs:
            raise ValueError(f"Graph disconnected: cannot find a value for the tensor made by "
                             f"layer '{node.operation.name}'; it is not among the model's "
                             "inputs.")
    ranked = sorted(range(len(order)), key=lambda i: (-depth[order[i]], i))
    layers, seen = [], set()
    for i in ranked:
        layer = order[i].operation
        if id(layer) not in seen:
            seen.add(id(layer))
            layers.append(layer)
    return order, layers


class Functional(Model):
    """≈ Keras 3's `Functional` (what `keras.Model(inputs, outputs, name=None)` returns)."""

    def __init__(self, inputs, outputs, name=None, **kwargs):
        trainable = kwargs.pop("trainable", True)
        if kwargs:
            raise ValueError(f"Unrecognized keyword arguments passed to Functional: {kwargs}")
        Model.__init__(self, name=name, trainable=trainable)
        flat_inputs = _flatten_io(inputs, "inputs")
        flat_outputs = _flatten_io(outputs, "outputs")
        self._inputs_struct = inputs
        self._outputs_struct = outputs
        object.__setattr__(self, "_flat_inputs", flat_inputs)
        object.__setattr__(self, "_flat_outputs", flat_outputs)
        nodes, layers = _map_graph(flat_inputs, flat_outputs)
        object.__setattr__(self, "_nodes", nodes)
        self._functional_layers = layers
        self.built = True

    _TF_MODULE_IGNORED_PROPERTIES = Model._TF_MODULE_IGNORED_PROPERTIES | frozenset({
        "_flat_inputs", "_flat_outputs", "_nodes", "_inputs_struct", "_outputs_struct"})

    @property
    def layers(self) -> list:
        return list(self._functional_layers)

    @property
    def inputs(self) -> list:
        return list(self._flat_inputs)

    @property
    def outputs(self) -> list:
        return list(self._flat_outputs)

    @property
    def input(self):
        return self._inputs_struct

    @property
    def output(self):
        return self._outputs_struct

    @property
    def input_spec(self):
        specs = []
        for x in self._flat_inputs:
            layer = x._keras_history.operation
            specs.append(InputSpec(shape=tuple(x.shape), dtype=x.dtype,
                                   name=layer.name, optional=getattr(layer, "optional", False)))
        return specs if len(specs) > 1 or isinstance(self._inputs_struct, (list, dict)) \
            else specs[0]

    @input_spec.setter
    def input_spec(self, value):
        pass

    def _standardize_inputs(self, inputs) -> list:
        if isinstance(self._inputs_struct, dict):
            if not isinstance(inputs, dict):
                flat = nest.flatten(inputs)
            else:
                missing = [k for k in self._inputs_struct if k not in inputs]
                if missing:
                    raise ValueError(f'Missing data for input "{missing[0]}". You passed a data '
                                     f"dictionary with keys {list(inputs.keys())}. Expected the "
                                     f"following keys: {list(self._inputs_struct.keys())}")
                flat = [inputs[k] for k in self._inputs_struct]
        else:
            flat = nest.flatten(inputs)
        if len(flat) != len(self._flat_inputs):
            raise ValueError(f'Layer "{self.name}" expects {len(self._flat_inputs)} input(s), '
                             f"but it received {len(flat)} input tensors. Inputs received: "
                             f"{inputs}")
        out = []
        for x, spec in zip(flat, self._flat_inputs):
            if isinstance(x, KerasTensor):
                out.append(x)
                continue
            if not isinstance(x, Tensor):
                x = convert_to_tensor(x)
            if x.dtype.name != spec.dtype and (backend.is_float_dtype(spec.dtype) or
                                               x.dtype.is_integer or x.dtype.is_bool):
                x = _math.cast(x, spec.dtype)
            out.append(x)
        specs = nest.flatten(self.input_spec)
        assert_input_compatibility(specs, out, self.name)
        return out

    def call(self, inputs, training=None, mask=None):
        flat = self._standardize_inputs(inputs)
        values = {id(k): v for k, v in zip(self._flat_inputs, flat)}
        for node in self._nodes:
            if node.is_input:
                continue
            args, kwargs = node.arguments
            try:
                args, kwargs = nest.map_structure(
                    lambda x: values[id(x)] if isinstance(x, KerasTensor) else x,
                    (list(args), dict(kwargs)))
            except KeyError:
                raise ValueError(f"Graph disconnected: layer '{node.operation.name}' needs a "
                                 "tensor that none of the model's inputs lead to.") from None
            outputs = node.operation(*args, **kwargs)
            for symbolic, value in zip(node.outputs, nest.flatten(outputs)):
                values[id(symbolic)] = value
        return nest.pack_sequence_as(self._outputs_struct,
                                     [values[id(x)] for x in self._flat_outputs])

    def compute_output_shape(self, input_shape):
        return nest.map_structure(lambda x: x.shape, self._outputs_struct)

    def compute_output_spec(self, inputs, training=None, mask=None):
        self._standardize_inputs(inputs)
        return nest.map_structure(lambda x: KerasTensor(x.shape, dtype=x.dtype),
                                  self._outputs_struct)

    def get_config(self):
        """Keras 3's functional config (layers with their calls, input and output layers):
        see `functional_config`."""
        return functional_get_config(self)


Model._functional_class = Functional
