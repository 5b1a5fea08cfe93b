"""`ReduceOp`: how values from replicas combine (≈ `tf.distribute.ReduceOp`)."""

import enum


class ReduceOp(enum.Enum):
    """≈ `tf.distribute.ReduceOp`: SUM or MEAN across replicas."""

    SUM = "SUM"
    MEAN = "MEAN"

    @staticmethod
    def from_variable_aggregation(aggregation):
        name = getattr(aggregation, "name", str(aggregation))
        if name in ("SUM", "MEAN"):
            return ReduceOp[name]
        raise ValueError(f"Could not convert from `tf.VariableAggregation` {aggregation} to "
                         "`tf.distribute.ReduceOp` type")

    def __str__(self):
        return f"ReduceOp.{self.name}"


def as_reduce_op(value) -> ReduceOp:
    """A ReduceOp from itself or its name ("SUM", "mean")."""
    if isinstance(value, ReduceOp):
        return value
    if isinstance(value, str) and value.upper() in ReduceOp.__members__:
        return ReduceOp[value.upper()]
    raise ValueError(f"Unknown reduce op {value!r}; expected tf.distribute.ReduceOp.SUM or "
                     "MEAN, or the strings 'SUM' / 'MEAN'.")
