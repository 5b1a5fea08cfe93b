"""`eager.audio` ≈ `tf.audio`: WAV files as TensorFlow reads and writes them (RIFF/WAVE,
uncompressed 16-bit PCM, little-endian). Host kernels on string tensors, so they run in traced
functions and `Dataset.map`.

Samples are float32 in [-1, 1]: written as `round(x * 32768)` clipped to int16's range (so 1.0
becomes 32767 and -1.0 -32768), read back as `int16 / 32768`.
"""

from __future__ import annotations

import struct

import numpy as np

from ..base import dtypes as _dt
from ..base import ieee
from ..core.argument_conversion import as_tensor
from ..core.dispatch import execute
from ..core.registry import op_error, register_op
from ..core.specs import TensorSpec
from .io_ops import _string_input

__all__ = ["decode_wav", "encode_wav"]

_HOST = frozenset({"CPU"})


# -- DecodeWav -----------------------------------------------------------------------------------
class _Bytes:
    """A cursor over the file's bytes, failing as TensorFlow's WAV reader fails."""

    __slots__ = ("data", "at")

    def __init__(self, data):
        self.data = data
        self.at = 0

    def take(self, n):
        if self.at + n > len(self.data):
            raise op_error("DecodeWav", "Data too short when trying to read string")
        out = self.data[self.at:self.at + n]
        self.at += n
        return out

    def tag(self, expected):
        found = self.take(4)
        if found != expected:
            raise op_error("DecodeWav", f"Header mismatch: Expected {expected.decode()} but "
                                        f"found {found.decode('latin-1')}")

    def u32(self):
        return struct.unpack("<I", self.take(4))[0]

    def u16(self):
        return struct.unpack("<H", self.take(2))[0]


def read_wav(data: bytes):
    """(int16 samples [frames, channels], sample rate) of a 16-bit PCM WAV file."""
    cursor = _Bytes(data)
    cursor.tag(b"RIFF")
    cursor.u32()
    cursor.tag(b"WAVE")
    cursor.tag(b"fmt ")
    fmt_size = cursor.u32()
    if fmt_size not in (16, 18):
        raise op_error("DecodeWav", f"Bad format chunk size for WAV: Expected 16 or 18, but "
                                    f"got {fmt_size}")
    audio_format = cursor.u16()
    if audio_format != 1:
        raise op_error("DecodeWav", f"Bad audio format for WAV: Expected 1 (PCM), but got "
                                    f"{audio_format}")
    channels = cursor.u16()
    if channels < 1:
        raise op_error("DecodeWav", "Bad number of channels for WAV: Expected at least 1, but "
                                    "got 0")
    sample_rate = cursor.u32()
    cursor.u32()  # bytes per second
    cursor.u16()  # block alignment
    bits = cursor.u16()
    if bits != 16:
        raise op_error("DecodeWav", f"Can only read 16-bit WAV files, but received {bits}")
    if fmt_size == 18:
        cursor.take(2)
    while True:  # skip chunks (LIST, fact, ...) up to the samples
        kind = cursor.take(4)
        size = cursor.u32()
        if kind == b"data":
            break
        cursor.take(size + (size & 1))
    frames = size // (2 * channels)
    samples = np.frombuffer(cursor.take(frames * 2 * channels), "<i2")
    return samples.reshape(frames, channels), sample_rate


def _decode_wav_kernel(xp, contents, desired_channels, desired_samples):
    samples, rate = read_wav(bytes(np.asarray(contents, dtype=object)[()]))
    audio = samples.astype(np.float32) / np.float32(32768.0)
    if desired_channels > 0 and desired_channels != audio.shape[1]:
        if desired_channels < audio.shape[1]:
            audio = audio[:, :desired_channels]
        else:  # more channels than the file has: repeat its last one, as TensorFlow does
            extra = np.repeat(audio[:, -1:], desired_channels - audio.shape[1], axis=1)
            audio = np.concatenate([audio, extra], axis=1)
    if desired_samples >= 0:
        if desired_samples <= audio.shape[0]:
            audio = audio[:desired_samples]
        else:
            audio = np.concatenate(
                [audio, np.zeros((desired_samples - audio.shape[0], audio.shape[1]),
                                 np.float32)])
    return np.ascontiguousarray(audio), np.array(rate, np.int32)


