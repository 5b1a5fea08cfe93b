"""examples/input_pipeline.py runs as written: the pipeline feeds the traced step, the model
learns, and both runs (with and without prefetch) see the same batches."""

import importlib.util
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "input_pipeline.py"


def _load():
    spec = importlib.util.spec_from_file_location("input_pipeline", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_example_trains_with_and_without_prefetch(monkeypatch):
    example = _load()
    monkeypatch.setattr(example, "ROWS", 1024)
    images, labels = example.make_data()
    plain = [y.numpy().tolist() for _, y in example.pipeline(images, labels, prefetch=False)]
    fetched = [y.numpy().tolist() for _, y in example.pipeline(images, labels, prefetch=True)]
    assert plain == fetched and len(plain) == 1024 // example.BATCH
    per_step, loss, steps = example.train(1, prefetch=True)
    assert steps == 1024 // example.BATCH and per_step > 0 and loss < 0.5
