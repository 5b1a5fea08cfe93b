"""`eager.print` ≈ `tf.print`: a stateful "PrintV2" op that formats its tensors as TensorFlow does
and writes the line to a stream.

As in TensorFlow, the Python side builds a template from the inputs (strings verbatim; other
Python values and structures through `pprint.pformat`, with a placeholder where each tensor goes,
dict keys sorted) and the kernel fills in each tensor's summary: `[1 2 3]`, nested dimensions on
new lines, the first and last `summarize` entries of each long dimension around `...`. Numbers
print as TensorFlow's C++ does: floats with 6 significant digits, or 9 (17 for float64) when 6 do
not round-trip; bools as 1/0. Complex numbers print as `(1+2j)` (TensorFlow prints `?`).

The op is stateful, so inside a traced function it runs in program order with other stateful
ops, every time the function runs. The kernel writes and flushes at once: eager prints appear in
program order with the program's own output. `output_stream` may be `sys.stdout`, `sys.stderr`
(both looked up when the op runs, so redirection works), a `logging` level or function,
`"file://<path>"` (appended to), or any object with a `write` method (beyond TensorFlow).
"""

from __future__ import annotations

import collections
import collections.abc
import logging
import pprint
import random as _pyrandom
import sys
import threading

import numpy as np

from ..tensor import Tensor, is_tensor
from ..core.tensor_conversion import convert_to_tensor
from ..core.argument_conversion import is_tensorlike
from ..core.dispatch import execute
from ..core.registry import op_error, register_op

__all__ = ["print"]

_OP = "PrintV2"
_WRITE_LOCK = threading.Lock()


class _Writer:
    """An `output_stream` object as an attr: compared and hashed by identity."""

    __slots__ = ("target",)

    def __init__(self, target):
        self.target = target

    def __eq__(self, other):
        return isinstance(other, _Writer) and other.target is self.target

    def __hash__(self):
        return id(self.target)

    def __repr__(self):
        return f"<output stream {self.target!r}>"


class _DefaultStream:
    """The default `output_stream`: sys.stderr as it is when print is called."""

    __slots__ = ()

    def __repr__(self):
        return "sys.stderr"


_STDERR = _DefaultStream()


def _logging_streams():
    streams = {logging.INFO: "log(info)", logging.info: "log(info)",
               logging.WARNING: "log(warning)", logging.warning: "log(warning)",
               logging.warn: "log(warning)", logging.ERROR: "log(error)",
               logging.error: "log(error)"}
    absl_logging = sys.modules.get("absl.logging")  # only if the program already uses absl
    if absl_logging is not None:
        for level in ("info", "warning", "error"):
            fn = getattr(absl_logging, level, None)
            if fn is not None:
                streams[fn] = f"log({level})"
    return streams


def _stream_attr(output_stream):
    if output_stream is _STDERR or output_stream is sys.stderr:
        return "stderr"
    if output_stream is sys.stdout:
        return "stdout"
    if isinstance(output_stream, str):
        if output_stream.startswith("file://"):
            return output_stream
    else:
        try:
            level = _logging_streams().get(output_stream)
        except TypeError:  # unhashable
            level = None
        if level is not None:
            return level
        if callable(getattr(output_stream, "write", None)):
            return _Writer(output_stream)
    raise ValueError(f"print: Unsupported output stream, logging level, or file. "
                     f"{output_stream!r}. Supported streams are sys.stdout, sys.stderr, "
                     "logging.info, logging.warning, logging.error, objects with a write "
                     "method, and files in the form 'file://<filepath>'.")


def _write(output_stream, text):
    with _WRITE_LOCK:
        if isinstance(output_stream, _Writer):
            target = output_stream.target
        elif output_stream == "stdout":
            target = sys.stdout
        elif output_stream == "stderr":
            target = sys.stderr
        elif output_stream.startswith("file://"):
            with open(output_stream[len("file://"):], "a", encoding="utf-8") as f:
                f.write(text)
            return
        else:
            level = {"log(info)": logging.INFO, "log(warning)": logging.WARNING,
                     "log(error)": logging.ERROR}[output_stream]
            logging.getLogger().log(level, text)
            return
        target.write(text)
        flush = getattr(target, "flush", None)
        if flush is not None:
            flush()


# -----------------------------------------------------------------------------------------------
# Tensor summaries (TensorFlow's Tensor::SummarizeValue with print_v2=true)
# -----------------------------------------------------------------------------------------------

