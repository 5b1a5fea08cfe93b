"""`eager.optimizers.Adamax` (≈ Keras 3 `Adamax`): Adam with the infinity norm, a running
maximum of past gradient magnitudes, in place of the second moment.

One fused op per variable and step: ResourceApplyKerasAdamax
(`eager.ops.training_ops_adaptive`).
"""

from __future__ import annotations

import numpy as np

from ..ops import training_ops_adaptive as _train
from .optimizer import Optimizer, keras_float, run_fused, scalar_as, step_power

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """≈ `tf.optimizers.Adamax(learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
    name=None)`, with the base options (`Optimizer`).

    Slots: "momentum" and "norm", interleaved per variable.
    """

    _slot_names = ("momentum", "norm")

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
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
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon

    def _scalars(self, np_dtype, lr):
        # Keras: beta_1 ** step from the cast beta_1, and 1 - that in the dtype; the other
        # constants straight from Python.
        step = scalar_as(self._local_step(), np_dtype)
        beta_1_power = step_power(keras_float(self.beta_1, np_dtype), step)
        return (scalar_as(lr, np_dtype), np.array(1 - self.beta_1, np_dtype),
                np.array(self.beta_2, np_dtype), np.array(self.epsilon, np_dtype),
                np.asarray(1 - beta_1_power) if isinstance(beta_1_power, np.ndarray)
                else 1 - beta_1_power)

    def _update(self, var, slots, scalars, grad, indices, fast):
        run_fused(self, _train.APPLY_ADAMAX, var, slots, scalars, grad, indices, fast)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(beta_1=self.beta_1, beta_2=self.beta_2, epsilon=self.epsilon)
        return config
