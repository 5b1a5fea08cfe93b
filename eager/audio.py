"""`eager.audio` ≈ `tf.audio`: WAV decoding and encoding (defined in `eager.ops.audio_ops`)."""

from .ops.audio_ops import decode_wav, encode_wav

__all__ = ["decode_wav", "encode_wav"]
