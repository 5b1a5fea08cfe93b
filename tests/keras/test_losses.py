"""`eager.keras.losses` against Keras 3 (TensorFlow backend): every loss on the recorded cases
(tests/keras/keras_cases.py, goldens in keras_goldens.py), reductions, masks, sample weights,
dtypes, config round trips, errors, gradients and tracing; and `keras.utils`' numerical
helpers."""

import random
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import eager
from eager import keras
from eager.keras.utils.annotations import set_keras_logits, set_keras_mask
from tests.keras.keras_cases import FUNCTION_CASES, LOSS_CASES
from tests.keras.keras_goldens import GOLDENS

losses = keras.losses


def _tol(dtype):
    return dict(rtol=1e-5, atol=1e-6) if dtype != "float64" else dict(rtol=1e-12, atol=1e-12)


def _run_loss(case):
    loss = getattr(losses, case["cls"])(**case.get("kwargs", {}))
    y_true = np.asarray(case["y_true"], dtype=case.get("true_dtype", "float32"))
    y_pred = eager.constant(np.asarray(case["y_pred"], dtype=case.get("pred_dtype", "float32")))
    if "mask" in case:
        set_keras_mask(y_pred, eager.constant(np.asarray(case["mask"], dtype=bool)))
    sw = case.get("sample_weight")
    sw = None if sw is None else np.asarray(sw, dtype="float32")
    return loss(y_true, y_pred, sample_weight=sw)


def _case_id(case):
    extra = {k: v for k, v in case.items() if k in ("kwargs", "mask") or k == "sample_weight"}
    return f"{case['cls']}-{sorted(extra)}-{case.get('kwargs', {})}"


@pytest.mark.parametrize("index", range(len(LOSS_CASES)),
                         ids=[f"{i}-{c['cls']}" for i, c in enumerate(LOSS_CASES)])
def test_loss_matches_keras(index):
    case, golden = LOSS_CASES[index], GOLDENS["losses"][index]
    if "error" in golden:
        # Keras's error is TF's InvalidArgumentError from the multiply ("Incompatible
        # shapes: [3] vs. [3,4]"); eager's is its own InvalidArgumentError naming the op.
        with pytest.raises(eager.errors.InvalidArgumentError, match="[Ii]ncompatible shapes"):
            _run_loss(case).numpy()
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        out = _run_loss(case)
    assert out.dtype.name == golden["dtype"]
    np.testing.assert_allclose(out.numpy(), golden["value"], **_tol(golden["dtype"]))


@pytest.mark.parametrize("index", [i for i, c in enumerate(FUNCTION_CASES)
                                   if c["module"] == "losses"])
def test_loss_function_matches_keras(index):
    case, golden = FUNCTION_CASES[index], GOLDENS["functions"][index]
    fn = getattr(losses, case["fn"])
    out = fn(np.asarray(case["y_true"], dtype=case.get("true_dtype", "float32")),
             np.asarray(case["y_pred"], dtype="float32"), **case.get("kwargs", {}))
    assert list(out.shape) == golden["shape"]
    np.testing.assert_allclose(out.numpy(), golden["value"], rtol=1e-5, atol=1e-6)


# -- names, configs, get / serialize / deserialize ---------------------------------------------

def test_get_resolves_keras_names():
    assert losses.get("mse") is losses.mean_squared_error
    assert losses.get("MSE") is losses.mean_squared_error
    assert losses.get("bce") is losses.binary_crossentropy
    assert losses.get("categorical_crossentropy") is losses.categorical_crossentropy
    assert isinstance(losses.get("CategoricalCrossentropy"), losses.CategoricalCrossentropy)
    config = {"class_name": "CategoricalCrossentropy", "config": {"from_logits": True}}
    assert losses.get(config).get_config() == {
        "name": "categorical_crossentropy", "reduction": "sum_over_batch_size",
        "from_logits": True, "label_smoothing": 0.0, "axis": -1}
    assert losses.get(None) is None
    huber = losses.Huber()
    assert losses.get(huber) is huber
    assert losses.mse is losses.MSE is losses.mean_squared_error
    assert losses.kld is losses.kl_divergence


