"""The public API contract: every name it lists exists where TensorFlow puts it.

The contract (what the framework must provide) is /work/shared/API.md when this checkout sits
beside it, else the repo's copy docs/contract/API.md; when both exist they must be identical, so
the copy cannot drift. (docs/API.md is the user's reference to what exists today; its own test is
tests/test_api_reference.py.)
"""

import re
from pathlib import Path

import numpy as np
import pytest

import eager

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(__file__).resolve().parents[2] / "shared" / "API.md"
REPO_COPY = REPO / "docs" / "contract" / "API.md"


def contract_text() -> str:
    return (SHARED if SHARED.exists() else REPO_COPY).read_text()


def section(title: str) -> str:
    """The body of the '## <title>...' section."""
    match = re.search(rf"^## {re.escape(title)}.*?$(.*?)(?=^## |\Z)", contract_text(),
                      re.M | re.S)
    assert match, f"the API contract has no '## {title}' section"
    return match.group(1)


def op_lists() -> dict:
    """{namespace: [names]} from the code block of the Ops section (continuation lines
    belong to the namespace above them)."""
    block = re.search(r"```\n(.*?)```", section("Ops"), re.S)
    assert block, "the Ops section has no code block"
    lists, current = {}, None
    for line in block.group(1).splitlines():
        head = re.match(r"^(eager(?:\.\w+)?):\s*(.*)$", line)
        if head:
            current, names = head.group(1), head.group(2)
            lists.setdefault(current, [])
        else:
            names = line
        assert current is not None, f"names before any namespace: {line!r}"
        lists[current].extend(names.split())
    return lists


def resolve(namespace: str):
    obj = eager
    for part in namespace.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def test_repo_copy_of_the_contract_is_identical_to_the_shared_one():
    assert REPO_COPY.exists(), \
        "docs/contract/API.md (a copy of the shared API contract) is missing"
    if SHARED.exists():
        assert REPO_COPY.read_bytes() == SHARED.read_bytes(), \
            f"docs/contract/API.md differs from {SHARED}: copy it again"


def test_the_op_lists_parse():
    lists = op_lists()
    assert set(lists) == {"eager", "eager.math", "eager.nn", "eager.linalg", "eager.random"}
    assert "add" in lists["eager"] and "reduce_logsumexp" in lists["eager.math"]
    assert "Generator" in lists["eager.random"] and "conv2d" in lists["eager.nn"]
    assert all(re.fullmatch(r"[A-Za-z_]\w*", n) for names in lists.values() for n in names)


@pytest.mark.parametrize("namespace", ["eager", "eager.math", "eager.nn", "eager.linalg",
                                       "eager.random"])
def test_every_listed_op_exists_and_is_callable(namespace):
    names = op_lists()[namespace]
    module = resolve(namespace)
    missing = [n for n in names if not hasattr(module, n)]
    not_callable = [n for n in names if hasattr(module, n) and not callable(getattr(module, n))]
    assert not missing, f"{namespace} lacks {len(missing)} contract name(s): {', '.join(missing)}"
    assert not not_callable, f"{namespace}: not callable: {', '.join(not_callable)}"


def test_generator_is_a_class():
    assert isinstance(eager.random.Generator, type)


def test_ops_in_several_namespaces_are_the_same_function():
    lists = op_lists()
    different = []
    for namespace in ("eager.math", "eager.linalg", "eager.nn"):
        for name in lists[namespace]:
            if name in lists["eager"] and hasattr(eager, name) and \
                    hasattr(resolve(namespace), name) and \
                    getattr(eager, name) is not getattr(resolve(namespace), name):
                different.append(f"{namespace}.{name}")
    assert not different, f"differ from the eager.* function of that name: {different}"


def contract_dtype_names() -> list:
    body = section("Tensors and dtypes")
    listed = re.search(r"dtypes: `eager\.([^`]*)`", body)
    assert listed, "no dtype list in 'Tensors and dtypes'"
    names = [n.strip() for n in listed.group(1).split(",")]
    special = re.findall(r"`eager\.(resource|variant)`", body)
    return names + special


def test_contract_dtypes_exist_and_equal_numpy():
    names = contract_dtype_names()
    assert {"float32", "int32", "bool", "complex128", "resource", "variant"} <= set(names)
    missing = [n for n in names if not isinstance(getattr(eager, n, None), eager.DType)]
    assert not missing, f"missing dtypes: {missing}"
    for n in names:
        if n not in ("resource", "variant"):
            assert getattr(eager, n) == np.dtype("bool" if n == "bool" else n)


def test_contract_error_classes_exist():
    body = section("Errors")
    names = sorted(set(re.findall(r"\b([A-Z]\w*Error)\b", body)))
    assert "OpError" in names and "InvalidArgumentError" in names
    missing = [n for n in names if not isinstance(getattr(eager.errors, n, None), type)]
    assert not missing, f"eager.errors lacks: {missing}"
    for n in names:
        assert issubclass(getattr(eager.errors, n), eager.errors.OpError)


def test_contract_tensor_names_exist():
    names = ["constant", "convert_to_tensor", "Tensor", "TensorShape", "TensorSpec",
             "IndexedSlices", "register_tensor_conversion_function", "DType", "as_dtype"]
    body = section("Tensors and dtypes")
    for n in names[:7]:
        assert f"eager.{n}" in body, f"the API contract no longer lists eager.{n}"
    missing = [n for n in names if not callable(getattr(eager, n, None))]
    assert not missing, f"missing: {missing}"
