"""A kernel raising a foreign exception (CuPy's TypeError "maximum.at only supports ...", its
NotImplementedError "`logaddexp.accumulate` is not supported yet") in every context an op runs
in: eagerly, in a traced function's first call, in a staged while loop's body, under a
GradientTape (also through a traced function's gradient), under async dispatch. Each time the
failure reaches the caller as an op error (at once, or at the next synchronization on a device
whose kernels run later), no per-thread state is left pushed, and ordinary work afterwards in
the same process gives the right values."""

import numpy as np
import pytest

import eager
from eager.base.errors import OpError
from eager.core.context import FAST_PATH, thread_state
from eager.core.registry import get_op
from eager.graph import get_default_graph


def _state():
    st = thread_state()
    return (len(st.tapes), st.interpreter, len(st.device_stack), len(st.variable_creators),
            st.name_scope, len(st.variable_watchers), FAST_PATH.reasons, FAST_PATH.tapes,
            get_default_graph())


def _eagerly(x):
    eager.tanh(x).numpy()


def _first_traced_call(x):
    eager.function(lambda v: eager.tanh(v) * 2.0)(x).numpy()


def _while_body(x):
    @eager.function
    def f(v):
        while eager.reduce_sum(v) > 1:
            v = eager.tanh(v)
        return v

    f(x).numpy()


def _tape(x):
    with eager.GradientTape() as tape:
        tape.watch(x)
        y = eager.reduce_sum(eager.tanh(x))
    tape.gradient(y, x).numpy()


def _tape_through_a_function(x):
    f = eager.function(lambda v: eager.tanh(v))
    with eager.GradientTape() as tape:
        tape.watch(x)
        y = eager.reduce_sum(f(x))
    tape.gradient(y, x).numpy()


def _async(x):
    try:
        with eager.experimental.async_scope():
            eager.tanh(x).numpy()
    finally:
        eager.experimental.async_clear_error()


def _ordinary_work():
    @eager.function
    def f(x):
        while eager.reduce_sum(x) > 1:
            x = eager.tanh(x)
        return x

    x0 = np.array([1.0, 2.0], np.float32)
    expected = x0
    while expected.sum() > 1:
        expected = np.tanh(expected)
    np.testing.assert_allclose(f(eager.constant(x0)).numpy(), expected, rtol=1e-6)
    x = eager.constant([1.0, 2.0])
    with eager.GradientTape() as tape:
        tape.watch(x)
        y = eager.reduce_sum(eager.tanh(x) * 2.0)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(),
                               2 * (1 - np.tanh([1.0, 2.0]) ** 2), rtol=1e-5)


@pytest.mark.parametrize("foreign", [TypeError("cupy.maximum.at only supports int32"),
                                     NotImplementedError("`logaddexp.accumulate` is not "
                                                         "supported yet")],
                         ids=["TypeError", "NotImplementedError"])
@pytest.mark.parametrize("context", [_eagerly, _first_traced_call, _while_body, _tape,
                                     _tape_through_a_function, _async],
                         ids=lambda f: f.__name__.strip("_"))
def test_a_foreign_kernel_failure_is_reported_and_leaves_nothing_behind(monkeypatch, foreign,
                                                                         context):
    op = get_op("Tanh")
    before = _state()

    def failing(xp, *arrays, **attrs):
        raise foreign

    x = eager.constant([1.0, 2.0])
    with monkeypatch.context() as patch:
        patch.setattr(op, "kernel", failing)
        patch.setattr(op, "cupy_kernel", None)
        with pytest.raises(OpError, match=type(foreign).__name__):
            context(x)
            eager.experimental.sync_devices()  # (where kernels run later, it surfaces here)
    eager.experimental.sync_devices()  # nothing left queued
    assert _state() == before
    _ordinary_work()
