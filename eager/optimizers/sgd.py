"""`eager.optimizers.SGD` (≈ Keras 3 `SGD`): gradient descent, with optional (Nesterov)
momentum.

Without momentum each variable's step is one ResourceApplyGradientDescent (`var -= lr * g`, in
place when the buffer is not shared); with momentum it is one ResourceApplyKerasMomentum
(`m = m * momentum - lr * g; var += m`, or the Nesterov form). Executing eagerly on a GPU, the
dense updates of several variables of one dtype are one grouped op instead
(`_GroupedResourceApplyGradientDescent`, `_GroupedResourceApplyKerasMomentum`: one launch per
eight variables, `Optimizer.run_updates`), with the same results.
IndexedSlices gradients use the sparse variants, with Keras 3's numbers (see
`eager.ops.training_ops`).
"""

from __future__ import annotations

import numpy as np

from ..core.dispatch import execute, run_bare
from ..ops import training_ops as _train
from .optimizer import Optimizer, scalar_as, scalar_input

__all__ = ["SGD"]

_GD = _train.APPLY_GRADIENT_DESCENT


class SGD(Optimizer):
    """≈ `tf.optimizers.SGD(learning_rate=0.01, momentum=0.0, nesterov=False, name=None)`.

    Slots: "momentum" (one per variable) when `momentum` is not 0.
    """

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None, use_ema=False,
                 ema_momentum=0.99, ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, **kwargs):
        self._slot_names = ("momentum",) if momentum != 0 else ()
        super().__init__(learning_rate, name=name, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, use_ema=use_ema,
                         ema_momentum=ema_momentum,
                         ema_overwrite_frequency=ema_overwrite_frequency,
                         loss_scale_factor=loss_scale_factor,
                         gradient_accumulation_steps=gradient_accumulation_steps, **kwargs)
        if not isinstance(momentum, float) or momentum < 0 or momentum > 1:
            raise ValueError("`momentum` must be a float between [0, 1].")
        self.momentum = momentum
        self.nesterov = nesterov

    def _scalars(self, np_dtype, lr):
        # Keras casts the Python momentum to the dtype through float32, as convert_to_tensor.
        return scalar_as(lr, np_dtype), np.array(np.float32(self.momentum), np_dtype)

    def _grouped_kind(self):
        # A subclass with an update or scalars of its own keeps its per-variable ops.
        if type(self)._update is not SGD._update or type(self)._scalars is not SGD._scalars:
            return None
        if self.momentum == 0:
            return "gradient_descent", {}
        return "momentum", {"use_nesterov": bool(self.nesterov)}

    def _update(self, var, slots, scalars, grad, indices, fast):
        lr, momentum = scalars
        if slots and self.momentum != 0:
            attrs = {"use_nesterov": bool(self.nesterov)}
            if indices is None:
                self._run(_train.APPLY_KERAS_MOMENTUM, (var, slots[0]), (lr, grad, momentum),
                          attrs, fast)
            else:
                self._run(_train.SPARSE_APPLY_KERAS_MOMENTUM, (var, slots[0]),
                          (lr, grad, indices, momentum), attrs, fast)
        elif indices is None:
            if fast:  # Hot path: one kernel call per variable.
                run_bare(_GD, (var._handle, lr, grad._value))
            else:
                execute(_GD, (var.handle, scalar_input(lr, var._handle.device), grad))
        else:
            self._run(_train.SPARSE_APPLY_GRADIENT_DESCENT, (var,), (lr, grad, indices), {},
                      fast)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(momentum=self.momentum, nesterov=self.nesterov)
        return config
