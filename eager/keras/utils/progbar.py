"""`keras.utils.Progbar`: the progress bar `fit`, `evaluate` and `predict` print.

The text is Keras 3's, character for character: with verbose=1 a line redrawn in place
("\\r", after backspaces over the previous line) with the step count, a bar of 20 "━" (bold,
green and grey ANSI colours), the ETA while running or the elapsed seconds at the end, the time
per step in s/ms/us and each value to four decimals (or in exponent form below 1e-3); with
verbose=2 one line per epoch when it ends. Keras treats every terminal as dynamic (its test
includes "posix" in `sys.modules`, true on every POSIX system), and so does this, so a
notebook, a pipe and a terminal get the same bytes; a notebook renders the carriage returns as
an in-place update.
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np

__all__ = ["Progbar"]


def _write(message: str) -> None:
    """Writes to the current `sys.stdout` (looked up per call, so redirections and notebook
    capture see it) and flushes, so the line appears while the step runs."""
    stream = sys.stdout
    try:
        stream.write(message)
    except UnicodeEncodeError:  # a stream that cannot encode the bar: write what it can
        encoding = getattr(stream, "encoding", None) or "utf-8"
        stream.write(message.replace("━", "=").encode(encoding, "ignore").decode(encoding))
    stream.flush()


def _format_value(avg, signed=True) -> str:
    """Four decimals, or exponent form for small values; verbose=2 (`signed=False`) compares
    the signed value, so it prints negative values in exponent form (as Keras does)."""
    return f" {avg:.4f}" if (abs(avg) if signed else avg) > 1e-3 else f" {avg:.4e}"


class Progbar:
    """≈ `keras.utils.Progbar(target, width=20, verbose=1, interval=0.05,
    stateful_metrics=None, stateless_metrics=None, unit_name="step")`.

    Values named in `stateful_metrics` (or not named in `stateless_metrics`, when that is
    given) are shown as passed; the others are averaged over the steps seen, weighted by how
    many steps each update covered."""

    def __init__(self, target, width=20, verbose=1, interval=0.05, stateful_metrics=None,
                 stateless_metrics=None, unit_name="step"):
        if stateful_metrics is not None and stateless_metrics is not None:
            raise ValueError(
                "Only one of `stateful_metrics` or `stateless_metrics` can be provided. "
                "`stateful_metrics` is used to make metrics stateless by default (with an "
                "exclusion list), while `stateless_metrics` is used to make metrics stateful "
                "by default (with an exclusion list).")
        self.target = target
        self.width = width
        self.verbose = verbose
        self.interval = interval
        self.unit_name = unit_name
        if stateful_metrics is not None:
            self.stateful_metrics, self.stateless_metrics = set(stateful_metrics), None
        elif stateless_metrics is not None:
            self.stateful_metrics, self.stateless_metrics = None, set(stateless_metrics)
        else:
            self.stateful_metrics, self.stateless_metrics = set(), None
        self._dynamic_display = True
        self._seen_so_far = 0
        self._values = {}        # name -> [sum of value * steps, steps]
        self._values_order = []  # names in the order first seen
        self._start = time.time()
        self._last_update = 0
        self._time_after_first_step = None
        self._prev_total_width = 0

    def _averaged(self, name) -> bool:
        if self.stateful_metrics is not None:
            return name not in self.stateful_metrics
        return name in self.stateless_metrics

    def update(self, current, values=None, finalize=None):
        """Shows step `current`; `values` is a list of (name, value) for the last step."""
        if finalize is None:
            finalize = False if self.target is None else current >= self.target
        for name, value in values or ():
            if name not in self._values_order:
                self._values_order.append(name)
            if self._averaged(name) and not finalize:
                steps = max(current - self._seen_so_far, 1)
                entry = self._values.get(name)
                if entry is None:
                    self._values[name] = [value * steps, steps]
                else:
                    entry[0] += value * steps
                    entry[1] += steps
            else:
                self._values[name] = [value, 1]
        self._seen_so_far = current
        now = time.time()
        per_step = self._estimate_step_duration(current, now)
        if self.verbose == 1:
            if now - self._last_update < self.interval and not finalize:
                return
            self._draw(current, now, per_step, finalize)
        elif self.verbose == 2 and finalize and self.target is not None and self.target > 0:
            digits = int(math.log10(self.target)) + 1
            info = f"%{digits}d/%d" % (current, self.target)
            info += f" - {now - self._start:.0f}s -{self._format_time(per_step)}"
            for name in self._values_order:
                info += f" - {name}:" + _format_value(self._mean(name), signed=False)
            _write(info + "\n")
        self._last_update = now

    def _mean(self, name):
        total, count = self._values[name]
        if not isinstance(total, float):
            total = np.mean(total)
        return total / max(1, count)

    def _draw(self, current, now, per_step, finalize):
        message = "\b" * self._prev_total_width + "\r"
        hidden = 0  # characters of ANSI escapes, which take no width on screen
        target = self.target
        if target is not None and target > 0:
            digits = int(math.log10(target)) + 1
            bar = "\x1b[1m" + (f"%{digits}d/%d" % (current, target)) + "\x1b[0m "
            hidden += 8
            filled = int(self.width * (float(current) / target))
            if filled > 0:
                bar += "\33[32m" + "━" * filled + "\x1b[0m"
                hidden += 9
            bar += "\33[37m" + "━" * (self.width - filled) + "\x1b[0m"
            hidden += 9
        else:
            bar = "%7d/Unknown" % current
        message += bar
        if target is not None and target > 0 and not finalize:
            eta = per_step * (target - current)
            if eta > 3600:
                shown = "%d:%02d:%02d" % (eta // 3600, (eta % 3600) // 60, eta % 60)
            elif eta > 60:
                shown = "%d:%02d" % (eta // 60, eta % 60)
            else:
                shown = "%ds" % eta
            info = f" \x1b[1m{shown}\x1b[0m"
        else:
            info = f" \x1b[1m{now - self._start:.0f}s\x1b[0m"
        hidden += 8
        info += self._format_time(per_step)
        for name in self._values_order:
            info += f" - {name}:"
            entry = self._values[name]
            info += _format_value(self._mean(name)) if isinstance(entry, list) else f" {entry}"
        message += info
        width = len(bar) + len(info) - hidden
        if self._prev_total_width > width:
            message += " " * (self._prev_total_width - width)
        if finalize:
            message += "\n"
        _write(message)
        self._prev_total_width = width

    def add(self, n, values=None):
        self.update(self._seen_so_far + n, values)

    def _format_time(self, per_unit, unit_name=None):
        unit = self.unit_name if unit_name is None else unit_name
        if per_unit >= 1 or per_unit == 0:
            return f" {per_unit:.0f}s/{unit}"
        if per_unit >= 1e-3:
            return f" {per_unit * 1000.0:.0f}ms/{unit}"
        return f" {per_unit * 1000000.0:.0f}us/{unit}"

    def _estimate_step_duration(self, current, now):
        """Seconds per step: after the first step, measured from the end of the first step
        (which includes tracing and so is not representative)."""
        if not current:
            return 0
        if self._time_after_first_step is not None and current > 1:
            per_step = (now - self._time_after_first_step) / (current - 1)
        else:
            per_step = (now - self._start) / current
        if current == 1:
            self._time_after_first_step = now
        return per_step
