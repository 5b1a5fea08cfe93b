"""The op library: the ops by theme (`*_ops.py`, each registering its `OpDef`s with
`eager.core.registry`), their gradients (`*_grad.py`), and `operators`, which installs
`Tensor`'s Python operators. How an op runs is `eager.core`; importing this package registers
every op and gradient."""

from . import (array_ops, debug_ops, linalg_ops, list_ops, logging_ops, math_ops,  # noqa: F401
               nn_ops, product_ops, random_ops, resource_ops, sort_ops, stateful_random_ops,
               training_ops, list_bulk_ops, io_ops, string_ops, stateless_random_ops,
               check_ops, image_codec_ops, parsing_ops)
from . import special_math_ops, matrix_ops, decomposition_ops, linalg_composites  # noqa: F401
from . import tensor_scatter  # noqa: F401
from . import segment_reduce_ops, counting_ops, complex_ops  # noqa: F401
from . import audio_ops, summary_ops  # noqa: F401
from . import fft_ops  # noqa: F401
from . import string_hash_ops, lookup_ops  # noqa: F401
from . import collective_ops  # noqa: F401
from . import nccl_ops  # noqa: F401
from . import operators  # noqa: F401  (installs Tensor's operators; imports the modules above)
from . import (array_grad, linalg_grad, list_grad, math_grad, nn_grad,  # noqa: F401  (gradients)
               product_grad)
from . import special_math_grad, matrix_grad, decomposition_grad  # noqa: F401  (gradients)
from . import fft_grad  # noqa: F401  (gradients)
from . import cupy_kernels

cupy_kernels.install()  # the CUDA backend's kernel objects for the ops above (none built yet)
