"""`eager.py_function` and `eager.numpy_function`: Python run as an op, eagerly and in graphs.

Both wrap a Python function as a stateful op (TensorFlow's `EagerPyFunc`, `PyFunc` and, for
`numpy_function(stateful=False)`, `PyFuncStateless`) whose kernel calls it when the op runs:
once per eager call, once per run of a traced function (compiled program, op-by-op runner,
asynchronous worker alike), never at trace time. Being stateful, the ops run in program order
through automatic control dependencies and are never pruned, folded or merged. In a trace their
outputs have the dtypes `Tout` names and an unknown shape.

* `py_function(func, inp, Tout)`: `func` gets eager tensors (on the CPU) and runs eagerly; what it
  returns is converted to `Tout` (`convert_to_tensor(value, dtype)`). Its gradient flows through
  the eager ops `func` ran, with respect to `inp` (not to variables read inside, as in
  TensorFlow): the kernel runs `func` under a private persistent gradient tape (when a tape
  records the op, and always in a trace, where a gradient may be derived later), and the op
  has one hidden extra output, a variant holding that tape. The gradient rule is another
  `EagerPyFunc` fed that variant and the output gradients, which asks the tape. The tape thus
  travels by data flow, so every call (each iteration of a loop, concurrent calls) pairs with
  its own backward, and it is freed when nothing holds the variant (at once when no gradient
  reads it).
* `numpy_function(func, inp, Tout, stateful=True)`: `func` gets numpy arrays (read-only views);
  it returns arrays (or values numpy converts) whose dtypes must be exactly `Tout`'s in a graph.
  Eagerly it is TensorFlow's shortcut: `func` is called on the inputs' numpy values and its
  results converted as they are (no dtype check; its exceptions raised as they are). No gradient.

An exception raised by `func` inside the op becomes TensorFlow's error for its class
(ValueError, TypeError: InvalidArgumentError; StopIteration: OutOfRangeError; MemoryError:
ResourceExhaustedError; NotImplementedError: UnimplementedError; anything else: UnknownError),
its message the Python exception and its traceback, chained to the original.

`Tout`: a dtype or TensorSpec (one tensor is returned), or a list or tuple of them (a list is
returned); nested structures are TensorFlow 2.21's TypeError. Called with `func=None`, both
are decorators (`@eager.py_function(Tout=eager.float32)`).
"""

from __future__ import annotations

import functools
import itertools
import traceback

import numpy as np

from ..base import dtypes as _dt
from ..base import errors as _errors
from ..core import context as _context
from ..core.dispatch import execute, named
from ..core.registry import register_op
from ..core.specs import TensorSpec
from ..core.tensor_conversion import convert_to_tensor
from ..base.tensor_shape import TensorShape
from ..devices import registry as _devices
from ..ops.creation_ops import zeros_like
from ..tensor import EagerTensor, Tensor, wrap_value
from ..autodiff.gradient_tape import GradientTape
from ..variables import Variable

__all__ = ["py_function", "numpy_function"]

_CPU_ONLY = frozenset({"CPU"})
_tokens = itertools.count()


class _PyFunc:
    """What a py_function op runs: the Python function, the output dtypes, and how (`kind`:
    "eager" for py_function, "numpy" for numpy_function, "grad" for a py_function's
    gradient). The op's attribute; equal for the same function, kind and types, so the tape
    plans of a loop calling one function key alike. `name` is TensorFlow's token ("pyfunc_3"),
    for messages. `shapes`: the output shapes when known (a gradient's, its inputs')."""

    __slots__ = ("func", "dtypes", "kind", "name", "record", "shapes", "_key")

    def __init__(self, func, dtypes, kind, record=True, shapes=None):
        self.func = func
        self.dtypes = tuple(dtypes)
        self.kind = kind
        self.name = f"pyfunc_{next(_tokens)}"
        self.record = record  # whether the kernel runs `func` under a private tape
        self.shapes = None if shapes is None else tuple(TensorShape(s) for s in shapes)
        self._key = (func, self.dtypes, kind, record, self.shapes)

    def __eq__(self, other):
        return other.__class__ is _PyFunc and other._key == self._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        return f"<{self.name}: {getattr(self.func, '__name__', self.func)!r}>"


