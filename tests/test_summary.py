"""eager.summary: TensorBoard event files, compared byte for byte with TensorFlow 2.21's.

The goldens are the events TensorFlow wrote (`tf.summary.*` with TensorBoard 2.21 installed,
read back with `tf.compat.v1.train.summary_iterator`) less their first 9 bytes, the wall time
(field 1, a double); eager's events are compared the same way. TensorBoard's own reader
(`event_accumulator`) read eager's files back when these were recorded, with the same tags,
steps, dtypes, shapes and plugin names.
"""

import glob
import os
import socket
import zlib

import numpy as np
import pytest

import eager
from eager.base import event_proto, record_framing, tensor_proto
from eager.ops import png

# TensorFlow's events (wall time cut off): the file-version event, then one per summary.
TF_VERSION_EVENT = b'\x1a\rbrain.Event:2R$\n"tensorflow.core.util.events_writer'
TF_EVENTS = {
    "loss": (b'\x10\x03*!\n\x1f\n\x04lossB\n\x08\x01\x12\x00"\x04\x00\x00\x00?J\x0b\n\t\n'
             b'\x07scalars'),
    "i": b'\x10\x04*\x1e\n\x1c\n\x01iB\n\x08\x01\x12\x00"\x04\x00\x00\xe0@J\x0b\n\t\n\x07scalars',
    "h1": (b'\x10\x03*n\nl\n\x02h1BV\x08\x02\x12\x08\x12\x02\x08\x03\x12\x02\x08\x03"H'
           + np.array([[3, 3, 0], [3, 3, 0], [3, 3, 2]], "<f8").tobytes()
           + b'J\x0e\n\x0c\n\nhistograms'),
    "t": b'\x10\x03*\x1c\n\x1a\n\x01tB\x0b\x08\x07\x12\x00B\x05helloJ\x08\n\x06\n\x04text',
    "a": (b'\x10\x03*Z\nX\n\x01aBD\x08\x07\x12\x08\x12\x02\x08\x01\x12\x02\x08\x02B4RIFF,\x00'
          b'\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00@\x1f\x00\x00\x80>\x00\x00\x02\x00'
          b'\x10\x00data\x08\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00B\x00J\r\n\x0b\n\x05'
          b'audio\x12\x02\x10\x0b'),
    "raw": (b'\x10\x03*#\n!\n\x03rawB\x1a\x08\t\x12\x04\x12\x02\x08\x02"\x10\x01\x00\x00\x00'
            b'\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00'),
}
# The 30-bucket histograms (765 and 766 bytes): their CRC-32 and length.
TF_EVENT_CRCS = {"h": (52254437, 765), "he": (3700725686, 766)}
# The image event up to its PNG (TF's libpng compresses differently; pixels compared below).
TF_IMAGE_HEAD = b'\x10\x03*n\nl\n\x03imgBY\x08\x07\x12\x04\x12\x02\x08\x03B\x013B\x012BI'
TF_IMAGE_PIXELS = [[0, 21, 42], [63, 85, 106]]


def _records(logdir):
    (path,) = glob.glob(os.path.join(logdir, "events.out.tfevents.*"))
    with open(path, "rb") as f:
        reader = record_framing.RecordReader(f)
        out = []
        while (record := reader.next_record()) is not None:
            out.append(record)
    return path, out


def _write_tf_script(logdir):
    writer = eager.summary.create_file_writer(logdir)
    results = []
    with writer.as_default(step=3):
        results.append(eager.summary.scalar("loss", 0.5))
        results.append(eager.summary.scalar("i", 7, step=4))
        eager.summary.histogram("h", [1.0, 2.0, 2.5, 10.0])
        eager.summary.histogram("h1", [3.0, 3.0], buckets=3)
        eager.summary.histogram("he", eager.zeros([0]))
        eager.summary.image("img", np.arange(12, dtype=np.float32).reshape(2, 2, 3, 1) / 12.0,
                            max_outputs=1)
        eager.summary.text("t", "hello")
        eager.summary.audio("a", np.zeros([1, 4, 1], np.float32), 8000)
        eager.summary.write("raw", eager.constant([1, 2], eager.int64))
    writer.close()
    results.append(eager.summary.scalar("x", 1.0, step=1))  # no default writer
    return results


