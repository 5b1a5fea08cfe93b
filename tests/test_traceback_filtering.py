"""Traceback filtering (≈ TensorFlow's): errors leaving eager's public API show the user's
frames, not eager's; `eager.debugging.disable_traceback_filtering()` shows everything again.

Frames are counted on the caught exception's `__traceback__`: the test's own frame, one frame
of eager's where the error is raised again, and the frames of user code eager called."""

from __future__ import annotations

import inspect
import traceback

import numpy as np
import pytest

import eager as tf
from eager.base.user_code import EAGER_DIR, describe_line


#: Why some tests run with one CPU only (see tests/conftest.py's `cpu_only`).
NUMPY_ON_THE_CALLING_THREAD = ("numpy's own exception exists where the kernel runs on the "
                               "calling thread (the CPU)")
ASYNC_KERNELS_ON_THE_EXECUTOR = ("the global async executor's kernels run on its thread; a "
                                 "GPU's stream reports them at the sync instead")

def frames(exc):
    return traceback.extract_tb(exc.__traceback__)


def eager_frames(exc):
    return [f for f in frames(exc) if f.filename.startswith(EAGER_DIR)
            or f.filename.startswith("<eager ")]


def caught(call):
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - what is inspected
        return exc
    raise AssertionError("no error")


@pytest.fixture
def unfiltered():
    tf.debugging.disable_traceback_filtering()
    try:
        yield
    finally:
        tf.debugging.enable_traceback_filtering()


def _matmul_mismatch():
    x = tf.ones([2, 3])
    return tf.matmul(x, x)


def _operator_mismatch():
    x = tf.ones([2, 3])
    return x @ x


def _reshape_mismatch():
    return tf.math.reduce_sum(tf.reshape(tf.ones([2, 3]), [5]))


@pytest.mark.parametrize("call", [_matmul_mismatch, _operator_mismatch, _reshape_mismatch])
def test_an_op_error_shows_the_users_frames_and_one_of_eagers(call):
    exc = caught(call)
    assert isinstance(exc, tf.errors.InvalidArgumentError)
    shown = frames(exc)
    # the test's frame, the user's function, and the frame that raised it again
    assert [f.name for f in shown[:2]] == ["caught", call.__name__]
    assert len(eager_frames(exc)) <= 2, shown  # an operator: its method, then the re-raise
    assert not any("/core/" in f.filename or "/ops/" in f.filename for f in shown), shown


def test_disabled_filtering_shows_eagers_frames_and_enabling_hides_them_again(unfiltered):
    assert not tf.debugging.is_traceback_filtering_enabled()
    exc = caught(_matmul_mismatch)
    assert any(f.filename.endswith("dispatch.py") for f in frames(exc))
    tf.debugging.enable_traceback_filtering()
    assert tf.debugging.is_traceback_filtering_enabled()
    exc = caught(_matmul_mismatch)
    assert not any(f.filename.endswith("dispatch.py") for f in frames(exc))


@pytest.mark.cpu_only(reason=NUMPY_ON_THE_CALLING_THREAD)
def test_numpys_exception_is_not_chained_as_the_direct_cause_but_its_text_is_kept():
    x = tf.constant([[1.0, 2.0]])
    exc = caught(lambda: x @ x)  # numpy's matmul raises; eager explains it
    assert exc.__cause__ is None and exc.__suppress_context__
    assert "Matrix size-incompatible" in str(exc) and "[Op:MatMul]" in str(exc)
    formatted = "".join(traceback.format_exception(exc))
    assert "direct cause" not in formatted and "During handling" not in formatted


@pytest.mark.cpu_only(reason=NUMPY_ON_THE_CALLING_THREAD)
def test_disabled_filtering_keeps_numpys_exception_chained(unfiltered):
    x = tf.constant([[1.0, 2.0]])
    exc = caught(lambda: x @ x)
    chained = exc.__cause__ or exc.__context__
    assert chained is not None, "".join(traceback.format_exception(exc))


def test_a_user_exception_chained_to_an_eager_error_stays_chained_and_filtered():
    def fails(x):
        raise ValueError("the user's own")

    def call():
        return tf.py_function(fails, [tf.ones([2])], tf.float32)

    exc = caught(call)
    chain = [exc]
    while chain[-1].__cause__ is not None or (chain[-1].__context__ is not None
                                              and not chain[-1].__suppress_context__):
        chain.append(chain[-1].__cause__ or chain[-1].__context__)
    text = "".join(traceback.format_exception(exc))
    assert "the user's own" in text
    assert "/core/dispatch.py" not in text


