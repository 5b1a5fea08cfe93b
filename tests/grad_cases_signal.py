"""Gradient cases for the Fourier transforms (see test_gradients.py): complex-to-complex in 1 to
3 axes, and real-to-complex and back in 1 and 2 axes, with `fft_length` cropping and padding
(even and odd lengths, so the Nyquist bin's weight is covered)."""

import eager as tf
from gradcase import GradCase, crand, rand

C = GradCase
S = tf.signal

CASES = {
    "FFT": [C(S.fft, lambda: [crand(2, 5)])],
    "IFFT": [C(S.ifft, lambda: [crand(3, 4)])],
    "FFT2D": [C(S.fft2d, lambda: [crand(2, 3, 4)])],
    "IFFT2D": [C(S.ifft2d, lambda: [crand(3, 3)])],
    "FFT3D": [C(S.fft3d, lambda: [crand(2, 2, 3)])],
    "IFFT3D": [C(S.ifft3d, lambda: [crand(2, 3, 2)])],
    "RFFT": [C(S.rfft, lambda: [rand(2, 6)]),
             C(S.rfft, lambda: [rand(7)]),
             C(lambda x: S.rfft(x, fft_length=[4]), lambda: [rand(2, 7)]),
             C(lambda x: S.rfft(x, fft_length=[9]), lambda: [rand(5)])],
    "IRFFT": [C(S.irfft, lambda: [crand(2, 4)]),
              C(lambda x: S.irfft(x, fft_length=[7]), lambda: [crand(4)]),
              C(lambda x: S.irfft(x, fft_length=[4]), lambda: [crand(5)]),
              C(lambda x: S.irfft(x, fft_length=[12]), lambda: [crand(3)])],
    "RFFT2D": [C(S.rfft2d, lambda: [rand(3, 4)]),
               C(lambda x: S.rfft2d(x, fft_length=[2, 5]), lambda: [rand(2, 3, 4)])],
    "IRFFT2D": [C(S.irfft2d, lambda: [crand(3, 3)]),
                C(lambda x: S.irfft2d(x, fft_length=[4, 5]), lambda: [crand(3, 2)])],
}