@pytest.mark.parametrize("identifier", ["nope", 5, "Mse"])
def test_get_unknown_identifier_is_keras_value_error(identifier):
    with pytest.raises(ValueError, match=f"^Could not interpret loss identifier: {identifier}$"):
        losses.get(identifier)


def test_serialize_is_keras_dict_and_round_trips():
    # Goldens: keras.losses.serialize(...) in Keras 3.15.
    assert losses.serialize(losses.MeanSquaredError()) == {
        "module": "keras.losses", "class_name": "MeanSquaredError",
        "config": {"name": "mean_squared_error", "reduction": "sum_over_batch_size"},
        "registered_name": None}
    assert losses.serialize(losses.mean_squared_error) == {
        "module": "builtins", "class_name": "function", "config": "mean_squared_error",
        "registered_name": "function"}
    assert losses.serialize(losses.BinaryCrossentropy(from_logits=True))["config"] == {
        "name": "binary_crossentropy", "reduction": "sum_over_batch_size", "from_logits": True,
        "label_smoothing": 0.0, "axis": -1}
    assert losses.serialize(losses.SparseCategoricalCrossentropy())["config"] == {
        "name": "sparse_categorical_crossentropy", "reduction": "sum_over_batch_size",
        "from_logits": False, "ignore_class": None}
    for loss in [losses.Huber(delta=2.5, reduction="sum"), losses.CosineSimilarity(axis=0),
                 losses.CategoricalFocalCrossentropy(alpha=0.5, gamma=1.0, from_logits=True),
                 losses.SparseCategoricalCrossentropy(ignore_class=3, name="scce")]:
        clone = losses.deserialize(losses.serialize(loss))
        assert type(clone) is type(loss) and clone.get_config() == loss.get_config()
    assert losses.deserialize(losses.serialize(losses.huber)) is losses.huber
    assert isinstance(losses.deserialize("MeanSquaredError"), losses.MeanSquaredError)
    wrapper = losses.LossFunctionWrapper(losses.huber, delta=3.0, name="w")
    clone = losses.LossFunctionWrapper.from_config(wrapper.get_config())
    assert clone.fn is losses.huber and clone._fn_kwargs == {"delta": 3.0}
    y = np.array([[0.0, 4.0]], "float32")
    assert clone(y, y + 1.5).numpy() == wrapper(y, y + 1.5).numpy()


def test_deserialize_unknown_is_value_error():
    with pytest.raises(ValueError, match="Could not interpret loss identifier: Nope"):
        losses.deserialize({"class_name": "Nope", "config": {}})
    with pytest.raises(ValueError, match="Could not interpret loss identifier: nope"):
        losses.deserialize("nope")


def test_loss_base_names_dtype_and_custom_call():
    class Doubled(losses.Loss):
        def call(self, y_true, y_pred):
            return 2.0 * (y_pred - y_true)

    loss = Doubled(reduction="sum")
    assert loss.name.startswith("doubled") and loss.dtype == "float32"
    assert loss([1.0, 2.0], [2.0, 4.0]).numpy() == 6.0
    assert Doubled.from_config(loss.get_config()).reduction == "sum"
    assert losses.MeanSquaredError(dtype="float64").dtype == "float64"
    assert losses.MeanSquaredError(dtype=eager.float16).dtype == "float16"


def test_invalid_reduction_is_keras_value_error():
    with pytest.raises(ValueError, match=r"^Invalid value for argument `reduction`\. Expected "
                                         r"one of \{.*\}\. Received: reduction=bad$"):
        losses.MeanSquaredError(reduction="bad")


# -- shape errors: Keras's ValueErrors, or eager's InvalidArgumentError naming the op ----------

