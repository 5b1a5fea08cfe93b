"""eager.nn: activations, softmax, cross-entropies, conv2d and max_pool2d against float64 numpy
references written here (including a direct, loop-based convolution), plus TF's error behaviour."""

from inspect import unwrap  # public functions wrap the ops' (traceback filtering)
import math
import warnings

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import eager
from eager import nn
from eager.errors import InvalidArgumentError, UnimplementedError
from eager.ops import conv_ops, nn_ops

from strategies import FLOAT_DTYPES, INT_DTYPES, REAL_DTYPES, arrays, shapes
from gradcheck import check_second_order

TOL = {np.float16: dict(rtol=2e-3, atol=2e-3), np.float32: dict(rtol=1e-5, atol=1e-6),
       np.float64: dict(rtol=1e-12, atol=1e-13)}

_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _close(actual, expected, dtype):
    actual = np.asarray(actual)
    assert actual.dtype == np.dtype(dtype)
    np.testing.assert_allclose(actual.astype(np.float64), expected, **TOL[np.dtype(dtype).type])


def _logsumexp(x, axis):
    return np.logaddexp.reduce(x, axis=axis, keepdims=True)


# -----------------------------------------------------------------------------------------------
# relu and gelu
# -----------------------------------------------------------------------------------------------

@given(st.sampled_from(REAL_DTYPES).flatmap(lambda d: arrays(d, shapes())))
def test_relu_matches_numpy(x):
    out = nn.relu(x)
    assert out.dtype == x.dtype and out.shape == x.shape
    np.testing.assert_array_equal(out.numpy(), np.maximum(x, 0))


def test_relu_propagates_nan():
    out = nn.relu(np.array([np.nan, -1.0, 2.0], np.float32)).numpy()
    assert np.isnan(out[0]) and out[1] == 0 and out[2] == 2


@given(st.sampled_from(FLOAT_DTYPES).flatmap(lambda d: arrays(d, shapes(max_dims=3))))
def test_gelu_exact_matches_erf_reference(x):
    ref = 0.5 * x.astype(np.float64) * (1 + _erf(x.astype(np.float64) / math.sqrt(2)))
    _close(nn.gelu(x).numpy(), ref, x.dtype)


@given(st.sampled_from(FLOAT_DTYPES).flatmap(lambda d: arrays(d, shapes(max_dims=3))))
def test_gelu_approximate_is_tf_tanh_formula(x):
    f = x.astype(np.float64)
    ref = 0.5 * f * (1 + np.tanh(math.sqrt(2 / math.pi) * (f + 0.044715 * f ** 3)))
    _close(nn.gelu(x, approximate=True).numpy(), ref, x.dtype)


def test_normal_cdf_float64_accuracy_is_as_documented():
    # The same z = x / sqrt(2) on both sides, so this measures the erf/erfc algorithm alone
    # (down to Phi ~ 1e-300, above the subnormals).
    x = np.concatenate([np.linspace(-37, 9, 400001), np.linspace(-1.4, 1.4, 20001)])
    z = x * nn_ops._SQRT_HALF
    small = np.abs(z) <= 0.46875
    ref = np.where(small, 0.5 + 0.5 * _erf(np.where(small, z, 0)), 0.5 * _erfc(-z))
    got = nn_ops._normal_cdf(np, x)
    assert np.max(np.abs(got - ref) / ref) < 4e-15


def test_gelu_keeps_relative_accuracy_in_the_negative_tail():
    # Phi's condition number grows like x**2: rounding x / sqrt(2) alone costs ~x**2 * 1e-16.
    x = np.array([-8.0, -20.0, -30.0], np.float64)
    ref = x * 0.5 * _erfc(-x / math.sqrt(2))
    got = nn.gelu(x).numpy()
    assert np.all(got < 0)
    np.testing.assert_allclose(got, ref, rtol=5e-13)


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # -inf * 0 is nan, as in TF
def test_gelu_special_values():
    out = nn.gelu(np.array([np.inf, -np.inf, np.nan, 0.0], np.float32)).numpy()
    assert out[0] == np.inf and np.isnan(out[1]) and np.isnan(out[2]) and out[3] == 0


def test_gelu_rejects_integers_like_tf():
    with pytest.raises(ValueError, match="Gelu.*floating point.*int32"):
        nn.gelu([1, 2])


# -----------------------------------------------------------------------------------------------
# softmax and log_softmax
# -----------------------------------------------------------------------------------------------

