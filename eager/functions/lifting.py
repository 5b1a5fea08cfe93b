"""Variables and tracing: creating them on a Function's first call, and variables as arguments.

TensorFlow's rule (≈ `tf.function`): a traced function may create variables on its first call
only, and only as singletons. A variable is state that outlives a call, so it cannot live in the
graph; it is created *eagerly*, outside the trace, and the graph captures its handle like any
closed-over variable. Here, as in TensorFlow:

* the Function's first trace runs under `LiftingCreator`, which creates each variable eagerly
  (`init_scope`: the thread's interpreter and tapes are set aside), running a callable
  initializer eagerly too, so initializers run once, at creation. An initial value that is a
  tensor of the graph being traced (`Variable(eager.zeros([3]))`) is lifted: the operations it
  depends on are run again, eagerly; one that depends on an argument cannot be: ValueError;
* if that trace created variables, the Function traces a second time under `refusing_creator`
  (every creation raises ValueError). The guarded singleton pattern (`if self.v is None:
  self.v = Variable(...)`) creates nothing the second time and passes; an unguarded
  `Variable(...)` fails at once, on the first call, instead of silently making a new variable
  per trace. The second trace is the one kept;
* every later trace runs under `refusing_creator`.

The creators are installed through the ordinary creator stack (`prioritized_creator_scope`), at a
priority above any user scope, so user creators still run (after ours) on the first trace.

Variables as arguments: keyed by shape and dtype (TensorFlow 2.21), so one trace serves every
variable of that shape and dtype. In the trace the argument is a `VariableArgument`: a variable
whose handle is a stand-in eager tensor (`handle_stand_in`) that the graph captures in the
argument's place, so resource-op inference reads its dtype and shape from the handle value as
for any variable; each call feeds that input with the passed variable's handle tensor.
"""

from __future__ import annotations

import contextlib

from ..core import context as _context
from ..base import dtypes as _dt
from ..graph import SymbolicTensor
from ..graph.placeholder import PLACEHOLDER
from ..core import dispatch as _dispatch
from ..tensor import wrap_value
from ..variables import ResourceVariable, Variable

__all__ = ["init_scope", "LiftingCreator", "refusing_creator", "CREATOR_PRIORITY",
           "handle_stand_in", "VariableArgument"]

#: Above every user `variable_creator_scope` (priority 100): the function's rule is checked first.
CREATOR_PRIORITY = 1 << 30

_SINGLETON_MESSAGE = (
    "tf.function only supports singleton tf.Variables created on the first call. Make sure the "
    "tf.Variable is only created once or created outside tf.function. (eager.function: this "
    "trace of {name!r} tried to create a variable; create it on the first call behind a guard "
    "such as `if self.v is None:`, or outside the function.)")


@contextlib.contextmanager
def init_scope():
    """≈ `tf.init_scope`: runs its body eagerly although a function is being traced — the
    thread's interpreter (the graph being built) and gradient tapes are set aside, and restored
    on exit. Device and name scopes stay as they are (the variable is named and placed as if
    created where the code stands)."""
    st = _context.thread_state()
    saved_interpreter, saved_tapes = st.interpreter, st.tapes
    st.interpreter = None
    st.tapes = []
    try:
        yield
    finally:
        st.interpreter = saved_interpreter
        st.tapes = saved_tapes


class LiftingCreator:
    """The creator of a Function's first trace: creates variables eagerly (see the module doc)
    and remembers them in `created`."""

    __slots__ = ("created", "_name")

    def __init__(self, name):
        self.created = []
        self._name = name

    def __call__(self, next_creator, **kwargs):
        initial_value = kwargs.get("initial_value")
        with init_scope():
            if callable(initial_value) and not isinstance(initial_value, Variable):
                initial_value = initial_value()  # the initializer runs once, eagerly
            if isinstance(initial_value, SymbolicTensor):
                initial_value = _lift(initial_value, self._name, kwargs.get("name"))
            kwargs["initial_value"] = initial_value
            variable = next_creator(**kwargs)
        self.created.append(variable)
        return variable


def _lift(t, function_name, variable_name):
    """The value of `t`, a tensor of the graph being traced, computed eagerly now by re-running
    the operations it depends on (≈ TensorFlow's lifting of initializers out of the function):
    captures give their eager values; a dependence on an argument cannot be lifted (ValueError,
    TensorFlow's kind of message). Runs under `init_scope`."""
    graph = t.graph
    needed, stack = set(), [t.op]
    while stack:
        op = stack.pop()
        if id(op) in needed:
            continue
        needed.add(id(op))
        stack.extend(i.op for i in op.inputs)
    captured = {id(placeholder): value for value, placeholder in graph.captures}
    values = {}
    for op in graph.get_operations():  # program order: a topological order
        if id(op) not in needed:
            continue
        if op.op_def is PLACEHOLDER:
            value = captured.get(id(op.outputs[0]))
            if value is None:
                raise ValueError(
                    f"Argument `initial_value` ({t!r}) could not be lifted out of "
                    f"eager.function {function_name!r}: it depends on the function's argument "
                    f"{op.name!r} (tried to create variable with name={variable_name!r}). "
                    "Compute the initial value from values outside the function, or pass a "
                    "callable initial_value (e.g. `Variable(lambda: eager.zeros([10, 40]))`).")
            values[id(op.outputs[0])] = value
            continue
        inputs = tuple(values[id(i)] for i in op.inputs)
        if op.device:
            with _context.device(op.device):
                out = _dispatch.execute(op.op_def, inputs, op.attrs)
        else:
            out = _dispatch.execute(op.op_def, inputs, op.attrs)
        outs = out if out.__class__ is tuple else (out,)
        for symbolic, value in zip(op.outputs, outs):
            values[id(symbolic)] = value
    return values[id(t)]


def refusing_creator(name):
    """The creator of every trace but the first (and of the first call's second trace)."""

    def refuse(next_creator, **kwargs):
        raise ValueError(_SINGLETON_MESSAGE.format(name=name))

    return refuse


# -----------------------------------------------------------------------------------------------
# Variables as arguments
# -----------------------------------------------------------------------------------------------

def handle_stand_in(variable):
    """A new eager resource tensor holding `variable`'s handle value: what a Variable argument's
    reads and writes use while tracing. The graph captures it like any eager tensor (so op
    inference sees the handle's dtype and shape, its side channel), and the ConcreteFunction
    feeds that capture with the handle of whichever variable a call passes. A tensor of its own,
    not `variable.handle`, so a use of the same variable closed over stays a real capture."""
    handle = variable._handle
    return wrap_value(handle, handle.device, _dt.resource)


class VariableArgument(ResourceVariable):
    """A Variable argument inside a trace: a ResourceVariable whose handle is a stand-in
    (`handle_stand_in`) fed with the actual variable's handle at each call. It shares the
    trace-time variable's storage for bookkeeping only (what `assign` returns compares storage
    versions, which tracing never changes); every op reaches the graph through the handle."""

    __slots__ = ()

    @classmethod
    def standing_for(cls, variable, handle_tensor):
        arg = object.__new__(cls)
        arg._handle = variable._handle
        arg._handle_tensor = handle_tensor
        arg._deleter = None  # the real variable owns the resource
        arg._name = variable.name
        arg._trainable = variable.trainable
        arg._dtype = variable.dtype
        arg._shape = variable.shape
        arg._constraint = variable.constraint
        arg._meta = variable._meta
        return arg

    def __repr__(self):
        return (f"<eager.Variable argument '{self.name}' shape={self._shape} "
                f"dtype={self._dtype.name}>")
