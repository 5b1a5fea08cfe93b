"""Nested structures (lists, tuples, namedtuples, dicts) of leaves: flatten and rebuild.

Same order as TensorFlow's `tf.nest`: sequences in order, dicts by sorted key. Used wherever an
API accepts "a tensor or a nested structure of tensors" (gradients, function arguments).
"""

from __future__ import annotations

__all__ = ["flatten", "pack_sequence_as", "map_structure", "is_nested"]


def is_nested(x) -> bool:
    return isinstance(x, (list, tuple, dict))


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _sorted_keys(d):
    try:
        return sorted(d)
    except TypeError:
        raise TypeError("nest only supports dicts with sortable keys, got keys "
                        f"{list(d)}.") from None


def flatten(structure) -> list:
    if isinstance(structure, dict):
        out = []
        for k in _sorted_keys(structure):
            out.extend(flatten(structure[k]))
        return out
    if isinstance(structure, (list, tuple)):
        out = []
        for item in structure:
            out.extend(flatten(item))
        return out
    return [structure]


def pack_sequence_as(structure, flat):
    """Rebuilds `structure`'s shape with the leaves of `flat` (in flatten order)."""
    flat = list(flat)
    packed, used = _pack(structure, flat, 0)
    if used != len(flat):
        raise ValueError(f"Structure had {used} leaves but flat sequence had {len(flat)}.")
    return packed


def _pack(structure, flat, i):
    if isinstance(structure, dict):
        items = {}
        for k in _sorted_keys(structure):
            items[k], i = _pack(structure[k], flat, i)
        return type(structure)((k, items[k]) for k in structure), i
    if isinstance(structure, (list, tuple)):
        items = []
        for item in structure:
            value, i = _pack(item, flat, i)
            items.append(value)
        if _is_namedtuple(structure):
            return type(structure)(*items), i
        return type(structure)(items), i
    if i >= len(flat):
        raise ValueError("Flat sequence has fewer leaves than the structure.")
    return flat[i], i + 1


def map_structure(fn, structure):
    return pack_sequence_as(structure, [fn(x) for x in flatten(structure)])