@st.composite
def logits_and_axis(draw, min_side=0):
    dtype = draw(st.sampled_from(FLOAT_DTYPES))
    x = draw(arrays(dtype, shapes(min_dims=1, max_dims=4, min_side=min_side)))
    return x, draw(st.integers(-x.ndim, x.ndim - 1))


@given(logits_and_axis())
def test_softmax_matches_reference(case):
    x, axis = case
    f = x.astype(np.float64)
    _close(nn.softmax(x, axis=axis).numpy(), np.exp(f - _logsumexp(f, axis)), x.dtype)


@given(logits_and_axis())
def test_log_softmax_matches_reference(case):
    x, axis = case
    f = x.astype(np.float64)
    _close(nn.log_softmax(x, axis=axis).numpy(), f - _logsumexp(f, axis), x.dtype)


def test_softmax_default_axis_is_last_and_large_logits_are_stable():
    x = np.array([[1000.0, 0.0, -1000.0], [1e30, 1e30, 0.0]], np.float32)
    np.testing.assert_allclose(nn.softmax(x).numpy(), [[1, 0, 0], [0.5, 0.5, 0]])
    out = nn.log_softmax(x).numpy()
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out[0], [0, -1000, -2000])


def test_softmax_errors():
    with pytest.raises(InvalidArgumentError, match=r"Softmax.*>= 1 dimension"):
        nn.softmax(eager.constant(1.0))
    with pytest.raises(InvalidArgumentError, match=r"Softmax.*axis 2"):
        nn.softmax(np.zeros((2, 2), np.float32), axis=2)
    # TensorFlow 2.21 (verified): the dtype is not in the op's type list.
    with pytest.raises(InvalidArgumentError, match=r"LogSoftmax.*int32"):
        nn.log_softmax([1, 2])
    with pytest.raises(ValueError):
        nn.softmax(object())
    with pytest.raises(InvalidArgumentError, match="Softmax.*string"):
        nn.softmax("str")
    with pytest.raises(ValueError):
        nn.softmax(None)


# -----------------------------------------------------------------------------------------------
# Cross-entropies
# -----------------------------------------------------------------------------------------------

@given(st.sampled_from(FLOAT_DTYPES).flatmap(
    lambda d: shapes(max_dims=3).flatmap(
        lambda s: st.tuples(arrays(d, s), arrays(d, s, st.floats(0, 1, width=16))))))
def test_sigmoid_cross_entropy_matches_reference(case):
    x, z = case
    f, g = x.astype(np.float64), z.astype(np.float64)
    ref = g * np.logaddexp(0, -f) + (1 - g) * np.logaddexp(0, f)
    _close(nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x).numpy(), ref, x.dtype)


def test_sigmoid_cross_entropy_large_logits_are_finite():
    out = nn.sigmoid_cross_entropy_with_logits(labels=[1.0, 0.0, 1.0, 0.0],
                                               logits=[1e4, -1e4, -1e4, 1e4]).numpy()
    np.testing.assert_allclose(out, [0, 0, 1e4, 1e4])


@st.composite
def softmax_xent_case(draw):
    x, axis = draw(logits_and_axis(min_side=1))
    z = draw(arrays(x.dtype, x.shape, st.floats(0, 1, width=16)))
    if draw(st.booleans()) and x.ndim > 1:  # labels broadcast to the logits' shape
        z = z[(0,) * (x.ndim - 1)] if axis % x.ndim == x.ndim - 1 else z
    return x, z, axis


@given(softmax_xent_case())
def test_softmax_cross_entropy_matches_reference(case):
    x, z, axis = case
    f = x.astype(np.float64)
    zb = np.broadcast_to(z.astype(np.float64), x.shape)
    ref = -np.sum(zb * (f - _logsumexp(f, axis)), axis=axis)
    out = nn.softmax_cross_entropy_with_logits(labels=z, logits=x, axis=axis)
    assert out.shape == ref.shape
    _close(out.numpy(), ref, x.dtype)


def test_softmax_cross_entropy_large_logits_and_int_labels():
    logits = np.array([[1e4, 0.0, -1e4]], np.float32)
    out = nn.softmax_cross_entropy_with_logits(labels=[[0, 0, 1]], logits=logits)
    assert out.dtype == eager.float32  # labels cast to the logits' dtype, as TF does
    np.testing.assert_allclose(out.numpy(), [2e4])
    empty = nn.softmax_cross_entropy_with_logits(np.zeros((2, 0), np.float32),
                                                 np.zeros((2, 0), np.float32))
    np.testing.assert_array_equal(empty.numpy(), [0, 0])


