"""`TensorShape`: a tuple of dimensions, `None` where a dimension is unknown.

It is a real tuple (so `t.shape == (2, 3)`, unpacking, `len` and numpy all just work) and adds
TensorFlow's methods. Symbolic tensors in traced functions use `None` dimensions; a shape whose
rank is unknown is `TensorShape(None)`, which has no dimensions to iterate over.
"""

from __future__ import annotations

import operator

__all__ = ["TensorShape", "Dimension", "as_shape", "dimension_value"]


def _as_dim(d):
    if d is None:
        return None
    if hasattr(d, "value") and not isinstance(d, int):  # a legacy Dimension-like object
        d = d.value
        if d is None:
            return None
    try:
        v = operator.index(d)
    except TypeError:
        raise TypeError(f"Dimension value must be an integer or None, got {d!r}.") from None
    if v < 0:
        raise ValueError(f"Dimension {v} must be >= 0.")
    return v


class TensorShape(tuple):
    """≈ `tf.TensorShape`. Equal to lists and tuples of the same dimensions."""

    __slots__ = ()
    _rank_known = True

    def __new__(cls, dims=()):
        if dims is None:
            return UNKNOWN_SHAPE
        if isinstance(dims, TensorShape):
            return dims
        if isinstance(dims, int):
            dims = (dims,)
        try:
            return tuple.__new__(cls, [_as_dim(d) for d in dims])
        except TypeError:
            if hasattr(dims, "__index__"):
                return tuple.__new__(cls, (_as_dim(dims),))
            raise

    # -- TensorFlow's surface -------------------------------------------------------------------
    @property
    def rank(self):
        return len(self) if self._rank_known else None

    ndims = rank

    @property
    def dims(self):
        return list(self) if self._rank_known else None

    def as_list(self):
        if not self._rank_known:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self)

    def is_fully_defined(self) -> bool:
        return self._rank_known and None not in self

    def num_elements(self):
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self:
            n *= d
        return n

    def is_compatible_with(self, other) -> bool:
        other = as_shape(other)
        if not self._rank_known or not other._rank_known:
            return True
        if len(self) != len(other):
            return False
        return all(a is None or b is None or a == b for a, b in zip(self, other))

    def assert_is_compatible_with(self, other):
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {as_shape(other)} are incompatible")

    def merge_with(self, other) -> "TensorShape":
        other = as_shape(other)
        if not self._rank_known:
            return other
        if not other._rank_known:
            return self
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        return TensorShape([a if a is not None else b for a, b in zip(self, other)])

    def most_specific_compatible_shape(self, other) -> "TensorShape":
        """The most specific shape compatible with both (dims that differ become None)."""
        other = as_shape(other)
        if not self._rank_known or not other._rank_known or len(self) != len(other):
            return UNKNOWN_SHAPE
        return TensorShape([a if a == b else None for a, b in zip(self, other)])

    def concatenate(self, other) -> "TensorShape":
        other = as_shape(other)
        if not self._rank_known or not other._rank_known:
            return UNKNOWN_SHAPE
        return TensorShape(tuple(self) + tuple(other))

    def with_rank(self, rank: int) -> "TensorShape":
        if not self._rank_known:
            return TensorShape([None] * rank)
        if len(self) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")
        return self

    def with_rank_at_least(self, rank: int) -> "TensorShape":
        if self._rank_known and len(self) < rank:
            raise ValueError(f"Shape {self} must have rank at least {rank}")
        return self

    def assert_has_rank(self, rank: int):
        if self._rank_known and len(self) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")

    def __getitem__(self, key):
        if isinstance(key, slice):
            if not self._rank_known:
                return UNKNOWN_SHAPE
            return TensorShape(tuple.__getitem__(self, key))
        if not self._rank_known:
            return None
        return tuple.__getitem__(self, key)

    # -- equality: a TensorShape equals a list or tuple with the same dims ----------------------
    def __eq__(self, other):
        if isinstance(other, TensorShape):
            return self._rank_known == other._rank_known and tuple.__eq__(self, other)
        if isinstance(other, (list, tuple)):
            return self._rank_known and tuple.__eq__(self, tuple(other))
        return NotImplemented

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = tuple.__hash__

    def __add__(self, other):
        return self.concatenate(other)

    def __radd__(self, other):
        return as_shape(other).concatenate(self)

    def __repr__(self):
        if not self._rank_known:
            return "TensorShape(None)"
        return f"TensorShape({list(self)})"

    def __str__(self):
        if not self._rank_known:
            return "<unknown>"
        if len(self) == 1:
            return f"({self[0]},)"
        return "(" + ", ".join("None" if d is None else str(d) for d in self) + ")"

    def __reduce__(self):
        return TensorShape, (None if not self._rank_known else list(self),)


class _UnknownRankShape(TensorShape):
    __slots__ = ()
    _rank_known = False

    def __new__(cls):
        return tuple.__new__(cls, ())

    def __len__(self):
        raise ValueError("Cannot take the length of a shape with unknown rank.")

    def __iter__(self):
        raise ValueError("Cannot iterate over a shape with unknown rank.")

    def __bool__(self):
        return True

    def __hash__(self):
        return hash("TensorShape(None)")


UNKNOWN_SHAPE = _UnknownRankShape()


def as_shape(shape) -> TensorShape:
    """Converts a list, tuple, int or None (unknown rank) to a `TensorShape`."""
    if isinstance(shape, TensorShape):
        return shape
    return TensorShape(shape)


def dimension_value(dimension):
    """≈ `tf.compat.dimension_value`: the int (or None) value of a dimension."""
    return dimension


Dimension = int
