"""The variables a converted statement carries, read and written through closure cells.

The converter makes each branch or loop body a function that declares the statement's state
variables `nonlocal` (or `global`), so the function's closure holds exactly the cells of those
variables in the user's scope. A staged statement reads and writes them there: no generated
getter or setter is needed, and a statement that runs as Python never builds a `State` at all.
An empty cell (a variable with no value yet) reads as `Undefined(name)`, and writing that same
object back empties the cell again, so a later read raises Python's own UnboundLocalError; an
`Undefined` the converter bound the variable to is written back as it is (its reads raise
through `ag__.ld`).
"""

from __future__ import annotations

from .undefined import Undefined

__all__ = ["State"]

_MISSING = object()


class State:
    """`get()` / `set(values)` over `names`, the state variables of the statement whose body is
    `function`."""

    __slots__ = ("names", "_cells", "_globals", "_empty")

    def __init__(self, function, names):
        code = function.__code__
        cells = dict(zip(code.co_freevars, function.__closure__ or ()))
        self.names = tuple(names)
        self._cells = [cells.get(n) for n in self.names]
        self._globals = function.__globals__
        self._empty = []  # the Undefined objects `get` made for empty cells

    def get(self) -> tuple:
        out = []
        for name, cell in zip(self.names, self._cells):
            if cell is None:  # a `global` variable
                value = self._globals.get(name, _MISSING)
            else:
                try:
                    value = cell.cell_contents
                except ValueError:
                    value = _MISSING
            if value is _MISSING:
                value = Undefined(name)
                self._empty.append(value)
            out.append(value)
        return tuple(out)

    def set(self, values) -> None:
        for name, cell, value in zip(self.names, self._cells, values):
            undefined = value.__class__ is Undefined and any(value is u for u in self._empty)
            if cell is None:
                if undefined:
                    self._globals.pop(name, None)
                else:
                    self._globals[name] = value
            elif undefined:
                try:
                    del cell.cell_contents
                except ValueError:
                    pass
            else:
                cell.cell_contents = value