@st.composite
def sparse_case(draw):
    dtype = draw(st.sampled_from(FLOAT_DTYPES))
    batch = draw(shapes(max_dims=3))
    classes = draw(st.integers(1, 5))
    x = draw(arrays(dtype, batch + (classes,)))
    label_dtype = draw(st.sampled_from([np.int32, np.int64]))
    labels = draw(arrays(label_dtype, batch, st.integers(0, classes - 1)))
    return x, labels


@given(sparse_case())
def test_sparse_softmax_cross_entropy_matches_reference(case):
    x, labels = case
    f = x.astype(np.float64)
    log_p = f - _logsumexp(f, -1)
    ref = -np.take_along_axis(log_p, labels[..., None].astype(np.int64), -1)[..., 0]
    out = nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=x)
    assert out.shape == labels.shape
    _close(out.numpy(), ref, x.dtype)


def test_sparse_softmax_cross_entropy_large_logits():
    out = nn.sparse_softmax_cross_entropy_with_logits(
        labels=[0, 2], logits=np.array([[1e4, 0, -1e4], [1e4, 0, -1e4]], np.float16))
    np.testing.assert_allclose(out.numpy().astype(np.float64), [0, 2e4], rtol=1e-3)


def test_sparse_label_out_of_range_is_tf_cpu_error():
    logits = np.zeros((2, 5), np.float32)
    with pytest.raises(InvalidArgumentError,
                       match=r"Received a label value of 7 which is outside the valid range of "
                             r"\[0, 5\)"):
        # (`.numpy()`: a device whose kernels run later reports the failure there)
        nn.sparse_softmax_cross_entropy_with_logits(labels=[1, 7], logits=logits).numpy()
    with pytest.raises(InvalidArgumentError, match=r"label value of -1 .*\[0, 5\)"):
        nn.sparse_softmax_cross_entropy_with_logits(labels=np.array([-1, 9], np.int64),
                                                    logits=logits).numpy()


def test_cross_entropy_static_errors():
    x = np.zeros((2, 5), np.float32)
    with pytest.raises(ValueError, match="Both `labels` and `logits`"):
        nn.sparse_softmax_cross_entropy_with_logits(logits=x)
    with pytest.raises(ValueError, match="Both `labels` and `logits`"):
        nn.sigmoid_cross_entropy_with_logits(labels=x)
    with pytest.raises(ValueError, match=r"rank.*\(2, 5\)"):
        nn.sparse_softmax_cross_entropy_with_logits(labels=[[1]], logits=x)
    with pytest.raises(ValueError, match=r"labels.shape.*\(3,\).*\(2, 5\)"):
        nn.sparse_softmax_cross_entropy_with_logits(labels=[1, 2, 3], logits=x)
    with pytest.raises(ValueError, match="scalar"):
        nn.sparse_softmax_cross_entropy_with_logits(labels=1, logits=eager.constant(1.0))
    # TF 2.21 (verified): float32 labels are not in Tlabels' list (InvalidArgumentError).
    with pytest.raises(InvalidArgumentError,
                       match=r"SparseSoftmaxCrossEntropyWithLogits.*float32"):
        nn.sparse_softmax_cross_entropy_with_logits(labels=[1.0, 2.0], logits=x)
    with pytest.raises(ValueError, match=r"same shape.*\(2, 5\) vs \(5,\)"):
        nn.sigmoid_cross_entropy_with_logits(labels=np.zeros(5, np.float32), logits=x)
    with pytest.raises(InvalidArgumentError, match="SigmoidCrossEntropyWithLogits.*float64"):
        nn.sigmoid_cross_entropy_with_logits(labels=eager.constant(np.zeros((2, 5))),
                                             logits=eager.constant(x))
    with pytest.raises(InvalidArgumentError, match=r"broadcastable: logits_size=\[2,5\] "
                                                   r"labels_size=\[3,5\]"):
        nn.softmax_cross_entropy_with_logits(np.zeros((3, 5), np.float32), x)
    with pytest.raises(InvalidArgumentError, match=r"SoftmaxCrossEntropyWithLogits.*axis 2"):
        nn.softmax_cross_entropy_with_logits(x, x, axis=2)
    # TensorFlow 2.21 (verified): the dtype is not in the op's type list.
    with pytest.raises(InvalidArgumentError, match="SoftmaxCrossEntropyWithLogits.*int32"):
        nn.softmax_cross_entropy_with_logits([[1, 0]], [[1, 0]])
    with pytest.raises(ValueError):
        nn.softmax_cross_entropy_with_logits(object(), x)


