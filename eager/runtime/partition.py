"""Partitioning a placed `Program` per device, and running the partitions of one call together.

`partition(placed)` gives one sub-program per device (≈ TensorFlow's graph partition). Every
data edge between devices becomes a `_Send` in the producer's partition and a `_Recv` in the
consumer's, one pair per (value, destination device) with a unique rendezvous key; a control
edge between devices becomes a pair carrying nothing, so ordering survives the cut. Feeds go to
every partition that reads them and constants to every partition that reads them (dispatch
copies a fed tensor to the device of the node using it, as the unpartitioned program would);
fetches come from the partition that computes them; targets, and all sends, are the targets of
their own partition, so a pass that prunes a partition to its fetches and targets keeps them.

A GPU's partition receives on the host: its `_Recv` nodes run on CPU:0, each followed by an
`Identity` on the GPU that dispatch copies the value to (`send_recv` says why).

Order inside a partition: the program's order, with each send right after its producer and
each receive right before its first consumer. Then every receive waits only for sends that come
earlier in one global order, so partitions run side by side (one thread each) cannot deadlock,
whatever each one's speed, and a partition never holds a received value longer than it must.
A kernel that holds its device's stream until its peers on other devices start (a simulated
GPU's NCCL all-reduce) keeps this true when no member of its group waits for another (automatic
control dependencies chain collectives per device) and the members are adjacent in that order
(the strategy traces them back to back): every send a peer needs before its own member then
comes earlier, queued ahead of the waiting kernel on its stream.

`run_partitioned(partitioned, feed_values, compiler)` runs one call: a fresh `Rendezvous` fed to
each partition that transfers (see `send_recv` for why it is an input), each partition run by
its compiled form. When no two partitions wait on each other in both directions (the common
case: variables on one device, compute on another), the partitions run one after the other on
the calling thread in dependency order: sends never block, so this cannot deadlock, and it
costs no thread. Otherwise each partition but one gets a thread (the caller runs the last).
The first error aborts the rendezvous, so every waiting receive fails at once instead of
hanging; the caller waits for all threads (none outlives the call) and re-raises that error,
class and all.
"""

from __future__ import annotations

import threading

from ..base import dtypes as _dt
from ..devices import registry as _registry
from ..base.errors import InvalidArgumentError
from ..ops.array_ops import IDENTITY
from .interpret import run_program
from .program import Node, Program
from .send_recv import RECV, RENDEZVOUS_SPEC, SEND, Rendezvous, rendezvous_tensor

__all__ = ["PartitionedProgram", "partition", "run_partitioned"]


class PartitionedProgram:
    """A placed program cut per device (see the module doc).

    * `program`: the placed program it was cut from.
    * `devices`: full device names, one per partition, in order of first use.
    * `partitions`: one `Program` per device. A partition that transfers has the rendezvous as
      its first feed (`uses_rendezvous[i]`); its other feeds are caller feeds, at the
      positions `feed_positions[i]` of the caller's feed list.
    * `fetch_sources`: per fetch of `program`, where its value comes from: ("partition", i, j)
      (fetch j of partition i), ("feed", j) or ("constant", tensor).
    * `run_order`: partition indices in dependency order when the partitions can run one after
      the other (no two send to each other, even through a third), else None.
    """

    __slots__ = ("program", "devices", "partitions", "uses_rendezvous", "feed_positions",
                 "fetch_sources", "run_order", "_compiled")

    def __init__(self, program, devices, partitions, uses_rendezvous, feed_positions,
                 fetch_sources, run_order):
        self.program = program
        self.devices = tuple(devices)
        self.partitions = tuple(partitions)
        self.uses_rendezvous = tuple(uses_rendezvous)
        self.feed_positions = tuple(feed_positions)
        self.fetch_sources = tuple(fetch_sources)
        self.run_order = run_order
        self._compiled = None  # (compiler, runners): the last compiler's forms of the partitions

    def partition_for(self, device) -> Program:
        """The partition of `device` (a full or short name)."""
        full = _full_name(device)
        for name, part in zip(self.devices, self.partitions):
            if name == full:
                return part
        raise KeyError(f"No partition for device {device!r}; devices: {list(self.devices)}.")

    def compiled(self, compiler) -> list:
        """`compiler(partition)` for each partition, made once per compiler (the last one used
        is kept; a compiler is normally one module-level function)."""
        cached = self._compiled
        if cached is not None and cached[0] is compiler:
            return cached[1]
        runners = [compiler(p) for p in self.partitions]
        self._compiled = (compiler, runners)
        return runners

    def __repr__(self):
        parts = ", ".join(f"{d.rsplit('device:', 1)[-1]}: {len(p.nodes)} nodes"
                          for d, p in zip(self.devices, self.partitions))
        return f"<PartitionedProgram {self.program.name!r}: {parts}>"


