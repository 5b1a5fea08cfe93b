"""`eager.optimizers.Adadelta` (≈ Keras 3 `Adadelta`): steps scaled by the ratio of running
root mean squares of past updates and of past gradients.

One fused op per variable and step: ResourceApplyKerasAdadelta
(`eager.ops.training_ops_adaptive`).
"""

from __future__ import annotations

import numpy as np

from ..ops import training_ops_adaptive as _train
from .optimizer import Optimizer, run_fused, scalar_as

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """≈ `tf.optimizers.Adadelta(learning_rate=0.001, rho=0.95, epsilon=1e-7, name=None)`, with
    the base options (`Optimizer`).

    Slots: "accumulated_grad" and "accumulated_delta_var", interleaved per variable.
    """

    _slot_names = ("accumulated_grad", "accumulated_delta_var")

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-7, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None, use_ema=False,
                 ema_momentum=0.99, ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, **kwargs):
        super().__init__(learning_rate, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, use_ema=use_ema,
                         ema_momentum=ema_momentum,
                         ema_overwrite_frequency=ema_overwrite_frequency,
                         loss_scale_factor=loss_scale_factor,
                         gradient_accumulation_steps=gradient_accumulation_steps, name=name,
                         **kwargs)
        self.rho = rho
        self.epsilon = epsilon

    def _scalars(self, np_dtype, lr):
        return (scalar_as(lr, np_dtype), np.array(self.rho, np_dtype),
                np.array(1 - self.rho, np_dtype), np.array(self.epsilon, np_dtype))

    def _update(self, var, slots, scalars, grad, indices, fast):
        run_fused(self, _train.APPLY_ADADELTA, var, slots, scalars, grad, indices, fast)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(rho=self.rho, epsilon=self.epsilon)
        return config