def test_cross_entropy_inference_on_partial_shapes():
    spec = eager.TensorSpec
    loss, backprop = nn_ops.SPARSE_XENT.infer(spec([None, 5]), spec([4], eager.int32))
    assert loss.shape == [4] and backprop.shape == [4, 5]
    loss, _ = nn_ops.SOFTMAX_XENT.infer(spec([None, 3, 5]), spec([5]), axis=1)
    assert loss.shape == [None, 5]
    loss, _ = nn_ops.SPARSE_XENT.infer(spec(None), spec([None, 2], eager.int64))
    assert loss.shape == [None, 2]
    with pytest.raises(InvalidArgumentError, match="SparseSoftmax"):
        nn_ops.SPARSE_XENT.infer(spec([3, 5]), spec([4], eager.int32))


# -----------------------------------------------------------------------------------------------
# conv2d: a direct (loop over output pixels) reference convolution
# -----------------------------------------------------------------------------------------------

def _tf_same_pads(size, k, stride, dilation):
    out = -(-size // stride)
    total = max((out - 1) * stride + (k - 1) * dilation + 1 - size, 0)
    return total // 2, total - total // 2


def _pads(x_hw, k_hw, strides, dilations, padding):
    if padding == "VALID":
        return [(0, 0), (0, 0)]
    if padding == "SAME":
        return [_tf_same_pads(x_hw[i], k_hw[i], strides[i], dilations[i]) for i in range(2)]
    return [tuple(padding[1]), tuple(padding[2])]


def reference_conv2d(x, w, strides, dilations, padding):
    """NHWC x [N,H,W,C], w [kh,kw,C/G,O]; plain loops over output pixels, float64."""
    n, h, wd, c = x.shape
    kh, kw, cin, cout = w.shape
    groups, og = c // cin, cout // (c // cin)
    (pt, pb), (pl, pr) = _pads((h, wd), (kh, kw), strides, dilations, padding)
    xp = np.pad(x.astype(np.float64), ((0, 0), (pt, pb), (pl, pr), (0, 0)))
    eff_h, eff_w = (kh - 1) * dilations[0] + 1, (kw - 1) * dilations[1] + 1
    oh = (xp.shape[1] - eff_h) // strides[0] + 1
    ow = (xp.shape[2] - eff_w) // strides[1] + 1
    out = np.zeros((n, max(oh, 0), max(ow, 0), cout))
    for i in range(max(oh, 0)):
        for j in range(max(ow, 0)):
            r0, c0 = i * strides[0], j * strides[1]
            patch = xp[:, r0:r0 + eff_h:dilations[0], c0:c0 + eff_w:dilations[1], :]
            for g in range(groups):
                out[:, i, j, g * og:(g + 1) * og] = np.tensordot(
                    patch[..., g * cin:(g + 1) * cin], w[..., g * og:(g + 1) * og].astype(float),
                    axes=([1, 2, 3], [0, 1, 2]))
    return out


@st.composite
def conv_case(draw, groups=False):
    dtype = draw(st.sampled_from([np.float32, np.float64, np.int32]))
    n, h, wd = draw(st.integers(0, 2)), draw(st.integers(1, 7)), draw(st.integers(1, 7))
    cin = draw(st.integers(1, 3))
    g = draw(st.integers(1, 3)) if groups else 1
    kh, kw, cout = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 3)) * g
    small = st.integers(-4, 4) if dtype == np.int32 else st.floats(-2, 2, width=32)
    x = draw(arrays(dtype, (n, h, wd, cin * g), small))
    w = draw(arrays(dtype, (kh, kw, cin, cout), small))
    strides = draw(st.tuples(st.integers(1, 3), st.integers(1, 3)))
    dilations = draw(st.tuples(st.integers(1, 2), st.integers(1, 2)))
    padding = draw(st.sampled_from(["SAME", "VALID", "EXPLICIT"]))
    if padding == "EXPLICIT":
        p = draw(st.lists(st.integers(0, 2), min_size=4, max_size=4))
        padding = [[0, 0], p[:2], p[2:], [0, 0]]
    return x, w, strides, dilations, padding


def _conv_ok(x, w, strides, dilations, padding):
    (pt, pb), (pl, pr) = _pads(x.shape[1:3], w.shape[:2], strides, dilations, padding)
    return all(x.shape[1 + i] + pads + strides[i] - ((w.shape[i] - 1) * dilations[i] + 1) >= 0
               for i, pads in enumerate((pt + pb, pl + pr)))