# -- partitioning ----------------------------------------------------------------------------------
def partition(placed) -> PartitionedProgram:
    """Cuts `placed` (every node has a device, see `placement.place`) into one program per
    device joined by `_Send`/`_Recv` pairs (see the module doc)."""
    nodes = placed.nodes
    for node in nodes:
        if not node.device:
            raise ValueError(f"Node {node.name!r} of program {placed.name!r} has no device; "
                             "place the program (eager.runtime.placement.place) before "
                             "partitioning it.")
    work = placed.replace()  # its own value tables: new values are recorded there
    device_of = {node.name: _full_name(node.device) for node in nodes}
    devices = list(dict.fromkeys(device_of[n.name] for n in nodes))
    producer_of = {v: node for node in nodes for v in node.outputs}

    data_dests, control_dests = _destinations(nodes, device_of, producer_of)
    rendezvous = work.new_value(RENDEZVOUS_SPEC, "_rendezvous:0")
    fed = set(placed.feeds)
    builders = {d: _PartitionBuilder(d, rendezvous, fed) for d in devices}
    edges = {}  # (from device, to device) -> None: an ordered set, for a stable run order
    received = {}  # (value, device) -> the value id the receive produced there
    control_received = {}  # (node name, device) -> the receive's node name
    for node in nodes:
        here = device_of[node.name]
        builder = builders[here]
        inputs = []
        for v in node.inputs:
            p = producer_of.get(v)
            if p is None or device_of[p.name] == here:
                inputs.append(v)
                builder.reads(v, work)
                continue
            got = received.get((v, here))
            if got is None:
                got = received[(v, here)] = builder.receive(
                    work, _data_key(device_of[p.name], here, work.value_names.get(v, ""), v),
                    p, v, device_of[p.name])
            inputs.append(got)
        control = []
        for c in node.control_inputs:
            if device_of[c] == here:
                control.append(c)
                continue
            got = control_received.get((c, here))
            if got is None:
                got = control_received[(c, here)] = builder.receive_control(
                    _control_key(device_of[c], here, c), c, device_of[c])
            control.append(got)
        builder.add(node if (tuple(inputs) == node.inputs
                             and tuple(control) == node.control_inputs)
                    else node.replace(inputs=inputs, control_inputs=control))
        for v in node.outputs:
            for dest in data_dests.get((node.name, v), ()):
                builder.send(_data_key(here, dest, work.value_names.get(v, ""), v), node, v,
                             dest)
                edges[(here, dest)] = None
        for dest in control_dests.get(node.name, ()):
            builder.send_control(_control_key(here, dest, node.name), node.name, dest)
            edges[(here, dest)] = None

    feed_index = {v: j for j, v in enumerate(placed.feeds)}
    fetch_sources = [_fetch_source(placed, v, producer_of, device_of, devices, builders,
                                   feed_index) for v in placed.fetches]
    for t in placed.targets:
        builders[device_of[t]].targets.append(t)

    partitions, uses_rendezvous, positions = [], [], []
    for d in devices:
        program, transfers, feeds = builders[d].build(work, feed_index)
        partitions.append(program)
        uses_rendezvous.append(transfers)
        positions.append(feeds)
    return PartitionedProgram(placed, devices, partitions, uses_rendezvous, positions,
                              fetch_sources, _run_order(devices, edges))


def _destinations(nodes, device_of, producer_of):
    """Where each value and each node's completion are needed off their own device:
    ({(producer name, value): [device]}, {node name: [device]}), devices in order of need."""
    data_dests, control_dests = {}, {}
    for node in nodes:
        here = device_of[node.name]
        for v in node.inputs:
            p = producer_of.get(v)
            if p is not None and device_of[p.name] != here:
                _add_once(data_dests.setdefault((p.name, v), []), here)
        for c in node.control_inputs:
            if device_of[c] != here:
                _add_once(control_dests.setdefault(c, []), here)
    return data_dests, control_dests


