"""`StackedRNNCells`: several cells run as one, each step feeding the previous cell's output to
the next (what `RNN([cell_a, cell_b])` builds). Its states are the cells' states, one entry per
cell (a list for a cell with several states), so `RNN` runs the whole stack in its one loop."""

from __future__ import annotations

from ....base import nest
from ....ops import creation_ops as _creation
from ...serialization import serialize_keras_object
from ..layer import Layer
from ..serialization import deserialize as deserialize_layer

__all__ = ["StackedRNNCells"]


def _output_size(cell):
    size = getattr(cell, "output_size", None)
    if size is not None:
        return size
    state_size = cell.state_size
    return state_size[0] if isinstance(state_size, (list, tuple)) else state_size


class StackedRNNCells(Layer):
    """≈ `keras.layers.StackedRNNCells(cells)`."""

    def __init__(self, cells, **kwargs):
        super().__init__(**kwargs)
        for cell in cells:
            if "call" not in dir(cell):
                raise ValueError("All cells must have a `call` method. Received cell without "
                                 f"a `call` method: {cell}")
            if "state_size" not in dir(cell):
                raise ValueError("All cells must have a `state_size` attribute. Received "
                                 f"cell without a `state_size`: {cell}")
        self.cells = list(cells)

    @property
    def state_size(self):
        return [cell.state_size for cell in self.cells]

    @property
    def output_size(self):
        return _output_size(self.cells[-1])

    def get_initial_state(self, batch_size=None):
        states = []
        for cell in self.cells:
            get = getattr(cell, "get_initial_state", None)
            if get is not None:
                cell_states = get(batch_size)
                single = not isinstance(cell.state_size, (list, tuple))
                states.append(cell_states[0] if single and isinstance(
                    cell_states, (list, tuple)) else cell_states)
            else:
                sizes = cell.state_size
                make = [_creation.zeros((batch_size, size), dtype=self.dtype)
                        for size in nest.flatten(sizes)]
                states.append(make if isinstance(sizes, (list, tuple)) else make[0])
        return states

    def build(self, input_shape):
        for cell in self.cells:
            if isinstance(cell, Layer) and not cell.built:
                with cell._scope():
                    cell.build(input_shape)
                cell.built = True
            input_shape = (tuple(input_shape)[0], _output_size(cell))

    def call(self, inputs, states, training=False):
        new_states = []
        for cell, cell_states in zip(self.cells, states):
            was_list = isinstance(cell_states, (list, tuple))
            kwargs = {"training": training} if isinstance(cell, Layer) and \
                cell._call_has_training_arg else {}
            inputs, cell_states = cell(inputs, list(cell_states) if was_list else [cell_states],
                                       **kwargs)
            cell_states = nest.flatten(cell_states)
            new_states.append(cell_states if was_list or len(cell_states) > 1
                              else cell_states[0])
        return inputs, new_states

    def get_config(self) -> dict:
        config = super().get_config()
        config["cells"] = [serialize_keras_object(cell) for cell in self.cells]
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        config["cells"] = [deserialize_layer(c, custom_objects) for c in config["cells"]]
        return cls(**config)