def _check_conv(case):
    x, w, strides, dilations, padding = case
    assume(_conv_ok(*case))
    out = nn.conv2d(x, w, strides=list(strides), padding=padding, dilations=list(dilations))
    ref = reference_conv2d(x, w, strides, dilations, padding)
    assert out.shape == ref.shape and out.dtype == x.dtype
    if x.dtype == np.int32:
        np.testing.assert_array_equal(out.numpy(), ref.astype(np.int32))
    else:
        _close(out.numpy(), ref, x.dtype)


@given(conv_case())
def test_conv2d_matches_direct_convolution(case):
    _check_conv(case)


@given(conv_case(groups=True))
def test_grouped_conv2d_matches_direct_convolution(case):
    _check_conv(case)


def test_conv2d_same_padding_puts_the_extra_pixel_at_the_end():
    # in 4, k 4, stride 1: pad_total 3 -> 1 before, 2 after.
    out = nn.conv2d(np.ones((1, 4, 1, 1), np.float32), np.ones((4, 1, 1, 1), np.float32),
                    strides=1, padding="SAME")
    np.testing.assert_array_equal(out.numpy().ravel(), [3, 4, 3, 2])


def test_conv2d_nchw_and_batch_dims_agree_with_nhwc():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 6, 5, 4))
    w = rng.standard_normal((3, 2, 4, 5))
    nhwc = nn.conv2d(x, w, strides=[1, 2, 1, 1], padding="SAME", dilations=[2, 1]).numpy()
    ref = reference_conv2d(x.reshape(6, 6, 5, 4), w, (2, 1), (2, 1), "SAME").reshape(nhwc.shape)
    np.testing.assert_allclose(nhwc, ref, rtol=1e-12)
    nchw = nn.conv2d(np.moveaxis(x, -1, -3), w, strides=[1, 1, 2, 1], padding="SAME",
                     data_format="NCHW", dilations=[1, 1, 2, 1]).numpy()
    np.testing.assert_allclose(np.moveaxis(nchw, -3, -1), nhwc, rtol=1e-12)


def test_conv2d_float16_accumulates_accurately():
    x = np.full((1, 1, 1, 512), 0.1, np.float16)
    w = np.full((1, 1, 512, 1), 0.1, np.float16)
    out = nn.conv2d(x, w, 1, "VALID").numpy()
    assert out.dtype == np.float16
    np.testing.assert_allclose(float(out.ravel()[0]), 512 * 0.1 * 0.1, rtol=2e-3)


def test_conv2d_errors():
    x = np.zeros((1, 4, 4, 3), np.float32)
    w = np.zeros((2, 2, 3, 2), np.float32)
    with pytest.raises(InvalidArgumentError, match=r"Conv2D.*evenly divisible.*3 vs 2"):
        nn.conv2d(x, np.zeros((2, 2, 2, 2), np.float32), 1, "VALID")
    with pytest.raises(InvalidArgumentError, match=r"Conv2D.*at least 4-dimensional"):
        nn.conv2d(x[0], w, 1, "VALID")
    with pytest.raises(InvalidArgumentError, match=r"Conv2D.*filter must be 4-dimensional"):
        nn.conv2d(x, w[0], 1, "VALID")
    with pytest.raises(InvalidArgumentError, match="Computed output size would be negative"):
        nn.conv2d(x, np.zeros((6, 1, 3, 1), np.float32), 1, "VALID")
    with pytest.raises(InvalidArgumentError, match="Conv2D.*strides in the batch and depth"):
        nn.conv2d(x, w, [2, 1, 1, 1], "VALID")
    with pytest.raises(InvalidArgumentError, match="Conv2D.*dilations.*positive"):
        nn.conv2d(x, w, 1, "VALID", dilations=0)
    with pytest.raises(ValueError, match="Conv2D.*strides should be of length 1, 2 or 4"):
        nn.conv2d(x, w, [1, 1, 1], "VALID")
    # TF 2.21 (verified): the padding attr is case-sensitive, an unknown value an
    # InvalidArgumentError.
    for padding in ("same", "valid", "FULL"):
        with pytest.raises(InvalidArgumentError, match="Conv2D.*'SAME', 'VALID'"):
            nn.conv2d(x, w, 1, padding)
    with pytest.raises(ValueError, match="Conv2D.*size 4"):
        nn.conv2d(x, w, 1, [[0, 0], [1, 1]])
    with pytest.raises(InvalidArgumentError, match="Conv2D.*batch or depth"):
        nn.conv2d(x, w, 1, [[1, 0], [0, 0], [0, 0], [0, 0]])
    with pytest.raises(InvalidArgumentError, match="Conv2D.*nonnegative"):
        nn.conv2d(x, w, 1, [[0, 0], [-1, 0], [0, 0], [0, 0]])
    with pytest.raises(NotImplementedError):
        nn.conv2d(x, w, 1, "VALID", data_format="NCHW_VECT_C")
    with pytest.raises(ValueError, match="Conv2D.*data_format"):
        nn.conv2d(x, w, 1, "VALID", data_format="HWNC")
    # TensorFlow 2.21 (verified): the dtype is not in the op's type list.
    with pytest.raises(InvalidArgumentError, match="Conv2D.*int64"):
        nn.conv2d(x.astype(np.int64), w.astype(np.int64), 1, "VALID")
    with pytest.raises(InvalidArgumentError, match="Conv2D.*float64"):
        nn.conv2d(eager.constant(x), eager.constant(w.astype(np.float64)), 1, "VALID")
    with pytest.raises(TypeError, match="Conv2D.*strides"):
        nn.conv2d(x, w, "2", "VALID")
    with pytest.raises(ValueError):
        nn.conv2d(object(), w, 1, "VALID")


