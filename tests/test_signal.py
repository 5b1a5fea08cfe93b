"""eager.signal against numpy's FFTs and TensorFlow 2.21's recorded values, dtypes and errors
(gradients are in grad_cases_signal.py, checked by finite differences)."""

import numpy as np
import pytest

import eager as tf

S = tf.signal
RNG = np.random.default_rng(0)


def crand(*shape, dtype=np.complex128):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


@pytest.mark.parametrize("dtype,tol", [(np.complex64, 1e-5), (np.complex128, 1e-12)])
@pytest.mark.parametrize("name,axes", [("fft", 1), ("ifft", 1), ("fft2d", 2), ("ifft2d", 2),
                                       ("fft3d", 3), ("ifft3d", 3)])
def test_complex_transforms_match_numpy(name, axes, dtype, tol):
    x = crand(2, 3, 4, 5, dtype=dtype)
    ref = getattr(np.fft, "ifftn" if name.startswith("i") else "fftn")(
        x.astype(np.complex128), axes=tuple(range(-axes, 0)))
    out = getattr(S, name)(x)
    assert out.dtype == tf.as_dtype(dtype) and out.shape == x.shape
    np.testing.assert_allclose(out.numpy(), ref, rtol=tol, atol=tol * 10)


@pytest.mark.parametrize("dtype,cdtype", [(np.float32, tf.complex64), (np.float64, tf.complex128)])
@pytest.mark.parametrize("n,length", [(6, None), (7, None), (6, 4), (5, 9)])
def test_rfft_and_irfft_match_numpy(dtype, cdtype, n, length):
    x = RNG.standard_normal((3, n)).astype(dtype)
    y = S.rfft(x, fft_length=None if length is None else [length])
    assert y.dtype == cdtype
    np.testing.assert_allclose(y.numpy(), np.fft.rfft(x.astype(np.float64), n=length),
                               rtol=1e-5, atol=1e-5)
    back = S.irfft(y, fft_length=None if length is None else [length])
    assert back.dtype == tf.as_dtype(dtype)
    np.testing.assert_allclose(back.numpy(), np.fft.irfft(y.numpy().astype(np.complex128),
                                                          n=length), rtol=1e-5, atol=1e-5)