def test_a_trace_time_error_shows_the_users_function_body_not_the_tracing_machinery():
    @tf.function
    def body(x):
        return tf.reshape(x, [5])

    exc = caught(lambda: body(tf.ones([2, 3])))
    names = [f.name for f in frames(exc)]
    assert "body" in names and names[-1] == "body", names
    assert len(eager_frames(exc)) == 1, frames(exc)
    assert "Input to reshape is a tensor with 6 values" in str(exc)


@pytest.mark.cpu_only(reason="a kernel failing on the calling thread, inside the call")
def test_an_error_from_a_compiled_program_keeps_its_node_note_and_the_users_frames_only():
    @tf.function
    def pick(i):
        return tf.gather(tf.ones([3]), i)

    for _ in range(2):  # compiled from the second call
        pick(tf.constant([0]))
    exc = caught(lambda: pick(tf.constant([7])))
    assert isinstance(exc, tf.errors.InvalidArgumentError)
    assert len(eager_frames(exc)) == 1, frames(exc)
    assert not any(f.filename.startswith("<eager plan") for f in frames(exc))
    assert any("Detected at node" in note and "test_traceback_filtering.py" in note
               for note in getattr(exc, "__notes__", [])), exc.__notes__


@pytest.mark.cpu_only(reason=ASYNC_KERNELS_ON_THE_EXECUTOR)
def test_an_async_error_raised_again_never_accumulates_frames():
    x = tf.constant([1, 2])
    tf.config.experimental.set_synchronous_execution(False)
    try:
        bad = tf.math.floordiv(x, tf.constant([0, 1]))
        sizes = [len(frames(caught(bad.numpy))) for _ in range(4)]
        assert sizes[0] == sizes[-1] <= 2, sizes
    finally:
        tf.experimental.async_clear_error()
        tf.config.experimental.set_synchronous_execution(True)


@pytest.mark.cpu_only(reason=ASYNC_KERNELS_ON_THE_EXECUTOR)
def test_global_async_mode_raises_an_error_once_then_blames_only_ops_the_poison_skipped():
    x = tf.constant([1.0, 2.0])
    tf.config.experimental.set_synchronous_execution(False)
    try:
        tf.gather(x, [9])
        first = caught(tf.experimental.async_wait)
        assert isinstance(first, tf.errors.InvalidArgumentError)
        assert "GatherV2" in str(first)
        assert "async_clear_error()" in str(first)
        tf.experimental.async_wait()  # raised once: nothing new, nobody blamed
        tf.experimental.sync_devices()
        later = x + 1.0
        poisoned = caught(later.numpy)
        assert isinstance(poisoned, tf.errors.InvalidArgumentError)
        assert "the executor is still poisoned by an earlier error in " in str(poisoned)
        assert "test_traceback_filtering.py:" in str(poisoned)
        assert "call eager.experimental.async_clear_error()" in str(poisoned)
        tf.experimental.async_clear_error()
        np.testing.assert_array_equal((x + 1.0).numpy(), [2.0, 3.0])
    finally:
        tf.experimental.async_clear_error()
        tf.config.experimental.set_synchronous_execution(True)


def test_an_async_scope_error_at_exit_shows_the_with_line_not_contextlib_or_eager():
    def run():
        with tf.experimental.async_scope():
            tf.gather(tf.constant([1.0]), [4])

    exc = caught(run)
    assert [f.name for f in frames(exc)][:2] == ["caught", "run"]
    assert not any("contextlib" in f.filename for f in frames(exc))
    assert len(eager_frames(exc)) == 1


@pytest.mark.parametrize("file, expected", [
    ("<ipython-input-12-0f1e2d3c4b5a>", "In [12], line 4"),
    ("/home/me/train.py", "/home/me/train.py:4"),
])
def test_the_users_line_is_named_as_the_notebook_shows_its_cells(file, expected):
    assert describe_line(file, 4) == expected


def test_public_functions_are_one_wrapper_each_with_the_wrapped_functions_name_and_signature():
    assert tf.add is tf.math.add
    assert tf.add.__name__ == "add" and "x" in inspect.signature(tf.add).parameters
