"""`Prefetcher`: a source's elements made ahead, on a thread of their own, into a bounded buffer.

The consumer's `next()` returns what `next()` on the source would have returned, in the same
order, errors included (see `channel`); while the consumer works on one element (a training
step), the producer thread makes the next ones. Threads give real overlap here because numpy
releases the GIL inside its kernels, and the step's kernels do too (or run on a device).

The producer thread runs under the device scope of the thread that started it (`inherited`),
synchronously, with no gradient tapes. A source that must run elsewhere enters its own scope
inside the callable that makes it.
"""

from __future__ import annotations

from . import autotune
from .channel import END, Channel, Failure, _Marker
from .lifecycle import CLOSE_TIMEOUT_S, PipelineIterator

__all__ = ["Prefetcher"]


class Prefetcher(PipelineIterator):
    """≈ the iterator of `dataset.prefetch(buffer_size)`: an iterator over the elements of
    `make_iterator()`, which a producer thread calls and reads ahead, at most `buffer_size`
    elements (`AUTOTUNE`: see `autotune`; `max_buffer` caps how deep it grows). `buffer_size=0`
    makes elements when asked for, on
    the consumer's thread, with no thread at all (TensorFlow's `prefetch(0)`). The thread is
    named "eager-data <name>".

    `close()` (or `with`) stops the thread; so does dropping the iterator, and interpreter exit
    (`lifecycle`). After the source ends, or after `close()`, `next()` raises StopIteration.
    """

    __slots__ = ("_channel", "_make", "_source")

    def __init__(self, make_iterator, buffer_size=autotune.AUTOTUNE, name="prefetch",
                 max_buffer=None):
        if not callable(make_iterator):
            raise TypeError(f"Prefetcher needs a zero-argument callable returning an iterator, "
                            f"got {type(make_iterator).__name__}.")
        start, limit = autotune.prefetch_buffer(buffer_size)
        if max_buffer is not None:  # an autotuned buffer grows no deeper (0: never grows)
            limit = max(start, min(limit, max_buffer))
        self._source = None
        if start == 0:  # no buffer: the source is made and read on the consumer's thread
            self._channel = None
            self._make = make_iterator
            self._start(())
            return
        self._make = None
        channel = Channel(start, limit)
        self._channel = channel
        self._start((channel,), [(f"eager-data {name}", _produce, ([make_iterator], channel))])

    def __next__(self):
        # Hot: once per element.
        channel = self._channel
        if channel is None:
            return self._next_inline()
        item = channel.get()
        cls = item.__class__
        if cls is Failure:
            raise item.error
        if cls is _Marker:
            if item is END:
                channel.close()  # later calls find it closed instead of waiting
            raise StopIteration
        return item

    def _next_inline(self):
        source = self._source
        if source is None:
            make, self._make = self._make, None
            if make is None:
                raise StopIteration  # closed
            self._source = source = iter(make())
            self._shutdown.upstream = source  # closing this closes a pipeline it reads
        return next(source)

    def close(self, drain=False, timeout=CLOSE_TIMEOUT_S):
        self._make = self._source = None
        if drain and self._channel is None:
            self._shutdown.upstream = None  # read inline: the source stays usable where it is
        return super().close(drain, timeout)

    close.__doc__ = PipelineIterator.close.__doc__


def _produce(box, channel, shutdown):
    """The producer thread: the source's outcomes into `channel` until it ends or is closed."""
    try:
        make_iterator = box.pop()
        try:
            iterator = iter(make_iterator())
        except BaseException as exc:  # noqa: BLE001 - the consumer's first next() raises it
            if channel.put(Failure(exc)):
                channel.put(END)
            return
        del make_iterator
        shutdown.upstream = iterator
        put, wait_for_room = channel.put, channel.wait_for_room
        while wait_for_room():
            try:
                item = next(iterator)
            except StopIteration:
                put(END)
                return
            except Exception as exc:  # noqa: BLE001 - this element's outcome; the source goes on
                item = Failure(exc)
            except BaseException as exc:  # noqa: BLE001 - SystemExit and the like end the source
                if put(Failure(exc)):
                    put(END)
                return
            if not put(item):
                return
    finally:
        shutdown.upstream = None
