"""`render(picture)`: a `Picture` as SVG text, laid out by `svg_layout`, no Graphviz needed.

Boxes are sized from their text (a monospace font, so a character's width is known), each
picture and panel is laid out on its own and the panels are placed side by side, left to
right, each under its title. Node groups carry `data-key` and `data-kind`, edge groups
`data-src` and `data-dst`, and every box and edge a `<title>` (the hover text: the op, its
device, an edge's dtype and shape), so the SVG is also a readable record of the picture. The
output depends only on the picture: the same graph gives the same bytes.
"""

from __future__ import annotations

from .svg_layout import layout

__all__ = ["render", "box_size", "layout_of"]

CHAR_WIDTH = 7.2  # px per character of 12 px monospace
LINE_HEIGHT = 15
PAD_X, PAD_Y = 8, 6
TITLE_HEIGHT = 22
PANEL_GAP = 32

_STYLE = {  # kind -> (fill, stroke, corner radius, stroke width)
    "op": ("#eaf1fb", "#4a6fa5", 3, 1),
    "input": ("#e6f4ea", "#3c8d50", 10, 1),
    "variable": ("#fff1dc", "#c07a12", 3, 1.5),
    "capture": ("#f2f2f2", "#777777", 3, 1),
    "constant": ("#f7f7f7", "#999999", 3, 1),
    "output": ("#efe8f7", "#6b4fa0", 10, 1),
    "group": ("#fff8d0", "#a08400", 3, 2.5),
}


def box_size(node) -> tuple:
    width = max(len(line) for line in node.lines) * CHAR_WIDTH + 2 * PAD_X
    return round(width, 1), len(node.lines) * LINE_HEIGHT + 2 * PAD_Y


def layout_of(picture):
    """The layout of `picture`'s own boxes (not its panels)."""
    return layout({k: box_size(n) for k, n in picture.nodes.items()},
                  [(e.src, e.dst) for e in picture.edges])


def _escape(text) -> str:
    return (str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


def _num(v) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def render(picture) -> str:
    """The SVG document of `picture` and its panels (module doc)."""
    parts = []
    x0 = 0.0
    total_height = 0.0
    for panel in picture.all_pictures():
        placed = layout_of(panel)
        parts.append(f'<g class="panel" data-title="{_escape(panel.title)}" '
                     f'transform="translate({_num(x0)},0)">')
        parts.append(f'<text class="title" x="12" y="16" font-weight="bold">'
                     f'{_escape(panel.title)}</text>')
        parts.append(f'<g transform="translate(0,{TITLE_HEIGHT})">')
        parts.extend(_edges(panel, placed))
        parts.extend(_nodes(panel, placed))
        parts.append("</g></g>")
        width = max(placed.width, len(panel.title) * CHAR_WIDTH + 24)
        x0 += width + PANEL_GAP
        total_height = max(total_height, placed.height + TITLE_HEIGHT)
    width = max(x0 - PANEL_GAP, 1)
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{_num(width)}" '
            f'height="{_num(total_height)}" viewBox="0 0 {_num(width)} {_num(total_height)}" '
            'font-family="Menlo, Consolas, DejaVu Sans Mono, monospace" font-size="12">'
            '<defs><marker id="eager-arrow" viewBox="0 0 8 8" refX="8" refY="4" '
            'markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L8,4 L0,8 z" '
            'fill="#555"/></marker></defs>')
    return head + "".join(parts) + "</svg>\n"


def _edges(picture, placed):
    labels = {}
    for e in picture.edges:
        entry = labels.setdefault((e.src, e.dst), [e.label, e.control])
        entry[1] = entry[1] and e.control  # a data edge wins over a control edge
    out = []
    for src, dst, _, points in placed.routes:
        label, control = labels[(src, dst)]
        dash = ' stroke-dasharray="4,3"' if control else ""
        text = "control" if control else label
        pts = " ".join(f"{_num(x)},{_num(y)}" for x, y in points)
        out.append(f'<g class="edge" data-src="{_escape(src)}" data-dst="{_escape(dst)}">'
                   f'<title>{_escape(text)}</title><polyline points="{pts}" fill="none" '
                   f'stroke="#555" stroke-width="1.2"{dash} marker-end="url(#eager-arrow)"/>'
                   "</g>")
    return out


def _nodes(picture, placed):
    out = []
    for key, node in picture.nodes.items():
        box = placed.boxes[key]
        fill, stroke, radius, stroke_width = _STYLE.get(node.kind, _STYLE["op"])
        out.append(f'<g class="node" data-key="{_escape(key)}" data-kind="{node.kind}">'
                   f"<title>{_escape(node.tooltip or key)}</title>"
                   f'<rect x="{_num(box.x)}" y="{_num(box.y)}" width="{_num(box.width)}" '
                   f'height="{_num(box.height)}" rx="{radius}" fill="{fill}" '
                   f'stroke="{stroke}" stroke-width="{stroke_width}"/>')
        cx = box.x + box.width / 2
        for i, line in enumerate(node.lines):
            y = box.y + PAD_Y + LINE_HEIGHT * (i + 1) - 4
            weight = ' font-weight="bold"' if i == 0 else ' fill="#444"'
            out.append(f'<text x="{_num(cx)}" y="{_num(y)}" text-anchor="middle"{weight}>'
                       f"{_escape(line)}</text>")
        out.append("</g>")
    return out
