"""The op registry: one `OpDef` record per op, the single definition every mode interprets.

An OpDef holds what each way of running an op needs, and nothing mode-specific:

* `kernel(xp, *arrays, **attrs)`: computes outputs from arrays of the device's array module
  (numpy or cupy). Eager execution (sync or async) calls it.
* `infer(*inputs, **attrs)`: output `TensorSpec`s from the inputs' shapes and dtypes alone (inputs
  are anything with `.shape`/`.dtype`, shapes may hold None). It never touches data. Tracing and
  asynchronous dispatch use it to type outputs before any kernel runs; eager execution asks it
  to explain a kernel failure. It raises the op's errors for invalid inputs.
* effects: `stateful` (never folded, merged or pruned; ordered by automatic control dependencies),
  `resource_reads` / `resource_writes` (indices of resource-handle inputs the op reads/writes),
  `collective` (a stateful op that exchanges data with other processes: traced, such ops get a
  chain of their own, in program order, so every worker issues them in the same order).
* `gradient`: the gradient function, registered beside the op by the op library, with what it
  needs kept (`def_gradient`); `differentiable=False` for ops whose outputs have no gradient.
* `num_outputs`: 1, a fixed count (outputs are a tuple), or None when it varies per call
  (Unpack, Split: inference's tuple says how many).
* `dtypes`: the dtypes the op's main type parameter accepts (used when converting inputs).
  Any other dtype is an `InvalidArgumentError` eagerly (TensorFlow: "Value for attr 'T' ... is
  not in the list of allowed values"), a `TypeError` while tracing.
* `no_kernel_dtypes`: dtypes outside `dtypes` that TensorFlow's op *declares* but has no CPU
  kernel for (MatMul uint8, FloorDiv complex64): those are a `NotFoundError` eagerly, as in
  TensorFlow ("Could not find device for node"), instead of an `InvalidArgumentError`.
* `device_types`: device kinds that have a kernel (soft placement falls back to the CPU).
* `infer_from_types`: `infer` reads only dtypes, devices, shapes and attributes, never values
  (elementwise ops, matmul), so asynchronous dispatch may reuse its result for equal inputs.
* `elementwise`: the op computes each element of its one output from the corresponding
  (broadcast) elements of its inputs alone, with no state and no resource inputs (arithmetic,
  comparisons, casts, selects, clips, activations and their gradients). Fusion may then merge
  it into one elementwise kernel with its neighbours (`runtime.passes.fusion`), and
  vectorisation may run it unchanged on operands with an extra batch axis
  (`runtime.vectorize`).
* `infix`: the Python operator ("+", "*", ...) that is the whole kernel of a binary op on two
  arrays (`kernel(xp, x, y)` is `x <infix> y`), or None. Generated code (compiled programs,
  fused kernels) writes the expression instead of calling the kernel.
* `ufunc`, `donatable_inputs`: for an op whose kernel on two arrays of one dtype is exactly
  `ufunc(x, y)` for a numpy ufunc (or a function called like one, `ufunc(x, y, out=...)`),
  that function, and the positions of the inputs whose buffer may receive the result
  (`ufunc(x, y, out=x)`) when the input is dead afterwards and has the output's shape and
  dtype. The compiler then writes the result into the dying input instead of allocating
  (buffer donation, `runtime.compiler`). None and () for every other op.
* `host_inputs`: positions of inputs the kernel reads on the host, whatever device it runs on
  (TensorFlow's HostMemory: a list's index, an int32 the kernel turns into a Python int).
  Dispatch hands such an input over as a host (numpy) array: as it is when it lives on a CPU,
  so that a GPU kernel taking a counter kept on the CPU makes the host wait for nothing, and
  copied to the host otherwise. () for most ops.
* `keeps_input_devices`: False for most ops. True for an op whose kernel runs sub-graphs
  (`If`, `Case`, `While`): an input living on another device than the op's reaches the kernel
  as its EagerTensor, not copied, so the sub-graph's ops take it where it is (a loop on a
  GPU does not copy its captured weights to the host and back at every iteration).
* `returns_tensors`: False for most ops. True for an op with `num_outputs` None whose kernel
  may return EagerTensors among its outputs: each is an output as it is, on its own device.
  A loop's results thus stay where its body made them (`If`, `Case`, `While`) instead of
  being copied to the host when it ends, and a partition's `_Recv` hands on a value where it
  lives (`eager.runtime.send_recv`).
* `cupy_kernel(xp, *arrays, **attrs)`: None for most ops. For an op whose GPU launch runs
  through a precompiled CuPy kernel object (`eager.ops.cupy_kernels`), what the CUDA backend
  calls instead of `kernel`: the same results, falling back to `kernel` for what it does not
  cover. Every other backend, and fusion's tracing, calls `kernel`.
* `replay(inputs, attrs)`: None for ordinary ops. For ops that contain sub-graphs (`If`, `Case`,
  `While`), how a graph runner replays the op through dispatch, op by op, when a gradient tape
  records it (so the tape sees the ops of the branch taken instead of one opaque op).

Attributes (`attrs`) are keyword arguments that are not tensors: axes, shapes, flags. They must be
hashable so that graphs can compare nodes.
"""

