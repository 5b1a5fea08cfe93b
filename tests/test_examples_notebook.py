"""examples/notebook.ipynb runs, cell by cell, in a real kernel without errors, shows what it
promises, and is kept in git with its outputs stripped."""

import json
import pathlib

from tests.notebook_kernel import ROOT, kernel_fixture, stream_text

NOTEBOOK = ROOT / "examples" / "notebook.ipynb"

kernel = kernel_fixture()


def _code_cells():
    return [cell for cell in json.loads(pathlib.Path(NOTEBOOK).read_text())["cells"]
            if cell["cell_type"] == "code"]


def test_notebook_is_stored_without_outputs():
    for cell in _code_cells():
        assert cell["outputs"] == [] and cell["execution_count"] is None


def test_notebook_runs_in_a_kernel_and_shows_rich_displays(kernel):
    runs = []
    for cell in _code_cells():
        outputs = kernel.run("".join(cell["source"]))
        errors = [o for o in outputs if o["output_type"] == "error"]
        assert not errors, "\n".join(errors[0]["traceback"])
        runs.append(outputs)
    bundles = [o["data"] for outputs in runs for o in outputs
               if o["output_type"] in ("execute_result", "display_data")]
    html = [b["text/html"] for b in bundles if "text/html" in b]
    assert any("eager.Tensor" in h and "(1000, 1000)" in h for h in html)  # summarised tensor
    assert any("<details" in h and "Total params" in h for h in html)  # the model's tree
    assert any("ConcreteFunction" in h and "w:0, b:0" in h for h in html)
    assert any("failed: InvalidArgumentError" in h for h in html)  # the async error, shown
    printed = "".join(stream_text(outputs) for outputs in runs)
    assert "50/50" in printed  # the progress bar finished
    assert "raised at the sync point: GatherV2" in printed
    assert "trace written to" in printed