class _Recorded:
    """The hidden variant output of an `EagerPyFunc`: the private tape `func` ran under (None
    when nothing recorded it) and the tensors it connects, for the gradient op."""

    __slots__ = ("tape", "inputs", "outputs")

    # What dispatch and EagerTensor read from a value: a scalar of dtype variant.
    eager_dtype = dtype = _dt.variant
    shape = ()
    ndim = 0

    def __init__(self, tape, inputs, outputs):
        self.tape = tape
        self.inputs = inputs
        self.outputs = outputs


# -- the ops ---------------------------------------------------------------------------------------
def _infer(*inputs, func):
    shapes = func.shapes or (TensorShape(None),) * len(func.dtypes)
    specs = tuple(TensorSpec(s, d) for s, d in zip(shapes, func.dtypes))
    if func.kind != "numpy":
        specs += (TensorSpec([], _dt.variant),)
    return specs


def _kernel(xp, *arrays, func):
    """Runs `func.func` (see the module doc) with the thread's interpreter and tapes set aside:
    its ops run eagerly, here, and only its private tape sees them."""
    st = _context.thread_state()
    saved_interpreter, saved_tapes = st.interpreter, st.tapes
    st.interpreter = None
    st.tapes = []
    try:
        if func.kind == "numpy":
            return _run_numpy(func, arrays)
        record = func.record or bool(saved_tapes)
        if func.kind == "grad":
            return _run_gradient(func, arrays, record)
        return _run_eager(func, arrays, record)
    finally:
        st.interpreter = saved_interpreter
        st.tapes = saved_tapes


def _run_eager(func, arrays, record):
    cpu = _devices.lookup("CPU:0")
    inputs = [wrap_value(a, cpu) for a in arrays]
    return _recorded_run(inputs, inputs, record,
                         lambda: _eager_outputs(func, _called(func, inputs)))


def _run_gradient(func, arrays, record):
    """The gradient op's kernel: `arrays` are the forward's `_Recorded` and the gradients of its
    outputs; returns the gradients of its differentiated inputs (`func.func` picks them),
    recorded in turn (a gradient of the gradient, with respect to the output gradients)."""
    recorded = arrays[0]
    if recorded.tape is None:
        raise _errors.InternalError(None, "EagerPyFunc", "EagerPyFunc: no gradient tape was "
                                    "recorded for this call of the py_function; its gradient "
                                    "cannot be computed. [Op:EagerPyFunc]")
    cpu = _devices.lookup("CPU:0")
    dys = [wrap_value(d, cpu) for d in arrays[1:]]
    return _recorded_run(dys, [None, *dys], record, lambda: func.func(recorded, dys))


def _recorded_run(watched, inputs, record, run):
    """The op's outputs, `run()`'s tensors as arrays, then the variant: `run()` under a private
    persistent tape following `watched` when `record` (the variant then holds it, with `inputs`
    aligned with the op's inputs), else as it is."""
    if not record:
        return (*_host_arrays(run()), _Recorded(None, None, None))
    tape = GradientTape(persistent=True, watch_accessed_variables=False)
    with tape:
        for t in watched:
            if t.dtype._inexact:
                tape.watch(t)
        outputs = run()
    return (*_host_arrays(outputs), _Recorded(tape, inputs, outputs))


def _called(func, args):
    """`func.func(*args)`, its exception turned into TensorFlow's error for it (module doc)."""
    try:
        return func.func(*args)
    except Exception as exc:  # noqa: BLE001 - every failure of user code becomes the op's error
        raise _op_error_for(exc, func) from exc


_ERROR_CLASSES = ((ValueError, _errors.InvalidArgumentError),
                  (TypeError, _errors.InvalidArgumentError),
                  (StopIteration, _errors.OutOfRangeError),
                  (MemoryError, _errors.ResourceExhaustedError),
                  (NotImplementedError, _errors.UnimplementedError))


def _op_error_for(exc, func):
    op = _OP_NAMES[func.kind]
    cls = next((c for kind, c in _ERROR_CLASSES if isinstance(exc, kind)), _errors.UnknownError)
    frames = traceback.format_tb(exc.__traceback__)[1:]  # from the user's function on
    text = f"{type(exc).__name__}: {exc}\nTraceback (most recent call last):\n{''.join(frames)}"
    return cls(None, op, f"{text} [Op:{op}] name: {func.name}")


def _values_of(func, result) -> list:
    """What `func.func` returned, one value per output: a list or tuple gives one per item (a
    py_function's extra items are dropped, as TensorFlow pairs them with `Tout`), a single
    value is the first output, None is none."""
    if isinstance(result, (list, tuple)):
        values = list(result)
        if func.kind != "numpy":
            values = values[:len(func.dtypes)]
    elif result is None:
        values = []
    else:
        values = [result]
    if len(values) != len(func.dtypes):
        op = _OP_NAMES[func.kind]
        raise _errors.InvalidArgumentError(
            None, op, f"{func.name} returns {len(values)} values, but expects to see "
                      f"{len(func.dtypes)} values. [Op:{op}]")
    return values


