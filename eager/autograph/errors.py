"""The error a function AutoGraph cannot convert raises (`to_code`, `to_graph`).

When `eager.function` or a converted call meets such a function, it warns once and calls the
function as it is instead (see `eager.autograph.conversion`).
"""

from __future__ import annotations

__all__ = ["ConversionError"]


class ConversionError(ValueError):
    """AutoGraph could not convert a function (its source is unavailable, or it uses a
    construct the converter does not support); the message says which and why."""
