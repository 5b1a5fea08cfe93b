"""`layout(sizes, edges)`: where each box of a directed acyclic graph goes in a picture.

Sugiyama's layered method, kept small enough to read in one sitting:

1. layers by longest path from the sources (every edge points down); a source is then pulled
   down to just above its first reader, so a constant or a capture sits next to its use instead
   of at the top with a long edge;
2. an edge spanning several layers is cut into one segment per layer by *dummy* nodes (points
   the edge bends at), so every segment joins consecutive layers;
3. the order within each layer by barycentres (each node at the mean position of its neighbours
   in the layer above, sweeping down, then below, sweeping up), keeping the order with the
   fewest crossings seen;
4. x positions: each node wants to sit at the mean centre of its neighbours; the closest
   placement that keeps the layer's order and the minimum gap is an isotonic regression (pool
   adjacent violators), repeated over a few sweeps; y: one row per layer.

Everything is decided from the input's order (no sets, no ids), so one graph always gives the
same picture. Sizes are whatever the caller measures (the renderer's text boxes).
"""

from __future__ import annotations

import heapq

__all__ = ["Box", "Layout", "layout", "count_crossings"]

H_GAP = 24  # between neighbours in a layer
V_GAP = 36  # between layers
MARGIN = 12
DUMMY_WIDTH = 6
_SWEEPS = 8
_PLACEMENT_SWEEPS = 6


class Box:
    """A node's place: top-left corner `x`, `y`, its `width`, `height`, and its `layer`."""

    __slots__ = ("x", "y", "width", "height", "layer")

    def __init__(self, x, y, width, height, layer):
        self.x, self.y, self.width, self.height, self.layer = x, y, width, height, layer

    @property
    def center_x(self) -> float:
        return self.x + self.width / 2

    def __repr__(self):
        return f"Box(x={self.x:g}, y={self.y:g}, w={self.width:g}, h={self.height:g}, " \
               f"layer={self.layer})"


class Layout:
    """`boxes`: key -> Box for the real nodes; `routes`: per input edge `(src, dst, dummies,
    points)`, the dummy keys it passes through and its polyline (x, y) from the bottom of `src`
    to the top of `dst`; `layers`: each layer's keys in order, dummies included (a dummy key is
    `("dummy", n)`); `width`, `height` of the whole."""

    __slots__ = ("boxes", "routes", "layers", "width", "height", "dummies")

    def __init__(self, boxes, routes, layers, width, height, dummies):
        self.boxes = boxes
        self.routes = routes
        self.layers = layers
        self.width = width
        self.height = height
        self.dummies = dummies  # dummy key -> Box


def layout(sizes, edges) -> Layout:
    """Places the nodes of `sizes` (key -> (width, height), in a preferred order) joined by
    `edges` (`(src, dst)` pairs of keys; repeats are drawn once). ValueError on a cycle or an
    edge naming an unknown key."""
    keys = list(sizes)
    index = {k: i for i, k in enumerate(keys)}
    unique = []
    seen = set()
    for src, dst in edges:
        if src not in index or dst not in index:
            raise ValueError(f"layout: edge {src!r} -> {dst!r} names a node it was not given.")
        if (src, dst) not in seen and src != dst:
            seen.add((src, dst))
            unique.append((src, dst))
    order = _topological(keys, index, unique)
    layer = _layers(order, unique)

    # Dummies: one per layer an edge crosses.
    preds = {k: [] for k in keys}
    succs = {k: [] for k in keys}
    chains = []
    n_dummies = 0
    for src, dst in unique:
        chain = []
        prev = src
        for level in range(layer[src] + 1, layer[dst]):
            d = ("dummy", n_dummies)
            n_dummies += 1
            layer[d] = level
            preds[d], succs[d] = [], []
            succs[prev].append(d)
            preds[d].append(prev)
            chain.append(d)
            prev = d
        succs[prev].append(dst)
        preds[dst].append(prev)
        chains.append((src, dst, chain))

    n_layers = 1 + max(layer.values(), default=0)
    layers = [[] for _ in range(n_layers)]
    for k in order:  # real nodes in topological order, then each edge's dummies
        layers[layer[k]].append(k)
    for _, _, chain in chains:
        for d in chain:
            layers[layer[d]].append(d)
    layers = _ordered(layers, preds, succs)

    width_of = {k: sizes[k][0] for k in keys}
    height_of = {k: sizes[k][1] for k in keys}
    for _, _, chain in chains:
        for d in chain:
            width_of[d] = DUMMY_WIDTH
            height_of[d] = 0
    center = _place_x(layers, preds, succs, width_of)

    boxes, dummies = {}, {}
    y = MARGIN
    for level, row in enumerate(layers):
        row_height = max((height_of[k] for k in row), default=0)
        for k in row:
            box = Box(center[k] - width_of[k] / 2, y + (row_height - height_of[k]) / 2,
                      width_of[k], height_of[k], level)
            (boxes if k in index else dummies)[k] = box
        y += row_height + V_GAP
    height = y - V_GAP + MARGIN
    width = max((b.x + b.width for b in (*boxes.values(), *dummies.values())), default=0)
    width += MARGIN

    routes = []
    for src, dst, chain in chains:
        a, b = boxes[src], boxes[dst]
        points = [(a.center_x, a.y + a.height)]
        points += [(dummies[d].center_x, dummies[d].y) for d in chain]
        points.append((b.center_x, b.y))
        routes.append((src, dst, tuple(chain), tuple(points)))
    return Layout(boxes, routes, layers, width, height, dummies)


