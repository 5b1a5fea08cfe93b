"""eager.audio: WAV files as TensorFlow 2.21 writes and reads them (goldens recorded there)."""

import numpy as np
import pytest

import eager

SAMPLES = [[-1.0, 0.25], [-0.5, 1.0], [0.0, 1.5], [0.5, -2.0], [0.3, 1e-5]]
# tf.audio.encode_wav(SAMPLES, 16000)
TF_WAV = (b'RIFF8\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x02\x00\x80>\x00\x00\x00\xfa\x00'
          b'\x00\x04\x00\x10\x00data\x14\x00\x00\x00\x00\x80\x00 \x00\xc0\xff\x7f\x00\x00\xff'
          b'\x7f\x00@\x00\x80f&\x00\x00')
# tf.audio.decode_wav(TF_WAV)
TF_DECODED = [[-1.0, 0.25], [-0.5, 0.999969482421875], [0.0, 0.999969482421875], [0.5, -1.0],
              [0.29998779296875, 0.0]]


def test_encode_wav_is_tensorflows():
    out = eager.audio.encode_wav(eager.constant(SAMPLES), 16000)
    assert out.dtype == eager.string and out.shape == ()
    assert out.numpy() == TF_WAV
    # tf.audio.encode_wav(tf.zeros([0, 2]), 44100)
    assert eager.audio.encode_wav(eager.zeros([0, 2]), 44100).numpy() == (
        b'RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x02\x00D\xac\x00\x00\x10\xb1\x02'
        b'\x00\x04\x00\x10\x00data\x00\x00\x00\x00')


def test_decode_wav_is_tensorflows():
    audio, rate = eager.audio.decode_wav(TF_WAV)
    assert audio.dtype == eager.float32 and rate.dtype == eager.int32
    assert audio.numpy().tolist() == TF_DECODED and int(rate) == 16000
    cases = {  # (desired_channels, desired_samples): TensorFlow's result
        (1, -1): [[-1.0], [-0.5], [0.0], [0.5], [0.29998779296875]],
        (3, -1): [[a, b, b] for a, b in TF_DECODED],
        (-1, 2): TF_DECODED[:2],
        (-1, 7): TF_DECODED + [[0.0, 0.0], [0.0, 0.0]],
        (1, 3): [[-1.0], [-0.5], [0.0]],
    }
    for (channels, samples), expected in cases.items():
        audio, _ = eager.audio.decode_wav(TF_WAV, desired_channels=channels,
                                          desired_samples=samples)
        assert audio.numpy().tolist() == expected, (channels, samples)


def test_wav_round_trips_in_a_function():
    f = eager.function(lambda x: eager.audio.decode_wav(eager.audio.encode_wav(x, 8000))[0])
    x = np.linspace(-1, 1, 10, dtype=np.float32).reshape(5, 2)
    np.testing.assert_allclose(f(eager.constant(x)).numpy(), x, atol=1 / 32768)


def test_errors_are_tensorflows():
    for bad in (b"", b"RIFF", TF_WAV[:30]):
        with pytest.raises(eager.errors.InvalidArgumentError,
                           match="Data too short when trying to read string"):
            eager.audio.decode_wav(bad)
    with pytest.raises(eager.errors.InvalidArgumentError,
                       match="Header mismatch: Expected RIFF but found abcd"):
        eager.audio.decode_wav(b"abcdefghijklmnopqrstuvwxyzabcdefghijklmnop")
    with pytest.raises(eager.errors.InvalidArgumentError, match=r"audio must be 2-dimensional"):
        eager.audio.encode_wav(eager.constant([1.0, 2.0]), 16000)
    with pytest.raises(eager.errors.InvalidArgumentError,
                       match="expected to be a float tensor but is a int32 tensor"):
        eager.audio.encode_wav(eager.constant([[1, 2]]), 16000)
    with pytest.raises(eager.errors.InvalidArgumentError,
                       match=r"sample_rate must be in \(0, 2\^32\), got: 18446744073709551615"):
        eager.audio.encode_wav(eager.constant([[0.5]]), -1)
