"""Adversarial checkpoints: values at every dtype's edges (uint64 beyond int64, float16 inf and
NaN, -0.0, complex NaN, empty and 0-d) in nested lists and dicts round-trip bit for bit; a
checkpoint written while updates are still queued (under `async_scope`, on a simulated GPU)
holds the value after them; a restore into variables of another dtype or shape changes nothing."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import eager as tf

EDGES = {
    np.uint64: [0, 2 ** 63, 2 ** 64 - 1], np.int64: [-(2 ** 63), 2 ** 63 - 1, 0],
    np.int8: [-128, 127, 0], np.uint8: [0, 255, 1], np.bool_: [True, False, True],
    np.float16: [np.inf, -np.inf, np.nan, -0.0, 65504.0, 6e-8],
    np.float32: [np.nan, -0.0, 3.4e38, 1e-45], np.float64: [np.inf, -0.0, 5e-324, np.nan],
    np.complex64: [complex(np.nan, -0.0), complex(np.inf, 1)], np.complex128: [1e308j, -0.0j],
}


@st.composite
def arrays(draw):
    dtype = draw(st.sampled_from(sorted(EDGES, key=lambda d: np.dtype(d).name)))
    values = draw(st.lists(st.sampled_from(EDGES[dtype]), min_size=0, max_size=4))
    array = np.array(values, dtype)
    return array.reshape(()) if len(values) == 1 and draw(st.booleans()) else array


def _same_bits(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(arrays(), min_size=1, max_size=4), nested=st.booleans())
def test_edge_values_round_trip_bit_for_bit_through_lists_and_dicts(tmp_path, values, nested):
    made = [tf.Variable(v) for v in values]
    tree = {"layer": {"vars": made}} if nested else {"vars": made}
    path = tf.train.Checkpoint(**tree).write(str(tmp_path / "edges"))
    fresh = [tf.Variable(np.zeros_like(v)) for v in values]
    tree = {"layer": {"vars": fresh}} if nested else {"vars": fresh}
    tf.train.Checkpoint(**tree).restore(path).expect_partial()
    for v, original in zip(fresh, values):
        _same_bits(v.numpy(), original)


@pytest.fixture(params=["async", "simulated gpu"])
def late_updates(request):
    """How updates run later than they are issued: under async dispatch, or on a GPU stream."""
    if request.param == "simulated gpu":
        request.getfixturevalue("simulated_gpu")
        yield lambda: _NoScope()
    else:
        yield tf.experimental.async_scope


class _NoScope:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_a_checkpoint_written_behind_queued_updates_holds_their_result(tmp_path, late_updates):
    v = tf.Variable(np.zeros(1000, np.float32))
    ones = tf.ones([1000])
    checkpoint = tf.train.Checkpoint(v=v)
    with late_updates():
        for _ in range(300):
            v.assign_add(ones)
        path = checkpoint.write(str(tmp_path / "late"))
        v.assign_add(ones)  # after the write: not in it
    restored = tf.Variable(np.zeros(1000, np.float32))
    tf.train.Checkpoint(v=restored).restore(path)
    assert restored.numpy().tolist() == [300.0] * 1000
    assert v.numpy()[0] == 301.0


@pytest.mark.parametrize("other", [np.zeros(3, np.float64), np.zeros(4, np.float32),
                                   np.zeros((3, 1), np.float32), np.zeros(3, np.int32)],
                         ids=["dtype", "length", "rank", "int"])
def test_a_restore_into_mismatched_variables_changes_none_of_them(tmp_path, other):
    path = tf.train.Checkpoint(a=tf.Variable([1.0, 2.0]), b=tf.Variable(np.ones(3, np.float32))
                               ).write(str(tmp_path / "m"))
    a, b = tf.Variable([7.0, 7.0]), tf.Variable(other)
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError)) as caught:
        tf.train.Checkpoint(a=a, b=b).restore(path)
    assert "b" in str(caught.value)
    assert a.numpy().tolist() == [7.0, 7.0]  # restored first, rolled back
    _same_bits(b.numpy(), other)