def _float32_str(v):
    v = np.float32(v)
    if np.isnan(v):
        return "-nan" if np.signbit(v) else "nan"
    text = "%.6g" % v
    if np.float32(float(text)) != v:
        text = "%.9g" % v
    return text


def _float64_str(v):
    v = float(v)
    if v != v:
        return "-nan" if np.signbit(v) else "nan"
    text = "%.15g" % v
    if float(text) != v:
        text = "%.17g" % v
    return text


def _element_formatter(dtype):
    kind = dtype.kind
    if kind == "f":
        return _float64_str if dtype.itemsize == 8 else _float32_str
    if kind in "iu":
        return lambda v: str(int(v))
    if kind == "b":
        return lambda v: "1" if v else "0"
    if kind == "c":
        part = _float64_str if dtype.itemsize == 16 else _float32_str

        def complex_str(v):
            imag = part(v.imag)
            sign = "" if imag.startswith("-") else "+"
            return f"({part(v.real)}{sign}{imag}j)"

        return complex_str
    if kind == "O":  # string
        return lambda v: '"' + c_escape(v) + '"'
    return lambda v: f"<{v}>"


def c_escape(data: bytes) -> str:
    """Bytes as TensorFlow prints a string element (its UTF-8-safe C escaping): quotes,
    backslash, newline, carriage return and tab escaped, other control bytes in octal, and every
    other byte (UTF-8 included) as it is."""
    out = bytearray()
    for byte in data:
        escaped = _ESCAPES.get(byte)
        if escaped is not None:
            out += escaped
        elif byte < 32 or byte == 127:
            out += b"\\%03o" % byte
        else:
            out.append(byte)
    return out.decode("utf-8", "replace")


_ESCAPES = {ord("\n"): b"\\n", ord("\r"): b"\\r", ord("\t"): b"\\t", ord('"'): b'\\"',
            ord("'"): b"\\'", ord("\\"): b"\\\\"}


def _spacing(dim, ndims):
    if dim == ndims - 1:
        return " "
    return "\n" * (ndims - dim - 1) + " " * (dim + 1)


def summarize_array(arr, summarize=3):
    """TensorFlow's printed form of an array: the first and last `summarize` entries of each
    dimension (all of them when `summarize` is negative)."""
    arr = np.asarray(arr)
    num = arr.size
    limit = min(num if summarize < 0 else summarize, num)
    if arr.dtype.kind == "b" and limit == 0:
        return ""  # TensorFlow's bool summary of no data is empty
    fmt = _element_formatter(arr.dtype)
    if arr.ndim == 0:
        return (fmt(arr[()]) if limit else "") + ("..." if num > limit else "")
    ndims = arr.ndim
    out = []

    def dim(sub, d):
        if d == ndims:
            out.append(fmt(sub))
            return
        out.append("[")
        n = sub.shape[0]
        for i in range(min(limit, n)):
            if i:
                out.append(_spacing(d, ndims))
            dim(sub[i], d + 1)
        if n > 2 * limit:
            out.append(_spacing(d, ndims))
            out.append("...")
        for i in range(max(limit, n - limit), n):
            out.append(_spacing(d, ndims))
            dim(sub[i], d + 1)
        out.append("]")

    dim(arr, 0)
    return "".join(out)


# -----------------------------------------------------------------------------------------------
# The op
# -----------------------------------------------------------------------------------------------

def _print_infer(*inputs, template, placeholder, summarize, end, output_stream, raw=()):
    count = template.count(placeholder)
    if count != len(inputs):
        raise op_error(_OP, f"num placeholders in template and num inputs must match: {count} "
                            f"vs. {len(inputs)}")
    return ()


def _print_kernel(xp, *arrays, template, placeholder, summarize, end, output_stream, raw=()):
    _print_infer(*arrays, template=template, placeholder=placeholder, summarize=summarize,
                 end=end, output_stream=output_stream)
    pieces = template.split(placeholder)
    parts = [pieces[0]]
    on_host = xp.__name__ == "numpy"
    for i, (arr, piece) in enumerate(zip(arrays, pieces[1:])):
        if i in raw:  # a top-level scalar string: its text, as a Python string would print
            parts.append(bytes(arr[()]).decode("utf-8", "replace"))
        else:
            parts.append(summarize_array(arr if on_host else xp.asnumpy(arr), summarize))
        parts.append(piece)
    _write(output_stream, "".join(parts) + end)
    return ()


