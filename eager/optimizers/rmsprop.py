"""`eager.optimizers.RMSprop` (≈ Keras 3 `RMSprop`): each step divides the gradient by a running
root mean square of past gradients, optionally centered and with momentum.

One fused op per variable and step (`eager.ops.training_ops_adaptive`): ResourceApplyKerasRMSProp,
or its variants with a momentum slot, centered, or both.
"""

from __future__ import annotations

import numpy as np

from ..ops import training_ops_adaptive as _train
from .optimizer import Optimizer, run_fused, scalar_as

__all__ = ["RMSprop"]

_OPS = {(False, False): _train.APPLY_RMSPROP, (False, True): _train.APPLY_RMSPROP_MOMENTUM,
        (True, False): _train.APPLY_CENTERED_RMSPROP,
        (True, True): _train.APPLY_CENTERED_RMSPROP_MOMENTUM}


class RMSprop(Optimizer):
    """≈ `tf.optimizers.RMSprop(learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7,
    centered=False, name=None)`, with the base options (`Optimizer`).

    Slots: "velocity", then "momentum" when `momentum > 0`, then "average_gradient" when
    `centered`, each created for every variable before the next (Keras' order).
    """

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False,
                 weight_decay=None, clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99, ema_overwrite_frequency=None,
                 loss_scale_factor=None, gradient_accumulation_steps=None, name=None, **kwargs):
        self._slot_names = (("velocity",) + (("momentum",) if momentum > 0 else ())
                            + (("average_gradient",) if centered else ()))
        super().__init__(learning_rate, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, use_ema=use_ema,
                         ema_momentum=ema_momentum,
                         ema_overwrite_frequency=ema_overwrite_frequency,
                         loss_scale_factor=loss_scale_factor,
                         gradient_accumulation_steps=gradient_accumulation_steps, name=name,
                         **kwargs)
        self.rho = rho
        self.momentum = momentum
        self.epsilon = epsilon
        self.centered = centered
        self._op = _OPS[bool(centered), momentum > 0]

    def _slot_groups(self):
        return tuple((slot,) for slot in self._slot_names)

    def _scalars(self, np_dtype, lr):
        return (scalar_as(lr, np_dtype), np.array(self.rho, np_dtype),
                np.array(1 - self.rho, np_dtype), np.array(self.epsilon, np_dtype),
                np.array(self.momentum, np_dtype))

    def _update(self, var, slots, scalars, grad, indices, fast):
        run_fused(self, self._op, var, slots, scalars, grad, indices, fast)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(rho=self.rho, momentum=self.momentum, epsilon=self.epsilon,
                      centered=self.centered)
        return config
