"""User functions over elements (`map`, `filter`, `scan`, `reduce`, ...), traced once.

As in TensorFlow, a function given to a transformation is traced when the dataset is built, as
an `eager.function` whose `input_signature` is the element spec (AutoGraph applies), and the
trace runs once per element. So Python side effects in it run once, at the trace; a tensor
error surfaces when the element is produced; and the output structure and types are known
before any element exists (they make the new `element_spec`).

The element is passed TensorFlow's way: a plain tuple as separate arguments, anything else
(a tensor, a dict, a namedtuple) as one. What the function returns is an element: a list
becomes a tuple, Python and numpy values become tensors.

The trace is called with the flat tensors (positional `EagerTensor`s: the concrete function's
fast call), and the flat outputs are packed into the traced output structure. The trace is made
under a `CPU:0` device scope, so its ops run on the host (TensorFlow runs input pipelines on the
CPU) even where a GPU is the default device.
"""

from __future__ import annotations

import inspect

from ..autograph.api import converting_call
from ..base import errors as _errors
from ..core.composite import CompositeTensor
from ..core.context import device as _device_scope
from ..core.specs import TensorSpec
from ..core.tensor_conversion import convert_to_tensor
from ..functions.polymorphic import Function
from ..tensor import Tensor
from . import structure as _st

__all__ = ["StructuredFunction"]


class StructuredFunction:
    """`func` traced over elements of `input_spec` (see the module doc). `output_spec` is the
    spec of what it returns; calling it on an element returns the output element."""

    __slots__ = ("func", "input_spec", "output_spec", "_output_structure", "_concrete",
                 "_single", "_what", "_composite")

    def __init__(self, func, input_spec, what, autograph=True, user_function=None):
        """`user_function`: the function errors name, when `func` wraps it."""
        if not callable(func):
            raise TypeError(f"`{what}` must be callable, got {func!r}.")
        self.func = user_function or func
        self.input_spec = input_spec
        self._what = what
        self._output_structure = None
        flat_specs = _st.flatten_components(input_spec)
        for s in flat_specs:
            if not isinstance(s, TensorSpec):
                raise TypeError(f"{what}: elements that are datasets cannot be passed to a "
                                f"traced function; use flat_map or interleave over them.")
        target = converting_call(func) if autograph else func
        unpack = input_spec.__class__ is tuple

        def flat_function(*flat):
            element = _st.pack_components(input_spec, list(flat))
            result = target(*element) if unpack else target(element)
            result = _as_element(result, what)
            self._output_structure = result
            return tuple(_st.flatten_components(result))

        name = getattr(func, "__name__", "function")
        flat_function.__name__ = name if name.isidentifier() else "function"
        # One positional parameter per component (TensorFlow names them args_0, args_1, ...),
        # so that the input signature binds.
        flat_function.__signature__ = inspect.Signature([
            inspect.Parameter(f"args_{i}", inspect.Parameter.POSITIONAL_ONLY)
            for i in range(len(flat_specs))])
        traced = Function(flat_function, input_signature=flat_specs, autograph=False)
        with _device_scope("CPU:0"):  # the pipeline's ops run on the host, as TensorFlow's
            self._concrete = traced.get_concrete_function()
        structure = self._output_structure
        self.output_spec = _st.map_structure(_output_leaf_spec, structure)
        self._composite = _st.has_composites(self.output_spec)
        outputs = _st.flatten(structure)
        self._single = len(outputs) == 1 and not isinstance(structure, (tuple, dict)) \
            and not self._composite

    def __call__(self, element):
        """The function's output for one element (flat tensors in, packed element out); an
        error names the user's function (see `_note`)."""
        flat = _st.flatten_components(element)
        try:
            out = self._concrete(*flat)
        except _errors.OpError as exc:
            _note(exc, self.func, self._what)
            raise
        if self._single:
            return out[0]
        if self._composite:
            return _st.pack_components(self.output_spec, list(out))
        return _st.pack(self._output_structure, list(out))


def _output_leaf_spec(t):
    """The spec of one traced output: a composite's TypeSpec, else a TensorSpec."""
    if isinstance(t, CompositeTensor):
        return t._type_spec
    return TensorSpec(t.shape, t.dtype)


def _note(exc, func, what) -> None:
    """Adds TensorFlow's "Error in user-defined function passed to ... transformation" with
    where the function is defined, unless the runtime already named the failing node's line
    ("Detected at node ... defined at file:line")."""
    notes = getattr(exc, "__notes__", ())
    if any(n.startswith(("Detected at node", "Error in user-defined")) for n in notes):
        return
    code = getattr(func, "__code__", None)
    where = f" ({code.co_filename}:{code.co_firstlineno})" if code is not None else ""
    name = getattr(func, "__qualname__", repr(func))
    exc.add_note(f"Error in user-defined function passed to `{what}` transformation: "
                 f"{name}{where}")


def _as_element(value, what):
    """A traced function's return value as an element: lists are tuples, leaves tensors."""
    if isinstance(value, list):
        value = tuple(value)
    if isinstance(value, dict):
        return type(value)((k, _as_element(v, what)) for k, v in value.items())
    if isinstance(value, tuple):
        items = [_as_element(v, what) for v in value]
        return type(value)(*items) if hasattr(type(value), "_fields") else tuple(items)
    if value is None:
        raise TypeError(f"The function passed to `{what}` returned None: a tf.data element "
                        "must be made of tensors (return a tensor, or a tuple or dict of them).")
    if isinstance(value, (Tensor, CompositeTensor)):
        return value
    try:
        return convert_to_tensor(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"The function passed to `{what}` returned {value!r}, which is not a "
                        f"tensor and cannot be converted to one ({exc}).") from None
