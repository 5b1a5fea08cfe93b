"""The package's layers, as folders, and the rule between them: a module imports only from its
own layer or from layers below it (docs/architecture.md, "Layers"). A needed upward call is a
hook the higher layer installs at import (dispatch's tape recorder, autodiff's backward
planner), never an import."""

import pathlib
import re

import pytest

import eager
from tests.test_package_imports import _import_graph

ROOT = pathlib.Path(eager.__file__).parent

#: Lowest first. A module belongs to the layer of the longest prefix that names it. The four
#: modules the project's layout keeps at the top of the package (tensor.py, async_exec.py,
#: variables.py, function.py) belong to the layers their docstrings name; everything else at the
#: top is a public namespace.
LAYERS = [
    ("base", ["eager.base"]),
    ("devices", ["eager.devices"]),
    ("core", ["eager.core", "eager.tensor"]),
    ("ops", ["eager.ops"]),
    ("interpreters", ["eager.async_exec", "eager.graph", "eager.autodiff"]),
    ("runtime", ["eager.runtime"]),
    ("state", ["eager.variables", "eager.state", "eager.train"]),
    ("functions", ["eager.function", "eager.functions", "eager.control_flow", "eager.autograph",
                   "eager.optimizers", "eager.saved_model"]),
    ("data", ["eager.data"]),
    ("distribute", ["eager.distribute"]),
    ("keras", ["eager.keras"]),
    ("public", ["eager"]),
]


def layer_of(module: str) -> int:
    best, rank = "", None
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(best):
                best, rank = prefix, i
    assert rank is not None, f"{module} is in no layer"
    return rank


def upward_imports(graph) -> list:
    return sorted(f"{a} ({LAYERS[layer_of(a)][0]}) imports {b} ({LAYERS[layer_of(b)][0]})"
                  for a, targets in graph.items() for b in targets
                  if layer_of(b) > layer_of(a))


def test_no_module_imports_a_higher_layer():
    assert upward_imports(_import_graph()) == []


def test_every_layer_below_the_public_names_is_a_folder_or_a_module_the_layout_pins():
    pinned = {"tensor", "async_exec", "variables", "function"}
    for name, prefixes in LAYERS[:-1]:
        for prefix in prefixes:
            path = ROOT.joinpath(*prefix.split(".")[1:])
            assert path.is_dir() or path.name in pinned, f"layer {name}: {prefix} is not a folder"
    top = {p.stem for p in ROOT.glob("*.py")} - pinned - {"__init__"}
    for stem in top:  # the rest of the top level: public namespaces, re-exporting
        assert layer_of(f"eager.{stem}") == len(LAYERS) - 1


def test_the_layer_check_finds_an_upward_import():
    assert upward_imports({"eager.ops.math_ops": {"eager.variables"}}) == [
        "eager.ops.math_ops (ops) imports eager.variables (state)"]
    with pytest.raises(AssertionError, match="in no layer"):
        layer_of("numpy")


def test_only_the_hot_constructors_build_eager_tensors_slot_by_slot():
    """Everything else calls `eager.tensor.wrap_value` (eager/tensor.py's module doc)."""
    hot = {"tensor.py", "core/dispatch.py", "autodiff/tape_backward.py", "data/sources.py"}
    found = {str(path.relative_to(ROOT)) for path in ROOT.rglob("*.py")
             if "EagerTensor()" in path.read_text()}
    assert found == hot


def test_only_the_fast_paths_owners_read_its_switches():
    """`FAST_PATH.kernel_only` / `kernel_and_tapes` say what dispatch would do; a module that
    skips dispatch asks the owners' helpers instead (eager/core/context.py's module doc)."""
    owners = {"core/context.py", "core/dispatch.py", "tensor.py", "variables.py"}
    switch = re.compile(r"FAST_PATH\.(kernel_only|kernel_and_tapes)\b")
    readers = {str(path.relative_to(ROOT)) for path in ROOT.rglob("*.py")
               if switch.search(path.read_text())}
    assert readers <= owners, readers - owners