def _eager_outputs(func, result) -> list:
    outputs = []
    for value, dtype in zip(_values_of(func, result), func.dtypes):
        if isinstance(value, Variable):
            raise _op_error_for(RuntimeError(
                "Attempting to return a variable from an eagerly executed py_func. Only numeric "
                "data structures like Tensors or NumPy arrays should be returned; to return the "
                "value of a variable, make sure to obtain the Tensor backing it by calling "
                f"`.read_value()` on the variable in question: {value}"), func)
        try:
            outputs.append(convert_to_tensor(value, dtype=dtype))
        except (TypeError, ValueError) as exc:
            raise _op_error_for(exc, func) from exc
    return outputs


def _host_arrays(tensors) -> list:
    """The tensors' values as arrays on the CPU (where the op lives)."""
    return [t._value if t.__class__ is EagerTensor and t._meta.device.inline
            else np.asarray(t.numpy()) for t in tensors]


def _run_numpy(func, arrays):
    args = []
    for a in arrays:
        view = a.view()
        view.flags.writeable = False
        args.append(view)
    values = _values_of(func, _called(func, args))
    outputs = []
    for i, (value, dtype) in enumerate(zip(values, func.dtypes)):
        array = np.asarray(value)
        if array.dtype != dtype.as_numpy_dtype:
            op = _OP_NAMES[func.kind]
            raise _errors.InvalidArgumentError(
                None, op, f"{i}-th value returned by {func.name} is {_tf_type(array.dtype)}, "
                          f"but expects {_tf_type(dtype.as_numpy_dtype)} [Op:{op}]")
        outputs.append(array)
    return tuple(outputs)


def _tf_type(np_dtype) -> str:
    """TensorFlow's DataTypeString of a numpy dtype ("float", "double", "int64")."""
    name = _dt.as_dtype(np_dtype).name
    return {"float32": "float", "float64": "double", "float16": "half"}.get(name, name)


EAGER_PY_FUNC = register_op(
    "EagerPyFunc", _kernel, _infer, stateful=True, num_outputs=None, device_types=_CPU_ONLY,
    doc="Runs a Python function on eager tensors (eager.py_function).")
PY_FUNC = register_op(
    "PyFunc", _kernel, _infer, stateful=True, num_outputs=None, device_types=_CPU_ONLY,
    differentiable=False, doc="Runs a Python function on numpy arrays (eager.numpy_function).")
PY_FUNC_STATELESS = register_op(
    "PyFuncStateless", _kernel, _infer, num_outputs=None, device_types=_CPU_ONLY,
    differentiable=False,
    doc="Runs a Python function on numpy arrays (eager.numpy_function, stateful=False).")
_OP_NAMES = {"eager": "EagerPyFunc", "grad": "EagerPyFunc", "numpy": "PyFunc"}


@EAGER_PY_FUNC.def_gradient(keep_outputs=True)
def _eager_py_func_grad(forward, *output_grads):
    """Another `EagerPyFunc`, fed the forward's recorded tape (its last output) and the output
    gradients, returning the gradients of the floating inputs (see the module doc)."""
    dtypes = forward.input_dtypes
    needed = forward.input_needed or (True,) * len(dtypes)
    wanted = [k for k, d in enumerate(dtypes) if d._inexact and needed[k]]
    grads = [None] * len(dtypes)
    if not wanted:
        return tuple(grads)
    shapes = [forward.input_shapes[k] for k in wanted]
    backward = _PyFunc(functools.partial(_tape_gradient, wanted), [dtypes[k] for k in wanted],
                       "grad", shapes=[s if isinstance(s, TensorShape) else TensorShape(s)
                                       for s in shapes])
    outputs = execute(EAGER_PY_FUNC, (forward.outputs[-1], *output_grads[:-1]),
                      {"func": backward})
    for k, g in zip(wanted, outputs[:-1]):
        grads[k] = g
    return tuple(grads)


