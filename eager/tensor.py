"""The value types: `Tensor` (the common interface), `EagerTensor` (a value on a device) with
its interned `TensorMeta`, and `IndexedSlices`. (`TensorSpec` is `eager.core.specs`; converting
Python and numpy values to tensors is `eager.core.tensor_conversion`.)

`Tensor` defines every operator once, by handing the call to the op library's implementation
(`_LIBRARY`, which the ops package fills in at import with `register_operators`); this module
sits below the op library and never imports it. `EagerTensor` overrides the hottest operators
with a fast path that computes directly on the arrays when `FAST_PATH.kernel_and_tapes` says
that dispatch would do nothing more than run the kernel and tell gradient tapes (no scope, no
interpreter, one device) and both operands already have the same dtype; when an operand is
followed by a tape (it has a tape id), the result is then recorded on the thread's tapes as the
op dispatch would have run (the recorder autodiff installs with `set_operator_recorder`).
Everything else, including every error, goes through dispatch, so the fast path never changes
what an op means.

Making an EagerTensor. Cold code calls `wrap_value(value, device)` (with `dtype` for a value
that is not an array: a resource handle, a TensorList). Only the hot constructors build one
slot by slot, because a call costs as much as the rest of a small op: dispatch's `run_kernel`,
`wrap_output` and `run_bare_unary`, the operators' fast path below, and a gradient's default
seed (`eager.autodiff.tape_backward`), and the rows and batches `from_tensor_slices` slices
(`eager.data.sources`); each says so where it does it, and `tests/test_layers.py` keeps
`EagerTensor()` to those modules. A tape numbers a tensor it
follows (`_tape_id`, `eager.autodiff.tape`); nothing else writes the slots.

Reading the slots. Inside the package, `_value` (the array), `_meta` (dtype and device) and
`_tape_id` are read directly wherever a kernel's array, a tensor's device or whether a tape
follows it is needed (one attribute read instead of a property call on hot paths); user code
reads `.numpy()`, `.dtype`, `.device`.
"""

from __future__ import annotations

import operator
import warnings

import numpy as np

from .base.dtypes import BY_NUMPY, DType
from .base.ieee import FP_SIGNALS
from .base.rich_display import tensor_card
from .base.tensor_shape import TensorShape, as_shape
from .base.traceback_filter import filter_traceback
from .core.buffer_reuse import MIN_ELEMENTS, writable_operand
from .core.composite import CompositeTensor
from .core.context import FAST_PATH, placement_device
from .devices.base import Device

__all__ = ["Tensor", "EagerTensor", "TensorMeta", "IndexedSlices", "register_operators",
           "register_operator_ops", "set_operator_recorder", "set_operator_issuer",
           "set_number_converter", "register_reading_operand", "is_tensor",
           "wrap_value", "meta_for", "METAS", "unavailable_repr"]


class _OperatorLibrary:
    """The op library's implementations of the Python operators (see the module doc), one
    attribute per operator."""

    __slots__ = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "neg",
                 "abs", "invert", "and_", "or_", "xor", "lt", "le", "gt", "ge", "eq", "ne",
                 "getitem")


_LIBRARY = _OperatorLibrary()


def register_operators(**implementations) -> None:
    """Installs the op library's implementations of `Tensor`'s operators (called once by
    `eager.ops`). Each takes (x, y) already ordered as the operator reads: `__rsub__` calls
    `sub(y, x)`."""
    for name, fn in implementations.items():
        # The operators are public entry points: errors show the user's frames only.
        setattr(_LIBRARY, name, filter_traceback(fn))


def _record_nothing(name, x, y, out):
    """The operators' recorder until autodiff installs its own: no tapes exist without it."""


_record_operator = _record_nothing


class _OperatorHooks:
    """`issue_operator(name, x, y)`: the thread's interpreter issuing `x <name> y` itself
    (async dispatch queues it without the op library), or None to go through the op library;
    installed by `eager.async_exec` with `set_operator_issuer`, asked only off the fast path.
    `convert_number(number, dtype)`: a Python number as the constant tensor the op library
    would make of it (`convert_to_tensor`), installed by the conversion module with
    `set_number_converter`; the launching operators keep its result per value."""

    __slots__ = ("issue_operator", "convert_number")

    def __init__(self):
        self.issue_operator = None
        self.convert_number = None


_HOOKS = _OperatorHooks()


def set_number_converter(convert) -> None:
    """Installs `convert(number, dtype)` (see `_OperatorHooks`); called once by
    `eager.core.tensor_conversion`, which this module never imports."""
    _HOOKS.convert_number = convert