# A host op, as TensorFlow's PrintV2: it writes to a Python stream, so it runs on the CPU in
# program order (on a GPU, a print queued on a stream would appear whenever the stream got to
# it, after later host output); GPU inputs are copied to the host, waiting for them.
PRINT = register_op(_OP, _print_kernel, _print_infer, stateful=True, num_outputs=0,
                    differentiable=False, device_types=frozenset({"CPU"}),
                    doc="Writes formatted tensors to a stream.")


# -----------------------------------------------------------------------------------------------
# Templates (TensorFlow's print_v2: nest.flatten order, pprint formatting)
# -----------------------------------------------------------------------------------------------

def _is_tensor_input(x):
    return is_tensor(x) or is_tensorlike(x)


def _sorted_keys(mapping):
    try:
        return sorted(mapping)
    except TypeError:
        raise TypeError("print: nested dictionaries must have sortable keys (as in "
                        "TensorFlow's nest).") from None


def _flatten(x):
    if isinstance(x, collections.abc.Mapping):
        for key in _sorted_keys(x):
            yield from _flatten(x[key])
    elif isinstance(x, (list, tuple)):
        for item in x:
            yield from _flatten(item)
    else:
        yield x


def _rebuild(x, items):
    cls = type(x)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return cls(*items)
    try:
        return cls(items)
    except TypeError:
        return (list if isinstance(x, list) else tuple)(items)


def _pack(x, leaves):
    """The structure of `x` with its leaves taken in order from the iterator `leaves`."""
    if isinstance(x, collections.abc.Mapping):
        packed = {key: _pack(x[key], leaves) for key in _sorted_keys(x)}
        pairs = [(key, packed[key]) for key in x]
        try:
            return type(x)(pairs)
        except TypeError:
            return dict(pairs)
    if isinstance(x, (list, tuple)):
        return _rebuild(x, [_pack(item, leaves) for item in x])
    return next(leaves)


def _placeholder(text):
    """TensorFlow's: "{}", lengthened with pseudo-random digits until it is not in `text`."""
    placeholder = "{}"
    rng = _pyrandom.Random(5)
    while placeholder in text:
        placeholder += str(rng.randint(0, 9))
    return placeholder


def print(*inputs, output_stream=_STDERR, sep=" ", end="\n", summarize=3, name=None,  # noqa: A001
          **kwargs):
    """≈ `tf.print(*inputs, output_stream=sys.stderr, sep=' ', end='\\n', summarize=3)`.

    Inputs may be tensors, Python values, and lists/tuples/dicts nesting tensors; they are
    joined by `sep` and followed by `end`. `summarize` entries are shown at each end of every
    dimension (-1: all; None: 3). Returns None (see the module doc for streams and formats).
    """
    if kwargs:
        raise ValueError(f"Unrecognized keyword arguments for print: {kwargs}")
    if not isinstance(sep, str) or not isinstance(end, str):
        raise TypeError(f"print: sep and end must be strings, got sep={sep!r}, end={end!r}.")
    if summarize is None:
        summarize = 3
    if isinstance(summarize, bool) or not isinstance(summarize, (int, np.integer)):
        raise TypeError(f"print: summarize must be an int or None, got {summarize!r}.")
    stream = _stream_attr(output_stream)

    sorted_inputs = [collections.OrderedDict(sorted(x.items()))
                     if isinstance(x, collections.OrderedDict) else x for x in inputs]
    free = " ".join(pprint.pformat(_pack(x, iter(["" if _is_tensor_input(leaf) else leaf
                                                   for leaf in _flatten(x)])))
                    for x in sorted_inputs)
    placeholder = _placeholder(free)
    tensors = []
    templates = []
    raw = []  # top-level scalar string tensors: printed as their text (TensorFlow's print_v2)
    for x in inputs:
        if isinstance(x, Tensor) and x.dtype.is_string and x.shape.rank == 0:
            raw.append(len(tensors))
        leaves = []
        for leaf in _flatten(x):
            if _is_tensor_input(leaf):
                try:
                    tensors.append(leaf if isinstance(leaf, Tensor) else convert_to_tensor(leaf))
                except (TypeError, ValueError) as exc:
                    raise type(exc)(f"print: cannot print {leaf!r}: {exc}") from None
                leaves.append(placeholder)
            else:
                leaves.append(leaf)
        templates.append(x if isinstance(x, str) else pprint.pformat(_pack(x, iter(leaves))))
    template = sep.join(templates).replace(f"'{placeholder}'", placeholder)
    execute(PRINT, tuple(tensors), {"template": template, "placeholder": placeholder,
                                    "summarize": int(summarize), "end": end,
                                    "output_stream": stream, "raw": tuple(raw)})
    return None
