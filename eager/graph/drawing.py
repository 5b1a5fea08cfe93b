"""Drawing a `Picture` as SVG: with eager's own layout, or through Graphviz when it is there.

Engines:

* `"builtin"`: `svg_render` (a layered layout written here): always available, and the same
  bytes for the same graph;
* `"graphviz"`: Graphviz's `dot` on the same picture (`dot.picture_to_dot`);
* `"auto"` (the default): Graphviz when `dot` is on PATH, else the builtin layout, quietly
  (nothing is lost: both draw the same picture).

`svg(picture, engine)` is for code: asking for Graphviz without it raises RuntimeError.
`Drawing` is for notebooks, where a failing display would hide the cell's output: when
Graphviz was asked for and is missing or fails, it warns (`GraphDrawingWarning`) and draws
with the builtin layout. The warning is a `UserWarning`, so the filter eager installs for its
kernels' floating-point RuntimeWarnings (`eager.base.ieee.ignore_kernel_warnings`) does not
hide it.
"""

from __future__ import annotations

import warnings

from . import dot as _dot
from .svg_render import render

__all__ = ["svg", "Drawing", "GraphDrawingWarning", "ENGINES"]

ENGINES = ("auto", "builtin", "graphviz")


class GraphDrawingWarning(UserWarning):
    """A graph was drawn other than asked (Graphviz missing or failing: the builtin layout
    drew it instead)."""


def _checked_engine(engine) -> str:
    if engine not in ENGINES:
        raise ValueError(f"Unknown drawing engine {engine!r}; use one of "
                         f"{', '.join(map(repr, ENGINES))}.")
    return engine


def svg(picture, engine="auto") -> str:
    """The SVG text of `picture` drawn by `engine` (module doc)."""
    engine = _checked_engine(engine)
    if engine == "builtin" or (engine == "auto" and _dot.dot_program() is None):
        return render(picture)
    return _dot.run_dot(_dot.picture_to_dot(picture))


class Drawing:
    """A drawn picture, for notebooks: `_repr_svg_` / `_repr_mimebundle_` give the SVG (and a
    text line for terminals); `svg` is the text; `engine` the engine that drew it."""

    __slots__ = ("svg", "engine", "_text")

    def __init__(self, picture, engine="auto", text=None):
        engine = _checked_engine(engine)
        self._text = text or f"<drawing of {picture.title!r}: {len(picture)} boxes>"
        if engine == "auto":
            engine = "graphviz" if _dot.dot_program() is not None else "builtin"
        if engine == "graphviz":
            try:
                self.svg, self.engine = svg(picture, "graphviz"), "graphviz"
                return
            except Exception as exc:  # noqa: BLE001 - missing, failing or timing out alike
                warnings.warn(f"{exc} Drawn with eager's own layout instead.",
                              GraphDrawingWarning, stacklevel=3)
        self.svg, self.engine = render(picture), "builtin"

    def _repr_svg_(self):
        return self.svg

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"image/svg+xml": self.svg, "text/plain": self._text}

    def __repr__(self):
        return self._text
