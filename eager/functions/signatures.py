"""A trace's signature as TensorFlow presents it: its argument template, flat form and text.

A trace (`ConcreteFunction`) remembers its arguments as a *template*: the bound parameter values
with each tensor leaf replaced by a `TensorSlot` (its `TensorSpec`) and each Variable leaf by a
`VariableSlot`; Python values stay as they were traced. From the template come:

* the names of the tensor leaves (`leaf_names`), TensorFlow's: the parameter's name for a tensor
  parameter, `xs_0`, `d_key`, `p_field` for leaves of lists, dicts and namedtuples, `args_0` for
  the entries of `*args`, the key for those of `**kwargs`; a name the user gave a TensorSpec
  wins. They name the specs of `structured_input_signature`, and the parameters of the *flat
  signature*: a concrete function may also be called with its tensor arguments alone,
  positionally or by those names (`bind_flat`), as TensorFlow allows;
* the parameter list TensorFlow prints (`parameters`): with `*args`, every earlier parameter and
  each `*args` entry become positional-only, and the `**kwargs` entries keyword-only;
* the text (`signature_text`): TensorFlow's `pretty_printed_signature` layout, an "Input
  Parameters:" block (one `name (KIND): type` line each), "Output Type:" and "Captures:" (the id
  and spec of each captured value), or one line `(a: type, ...) -> type` when not verbose. A
  tensor is its `TensorSpec` (with the name the user gave, else None), a Variable a
  `VariableSpec`, a Python value `Literal[value]`, structures `List[...]`, `Tuple[...]`,
  `Dict[[key, type], ...]` and `Name[[field, type], ...]` for a namedtuple.

Only inspection and error paths use this module; calls never do.
"""

from __future__ import annotations

import inspect

from ..base import nest
from ..base.tensor_shape import TensorShape
from ..core.composite import CompositeTensor
from ..core.specs import TensorSpec
from ..tensor import Tensor
from ..variables import Variable

__all__ = ["TensorSlot", "VariableSlot", "leaf_names", "parameters", "signature_text",
           "bind_flat"]

_P = inspect.Parameter
_KIND_NAMES = {_P.POSITIONAL_ONLY: "POSITIONAL_ONLY",
               _P.POSITIONAL_OR_KEYWORD: "POSITIONAL_OR_KEYWORD",
               _P.KEYWORD_ONLY: "KEYWORD_ONLY"}


class TensorSlot:
    """Marks a tensor argument's place in a trace's argument template, with its spec (named
    after the leaf, see `leaf_names`) and the name the user's TensorSpec gave, or None (a class
    of its own, so a TensorSpec passed as a plain Python value is never mistaken for one)."""

    __slots__ = ("spec", "given_name")

    def __init__(self, spec, given_name=None):
        self.spec = spec
        self.given_name = given_name


class VariableSlot(TensorSlot):
    """Marks a Variable argument: fed its handle (spec: a scalar resource), keyed and checked by
    the variable's `dtype` and `shape`; `trainable` is the traced variable's (for the text)."""

    __slots__ = ("dtype", "shape", "trainable")

    def __init__(self, spec, dtype, shape, trainable=True):
        super().__init__(spec)
        self.dtype = dtype
        self.shape = shape
        self.trainable = trainable


class CompositeSlot:
    """Marks a composite argument (`RaggedTensor`, `SparseTensor`): its `TypeSpec` and one
    TensorSlot per component (`eager.core.composite`), fed in component order."""

    __slots__ = ("spec", "slots")

    def __init__(self, spec, slots):
        self.spec = spec
        self.slots = slots


def tensor_slots(template) -> list:
    """The TensorSlots of a template in feeding order (a composite's components in place)."""
    found = []
    for leaf in nest.flatten(template):
        if isinstance(leaf, CompositeSlot):
            found.extend(leaf.slots)
        elif isinstance(leaf, TensorSlot):
            found.append(leaf)
    return found


# -- names -----------------------------------------------------------------------------------------
def leaf_names(value, name, kind=None) -> list:
    """The names of `value`'s leaves in `nest.flatten` order, for parameter `name` of `kind`
    (see the module doc)."""
    if kind is _P.VAR_KEYWORD:
        return [n for key in sorted(value) for n in _paths(value[key], str(key))]
    return list(_paths(value, name))


def _paths(value, prefix):
    if isinstance(value, dict):
        for key in sorted(value):
            yield from _paths(value[key], f"{prefix}_{key}")
    elif isinstance(value, tuple) and hasattr(type(value), "_fields"):
        for field, item in zip(value._fields, value):
            yield from _paths(item, f"{prefix}_{field}")
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _paths(item, f"{prefix}_{i}")
    else:
        yield prefix


# -- the text --------------------------------------------------------------------------------------
def parameters(names, kinds, template) -> list:
    """`(name, kind, value)` per parameter as TensorFlow lists them (see the module doc)."""
    has_var_positional = _P.VAR_POSITIONAL in kinds
    found = []
    for name, kind, value in zip(names, kinds, template):
        if kind is _P.VAR_POSITIONAL:
            found.extend((f"{name}_{i}", _P.POSITIONAL_ONLY, v) for i, v in enumerate(value))
        elif kind is _P.VAR_KEYWORD:
            found.extend((str(k), _P.KEYWORD_ONLY, v) for k, v in value.items())
        elif has_var_positional and kind is _P.POSITIONAL_OR_KEYWORD:
            found.append((name, _P.POSITIONAL_ONLY, value))
        else:
            found.append((name, kind, value))
    return found