def _tape_gradient(wanted, recorded, output_grads):
    """The gradients of `recorded.inputs[k]` for k in `wanted` (zeros where unconnected, as an
    op output cannot be None), from the forward call's private tape."""
    sources = [recorded.inputs[k] for k in wanted]
    grads = recorded.tape.gradient(recorded.outputs, sources, output_gradients=output_grads)
    return [zeros_like(s) if g is None else convert_to_tensor(g) for s, g in zip(sources, grads)]


# -- the API ---------------------------------------------------------------------------------------
def _output_dtypes(Tout, what):  # noqa: N803 - TensorFlow's argument name
    """(dtypes, single): `Tout` as a tuple of dtypes, and whether one tensor (not a list) is
    returned (module doc)."""
    if Tout is None:
        raise TypeError(f"Missing required argument: 'Tout'\n  If using tf.{what} as a "
                        f"decorator, set `Tout`\n  **by name** above the function:\n  "
                        f"`@tf.{what}(Tout=tout)`")
    single = not isinstance(Tout, (list, tuple))
    return tuple(_as_dtype(t) for t in ([Tout] if single else Tout)), single


def _as_dtype(t):
    if isinstance(t, TensorSpec):
        return t.dtype
    try:
        return _dt.as_dtype(t)
    except (TypeError, ValueError, KeyError):
        raise TypeError(f"Cannot convert the argument `type_value`: {t!r} to a TensorFlow "
                        "DType.") from None


def _inputs(inp, what) -> tuple:
    if inp is None:
        raise TypeError(f"Missing argument `inp`:\n  You must set the `inp` argument (the list "
                        f"of arguments to the\n  function), unless you use `tf.{what}` as a "
                        f"decorator(`func=None`).")
    return tuple(x if isinstance(x, Tensor) else convert_to_tensor(x) for x in inp)


def _decorator(api, Tout, **options):  # noqa: N803
    def decorate(func):
        @functools.wraps(func)
        def wrapper(*args):
            return api(func, list(args), Tout, **options)
        return wrapper
    return decorate


def py_function(func=None, inp=None, Tout=None, name=None):  # noqa: N803 - TensorFlow's names
    """≈ `tf.py_function`: calls `func` on eager tensors when the op runs, eagerly or in a
    traced function, and returns its results converted to `Tout` (see the module doc), with a
    gradient through the eager ops `func` ran."""
    if func is None:
        return _decorator(py_function, Tout, name=name)
    if not callable(func):
        raise ValueError(f"Expected func to be callable. Received func={func} of type "
                         f"{type(func)}.")
    dtypes, single = _output_dtypes(Tout, "py_function")
    inputs = _inputs(inp, "py_function")
    st = _context.thread_state()
    in_graph = getattr(st.interpreter, "is_graph", False)
    token = _PyFunc(func, dtypes, "eager", record=in_graph or bool(st.tapes))
    outputs = execute(EAGER_PY_FUNC, inputs, {"func": token})
    if name is not None:
        named(outputs, name)
    visible = outputs[:-1]
    return visible[0] if single else list(visible)


def numpy_function(func=None, inp=None, Tout=None, stateful=True, name=None):  # noqa: N803
    """≈ `tf.numpy_function`: calls `func` on numpy arrays when the op runs in a traced function
    (results must have `Tout`'s dtypes); eagerly, calls it at once on the inputs' values (see
    the module doc). No gradient."""
    if func is None:
        return _decorator(numpy_function, Tout, stateful=stateful, name=name)
    dtypes, single = _output_dtypes(Tout, "numpy_function")
    inputs = _inputs(inp, "numpy_function")
    if not getattr(_context.thread_state().interpreter, "is_graph", False):
        return _numpy_eagerly(func, inputs)
    if not callable(func):
        raise TypeError(f"'{type(func).__name__}' object is not callable")
    op = PY_FUNC if stateful else PY_FUNC_STATELESS
    outputs = execute(op, inputs, {"func": _PyFunc(func, dtypes, "numpy", record=False)})
    if name is not None and outputs:
        named(outputs, name)
    return outputs[0] if single else list(outputs)


def _numpy_eagerly(func, inputs):
    """TensorFlow's eager numpy_function: `func` on the inputs' numpy values, each result
    converted as it is, one result returned alone."""
    result = func(*[np.array(t) for t in inputs])  # copies, as TensorFlow's
    flat = result if isinstance(result, (list, tuple)) else [result]
    flat = [x if x is None else convert_to_tensor(x) for x in _flat(flat)]
    return flat[0] if len(flat) == 1 else flat


def _flat(values):
    for v in values:
        if isinstance(v, (list, tuple)):
            yield from _flat(v)
        else:
            yield v
