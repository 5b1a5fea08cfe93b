"""`eager.keras.trainers`: `compile`/`fit`/`evaluate`/`predict` (the `Trainer` mixin of
`keras.Model`) and the data adapters feeding them."""

from .trainer import Trainer

__all__ = ["Trainer"]
