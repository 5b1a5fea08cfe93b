"""`eager.optimizers.AdamW` (≈ Keras 3 `AdamW`): Adam with decoupled weight decay.

Keras 3's AdamW is Adam whose `weight_decay` defaults to 0.004 and must be set: the decay is the
base optimizer's (`var -= var * weight_decay * lr` before each update, one fused op per variable,
see `eager.optimizers.options`), then Adam's fused update.
"""

from __future__ import annotations

from .adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    """≈ `tf.optimizers.AdamW(learning_rate=0.001, weight_decay=0.004, beta_1=0.9,
    beta_2=0.999, epsilon=1e-7, amsgrad=False, name=None)`, with the base options."""

    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-7, amsgrad=False, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, **kwargs):
        super().__init__(learning_rate=learning_rate, beta_1=beta_1, beta_2=beta_2,
                         epsilon=epsilon, amsgrad=amsgrad, name=name, weight_decay=weight_decay,
                         clipnorm=clipnorm, clipvalue=clipvalue,
                         global_clipnorm=global_clipnorm, use_ema=use_ema,
                         ema_momentum=ema_momentum,
                         ema_overwrite_frequency=ema_overwrite_frequency,
                         loss_scale_factor=loss_scale_factor,
                         gradient_accumulation_steps=gradient_accumulation_steps, **kwargs)
        if self.weight_decay is None:
            raise ValueError("Argument `weight_decay` must be a float. Received: "
                             "weight_decay=None")
