"""`Trainer`: Keras 3's `compile`/`fit`/`evaluate`/`predict` for any `keras.layers.Layer`
(`keras.Model` is `class Model(Trainer, Layer)`).

The training step (`train_step`) is one `eager.function` per structure of the batch (which of
x, y and sample_weight are given): it traces once per distinct batch shape and dtype (so the
last, smaller batch of an epoch traces once more, as TensorFlow's does) and runs the traced
graph on every other step; `compile(run_eagerly=True)` runs it as plain Python instead. The
traced function takes the batch's tensors as flat positional arguments, so each step's call
takes `eager.function`'s fast lookup.

The numbers are Keras's: a step's loss is the compiled loss (each output's loss reduced as
"sum_over_batch_size", times its loss weight, summed) plus the model's `losses`
(regularizers, `add_loss`); the "loss" shown and stored in `History` is the running mean of
the batch losses weighted by batch size (Keras's `Mean` loss tracker); metrics are running
means over the epoch. Logs are dicts sorted by name, as Keras on TensorFlow returns them.

Per-step work outside the traced graph is kept to slicing the batch, one call and the batch
callbacks that exist: hooks no callback overrides are skipped, and the step's logs become
Python floats only when a callback reads them (`CallbackList`), so `fit(verbose=0)` does not
copy metrics to the host each step.

Under a distribution strategy (a model compiled inside `strategy.scope()`, its weights,
optimizer slots and metric variables then distributed), a train or test step splits the
global batch along its first axis into one part per replica and runs the step through
`strategy.run`: each replica's gradients are of its mean loss divided by the number of
replicas (Keras's loss scaling), so the optimizer's cross-replica sum is the gradient of the
global batch's mean loss, and the weights end where one device's step on the whole batch puts
them. The step's logs are the metrics read in cross-replica context (aggregated over
replicas).
"""

from __future__ import annotations

import contextlib

import numpy as np

from ...base import nest
from ...core.context import executing_eagerly
from ...data.dataset import Dataset
from ...distribute import context as _distribute_context
from ...distribute import strategy as _distribute
from ...functions.polymorphic import function
from ... import optimizers as _optimizers
from ...autodiff import GradientTape
from ...ops import array_ops as _array
from ...ops import math_ops as _math
from ..callbacks.callback_list import CallbackList
from ..keras_tensor import KerasTensor
from .. import metrics as _metrics
from .compile_utils import CompileLoss, CompileMetrics
from .data_adapter import EpochIterator, train_validation_split, unpack_x_y_sample_weight

__all__ = ["Trainer"]


def _floats(results) -> dict:
    return {k: float(np.asarray(v.numpy() if hasattr(v, "numpy") else v))
            for k, v in results.items()}


def _concat(batches):
    """Predict's per-batch outputs (tensors) joined along the batch axis, per output, then
    copied to numpy: one copy per output for the whole call, as Keras 3 does, so that on a
    GPU the batches are not each waited for."""
    flats = [nest.flatten(b) for b in batches]
    joined = [parts[0] if len(parts) == 1 else _array.concat(list(parts), axis=0)
              for parts in zip(*flats)]
    return nest.pack_sequence_as(batches[0], [t.numpy() for t in joined])


class _TrainerState:
    """What `compile` sets (kept off the layer's attribute tracking)."""

    __slots__ = ("compiled", "optimizer", "loss", "compiled_loss", "compiled_metrics",
                 "loss_tracker", "run_eagerly", "jit_compile", "steps_per_execution",
                 "train_fns", "test_fns", "predict_fns", "stop_training", "stop_evaluating",
                 "stop_predicting", "history", "strategy")

    def __init__(self):
        self.compiled = False
        self.optimizer = None
        self.loss = None
        self.compiled_loss = None
        self.compiled_metrics = None
        self.loss_tracker = None
        self.run_eagerly = False
        self.jit_compile = "auto"
        self.steps_per_execution = 1
        self.train_fns = {}
        self.test_fns = {}
        self.predict_fns = {}
        self.stop_training = False
        self.stop_evaluating = False
        self.stop_predicting = False
        self.history = None
        self.strategy = None


