"""The rest of `tf.function`'s contract, against TensorFlow 2.21's behaviour recorded here:
results are tensors; concrete functions bind Python arguments at trace time, accept their flat
signature and print TF's signatures; `run_functions_eagerly`; `init_scope`; unused stateless
ops are pruned while stateful ones run; `.numpy()` on a symbolic tensor is an AttributeError;
a tape target that is a source itself has the gradient ones."""

import collections

import numpy as np
import pytest

import eager
from eager import TensorSpec


def _value(t):
    return np.asarray(t.numpy()).tolist()


def _golden(text):
    """A TensorFlow 2.21 golden with TF's dtype prefix written as eager's."""
    return text.replace("tf.", "eager.")


# -- results are tensors ---------------------------------------------------------------------------
P = collections.namedtuple("P", "a b")

# (returned value, TF 2.21's result as (dtype name, value) per leaf; None where TF keeps None)
RESULTS = [
    (1, ("int32", 1)),
    (1.5, ("float32", 1.5)),
    (True, ("bool", True)),
    (np.arange(3), ("int64", [0, 1, 2])),
    (np.float64(2.0), ("float64", 2.0)),
    (2 ** 40, ("int64", 2 ** 40)),
    (1 + 2j, ("complex128", 1 + 2j)),
]


@pytest.mark.parametrize("returned,expected", RESULTS)
def test_a_returned_python_value_is_a_tensor(returned, expected):
    f = eager.function(lambda: returned)
    for _ in range(2):  # the first call (op by op) and the compiled one
        out = f()
        assert isinstance(out, eager.EagerTensor)
        assert (out.dtype.name, _value(out)) == expected


def test_structures_of_python_values_become_structures_of_tensors_and_none_stays():
    x = eager.constant(1.0)
    f = eager.function(lambda x: {"a": 1.5, "b": None, "c": (True, [None, 2]), "d": x,
                                  "p": P(1, 2.0)})
    out = f(x)
    assert out["b"] is None and out["c"][1][0] is None
    leaves = {"a": out["a"], "c0": out["c"][0], "c1": out["c"][1][1], "d": out["d"],
              "pa": out["p"].a, "pb": out["p"].b}
    assert {k: (t.dtype.name, _value(t)) for k, t in leaves.items()} == {
        "a": ("float32", 1.5), "c0": ("bool", True), "c1": ("int32", 2), "d": ("float32", 1.0),
        "pa": ("int32", 1), "pb": ("float32", 2.0)}
    assert type(out["p"]) is P
    # TF 2.21: `structured_outputs` holds the graph's tensors in their place, None as None
    concrete = eager.function(lambda: (1, None)).get_concrete_function()
    first, second = concrete.structured_outputs
    assert first.is_symbolic and first.dtype == eager.int32 and second is None
    assert len(concrete.outputs) == 1
    assert eager.function(lambda: None)() is None


def test_a_string_stays_python_since_there_is_no_string_dtype():
    assert eager.function(lambda: ("hi", 1))()[0] == "hi"


class _Thing:
    pass


@pytest.mark.parametrize("returned,type_name", [(_Thing(), "_Thing"), (eager.float32, "DType"),
                                                (TensorSpec([1]), "TensorSpec"),
                                                (2 ** 70, "int"), (Ellipsis, "ellipsis")])
def test_an_unconvertible_result_is_tensorflows_type_error(returned, type_name):
    def returns():
        return returned

    with pytest.raises(TypeError) as info:
        eager.function(returns)()
    # TF 2.21's words
    assert str(info.value) == (
        "To be compatible with tf.function, Python functions must return zero or more Tensors "
        f"or ExtensionTypes or None values; in compilation of {returns!r}, found return value "
        f"of type {type_name}, which is not a Tensor or ExtensionType.")


