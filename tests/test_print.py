"""eager.print: TensorFlow's exact output text, streams, ordering, and bad arguments."""

import collections
import io
import logging
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import eager
from eager.errors import InvalidArgumentError
from eager.ops import logging_ops
from eager.core.dispatch import execute
from tests.strategies import INT_DTYPES, arrays, shapes


def _out(*inputs, **kwargs):
    stream = io.StringIO()
    assert eager.print(*inputs, output_stream=stream, **kwargs) is None
    return stream.getvalue()


def _numpy_reference(a, summarize):
    """numpy's array2string with TensorFlow's element format agrees with TensorFlow's printing
    for non-empty arrays (threshold 0 elides every dimension longer than 2 * edgeitems)."""
    return np.array2string(a, max_line_width=10 ** 9, separator=" ",
                           formatter={"all": lambda v: str(int(v))},
                           threshold=sys.maxsize if summarize < 0 else 0,
                           edgeitems=max(summarize, 0))


@given(st.sampled_from(INT_DTYPES), shapes(min_dims=1, max_dims=4, min_side=1, max_side=8),
       st.sampled_from([-1, 1, 2, 3]), st.data())
def test_integer_tensors_match_numpy_layout(dtype, shape, summarize, data):
    a = data.draw(arrays(dtype, shape))
    assert _out(eager.constant(a), summarize=summarize) == _numpy_reference(a, summarize) + "\n"


def test_tf_docstring_examples(capsys):
    t = eager.constant(np.arange(10, dtype=np.int32))
    eager.print(t)
    eager.print("tensors:", t, {2: t * 2}, output_stream=sys.stdout)
    eager.print(t[:2], t[:2] * 2, sep=",")
    captured = capsys.readouterr()
    assert captured.err == "[0 1 2 ... 7 8 9]\n[0 1],[0 2]\n"
    assert captured.out == "tensors: [0 1 2 ... 7 8 9] {2: [0 2 4 ... 14 16 18]}\n"


def test_multidimensional_layout():
    a = eager.constant(np.arange(24).reshape(2, 3, 4))
    assert _out(a) == ("[[[0 1 2 3]\n  [4 5 6 7]\n  [8 9 10 11]]\n\n"
                       " [[12 13 14 15]\n  [16 17 18 19]\n  [20 21 22 23]]]\n")
    b = eager.constant(np.arange(100).reshape(10, 10))
    assert _out(b, summarize=1) == "[[0 ... 9]\n ...\n [90 ... 99]]\n"
    assert _out(b, summarize=None) == _out(b, summarize=3)
    assert _out(b, summarize=-1).count("\n") == 10


def test_scalars_and_element_formats():
    assert _out(eager.constant(1 / 3)) == "0.333333343\n"
    assert _out(eager.constant(1 / 3, eager.float64)) == "0.33333333333333331\n"
    assert _out(eager.constant([0.1, 1.5, 2.0, 1e20, 1e-5, -0.0])) == "[0.1 1.5 2 1e+20 1e-05 -0]\n"
    assert _out(eager.constant([0.1, 100.0], eager.float64)) == "[0.1 100]\n"
    assert _out(eager.constant([np.inf, -np.inf, np.nan, -np.nan])) == "[inf -inf nan -nan]\n"
    # float16 prints through float32, as TensorFlow does.
    assert _out(eager.constant([0.1, 0.5], eager.float16)) == "[0.0999755859 0.5]\n"
    assert _out(eager.constant([True, False])) == "[1 0]\n"
    assert _out(eager.constant(np.array([255, 0], np.uint8))) == "[255 0]\n"
    assert _out(eager.constant(-(2 ** 63), eager.int64)) == "-9223372036854775808\n"
    assert _out(eager.constant([1 + 2j, 3 - 4.5j])) == "[(1+2j) (3-4.5j)]\n"


def test_float_format_round_trips():
    values = np.random.default_rng(0).normal(size=200).astype(np.float32) * 10.0 ** np.arange(
        -20, 20, 0.2, dtype=np.float32)
    text = _out(eager.constant(values), summarize=-1).strip()[1:-1].split(" ")
    parsed = np.array([float(t) for t in text], np.float32)
    np.testing.assert_array_equal(parsed, values)
    digits = [t.lstrip("-").split("e")[0].replace(".", "").lstrip("0") for t in text]
    assert all(len(d) <= 9 for d in digits) and any(len(d) <= 6 for d in digits)


def test_empty_tensors():
    assert _out(eager.constant(np.zeros(0, np.float32))) == "[]\n"
    assert _out(eager.constant(np.zeros((2, 0), np.int32))) == "[\n ...]\n"  # as TensorFlow
    assert _out(eager.constant(np.zeros(0, bool))) == "\n"  # TensorFlow prints nothing
    assert _out(eager.constant(5), summarize=0) == "...\n"
    assert _out(eager.constant([1, 2, 3]), summarize=0) == "[ ...]\n"


