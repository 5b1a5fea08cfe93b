"""`eager.Session`: TF1-style running of a graph by feeds and fetches (≈ `tf.compat.v1.Session`).

For graphs from traced functions (`concrete_function.graph`) or built by hand
(`with graph.as_default():`). A `run` names what it wants (`fetches`: tensors, operations, their
names, in any nest), what it supplies (`feed_dict`: any tensor of the graph, not only
placeholders, by tensor or by "op:0" name) and gets numpy values back in the fetches' structure
(None for operations).

Each distinct (feeds, fetches, targets) gets its own executable: the graph pruned to what those
fetches and targets need (`eager.runtime.executable`), so an unrelated placeholder need not be
fed and an unrelated side effect does not run, exactly as TensorFlow's DirectSession. Building one
costs a pruning pass, the optimisation passes and a compile, so executables are cached, the way
DirectSession caches its executors:

* the *fast key* is the feed, fetch and target names in the order given: a repeated `run` with
  the same call finds its executable with one dict lookup;
* on a miss, the *sorted key* (the same names sorted) is tried: the same request with the names
  in another order reuses the executable built for the sorted order, and only the mapping from
  the caller's order to that order is new. The fast key is then remembered too.

`cache_stats` counts compiles and both kinds of hits (tests use it to show a reordered request
hits the cache). Both keys also hold the inter-op thread count
(`eager.config.threading.set_inter_op_parallelism_threads`): with 2 or more, requests run on the
parallel executor.

Captured eager tensors of a traced graph are constants unless fed. A hand-built `Graph()` has
automatic control dependencies like a traced one (a fetched read waits for the writes before
it in program order, and they run with it); `Graph(auto_control_deps=False)` gives TF1's
behaviour, where only the edges the builder adds order anything and unfetched writes run only
as targets. Graphs are append-only, so
an executable stays valid when ops are added later (it never needed them).
"""

from __future__ import annotations

from ..core import context as _context
from ..base import nest
from . import threads as _threads
from ..base.errors import InvalidArgumentError
from ..graph import Graph, Operation, SymbolicTensor, get_default_graph
from .executable import session_executable
from ..core.tensor_conversion import convert_to_tensor

__all__ = ["Session"]


class _Executable:
    """One cached executable and how a call's feeds/fetches map onto its order."""

    __slots__ = ("run", "feed_order", "fetch_order")

    def __init__(self, run, feed_order, fetch_order):
        self.run = run
        self.feed_order = feed_order  # position in the caller's feeds of each executable feed
        self.fetch_order = fetch_order  # position in the executable's fetches of each fetch


