"""Async dispatch's cheap paths: on a GPU, ops on computed operands issued with nothing queued
are launched from the issuing thread (the device runs them later; no executor in between);
operators in async mode are queued without the op library. Same values, order and errors as
the executor's path."""

import numpy as np
import pytest

import eager as tf
from eager import tensor as eager_tensor
from eager.async_exec import PendingTensor, _current_executor, async_scope
from eager.tensor import EagerTensor


def test_a_gpus_ops_are_launched_without_the_executor(simulated_gpu, no_inference_check):
    x = tf.constant([1.0, 2.0, 3.0])
    with async_scope():
        executor = _current_executor()
        issued = executor._issued
        y = tf.exp(x) * x + x
        z = tf.reduce_sum(y)
        assert y.__class__ is EagerTensor and z.__class__ is EagerTensor
        assert y.device == z.device == "GPU:0"
        assert executor._issued == issued  # nothing went through the worker
    expected = np.exp([1.0, 2.0, 3.0]).astype(np.float32) * [1, 2, 3] + [1, 2, 3]
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(z.numpy(), expected.sum(), rtol=1e-6)


def test_an_op_after_queued_work_is_queued_in_order(simulated_gpu, no_inference_check):
    x = tf.constant([4.0, -1.0, 2.0])
    with async_scope():
        with tf.device("CPU:0"):
            c = x * 2.0  # queued (the CPU runs kernels inline): pending
        assert isinstance(c, PendingTensor)
        g = c + x  # a pending operand: queued behind it, never launched out of order
        assert isinstance(g, PendingTensor)
        np.testing.assert_array_equal(g.numpy(), [12.0, -3.0, 6.0])


def test_a_launched_kernels_failure_is_raised_at_the_sync_point(simulated_gpu):
    x = tf.constant([1.0, 2.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="GatherV2"):
        with async_scope():
            tf.gather(x, [5])  # only the kernel can tell: fails on the stream, after launch
    with async_scope():  # nothing left behind
        np.testing.assert_array_equal((x + x).numpy(), [2.0, 4.0])


def test_a_launch_that_raises_is_reported_at_the_sync_point(simulated_gpu, monkeypatch,
                                                            no_inference_check):
    x = tf.constant([1.0, 2.0])
    device = x._meta.device

    def failing_run(self, op, arrays, attrs, inputs):
        raise MemoryError("out of device memory")

    with async_scope():
        monkeypatch.setattr(type(device), "run", failing_run)
        y = tf.exp(x)  # raises nothing here: an async op's error waits for a sync point
        monkeypatch.undo()
        assert isinstance(y, PendingTensor)
        with pytest.raises(tf.errors.ResourceExhaustedError, match="Exp"):
            y.numpy()
        tf.experimental.async_clear_error()


@pytest.fixture
def library_adds(monkeypatch):
    calls = []
    add = eager_tensor._LIBRARY.add

    def counting(x, y):
        calls.append((x, y))
        return add(x, y)

    monkeypatch.setattr(eager_tensor._LIBRARY, "add", counting)
    return calls


def test_async_operators_skip_the_op_library(cpu_only, library_adds):
    x, y = tf.constant([1.0, 2.0]), tf.constant([10.0, 20.0])
    with async_scope():
        s = x + y
        t = s + s  # pending operands too
        assert isinstance(s, PendingTensor) and isinstance(t, PendingTensor)
        assert library_adds == []
        np.testing.assert_array_equal(t.numpy(), [22.0, 44.0])
        u = x + 1.0  # a Python number: converted by the op library
        assert len(library_adds) == 1
        np.testing.assert_array_equal(u.numpy(), [2.0, 3.0])


def test_async_operators_under_a_tape_or_with_mixed_dtypes_use_the_op_library(
        cpu_only, library_adds):
    x = tf.constant([1.0, 2.0])
    with async_scope():
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x + x
        assert len(library_adds) == 1  # recorded on the tape by dispatch
        assert tape.gradient(y, x).numpy().tolist() == [2.0, 2.0]
        with pytest.raises(tf.errors.InvalidArgumentError) as error:
            x + tf.constant([1, 2])
        assert "int32" in str(error.value) and "float" in str(error.value)


def test_async_operators_errors_are_the_op_librarys(cpu_only):
    x, y = tf.constant([1.0, 2.0, 3.0]), tf.constant([1.0, 2.0])
    with pytest.raises(tf.errors.InvalidArgumentError) as sync:
        tf.add(x, y)
    with async_scope():
        with pytest.raises(tf.errors.InvalidArgumentError) as issued:
            x + y  # inference fails on the caller's side, as for `eager.add`
    assert str(issued.value) == str(sync.value)
