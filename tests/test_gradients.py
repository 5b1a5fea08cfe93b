"""Every differentiable op in the registry, checked against central finite differences.

Cases live in `tests/grad_cases_*.py` (one module per op family), each a dict from op type name
to a list of `GradCase`s. An op that is registered as differentiable but has no case fails this
test, so coverage cannot silently drop when an op is added.
"""

import importlib
import pkgutil
from pathlib import Path

import pytest

import eager  # noqa: F401  (registers every op)
from eager.core.registry import registered_ops
from gradcheck import check_gradient


def _collect_cases():
    cases = {}
    here = Path(__file__).parent
    for info in pkgutil.iter_modules([str(here)]):
        if info.name.startswith("grad_cases_"):
            module = importlib.import_module(info.name)
            for name, items in module.CASES.items():
                cases.setdefault(name, []).extend(items)
    return cases


CASES = _collect_cases()
DIFFERENTIABLE = sorted(op.name for op in registered_ops() if op.differentiable)


def test_every_case_names_a_registered_differentiable_op():
    unknown = sorted(set(CASES) - set(DIFFERENTIABLE))
    assert not unknown, f"gradient cases for ops that are not differentiable ops: {unknown}"


@pytest.mark.parametrize("op_name", DIFFERENTIABLE)
def test_gradient_matches_finite_differences(op_name):
    cases = CASES.get(op_name)
    assert cases, (f"{op_name} is registered as differentiable but has no gradient test case; "
                   "add one to tests/grad_cases_<family>.py")
    for case in cases:
        if case.check is not None:
            case.check()
        else:
            check_gradient(case.fn, case.args(), **case.tolerances)
