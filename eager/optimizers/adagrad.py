"""`eager.optimizers.Adagrad` (≈ Keras 3 `Adagrad`): each step divides the gradient by the root
of the sum of all past squared gradients (per element).

One fused op per variable and step: ResourceApplyKerasAdagrad
(`eager.ops.training_ops_adaptive`).
"""

from __future__ import annotations

import numpy as np

from ..ops import training_ops_adaptive as _train
from .optimizer import Optimizer, run_fused, scalar_as

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """≈ `tf.optimizers.Adagrad(learning_rate=0.001, initial_accumulator_value=0.1,
    epsilon=1e-7, name=None)`, with the base options (`Optimizer`).

    Slot: "accumulator", starting at `initial_accumulator_value`.
    """

    _slot_names = ("accumulator",)

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7,
                 weight_decay=None, clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99, ema_overwrite_frequency=None,
                 loss_scale_factor=None, gradient_accumulation_steps=None, name=None, **kwargs):
        super().__init__(learning_rate, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, use_ema=use_ema,
                         ema_momentum=ema_momentum,
                         ema_overwrite_frequency=ema_overwrite_frequency,
                         loss_scale_factor=loss_scale_factor,
                         gradient_accumulation_steps=gradient_accumulation_steps, name=name,
                         **kwargs)
        self.initial_accumulator_value = initial_accumulator_value
        self.epsilon = epsilon

    def _slot_initial_value(self, slot):
        return self.initial_accumulator_value if slot == "accumulator" else 0

    def _scalars(self, np_dtype, lr):
        return scalar_as(lr, np_dtype), np.array(self.epsilon, np_dtype)

    def _update(self, var, slots, scalars, grad, indices, fast):
        run_fused(self, _train.APPLY_ADAGRAD, var, slots, scalars, grad, indices, fast)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(initial_accumulator_value=self.initial_accumulator_value,
                      epsilon=self.epsilon)
        return config
