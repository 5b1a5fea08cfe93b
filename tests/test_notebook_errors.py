"""What a notebook user sees when something goes wrong, checked in a real Jupyter kernel.

One ipykernel for the module (started with this checkout's `eager` importable), cells run
through jupyter_client as a notebook front end runs them: a user error shows at most three
frames, asynchronous errors name the cell ("In [N]") that issued the failing op, a global
async error is raised once and later cells are told only that the executor is still poisoned,
and a cell interrupted through the kernel's interrupt (an eager loop, an async scope, a traced
loop) leaves the next cells running normally.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

pytest.importorskip("ipykernel")
pytest.importorskip("nbclient")
from jupyter_client.manager import KernelManager  # noqa: E402 - after the skips

ROOT = Path(__file__).resolve().parents[1]
CELL_TIMEOUT_S = 120  # generous: the property is "does not hang", never a speed
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class Kernel:
    """A running ipykernel and a client that runs cells on it."""

    def __init__(self):
        env = {k: v for k, v in os.environ.items() if k != "EAGER_SIMULATED_GPUS"}
        env["PYTHONPATH"] = str(ROOT)
        self.manager = KernelManager(kernel_name="python3")
        self.manager.start_kernel(cwd=str(ROOT), env=env)
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=CELL_TIMEOUT_S)

    def run(self, code, *, on_output=None):
        """Runs `code` as the next cell; returns (its execution count, its outputs: the
        iopub contents of its stream, error and result messages)."""
        msg_id = self.client.execute(code)
        outputs = []
        deadline = time.monotonic() + CELL_TIMEOUT_S
        while True:
            msg = self.client.get_iopub_msg(timeout=max(1.0, deadline - time.monotonic()))
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind = msg["msg_type"]
            if kind == "status" and msg["content"]["execution_state"] == "idle":
                break
            if kind in ("stream", "error", "execute_result"):
                outputs.append(dict(msg["content"], kind=kind))
                if on_output is not None:
                    on_output(msg["content"])
        while True:
            reply = self.client.get_shell_msg(timeout=CELL_TIMEOUT_S)
            if reply["parent_header"].get("msg_id") == msg_id:
                return reply["content"]["execution_count"], outputs

    def ok(self, code):
        """Runs a cell that must not fail; returns its printed text."""
        _, outputs = self.run(code)
        errors = [o for o in outputs if o["kind"] == "error"]
        assert not errors, _ANSI.sub("", "\n".join(errors[0]["traceback"]))
        return "".join(o.get("text", "") for o in outputs if o["kind"] == "stream")

    def error(self, code):
        """Runs a cell that must fail; returns (its execution count, its error output)."""
        count, outputs = self.run(code)
        errors = [o for o in outputs if o["kind"] == "error"]
        assert errors, f"no error from {code!r}: {outputs}"
        return count, errors[0]

    def close(self):
        try:
            self.client.stop_channels()
        finally:
            self.manager.shutdown_kernel(now=True)


@pytest.fixture(scope="module")
def kernel():
    k = Kernel()
    try:
        k.ok("import eager as tf\nimport numpy as np")
        yield k
    finally:
        k.close()


def frames(error) -> list:
    """The frames the notebook shows for `error`: IPython renders one entry per frame
    ("Cell In[N], line L" or "File path:line, in name") between its header and the message."""
    return [_ANSI.sub("", entry) for entry in error["traceback"]
            if re.match(r"(Cell In\[|File )", _ANSI.sub("", entry))]


@pytest.mark.parametrize("cell", [
    "x = tf.ones([2, 3])\ny = tf.matmul(x, x)",  # an op
    "x = tf.ones([2, 3])\ny = x @ x",  # an operator
    "x = tf.ones([2, 3])\ny = tf.reshape(x, [5])",  # an op whose inference fails
    "@tf.function\ndef f(x):\n    return tf.reshape(x, [5])\n\nf(tf.ones([2, 3]))",  # traced
    "@tf.function\ndef g(i):\n    return tf.gather(tf.ones([3]), i)\n\n"
    "g(tf.constant([0]))\ng(tf.constant([0]))\ng(tf.constant([7]))",  # a compiled program
])
def test_a_user_error_in_a_cell_shows_at_most_three_frames_none_of_eagers_internals(kernel,
                                                                                    cell):
    _, error = kernel.error(cell)
    shown = frames(error)
    assert 1 <= len(shown) <= 3, "\n".join(shown)
    assert shown[0].startswith("Cell In["), shown[0]
    internal = [f for f in shown if re.search(r"eager/(core|ops|runtime|functions/concrete)",
                                              f.splitlines()[0])]
    assert not internal, "\n".join(shown)
    assert error["ename"] == "InvalidArgumentError"


def test_an_async_error_names_the_notebook_cell_and_line_that_issued_the_op(kernel):
    kernel.ok("tf.config.experimental.set_synchronous_execution(False)")
    try:
        issued, _ = kernel.run("x = tf.constant([1, 2])\nbad = tf.math.floordiv(x, "
                               "tf.constant([0, 1]))")
        _, error = kernel.error("bad.numpy()")
        assert f"(issued at In [{issued}], line 2)" in error["evalue"], error["evalue"]
        assert "eager.experimental.async_clear_error()" in error["evalue"]
        assert len(frames(error)) <= 3
    finally:
        kernel.ok("tf.experimental.async_clear_error()\n"
                  "tf.config.experimental.set_synchronous_execution(True)")


def test_a_global_async_error_is_raised_once_and_later_cells_are_told_it_still_poisons(kernel):
    kernel.ok("tf.config.experimental.set_synchronous_execution(False)")
    try:
        issued, _ = kernel.run("bad = tf.gather(tf.constant([1.0, 2.0]), [9])")
        _, first = kernel.error("tf.experimental.async_wait()")
        assert "GatherV2" in first["evalue"] and f"In [{issued}], line 1" in first["evalue"]
        # Raised once: a later sync point with nothing new is not blamed for it.
        kernel.ok("tf.experimental.async_wait()\nprint('unblamed')")
        # Reading the failed tensor again raises its error again, never with more frames.
        _, again = kernel.error("bad.numpy()")
        _, third = kernel.error("bad.numpy()")
        assert len(frames(again)) == len(frames(third)) <= 3
        # A later cell whose ops did not run is told why, and what to do.
        _, poisoned = kernel.error("y = tf.constant(1.0) + 1.0\nfloat(y)")
        assert (f"the executor is still poisoned by an earlier error in In [{issued}], line 1"
                in poisoned["evalue"]), poisoned["evalue"]
        assert "call eager.experimental.async_clear_error()" in poisoned["evalue"]
        assert poisoned["ename"] == "InvalidArgumentError"
        assert len(frames(poisoned)) <= 3
        # Cleared, the executor runs ops again.
        out = kernel.ok("tf.experimental.async_clear_error()\n"
                        "print(float(tf.constant(1.0) + 1.0))")
        assert out.strip() == "2.0"
    finally:
        kernel.ok("tf.experimental.async_clear_error()\n"
                  "tf.config.experimental.set_synchronous_execution(True)")


#: Cells that run until interrupted; each prints "started" once its loop runs.
LOOPS = {
    "eager loop": "x = tf.zeros([64])\nprint('started', flush=True)\n"
                  "while True:\n    x = tf.tanh(x * 1.0001 + 0.5)",
    "async scope": "x = tf.zeros([64])\nprint('started', flush=True)\n"
                   "with tf.experimental.async_scope():\n"
                   "    while True:\n        x = tf.tanh(x * 1.0001 + 0.5)",
    "traced loop": "@tf.function\ndef step(x):\n    return tf.tanh(x * 1.0001 + 0.5)\n\n"
                   "x = step(tf.zeros([64]))\nprint('started', flush=True)\n"
                   "while True:\n    x = step(x)",
}

#: What the next cell checks: eager back at rest (synchronous, no tape, no interpreter, the
#: fast path open), and eager, async and traced work giving the right numbers.
AFTER = """
from eager.core import context as _ctx
st = _ctx.thread_state()
assert tf.config.experimental.get_synchronous_execution()
assert st.interpreter is None and not st.tapes
assert _ctx.FAST_PATH.kernel_only
with tf.experimental.async_scope():
    a = tf.constant([1.0, 2.0]) * 3.0
