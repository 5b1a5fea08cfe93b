"""`eager.distribute.experimental` ≈ `tf.distribute.experimental`: the multi-worker strategy's
older name and its communication options, and `CentralStorageStrategy`."""

from .central_storage import CentralStorageStrategy
from .collective_util import CommunicationImplementation, CommunicationOptions
from .multi_worker import MultiWorkerMirroredStrategy

__all__ = ["CentralStorageStrategy", "CommunicationImplementation", "CommunicationOptions",
           "MultiWorkerMirroredStrategy"]
