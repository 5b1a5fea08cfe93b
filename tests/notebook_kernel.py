"""A real Jupyter kernel for tests: what a notebook user sees, as MIME bundles.

`NotebookKernel` starts an `ipykernel` through `nbclient` (as `jupyter nbconvert --execute` and
CI notebook runners do), with this checkout's `eager` first on the kernel's path, and runs
cells one at a time: `run(source)` returns the cell's outputs (nbformat dicts: "stream",
"display_data", "execute_result", "error"), `result(source)` the MIME bundle of its value
(`{"text/plain": ..., "text/html": ...}`), and `run(source, interrupt_after=s)` sends the
kernel's interrupt (SIGINT, what the notebook's stop button sends) while the cell runs.

In a test module:

    from tests.notebook_kernel import kernel_fixture
    kernel = kernel_fixture()          # one kernel per module, shut down after it

    def test_x(kernel):
        assert "<table>" in kernel.result("eager.constant(1.0)")["text/html"]

The fixture skips the test when nbclient or ipykernel is not installed (they are in the `test`
extra). Every wait is bounded (`timeout`), and the kernel is shut down in a `finally`.
"""

from __future__ import annotations

import asyncio
import os
import pathlib
import threading

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

#: Seconds a cell may run before the test fails (not hangs).
CELL_TIMEOUT = 60


def available() -> bool:
    """Whether nbclient, nbformat and ipykernel are importable."""
    try:
        import ipykernel  # noqa: F401, PLC0415
        import nbclient  # noqa: F401, PLC0415
        import nbformat  # noqa: F401, PLC0415
    except ImportError:
        return False
    return True


class NotebookKernel:
    """One running ipykernel and a notebook whose cells are run one by one (see the module
    doc)."""

    def __init__(self, timeout=CELL_TIMEOUT, env=None):
        import nbclient  # noqa: PLC0415 - optional test dependency
        import nbformat  # noqa: PLC0415

        self._nbformat = nbformat
        self.notebook = nbformat.v4.new_notebook()
        self.client = nbclient.NotebookClient(
            self.notebook, timeout=timeout, kernel_name="python3",
            resources={"metadata": {"path": str(ROOT)}})
        self._context = None
        environment = dict(os.environ if env is None else env)
        environment["PYTHONPATH"] = os.pathsep.join(
            [str(ROOT)] + [p for p in environment.get("PYTHONPATH", "").split(os.pathsep) if p])
        self._env = environment

    def start(self) -> NotebookKernel:
        self._context = self.client.setup_kernel(env=self._env)
        self._context.__enter__()
        where = self.result("import eager, os\nos.path.dirname(os.path.dirname(eager.__file__))")
        found = where["text/plain"].strip("'\"")
        if pathlib.Path(found).resolve() != ROOT:
            self.shutdown()
            raise RuntimeError(f"the kernel imported eager from {found}, not from {ROOT}")
        return self

    def shutdown(self) -> None:
        context, self._context = self._context, None
        if context is not None:
            context.__exit__(None, None, None)

    def run(self, source, interrupt_after=None, timeout=None) -> list:
        """Runs `source` as the notebook's next cell and returns its outputs. With
        `interrupt_after` (seconds), the kernel is interrupted that long after the cell
        starts; the interrupted cell's output then ends in a KeyboardInterrupt error."""
        cell = self._nbformat.v4.new_code_cell(source)
        self.notebook.cells.append(cell)
        index = len(self.notebook.cells) - 1
        timer = None
        if interrupt_after is not None:
            timer = threading.Timer(interrupt_after, self.interrupt)
            timer.start()
        saved = self.client.timeout
        if timeout is not None:
            self.client.timeout = timeout
        try:
            # Errors are kept as outputs (allow_errors): a test asserts on what the user sees.
            self.client.allow_errors = True
            self.client.execute_cell(cell, index)
        finally:
            self.client.timeout = saved
            if timer is not None:
                timer.cancel()
        return cell.outputs

    def interrupt(self) -> None:
        """Sends the kernel its interrupt, as the notebook's stop button does."""
        interrupt = self.client.km.interrupt_kernel()
        if asyncio.iscoroutine(interrupt):  # an AsyncKernelManager (nbclient's default)
            asyncio.run(interrupt)

    def result(self, source, timeout=None) -> dict:
        """The MIME bundle of the cell's value (its `execute_result`); a cell that raised fails
        the test with the kernel's traceback."""
        outputs = self.run(source, timeout=timeout)
        errors = [o for o in outputs if o["output_type"] == "error"]
        if errors:
            raise AssertionError("the cell raised:\n" + "\n".join(errors[0]["traceback"]))
        results = [o for o in outputs if o["output_type"] == "execute_result"]
        assert len(results) == 1, f"the cell has no value to display: {outputs}"
        return dict(results[0]["data"])


def stream_text(outputs, name="stdout") -> str:
    """What the cell printed on `name` ("stdout" or "stderr")."""
    return "".join(o["text"] for o in outputs
                   if o["output_type"] == "stream" and o["name"] == name)


def kernel_fixture(name="kernel", timeout=CELL_TIMEOUT):
    """A module-scoped pytest fixture named `name` yielding a started `NotebookKernel` (skips
    where nbclient/ipykernel are not installed). The kernel is a user's notebook on this
    machine's CPU: the suite's simulated GPUs (`EAGER_SIMULATED_GPUS`) are not passed on."""

    @pytest.fixture(scope="module", name=name)
    def fixture():
        if not available():
            pytest.skip("nbclient, nbformat and ipykernel are needed (the 'test' extra)")
        env = {k: v for k, v in os.environ.items() if k != "EAGER_SIMULATED_GPUS"}
        kernel = NotebookKernel(timeout=timeout, env=env)
        try:
            kernel.start()
            yield kernel
        finally:
            kernel.shutdown()

    return fixture
