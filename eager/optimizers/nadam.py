"""`eager.optimizers.Nadam` (≈ Keras 3 `Nadam`): Adam with Nesterov momentum, using the
momentum schedule `u_t = beta_1 * (1 - 0.5 * 0.96 ** t)` and its running product.

Each update first advances the product (one scalar variable, "u_product", of the first trained
variable's dtype, as Keras), then runs one fused ResourceApplyKerasNadam per variable
(`eager.ops.training_ops_adaptive`) with the step's scalars computed from it.
"""

from __future__ import annotations

import numpy as np

from ..core.context import device as device_scope
from ..ops import training_ops_adaptive as _train
from ..ops.math_ops import cast
from ..tensor import Tensor
from ..variables import Variable
from .optimizer import Optimizer, keras_float, run_fused, scalar_as, scalar_like, step_power

__all__ = ["Nadam"]


class Nadam(Optimizer):
    """≈ `tf.optimizers.Nadam(learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
    name=None)`, with the base options (`Optimizer`).

    Slots: "momentum" and "velocity", interleaved per variable; plus the checkpoint child
    "u_product" (the product of the momentum schedule so far).
    """

    _slot_names = ("momentum", "velocity")

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
        self._u_product = None
        self._u_product_now = None  # this update's product (host array or tensor)

    def _create_slots(self, variables):
        super()._create_slots(variables)
        if self._u_product is None and self._trained:
            first = self._trained[0]
            with device_scope(first.device):
                self._u_product = Variable(1.0, dtype=first.dtype, trainable=False,
                                           name="u_product")
            self._variables.append(self._u_product)
            self._restore_deferred()

    def _u_terms(self, decay, beta_1, step):
        """beta_1 * (1 - 0.5 * decay ** step), in the dtype (a host array or a tensor)."""
        return beta_1 * (1.0 - 0.5 * step_power(decay, step))

    def _prepare_step(self):
        # u_product *= beta_1 * (1 - 0.5 * 0.96 ** (iterations + 1)), in its own dtype.
        u = self._u_product
        np_dtype = u.dtype.as_numpy_dtype
        step = scalar_as(self._local_step(), np_dtype)
        beta_1 = keras_float(self.beta_1, np_dtype)
        schedule = 1.0 - 0.5 * step_power(keras_float(0.96, np_dtype), step)
        if isinstance(step, Tensor):
            new = u.value() * scalar_like(beta_1, step) * schedule
        else:
            new = np.asarray(u.numpy() * beta_1 * schedule, np_dtype)
        u.assign(new, read_value=False)
        self._u_product_now = new

    def _scalars(self, np_dtype, lr):
        step = scalar_as(self._local_step(), np_dtype)
        decay = keras_float(0.96, np_dtype)
        beta_1 = keras_float(self.beta_1, np_dtype)
        beta_2 = keras_float(self.beta_2, np_dtype)
        next_step = step + np.array(1, np_dtype)
        u_t = self._u_terms(decay, beta_1, step)
        u_t_1 = self._u_terms(decay, beta_1, next_step)
        u_product_t = self._u_product_now
        if isinstance(u_product_t, Tensor):
            if u_product_t.dtype.as_numpy_dtype != np_dtype:
                u_product_t = cast(u_product_t, np_dtype)
        else:
            u_product_t = np.asarray(u_product_t, np_dtype)
        u_product_t_1 = u_product_t * u_t_1
        beta_2_power = step_power(beta_2, step)
        one = np.array(1, np_dtype)
        return tuple(np.asarray(x) if not isinstance(x, Tensor) else x for x in (
            scalar_as(lr, np_dtype), one - beta_1, one - beta_2,
            np.array(self.epsilon, np_dtype), u_t_1, one - u_product_t_1, one - u_t,
            one - u_product_t, one - beta_2_power))

    def _update(self, var, slots, scalars, grad, indices, fast):
        run_fused(self, _train.APPLY_NADAM, var, slots, scalars, grad, indices, fast)

    def _trackable_children(self) -> dict:
        children = super()._trackable_children()
        if self._u_product is not None:
            children["u_product"] = self._u_product
        return children

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(beta_1=self.beta_1, beta_2=self.beta_2, epsilon=self.epsilon)
        return config
