"""HTML for notebooks' rich displays (`_repr_html_`): the pieces every displayed object shares.

Jupyter shows an object's `_repr_html_` in place of its `repr` when the method exists; the
plain-text repr stays what terminals and doctests see. The objects (tensors, variables, modules,
functions, datasets) gather their facts themselves and hand them here as plain values, so this
module knows nothing of eager's types and sits at the bottom of the package.

Everything a user controls (names, string tensors' values, error messages) goes through
`escape`: a string tensor holding `<script>` shows as that text. Array values are summarised as
numpy summarises them, capped at `MAX_ELEMENTS` shown elements and `EDGE_ITEMS` per edge even
when numpy's own print options ask for more, so displaying a large tensor formats a few dozen
numbers, never the whole array.
"""

from __future__ import annotations

import html

import numpy as np

__all__ = ["escape", "array_text", "facts_card", "tensor_card", "tree_node", "tree_html",
           "structure_rows", "MAX_ELEMENTS", "EDGE_ITEMS"]

#: Arrays with more elements than this are summarised ("..."), whatever numpy's threshold says.
MAX_ELEMENTS = 1000
#: Items kept at each edge of a summarised axis, at most.
EDGE_ITEMS = 3

# One small style sheet per output, scoped by class so it cannot restyle the notebook. Colours
# come from the theme's text colour (`currentColor`) so light and dark themes both read well.
_STYLE = (
    "<style>"
    ".eager-display{font-family:var(--jp-code-font-family,monospace);font-size:12px}"
    ".eager-display .eager-title{font-weight:bold}"
    ".eager-display table{border-collapse:collapse;margin:2px 0}"
    ".eager-display th{text-align:left;padding:0 8px 0 0;opacity:.7;font-weight:normal}"
    ".eager-display td{text-align:left;padding:0 8px 0 0}"
    ".eager-display pre{margin:2px 0;padding:2px 4px;"
    "border-left:2px solid currentColor;opacity:.9}"
    ".eager-display details{margin-left:1em}"
    ".eager-display summary{cursor:pointer}"
    ".eager-display .eager-note{opacity:.7;font-style:italic}"
    "</style>"
)


def escape(value) -> str:
    """`value`'s text with HTML's special characters (`<`, `>`, `&`, quotes) escaped."""
    return html.escape(str(value), quote=True)


def array_text(array) -> str:
    """A host array's values as numpy prints them (`np.array2string`), summarised past
    `MAX_ELEMENTS` with at most `EDGE_ITEMS` per edge. numpy formats only the edges it shows,
    so the cost does not grow with the array."""
    array = np.asarray(array)
    if array.ndim == 0:
        return str(array[()])  # as a scalar prints: 3.0, not numpy's 0-d "3."
    options = np.get_printoptions()
    return np.array2string(array, separator=" ",
                           threshold=min(options["threshold"], MAX_ELEMENTS),
                           edgeitems=min(options["edgeitems"], EDGE_ITEMS))


def _rows(facts) -> str:
    return "".join(f"<tr><th>{escape(key)}</th><td>{escape(value)}</td></tr>"
                   for key, value in facts)


def facts_card(title, facts, body_text=None, note=None, body_html="") -> str:
    """One object's display: a bold `title`, a table of `facts` ((name, value) pairs), then
    `body_text` (preformatted, e.g. array values) or a `note` in italics, then `body_html`
    (already escaped by the caller)."""
    parts = [_STYLE, '<div class="eager-display">',
             f'<div class="eager-title">{escape(title)}</div>', f"<table>{_rows(facts)}</table>"]
    if body_text is not None:
        parts.append(f"<pre>{escape(body_text)}</pre>")
    if note is not None:
        parts.append(f'<div class="eager-note">{escape(note)}</div>')
    parts.append(body_html)
    parts.append("</div>")
    return "".join(parts)


def tree_node(label, summary, facts=(), children=()) -> tuple:
    """One node of a collapsible tree (`tree_html`): a `label` ("dense (Dense)"), a short
    `summary` ("1,234 params"), `facts` rows shown when expanded ((name, value) pairs: a
    variable and its shape), and child nodes."""
    return (label, summary, tuple(facts), tuple(children))


def _tree(node, open_) -> str:
    label, summary, facts, children = node
    head = f"<b>{escape(label)}</b> <span class=\"eager-note\">{escape(summary)}</span>"
    if not facts and not children:
        return f'<div style="margin-left:1em">{head}</div>'
    inner = (f"<table>{_rows(facts)}</table>" if facts else "") + \
        "".join(_tree(child, False) for child in children)
    return f"<details{' open' if open_ else ''}><summary>{head}</summary>{inner}</details>"


def tree_html(title, root, footer=()) -> str:
    """A collapsible tree (HTML `<details>`, which needs no script) of `root`'s nodes under a
    bold `title`, the root expanded, and `footer` facts below it (totals)."""
    return (f'{_STYLE}<div class="eager-display"><div class="eager-title">{escape(title)}</div>'
            f"{_tree(root, True)}<table>{_rows(footer)}</table></div>")


def tensor_card(kind, shape, dtype_name, device_name, values=None, state=None,
                extra_facts=()) -> str:
    """A tensor's (or a variable's: `kind`) display: its shape, dtype and device, then either
    its host `values` summarised (`array_text`) or, when they are not available without waiting
    or at all, `state` ("pending: ...", "failed: ...")."""
    facts = [("shape", shape), ("dtype", dtype_name), ("device", device_name), *extra_facts]
    if values is None:
        return facts_card(kind, facts, note=state)
    return facts_card(kind, facts, body_text=array_text(values))


def structure_rows(structure, path="") -> list:
    """(path, repr) rows of a nested structure's leaves (a dataset's `element_spec`): dicts by
    key, lists and tuples by index, namedtuples by field; a bare leaf is one row with path
    "element"."""
    if isinstance(structure, dict):
        items = [(f"{path}[{key!r}]", value) for key, value in structure.items()]
    elif isinstance(structure, tuple) and hasattr(type(structure), "_fields"):
        items = [(f"{path}.{field}" if path else field, value)
                 for field, value in zip(structure._fields, structure)]
    elif isinstance(structure, (list, tuple)):
        items = [(f"{path}[{index}]", value) for index, value in enumerate(structure)]
    else:
        return [(path or "element", repr(structure))]
    return [row for item_path, value in items for row in structure_rows(value, item_path)]