def test_crossentropy_shape_mismatch_is_keras_value_error():
    a, b = np.ones((2, 3), "float32"), np.ones((2, 4), "float32")
    msg = (r"Arguments `target` and `output` must have the same shape\. Received: "
           r"target.shape=\(2, 3\), output.shape=\(2, 4\)")
    with pytest.raises(ValueError, match=msg):
        losses.BinaryCrossentropy()(a, b)
    with pytest.raises(ValueError, match=msg):
        losses.CategoricalCrossentropy()(a, b)
    with pytest.raises(ValueError, match=r"must have the same shape up until the last "
                                         r"dimension: target.shape=\(3,\), output.shape=\(2, 4\)"):
        losses.SparseCategoricalCrossentropy()(np.ones((3,)), b)
    with pytest.raises(ValueError, match=r"must have rank \(ndim\) `target.ndim - 1`"):
        losses.SparseCategoricalCrossentropy()(np.ones((2, 4, 5)), b)
    with pytest.raises(ValueError, match="`axis` must be of type `int`"):
        losses.categorical_crossentropy(a, a, axis=True)


def test_elementwise_shape_mismatch_names_the_op():
    a, b = np.ones((2, 3), "float32"), np.ones((2, 4), "float32")
    with pytest.raises(eager.errors.InvalidArgumentError, match=r"\[2,3\] vs\. \[2,4\]|"
                                                                r"\(2, 3\).*\(2, 4\)"):
        losses.MeanSquaredError()(a, b).numpy()


def test_single_class_categorical_crossentropy_warns_as_keras():
    with pytest.warns(SyntaxWarning, match="Consider using 'binary_crossentropy'"):
        losses.categorical_crossentropy([[1.0], [1.0]], [[0.3], [0.9]])


# -- logits recovered from a softmax / sigmoid -------------------------------------------------

def test_crossentropy_uses_logits_recorded_by_softmax_and_sigmoid():
    logits = eager.constant([[100.0, -100.0, 0.0], [0.0, 0.0, 90.0]])
    labels = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]], "float32")
    probs = eager.nn.softmax(logits)
    clipped = losses.categorical_crossentropy(labels, probs).numpy()
    np.testing.assert_allclose(clipped, [-np.log(1e-7)] * 2, rtol=1e-5)  # from the clip
    set_keras_logits(probs, logits)
    exact = losses.categorical_crossentropy(labels, probs).numpy()
    np.testing.assert_allclose(exact, [200.0, 90.0], rtol=1e-6)
    with pytest.warns(UserWarning, match="received `from_logits=True`"):
        losses.categorical_crossentropy(labels, probs, from_logits=True)


def test_traced_softmax_output_is_read_as_logits():
    logits = eager.constant([[100.0, -100.0, 0.0], [0.0, 0.0, 90.0]])
    labels = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]], "float32")

    @eager.function
    def loss_of(x):
        return losses.CategoricalCrossentropy(reduction="none")(labels, eager.nn.softmax(x))

    np.testing.assert_allclose(loss_of(logits).numpy(), [200.0, 90.0], rtol=1e-6)


# -- dtypes -------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_inputs_of_any_float_dtype_compute_in_the_loss_dtype(dtype):
    y_true = np.array([[0.0, 1.0], [1.0, 0.0]], dtype)
    y_pred = eager.constant(np.array([[0.2, 0.8], [0.6, 0.4]], dtype))
    out = losses.BinaryCrossentropy()(y_true, y_pred)
    assert out.dtype == eager.float32
    out64 = losses.BinaryCrossentropy(dtype="float64")(y_true, y_pred)
    assert out64.dtype == eager.float64
    np.testing.assert_allclose(out.numpy(), out64.numpy(), rtol=1e-3 if dtype == "float16"
                               else 1e-6)


@given(batch=st.integers(1, 5), classes=st.integers(2, 6),
       dtype=st.sampled_from(["float16", "float32", "float64"]), seed=st.integers(0, 2**16))
def test_categorical_crossentropy_from_logits_matches_numpy(batch, classes, dtype, seed):
    rs = np.random.RandomState(seed)
    logits = (rs.randn(batch, classes) * 5).astype(dtype)
    labels = np.eye(classes)[rs.randint(0, classes, batch)].astype(dtype)
    x = logits.astype(np.float64)
    log_softmax = x - x.max(-1, keepdims=True)
    log_softmax -= np.log(np.exp(log_softmax).sum(-1, keepdims=True))
    expected = -(labels * log_softmax).sum(-1).mean()
    got = losses.CategoricalCrossentropy(from_logits=True)(labels, logits)
    assert got.dtype == eager.float32
    np.testing.assert_allclose(got.numpy(), expected, rtol=2e-5, atol=1e-5)
    sparse = losses.SparseCategoricalCrossentropy(from_logits=True)(labels.argmax(-1), logits)
    np.testing.assert_allclose(sparse.numpy(), expected, rtol=2e-5, atol=1e-5)


