"""Drawing traced graphs as SVG without Graphviz: the layered layout's properties, what the
picture shows (the op type once, variables by name, no dead ops), collapsing and expanding
control flow and fused nodes, well-formed and deterministic SVG, and the drawing warning
reaching the user through eager's own warning filters."""

import random
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import eager
from eager import TensorSpec
from eager.base import ieee
from eager.graph import drawing, trace
from eager.graph.picture import LARGE_GRAPH, RETURN
from eager.graph.svg_layout import H_GAP, count_crossings, layout

SVG = "{http://www.w3.org/2000/svg}"


def _random_dag(seed, n):
    rng = random.Random(seed)
    sizes = {f"n{i}": (rng.randint(20, 120), rng.choice([20, 36, 51])) for i in range(n)}
    edges = []
    for j in range(1, n):
        for i in rng.sample(range(j), min(j, rng.randint(0, 3))):
            edges.append((f"n{i}", f"n{j}"))
    return sizes, edges


@pytest.mark.parametrize("seed", range(12))
def test_layout_edges_go_down_one_layer_at_a_time_and_boxes_do_not_overlap(seed):
    sizes, edges = _random_dag(seed, 5 + 4 * seed)
    placed = layout(sizes, edges)
    assert set(placed.boxes) == set(sizes)
    assert {(s, d) for s, d, _, _ in placed.routes} == set(edges)
    for src, dst, dummies, points in placed.routes:
        chain = [placed.boxes[src], *(placed.dummies[d] for d in dummies), placed.boxes[dst]]
        # consecutive layers only: an edge spanning k layers passes k - 1 dummies
        assert [b.layer for b in chain] == list(range(chain[0].layer, chain[-1].layer + 1))
        assert len(points) == len(chain)
        assert all(y1 < y2 for (_, y1), (_, y2) in zip(points, points[1:]))  # always downward
        assert points[0] == (chain[0].center_x, chain[0].y + chain[0].height)
        assert points[-1] == (chain[-1].center_x, chain[-1].y)
    everything = list(placed.boxes.values()) + list(placed.dummies.values())
    for row in placed.layers:  # order kept, gaps kept
        boxes = [placed.boxes.get(k) or placed.dummies[k] for k in row]
        for a, b in zip(boxes, boxes[1:]):
            assert a.x + a.width + H_GAP <= b.x + 0.2
    for i, a in enumerate(everything):
        assert a.x >= 0 and a.x + a.width <= placed.width and a.y + a.height <= placed.height
        for b in everything[i + 1:]:
            overlap_x = a.x < b.x + b.width and b.x < a.x + a.width
            overlap_y = a.y < b.y + b.height and b.y < a.y + a.height
            assert not (overlap_x and overlap_y and a.height and b.height), (a, b)


def test_layout_is_deterministic_and_refuses_cycles():
    sizes, edges = _random_dag(7, 30)
    first, second = layout(sizes, edges), layout(dict(sizes), list(edges))
    assert [(k, repr(b)) for k, b in first.boxes.items()] == \
        [(k, repr(b)) for k, b in second.boxes.items()]
    with pytest.raises(ValueError, match="cycle"):
        layout({"a": (10, 10), "b": (10, 10)}, [("a", "b"), ("b", "a")])
    with pytest.raises(ValueError, match="not given"):
        layout({"a": (10, 10)}, [("a", "zz")])