def _decode_wav_infer(contents, desired_channels, desired_samples):
    if contents.shape.rank not in (None, 0):
        raise op_error("DecodeWav", f"contents must be scalar, got shape {list(contents.shape)}",
                       [contents])
    shape = [desired_samples if desired_samples >= 0 else None,
             desired_channels if desired_channels > 0 else None]
    return TensorSpec(shape, _dt.float32), TensorSpec([], _dt.int32)


DECODE_WAV = register_op("DecodeWav", _decode_wav_kernel, _decode_wav_infer, num_outputs=2,
                         dtypes=frozenset({_dt.string}), differentiable=False,
                         device_types=_HOST,
                         doc="float32 samples and the sample rate of a 16-bit PCM WAV file.")


def decode_wav(contents, desired_channels=-1, desired_samples=-1, name=None):
    """≈ `tf.audio.decode_wav`: (audio [samples, channels] float32 in [-1, 1), sample_rate
    int32) of a 16-bit PCM WAV file. `desired_channels` drops channels or repeats the last;
    `desired_samples` truncates or pads with zeros (-1: the file's)."""
    contents = _string_input("DecodeWav", contents)
    return execute(DECODE_WAV, (contents,), {"desired_channels": int(desired_channels),
                                             "desired_samples": int(desired_samples)})


# -- EncodeWav -----------------------------------------------------------------------------------
def write_wav(audio, sample_rate: int) -> bytes:
    """The 16-bit PCM WAV file of float samples [frames, channels] in [-1, 1]."""
    frames, channels = audio.shape
    scaled = np.round(audio.astype(np.float32) * np.float32(32768.0))
    pcm = np.clip(np.where(np.isnan(scaled), 0, scaled), -32768, 32767)  # NaN: 0
    data = pcm.astype("<i2").tobytes()
    fmt = struct.pack("<HHIIHH", 1, channels, sample_rate, sample_rate * channels * 2,
                      channels * 2, 16)
    return (b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVE" + b"fmt "
            + struct.pack("<I", 16) + fmt + b"data" + struct.pack("<I", len(data)) + data)


def _encode_wav_kernel(xp, audio, sample_rate):
    rate = int(np.asarray(sample_rate))
    if not 0 < rate < 2 ** 32:
        raise op_error("EncodeWav", f"sample_rate must be in (0, 2^32), got: {rate % 2 ** 64}")
    out = np.empty((), dtype=object)
    out[()] = ieee.quietly(write_wav, np.asarray(audio), rate)
    return out


def _encode_wav_infer(audio, sample_rate):
    if audio.shape.rank not in (None, 2):
        raise op_error("EncodeWav", f"audio must be 2-dimensional{list(audio.shape)}", [audio])
    if sample_rate.shape.rank not in (None, 0):
        raise op_error("EncodeWav", f"Input sample_rate should be a scalar tensor, got "
                                    f"{sample_rate.shape} instead.", [sample_rate])
    return TensorSpec([], _dt.string)


ENCODE_WAV = register_op("EncodeWav", _encode_wav_kernel, _encode_wav_infer,
                         dtypes=frozenset({_dt.float32, _dt.int32}), differentiable=False,
                         device_types=_HOST,
                         doc="The 16-bit PCM WAV file of float32 samples.")


def encode_wav(audio, sample_rate, name=None):
    """≈ `tf.audio.encode_wav`: a scalar string holding the WAV file (16-bit PCM) of float32
    `audio` [samples, channels] at `sample_rate` (an int32 scalar)."""
    audio = as_tensor(audio)
    if audio.dtype is not _dt.float32:
        raise op_error("EncodeWav", f"cannot compute EncodeWav as input #0(zero-based) was "
                                    f"expected to be a float tensor but is a {audio.dtype.name} "
                                    f"tensor", [audio])
    return execute(ENCODE_WAV, (audio, as_tensor(sample_rate, _dt.int32)))
