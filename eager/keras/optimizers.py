"""`eager.keras.optimizers` (≈ `keras.optimizers`): `eager.optimizers` under Keras's name.

In TensorFlow 2.21 `tf.keras.optimizers` and `tf.optimizers` are the same Keras 3 optimizers; so
are they here: one set of classes, with fused update kernels (`eager.ops.training_ops`).
"""

from ..optimizers import *  # noqa: F401,F403
from ..optimizers import __all__  # noqa: F401
