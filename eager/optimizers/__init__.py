"""`eager.optimizers` (≈ `tf.optimizers`, which is Keras 3's `tf.keras.optimizers`).

Every optimizer updates each variable with one fused resource-update op per step
(`eager.ops.training_ops`, `training_ops_adaptive`): atomic, in place when the variable's buffer
is not shared. The base options (clipping, weight decay, loss scaling, gradient accumulation,
moving averages) are applied around those ops by `options`. `get`, `serialize` and
`deserialize` read and write optimizers as Keras 3 does.
"""

from . import schedules
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .ftrl import Ftrl
from .lion import Lion
from .nadam import Nadam
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .serialization import deserialize, get, serialize
from .sgd import SGD

__all__ = ["Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "Ftrl", "Lion", "Nadam",
           "Optimizer", "RMSprop", "SGD", "deserialize", "get", "schedules", "serialize"]
