"""`eager.optimizers.Ftrl` (≈ Keras 3 `Ftrl`): Follow The Regularized Leader, with L1, L2 and
L2-shrinkage regularization.

One fused op per variable and step: ResourceApplyKerasFtrl (`eager.ops.training_ops_adaptive`).
"""

from __future__ import annotations

import numpy as np

from ..ops import training_ops_adaptive as _train
from ..tensor import Tensor
from .optimizer import Optimizer, run_fused, scalar_as

__all__ = ["Ftrl"]


class Ftrl(Optimizer):
    """≈ `tf.optimizers.Ftrl(learning_rate=0.001, learning_rate_power=-0.5,
    initial_accumulator_value=0.1, l1_regularization_strength=0.0,
    l2_regularization_strength=0.0, l2_shrinkage_regularization_strength=0.0, beta=0.0,
    name=None)`, with the base options (`Optimizer`).

    Slots: "accumulator" (starting at `initial_accumulator_value`) and "linear", interleaved.
    """

    _slot_names = ("accumulator", "linear")

    def __init__(self, learning_rate=0.001, learning_rate_power=-0.5,
                 initial_accumulator_value=0.1, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, l2_shrinkage_regularization_strength=0.0,
                 beta=0.0, weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, **kwargs):
        super().__init__(learning_rate, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, use_ema=use_ema,
                         ema_momentum=ema_momentum,
                         ema_overwrite_frequency=ema_overwrite_frequency,
                         loss_scale_factor=loss_scale_factor,
                         gradient_accumulation_steps=gradient_accumulation_steps, name=name,
                         **kwargs)
        for arg, value, sign in (
                ("initial_accumulator_value", initial_accumulator_value, "positive or zero"),
                ("learning_rate_power", learning_rate_power, "negative or zero"),
                ("l1_regularization_strength", l1_regularization_strength, "positive or zero"),
                ("l2_regularization_strength", l2_regularization_strength, "positive or zero"),
                ("l2_shrinkage_regularization_strength", l2_shrinkage_regularization_strength,
                 "positive or zero")):
            if (value > 0.0) if sign.startswith("negative") else (value < 0.0):
                raise ValueError(f"`{arg}` needs to be {sign}. Received: {arg}={value}.")
        self.learning_rate_power = learning_rate_power
        self.initial_accumulator_value = initial_accumulator_value
        self.l1_regularization_strength = l1_regularization_strength
        self.l2_regularization_strength = l2_regularization_strength
        self.l2_shrinkage_regularization_strength = l2_shrinkage_regularization_strength
        self.beta = beta

    def _slot_initial_value(self, slot):
        return self.initial_accumulator_value if slot == "accumulator" else 0

    def _scalars(self, np_dtype, lr):
        lr = scalar_as(lr, np_dtype)
        # Keras: l2_reg = l2 + beta / (2.0 * lr) in the dtype, then 2 * l2_reg.
        two_l2_reg = 2 * (self.l2_regularization_strength + self.beta / (2.0 * lr))
        if not isinstance(two_l2_reg, Tensor):
            two_l2_reg = np.asarray(two_l2_reg, np_dtype)
        return (lr, np.array(-self.learning_rate_power, np_dtype),
                np.array(self.l1_regularization_strength, np_dtype), two_l2_reg,
                np.array(2 * self.l2_shrinkage_regularization_strength, np_dtype))

    def _update(self, var, slots, scalars, grad, indices, fast):
        run_fused(self, _train.APPLY_FTRL, var, slots, scalars, grad, indices, fast)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(learning_rate_power=self.learning_rate_power,
                      initial_accumulator_value=self.initial_accumulator_value,
                      l1_regularization_strength=self.l1_regularization_strength,
                      l2_regularization_strength=self.l2_regularization_strength,
                      l2_shrinkage_regularization_strength=(
                          self.l2_shrinkage_regularization_strength),
                      beta=self.beta)
        return config
