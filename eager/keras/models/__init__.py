"""`eager.keras.models` (≈ `keras.models`): `Model` (subclassed or functional) and
`Sequential`; `clone_model`, `model_from_json`, `load_model`, `save_model`."""

from .functional import Functional
from .model import Model
from .sequential import Sequential
from .cloning import clone_model, model_from_json
from ..saving.saving_api import load_model, save_model

__all__ = ["Functional", "Model", "Sequential", "clone_model", "load_model", "model_from_json",
           "save_model"]