from __future__ import annotations

from ..base.errors import InvalidArgumentError, OpError, ResourceExhaustedError

__all__ = ["OpDef", "register_op", "get_op", "registered_ops", "op_error", "describe_inputs",
           "NO_ATTRS", "out_of_memory_error"]

#: Shared empty attrs mapping for ops without attributes (never mutated).
NO_ATTRS: dict = {}

_REGISTRY: dict = {}


class OpDef:
    """One op, defined once (see the module doc)."""

    __slots__ = ("name", "kernel", "infer", "gradient", "grad_keeps_inputs", "grad_keeps_outputs",
                 "stateful", "resource_reads", "resource_writes", "num_outputs", "differentiable",
                 "dtypes", "no_kernel_dtypes", "device_types", "infer_from_types", "doc", "replay",
                 "infix", "elementwise", "ufunc", "donatable_inputs", "collective",
                 "launch_plans", "cupy_kernel", "host_inputs", "keeps_input_devices",
                 "returns_tensors")

    def __init__(self, name, kernel, infer, *, stateful=False, resource_reads=(),
                 resource_writes=(), num_outputs=1, differentiable=True, dtypes=None,
                 no_kernel_dtypes=frozenset(), device_types=frozenset({"CPU", "GPU"}),
                 infer_from_types=False, elementwise=False, infix=None, ufunc=None,
                 donatable_inputs=(), collective=False, host_inputs=(), doc=""):
        self.name = name
        self.kernel = kernel
        self.infer = infer
        self.gradient = None
        self.grad_keeps_inputs = ()
        self.grad_keeps_outputs = ()
        self.stateful = stateful or bool(resource_writes) or collective
        self.collective = collective
        self.resource_reads = tuple(resource_reads)
        self.resource_writes = tuple(resource_writes)
        self.num_outputs = num_outputs
        self.differentiable = differentiable
        self.dtypes = dtypes
        self.no_kernel_dtypes = frozenset(no_kernel_dtypes)
        self.device_types = frozenset(device_types)
        # True when `infer` depends only on the inputs' dtypes, devices and shapes (and the
        # attributes), never on their values: its result may then be cached (async dispatch).
        self.infer_from_types = infer_from_types
        # A device's cache of what launching this op makes (the simulated GPU's output shapes,
        # per input types and shapes): kept on the op, so it goes with an op made per function
        # (a fused kernel) instead of keeping it alive.
        self.launch_plans = {}
        self.doc = doc
        # See the module doc: set by the control-flow package on its (unregistered) OpDefs.
        self.replay = None
        # Facts the compiler and its passes read (module doc): declared where the op is
        # registered, so no pass keeps a table of ops.
        self.elementwise = elementwise
        self.infix = infix
        if donatable_inputs and ufunc is None:
            raise ValueError(f"Op {name!r}: donatable_inputs need the ufunc that writes into "
                             f"them.")
        self.ufunc = ufunc
        self.donatable_inputs = tuple(donatable_inputs)
        # See the module doc: set by the op library's CuPy kernel layer (`ops.cupy_kernels`).
        self.cupy_kernel = None
        self.host_inputs = frozenset(host_inputs)
        # See the module doc: set by the control-flow package on its OpDefs.
        self.keeps_input_devices = False
        self.returns_tensors = False

    @property
    def resource_inputs(self) -> tuple:
        return tuple(sorted(set(self.resource_reads) | set(self.resource_writes)))

    def def_gradient(self, fn=None, *, keep_inputs=(), keep_outputs=()):
        """Registers `fn(forward, *output_grads) -> input grads` as this op's gradient (usable
        as a decorator, with or without arguments). `forward` is the op as a tape recorded it
        (`eager.autodiff.tape.RecordedOp`: its kept inputs and outputs, attributes, and every
        input's shape and dtype).

        `keep_inputs` / `keep_outputs` (tuples of indices, or True for all) name the tensors the
        gradient reads: a tape keeps exactly those alive, so `exp` keeps its output and `add`
        keeps nothing (every input's shape and dtype are always available).
        """
        def register(f):
            if self.gradient is not None:
                raise ValueError(f"Op {self.name!r} already has a gradient.")
            self.gradient = f
            self.grad_keeps_inputs = keep_inputs if keep_inputs is True else tuple(keep_inputs)
            self.grad_keeps_outputs = (keep_outputs if keep_outputs is True
                                       else tuple(keep_outputs))
            return f

        return register(fn) if fn is not None else register

    def __repr__(self):
        return f"<OpDef {self.name}>"