def test_conv2d_inference_on_partial_shapes():
    spec = eager.TensorSpec
    attrs = dict(strides=(2, 2), dilations=(1, 1), padding="SAME", explicit_paddings=(),
                 data_format="NHWC")
    out = conv_ops.CONV2D.infer(spec([None, 5, None, 3]), spec([3, 3, 3, 8]), **attrs)
    assert out.shape == [None, 3, None, 8]
    attrs["padding"] = "VALID"
    out = conv_ops.CONV2D.infer(spec([4, 5, 7, 3]), spec(None), **attrs)
    assert out.shape == [4, None, None, None]
    assert conv_ops.CONV2D.infer(spec(None), spec([1, 1, 3, 2]), **attrs).shape.rank is None


# -----------------------------------------------------------------------------------------------
# max_pool2d
# -----------------------------------------------------------------------------------------------

def reference_max_pool(x, ksize, strides, padding):
    n, h, w, c = x.shape
    (pt, pb), (pl, pr) = _pads((h, w), ksize, strides, (1, 1), padding)
    low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)), constant_values=low)
    if x.dtype.kind == "f":  # TensorFlow's CPU kernel: NaN never wins (see the clamp below)
        xp = np.where(np.isnan(xp), low, xp)
    oh = (xp.shape[1] - ksize[0]) // strides[0] + 1
    ow = (xp.shape[2] - ksize[1]) // strides[1] + 1
    out = np.empty((n, max(oh, 0), max(ow, 0), c), x.dtype)
    for i in range(max(oh, 0)):
        for j in range(max(ow, 0)):
            r, q = i * strides[0], j * strides[1]
            out[:, i, j, :] = xp[:, r:r + ksize[0], q:q + ksize[1], :].max(axis=(1, 2))
    if x.dtype.kind == "f":  # each window starts at the lowest finite value, not at -inf
        out = np.maximum(out, np.finfo(x.dtype).min)
    return out


