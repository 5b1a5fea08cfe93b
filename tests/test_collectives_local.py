"""The collective interface and its in-process engine."""

import numpy as np
import pytest

from eager.distribute.collectives import Collectives, LocalCollectives, REDUCE_OPS
from eager.distribute.collectives.base import reduce_arrays


def test_interface_names_the_shared_methods():
    for name in ("all_reduce", "all_gather", "broadcast", "barrier", "close"):
        assert callable(getattr(Collectives, name))
    assert REDUCE_OPS == ("sum", "mean", "max", "min")


@pytest.mark.parametrize("op,want", [("sum", [4., 6.]), ("mean", [2., 3.]),
                                     ("max", [3., 4.]), ("min", [1., 2.])])
def test_local_reduce_replicas(op, want):
    c = LocalCollectives()
    out = c.reduce_replicas([np.array([1., 2.], np.float32), np.array([3., 4.], np.float32)], op)
    np.testing.assert_array_equal(out, np.array(want, np.float32))
    assert out.dtype == np.float32


def test_local_group_of_one_process():
    with LocalCollectives() as c:
        a = np.arange(4.)
        assert c.rank == 0 and c.size == 1
        assert c.all_reduce([a])[0] is a
        assert c.broadcast(a) is a
        np.testing.assert_array_equal(c.gather_replicas([a, a]), np.concatenate([a, a]))
        c.barrier()
    with pytest.raises(RuntimeError, match="closed"):
        c.barrier()


def test_bad_op_and_mismatched_replicas_are_clear_errors():
    c = LocalCollectives()
    with pytest.raises(ValueError, match="Unsupported reduction 'prod'"):
        c.all_reduce([np.ones(2)], "prod")
    with pytest.raises(ValueError, match=r"replica 1 has shape \(3,\)"):
        c.reduce_replicas([np.ones(2), np.ones(3)])
    np.testing.assert_array_equal(reduce_arrays([np.array([3]), np.array([4])], "mean"), [3])