def test_a_diamond_has_no_crossings_and_a_source_sits_above_its_reader():
    sizes = {k: (40, 20) for k in "abcde"}
    placed = layout(sizes, [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"), ("e", "d")])
    assert placed.boxes["e"].layer == placed.boxes["d"].layer - 1  # pulled down, not at the top
    succs = {k: [] for row in placed.layers for k in row}
    for src, dst, dummies, _ in placed.routes:
        chain = [src, *dummies, dst]
        for u, v in zip(chain, chain[1:]):
            succs[u].append(v)
    assert count_crossings(placed.layers, succs) == 0


def _labels(svg_text):
    root = ET.fromstring(svg_text)  # well-formed XML
    found = {}
    for g in root.iter(f"{SVG}g"):
        if g.get("class") == "node":
            found[g.get("data-key")] = [t.text for t in g.findall(f"{SVG}text")]
    return root, found


def test_labels_type_once_variables_by_name_dead_ops_left_out():
    w = eager.Variable([1.0, 2.0], name="weights")

    @eager.function
    def f(x):
        with eager.name_scope("layer"):
            y = x * 2.0 + w
        unused = x - 1.0  # noqa: F841 - dead: nothing returned or must-run needs it
        return eager.identity(eager.nn.relu(y), name="out")

    g = f.get_concrete_function(TensorSpec([2])).graph
    assert any(op.type == "Sub" for op in g.get_operations())  # traced, but dead
    root, labels = _labels(g.to_svg(engine="builtin"))
    assert labels["layer/Mul"] == ["layer/Mul"]  # the name says the type: once
    assert labels["out"] == ["out", "Identity"]  # it does not: name, then type
    assert labels["x"] == ["x", "float32[2]"]
    assert labels[RETURN] == ["return"]
    variable_boxes = [k for k, lines in labels.items() if lines[0] == "weights"]
    assert len(variable_boxes) == 1 and labels[variable_boxes[0]][1] == "variable float32[2]"
    text = " ".join(t for lines in labels.values() for t in lines)
    assert "capture" not in text and "Sub" not in text
    assert "Placeholder" not in text
    # every edge joins two drawn boxes, and its hover text is the value's type
    edges = [g_ for g_ in root.iter(f"{SVG}g") if g_.get("class") == "edge"]
    assert edges and all(e.get("data-src") in labels and e.get("data-dst") in labels
                         for e in edges)
    assert any(e.find(f"{SVG}title").text == "float32[2]" for e in edges)
    # the raw Graphviz text still lists every op, dead ones included
    assert '"Sub"' in g.to_dot()


def _with_cond(n_extra):
    @eager.function
    def f(x):
        for _ in range(n_extra):
            x = x * 1.5
        return eager.cond(eager.reduce_sum(x) > 0, lambda: x * 3.0, lambda: x / 2.0)

    return f.get_concrete_function(TensorSpec([3])).graph


def test_control_flow_expands_small_collapses_large_and_expand_opens_it():
    small = _with_cond(0)
    picture = small.picture()
    assert [p.title for p in picture.panels] == ["If · else", "If · then"]
    assert picture.nodes["If"].kind == "op"
    assert any(n.lines[0] == "RealDiv" for n in picture.panels[0].nodes.values())

    closed = small.picture(expand=False)
    assert closed.panels == [] and closed.nodes["If"].kind == "group"
    assert closed.nodes["If"].lines == ("If", "[+] else: 3, then: 3 ops")

    large = _with_cond(LARGE_GRAPH)
    assert large.picture().panels == [] and large.picture().nodes["If"].kind == "group"
    opened = large.picture(expand=["If"])
    assert len(opened.panels) == 2 and opened.nodes["If"].kind == "op"
    assert len(large.picture(expand=True).panels) == 2

    root, labels = _labels(large.to_svg(engine="builtin"))
    assert labels["If"][-1].startswith("[+]")
    assert [g.get("data-title") for g in root.iter(f"{SVG}g") if g.get("class") == "panel"] \
        == [large.name]
    root, _ = _labels(large.draw(expand="If", engine="builtin").svg)
    assert [g.get("data-title") for g in root.iter(f"{SVG}g") if g.get("class") == "panel"] \
        == [large.name, "If · else", "If · then"]


def test_fused_nodes_of_a_program_collapse_and_expand():
    @eager.function
    def f(x):
        return eager.nn.relu(x * 2.0 + 1.0) - x

    view = f.experimental_get_program(TensorSpec([3]))
    (node,) = view.nodes
    closed = view.picture(expand=False)
    assert closed.nodes[node.name].kind == "group"
    assert closed.nodes[node.name].lines == ("Fused", "[+] 4 ops: Mul,AddV2,Relu,…")
    opened = view.picture(expand=True)
    assert [n.lines[0] for n in opened.nodes.values() if n.kind == "op"] == \
        ["Mul", "AddV2", "Relu", node.name]
    assert view.picture().nodes[node.name].kind == "op"  # small: open by default
    _, labels = _labels(view.to_svg(engine="builtin", expand=False))
    assert labels[node.name][0] == "Fused"


def test_the_same_trace_draws_the_same_bytes():
    def f(x):
        return eager.reduce_sum(eager.nn.relu(x * 2.0) + x, axis=0)

    a = trace(f, TensorSpec([None, 4])).to_svg(engine="builtin")
    b = trace(f, TensorSpec([None, 4])).to_svg(engine="builtin")
    assert a == b and a.startswith("<svg")


def test_notebook_display_bundle_and_bad_engine():
    g = trace(lambda x: x + 1.0, TensorSpec([2]))
    bundle = g.draw(engine="builtin")._repr_mimebundle_()
    assert bundle["image/svg+xml"].startswith("<svg") and "Graph" in bundle["text/plain"]
    with pytest.raises(ValueError, match="Unknown drawing engine 'neato'"):
        g.to_svg(engine="neato")


def test_drawing_warning_is_not_swallowed_by_eagers_filters(tmp_path, monkeypatch):
    """eager's filter ignores RuntimeWarnings raised at its own frames (kernels' floating-point
    signals); a warning about drawing is meant for the user and must get through it."""
    monkeypatch.setenv("PATH", str(tmp_path))  # no Graphviz
    g = trace(lambda x: x * 2.0, TensorSpec([2]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.resetwarnings()
        ieee.ignore_kernel_warnings()  # exactly the filters `import eager` installs
        drawn = g.draw(engine="graphviz")
    assert drawn.engine == "builtin" and drawn.svg.startswith("<svg")
    assert [w.category for w in caught] == [drawing.GraphDrawingWarning]
    assert "Graphviz" in str(caught[0].message) and "eager's own layout" in str(caught[0].message)
    # and the filter still hides a kernel's floating-point signal
    with warnings.catch_warnings(record=True) as caught:
        warnings.resetwarnings()
        ieee.ignore_kernel_warnings()
        eager.constant(np.float32(1.0)) / eager.constant(np.float32(0.0))
    assert caught == []