def test_rfft2d_and_irfft2d_match_numpy():
    x = RNG.standard_normal((2, 4, 6)).astype(np.float32)
    y = S.rfft2d(x)
    assert y.shape == (2, 4, 4) and y.dtype == tf.complex64
    np.testing.assert_allclose(y.numpy(), np.fft.rfft2(x), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(S.irfft2d(y).numpy(), x, rtol=1e-5, atol=1e-5)
    z = S.rfft2d(x, fft_length=[3, 8])
    np.testing.assert_allclose(z.numpy(), np.fft.rfft2(x, s=(3, 8)), rtol=1e-5, atol=1e-4)


# TensorFlow 2.21's values
def test_tf_goldens_for_real_transforms():
    x = tf.constant(np.arange(6, dtype=np.float32))
    np.testing.assert_allclose(S.rfft(x).numpy(),
                               [15, -3 + 5.196152j, -3 + 1.7320508j, -3], rtol=1e-6)
    np.testing.assert_allclose(S.rfft(x, fft_length=[4]).numpy(), [6, -2 + 2j, -2], atol=1e-6)
    np.testing.assert_allclose(S.irfft(S.rfft(x), fft_length=[3]).numpy(),
                               [3, 3.0000005, 9], rtol=1e-6)
    np.testing.assert_allclose(
        S.irfft(S.rfft(x), fft_length=[10]).numpy(),
        [-0.3, 0.07428982, 1.0934286, 0.9006581, 1.3332013, 2.1000001, 1.8959786, 2.4701622,
         3.477392, 1.9548897], rtol=1e-5, atol=1e-6)
    y = tf.constant([[1 + 2j, 3 - 1j, 2 + 2j], [0.5j, -1, 2 + 1j]], tf.complex64)
    np.testing.assert_allclose(S.irfft2d(y).numpy(), [[1.125, -0.125, 0.125, -0.625],
                                                      [1.125, 0.375, -0.875, -0.125]])
    np.testing.assert_allclose(
        S.irfft2d(y, fft_length=[3, 5]).numpy(),
        [[0.86666673, -0.3907111, 0.4745319, -0.44305614, -0.17409796],
         [0.5223291, 0.15088126, 0.22186935, -0.89031345, 0.18422954],
         [0.8110043, 0.07363108, -0.22404864, -0.18619661, 0.00328082]], rtol=1e-5, atol=1e-6)
    assert S.rfft(tf.zeros([0])).shape == (0,)
    assert S.irfft(tf.zeros([0], tf.complex64)).shape == (0,)
    assert S.fft(tf.zeros([2, 0], tf.complex64)).shape == (2, 0)


def test_tf_goldens_for_gradients():
    y = tf.constant([[1 + 2j, 3 - 1j, 2 + 2j], [0.5j, -1, 2 + 1j]], tf.complex64)
    xx = tf.constant([0.3, -1., 2., 0.5, 1.5])
    with tf.GradientTape(persistent=True) as g:
        g.watch([xx, y])
        r = S.rfft(xx, fft_length=[6])
        l1 = tf.reduce_sum(tf.math.real(r) * tf.constant([1., 2, 3, 4])
                           + tf.math.imag(r) * tf.constant([.5, -1, 2, 1]))
        l2 = tf.reduce_sum(S.irfft2d(y, fft_length=[2, 4]) * tf.reshape(tf.range(8.), [2, 4]))
        l3 = tf.reduce_sum(S.irfft(y) * tf.constant([1., -2, 3, .5]))
        f = S.fft(y)
        l4 = tf.reduce_sum(tf.math.real(f) * tf.constant([1., -2, 3]) + tf.math.imag(f))
    np.testing.assert_allclose(g.gradient(l1, xx).numpy(),
                               [10., -4.3660254, 5.098076, -2., -0.09807611], rtol=1e-5)
    np.testing.assert_allclose(g.gradient(l2, y).numpy(),
                               [[3.5, -1 + 1j, -0.5], [-2, 0, 0]], atol=1e-6)
    np.testing.assert_allclose(g.gradient(l3, y).numpy(),
                               [[0.625, -1 + 1.25j, 1.375]] * 2, atol=1e-6)
    np.testing.assert_allclose(g.gradient(l4, y).numpy(),
                               [[2 + 3j, 0.5 - 4.330127j, 0.5 + 4.330127j]] * 2, rtol=1e-5)


def test_transform_errors_are_tfs():
    x = tf.constant(np.arange(6, dtype=np.float32))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[Op:FFT\]"):
        S.fft(x)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Input must have rank of at least 1 but got: \[\]"):
        S.fft(tf.constant(1 + 2j, tf.complex64))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Input must have rank of at least 2 but got: \[3\]"):
        S.fft2d(tf.zeros([3], tf.complex64))
    with pytest.raises(ValueError, match="RFFT requires tf.float32 or tf.float64 inputs, got"):
        S.rfft(tf.cast(x, tf.int32))
    with pytest.raises(ValueError, match="RFFT requires tf.float32 or tf.float64 inputs"):
        S.rfft2d(tf.zeros([2, 2], tf.complex64))
    with pytest.raises(ValueError, match="IRFFT requires tf.complex64 or tf.complex128 inputs"):
        S.irfft2d(tf.zeros([2, 2]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"fft_length must have shape \[1\]"):
        S.rfft(x, fft_length=[4, 4])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[Op:RFFT\]"):
        S.rfft(x, fft_length=[-1])


def test_transforms_trace_and_keep_shapes():
    @tf.function
    def f(x):
        return S.irfft(S.rfft(x, fft_length=[8]), fft_length=[8])

    x = RNG.standard_normal((3, 8)).astype(np.float32)
    np.testing.assert_allclose(f(x).numpy(), x, rtol=1e-5, atol=1e-5)
    spec = f.get_concrete_function(tf.TensorSpec([None, 8], tf.float32)).outputs[0]
    assert tuple(spec.shape) == (None, 8)


def test_windows_are_tfs():
    np.testing.assert_allclose(S.hann_window(6).numpy(),
                               [0, 0.25, 0.75, 1, 0.74999994, 0.24999982], atol=1e-6)
    np.testing.assert_allclose(S.hann_window(6, periodic=False).numpy(),
                               [0, 0.34549153, 0.90450853, 0.9045085, 0.34549144, 0], atol=1e-6)
    # an odd length is the same periodic or not (TF's n)
    np.testing.assert_allclose(S.hann_window(5).numpy(), [0, 0.5, 1, 0.5, 0], atol=1e-7)
    np.testing.assert_allclose(S.hamming_window(7).numpy(),
                               [0.08, 0.31, 0.77, 1, 0.77, 0.31, 0.08], atol=1e-6)
    w = S.hamming_window(4, dtype=tf.float64)
    assert w.dtype == tf.float64
    np.testing.assert_allclose(w.numpy(), [0.08, 0.54, 1, 0.54])
    assert S.hann_window(1).numpy().tolist() == [1.0]
    assert S.hann_window(0).shape == (0,)
    with pytest.raises(ValueError, match="dtype must be a floating point type"):
        S.hann_window(4, dtype=tf.int32)


def test_frame_and_overlap_and_add_are_tfs():
    np.testing.assert_array_equal(S.frame(tf.range(10), 4, 3).numpy(),
                                  [[0, 1, 2, 3], [3, 4, 5, 6], [6, 7, 8, 9]])
    np.testing.assert_array_equal(
        S.frame(tf.range(10), 4, 3, pad_end=True, pad_value=-1).numpy(),
        [[0, 1, 2, 3], [3, 4, 5, 6], [6, 7, 8, 9], [9, -1, -1, -1]])
    assert S.frame(tf.reshape(tf.range(20), [2, 10]), 4, 3, axis=-1).shape == (2, 3, 4)
    assert S.frame(tf.reshape(tf.range(20), [10, 2]), 4, 3, axis=0).shape == (3, 4, 2)
    assert S.frame(tf.range(3), 4, 3).shape == (0, 4)
    np.testing.assert_array_equal(
        S.overlap_and_add(tf.reshape(tf.range(12.), [3, 4]), 2).numpy(),
        [0, 1, 6, 8, 14, 16, 10, 11])
    np.testing.assert_array_equal(
        S.overlap_and_add(tf.reshape(tf.range(12.), [3, 4]), 5).numpy(),
        [0, 1, 2, 3, 0, 4, 5, 6, 7, 0, 8, 9, 10, 11])
    batch = S.overlap_and_add(tf.reshape(tf.range(24.), [2, 3, 4]), 2)
    assert batch.shape == (2, 8)
    with pytest.raises(ValueError, match=r"Shape \(\) must have rank at least 1"):
        S.frame(5, 2, 1)
    with pytest.raises(ValueError, match=r"Shape \(3,\) must have rank at least 2"):
        S.overlap_and_add(tf.range(3.), 1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="frame_step"):
        S.frame(tf.range(10), 4, 0)


SIGNAL = np.sin(np.arange(20) * 0.7).astype(np.float32)


def test_stft_and_inverse_stft_are_tfs():
    s = S.stft(SIGNAL, 8, 4)
    assert s.shape == (4, 5) and s.dtype == tf.complex64
    np.testing.assert_allclose(
        s.numpy()[0], [0.77977496, -0.67928994 - 1.8296692j, 0.27805117 + 0.7979872j,
                       0.00931364 + 0.02735633j, 0.00407529], atol=1e-6)
    np.testing.assert_allclose(
        s.numpy()[3], [-2.279299, 1.9855797 + 0.39420813j, -0.8127497 - 0.17192906j,
                       -0.0272243 - 0.00589402j, -0.01191258], atol=1e-6)
    assert S.stft(SIGNAL, 6, 3, fft_length=8, pad_end=True).shape == (7, 5)
    np.testing.assert_allclose(
        S.inverse_stft(s, 8, 4).numpy(),
        [0., 0.01381629, 0.24636245, 0.62889403, 0.33498815, -0.2630874, -0.43578792,
         -0.7368393, -0.63126665, 0.01261041, 0.3284933, 0.74112606, 0.8545989, 0.23932375,
         -0.18323958, -0.6597718, -0.9791777, -0.45034584, 0.00840575, 0.01435998], atol=1e-6)
    exact = S.inverse_stft(s, 8, 4, window_fn=S.inverse_stft_window_fn(4)).numpy()
    np.testing.assert_allclose(exact[4:16], SIGNAL[4:16], atol=1e-5)  # where frames overlap
    np.testing.assert_allclose(
        S.inverse_stft_window_fn(3)(8, tf.float32).numpy(),
        [0., 0.14042343, 0.5109583, 0.8722604, 0.958871, 0.8722604, 0.5109583, 0.14042327],
        atol=1e-6)


def test_stft_gradient_matches_finite_differences():
    x = tf.constant(SIGNAL.astype(np.float64))
    w = RNG.standard_normal((4, 5))

    def loss(v):
        return tf.reduce_sum(tf.abs(S.stft(v, 8, 4)) * w)

    with tf.GradientTape() as g:
        g.watch(x)
        y = loss(x)
    grad = g.gradient(y, x).numpy()
    eps = 1e-6
    for i in (0, 5, 13, 19):
        d = np.zeros(20)
        d[i] = eps
        num = (loss(x + d).numpy() - loss(x - d).numpy()) / (2 * eps)
        assert abs(num - grad[i]) < 1e-5


def test_mel_matrix_and_mfccs_are_tfs():
    np.testing.assert_allclose(
        S.linear_to_mel_weight_matrix(4, 9, 1000, 20., 400.).numpy(),
        [[0, 0, 0, 0], [0.6766084, 0, 0, 0], [0.3939644, 0.6060356, 0, 0],
         [0, 0.5324421, 0.46755788, 0], [0, 0, 0.72957164, 0.2704284], [0, 0, 0, 0.9778775],
         [0, 0, 0, 0.27122128], [0, 0, 0, 0], [0, 0, 0, 0]], atol=1e-5)
    assert S.linear_to_mel_weight_matrix().shape == (129, 20)
    for args, message in [((0,), "num_mel_bins must be positive. Got: 0"),
                          ((4, 9, 1000, -1., 400.), "lower_edge_hertz must be non-negative"),
                          ((4, 9, 1000, 500., 400.), "lower_edge_hertz 500.0 >= upper_edge_hertz"),
                          ((4, 9, 1000, 20., 600.), "must not be larger than the Nyquist")]:
        with pytest.raises(ValueError, match=message):
            S.linear_to_mel_weight_matrix(*args)
    x = tf.reshape(tf.range(10.), [2, 5])
    np.testing.assert_allclose(
        S.mfccs_from_log_mel_spectrograms(x).numpy(),
        [[6.3245554, -3.1494997, 0, -0.28399032, 0], [22.135944, -3.1495001, 0, -0.28399071, 0]],
        atol=2e-6)
    np.testing.assert_allclose(
        S.dct(x, norm="ortho").numpy(),
        [[4.472136, -3.1494997, 0, -0.28399032, 0], [15.652475, -3.1495001, 0, -0.28399071, 0]],
        atol=2e-6)
    np.testing.assert_allclose(S.dct(x).numpy()[:, 0], [20, 70], rtol=1e-6)
