"""In a real Jupyter kernel: a concrete function's graph and a function's program display as
`image/svg+xml` (no Graphviz needed). A minimal kernel helper of its own (nbclient's kernel
client); skipped where nbclient / ipykernel are not installed (they are in the `test` extra)."""

import os
import sys

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run_cells(*sources):
    """Executes `sources` as the cells of one notebook in a fresh kernel (the worktree's
    `eager` importable); returns each cell's outputs. The kernel is always shut down."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    env = dict(os.environ, PATH=f"{os.path.dirname(sys.executable)}:/nonexistent")
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    client = nbclient.NotebookClient(nb, timeout=60, startup_timeout=60,
                                     kernel_name="python3", resources={"metadata": {"path": ROOT}})
    # The kernel runs this interpreter, not whatever `python3` kernelspec PATH finds.
    client.kernel_manager_class = _manager_class(env)
    client.execute()
    return [cell.outputs for cell in nb.cells]


def _manager_class(env):
    from jupyter_client.manager import AsyncKernelManager  # noqa: PLC0415 - only after the importorskip checks above

    class Manager(AsyncKernelManager):
        def format_kernel_cmd(self, extra_arguments=None):
            return [sys.executable, "-m", "ipykernel_launcher", "-f", self.connection_file]

        async def _async_launch_kernel(self, kernel_cmd, **kw):
            kw["env"] = env
            return await super()._async_launch_kernel(kernel_cmd, **kw)

    return Manager


def test_graph_and_program_display_as_svg_in_a_kernel():
    outputs = _run_cells(
        "import eager\n"
        "@eager.function\n"
        "def f(x):\n"
        "    return eager.nn.relu(x * 2.0 + 1.0)\n"
        "c = f.get_concrete_function(eager.TensorSpec([3]))",
        "c.graph",
        "f.experimental_get_program(eager.TensorSpec([3]))",
    )
    (graph_out,) = outputs[1]
    assert graph_out["output_type"] == "execute_result"
    svg = graph_out["data"]["image/svg+xml"]
    assert svg.startswith("<svg") and 'data-key="Relu"' in svg
    assert "Graph 'f'" in graph_out["data"]["text/plain"]
    (program_out,) = outputs[2]
    assert program_out["data"]["image/svg+xml"].startswith("<svg")
    assert program_out["data"]["text/plain"].startswith("def f(x: float32[3])")
