"""`eager.io` ≈ `tf.io`: files and bytes. The ops (`read_file`, `write_file`,
`matching_files`, `decode_raw`, `serialize_tensor`, `parse_tensor`) are defined in
`eager.ops.io_ops`; `gfile` is Python's file system with TensorFlow's names and errors;
`TFRecordWriter` writes TensorFlow's TFRecord files."""

from ..ops.io_ops import (decode_raw, matching_files, parse_tensor, read_file,
                          serialize_tensor, write_file)
from ..ops.image_codec_ops import decode_image, decode_png, encode_png
from ..ops.parsing_ops import FixedLenFeature, decode_csv, parse_example, parse_single_example
from ..ops.parsing_var_len import RaggedFeature, SparseFeature, VarLenFeature
from . import gfile
from .tf_record import TFRecordCompressionType, TFRecordOptions, TFRecordWriter

__all__ = ["read_file", "write_file", "matching_files", "decode_raw", "serialize_tensor",
           "parse_tensor", "gfile", "TFRecordWriter", "TFRecordOptions",
           "TFRecordCompressionType", "decode_png", "encode_png", "decode_image",
           "FixedLenFeature", "VarLenFeature", "RaggedFeature", "SparseFeature",
           "parse_example", "parse_single_example", "decode_csv"]
