"""`Model.summary()`: Keras 3's table of layers, output shapes and parameter counts.

Keras 3 draws the table with `rich`; this module lays out the same text without it: the same
column positions (`[0.45, 0.80, 1.0]` of the line, or `[0.3, 0.56, 0.74, 1.0]` with a
"Connected to" column for non-sequential graphs), the same shrinking of the columns to the
line length (rich's ratio reduction: the excess taken from each column in turn, rounded),
word-wrapped cells, and heavy-head box lines. The line length defaults to 88 (108 with
"Connected to"), capped at the terminal's width less 4, as in Keras."""

from __future__ import annotations

import shutil
import sys

import numpy as np

from ...base import nest
from ..keras_tensor import KerasTensor

__all__ = ["print_summary", "count_params", "weight_memory_size", "readable_memory_size"]


def count_params(weights) -> int:
    unique = {id(w): w for w in weights}.values()
    return int(sum(int(np.prod(tuple(w.shape))) for w in unique))


def weight_memory_size(weights) -> float:
    """Bytes the weights take (each weight's element count times its dtype's size)."""
    unique = {id(w): w for w in weights}.values()
    return float(sum(int(np.prod(tuple(w.shape))) * np.dtype(w.dtype.as_numpy_dtype).itemsize
                     for w in unique))


def readable_memory_size(size) -> str:
    """Keras's "268.00 B", "795.04 KB" (powers of 1024)."""
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if size / 1024 < 1:
            return f"{size:.2f} {unit}"
        size /= 1024
    return f"{size:.2f} PB"


def _format_shape(shape) -> str:
    return f"({', '.join(str(d) for d in shape)})"


def _layer_shape(layer) -> str:
    nodes = layer._inbound_nodes
    if nodes:
        shapes = [_format_shape(x.shape) for x in nodes[-1].outputs]
    else:
        build_shapes = layer._build_shapes_dict
        if not build_shapes:
            return "?"
        first = next(iter(build_shapes.values()))
        try:
            outputs = layer.compute_output_shape(first)
        except NotImplementedError:
            try:
                outputs = nest.map_structure(
                    lambda x: x.shape, layer.compute_output_spec(KerasTensor(first)))
            except Exception:  # noqa: BLE001 - a shape we cannot work out prints as "?"
                return "?"
        if isinstance(outputs, tuple) and all(d is None or isinstance(d, int) for d in outputs):
            return _format_shape(outputs)
        shapes = [_format_shape(s) for s in outputs]
    return shapes[0] if len(shapes) == 1 else "[" + ", ".join(shapes) + "]"


def _is_sequential_like(model) -> bool:
    nodes = getattr(model, "_nodes", None)
    if nodes is None:
        return True
    for node in nodes:
        if len(node.input_tensors) > 1:
            return False
    depths = {}
    for node in nodes:
        depth = 0 if node.is_input else 1 + max(depths[id(p)] for p in node.parent_nodes)
        depths[id(node)] = depth
    counts = {}
    for depth in depths.values():
        counts[depth] = counts.get(depth, 0) + 1
    if any(c > 1 for c in counts.values()):
        return False
    node_ids = {id(n) for n in nodes}
    for layer in model.layers:
        if sum(1 for n in layer._inbound_nodes if id(n) in node_ids) > 1:
            return False
    return True


def _column_widths(positions, line_length) -> list:
    widths, current = [], 0
    for position in positions:
        width = int(position * line_length) - current
        if width < 4:
            raise ValueError("Insufficient console width to print summary.")
        widths.append(width)
        current += width
    # rich: each column is its width plus 2 of padding; the table (with its len+1 rules) is
    # shrunk to the line by taking the excess from each column in turn, rounded.
    widths = [w + 2 for w in widths]
    room = line_length - (len(widths) + 1)
    excess = sum(widths) - room
    if excess > 0:
        remaining, ratio_left, out = excess, len(widths), []
        for w in widths:
            cut = min(w, round(remaining / ratio_left))
            out.append(w - cut)
            remaining -= cut
            ratio_left -= 1
        widths = out
    return widths


def _wrap(text, width) -> list:
    """Greedy word wrap (words longer than the cell are cut), as rich folds cell text."""
    lines, line = [], ""
    for word in text.split(" "):
        while len(word) > width:
            if line:
                lines.append(line)
                line = ""
            lines.append(word[:width])
            word = word[width:]
        if not line:
            line = word
        elif len(line) + 1 + len(word) <= width:
            line += " " + word
        else:
            lines.append(line)
            line = word
    lines.append(line)
    return lines