class Session:
    """≈ `tf.compat.v1.Session(target='', graph=None, config=None)`. `Session(graph)` is also
    accepted (a Graph as the first argument), since there is no remote target to name."""

    def __init__(self, target="", graph=None, config=None):
        if isinstance(target, Graph):
            target, graph = "", target
        if target:
            raise InvalidArgumentError(None, None, f"Session target {target!r}: only in-process "
                                       "sessions exist (target '').")
        if graph is None:
            graph = get_default_graph()
            if graph is None:
                raise ValueError("Session() needs a graph: pass one (e.g. a concrete function's "
                                 "`.graph`) or create the session inside `graph.as_default()`.")
        if not isinstance(graph, Graph):
            raise TypeError(f"Session graph must be an eager Graph, got {type(graph).__name__}.")
        self.graph = graph
        self.config = config
        self._closed = False
        self._by_fast_key = {}
        self._by_sorted_key = {}
        self.cache_stats = {"compiled": 0, "fast_hits": 0, "sorted_hits": 0}

    # -- running ---------------------------------------------------------------------------------
    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs what `fetches` need with `feed_dict` fed; returns numpy values in the structure
        of `fetches` (None where an operation was fetched)."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        flat = nest.flatten(fetches)
        tensors, targets, slots = [], [], []
        for item in flat:
            found = self._as_graph_element(item)
            if isinstance(found, Operation):
                targets.append(found)
                slots.append(None)
            else:
                slots.append(len(tensors))
                tensors.append(found)
        feed_tensors, feed_values = self._feeds(feed_dict or {})
        executable = self._executable(feed_tensors, tensors, targets)
        # A sync point: the graph runs here, on this thread, and reads variables directly, so
        # work this thread (or any) queued before, such as an async assign, lands first.
        _context.wait_for_pending_work()
        ordered = [feed_values[i] for i in executable.feed_order]
        outputs = executable.run(ordered)
        values = [outputs[i] for i in executable.fetch_order]
        results = [None if s is None else values[s].numpy() for s in slots]
        return nest.pack_sequence_as(fetches, results)

    def _executable(self, feeds, fetches, targets) -> _Executable:
        threads = _threads.settings.inter_op
        fast_key = (tuple(t.name for t in feeds), tuple(t.name for t in fetches),
                    tuple(op.name for op in targets), threads)
        found = self._by_fast_key.get(fast_key)
        if found is not None:
            self.cache_stats["fast_hits"] += 1
            return found
        sorted_feeds = sorted(set(feeds), key=_name)
        sorted_fetches = sorted(set(fetches), key=_name)
        sorted_targets = sorted(set(targets), key=_name)
        sorted_key = (tuple(t.name for t in sorted_feeds), tuple(t.name for t in sorted_fetches),
                      tuple(op.name for op in sorted_targets), threads)
        run = self._by_sorted_key.get(sorted_key)
        if run is None:
            run = session_executable(self.graph, sorted_feeds, sorted_fetches, sorted_targets,
                                     threads)
            self._by_sorted_key[sorted_key] = run
            self.cache_stats["compiled"] += 1
        else:
            self.cache_stats["sorted_hits"] += 1
        feed_position = {t.name: i for i, t in enumerate(feeds)}
        fetch_position = {t.name: i for i, t in enumerate(sorted_fetches)}
        found = _Executable(run, tuple(feed_position[t.name] for t in sorted_feeds),
                            tuple(fetch_position[t.name] for t in fetches))
        self._by_fast_key[fast_key] = found
        return found

    def _feeds(self, feed_dict):
        tensors, values = [], []
        for key, value in feed_dict.items():
            t = self._as_graph_element(key, tensor_only=True)
            tensors.append(t)
            values.append(_fed_value(t, value))
        return tensors, values

    def _as_graph_element(self, item, tensor_only=False):
        """A fetch or feed key as a tensor or operation of the graph this `Session` runs."""
        if isinstance(item, str):
            if ":" in item:
                return self.graph.get_tensor_by_name(item)
            if tensor_only:
                raise ValueError(f"Cannot feed {item!r}: it names an operation; feed a tensor "
                                 f"('{item}:0').")
            return self.graph.get_operation_by_name(item)
        if isinstance(item, SymbolicTensor) or (isinstance(item, Operation) and not tensor_only):
            if item.graph is not self.graph:
                raise ValueError(f"Fetch or feed {item.name!r} is not an element of this "
                                 f"session's graph {self.graph.name!r}.")
            return item
        raise TypeError(f"Fetch argument {item!r} has invalid type {type(item).__name__}: must "
                        "be a graph tensor, an operation, or the name of one.")

    # -- lifetime --------------------------------------------------------------------------------
    def close(self) -> None:
        self._closed = True
        self._by_fast_key.clear()
        self._by_sorted_key.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        return f"<eager.Session on {self.graph!r}>"


def _name(t) -> str:
    return t.name


def _fed_value(t, value):
    """`value` as an eager tensor of `t`'s dtype, its shape checked against `t`'s static shape
    (TensorFlow's ValueError for a mismatch)."""
    try:
        fed = convert_to_tensor(value, dtype=t.dtype)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"Cannot feed value {value!r} for Tensor {t.name!r} of dtype "
                        f"{t.dtype.name}: {exc}") from exc
    if not t.shape.is_compatible_with(fed.shape):
        raise ValueError(f"Cannot feed value of shape {tuple(fed.shape)} for Tensor {t.name!r}, "
                         f"which has shape {_shape_text(t.shape)}")
    return fed


def _shape_text(shape) -> str:
    if shape.rank is None:
        return "<unknown>"
    return "(" + ", ".join("?" if d is None else str(d) for d in shape) + (
        ",)" if shape.rank == 1 else ")")
