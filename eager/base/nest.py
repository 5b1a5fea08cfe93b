"""Nested structures (lists, tuples, namedtuples, dicts) of leaves: flatten and rebuild.

Same order as TensorFlow's `tf.nest`: sequences in order, dicts by sorted key. Used wherever an
API accepts "a tensor or a nested structure of tensors" (gradients, function arguments).
"""

from __future__ import annotations

__all__ = ["flatten", "pack_sequence_as", "map_structure", "is_nested", "assert_same_structure",
           "map_structure_up_to", "flatten_up_to", "flatten_with_joined_string_paths"]


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


def map_structure(fn, *structures, check_types=True, expand_composites=False):
    """`fn` applied leaf by leaf across structures of the same shape (TensorFlow's
    `tf.nest.map_structure`), rebuilt as the first."""
    if not structures:
        raise ValueError("Must provide at least one structure")
    for other in structures[1:]:
        assert_same_structure(structures[0], other, check_types=check_types)
    flats = [flatten(s) for s in structures]
    return pack_sequence_as(structures[0], [fn(*leaves) for leaves in zip(*flats)])


def _kind(x):
    if isinstance(x, dict):
        return "dict"
    return type(x) if isinstance(x, (list, tuple)) else None


def _shape_of(x):
    """The structure with its leaves replaced by None, for comparisons and messages."""
    return pack_sequence_as(x, [None] * len(flatten(x))) if is_nested(x) else None


def assert_same_structure(nest1, nest2, check_types=True, expand_composites=False):
    """≈ `tf.nest.assert_same_structure`: a ValueError (TypeError for differing sequence types
    when `check_types`) unless both have the same nesting and number of leaves."""
    def walk(a, b):
        if is_nested(a) != is_nested(b):
            raise ValueError(f"The two structures don't have the same nested structure.\n\n"
                             f"First structure: {nest1!r}\n\nSecond structure: {nest2!r}")
        if not is_nested(a):
            return
        if check_types and _kind(a) != _kind(b):
            raise TypeError(f"The two structures don't have the same sequence type. Input "
                            f"structure has type {type(a)!r}, while shallow structure has "
                            f"type {type(b)!r}.")
        if isinstance(a, dict) != isinstance(b, dict):
            raise ValueError("The two structures don't have the same nested structure.")
        if isinstance(a, dict):
            if _sorted_keys(a) != _sorted_keys(b):
                raise ValueError(f"The two dictionaries don't have the same set of keys. First "
                                 f"structure has keys {list(a)}, while second structure has "
                                 f"keys {list(b)}.")
            for k in _sorted_keys(a):
                walk(a[k], b[k])
            return
        if len(a) != len(b):
            raise ValueError(f"The two structures don't have the same nested structure.\n\n"
                             f"First structure: {nest1!r}\n\nSecond structure: {nest2!r}\n\n"
                             f"More specifically: Substructure {a!r} has length {len(a)}, while "
                             f"{b!r} has length {len(b)}")
        for x, y in zip(a, b):
            walk(x, y)
    walk(nest1, nest2)


def flatten_up_to(shallow_tree, input_tree, check_types=True, expand_composites=False):
    """≈ `tf.nest.flatten_up_to`: `input_tree` flattened only as deep as `shallow_tree`."""
    if not is_nested(shallow_tree):
        return [input_tree]
    if not is_nested(input_tree):
        raise TypeError(f"If shallow structure is a sequence, input must also be a sequence. "
                        f"Input has type: {type(input_tree)!r}.")
    out = []
    if isinstance(shallow_tree, dict):
        for k in _sorted_keys(shallow_tree):
            if k not in input_tree:
                raise ValueError(f"The shallow_tree's keys are not a subset of the input_tree's "
                                 f"keys: {k!r} is missing.")
            out.extend(flatten_up_to(shallow_tree[k], input_tree[k], check_types))
        return out
    if len(shallow_tree) != len(input_tree):
        raise ValueError(f"The two structures don't have the same sequence length. Input "
                         f"structure has length {len(input_tree)}, while shallow structure has "
                         f"length {len(shallow_tree)}.")
    for s, i in zip(shallow_tree, input_tree):
        out.extend(flatten_up_to(s, i, check_types))
    return out


def map_structure_up_to(shallow_tree, func, *inputs, check_types=True):
    """≈ `tf.nest.map_structure_up_to`: `func` applied to the subtrees of `inputs` at the
    leaves of `shallow_tree`, rebuilt as `shallow_tree`."""
    flats = [flatten_up_to(shallow_tree, i, check_types) for i in inputs]
    return pack_sequence_as(shallow_tree, [func(*args) for args in zip(*flats)])


def flatten_with_joined_string_paths(structure, separator="/", expand_composites=False):
    """≈ `tf.nest.flatten_with_joined_string_paths`: (path, leaf) pairs in flatten order, the
    path the keys and indices joined by `separator`."""
    def walk(x, path):
        if isinstance(x, dict):
            for k in _sorted_keys(x):
                yield from walk(x[k], path + (str(k),))
        elif isinstance(x, (list, tuple)):
            for i, item in enumerate(x):
                yield from walk(item, path + (str(i),))
        else:
            yield separator.join(path), x
    return list(walk(structure, ()))