@st.composite
def pool_case(draw):
    dtype = draw(st.sampled_from(FLOAT_DTYPES + INT_DTYPES))
    x = draw(arrays(dtype, (draw(st.integers(0, 2)), draw(st.integers(1, 6)),
                            draw(st.integers(1, 6)), draw(st.integers(0, 3)))))
    ksize = draw(st.tuples(st.integers(1, 3), st.integers(1, 3)))
    strides = draw(st.tuples(st.integers(1, 3), st.integers(1, 3)))
    padding = draw(st.sampled_from(["SAME", "VALID", "EXPLICIT"]))
    if padding == "EXPLICIT":
        p = [draw(st.integers(0, ksize[i // 2])) for i in range(4)]
        padding = [[0, 0], p[:2], p[2:], [0, 0]]
    return x, ksize, strides, padding


@given(pool_case())
def test_max_pool2d_matches_reference(case):
    x, ksize, strides, padding = case
    (pt, pb), (pl, pr) = _pads(x.shape[1:3], ksize, strides, (1, 1), padding)
    assume(x.shape[1] + pt + pb >= ksize[0] and x.shape[2] + pl + pr >= ksize[1])
    out = nn.max_pool2d(x, ksize=list(ksize), strides=list(strides), padding=padding)
    assert out.dtype == x.dtype
    np.testing.assert_array_equal(out.numpy(), reference_max_pool(x, ksize, strides, padding))


def test_max_pool2d_tf_documented_examples():
    x = np.arange(1, 13, dtype=np.float32).reshape(1, 3, 4, 1)
    valid = nn.max_pool2d(x, ksize=(2, 2), strides=(2, 2), padding="VALID")
    np.testing.assert_array_equal(valid.numpy()[0, :, :, 0], [[6, 8]])
    same = nn.max_pool2d(x, ksize=(2, 2), strides=(2, 2), padding="SAME")
    np.testing.assert_array_equal(same.numpy()[0, :, :, 0], [[6, 8], [10, 12]])
    neg = nn.max_pool2d(-x, ksize=2, strides=2, padding="SAME")  # -inf padding never wins
    np.testing.assert_array_equal(neg.numpy()[0, :, :, 0], [[-1, -3], [-9, -11]])
    nchw = nn.max_pool2d(np.moveaxis(x, -1, 1), 2, 2, "SAME", data_format="NCHW")
    np.testing.assert_array_equal(nchw.numpy()[0, 0], [[6, 8], [10, 12]])


#: TensorFlow 2.21's max_pool2d and its gradient, weighted by output position (loss =
#: sum(y * [1, 2, ...])), where NaN and -inf fill windows: (x, ksize, strides, padding, shape,
#: y, dx). The gradient goes to a window's first element unless a later one is greater, so to a
#: NaN that comes first even though the maximum ignores it.
_LOWEST32 = float(np.finfo(np.float32).min)
MAX_POOL_NAN_GOLDENS = [
    ([-np.inf, -np.inf, 1, 2], [1, 2], [1, 2], "VALID", (1, 1, 4, 1), [_LOWEST32, 2.0],
     [1.0, 0.0, 0.0, 2.0]),
    ([np.nan, 1, 3, np.nan], [1, 2], [1, 2], "VALID", (1, 1, 4, 1), [1.0, 3.0],
     [1.0, 0.0, 2.0, 0.0]),
    ([1, np.nan, np.nan, 2], [1, 2], [1, 2], "VALID", (1, 1, 4, 1), [1.0, 2.0],
     [1.0, 0.0, 2.0, 0.0]),
    ([np.nan, np.nan, 0, 0], [1, 2], [1, 2], "VALID", (1, 1, 4, 1), [_LOWEST32, 0.0],
     [1.0, 0.0, 2.0, 0.0]),
    ([np.nan, -np.inf, 2, 3, 2, np.nan, -np.inf, 3, np.nan], [3, 3], [1, 1], "SAME",
     (1, 3, 3, 1), [3.0, 3.0, 2.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0],
     [12.0, 0.0, 3.0, 15.0, 0.0, 0.0, 0.0, 15.0, 0.0]),
    ([-np.inf, -np.inf, -np.inf, -np.inf, np.nan, -np.inf, 1, -np.inf, -np.inf], [3, 3],
     [2, 2], "SAME", (1, 3, 3, 1), [_LOWEST32, _LOWEST32, 1.0, _LOWEST32],
     [1.0, 2.0, 0.0, 0.0, 4.0, 0.0, 3.0, 0.0, 0.0]),
]


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
@pytest.mark.parametrize("golden", MAX_POOL_NAN_GOLDENS, ids=range(len(MAX_POOL_NAN_GOLDENS)))
def test_max_pool2d_with_nan_and_inf_gives_tensorflows_values_and_gradient(golden, traced):
    values, ksize, strides, padding, shape, expected_y, expected_dx = golden

    def pool_and_gradient(x):
        with eager.GradientTape() as tape:
            tape.watch(x)
            y = nn.max_pool2d(x, ksize, strides, padding)
            weights = eager.reshape(eager.range(1, eager.size(y) + 1, dtype=eager.float32), y.shape)
            loss = eager.reduce_sum(y * weights)
        return y, tape.gradient(loss, x)

    run = eager.function(pool_and_gradient) if traced else pool_and_gradient
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y, dx = run(eager.constant(np.array(values, np.float32).reshape(shape)))
    np.testing.assert_array_equal(y.numpy().ravel(), expected_y)
    np.testing.assert_array_equal(dx.numpy().ravel(), expected_dx)


def test_max_pool2d_errors():
    x = np.zeros((1, 4, 4, 2), np.float32)
    with pytest.raises(InvalidArgumentError, match="MaxPool.*4-dimensional"):
        nn.max_pool2d(x[0], 2, 2, "VALID")
    with pytest.raises(UnimplementedError, match="MaxPool.*batch dimension"):
        nn.max_pool2d(x, [2, 2, 2, 1], 1, "VALID")
    with pytest.raises(NotImplementedError, match="MaxPool.*depth"):
        nn.max_pool2d(x, [1, 2, 2, 2], 1, "VALID")
    with pytest.raises(InvalidArgumentError, match="MaxPool.*window size"):
        nn.max_pool2d(x, 2, 2, [[0, 0], [3, 0], [0, 0], [0, 0]])
    with pytest.raises(InvalidArgumentError, match="MaxPool.*positive"):
        nn.max_pool2d(x, 0, 1, "VALID")
    with pytest.raises(InvalidArgumentError, match="Computed output size would be negative"):
        nn.max_pool2d(x, [6, 1], 1, "VALID")
    # TensorFlow 2.21 (verified): the dtype is not in the op's type list.
    with pytest.raises(InvalidArgumentError, match="MaxPool.*bool"):
        nn.max_pool2d(x > 0, 2, 2, "VALID")
    with pytest.raises(InvalidArgumentError, match="MaxPool.*string"):
        nn.max_pool2d("str", 2, 2, "VALID")
    out = conv_ops.MAX_POOL.infer(eager.TensorSpec([None, 7, 5, 3]), ksize=(2, 2), strides=(2, 2),
                                  padding="SAME", explicit_paddings=(), data_format="NHWC")
    assert out.shape == [None, 4, 3, 3]


def test_nn_namespace():
    for name in ("relu", "gelu", "softmax", "log_softmax", "sigmoid_cross_entropy_with_logits",
                 "softmax_cross_entropy_with_logits", "sparse_softmax_cross_entropy_with_logits",
                 "conv2d", "max_pool2d"):
        assert unwrap(getattr(eager.nn, name)) is getattr(nn_ops, name)


# -----------------------------------------------------------------------------------------------
# avg_pool2d
# -----------------------------------------------------------------------------------------------

def reference_avg_pool(x, ksize, strides, padding):
    """Each window's mean over the input elements it covers (TensorFlow's AvgPool: SAME padding
    is not counted)."""
    n, h, w, c = x.shape
    (pt, pb), (pl, pr) = _pads((h, w), ksize, strides, (1, 1), padding)
    oh = (h + pt + pb - ksize[0]) // strides[0] + 1
    ow = (w + pl + pr - ksize[1]) // strides[1] + 1
    out = np.empty((n, oh, ow, c), np.float64)
    for i in range(oh):
        for j in range(ow):
            r, q = i * strides[0] - pt, j * strides[1] - pl
            window = x[:, max(r, 0):r + ksize[0], max(q, 0):q + ksize[1], :]
            out[:, i, j, :] = window.mean(axis=(1, 2))
    return out


@given(st.data())
def test_avg_pool2d_matches_reference(data):
    x = data.draw(arrays(np.float64, (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 6)),
                                      data.draw(st.integers(1, 6)), data.draw(st.integers(1, 3)))))
    ksize = data.draw(st.tuples(st.integers(1, 3), st.integers(1, 3)))
    strides = data.draw(st.tuples(st.integers(1, 3), st.integers(1, 3)))
    padding = data.draw(st.sampled_from(["SAME", "VALID"]))
    assume(padding == "SAME" or (x.shape[1] >= ksize[0] and x.shape[2] >= ksize[1]))
    out = nn.avg_pool2d(x, ksize=list(ksize), strides=list(strides), padding=padding)
    np.testing.assert_allclose(out.numpy(), reference_avg_pool(x, ksize, strides, padding),
                               rtol=1e-12, atol=1e-12)
    nchw = nn.avg_pool2d(np.moveaxis(x, -1, 1), ksize=list(ksize), strides=list(strides),
                         padding=padding, data_format="NCHW")
    np.testing.assert_allclose(np.moveaxis(nchw.numpy(), 1, -1), out.numpy(), rtol=1e-12)


def test_avg_pool2d_second_order_and_errors():
    check_second_order(lambda x: nn.avg_pool2d(x * x, 3, 2, "SAME"),
                       [np.random.default_rng(4).normal(size=(1, 5, 4, 2))])
    assert nn.avg_pool2d(np.ones((1, 4, 4, 1), np.float32), 2, 2, "VALID").dtype == eager.float32
    with pytest.raises(InvalidArgumentError, match="explicit paddings are not supported"):
        nn.avg_pool2d(np.ones((1, 4, 4, 1)), 2, 2, [[0, 0], [1, 1], [1, 1], [0, 0]])
    with pytest.raises(InvalidArgumentError):
        nn.avg_pool2d(np.ones((1, 4, 4, 1), np.int32), 2, 2, "VALID")
