"""A module's notebook display: a collapsible tree of its submodules, each with its own
variables' shapes and its parameter count (`eager.base.rich_display` draws it).

Modules describe themselves through three methods, so an `eager.Module` and a Keras layer (which
finds its children and weights its own way) draw the same tree: `_display_children()` gives
(label, submodule) pairs, `_display_variables()` the (label, variable) pairs the module holds
itself, and `_display_parameters()` every variable under it (what the count sums).
"""

from __future__ import annotations

import math

from ..base.rich_display import tree_html, tree_node

__all__ = ["module_html", "parameter_count"]


def parameter_count(variables) -> int:
    """Elements of `variables`, each counted once."""
    unique = {id(v): v for v in variables}.values()
    return sum(math.prod(int(d) for d in v.shape) for v in unique)


def _variable_fact(label, variable):
    trainable = "" if variable.trainable else ", non-trainable"
    return label, f"{tuple(variable.shape)} {variable.dtype.name}{trainable}"


def _node(label, module, path):
    kind = type(module).__name__
    params = parameter_count(module._display_parameters())
    summary = f"{params:,} params" if getattr(module, "built", True) else "unbuilt"
    if id(module) in path:  # a module reachable from itself: drawn once, where first met
        return tree_node(f"{label} ({kind})", summary + ", shown above")
    path = path | {id(module)}
    facts = [_variable_fact(name, v) for name, v in module._display_variables()]
    children = [_node(name, child, path) for name, child in module._display_children()]
    return tree_node(f"{label} ({kind})", summary, facts, children)


def module_html(module) -> str:
    """The module's tree, expanded one level, with its parameter totals below."""
    trainable = parameter_count(module.trainable_variables)
    non_trainable = parameter_count(module.non_trainable_variables)
    footer = [("Total params", f"{trainable + non_trainable:,}"),
              ("Trainable params", f"{trainable:,}"),
              ("Non-trainable params", f"{non_trainable:,}")]
    return tree_html(f"{type(module).__name__} '{module.name}'",
                     _node(module.name, module, frozenset()), footer)