def test_events_are_tensorflows_bytes(tmp_path):
    results = _write_tf_script(str(tmp_path))
    assert [bool(r.numpy()) for r in results] == [True, True, False]
    path, records = _records(str(tmp_path))
    name = os.path.basename(path).split(".")
    assert name[:3] == ["events", "out", "tfevents"] and name[-1] == "v2"
    assert f".{socket.gethostname()}.{os.getpid()}." in os.path.basename(path)
    assert all(r[:1] == b"\t" for r in records)  # every event starts with its wall time
    body = [r[9:] for r in records]
    assert body[0] == TF_VERSION_EVENT
    events = dict(zip(["loss", "i", "h", "h1", "he", "img", "t", "a", "raw"], body[1:]))
    assert len(body) == 10
    for tag, golden in TF_EVENTS.items():
        assert events[tag] == golden, tag
    for tag, (crc, size) in TF_EVENT_CRCS.items():
        assert (zlib.crc32(events[tag]), len(events[tag])) == (crc, size), tag
    image = events["img"]
    assert image.startswith(TF_IMAGE_HEAD)
    value = event_proto.parse_event(records[6])["values"][0]
    _, strings = tensor_proto.decode(value["tensor"], {7: np.dtype(object)})
    assert list(strings[:2]) == [b"3", b"2"]
    pixels = png.decode(strings[2])
    assert pixels.shape == (2, 3, 1) and pixels[..., 0].tolist() == TF_IMAGE_PIXELS
    assert value["metadata"]["plugin_name"] == "images"


def test_histogram_buckets_are_tensorboards():
    out = eager.ops.summary_ops.histogram_buckets([1.0, 2.0, 2.5, 10.0])
    assert out.shape == (30, 3) and out.dtype == np.float64
    assert out[0].tolist() == [1.0, 1.3, 1.0] and out[-1].tolist() == [9.7, 10.0, 1.0]
    assert out[:, 2].sum() == 4 and out[3, 2] == 1 and out[5, 2] == 1
    assert eager.ops.summary_ops.histogram_buckets([1.0], 0).shape == (0, 3)
    # infinities (TensorBoard's _buckets in TensorFlow 2.21): the width is infinite, the
    # finite values land in the first bucket, the infinite ones nowhere
    inf = eager.ops.summary_ops.histogram_buckets([1.0, np.inf], 2)
    assert inf.tolist() == [[1.0, np.inf, 1.0], [np.inf, np.inf, 0.0]]
    both = eager.ops.summary_ops.histogram_buckets([1.0, 2.0, np.inf, -np.inf], 2)
    np.testing.assert_array_equal(both, [[-np.inf, np.nan, 0.0], [np.nan, np.inf, 0.0]])


def test_without_a_writer_or_while_not_recording_nothing_is_written(tmp_path):
    assert not bool(eager.summary.scalar("x", 1.0, step=1))
    assert not bool(eager.summary.should_record_summaries())
    writer = eager.summary.create_file_writer(str(tmp_path))
    with writer.as_default():
        assert bool(eager.summary.should_record_summaries())
        with eager.summary.record_if(False):
            assert not bool(eager.summary.scalar("x", 1.0, step=1))
            assert not bool(eager.summary.should_record_summaries())
        with eager.summary.record_if(lambda: eager.constant(False)):
            assert not bool(eager.summary.scalar("x", 1.0, step=1))
        assert bool(eager.summary.scalar("y", 1.0, step=2))
    with eager.summary.create_noop_writer().as_default():
        assert not bool(eager.summary.scalar("x", 1.0, step=1))
    writer.close()
    _, records = _records(str(tmp_path))
    assert [v["tag"] for r in records for v in event_proto.parse_event(r).get("values", [])] \
        == ["y"]


