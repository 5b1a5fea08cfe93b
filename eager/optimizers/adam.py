"""`eager.optimizers.Adam` (≈ Keras 3 `Adam`), with the AMSGrad variant.

Each variable's step is one ResourceApplyAdam (or ResourceApplyAdamWithAmsgrad): the moment
updates and the variable update happen under one lock set, in place when unshared; executing
eagerly on a GPU, the dense ResourceApplyAdam updates of several variables of one dtype are one
`_GroupedResourceApplyAdam` instead (one launch per eight variables: `Optimizer.run_updates`),
with the same results. The bias
correction uses `iterations + 1` as Keras does. IndexedSlices gradients update every row, as
Keras 3 does (see `eager.ops.training_ops` for the exact sparse arithmetic).
"""

from __future__ import annotations

import numpy as np

from ..ops import training_ops as _train
from ..ops.math_ops import pow as _pow
from ..tensor import Tensor
from .optimizer import Optimizer, scalar_as, scalar_like

__all__ = ["Adam"]


class Adam(Optimizer):
    """≈ `tf.optimizers.Adam(learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
    amsgrad=False, name=None)`.

    Slots: "momentum" and "velocity" per variable, and "velocity_hat" with `amsgrad`.
    `epsilon` is Keras' "epsilon hat": added to sqrt(v), not scaled by the bias correction.
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, **kwargs):
        self._slot_names = (("momentum", "velocity", "velocity_hat") if amsgrad
                            else ("momentum", "velocity"))
        super().__init__(learning_rate, name=name, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, use_ema=use_ema,
                         ema_momentum=ema_momentum,
                         ema_overwrite_frequency=ema_overwrite_frequency,
                         loss_scale_factor=loss_scale_factor,
                         gradient_accumulation_steps=gradient_accumulation_steps, **kwargs)
        for arg, value in (("beta_1", beta_1), ("beta_2", beta_2), ("epsilon", epsilon)):
            if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)):
                raise TypeError(f"Adam: `{arg}` must be a float, got {value!r}.")
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.amsgrad = bool(amsgrad)

    def _slot_groups(self):
        # Keras creates momentum and velocity together per variable, then velocity_hat.
        if self.amsgrad:
            return (("momentum", "velocity"), ("velocity_hat",))
        return (("momentum", "velocity"),)

    def _scalars(self, np_dtype, lr):
        # Keras' roundings: beta cast to the dtype through float32 (a Python float becomes a
        # float32 tensor first) for the powers; 1 - beta and epsilon straight from Python.
        # While tracing, `step` and `lr` are graph tensors (read on every call) and the powers
        # are graph ops; eagerly they are host arrays.
        step = scalar_as(self._local_step(), np_dtype)
        beta_1 = np.array(np.float32(self.beta_1), np_dtype)
        beta_2 = np.array(np.float32(self.beta_2), np_dtype)
        if isinstance(step, Tensor):  # tracing, or the step counter lives on an accelerator
            powers = (_pow(scalar_like(beta_1, step), step), _pow(scalar_like(beta_2, step), step))
        else:
            powers = (np.asarray(np.power(beta_1, step)), np.asarray(np.power(beta_2, step)))
        return (*powers, scalar_as(lr, np_dtype), np.array(1 - self.beta_1, np_dtype),
                np.array(1 - self.beta_2, np_dtype), np.array(self.epsilon, np_dtype))

    def _grouped_kind(self):
        # A subclass with an update or scalars of its own keeps its per-variable ops.
        own = type(self)._update is Adam._update and type(self)._scalars is Adam._scalars
        return ("adam", {}) if own and not self.amsgrad else None

    def _update(self, var, slots, scalars, grad, indices, fast):
        if self.amsgrad:
            op = _train.APPLY_ADAM_WITH_AMSGRAD if indices is None \
                else _train.SPARSE_APPLY_ADAM_WITH_AMSGRAD
        else:
            op = _train.APPLY_ADAM if indices is None else _train.SPARSE_APPLY_ADAM
        inputs = scalars + ((grad,) if indices is None else (grad, indices))
        self._run(op, (var,) + slots, inputs, {}, fast)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(beta_1=self.beta_1, beta_2=self.beta_2, epsilon=self.epsilon,
                      amsgrad=self.amsgrad)
        return config