def type_text(value, aliases=None) -> str:
    """TensorFlow's text for the type of one argument or returned value (module doc).
    `aliases` numbers the distinct variables met so far (VariableSpec's alias_id)."""
    if isinstance(value, VariableSlot):
        aliases = {} if aliases is None else aliases
        alias = aliases.setdefault(id(value), len(aliases))
        return (f"VariableSpec(shape={value.shape}, dtype=eager.{value.dtype.name}, "
                f"trainable={value.trainable}, alias_id={alias})")
    if isinstance(value, TensorSlot):
        return repr(TensorSpec(value.spec.shape, value.spec.dtype, value.given_name))
    if isinstance(value, CompositeSlot):
        return repr(value.spec)
    if isinstance(value, CompositeTensor):
        return repr(value._type_spec)
    if isinstance(value, Tensor):
        return repr(TensorSpec(value.shape, value.dtype))
    if isinstance(value, dict):
        items = ", ".join(f"[{k!r}, {type_text(v, aliases)}]" for k, v in value.items())
        return f"Dict[{items}]"
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        items = ", ".join(f"[{f!r}, {type_text(v, aliases)}]"
                          for f, v in zip(value._fields, value))
        return f"{type(value).__name__}[{items}]"
    if isinstance(value, (list, tuple)):
        kind = "List" if isinstance(value, list) else "Tuple"
        return f"{kind}[{', '.join(type_text(v, aliases) for v in value)}]"
    return f"Literal[{value!r}]"


def signature_text(params, outputs, captures, verbose=True) -> str:
    """TensorFlow's `pretty_printed_signature` for `params` (from `parameters`), the returned
    structure `outputs` and the captured values `captures` (module doc)."""
    aliases = {}
    if not verbose:
        return f"({_parameters_line(params, aliases)}) -> {type_text(outputs, aliases)}"
    lines = ["Input Parameters:"]
    lines += [f"  {name} ({_KIND_NAMES[kind]}): {type_text(value, aliases)}"
              for name, kind, value in params]
    lines += ["Output Type:", f"  {type_text(outputs, aliases)}", "Captures:"]
    if captures:
        lines += [f"  {id(c)}: {TensorSpec(c.shape, c.dtype)!r}" for c in captures]
    else:
        lines.append("  None")
    return "\n".join(lines)


def _parameters_line(params, aliases) -> str:
    """`a: T, b: T, /, *, c: T`, with Python's separators for positional-only and keyword-only
    parameters."""
    parts = []
    positional_only = [i for i, p in enumerate(params) if p[1] is _P.POSITIONAL_ONLY]
    star_done = False
    for i, (name, kind, value) in enumerate(params):
        if kind is _P.KEYWORD_ONLY and not star_done:
            parts.append("*")
            star_done = True
        parts.append(f"{name}: {type_text(value, aliases)}")
        if positional_only and i == positional_only[-1]:
            parts.append("/")
    return ", ".join(parts)


def output_types(outputs, of):
    """`outputs` (a returned structure) with each tensor replaced by `of(tensor)` and each
    other leaf by `of(None)` (`output_shapes`, `output_dtypes`)."""
    if isinstance(outputs, Tensor):
        return of(outputs)
    if isinstance(outputs, dict):
        return type(outputs)((k, output_types(v, of)) for k, v in outputs.items())
    if isinstance(outputs, tuple) and hasattr(type(outputs), "_fields"):
        return type(outputs)(*[output_types(v, of) for v in outputs])
    if isinstance(outputs, (list, tuple)):
        return type(outputs)(output_types(v, of) for v in outputs)
    return of(None)


def shape_of(t):
    return TensorShape(None) if t is None else t.shape


def dtype_of(t):
    return None if t is None else t.dtype


# -- the flat signature ----------------------------------------------------------------------------
def bind_flat(function_name, slots, args, kwargs) -> list:
    """The values a call with tensor arguments only gives each slot of `slots` (the template's
    tensor and variable slots, in order), positionally or by their names; TypeError with
    TensorFlow's words when the call does not fit."""
    names = [s.spec.name for s in slots]
    summary = f"{function_name}({', '.join(names)})"
    if len(args) > len(names):
        raise TypeError(f"{summary} takes {len(names)} positional arguments, got {len(args)}.")
    given = list(args)
    rest = names[len(args):]
    unexpected = [k for k in kwargs if k not in rest]
    if unexpected:
        raise TypeError(f"{summary} got unexpected keyword arguments: "
                        f"{', '.join(unexpected)}.")
    missing = [n for n in rest if n not in kwargs]
    if missing:
        raise TypeError(f"{summary} missing required arguments: {', '.join(missing)}.")
    given += [kwargs[n] for n in rest]
    for i, (slot, value) in enumerate(zip(slots, given)):
        wanted = Variable if isinstance(slot, VariableSlot) else Tensor
        if not isinstance(value, wanted):
            raise TypeError(f"{summary}: expected argument #{i}(zero-based) to be a "
                            f"{wanted.__name__}; got {type(value).__name__} ({value!r:.80}).")
    return given