def set_operator_issuer(issue) -> None:
    """Installs `issue(name, x, y)` (see `_OperatorHooks`): called by `+ - * /` of an
    EagerTensor off the fast path; it returns the result, or None when the op library must
    run the operator. Called once by `eager.async_exec`, which this module never imports."""
    _HOOKS.issue_operator = issue


def set_operator_recorder(record) -> None:
    """Installs `record(name, x, y, out)`, which tells the thread's gradient tapes that the
    operators' fast path computed `out` from `x` and `y` with the operator `name` ("add",
    "sub", "mul", "truediv"). Called once by `eager.autodiff`, which this module never
    imports."""
    global _record_operator
    _record_operator = record


def _symbolic_bool_error(what):
    return TypeError(
        f"Using a symbolic tensor as a Python {what} is not allowed while tracing: its value is "
        "not known until the function runs. Use eager.cond / eager.while_loop for data-dependent "
        "control flow (or compare shapes, which are known).")


class Tensor:
    """A multidimensional array of elements of one dtype on one device (≈ `tf.Tensor`).

    Concrete tensors are `EagerTensor`s; tracing creates symbolic ones. Tensors are immutable and
    unhashable (as in TensorFlow 2, `==` is elementwise); use `t.ref()` as a dictionary key.
    """

    __slots__ = ()
    #: Makes numpy defer to our reflected operators (`np.float32(2) * t` is a Tensor).
    __array_priority__ = 100

    # -- interface implemented by subclasses ------------------------------------------------------
    @property
    def shape(self) -> TensorShape:
        raise NotImplementedError

    @property
    def dtype(self) -> DType:
        raise NotImplementedError

    @property
    def device(self) -> str:
        raise NotImplementedError

    # -- derived ----------------------------------------------------------------------------------
    @property
    def ndim(self) -> int:
        return self.shape.rank

    def get_shape(self) -> TensorShape:
        return self.shape

    @property
    def is_symbolic(self) -> bool:
        return False

    def ref(self):
        """A hashable reference to this tensor (≈ `Tensor.ref()`)."""
        return Reference(self)

    experimental_ref = ref

    def __hash__(self):
        raise TypeError("Tensor is unhashable. Instead, use tensor.ref() as the key.")

    def __len__(self):
        shape = self.shape
        if shape.rank == 0:
            raise TypeError("len is not well defined for a rank-0 tensor.")
        if shape.rank is None or shape[0] is None:
            raise TypeError("len is not well defined for a tensor whose first dimension is "
                            "unknown while tracing; use eager.shape(t)[0].")
        return shape[0]

    def __iter__(self):
        shape = self.shape
        if shape.rank == 0:
            raise TypeError("Cannot iterate over a scalar tensor.")
        if shape.rank is None or shape[0] is None:
            raise TypeError("Cannot iterate over a tensor with unknown first dimension.")
        for i in range(shape[0]):
            yield self[i]

    def __bool__(self):
        raise _symbolic_bool_error("bool")

    def __float__(self):
        raise _symbolic_bool_error("float")

    def __int__(self):
        raise _symbolic_bool_error("int")

    def __index__(self):
        raise _symbolic_bool_error("index")

    def __complex__(self):
        raise _symbolic_bool_error("complex")

    def __array__(self, dtype=None, copy=None):
        raise TypeError(f"Cannot convert a symbolic tensor ({self!r}) to a numpy array: its "
                        "value is not known while tracing.")

    # -- operators (slow path: full dispatch through the op library) --------------------------
    def __add__(self, other):
        return _LIBRARY.add(self, other)

    def __radd__(self, other):
        return _LIBRARY.add(other, self)

    def __sub__(self, other):
        return _LIBRARY.sub(self, other)

    def __rsub__(self, other):
        return _LIBRARY.sub(other, self)

    def __mul__(self, other):
        return _LIBRARY.mul(self, other)

    def __rmul__(self, other):
        return _LIBRARY.mul(other, self)

    def __truediv__(self, other):
        return _LIBRARY.truediv(self, other)

    def __rtruediv__(self, other):
        return _LIBRARY.truediv(other, self)

    def __floordiv__(self, other):
        return _LIBRARY.floordiv(self, other)

    def __rfloordiv__(self, other):
        return _LIBRARY.floordiv(other, self)

    def __mod__(self, other):
        return _LIBRARY.mod(self, other)

    def __rmod__(self, other):
        return _LIBRARY.mod(other, self)

    def __pow__(self, other):
        return _LIBRARY.pow(self, other)

    def __rpow__(self, other):
        return _LIBRARY.pow(other, self)

    def __matmul__(self, other):
        return _LIBRARY.matmul(self, other)

    def __rmatmul__(self, other):
        return _LIBRARY.matmul(other, self)

    def __neg__(self):
        return _LIBRARY.neg(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _LIBRARY.abs(self)

    def __invert__(self):
        return _LIBRARY.invert(self)

    def __and__(self, other):
        return _LIBRARY.and_(self, other)

    def __rand__(self, other):
        return _LIBRARY.and_(other, self)

    def __or__(self, other):
        return _LIBRARY.or_(self, other)

    def __ror__(self, other):
        return _LIBRARY.or_(other, self)

    def __xor__(self, other):
        return _LIBRARY.xor(self, other)

    def __rxor__(self, other):
        return _LIBRARY.xor(other, self)

    def __lt__(self, other):
        return _LIBRARY.lt(self, other)

    def __le__(self, other):
        return _LIBRARY.le(self, other)

    def __gt__(self, other):
        return _LIBRARY.gt(self, other)

    def __ge__(self, other):
        return _LIBRARY.ge(self, other)

    def __eq__(self, other):
        return _LIBRARY.eq(self, other)

    def __ne__(self, other):
        return _LIBRARY.ne(self, other)

    def __getitem__(self, key):
        return _LIBRARY.getitem(self, key)


class Reference:
    """A hashable stand-in for a tensor (≈ TensorFlow's `Reference`): compares by identity."""

    __slots__ = ("_wrapped",)

    def __init__(self, wrapped):
        self._wrapped = wrapped

    def deref(self):
        return self._wrapped

    def __eq__(self, other):
        return isinstance(other, Reference) and self._wrapped is other._wrapped

    def __hash__(self):
        return id(self._wrapped)

    def __repr__(self):
        return f"<Reference to {self._wrapped!r}>"


# -----------------------------------------------------------------------------------------------
# EagerTensor
# -----------------------------------------------------------------------------------------------

class TensorMeta:
    """What an EagerTensor is besides its array: dtype and device, interned per (device, dtype).

    One shared object instead of two fields makes tensors cheaper to create, and lets the fast
    path compare dtype and device of two operands with one `is`. `fast_arith` / `fast_inexact`
    cache "the fast path is open (`FAST_PATH.placed_and_tapes`: nothing but gradient tapes
    anywhere), this is the default device, it runs kernels inline (the host), and the dtype is
    numeric / floating-or-complex"; `launch_arith` / `launch_inexact` say the same of a default
    device that launches its kernels (a GPU: the operators call its `run`). They are refreshed
    whenever `FAST_PATH.placed_and_tapes` or the devices change, which a gradient tape's entry
    and exit never do.
    """

    __slots__ = ("dtype", "device", "fast_arith", "fast_inexact", "launch_arith",
                 "launch_inexact")

    def __init__(self, dtype: DType, device: Device):
        self.dtype = dtype
        self.device = device
        self._refresh()
        _ALL_METAS.append(self)

    def _refresh(self):
        fast = FAST_PATH.placed_and_tapes and self.device is FAST_PATH.default
        inline = fast and self.device.inline
        launches = fast and not self.device.inline
        self.fast_arith = inline and self.dtype._arith
        self.fast_inexact = inline and self.dtype._inexact
        self.launch_arith = launches and self.dtype._arith
        self.launch_inexact = launches and self.dtype._inexact

    def __repr__(self):
        return f"<TensorMeta {self.dtype.name} on {self.device.name}>"


class _MetasOfDevice(dict):
    """dtype -> TensorMeta for one device, created on first use. Keys are numpy dtypes (what an
    array's `.dtype` gives) or, for values that are not arrays (resource handles, tensor lists),
    the eager DType they declare as their `.dtype`."""

    __slots__ = ("device",)

    def __missing__(self, key):
        dtype = key if key.__class__ is DType else BY_NUMPY.get(key)
        if dtype is None:
            raise KeyError(key)
        meta = self[key] = TensorMeta(dtype, self.device)
        return meta


class _Metas(dict):
    """Device -> _MetasOfDevice."""

    __slots__ = ()

    def __missing__(self, device):
        metas = self[device] = _MetasOfDevice()
        metas.device = device
        return metas


METAS = _Metas()


def meta_for(dtype: DType, device: Device) -> TensorMeta:
    """The interned TensorMeta for `dtype` on `device`."""
    return METAS[device][dtype.dtype if dtype.is_numpy_compatible else dtype]


#: Every TensorMeta, so that flipping the fast path touches a flat list (a GradientTape flips
#: it twice per step).
_ALL_METAS: list = []


def _refresh_metas():
    """Every meta's flags for the new `FAST_PATH.placed_and_tapes` state (a device scope, an
    interpreter or the profiler opened or closed somewhere, or the devices changed; not a
    gradient tape). A flat loop with no calls."""
    if not FAST_PATH.placed_and_tapes:  # switching off: no per-meta decisions needed
        for meta in _ALL_METAS:
            meta.fast_arith = meta.fast_inexact = meta.launch_arith = meta.launch_inexact = False
        return
    device = FAST_PATH.default
    inline = device.inline
    for meta in _ALL_METAS:
        if meta.device is device:
            dtype = meta.dtype
            if inline:
                meta.fast_arith = dtype._arith
                meta.fast_inexact = dtype._inexact
                meta.launch_arith = meta.launch_inexact = False
            else:
                meta.launch_arith = dtype._arith
                meta.launch_inexact = dtype._inexact
                meta.fast_arith = meta.fast_inexact = False
        else:
            meta.fast_arith = meta.fast_inexact = meta.launch_arith = meta.launch_inexact = False


FAST_PATH.listeners.append(_refresh_metas)


class EagerTensor(Tensor):
    """A tensor with a concrete value: an array (`numpy.ndarray`, numpy scalar for rank 0, or a
    `cupy.ndarray`) plus its `TensorMeta` (dtype and device).

    Hot object: created by every eager op. `_tape_id` is 0 until a gradient tape watches the
    tensor or records an op producing it (see eager.autodiff.tape); every constructor sets it.
    """

    __slots__ = ("_value", "_meta", "_tape_id", "__weakref__")

    # -- the value ---------------------------------------------------------------------------
    @property
    def shape(self) -> TensorShape:
        # An array's shape is already a tuple of valid ints: skip TensorShape's validation.
        return tuple.__new__(TensorShape, self._value.shape)

    @property
    def dtype(self) -> DType:
        return self._meta.dtype

    @property
    def _dtype(self) -> DType:
        return self._meta.dtype

    @property
    def _device(self) -> Device:
        return self._meta.device

    @property
    def device(self) -> str:
        return self._meta.device.name

    @property
    def backing_device(self) -> str:
        return self._meta.device.name

    @property
    def ndim(self) -> int:
        return self._value.ndim

    def numpy(self):
        """The value as numpy (a read-only view of the tensor's buffer on CPU; a numpy scalar
        for rank 0, as TensorFlow returns). Waits for pending work."""
        if not self._meta.dtype.is_numpy_compatible:  # variant/resource: the value object itself
            return self._value
        value = self._numpy_host()
        if value.ndim == 0:
            return value[()]
        view = value.view()
        view.flags.writeable = False
        return view

    def _numpy_host(self):
        return self._meta.device.to_host(self._value)

    def __array__(self, dtype=None, copy=None):
        value = np.asarray(self._numpy_host())
        if dtype is not None and np.dtype(dtype) != value.dtype:
            return value.astype(dtype)
        if copy:
            return value.copy()
        view = value.view()
        view.flags.writeable = False
        return view

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        value = self._meta.device.in_device_memory(self._value)  # (a GPU's host-held value)
        if isinstance(value, np.generic):
            value = np.asarray(value)
        kwargs = {}
        if stream is not None:
            kwargs["stream"] = stream
        if max_version is not None:
            kwargs["max_version"] = max_version
        if dl_device is not None:
            kwargs["dl_device"] = dl_device
        if copy is not None:
            kwargs["copy"] = copy
        return value.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        value = self._meta.device.in_device_memory(self._value)
        if isinstance(value, np.generic):
            value = np.asarray(value)
        return value.__dlpack_device__()

    # -- Python conversions -------------------------------------------------------------------
    # As TensorFlow 2.21 (which defers to numpy 1.x here): an empty tensor is False; a complex
    # tensor's float/int is its real part's, with numpy's ComplexWarning. Anything but one
    # element is an error, as in numpy 2 (ValueError for bool, TypeError for float/int/complex).
    def __bool__(self):
        value = self._numpy_host()
        if value.size == 0:
            return False
        return bool(value)

    def _to_real_python(self, convert):
        """`convert` (float or int) of the value; for complex tensors, of the real part, with
        numpy's ComplexWarning once the conversion has succeeded (as TensorFlow does)."""
        value = self._numpy_host()
        if not self._meta.dtype.is_complex:
            return convert(value)
        result = convert(value.real)
        warnings.warn("Casting complex values to real discards the imaginary part",
                      np.exceptions.ComplexWarning, stacklevel=3)
        return result

    def __float__(self):
        return self._to_real_python(float)

    def __int__(self):
        return self._to_real_python(int)

    def __complex__(self):
        return complex(self._numpy_host())

    def __index__(self):
        value = self._numpy_host()
        if not self._meta.dtype.is_integer or value.ndim != 0:
            raise TypeError(f"Only integer scalar tensors can be used as an index; this one is "
                            f"{self._meta.dtype.name} with shape {self.shape}.")
        return operator.index(value)

    def __len__(self):
        if self._value.ndim == 0:
            raise TypeError("len is not well defined for a rank-0 tensor.")
        return self._value.shape[0]

    def __iter__(self):
        if self._value.ndim == 0:
            raise TypeError("Cannot iterate over a scalar tensor.")
        for i in range(self._value.shape[0]):
            yield self[i]

    def __copy__(self):
        return self  # immutable

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        # A pickled tensor is its host value; unpickling places it on the current device, as
        # `eager.constant` would.
        return _unpickle, (np.asarray(self._numpy_host()), self._meta.dtype.name)

    def __format__(self, format_spec):
        if self._value.ndim == 0:
            return format(self._numpy_host()[()], format_spec)
        return format(str(self), format_spec)

    def __repr__(self):
        # TensorFlow's shape, so output printed from TF's guides reads the same; the device is
        # named only when it is not the host, as PyTorch does.
        device = self._meta.device.name
        where = "" if device == "CPU:0" else f", device={device}"
        return (f"<eager.Tensor: shape={self.shape}, dtype={self._meta.dtype.name}{where}, "
                f"numpy={numpy_repr_text(self._numpy_host())}>")

    def __str__(self):
        text = np.array2string(np.asarray(self._numpy_host()), separator=" ")
        sep = "\n" if "\n" in text else ""  # as TensorFlow: a matrix starts on its own line
        return f"eager.Tensor({sep}{text}, shape={self.shape}, dtype={self._meta.dtype.name})"

    def _repr_mimebundle_(self, include=None, exclude=None):
        """What a notebook shows: the HTML display, and `repr` as its text, except that a value
        a device has not finished shows as pending instead of being waited for (a terminal's
        `repr` waits, as TensorFlow's does)."""
        device = self._meta.device
        if (device.defers_kernels and self._meta.dtype.is_numpy_compatible
                and not device.ready_event(self._value).query()):
            text = unavailable_repr(str(self.shape), self._meta.dtype.name, device.name,
                                    "pending")
        else:
            text = repr(self)
        return {"text/plain": text, "text/html": self._repr_html_()}

    def _repr_html_(self):
        """A notebook's display (`eager.base.rich_display`): shape, dtype, device and the values,
        summarised as numpy summarises them. A value that a device running kernels later (a
        GPU's stream) has not finished shows as pending: displaying never waits for it."""
        device = self._meta.device
        dtype = self._meta.dtype
        value = self._value
        shape = str(self.shape)
        if not dtype.is_numpy_compatible:  # a resource handle, a TensorList: no array to show
            return tensor_card("eager.Tensor", shape, dtype.name, device.name,
                               state=f"{dtype.name} value: {value!r}")
        if device.defers_kernels and not device.ready_event(value).query():
            return tensor_card("eager.Tensor", shape, dtype.name, device.name,
                               state="pending: the device is still computing this value "
                                     "(.numpy() waits for it)")
        return tensor_card("eager.Tensor", shape, dtype.name, device.name,
                           values=device.to_host(value))

    # -- graph-only attributes ---------------------------------------------------------------
    @property
    def op(self):
        raise AttributeError("Tensor.op is undefined when executing eagerly (only tensors in a "
                             "traced function's graph have an op).")

    @property
    def graph(self):
        raise AttributeError("Tensor.graph is undefined when executing eagerly.")

    @property
    def name(self):
        raise AttributeError("Tensor.name is undefined when executing eagerly.")

    def set_shape(self, shape):
        if not self.shape.is_compatible_with(shape):
            raise ValueError(f"Tensor's shape {self.shape} is not compatible with supplied shape "
                             f"{as_shape(shape)}.")


def _fast_operators(name, compute, ufunc, inexact_only):
    """The forward and reflected EagerTensor operators for `compute` (e.g. `operator.add`).

    They compute on the arrays directly when the operands' TensorMeta says the fast path is on
    for their dtype and device and both operands share it (or the other operand is a Python
    float/int and the dtype is floating or complex, which is how TensorFlow would convert it),
    and numpy raises nothing. Everything else goes to the op library (`_LIBRARY`), which also raises
    every error. A Python int with an integer tensor goes the slow way: converting it needs
    TensorFlow's range check.

    For large arrays, the result is written into the buffer of an operand that is an unobserved
    temporary (`eager.core.buffer_reuse`), so `p - lr * g` allocates once, not twice.

    A floating-point signal (`1/0` under the user's `warnings` filter "error" or
    `np.seterr(all="raise")`) is an exception like any other: the op library runs the op again
    and dispatch returns its IEEE result (`eager.base.ieee`). Only a result written into an
    operand's buffer is kept where it is, since that operand is gone: numpy signals after the
    whole result is written.

    Under a gradient tape (`FAST_PATH.kernel_and_tapes`) the same path runs, and a result computed
    from an operand some tape follows (a nonzero tape id, while any tape exists:
    `not FAST_PATH.kernel_only`) is recorded (`set_operator_recorder`) exactly as dispatch would
    record it. Such an operand never has its buffer reused (the tape may keep it for the
    gradient), and with a Python number it goes the slow way, which converts the number into the
    constant tensor the tape records. With no tape anywhere, tape ids mean nothing: a training
    loop's `p - lr * g` after the tape still reuses buffers.

    Hot path: every small-tensor operator runs these.
    """

    reflected_name = f"__r{name}__"

    def forward(self, other):
        meta = self._meta
        # No other local may refer to `other`: elision counts the references to it (see
        # `eager.core.buffer_reuse`, whose calibration probe has this frame's shape).
        if other.__class__ is EagerTensor:
            ok = meta is other._meta and (meta.fast_inexact if inexact_only else meta.fast_arith)
            other_value = other._value
            # Followed by a tape that may record this op: only while tapes exist at all.
            followed = (self._tape_id or other._tape_id) and not FAST_PATH.kernel_only
        else:
            oc = other.__class__
            ok = ((oc is float or oc is int) and meta.fast_inexact
                  and (not self._tape_id or FAST_PATH.kernel_only))
            other_value = other
            followed = False
        if ok:
            self_value = self._value
            try:
                if followed or self_value.size < _MIN_ELISION:
                    value = compute(self_value, other_value)
                else:
                    out = writable_operand(self, self_value, other, other_value)
                    if out is None:
                        value = compute(self_value, other_value)
                    else:
                        try:
                            value = ufunc(self_value, other_value, out=out)
                        except FP_SIGNALS:  # after writing all of `out`: the IEEE result,
                            value = out  # and the slow path could not recompute it from there
            except Exception:  # noqa: BLE001 - the slow path raises the op's own error
                pass
            else:
                t = EagerTensor()
                t._value = value
                t._meta = meta
                t._tape_id = 0
                if followed:
                    _record_operator(name, self, other, t)
                return t
        elif (other.__class__ is EagerTensor and meta is other._meta
              and (meta.launch_inexact if inexact_only else meta.launch_arith)):
            t = _launch_operator(name, self, other, meta)
            if t is not None:
                return t
        elif ((other.__class__ is float or other.__class__ is int) and meta.launch_inexact
              and (not self._tape_id or FAST_PATH.kernel_only)):
            t = _launch_number_operator(name, self, other, meta, False)
            if t is not None:
                return t
        elif issubclass(other.__class__, _READING_OPERANDS):
            return getattr(other, reflected_name)(self)  # it reads, then comes back here
        elif _HOOKS.issue_operator is not None:  # an interpreter may issue it (async dispatch)
            t = _HOOKS.issue_operator(name, self, other)
            if t is not None:
                return t
        return getattr(_LIBRARY, name)(self, other)

    def reflected(self, other):
        # Only non-EagerTensor operands get here (Python tries other.__op__ first).
        meta = self._meta
        oc = other.__class__
        if ((oc is float or oc is int) and meta.fast_inexact
                and (not self._tape_id or FAST_PATH.kernel_only)):
            self_value = self._value
            try:
                if self_value.size >= _MIN_ELISION:
                    out = writable_operand(self, self_value, None, None)
                    if out is None:
                        value = compute(other, self_value)
                    else:
                        try:
                            value = ufunc(other, self_value, out=out)
                        except FP_SIGNALS:  # `out` is written: see `forward`
                            value = out
                else:
                    value = compute(other, self_value)
            except Exception:  # noqa: BLE001
                pass
            else:
                t = EagerTensor()
                t._value = value
                t._meta = meta
                t._tape_id = 0
                return t
        elif ((oc is float or oc is int) and meta.launch_inexact
              and (not self._tape_id or FAST_PATH.kernel_only)):
            t = _launch_number_operator(name, self, other, meta, True)
            if t is not None:
                return t
        return getattr(_LIBRARY, name)(other, self)

    return forward, reflected


def _launch_operator(name, x, y, meta):
    """`x <name> y` on the default device when it launches kernels (a GPU), for operands that
    share `meta`: the operator's op (`register_operator_ops`) handed to the device's `run`, as
    dispatch's `run_kernel` hands it, and the result recorded on tapes as `forward` records
    it; None when the device's launch raised (the op library then raises the op's error).
    Hot path: every small-tensor operator on a GPU; the result is made inline."""
    try:
        value = meta.device.run(_OPERATOR_OPS[name], (x._value, y._value), _NO_ATTRS, (x, y))
    except Exception:  # noqa: BLE001 - the slow path raises the op's own error
        return None
    t = EagerTensor()
    t._value = value
    t._meta = meta  # `+ - * /` of one dtype keep it
    t._tape_id = 0
    if x._tape_id or y._tape_id:
        _record_operator(name, x, y, t)
    return t


def _launch_number_operator(name, x, number, meta, number_first):
    """`x <name> number` (`number <name> x` when `number_first`) on the default device when it
    launches kernels, for a floating or complex `x` and a Python float or int: the number as
    the constant tensor the op library would make of it (`convert_number`), kept per value
    for `x`'s dtype and device (`_NUMBER_TENSORS`), then launched as `_launch_operator`
    launches two tensors. Why: converting the number took most of such an operator's host
    time on a GPU (`x * 1.5`, `1.0 - x`). None sends the operator to the op library: for NaN
    and zeros (equal keys for values a kernel tells apart), a number the conversion refuses,
    or a launch that raised. Untaped `x` only, as the inline fast path."""
    if number != number or not number:
        return None
    kept = _NUMBER_TENSORS.get(meta)
    if kept is None:
        kept = _NUMBER_TENSORS[meta] = {}
    constant = kept.get(number)
    if constant is None:
        convert = _HOOKS.convert_number
        if convert is None:
            return None
        try:
            constant = convert(number, meta.dtype)
        except Exception:  # noqa: BLE001 - the op library raises the operator's own error
            return None
        if constant.__class__ is not EagerTensor or constant._meta is not meta:
            return None
        if len(kept) >= _NUMBERS_KEPT:
            kept.clear()
        kept[number] = constant
    if number_first:
        return _launch_operator(name, constant, x, meta)
    return _launch_operator(name, x, constant, meta)


#: Per TensorMeta (a GPU's dtype), the Python numbers its operators met, as constant tensors of
#: that dtype and device (`_launch_number_operator`); at most `_NUMBERS_KEPT` per meta.
_NUMBER_TENSORS: dict = {}
_NUMBERS_KEPT = 256


#: The op each fast-path operator stands for ("add": AddV2, ...), installed by the op library
#: (`register_operator_ops`); the launching path hands it to the device.
_OPERATOR_OPS: dict = {}
_NO_ATTRS: dict = {}


def register_operator_ops(ops) -> None:
    """Installs the ops (`OpDef`s) that `+ - * /` run ("add", "sub", "mul", "truediv"), which
    the operators' launching path (a GPU's) hands to the device; called once by `eager.ops`."""
    _OPERATOR_OPS.update(ops)


#: Classes whose instances `+ - * /` of an EagerTensor leave to the instance's reflected
#: operator (`register_reading_operand`).
_READING_OPERANDS: tuple = ()


def register_reading_operand(cls) -> None:
    """Makes `tensor + obj` (and `- * /`) for instances of `cls` and its subclasses call
    `obj.__radd__(tensor)` (and so on) instead of the op library. For variables
    (`eager.variables`), whose reflected operators read the value and apply the tensor's own
    operator to it: `x @ w + b` with a variable `b` then takes the operators' fast path instead
    of converting `b` in the op library, which cost several times the operator itself. Same
    values, records and errors either way."""
    global _READING_OPERANDS
    if cls not in _READING_OPERANDS:
        _READING_OPERANDS = (*_READING_OPERANDS, cls)


_MIN_ELISION = MIN_ELEMENTS
EagerTensor.__add__, EagerTensor.__radd__ = _fast_operators("add", operator.add, np.add, False)
EagerTensor.__sub__, EagerTensor.__rsub__ = _fast_operators("sub", operator.sub, np.subtract,
                                                            False)
EagerTensor.__mul__, EagerTensor.__rmul__ = _fast_operators("mul", operator.mul, np.multiply,
                                                            False)
EagerTensor.__truediv__, EagerTensor.__rtruediv__ = _fast_operators(
    "truediv", operator.truediv, np.true_divide, True)


def wrap_value(value, device: Device, dtype: DType | None = None) -> EagerTensor:
    """An EagerTensor around `value`, which lives on `device`: an array (the tensor takes its
    dtype), or with `dtype` any value of that eager dtype (a resource handle, a TensorList).
    The one constructor outside the hot paths (see the module doc)."""
    t = EagerTensor()
    t._value = value
    metas = METAS[device]
    t._meta = metas[value.dtype] if dtype is None else metas[
        dtype.dtype if dtype.is_numpy_compatible else dtype]
    t._tape_id = 0
    return t


def _unpickle(array, dtype_name):
    """The tensor `EagerTensor.__reduce__` describes: `array` (host values of dtype
    `dtype_name`) on the current device."""
    device = placement_device()
    return wrap_value(array if device.inline else device.from_host(array), device)


def is_tensor(x) -> bool:
    """≈ `tf.is_tensor`: a Tensor (eager or symbolic) or a tensor-like composite (ragged,
    sparse, IndexedSlices); not a TypeSpec, nor a container of tensors (PerReplica)."""
    return isinstance(x, (Tensor, IndexedSlices)) or (
        isinstance(x, CompositeTensor) and x._tensor_like)


# -----------------------------------------------------------------------------------------------
# IndexedSlices
# -----------------------------------------------------------------------------------------------

class IndexedSlices:
    """≈ `tf.IndexedSlices`: rows `values` at `indices` of a tensor of shape `dense_shape`.

    Gradients of gathers are IndexedSlices so that large embedding tables are never densified
    unless a consumer needs a dense tensor; `convert_to_tensor` densifies (summing duplicates).
    """

    __slots__ = ("_values", "_indices", "_dense_shape")

    def __init__(self, values, indices, dense_shape=None):
        self._values = values
        self._indices = indices
        self._dense_shape = dense_shape

    @property
    def values(self):
        return self._values

    @property
    def indices(self):
        return self._indices

    @property
    def dense_shape(self):
        return self._dense_shape

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def device(self):
        return self._values.device

    @property
    def shape(self) -> TensorShape:
        if self._dense_shape is None:
            return TensorShape([None]).concatenate(self._values.shape[1:])
        ds = self._dense_shape
        if isinstance(ds, EagerTensor):
            return TensorShape([int(d) for d in ds.numpy()])
        if isinstance(ds, Tensor):
            return TensorShape([None] * (ds.shape[0] if ds.shape.rank else 0))
        return TensorShape(ds)

    def __neg__(self):
        return IndexedSlices(-self._values, self._indices, self._dense_shape)

    def __repr__(self):
        return (f"IndexedSlices(indices={self._indices!r}, values={self._values!r}, "
                f"dense_shape={self._dense_shape!r})")


def numpy_repr_text(value) -> str:
    """A value as a tensor's `repr` shows it, as TensorFlow's: a scalar as its Python item
    (`1.0`, `7`, `True`), an array as numpy's `repr` (`array([1., 2.], dtype=float32)`), on its
    own line when it spans several."""
    if isinstance(value, bytes):  # a rank-0 string's element
        return repr(value)
    value = np.asarray(value)
    if value.ndim == 0 and value.dtype.kind != "S":
        return repr(value.item())
    text = repr(value)
    return "\n" + text if "\n" in text else text


def unavailable_repr(shape, dtype_name, device_name, state) -> str:
    """A tensor's `repr` with `state` ("pending", "failed: ...") in place of a value that is
    not computed: what a notebook shows as text for a tensor it must not wait for."""
    where = "" if device_name == "CPU:0" else f", device={device_name}"
    return f"<eager.Tensor: shape={shape}, dtype={dtype_name}{where}, numpy=<{state}>>"