class _Shown:
    """Reprs as `text`: what a tensor inside a Python structure prints as."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


def test_python_values_and_structures():
    t = eager.constant([1, 2])
    assert _out("hi", 5, 1.5, None, True) == "hi 5 1.5 None True\n"
    assert _out([1, "x", t]) == "[1, 'x', [1 2]]\n"
    assert _out((t,)) == "([1 2],)\n"
    assert _out({"b": t, "a": 1}) == "{'a': 1, 'b': [1 2]}\n"
    assert _out({"k": [t, {"z": t}]}) == "{'k': [[1 2], {'z': [1 2]}]}\n"
    Point = collections.namedtuple("Point", "x y")
    assert _out(Point(t, 3)) == "Point(x=[1 2], y=3)\n"
    od = collections.OrderedDict([("b", t), ("a", 1)])
    # Python's own repr of the same structure: OrderedDict([('b', ...)]) up to 3.11,
    # OrderedDict({'b': ...}) from 3.12 on.
    shown = collections.OrderedDict([("b", _Shown("[1 2]")), ("a", 1)])
    assert _out(od) == repr(shown) + "\n"
    assert _out() == "\n"
    assert _out(np.array([1, 2])) == "array([1, 2])\n"


def test_literal_braces_are_not_placeholders():
    t = eager.constant([7])
    assert _out("a{}b", t) == "a{}b [7]\n"
    assert _out("{}", {}, t) == "{} {} [7]\n"


def test_sep_end_and_summarize_arguments():
    t = eager.constant(np.arange(8))
    assert _out(t, "x", sep="|", end="!") == "[0 1 2 ... 5 6 7]|x!"
    assert _out(t, summarize=4) == "[0 1 2 3 4 5 6 7]\n"
    assert _out(t, summarize=2) == "[0 1 ... 6 7]\n"


def test_streams(capsys, tmp_path, caplog):
    eager.print("to stdout", output_stream=sys.stdout)
    eager.print("to stderr")
    captured = capsys.readouterr()
    assert captured.out == "to stdout\n" and captured.err == "to stderr\n"
    path = tmp_path / "log.txt"
    eager.print("line 1", output_stream=f"file://{path}")
    eager.print(eager.constant([1.5]), output_stream=f"file://{path}")
    assert path.read_text() == "line 1\n[1.5]\n"
    with caplog.at_level(logging.INFO):
        eager.print("logged", eager.constant(3), output_stream=logging.info)
        eager.print("warned", output_stream=logging.WARNING)
    assert [r.getMessage() for r in caplog.records] == ["logged 3\n", "warned\n"]
    assert [r.levelno for r in caplog.records] == [logging.INFO, logging.WARNING]


def test_program_order_with_builtin_print(capsys):
    for i in range(3):
        print(f"builtin {i}")
        eager.print("eager", eager.constant(i), output_stream=sys.stdout)
    assert capsys.readouterr().out == "".join(f"builtin {i}\neager {i}\n" for i in range(3))


def test_custom_writer_is_flushed():
    class Writer:
        def __init__(self):
            self.parts, self.flushes = [], 0

        def write(self, text):
            self.parts.append(text)

        def flush(self):
            self.flushes += 1

    w = Writer()
    eager.print("a", output_stream=w)
    eager.print("b", output_stream=w)
    assert w.parts == ["a\n", "b\n"] and w.flushes == 2


def test_op_record():
    op = logging_ops.PRINT
    assert op.name == "PrintV2" and op.stateful and op.num_outputs == 0
    stream = io.StringIO()
    attrs = {"template": "x={} y={}", "placeholder": "{}", "summarize": 3, "end": ".",
             "output_stream": logging_ops._Writer(stream)}
    assert execute(op, (eager.constant(1), eager.constant([2.5])), attrs) == ()
    assert stream.getvalue() == "x=1 y=[2.5]."
    with pytest.raises(InvalidArgumentError, match="PrintV2.*placeholders"):
        execute(op, (eager.constant(1),), attrs)


def test_tensors_on_other_logical_devices(logical_cpus):
    logical_cpus(2)
    with eager.device("CPU:1"):
        t = eager.constant([4, 5])
    assert _out(t) == "[4 5]\n"


# -- bad arguments ---------------------------------------------------------------------------

@pytest.mark.parametrize("stream", ["stdout", object(), 12345, None, [sys.stdout]])
def test_bad_output_stream(stream):
    with pytest.raises(ValueError, match="print: Unsupported output stream"):
        eager.print("x", output_stream=stream)


def test_bad_arguments():
    with pytest.raises(ValueError, match="keyword arguments for print"):
        eager.print("x", stream=sys.stdout)
    with pytest.raises(TypeError, match="print: summarize"):
        eager.print("x", summarize="all")
    with pytest.raises(TypeError, match="print: sep"):
        eager.print("x", sep=None)
    with pytest.raises(TypeError, match="print: sep and end"):
        eager.print("x", end=0)
    with pytest.raises(TypeError, match="print.*sortable"):
        eager.print({1: "a", "b": 2})
    with pytest.raises(InvalidArgumentError, match="PrintV2.*placeholders"):
        eager.print(eager.constant(1), "y", sep="{}", output_stream=io.StringIO())
