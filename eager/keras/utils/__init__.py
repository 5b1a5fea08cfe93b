"""`eager.keras.utils` ≈ `keras.utils`."""

from .numerical_utils import normalize, to_categorical
from .random_seed import set_random_seed

__all__ = ["normalize", "to_categorical", "set_random_seed"]