# -- gradients and tracing ----------------------------------------------------------------------

_rs = np.random.RandomState(7)
_GRAD_CASES = [
    ("MeanSquaredError", {}, _rs.randn(3, 4), _rs.randn(3, 4)),
    ("MeanAbsoluteError", {}, _rs.randn(3, 4), _rs.randn(3, 4)),
    ("MeanAbsolutePercentageError", {}, _rs.randn(3, 4) + 3, _rs.randn(3, 4)),
    ("MeanSquaredLogarithmicError", {}, _rs.rand(3, 4) * 2, _rs.rand(3, 4) * 2 + 0.1),
    ("Huber", {"delta": 0.7}, _rs.randn(3, 4), _rs.randn(3, 4)),
    ("LogCosh", {}, _rs.randn(3, 4), _rs.randn(3, 4)),
    ("CosineSimilarity", {}, _rs.randn(3, 4), _rs.randn(3, 4)),
    ("Hinge", {}, (_rs.rand(3, 4) > 0.5) * 1.0, _rs.randn(3, 4) * 3),
    ("SquaredHinge", {}, (_rs.rand(3, 4) > 0.5) * 1.0, _rs.randn(3, 4)),
    ("CategoricalHinge", {}, np.eye(4)[[0, 2, 3]], _rs.randn(3, 4)),
    ("KLDivergence", {}, _rs.dirichlet(np.ones(4), 3), _rs.dirichlet(np.ones(4), 3)),
    ("Poisson", {}, _rs.rand(3, 4) * 3, _rs.rand(3, 4) * 3 + 0.1),
    ("BinaryCrossentropy", {}, (_rs.rand(3, 4) > 0.5) * 1.0, _rs.rand(3, 4) * 0.9 + 0.05),
    ("BinaryCrossentropy", {"from_logits": True, "label_smoothing": 0.1},
     (_rs.rand(3, 4) > 0.5) * 1.0, _rs.randn(3, 4) * 3),
    ("BinaryFocalCrossentropy", {"from_logits": True, "apply_class_balancing": True},
     (_rs.rand(3, 4) > 0.5) * 1.0, _rs.randn(3, 4) * 3),
    ("CategoricalCrossentropy", {}, np.eye(4)[[0, 2, 3]], _rs.dirichlet(np.ones(4), 3)),
    ("CategoricalCrossentropy", {"from_logits": True, "label_smoothing": 0.2},
     np.eye(4)[[0, 2, 3]], _rs.randn(3, 4) * 3),
    ("CategoricalFocalCrossentropy", {"from_logits": True}, np.eye(4)[[0, 2, 3]],
     _rs.randn(3, 4)),
    ("SparseCategoricalCrossentropy", {}, np.array([0, 2, 3]), _rs.dirichlet(np.ones(4), 3)),
    ("SparseCategoricalCrossentropy", {"from_logits": True, "ignore_class": 2},
     np.array([0, 2, 3]), _rs.randn(3, 4) * 3),
]


@pytest.mark.parametrize("cls, kwargs, y_true, y_pred", _GRAD_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(_GRAD_CASES)])
def test_loss_gradient_matches_finite_differences(cls, kwargs, y_true, y_pred):
    loss = getattr(losses, cls)(dtype="float64", **kwargs)
    sw = np.array([0.5, 2.0, 1.0])
    theoretical, numerical = eager.test.compute_gradient(
        lambda p: loss(y_true, p, sample_weight=sw), [eager.constant(y_pred)], delta=1e-6)
    np.testing.assert_allclose(theoretical[0], numerical[0], rtol=1e-4, atol=1e-6)
    assert np.abs(theoretical[0]).sum() > 0