@tf.function
def h(v):
    return v + 1.0
print(a.numpy().tolist(), h(tf.constant([1.0])).numpy().tolist(),
      float(tf.reduce_sum(tf.ones([4]))))
"""


@pytest.mark.parametrize("loop", list(LOOPS))
def test_interrupting_a_running_cell_leaves_the_next_cells_running_normally(kernel, loop):
    started = []

    def interrupt_once_started(content):
        if "started" in content.get("text", "") and not started:
            started.append(True)
            time.sleep(0.5)  # well inside the loop
            kernel.manager.interrupt_kernel()

    _, outputs = kernel.run(LOOPS[loop], on_output=interrupt_once_started)
    errors = [o for o in outputs if o["kind"] == "error"]
    # IPython's own formatter can fail on a frame the interrupt caught at an instruction with
    # no line number ("assert isinstance(frame_info.lineno, int)", ipython/ipython#13615); it
    # then prints the interrupt's traceback as plain text instead of an error output.
    streamed = "".join(o.get("text", "") for o in outputs if o["kind"] == "stream")
    plain = ("Unexpected exception formatting exception" in streamed
             and "KeyboardInterrupt" in streamed)
    assert started and (errors and errors[0]["ename"] == "KeyboardInterrupt" or plain), outputs
    out = kernel.ok(AFTER)
    assert out.strip() == "[3.0, 6.0] [2.0] 4.0"