def _fetch_source(placed, v, producer_of, device_of, devices, builders, feed_index):
    """Where fetch `v` comes from (see `PartitionedProgram.fetch_sources`)."""
    p = producer_of.get(v)
    if p is not None:
        device = device_of[p.name]
        return ("partition", devices.index(device), builders[device].fetch(v))
    if v in feed_index:
        return ("feed", feed_index[v])
    return ("constant", placed.constants[v])


class _PartitionBuilder:
    """The nodes, feeds, constants, fetches and targets of one device's partition."""

    __slots__ = ("device", "rendezvous", "fed", "nodes", "feeds", "constants", "fetches",
                 "targets", "transfers")

    def __init__(self, device, rendezvous, fed):
        self.device = device
        self.rendezvous = rendezvous
        self.fed = fed  # the program's feeds, as a set
        self.nodes = []
        self.feeds = {}  # caller feed value id -> None (ordered set)
        self.constants = {}
        self.fetches = []
        self.targets = []
        self.transfers = False

    def reads(self, v, work):
        if v in work.constants:
            self.constants[v] = work.constants[v]
        elif v in self.fed:
            self.feeds[v] = None

    def add(self, node):
        self.nodes.append(node)

    def send(self, key, producer, v, dest):
        name = f"{producer.name}/_send_{producer.outputs.index(v)}_to_{_tag(dest)}"
        self._transfer(Node(name, SEND, _send_attrs(key, self.device, dest),
                            (self.rendezvous, v), (), device=self.device))
        self.targets.append(name)

    def send_control(self, key, source, dest):
        name = f"{source}/_send_control_to_{_tag(dest)}"
        self._transfer(Node(name, SEND, _send_attrs(key, self.device, dest),
                            (self.rendezvous,), (), (source,), device=self.device))
        self.targets.append(name)

    def receive(self, work, key, producer, v, source) -> int:
        """Adds the receive of `v` (made by `producer` on `source`) and returns the value id
        consumers here read."""
        spec = work.specs[v]
        name = f"{producer.name}/_recv_{producer.outputs.index(v)}_on_{_tag(self.device)}"
        host = self._receiving_host()
        got = work.new_value(spec, work.value_names.get(v, f"value {v}"))
        attrs = {"key": key, "send_device": _short(source), "recv_device": _short(host),
                 "dtype": spec.dtype, "shape": spec.shape}
        self._transfer(Node(name, RECV, attrs, (self.rendezvous,), (got,), device=host))
        if host == self.device or spec.dtype in (_dt.variant, _dt.resource):
            # A TensorList or a handle is host data whatever partition reads it (list ops
            # run on the CPU; a handle names its device): no copy to make.
            return got
        # A GPU: the value arrived on the host; dispatch copies it to the GPU for this Identity.
        on_device = work.new_value(spec, work.value_names.get(v, f"value {v}"))
        self.nodes.append(Node(f"{name}/to_device", IDENTITY, {}, (got,), (on_device,),
                               device=self.device))
        return on_device

    def receive_control(self, key, source_node, source) -> str:
        name = f"{source_node}/_recv_control_on_{_tag(self.device)}"
        host = self._receiving_host()
        attrs = {"key": key, "send_device": _short(source), "recv_device": _short(host),
                 "dtype": None, "shape": None}
        self._transfer(Node(name, RECV, attrs, (self.rendezvous,), (), device=host))
        return name

    def _receiving_host(self) -> str:
        """Where this partition's receives run: its own device when that is a CPU, else CPU:0
        (a receive waits, and must not wait on a GPU stream; see `send_recv`)."""
        device = _registry.lookup(_short(self.device))
        return self.device if device is None or device.inline else _full_name("CPU:0")

    def _transfer(self, node):
        self.nodes.append(node)
        self.transfers = True

    def fetch(self, v) -> int:
        self.fetches.append(v)
        return len(self.fetches) - 1

    def build(self, work, feed_index):
        """(the partition's Program, whether it takes the rendezvous, its caller feed
        positions)."""
        fed = sorted(self.feeds, key=feed_index.__getitem__)
        feeds = ([self.rendezvous] if self.transfers else []) + fed
        program = Program(self.nodes, feeds, self.fetches, tuple(dict.fromkeys(self.targets)),
                          self.constants, work.specs, work.value_names,
                          f"{work.name}/{_short(self.device)}", work._next_value)
        return program, self.transfers, tuple(feed_index[v] for v in fed)


def _send_attrs(key, source, dest):
    return {"key": key, "send_device": _short(source), "recv_device": _short(dest)}


