"""examples/variables_and_creators.py runs as written and shows what it claims."""

import importlib.util
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "variables_and_creators.py"


def _load():
    spec = importlib.util.spec_from_file_location("variables_and_creators", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_example_logs_creators_chains_assigns_and_round_trips_a_checkpoint(capsys, tmp_path):
    results = _load().main(directory=str(tmp_path))
    out = capsys.readouterr().out
    # The creator saw exactly the three variables made inside its scope, in order.
    assert [line.split()[1] for line in results["log"]] == ["weights:0", "bias:0", "step:0"]
    assert "created step:0 shape=() dtype=int64 trainable=False" in out
    assert "outside:0 was created outside" in out
    # Chained updates.
    assert results["v"] == 3.0 and results["step"] == 2
    assert "v.assign(1.).assign_add(2.) -> v = 3.0, chained result = 3.0" in out
    # The checkpoint: TensorFlow's keys, numbered saves, values back after restore.
    assert results["path"] == "demo-1"
    assert results["keys"] == ["_CHECKPOINTABLE_OBJECT_GRAPH",
                               "params/bias/.ATTRIBUTES/VARIABLE_VALUE",
                               "params/weights/.ATTRIBUTES/VARIABLE_VALUE",
                               "save_counter/.ATTRIBUTES/VARIABLE_VALUE",
                               "step/.ATTRIBUTES/VARIABLE_VALUE",
                               "v/.ATTRIBUTES/VARIABLE_VALUE"]
    assert results["restored"]
    assert "restored demo-1: weights[0, 0] = 0.0, step = 2, save_counter = 1" in out
    assert (tmp_path / "demo-1").is_file() and (tmp_path / "checkpoint").is_file()