def _topological(keys, index, edges) -> list:
    """Kahn's algorithm, always taking the earliest-given ready node."""
    indegree = {k: 0 for k in keys}
    out = {k: [] for k in keys}
    for src, dst in edges:
        indegree[dst] += 1
        out[src].append(dst)
    ready = [index[k] for k in keys if not indegree[k]]
    heapq.heapify(ready)
    order = []
    while ready:
        k = keys[heapq.heappop(ready)]
        order.append(k)
        for d in out[k]:
            indegree[d] -= 1
            if not indegree[d]:
                heapq.heappush(ready, index[d])
    if len(order) != len(keys):
        stuck = [k for k in keys if indegree[k]][:3]
        raise ValueError(f"layout: the graph has a cycle (through {stuck!r}).")
    return order


def _layers(order, edges) -> dict:
    preds = {k: [] for k in order}
    succs = {k: [] for k in order}
    for src, dst in edges:
        preds[dst].append(src)
        succs[src].append(dst)
    layer = {}
    for k in order:
        layer[k] = 1 + max((layer[p] for p in preds[k]), default=-1)
    for k in reversed(order):  # sources move down to just above their first reader
        if not preds[k] and succs[k]:
            layer[k] = min(layer[s] for s in succs[k]) - 1
    return layer


def count_crossings(layers, succs) -> int:
    """Edge crossings between consecutive layers (segments, dummies included)."""
    total = 0
    for upper, lower in zip(layers, layers[1:]):
        pos = {k: i for i, k in enumerate(lower)}
        ends = sorted((i, pos[s]) for i, k in enumerate(upper) for s in succs[k] if s in pos)
        for a in range(len(ends)):
            ia, ja = ends[a]
            for b in range(a + 1, len(ends)):
                ib, jb = ends[b]
                if ib > ia and jb < ja:
                    total += 1
    return total


def _ordered(layers, preds, succs) -> list:
    best = [list(row) for row in layers]
    best_crossings = count_crossings(best, succs)
    current = [list(row) for row in best]
    for sweep in range(_SWEEPS):
        down = sweep % 2 == 0
        rows = range(1, len(current)) if down else range(len(current) - 2, -1, -1)
        for i in rows:
            fixed = current[i - 1] if down else current[i + 1]
            pos = {k: j for j, k in enumerate(fixed)}
            neighbours = preds if down else succs
            keyed = []
            for j, k in enumerate(current[i]):
                near = [pos[n] for n in neighbours[k] if n in pos]
                keyed.append((sum(near) / len(near) if near else j, j, k))
            keyed.sort(key=lambda e: (e[0], e[1]))
            current[i] = [k for _, _, k in keyed]
        crossings = count_crossings(current, succs)
        if crossings < best_crossings:
            best, best_crossings = [list(row) for row in current], crossings
        if not best_crossings:
            break
    return best


def _place_x(layers, preds, succs, width_of) -> dict:
    """Centre x of every node: packed first, then pulled towards its neighbours' mean centre
    while keeping each layer's order and gaps (`_closest_ordered`)."""
    center = {}
    for row in layers:
        x = MARGIN
        for k in row:
            center[k] = x + width_of[k] / 2
            x += width_of[k] + H_GAP
    for sweep in range(_PLACEMENT_SWEEPS):
        down = sweep % 2 == 0
        rows = range(1, len(layers)) if down else range(len(layers) - 2, -1, -1)
        for i in rows:
            row = layers[i]
            neighbours = preds if down else succs
            wanted = []
            for k in row:
                near = [center[n] for n in neighbours[k]]
                wanted.append(sum(near) / len(near) if near else center[k])
            for k, c in zip(row, _closest_ordered(wanted, [width_of[k] for k in row])):
                center[k] = c
    left = min((center[k] - width_of[k] / 2 for row in layers for k in row), default=MARGIN)
    shift = MARGIN - left
    return {k: round(c + shift, 1) for k, c in center.items()}


def _closest_ordered(wanted, widths) -> list:
    """Centres as close as possible (least squares) to `wanted` with each one at least its
    half-widths plus H_GAP right of the previous: with offsets o_i (the minimum distance of
    centre i from centre 0), z_i = c_i - o_i must not decrease, an isotonic regression of
    wanted_i - o_i, solved by pooling adjacent violators."""
    offsets = [0.0]
    for a, b in zip(widths, widths[1:]):
        offsets.append(offsets[-1] + a / 2 + H_GAP + b / 2)
    blocks = []  # [mean, count]
    for w, o in zip(wanted, offsets):
        blocks.append([w - o, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            m2, n2 = blocks.pop()
            m1, n1 = blocks.pop()
            blocks.append([(m1 * n1 + m2 * n2) / (n1 + n2), n1 + n2])
    z = [m for m, n in blocks for _ in range(n)]
    return [zi + o for zi, o in zip(z, offsets)]