def _render_row(cells, widths, justify, bar) -> list:
    wrapped = [_wrap(c, w - 2) for c, w in zip(cells, widths)]
    height = max(len(w) for w in wrapped)
    out = []
    for i in range(height):
        parts = []
        for lines, w, j in zip(wrapped, widths, justify):
            text = lines[i] if i < len(lines) else ""
            text = text.rjust(w - 2) if j == "right" else \
                (text.center(w - 2) if j == "center" else text.ljust(w - 2))
            parts.append(" " + text + " ")
        out.append(bar + bar.join(parts) + bar)
    return out


def _rule(widths, left, fill, mid, right) -> str:
    return left + mid.join(fill * w for w in widths) + right


def _connections(layer, relevant) -> str:
    found = []
    for node in layer._inbound_nodes:
        if id(node) not in relevant:
            continue
        for x in node.input_tensors:
            history = x._keras_history
            found.append(f"{history.operation.name}[{history.node_index}]"
                         f"[{history.tensor_index}]")
    return ", ".join(found) if found else "-"


def _params(layer) -> str:
    if not layer.built:
        return "0 (unbuilt)"
    return f"{layer.count_params():,}"


def summary_text(model, line_length=None, positions=None, expand_nested=False,
                 show_trainable=False) -> str:
    sequential_like = _is_sequential_like(model)
    if sequential_like:
        default, header = 88, ["Layer (type)", "Output Shape", "Param #"]
        positions = positions or [0.45, 0.80, 1.0]
        justify = ["left", "left", "right"]
    else:
        default, header = 108, ["Layer (type)", "Output Shape", "Param #", "Connected to"]
        positions = positions or [0.3, 0.56, 0.74, 1.0]
        justify = ["left", "left", "right", "left"]
    if show_trainable:
        default += 12
        positions = [p * 0.90 for p in positions] + [1.0]
        header.append("Trainable")
        justify.append("center")
    default = min(default, shutil.get_terminal_size().columns - 4)
    line_length = line_length or default
    widths = _column_widths(positions, line_length)
    relevant = {id(n) for n in getattr(model, "_nodes", ())}

    def rows_of(layer, level=0):
        prefix = "   " * level + "└ " if level else ""
        cells = [f"{prefix}{layer.name} ({type(layer).__name__})", _layer_shape(layer),
                 _params(layer)]
        if not sequential_like:
            cells.append(_connections(layer, relevant))
        if show_trainable:
            cells.append(("Y" if layer.trainable else "N") if layer.weights else "-")
        rows = [cells]
        if expand_nested and getattr(layer, "layers", None):
            for inner in layer.layers:
                rows.extend(rows_of(inner, level + 1))
        return rows

    rows = [row for layer in model.layers for row in rows_of(layer)]
    lines = [f'Model: "{model.name}"', _rule(widths, "┏", "━", "┳", "┓")]
    lines += _render_row(header, widths, justify, "┃")
    lines.append(_rule(widths, "┡", "━", "╇", "┩"))
    for i, row in enumerate(rows):
        if i:
            lines.append(_rule(widths, "├", "─", "┼", "┤"))
        lines += _render_row(row, widths, justify, "│")
    lines.append(_rule(widths, "└", "─", "┴", "┘"))
    trainable, non_trainable = model.trainable_weights, model.non_trainable_weights
    t_count, n_count = count_params(trainable), count_params(non_trainable)
    t_size, n_size = weight_memory_size(trainable), weight_memory_size(non_trainable)
    lines.append(f" Total params: {t_count + n_count:,} "
                 f"({readable_memory_size(t_size + n_size)})")
    lines.append(f" Trainable params: {t_count:,} ({readable_memory_size(t_size)})")
    lines.append(f" Non-trainable params: {n_count:,} ({readable_memory_size(n_size)})")
    return "\n".join(lines) + "\n"


def print_summary(model, line_length=None, positions=None, print_fn=None, expand_nested=False,
                  show_trainable=False) -> None:
    """Prints `summary_text` to stdout, or hands the whole text to `print_fn` in one call (as
    Keras 3 does)."""
    text = summary_text(model, line_length=line_length, positions=positions,
                        expand_nested=expand_nested, show_trainable=show_trainable)
    if print_fn is not None:
        print_fn(text)
    else:
        sys.stdout.write(text)
