"""Keras 3's error context for a failing `call`: the exception is raised again, of the same
class, with the layer's name and the arguments it was called with, so an error deep inside a
model says which layer, and with what, it happened in:

    Exception encountered when calling Dense.call().

    <the original message, in bold>

    Arguments received by Dense.call():
      • inputs=eager.Tensor(shape=(1, 4), dtype=float32)

Only the innermost failing call adds this (the exception is marked), as in Keras.
"""

from __future__ import annotations

from ...base import nest
from ...base.errors import OpError
from ...tensor import Tensor

__all__ = ["with_call_arguments"]


def _format_argument(value):
    """A tensor as its class, shape and dtype (values would make the message unreadable);
    anything else as its repr."""
    if isinstance(value, Tensor):
        shape = value.shape
        shape = tuple(shape.as_list()) if shape.rank is not None else shape
        return f"eager.Tensor(shape={shape}, dtype={value.dtype.name})"
    if getattr(type(value), "_is_keras_tensor", False):
        return f"eager.Tensor(shape={value.shape}, dtype={value.dtype})"
    return repr(value)


def with_call_arguments(error: Exception, class_name: str, signature, args, kwargs):
    """`error` again with Keras's call context (see the module doc), or `error` itself when it
    already has it or the arguments cannot be matched to the signature."""
    if getattr(error, "_keras_call_info_injected", False):
        return error
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        return error
    lines = []
    for parameter in signature.parameters.values():
        if parameter.name in bound.arguments:
            value = nest.map_structure(_format_argument, bound.arguments[parameter.name])
        else:
            value = parameter.default
        lines.append(f"  • {parameter.name}={value}")
    if not lines:
        return error
    if isinstance(error, OpError):
        message = error.message
    else:
        message = error.args[0] if error.args else ""
    name = f"{class_name}.call()"
    message = (f"Exception encountered when calling {name}.\n\n\x1b[1m{message}\x1b[0m\n\n"
               f"Arguments received by {name}:\n" + "\n".join(lines))
    if isinstance(error, OpError):
        raised = type(error)(error.node_def, error.op, message, error.error_code)
    else:
        try:
            raised = type(error)(message)
        except TypeError:
            raised = RuntimeError(message)
    for note in getattr(error, "__notes__", ()):
        raised.add_note(note)
    raised._keras_call_info_injected = True
    return raised