class Trainer:
    """≈ Keras 3's `Trainer`: `compile`, `fit`, `evaluate`, `predict`, `train_on_batch`,
    `test_on_batch`, `predict_on_batch`, `metrics`, `stop_training`, `history`. A mixin for
    a `keras.layers.Layer` subclass: `class Model(Trainer, Layer)`."""

    @property
    def _trainer(self) -> _TrainerState:
        state = self.__dict__.get("_trainer_state")
        if state is None:
            state = _TrainerState()
            object.__setattr__(self, "_trainer_state", state)
        return state

    # -- attributes --------------------------------------------------------------------------
    @property
    def compiled(self) -> bool:
        return self._trainer.compiled

    @property
    def optimizer(self):
        return self._trainer.optimizer

    @optimizer.setter
    def optimizer(self, value):
        self._trainer.optimizer = value

    @property
    def loss(self):
        return self._trainer.loss

    @property
    def run_eagerly(self) -> bool:
        return self._trainer.run_eagerly

    @run_eagerly.setter
    def run_eagerly(self, value):
        self._trainer.run_eagerly = bool(value)
        self._reset_step_functions()

    @property
    def distribute_strategy(self):
        """The strategy `compile` ran under (the default strategy outside any scope)."""
        return self._trainer.strategy or _distribute.get_strategy()

    def _strategy_scope(self):
        strategy = self._trainer.strategy
        return strategy.scope() if strategy is not None else contextlib.nullcontext()

    @property
    def jit_compile(self):
        return self._trainer.jit_compile

    @property
    def steps_per_execution(self):
        return self._trainer.steps_per_execution

    @property
    def stop_training(self) -> bool:
        return self._trainer.stop_training

    @stop_training.setter
    def stop_training(self, value):
        self._trainer.stop_training = value

    @property
    def stop_evaluating(self) -> bool:
        return self._trainer.stop_evaluating

    @stop_evaluating.setter
    def stop_evaluating(self, value):
        self._trainer.stop_evaluating = value

    @property
    def stop_predicting(self) -> bool:
        return self._trainer.stop_predicting

    @stop_predicting.setter
    def stop_predicting(self, value):
        self._trainer.stop_predicting = value

    @property
    def history(self):
        return self._trainer.history

    @history.setter
    def history(self, value):
        self._trainer.history = value

    @property
    def metrics(self) -> list:
        """The loss tracker ("loss"), then the compiled metrics (one entry named
        "compile_metrics", as Keras lists it), then metrics of sublayers that have them."""
        state = self._trainer
        result = []
        if state.compiled:
            if state.loss_tracker is not None:
                result.append(state.loss_tracker)
            if state.compiled_metrics is not None:
                result.append(state.compiled_metrics)
            if state.compiled_loss is not None:
                result.extend(state.compiled_loss.metrics)
        return result

    @property
    def metrics_names(self) -> list:
        return [m.name for m in self.metrics]

    def reset_metrics(self):
        for metric in self.metrics:
            metric.reset_state()

    # -- compile -----------------------------------------------------------------------------
    def compile(self, optimizer="rmsprop", loss=None, loss_weights=None, metrics=None,
                weighted_metrics=None, run_eagerly=False, steps_per_execution=1,
                jit_compile="auto", auto_scale_loss=True):
        """≈ `Model.compile`: `optimizer` (an instance or a name), `loss` (a name, a
        `keras.losses.Loss`, a function `fn(y_true, y_pred)` of per-sample values, or a
        list/dict of them per output), `metrics`/`weighted_metrics` (names — "accuracy"
        picks its kind from the target and prediction shapes — or metric objects or
        functions). `steps_per_execution` and `jit_compile` are accepted; each step runs as
        one traced call."""
        state = self._trainer
        state.optimizer = _optimizers.get(optimizer)
        state.loss = loss
        output_names = self._output_names()
        state.compiled_loss = (CompileLoss(loss, loss_weights, output_names=output_names)
                               if loss is not None else None)
        if metrics is not None or weighted_metrics is not None:
            state.compiled_metrics = CompileMetrics(metrics, weighted_metrics,
                                                    output_names=output_names)
        else:
            state.compiled_metrics = None
        state.loss_tracker = _metrics.Mean(name="loss")
        state.run_eagerly = bool(run_eagerly)
        state.jit_compile = jit_compile
        state.steps_per_execution = steps_per_execution
        state.strategy = _distribute.get_strategy() if _distribute.has_strategy() else None
        state.compiled = True
        self._reset_step_functions()

    def _output_names(self):
        """The model's output names (a functional model's output layers), else None."""
        names = getattr(self, "output_names", None)
        if names is not None:
            return list(names)
        try:
            outputs = self.outputs
        except (AttributeError, ValueError):
            return None
        history = [getattr(x, "_keras_history", None) for x in outputs or ()]
        if not history or any(h is None for h in history):
            return None
        return [h.operation.name for h in history]

    def _reset_step_functions(self):
        state = self._trainer
        state.train_fns, state.test_fns, state.predict_fns = {}, {}, {}

    def _assert_compile_called(self):
        if not self._trainer.compiled:
            raise ValueError("You must call `compile()` before using the model.")

    # -- the steps (what one batch does; override them as in Keras) ----------------------------
    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """The compiled loss plus the model's `losses` (regularizers, `add_loss`)."""
        del x, training
        losses = []
        compiled = self._trainer.compiled_loss
        if compiled is not None:
            value = compiled(y, y_pred, sample_weight)
            if value is not None:
                losses.append(value)
        extra = self.losses
        if extra:
            extra = [_math.cast(v, "float32") if v.dtype != "float32" else v for v in extra]
            total = extra[0]
            for v in extra[1:]:
                total = total + v
            losses.append(total)
        if not losses:
            raise ValueError("No loss to compute. Provide a `loss` argument in `compile()`.")
        total = losses[0]
        for value in losses[1:]:
            total = total + _math.cast(value, total.dtype)
        return total

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        del x
        compiled = self._trainer.compiled_metrics
        if compiled is not None:
            compiled.update_state(y, y_pred, sample_weight)
        return self.get_metrics_result()

    def get_metrics_result(self) -> dict:
        """Every metric's current result by name, sorted by name (Keras's order on
        TensorFlow)."""
        results = {}
        for metric in self.metrics:
            result = metric.result()
            if isinstance(result, dict):
                results.update(result)
            else:
                results[metric.name] = result
        return dict(sorted(results.items()))

    def _call_model(self, x, training):
        if self._call_has_training_arg:
            return self(x, training=training)
        return self(x)

    def _batch_size_of(self, x):
        first = next(t for t in nest.flatten(x) if t is not None)
        return _array.shape(first)[0]

    def train_step(self, data):
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        replicas = _replicas_in_sync()
        with GradientTape() as tape:
            y_pred = self._call_model(x, True)
            loss = self.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight,
                                     training=True)
            # The replicas' gradients are summed: each differentiates its share of the loss.
            scaled = loss if replicas == 1 else loss / _math.cast(replicas, loss.dtype)
        self._trainer.loss_tracker.update_state(loss, sample_weight=self._batch_size_of(x))
        trainable = self.trainable_weights
        if trainable:
            grads = tape.gradient(scaled, trainable)
            self._trainer.optimizer.apply_gradients(zip(grads, trainable))
        return self.compute_metrics(x, y, y_pred, sample_weight=sample_weight)

    def test_step(self, data):
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        y_pred = self._call_model(x, False)
        loss = self.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight,
                                 training=False)
        self._trainer.loss_tracker.update_state(loss, sample_weight=self._batch_size_of(x))
        return self.compute_metrics(x, y, y_pred, sample_weight=sample_weight)

    def predict_step(self, data):
        x, _, _ = unpack_x_y_sample_weight(data)
        return self._call_model(x, False)

    # -- running a step ----------------------------------------------------------------------
    def _step_function(self, kind, batch):
        """The callable running `kind`'s step on batches shaped like `batch`, and the flat
        tensors to call it with. One per structure: an `eager.function` of the flat tensors
        (its own cache then keys the traces by shape and dtype), or, with `run_eagerly`, the
        step itself."""
        state = self._trainer
        fns = {"train": state.train_fns, "test": state.test_fns,
               "predict": state.predict_fns}[kind]
        flat = nest.flatten(batch)
        present = tuple(t is not None for t in flat)
        key = (present, _structure_key(batch))
        fn = fns.get(key)
        if fn is None:
            with self._strategy_scope():
                self._symbolic_build(batch, kind)
            step = {"train": self.train_step, "test": self.test_step,
                    "predict": self.predict_step}[kind]
            strategy = state.strategy
            if kind != "predict" and strategy is not None \
                    and strategy.num_replicas_in_sync > 1:
                step = self._replicated_step(strategy, step)

            def run(*tensors, _step=step, _batch=batch, _present=present):
                it = iter(tensors)
                filled = [next(it) if p else None for p in _present]
                result = _step(nest.pack_sequence_as(_batch, filled))
                if not executing_eagerly():
                    # `add_loss` losses of the trace are graph tensors: drop them from the
                    # layers, so `model.losses` never hands one out after `fit`.
                    self._clear_traced_losses()
                return result
            run.__name__ = f"{kind}_function"
            fn = run if state.run_eagerly else function(run)
            fns[key] = fn
        return fn, [t for t in flat if t is not None]

    def _replicated_step(self, strategy, step):
        """`step` run through `strategy.run` on this worker's parts of the global batch (split
        into one part per replica of every worker; see the module doc); returns the metrics
        aggregated across replicas."""
        n = strategy.num_replicas_in_sync  # every worker's replicas
        local = len(strategy.extended.worker_devices)
        first = strategy.extended._worker_index * local  # this worker's first global replica

        def replicated(batch):
            flat = nest.flatten(batch)
            parts = [[None] * len(flat) for _ in range(local)]
            for i, t in enumerate(flat):
                if t is None:
                    continue
                total = int(t.shape[0])
                sizes = [total // n + (1 if r < total % n else 0) for r in range(n)]
                pieces = _array.split(t, sizes, axis=0)
                for r in range(local):
                    parts[r][i] = pieces[first + r]
            per_replica = _distribute.PerReplica(
                [nest.pack_sequence_as(batch, p) for p in parts])
            with strategy.scope():
                strategy.run(step, args=(per_replica,))
                return self.get_metrics_result()
        return replicated

    def _clear_traced_losses(self):
        clear = getattr(self, "_clear_losses", None)
        if clear is not None:
            clear()

    def _symbolic_build(self, batch, kind):
        """Creates the model's weights, the optimizer's slots and the compiled metrics
        before the first trace (from a symbolic call on the batch's shapes, as Keras does),
        so no variable is created while tracing and the step traces once, not twice. A model
        whose `call` cannot run symbolically is built by its first traced step instead."""
        x, y, _ = unpack_x_y_sample_weight(batch)
        state = self._trainer
        has_y = kind != "predict" and y is not None
        needs_metrics = (has_y and state.compiled_metrics is not None
                         and not state.compiled_metrics.built)
        needs_loss = (has_y and state.compiled_loss is not None
                      and not state.compiled_loss.built)
        if not self.built or needs_metrics or needs_loss:
            try:
                specs = nest.map_structure(
                    lambda t: None if t is None else KerasTensor(t.shape, t.dtype.name), x)
                y_pred = self._call_model(specs, kind == "train")
            except Exception:  # noqa: BLE001 - building inside the first trace still works
                return
            if needs_metrics:
                state.compiled_metrics.build(y, y_pred)
            if needs_loss:
                state.compiled_loss.build(y, y_pred)
        optimizer = state.optimizer
        if kind == "train" and optimizer is not None and hasattr(optimizer, "build"):
            optimizer.build(self.trainable_weights)

    def _run_step(self, kind, batch):
        fn, tensors = self._step_function(kind, batch)
        return fn(*tensors)

    # -- fit ---------------------------------------------------------------------------------
    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None,
            validation_split=0.0, validation_data=None, shuffle=True, class_weight=None,
            sample_weight=None, initial_epoch=0, steps_per_epoch=None, validation_steps=None,
            validation_batch_size=None, validation_freq=1):
        """≈ `Model.fit`; returns the `History`."""
        self._assert_compile_called()
        if validation_split and validation_data is None:
            if isinstance(x, Dataset):
                raise ValueError("`validation_split` is only supported for Tensors or NumPy "
                                 f"arrays, found following types in the input: {[type(x)]}")
            (x, y, sample_weight), validation_data = train_validation_split(
                (x, y, sample_weight), validation_split)
        if validation_data is not None:
            val_x, val_y, val_w = unpack_x_y_sample_weight(validation_data)
        iterator = EpochIterator(x, y, sample_weight, batch_size=batch_size,
                                 steps_per_epoch=steps_per_epoch, shuffle=shuffle,
                                 class_weight=class_weight)
        if not isinstance(callbacks, CallbackList):
            callbacks = CallbackList(callbacks, add_history=True, add_progbar=verbose != 0,
                                     verbose=verbose, epochs=epochs,
                                     steps=iterator.num_batches, model=self)
        self.stop_training = False
        val_iterator = None
        callbacks.on_train_begin()
        training_logs = None
        logs = {}
        run = None
        begin, end = callbacks.on_train_batch_begin, callbacks.on_train_batch_end
        for epoch in range(initial_epoch, epochs):
            self.reset_metrics()
            callbacks.on_epoch_begin(epoch)
            for step, tensors in iterator.flat_epoch():  # the per-step path: keep it short
                begin(step)
                if run is None:
                    run = self._step_function("train", iterator.pack(tensors))[0]
                logs = run(*tensors)
                end(step, logs)
                if self.stop_training:
                    break
            if iterator.exhausted:
                self.stop_training = True
            epoch_logs = _floats(self.get_metrics_result())
            if validation_data is not None and _should_eval(epoch, validation_freq):
                if val_iterator is None:
                    val_iterator = EpochIterator(
                        val_x, val_y, val_w, batch_size=validation_batch_size or batch_size,
                        steps_per_epoch=validation_steps, shuffle=False)
                val_logs = self._evaluate_with(val_iterator, callbacks)
                epoch_logs.update({f"val_{k}": v for k, v in val_logs.items()})
            callbacks.on_epoch_end(epoch, epoch_logs)
            training_logs = epoch_logs
            if self.stop_training:
                break
        callbacks.on_train_end(logs=training_logs)
        return self.history

    # -- evaluate ----------------------------------------------------------------------------
    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None,
                 steps=None, callbacks=None, return_dict=False, **kwargs):
        """≈ `Model.evaluate`: the loss and metrics over the data (a scalar when there is
        only the loss, else a list in `metrics` order, or a dict with `return_dict`)."""
        self._assert_compile_called()
        if kwargs:
            raise ValueError(f"Arguments not recognized: {kwargs}")
        iterator = EpochIterator(x, y, sample_weight, batch_size=batch_size,
                                 steps_per_epoch=steps, shuffle=False)
        if not isinstance(callbacks, CallbackList):
            callbacks = CallbackList(callbacks, add_progbar=verbose != 0, verbose=verbose,
                                     epochs=1, steps=iterator.num_batches, model=self)
        logs = self._evaluate_with(iterator, callbacks)
        if return_dict:
            return logs
        return self._flatten_metrics_in_order(logs)

    def _evaluate_with(self, iterator, callbacks) -> dict:
        self.stop_evaluating = False
        callbacks.on_test_begin()
        self.reset_metrics()
        run = None
        for step, tensors in iterator.flat_epoch():
            callbacks.on_test_batch_begin(step)
            if run is None:
                run = self._step_function("test", iterator.pack(tensors))[0]
            logs = run(*tensors)
            callbacks.on_test_batch_end(step, logs)
            if self.stop_evaluating:
                break
        logs = _floats(self.get_metrics_result())
        callbacks.on_test_end(logs)
        return logs

    def _flatten_metrics_in_order(self, logs):
        names = []
        for metric in self.metrics:
            if isinstance(metric, CompileMetrics):
                names.extend(m.name for m in metric.metrics)
            else:
                names.append(metric.name)
        results = [logs[n] for n in names if n in logs]
        results += [logs[k] for k in sorted(logs) if k not in names]
        return results[0] if len(results) == 1 else results

    # -- predict -----------------------------------------------------------------------------
    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
        """≈ `Model.predict`: the model's outputs over `x` in batches, as numpy arrays
        (joined along the batch axis; nested outputs keep their structure)."""
        iterator = EpochIterator(x, batch_size=batch_size, steps_per_epoch=steps,
                                 shuffle=False)
        if not isinstance(callbacks, CallbackList):
            callbacks = CallbackList(callbacks, add_progbar=verbose != 0, verbose=verbose,
                                     epochs=1, steps=iterator.num_batches, model=self)
        self.stop_predicting = False
        callbacks.on_predict_begin()
        outputs = []
        for step, batch in iterator.epoch():
            callbacks.on_predict_batch_begin(step)
            x_batch = unpack_x_y_sample_weight(batch)[0]
            result = self._run_step("predict", (x_batch,))  # tensors, as Keras 3 hands on
            outputs.append(result)
            callbacks.on_predict_batch_end(step, {"outputs": result})
            if self.stop_predicting:
                break
        callbacks.on_predict_end()
        if not outputs:
            raise ValueError("Unexpected result of `predict_function` (Empty batch_outputs). "
                             "Please use `Model.compile(..., run_eagerly=True)`, or "
                             "`tf.config.run_functions_eagerly(True)` for more information "
                             "of where went wrong, or file a issue/bug to `tf.keras`.")
        return _concat(outputs)

    # -- single batches ----------------------------------------------------------------------
    def _single_batch(self, x, y, sample_weight, class_weight=None):
        iterator = EpochIterator(x, y, sample_weight, batch_size=None, shuffle=False,
                                 class_weight=class_weight)
        iterator._batch_size = max(iterator._size, 1)
        iterator.num_batches = 1
        return next(iterator.epoch())[1]

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None,
                       return_dict=False):
        """One training step on one batch (metrics reset first, as Keras 3 does); returns
        its loss and metrics (as `evaluate`)."""
        self._assert_compile_called()
        self.reset_metrics()
        logs = _floats(self._run_step("train", self._single_batch(x, y, sample_weight,
                                                                     class_weight)))
        return logs if return_dict else self._flatten_metrics_in_order(logs)

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        """One evaluation step on one batch (metrics reset first)."""
        self._assert_compile_called()
        self.reset_metrics()
        logs = _floats(self._run_step("test", self._single_batch(x, y, sample_weight)))
        return logs if return_dict else self._flatten_metrics_in_order(logs)

    def predict_on_batch(self, x):
        """The model's outputs on one batch, as numpy."""
        batch = self._single_batch(x, None, None)
        result = self._run_step("predict", (batch[0],))
        return nest.map_structure(lambda t: t.numpy(), result)


def _should_eval(epoch, validation_freq) -> bool:
    epoch = epoch + 1
    if isinstance(validation_freq, int):
        return epoch % validation_freq == 0
    if isinstance(validation_freq, (list, tuple)):
        return epoch in validation_freq
    raise ValueError("Expected `validation_freq` to be a list or int. Received: "
                     f"validation_freq={validation_freq} of the type {type(validation_freq)}.")


def _replicas_in_sync() -> int:
    """How many replicas share this step: the strategy's count inside `strategy.run`, else 1."""
    strategy, replica = _distribute_context.current()
    return 1 if replica is None else strategy.num_replicas_in_sync


def _structure_key(batch):
    """A hashable description of the batch's nesting (dict keys, tuple/list lengths)."""
    if isinstance(batch, dict):
        return ("d",) + tuple((k, _structure_key(v)) for k, v in sorted(batch.items()))
    if isinstance(batch, (list, tuple)):
        return (type(batch).__name__,) + tuple(_structure_key(v) for v in batch)
    return None