def _data_key(source, dest, value_name, v) -> str:
    """TensorFlow's rendezvous key shape: "send device;recv device;tensor name;...", made
    unique per (value, destination) by the value id."""
    return f"{source};{dest};{value_name};{v}"


def _control_key(source, dest, node_name) -> str:
    return f"{source};{dest};^{node_name}"


def _add_once(found, item):
    if item not in found:
        found.append(item)


def _full_name(device) -> str:
    spec = _registry.parse_device(device)
    if spec.device_type is None:
        raise ValueError(f"{device!r} does not name a device.")
    return (f"/job:localhost/replica:0/task:0/device:{spec.device_type}:"
            f"{spec.device_index or 0}")


def _short(full) -> str:
    return _registry.parse_device(full).short_name


def _tag(full) -> str:
    """"CPU_1": a device as part of a node name (no ':', which separates an output index)."""
    return _short(full).replace(":", "_")


def _run_order(devices, edges):
    """The devices' partition indices in an order where every partition comes after the ones
    sending to it, or None when the partitions wait on each other in a cycle."""
    waiting = {d: 0 for d in devices}
    after = {d: [] for d in devices}
    for src, dst in edges:
        waiting[dst] += 1
        after[src].append(dst)
    ready = [d for d in devices if not waiting[d]]
    order = []
    while ready:
        d = ready.pop(0)
        order.append(d)
        for nxt in after[d]:
            waiting[nxt] -= 1
            if not waiting[nxt]:
                ready.append(nxt)
    if len(order) != len(devices):
        return None
    index = {d: i for i, d in enumerate(devices)}
    return tuple(index[d] for d in order)


# -- running ---------------------------------------------------------------------------------------
def _interpret(program):
    return lambda feeds: run_program(program, feeds)


def run_partitioned(partitioned, feed_values, compiler=None) -> list:
    """Runs one call of `partitioned` with `feed_values` (for `partitioned.program.feeds`, in
    order) and returns the fetched values. `compiler(program) -> callable(feed_values) -> list`
    makes each partition's runner (default: the reference runner, `run_program`)."""
    program = partitioned.program
    if len(feed_values) != len(program.feeds):
        raise ValueError(f"Program {program.name!r} has {len(program.feeds)} feeds; "
                         f"{len(feed_values)} values were given.")
    runners = partitioned.compiled(_interpret if compiler is None else compiler)
    rendezvous = Rendezvous()
    calls = []
    for i, device_name in enumerate(partitioned.devices):
        feeds = [feed_values[j] for j in partitioned.feed_positions[i]]
        if partitioned.uses_rendezvous[i]:
            feeds.insert(0, rendezvous_tensor(rendezvous, _device(device_name)))
        calls.append((runners[i], feeds))
    results = [None] * len(calls)
    if len(calls) == 1:
        results[0] = calls[0][0](calls[0][1])
    elif partitioned.run_order is not None:
        _run_in_order(partitioned, calls, results, rendezvous)
    else:
        _run_in_threads(partitioned, calls, results, rendezvous)
    out = []
    for source in partitioned.fetch_sources:
        kind = source[0]
        if kind == "partition":
            out.append(results[source[1]][source[2]])
        elif kind == "feed":
            out.append(feed_values[source[1]])
        else:
            out.append(source[1])
    return out


def _run_in_order(partitioned, calls, results, rendezvous):
    try:
        for i in partitioned.run_order:
            runner, feeds = calls[i]
            results[i] = runner(feeds)
    except BaseException as exc:
        rendezvous.abort(exc)
        raise


def _run_in_threads(partitioned, calls, results, rendezvous):
    def run(i):
        runner, feeds = calls[i]
        try:
            results[i] = runner(feeds)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller below
            rendezvous.abort(exc)

    threads = [threading.Thread(target=run, args=(i,), daemon=True,
                                name=f"eager-partition {partitioned.devices[i]}")
               for i in range(len(calls) - 1)]
    try:
        for t in threads:
            t.start()
        run(len(calls) - 1)
    except BaseException as exc:  # an interrupt in the caller: stop the others too
        rendezvous.abort(exc)
        raise
    finally:
        for t in threads:
            if t.ident is not None:
                t.join()
    error = rendezvous.error
    if error is not None:
        raise error


def _device(full_name):
    device = _registry.lookup(_short(full_name))
    if device is None:
        raise InvalidArgumentError(None, None, f"Device {full_name} of a partition no longer "
                                               "exists (the devices were reconfigured since "
                                               "partitioning); place the program again.")
    return device