def test_loss_inside_function_traces_once_per_signature_and_matches_eager():
    loss = losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1)
    traces = []

    @eager.function
    def step(y_true, logits):
        traces.append(1)
        return loss(y_true, logits, sample_weight=eager.constant([1.0, 2.0, 0.5]))

    y_true = eager.constant(np.eye(3, dtype="float32")[[0, 2, 1]])
    for scale in (1.0, 2.0, 3.0):
        logits = eager.constant(np.arange(9, dtype="float32").reshape(3, 3) * scale)
        eager_value = loss(y_true, logits, sample_weight=eager.constant([1.0, 2.0, 0.5]))
        np.testing.assert_allclose(step(y_true, logits).numpy(), eager_value.numpy(),
                                   rtol=1e-6)
    assert len(traces) == 1


# -- keras.utils ---------------------------------------------------------------------------------

def test_to_categorical_as_keras():
    out = keras.utils.to_categorical([0, 2, 1])
    assert isinstance(out, np.ndarray) and out.dtype == np.float64
    np.testing.assert_array_equal(out, np.eye(3)[[0, 2, 1]])
    out = keras.utils.to_categorical([[1], [3]], num_classes=5)
    assert out.shape == (2, 5) and out[1, 3] == 1.0
    assert keras.utils.to_categorical(np.array([[0, 1], [1, 1]])).shape == (2, 2, 2)
    tensor = keras.utils.to_categorical(eager.constant([[2], [0]]), num_classes=3)
    assert tensor.dtype == eager.float32
    np.testing.assert_array_equal(tensor.numpy(), [[0, 0, 1], [1, 0, 0]])


def test_normalize_as_keras():
    x = np.array([[3.0, 4.0], [0.0, 0.0]])
    np.testing.assert_allclose(keras.utils.normalize(x), [[0.6, 0.8], [0.0, 0.0]])
    np.testing.assert_allclose(keras.utils.normalize(x, order=1), [[3 / 7, 4 / 7], [0, 0]])
    tensor = keras.utils.normalize(eager.constant([[3.0, 4.0], [0.0, 0.0]]))
    assert eager.is_tensor(tensor)
    np.testing.assert_allclose(tensor.numpy(), [[0.6, 0.8], [0.0, 0.0]], rtol=1e-6)
    with pytest.raises(ValueError, match=r"Argument `order` must be an int >= 1"):
        keras.utils.normalize(eager.constant([1.0]), order=0)


def test_set_random_seed_seeds_python_numpy_and_eager():
    def draw():
        return (random.random(), np.random.rand(), eager.random.uniform([2]).numpy().tolist())

    keras.utils.set_random_seed(1337)
    first = draw()
    keras.utils.set_random_seed(1337)
    assert draw() == first
    keras.utils.set_random_seed(7)
    assert draw() != first
    with pytest.raises(ValueError, match=r"Expected `seed` argument to be an integer\. "
                                         r"Received: seed=1\.5 \(of type <class 'float'>\)"):
        keras.utils.set_random_seed(1.5)


def test_legacy_reduction_names_as_tf_keras_has_them():
    """TF 2.21's `tf.keras.losses.Reduction` (the distributed-training guide passes
    `reduction=Reduction.NONE` before `tf.nn.compute_average_loss`); TF's values and errors."""
    reduction = keras.losses.Reduction
    assert reduction.all() == ("auto", "none", "sum", "sum_over_batch_size")
    assert reduction.validate("sum") is None
    with pytest.raises(ValueError, match=r"Invalid Reduction Key: bad\. Expected keys are "
                                         r"\"\('auto', 'none', 'sum', 'sum_over_batch_size'\)\""):
        reduction.validate("bad")
    loss = keras.losses.BinaryCrossentropy(from_logits=True, reduction=reduction.NONE)
    # TF 2.21: tf.Tensor([0.474077   0.79813886], shape=(2,), dtype=float32)
    np.testing.assert_allclose(loss([[1.0], [0.0]], [[0.5], [0.2]]).numpy(),
                               [0.474077, 0.79813886], rtol=1e-6)
    with pytest.raises(ValueError, match=r"Invalid value for argument `reduction`.*"
                                         r"Received: reduction=auto"):
        keras.losses.MeanSquaredError(reduction=reduction.AUTO)