def register_op(name, kernel, infer, **options) -> OpDef:
    """Creates and registers an OpDef; names are unique."""
    if name in _REGISTRY:
        raise ValueError(f"Op {name!r} is already registered.")
    op = OpDef(name, kernel, infer, **options)
    _REGISTRY[name] = op
    return op


def get_op(name: str) -> OpDef:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"No op named {name!r} is registered.") from None


def registered_ops() -> list:
    return list(_REGISTRY.values())


def _describe_one(x) -> str:
    dtype = getattr(x, "dtype", None)
    shape = getattr(x, "shape", None)
    name = getattr(dtype, "name", type(x).__name__)
    if shape is None:
        return name
    if getattr(shape, "rank", 0) is None:
        return f"{name}[?]"
    return f"{name}[{','.join('?' if d is None else str(d) for d in shape)}]"


def describe_inputs(inputs) -> str:
    """'float32[2,3], int32[]': the inputs' dtypes and shapes, for error messages."""
    return ", ".join(_describe_one(x) for x in inputs)


def op_error(op_name, message, inputs=None, cls=InvalidArgumentError):
    """An OpError whose message names the op (and the inputs' dtypes and shapes when given)."""
    if inputs is not None:
        message = f"{message} (inputs: {describe_inputs(inputs)})"
    return cls(None, op_name, f"{op_name}: {message} [Op:{op_name}]")


# TensorFlow's DataTypeString names where they differ from eager's.
_TF_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "half"}


def out_of_memory_error(op_name, shape=None, dtype=None, device=None):
    """TensorFlow's ResourceExhaustedError for an allocation that failed: "OOM when allocating
    tensor with shape[2,3] and type float on /job:localhost/replica:0/task:0/device:CPU:0 by
    allocator cpu" (the parts not known left out)."""
    what = "tensor"
    if shape is not None:
        name = getattr(dtype, "name", str(dtype))
        what = (f"tensor with shape[{','.join(str(int(d)) for d in shape)}] and type "
                f"{_TF_TYPE_NAMES.get(name, name)}")
    where = ""
    if device is not None:
        allocator = ("cpu" if device.device_type == "CPU"
                     else f"{device.device_type}_{device.index}_bfc")
        where = f" on {device.full_name} by allocator {allocator}"
    return ResourceExhaustedError(None, op_name, f"{op_name}: OOM when allocating {what}{where} "
                                                 f"[Op:{op_name}]")


def is_op_error(exc) -> bool:
    return isinstance(exc, OpError)


def kinds(dtypes) -> str:
    """Readable list of dtype names for messages."""
    return ", ".join(sorted(d.name for d in dtypes))

