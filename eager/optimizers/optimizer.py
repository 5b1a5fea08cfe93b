"""The optimizer base class (≈ Keras 3's `BaseOptimizer`, which `tf.optimizers` names).

What every optimizer shares: the step counter (`iterations`), the learning rate (a float held
in a variable, a schedule called with the step, or a zero-argument callable), slot variables
created lazily the first time a variable is seen, gradient filtering and casting, variable
constraints, the checkpoint children, and Keras 3's base options (clipping, weight decay,
loss scaling, gradient accumulation, moving averages: `eager.optimizers.options`, consulted only
when one is set). A subclass says which slots it needs, how to turn the hyperparameters into
the scalar inputs of its fused ops for one dtype (`_scalars`), and which fused op runs for a
dense and for an IndexedSlices gradient (`_update`).

The update of each variable is one fused op from `eager.ops.training_ops`: atomic, in place
when the variable's buffer is not shared. When nothing can observe the difference (no tape,
scope or interpreter anywhere: `eager.core.dispatch.kernel_only`) the kernel runs without
dispatch (`dispatch.run_bare`), as `Variable.assign_add` does, which keeps a step's Python
overhead to a few microseconds per variable.
"""

from __future__ import annotations

import inspect
import threading
import warnings

import numpy as np

from ..base import dtypes as _dt
from ..core import dispatch as _dispatch
from ..core.context import device as device_scope
from ..base.errors import InvalidArgumentError
from ..state.module import camel_to_snake
from ..ops.math_ops import cast
from ..ops.training_ops_adaptive import SPARSE as _SPARSE
from ..ops.training_ops_grouped import KINDS, MAX_GROUP, grouped_update, groups_on
from ..tensor import EagerTensor, IndexedSlices
from ..core.tensor_conversion import convert_to_tensor
from ..state.trackable import Trackable, children_added
from ..variables import ResourceVariable, Variable
from . import options as _options
from .scalars import (checked_lr, host_scalar, keras_float, on_accelerator, scalar_as,
                      scalar_input, scalar_like, step_power, tracing)
from .schedules import LearningRateSchedule, deserialize as _deserialize_schedule
from .schedules import serialize as _serialize_schedule

__all__ = ["Optimizer", "keras_float", "run_fused", "scalar_as", "scalar_input",
           "scalar_like", "step_power"]

_names_lock = threading.Lock()
_names_used: dict = {}


#: Installed by `eager.distribute` (a higher layer): `hook(optimizer, grads, variables)` applies
#: the gradients itself and returns True when the variables are distributed (mirrored).
DISTRIBUTED_APPLY = None


def _auto_name(class_name: str) -> str:
    """Keras 3's default names: "sgd", then "sgd_1", "sgd_2", ... per process."""
    base = camel_to_snake(class_name)
    with _names_lock:
        count = _names_used.get(base, 0)
        _names_used[base] = count + 1
    return base if count == 0 else f"{base}_{count}"


def _takes_no_arguments(fn) -> bool:
    try:
        inspect.signature(fn).bind()
    except TypeError:
        return False
    except ValueError:  # no signature available (a builtin): call it as Keras does
        return True
    return True


def run_fused(opt, op, var, slots, scalars, grad, indices, fast):
    """Runs the fused update `op` of `eager.ops.training_ops_adaptive` for one variable, or its
    sparse variant for an IndexedSlices gradient (`indices` not None)."""
    if indices is None:
        opt._run(op, (var,) + slots, scalars + (grad,), {}, fast)
    else:
        opt._run(_SPARSE[op], (var,) + slots, scalars + (grad, indices), {}, fast)


