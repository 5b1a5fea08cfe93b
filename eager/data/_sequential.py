"""Sequential stand-ins for the pipeline's background work (`_pipeline_api.md`): the same
signatures and error behaviour as the threaded `Prefetcher`, `parallel_map` and
`stage_to_device`, run on the consumer's thread when it asks for an element. `background.py`
chooses which implementation the datasets use."""

from __future__ import annotations

from ..core import context as _context
from ..devices import registry as _registry
from ..devices.base import transfer
from ..tensor import wrap_value
from . import structure as _st

__all__ = ["Prefetcher", "parallel_map", "stage_to_device"]


class _Sequential:
    """An iterator that makes its input lazily and can be closed."""

    __slots__ = ("_make_iterator", "_iterator", "_closed")

    def __init__(self, make_iterator):
        self._make_iterator = make_iterator
        self._iterator = None
        self._closed = False

    def __iter__(self):
        return self

    def _input(self):
        if self._closed:
            raise StopIteration
        if self._iterator is None:
            self._iterator = iter(self._make_iterator())
        return self._iterator

    def __next__(self):
        return next(self._input())

    def close(self, drain=False):
        """Nothing runs ahead, so nothing is left over."""
        self._closed = True
        return [] if drain else None


class Prefetcher(_Sequential):
    __slots__ = ()

    def __init__(self, make_iterator, buffer_size):
        super().__init__(make_iterator)


class _Mapped(_Sequential):
    __slots__ = ("_fn",)

    def __init__(self, make_iterator, fn):
        super().__init__(make_iterator)
        self._fn = fn

    def __next__(self):
        return self._fn(next(self._input()))


def parallel_map(make_iterator, fn, num_parallel_calls, deterministic):
    return _Mapped(make_iterator, fn)


class _Staged(_Sequential):
    __slots__ = ("_device",)

    def __init__(self, iterator, device):
        super().__init__(lambda: iterator)
        found, message = _registry.resolve(_registry.parse_device(device),
                                           _context.soft_device_placement())
        if found is None:
            raise ValueError(f"prefetch_to_device: {message}")
        self._device = found

    def __next__(self):
        device = self._device

        def copied(t):
            source = t._meta.device
            if source is device:
                return t
            return wrap_value(transfer(t._value, source, device), device)
        return _st.map_structure(copied, next(self._input()))


def stage_to_device(iterator, device, buffer_size):
    return _Staged(iterator, device)