def test_errors_are_tensorflows(tmp_path):
    writer = eager.summary.create_file_writer(str(tmp_path))
    with writer.as_default():
        with pytest.raises(ValueError, match=r"^No step set\. Please specify one either through "
                           r"the `step` argument or through "
                           r"tf\.summary\.experimental\.set_step\(\)$"):
            eager.summary.scalar("x", 1.0)
        with pytest.raises(ValueError, match=r"^Expected scalar shape, saw shape: \(2,\)\.$"):
            eager.summary.scalar("x", [1.0, 2.0], step=1)
        with pytest.raises(TypeError, match=r"^tensor must be of type tf\.string; got "
                                            r"tf\.int32$"):
            eager.summary.text("x", 3, step=1)
        with pytest.raises(ValueError, match=r"^Tensor  must have rank 4\.  Received rank 3, "
                                             r"shape \(2, 2, 3\)$"):
            eager.summary.image("x", np.zeros([2, 2, 3]), step=1)
    writer.close()
    with pytest.raises(RuntimeError, match="is already closed"):
        with writer.as_default():
            pass
    with pytest.raises(ValueError, match=r"^Argument `logdir` cannot be None$"):
        eager.summary.create_file_writer(None)


def test_in_a_function_the_step_is_read_each_call_and_tags_take_the_name_scope(tmp_path):
    writer = eager.summary.create_file_writer(str(tmp_path))
    step = eager.Variable(0, dtype=eager.int64)

    @eager.function
    def f(x):
        eager.summary.scalar("fx", x, step=step)
        step.assign_add(1)
        return x * 2

    with writer.as_default():
        f(eager.constant(1.0))
        f(eager.constant(2.0))
        eager.summary.experimental.set_step(7)
        assert eager.summary.experimental.get_step() == 7
        with eager.name_scope("outer"):
            eager.summary.scalar("inner", 1.0)
        eager.summary.experimental.set_step(None)
    writer.close()
    _, records = _records(str(tmp_path))
    seen = []
    for r in records[1:]:
        event = event_proto.parse_event(r)
        value = event["values"][0]
        _, array = tensor_proto.decode(value["tensor"], {1: np.dtype(np.float32)})
        seen.append((event["step"], value["tag"], float(array)))
    # TensorFlow's: [(0, 'fx', 1.0), (1, 'fx', 2.0), (7, 'outer/inner', 1.0)]
    assert seen == [(0, "fx", 1.0), (1, "fx", 2.0), (7, "outer/inner", 1.0)]


def test_as_default_step_and_flush(tmp_path):
    writer = eager.summary.create_file_writer(str(tmp_path), max_queue=100)
    with writer.as_default(step=5):
        assert eager.summary.experimental.get_step() == 5
        eager.summary.scalar("a", 1.0)
        path, records = _records(str(tmp_path))
        assert len(records) == 1  # queued, not yet written
        eager.summary.flush()
        assert len(_records(str(tmp_path))[1]) == 2
    assert eager.summary.experimental.get_step() is None
    writer.close()


def test_trace_export_writes_the_traced_graph(tmp_path):
    writer = eager.summary.create_file_writer(str(tmp_path))

    @eager.function
    def f(x):
        return eager.matmul(x, x) + 1.0

    eager.summary.trace_on(graph=True)
    f(eager.ones([2, 2]))
    with writer.as_default():
        eager.summary.trace_export("fgraph", step=0)
    writer.close()
    _, records = _records(str(tmp_path))
    graph = event_proto.parse_event(records[1])["graph_def"]
    assert b"MatMul" in graph and b"AddV2" in graph
    with pytest.raises(NotImplementedError):
        eager.summary.trace_on(profiler=True)