class Optimizer(Trackable):
    """Base class of the optimizers of `eager.optimizers` (see the module doc).

    Keras 3's base arguments: `weight_decay`, `clipnorm`, `clipvalue`, `global_clipnorm`,
    `use_ema`, `ema_momentum`, `ema_overwrite_frequency`, `loss_scale_factor`,
    `gradient_accumulation_steps` (applied by `eager.optimizers.options`), `name`.

    Checkpoint children (`_trackable_children`), stable across processes:

    * "iterations": the step counter (int64);
    * "learning_rate": the learning-rate variable (only when the learning rate is a float);
    * one child per slot name once slots exist (SGD with momentum: "momentum"; Adam:
      "momentum", "velocity", and with amsgrad "velocity_hat"; the options' "average" and
      "gradient_accumulator"; Nadam also has "u_product"): a list whose items "0", "1",
      ... are the slots of the trained variables in the order the optimizer first saw them
      (`build` order, then the order of `apply_gradients` pairs). So Adam's first slot of the
      first variable is "momentum/0". Restoring matches by that order: build (or apply) with
      the variables in the same order as the program that saved. Slots created after a
      restore receive their saved values then (deferred restoration).
    """

    #: The slot variables this optimizer keeps per trained variable (subclasses override).
    _slot_names: tuple = ()

    def __init__(self, learning_rate, weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, **kwargs):
        if kwargs.pop("decay", None) is not None:
            warnings.warn("Argument `decay` is no longer supported and will be ignored.",
                          stacklevel=3)
        if kwargs:
            raise ValueError(f"Argument(s) not recognized: {kwargs}")
        self.name = _auto_name(type(self).__name__) if name is None else name
        _options.check_arguments(clipnorm=clipnorm, clipvalue=clipvalue,
                                 global_clipnorm=global_clipnorm, use_ema=use_ema,
                                 ema_momentum=ema_momentum,
                                 ema_overwrite_frequency=ema_overwrite_frequency,
                                 gradient_accumulation_steps=gradient_accumulation_steps)
        self.weight_decay = weight_decay
        self.clipnorm = clipnorm
        self.global_clipnorm = global_clipnorm
        self.clipvalue = clipvalue
        self.use_ema = use_ema
        self.ema_momentum = ema_momentum
        self.ema_overwrite_frequency = ema_overwrite_frequency
        self.loss_scale_factor = loss_scale_factor
        self.gradient_accumulation_steps = gradient_accumulation_steps
        self._exclude_from_weight_decay = _options.WeightDecayExclusions()
        self._iterations = Variable(0, dtype=_dt.int64, trainable=False, name="iteration")
        self._variables = [self._iterations]
        self._learning_rate = None
        self._lr_variable = None
        self._set_learning_rate(learning_rate, initial=True)
        self._trained = []  # trained variables, in the order first seen
        # resource uid -> (slot variables in _slot_names order, the variable's shape tuple)
        self._slots_of = {}
        # resource uid -> (its "average" slot or None, its "gradient_accumulator" or None)
        self._option_slots_of = {}
        self._slots = {slot: [] for slot in _options.SLOT_NAMES + self._slot_names}
        self._slot_lock = threading.RLock()
        self.built = False

    # -- hyperparameters ------------------------------------------------------------------------
    @property
    def iterations(self):
        """The number of steps applied so far (an int64 variable). With
        `gradient_accumulation_steps`, the number of updates made (the steps divided by it, an
        int64 tensor), as Keras 3."""
        steps = self.gradient_accumulation_steps
        if steps:
            return self._iterations // steps
        return self._iterations

    @property
    def variables(self) -> list:
        """The optimizer's own variables: `iterations`, the learning rate (when a float), then
        each trained variable's slots in the order they were created."""
        return list(self._variables)

    @property
    def learning_rate(self):
        """The current learning rate: the variable holding it, or the schedule's value at the
        current step, or the callable's result (as Keras 3)."""
        lr = self._learning_rate
        if lr is self._lr_variable:
            return lr
        if self._lr_takes_step:
            return lr(self._iterations)
        return lr()

    @learning_rate.setter
    def learning_rate(self, value):
        self._set_learning_rate(value, initial=False)

    def _set_learning_rate(self, value, initial):
        if isinstance(value, LearningRateSchedule) or callable(value):
            if self._lr_variable is not None:  # by identity: == on variables is elementwise
                self._variables = [v for v in self._variables if v is not self._lr_variable]
                self._lr_variable = None
            self._learning_rate = value
            self._lr_takes_step = (isinstance(value, LearningRateSchedule)
                                   or not _takes_no_arguments(value))
            return
        if not initial and isinstance(self._learning_rate, LearningRateSchedule):
            raise TypeError("This optimizer was created with a `LearningRateSchedule` object as "
                            "its `learning_rate` constructor argument, hence its learning rate "
                            "is not settable. If you need the learning rate to be settable, you "
                            "should instantiate the optimizer with a float `learning_rate` "
                            "argument.")
        if self._lr_variable is not None:
            self._lr_variable.assign(value)
            return
        if not isinstance(value, float):
            raise ValueError("Argument `learning_rate` should be float, or an instance of "
                             "LearningRateSchedule, or a callable (that takes in the current "
                             "iteration value and returns the corresponding learning rate "
                             f"value). Received instead: learning_rate={value!r}")
        self._lr_variable = Variable(value, dtype=_dt.float32, trainable=False,
                                     name="learning_rate")
        self._variables.insert(1, self._lr_variable)
        self._learning_rate = self._lr_variable
        self._lr_takes_step = False

    def _current_lr(self):
        """The learning rate for this step as a 0-d host array (read once per step); while
        tracing, a 0-d tensor read in the graph (see `_tracing`); when its variable lives on an
        accelerator, or a schedule computed it there, a tensor left on the device (see
        `_on_accelerator`)."""
        var = self._lr_variable
        if var is not None:
            value = var.peek()
            if value is not None:
                return value
        if tracing():
            return self._traced_lr()
        if on_accelerator(var):
            return var.value()
        value = self.learning_rate
        if value.__class__ is EagerTensor and not value._meta.device.inline:
            return checked_lr(value)  # a schedule computed on an accelerator: it stays there
        return host_scalar(value)

    def _traced_lr(self):
        value = self.learning_rate
        if isinstance(value, Variable):
            value = value.value()
        return checked_lr(convert_to_tensor(value))

    def _local_step(self):
        """iterations + 1: the step being applied (Adam's bias correction uses it); an int, or
        while tracing (or with the counter on an accelerator) an int64 tensor."""
        var = self._iterations
        steps = self.gradient_accumulation_steps
        value = var.peek()
        if value is not None:
            return (int(value) // steps if steps else int(value)) + 1
        if tracing():
            return (var.value() // steps if steps else var.value()) + 1
        if on_accelerator(var):
            value = var.value()
            if steps:
                value = value // scalar_input(np.array(steps, np.int64), var._handle.device)
            return value + scalar_input(_ONE, var._handle.device)
        return (int(var.numpy()) // steps if steps else int(var.numpy())) + 1

    def host_iterations(self):
        """The step counter's value as an int, or None while tracing or when it lives on an
        accelerator (the options' branches then run as graph or device ops)."""
        var = self._iterations
        value = var.peek()
        if value is not None:
            return int(value)
        if tracing() or on_accelerator(var):
            return None
        return int(var.numpy())

    def get_config(self) -> dict:
        """Keras 3's config: the name, the learning rate (a float, or a schedule's serialized
        dict), the base options, then the subclass's hyperparameters."""
        lr = self._learning_rate
        if lr is self._lr_variable:
            lr = float(lr.numpy())
        elif isinstance(lr, LearningRateSchedule):
            lr = _serialize_schedule(lr)
        return {"name": self.name, "learning_rate": lr, "weight_decay": self.weight_decay,
                "clipnorm": self.clipnorm, "global_clipnorm": self.global_clipnorm,
                "clipvalue": self.clipvalue, "use_ema": self.use_ema,
                "ema_momentum": self.ema_momentum,
                "ema_overwrite_frequency": self.ema_overwrite_frequency,
                "loss_scale_factor": self.loss_scale_factor,
                "gradient_accumulation_steps": self.gradient_accumulation_steps}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """The optimizer `get_config` describes (a schedule given as a dict is rebuilt)."""
        config = dict(config)
        if isinstance(config.get("learning_rate"), dict):
            config["learning_rate"] = _deserialize_schedule(config["learning_rate"],
                                                            custom_objects=custom_objects)
        return cls(**config)

    # -- the base options -----------------------------------------------------------------------
    def exclude_from_weight_decay(self, var_list=None, var_names=None):
        """Keeps weight decay off the variables in `var_list`, and off every variable whose name
        contains one of `var_names` (regular expressions, searched as Keras does)."""
        self._exclude_from_weight_decay = _options.WeightDecayExclusions(var_list, var_names)

    def scale_loss(self, loss):
        """`loss * loss_scale_factor` when set (the gradients are divided by it again)."""
        if self.loss_scale_factor is not None:
            return loss * self.loss_scale_factor
        return loss

    def finalize_variable_values(self, var_list):
        """With `use_ema`, sets each variable of `var_list` to its moving average (call it at
        the end of training; Keras' `fit` does)."""
        if self.use_ema:
            _options.overwrite_with_averages(self, list(var_list))

    # -- slots ----------------------------------------------------------------------------------
    def build(self, var_list):
        """Creates the slots of every variable in `var_list` not seen before (≈ Keras'
        `optimizer.build`). `apply_gradients` does this itself; calling it first fixes the slot
        order a checkpoint relies on."""
        with self._slot_lock:
            self._create_slots(list(var_list))
        self.built = True

    def _create_slots(self, variables):
        """Zero-initialized, non-trainable slots on each new variable's device, named as Keras
        names them (`<variable name>_<slot>`) and created in Keras' order (slot groups in turn,
        e.g. Adam's momentum and velocity interleaved per variable, then velocity_hat)."""
        new, seen = [], set()
        for var in variables:
            self._check_variable(var)
            uid = var._handle.uid
            if uid not in self._slots_of and uid not in seen:
                seen.add(uid)
                new.append(var)
        made = {}
        for group in _options.slot_groups(self) + self._slot_groups():
            for var in new:
                # Keras 3 names slots after the variable's path ("dense_kernel_momentum").
                base = getattr(var, "path", var.name).replace("/", "_").replace(":", "_")
                with device_scope(var.device):
                    for slot in group:
                        initial = np.full(var.shape.as_list(), self._slot_initial_value(slot),
                                          var.dtype.as_numpy_dtype)
                        slot_var = Variable(initial, trainable=False, name=f"{base}_{slot}")
                        self._slots[slot].append(slot_var)
                        self._variables.append(slot_var)
                        made[(var._handle.uid, slot)] = slot_var
        for var in new:
            uid = var._handle.uid
            self._trained.append(var)
            self._slots_of[uid] = (tuple(made[(uid, slot)] for slot in self._slot_names),
                                   tuple(var.shape.as_list()))
            self._option_slots_of[uid] = tuple(made.get((uid, slot))
                                               for slot in _options.SLOT_NAMES)
        if new:
            self._restore_deferred()

    def _restore_deferred(self):
        """New slots get values a checkpoint restored before they existed (as TensorFlow
        restores a slot variable when the optimizer creates it): the checkpoint waits on the
        optimizer (no slot list yet) or on a slot list (some slots then)."""
        children_added(self)
        for slot in self._slots:
            children_added(self._slots[slot])

    def _slot_groups(self):
        """Slot names in creation groups (Keras creates some slots in separate passes)."""
        return (self._slot_names,)

    def _slot_initial_value(self, slot):
        """The value a new slot starts at (Adagrad's and Ftrl's accumulators override it)."""
        return 0

    def _check_variable(self, var):
        if not isinstance(var, ResourceVariable) and not getattr(
                var, "_is_distributed_variable", False):
            raise TypeError(f"{type(self).__name__}.apply_gradients: expected eager.Variable "
                            f"variables, got {type(var).__name__} {var!r}. Gradients update "
                            "variables; tensors are immutable.")
        if not var.dtype.is_floating:
            raise TypeError(f"{type(self).__name__}: variable {var.name} has dtype "
                            f"{var.dtype.name}; optimizers update float16, float32 or float64 "
                            "variables.")
        if not var.shape.is_fully_defined():
            raise ValueError(f"{type(self).__name__}: cannot create slots for variable "
                             f"{var.name} of partially known shape {var.shape}.")

    # -- applying gradients ---------------------------------------------------------------------
    def apply_gradients(self, grads_and_vars):
        """Applies one step: `grads_and_vars` is an iterable of (gradient, variable) pairs
        (`zip(grads, vars)`). Gradients may be tensors, anything convertible, or IndexedSlices;
        pairs whose gradient is None are skipped (with Keras' warning). Returns `iterations`."""
        pairs = list(grads_and_vars)
        if not pairs:
            raise ValueError("No gradients provided for any variable.")
        grads, variables = [], []
        for i, pair in enumerate(pairs):
            try:
                grad, var = pair
            except (TypeError, ValueError):
                raise TypeError(f"{type(self).__name__}.apply_gradients expects (gradient, "
                                f"variable) pairs; item {i} is {pair!r}.") from None
            grads.append(grad)
            variables.append(var)
        self._apply(grads, variables)
        return self._iterations

    def apply(self, grads, trainable_variables=None):
        """≈ Keras 3 `optimizer.apply(grads, trainable_variables)`; without variables, `grads`
        must match the variables the optimizer was built with, one to one."""
        grads = list(grads)
        if not grads:
            return
        if trainable_variables is None:
            if not self.built:
                raise ValueError("When passing `grads` without `variables`, the optimizer must "
                                 "already be built on a list of variables. Call "
                                 "`optimizer.build(trainable_variables)` first.")
            if len(grads) != len(self._trained):
                raise ValueError(f"When passing `grads` as a list of gradient tensors, the "
                                 f"gradients must match the optimizer's variables one-to-one. "
                                 f"Received a list of {len(grads)} gradients, but the optimizer "
                                 f"is tracking {len(self._trained)} trainable variables.")
            trainable_variables = self._trained
        self._apply(grads, list(trainable_variables))

    def _apply(self, grads, variables):
        """One step. Every pair is checked (and its gradient converted) before any variable
        changes, so a bad gradient leaves the model and the step counter untouched."""
        if DISTRIBUTED_APPLY is not None and DISTRIBUTED_APPLY(self, grads, variables):
            return
        slots_of = self._slots_of
        for var in variables:  # Keras layers' weights are ResourceVariable subclasses
            handle = getattr(var, "_handle", None)
            if handle is None or handle.uid not in slots_of:
                with self._slot_lock:  # two threads' first steps must not both make slots
                    self._create_slots(variables)
                break
        self.built = True
        lr = self._current_lr()
        work = []
        missing = []
        for grad, var in zip(grads, variables):
            if grad is None:
                missing.append(var.name)
                continue
            slots, shape = slots_of[var._handle.uid]
            if grad.__class__ is EagerTensor and grad._meta is var._meta:  # the common case
                if grad._value.shape != shape:
                    self._shape_error(grad, var)
                work.append((var, slots, grad, None))
            elif grad.__class__ is IndexedSlices:
                values = self._cast(grad.values, var, "gradient values")
                indices = convert_to_tensor(grad.indices)
                if not indices.dtype.is_integer:
                    raise TypeError(f"{type(self).__name__}: IndexedSlices indices for variable "
                                    f"{var.name} must be integers, got {indices.dtype.name}.")
                if tuple(values.shape)[indices.shape.rank:] != shape[1:]:
                    self._shape_error(grad, var)
                work.append((var, slots, values, indices))
            else:
                grad = self._cast(grad, var, "gradient")
                if tuple(grad.shape) != shape:
                    self._shape_error(grad, var)
                work.append((var, slots, grad, None))
        if not work:
            raise ValueError("No gradients provided for any variable.")
        if missing:
            warnings.warn(f"Gradients do not exist for variables {missing} when minimizing the "
                          "loss. If using `model.compile()`, did you forget to provide a `loss` "
                          "argument?", stacklevel=3)
        fast = _dispatch.kernel_only()
        if (self.weight_decay is None and self.clipnorm is None and self.clipvalue is None
                and self.global_clipnorm is None and not self.use_ema
                and self.loss_scale_factor is None and not self.gradient_accumulation_steps):
            self.run_updates(work, lr, fast)
        else:
            _options.apply(self, work, lr, fast)
        for var in variables:
            if var._constraint is not None:
                var.assign(var._constraint(var), read_value=False)
        handle = getattr(self._iterations, "_handle", None)  # (a creator's own object: None)
        self._iterations.assign_add(_ONE if handle is None else scalar_input(_ONE, handle.device),
                                    read_value=False)

    def run_updates(self, work, lr, fast):
        """Runs the fused update of each (variable, slots, gradient, indices) of `work`, with
        this step's scalars prepared once per dtype. Executing eagerly, the dense updates of
        variables on a device that groups updates (a GPU: `training_ops_grouped.groups_on`)
        run as grouped ops where the optimizer has a grouped kind (`_grouped_kind`)."""
        self._prepare_step()
        prepared = {}  # dtype -> the fused ops' scalar inputs for this step
        if not fast and len(work) > 1:
            grouped = self._grouped_kind()
            if grouped is not None and not tracing():
                work = self._run_grouped(KINDS[grouped[0]], grouped[1], work, lr, prepared)
        update = self._update
        for var, slots, grad, indices in work:
            dtype = var._dtype
            scalars = prepared.get(dtype)
            if scalars is None:
                scalars = prepared[dtype] = self._scalars(dtype.as_numpy_dtype, lr)
            update(var, slots, scalars, grad, indices, fast)

    def _run_grouped(self, kind, attrs, work, lr, prepared):
        """Runs the dense updates in `work` of variables on a grouping device as grouped ops
        of `kind` with `attrs`, per (device, dtype) and at most `MAX_GROUP` variables each;
        returns the rest of `work` (a variable given twice keeps its updates in order, one by
        one)."""
        groups, rest = {}, []
        grouping = {}  # device -> groups_on(device), asked once per step
        for item in work:
            var, _, grad, indices = item
            device = var._handle.device
            on = grouping.get(device)
            if on is None:
                on = grouping[device] = groups_on(device)
            if on and indices is None and grad.__class__ is EagerTensor:
                groups.setdefault((device, var._dtype), []).append(item)
            else:
                rest.append(item)
        for (device, dtype), items in groups.items():
            if len(items) < 2 or len({var._handle.uid for var, *_ in items}) < len(items):
                rest += items
                continue
            scalars = prepared.get(dtype)
            if scalars is None:
                scalars = prepared[dtype] = self._scalars(dtype.as_numpy_dtype, lr)
            inputs = tuple(scalar_input(x, device) for x in scalars[:kind.scalars])
            for start in range(0, len(items), MAX_GROUP):
                chunk = items[start:start + MAX_GROUP]
                if len(chunk) < 2:
                    rest += chunk
                    continue
                handles = [h for var, slots, _, _ in chunk
                           for h in (var.handle, *(s.handle for s in slots))]
                _dispatch.execute(grouped_update(kind.name, len(chunk)),
                                  (*handles, *inputs, *(grad for _, _, grad, _ in chunk)), attrs)
        return rest

    def _shape_error(self, grad, var):
        what = ("IndexedSlices values" if grad.__class__ is IndexedSlices else "gradient")
        shape = grad.values.shape if grad.__class__ is IndexedSlices else grad.shape
        raise InvalidArgumentError(
            None, None, f"{type(self).__name__}.apply_gradients: the {what} for variable "
                        f"{var.name} has shape {list(shape)}, which does not match the "
                        f"variable's shape {list(var.shape)}"
                        + (" (values must have shape indices.shape + variable.shape[1:])"
                           if what != "gradient" else "") + ".")

    def _cast(self, value, var, what):
        """A tensor of the variable's dtype (Keras casts gradients to it)."""
        try:
            tensor = convert_to_tensor(value)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{type(self).__name__}: the {what} for variable {var.name} "
                            f"cannot be converted to a tensor: {exc}") from exc
        if tensor.dtype is not var.dtype:
            if not (tensor.dtype.is_floating or tensor.dtype.is_integer):
                raise TypeError(f"{type(self).__name__}: the {what} for variable {var.name} "
                                f"has dtype {tensor.dtype.name}; expected a real number type "
                                f"castable to {var.dtype.name}.")
            tensor = cast(tensor, var.dtype)
        return tensor

    @staticmethod
    def _run(op, handles_of, inputs, attrs, fast):
        """Runs a fused update: the kernel directly on the fast path (inputs are numpy scalars
        and EagerTensors), else through dispatch (tapes, placement, tracing see it)."""
        if fast:
            _dispatch.run_bare(op, [*[v._handle for v in handles_of],
                                    *[x._value if x.__class__ is EagerTensor else x
                                      for x in inputs]], attrs)
        else:
            device = handles_of[0]._handle.device
            _dispatch.execute(op, tuple(v.handle for v in handles_of)
                    + tuple(scalar_input(x, device) for x in inputs), attrs)

    # -- what subclasses provide ----------------------------------------------------------------
    def _grouped_kind(self):
        """(the `training_ops_grouped.KINDS` name, the op's attributes) its dense updates
        group as on a GPU (their scalars the first of `_scalars`'), or None where they do
        not."""
        return None

    def _prepare_step(self):
        """Runs once per update before the variables' updates (Nadam advances its product)."""
    def _scalars(self, np_dtype, lr):
        """The hyperparameters as 0-d arrays of `np_dtype` for this step."""
        raise NotImplementedError

    def _update(self, var, slots, scalars, grad, indices, fast):
        """Runs the fused op for one variable (indices is None for a dense gradient)."""
        raise NotImplementedError

    # -- checkpoints ----------------------------------------------------------------------------
    def _trackable_children(self) -> dict:
        children = {"iterations": self._iterations}
        if self._lr_variable is not None:
            children["learning_rate"] = self._lr_variable
        for slot, slots in self._slots.items():
            if slots:
                children[slot] = slots  # a list the checkpoint names "0", "1", ...
        return children

    def __repr__(self):
        return f"<eager.optimizers.{type(self).__name__} name={self.name!r}>"


_ONE = np.array(1, np.int64)  # added to `iterations` every step
