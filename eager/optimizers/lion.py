"""`eager.optimizers.Lion` (≈ Keras 3 `Lion`): steps of fixed size `learning_rate` per element,
in the sign of an interpolation between the momentum and the gradient.

One fused op per variable and step: ResourceApplyKerasLion (`eager.ops.training_ops_adaptive`).
"""

from __future__ import annotations

import numpy as np

from ..ops import training_ops_adaptive as _train
from .optimizer import Optimizer, keras_float, run_fused, scalar_as

__all__ = ["Lion"]


class Lion(Optimizer):
    """≈ `tf.optimizers.Lion(learning_rate=0.001, beta_1=0.9, beta_2=0.99, name=None)`, with the
    base options (`Optimizer`).

    Slot: "momentum".
    """

    _slot_names = ("momentum",)

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.99, weight_decay=None,
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
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        if beta_1 <= 0 or beta_1 > 1:
            raise ValueError("Argument `beta_1` must be in the [0, 1] range. Otherwise, the "
                             "optimizer degenerates to SignSGD. Received: "
                             f"beta_1={beta_1}.")

    def _scalars(self, np_dtype, lr):
        # Keras casts the betas to the dtype and takes 1 - beta there.
        beta_1 = keras_float(self.beta_1, np_dtype)
        beta_2 = keras_float(self.beta_2, np_dtype)
        one = np.array(1, np_dtype)
        return (scalar_as(lr, np_dtype), beta_1, np.asarray(one - beta_1), beta_2,
                np.asarray(one - beta_2))

    def _update(self, var, slots, scalars, grad, indices, fast):
        run_fused(self, _train.APPLY_LION, var, slots, scalars, grad, indices, fast)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(beta_1=self.beta_1, beta_2=self.beta_2)
        return config
