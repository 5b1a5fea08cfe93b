"""IEEE results from numpy kernels, whatever the user's warning filters and numpy error state.

TensorFlow's kernels return inf and nan silently (`1/0`, `log(0)`, `exp` overflow, the mean of
nothing, a cast past float16's range). numpy computes the same values but *signals* them: a
RuntimeWarning, which `python -W error`, pytest's `filterwarnings = error` or
`warnings.simplefilter("error")` turn into an exception, or a FloatingPointError under the
user's `np.seterr(all="raise")`. Setting numpy's error state around every kernel would cost
about a microsecond, more than a small op's kernel, so kernels run as they are and a signal is
dealt with where it surfaces, on the failure path (no cost when nothing signals):

* `FP_SIGNALS` are the exception classes a signal arrives as.
* numpy raises a signal only *after* the operation has written its whole result (ufuncs with or
  without `out=`, `ufunc.at`, reductions, casts; `tests/test_ieee.py` keeps checking it). An
  operation that writes into an existing buffer has therefore finished its write when the
  signal arrives, and that buffer holds the IEEE result.
* `quietly(fn, ...)` runs `fn` again with numpy's error state set to ignore, which returns the
  IEEE result. Pure kernels that signalled are re-run this way: by dispatch's `run_kernel`,
  by the compiled programs' array form, by conversions to tensors.
* Stateful kernels are never re-run (a second run would apply an update twice, or draw again).
  Each of them either cannot signal (no floating-point arithmetic: reads, assigns, handles,
  random draws from numpy's generators), or takes care of its own arithmetic: an update made by
  one ufunc writing in place keeps what it wrote (the rule above), and an update made of several
  steps runs under `quiet()`, so that it is never left half applied.

Where a signal is raised matters as much. numpy raises a ufunc's RuntimeWarning at the Python
frame that called the ufunc, and `import eager` installs one warnings filter
(`ignore_kernel_warnings`) that ignores RuntimeWarnings raised at eager's own frames: kernels,
and the generated code of compiled programs and fused kernels, which names an eager module. In
an ordinary run a kernel's signal is thus neither printed nor recorded, and where the user's
filters make it an exception, the failure path above answers it. numpy's *Python-level*
functions would raise it inside numpy instead, out of the filter's reach (`ndarray.sum`,
`np.cumsum`, `np.tensordot`, `np.linalg`'s wrappers, `np.einsum`), so kernels do not compute
through them:

* reductions and scans call the ufunc's own method on numpy (`add_reduce`, `multiply_reduce`,
  `add_accumulate`, `multiply_accumulate`: the same computation, with one Python call fewer);
* what has no ufunc form (linear algebra, `einsum`, `tensordot`) runs under `quiet()` (its
  microsecond is small beside such a kernel);
* nothing calls the functions whose warnings numpy issues through `warnings.warn`, outside its
  error state ("Mean of empty slice", "Degrees of freedom <= 0": `mean`, `var`, `std`).

`tests/test_kernel_warnings.py` runs every registered op on hostile inputs in every mode and
records every RuntimeWarning. A user's own numpy code is untouched: no process-wide error state
or filter changes, and the filter matches eager's modules only. (A filter the user installs
*after* importing eager that shows every RuntimeWarning, `simplefilter("always")`, comes before
eager's and shows a synchronous kernel's signals; one that raises them is answered as above.)

CuPy kernels never signal (CUDA arithmetic raises no floating-point exceptions, and
`cupyx.errstate` governs only linalg checks), so a GPU needs none of this; the threads that
compute only eager's kernels, the asynchronous executor's worker and the simulated GPU's stream
threads, set their own numpy error state to ignore for the same reason, so that nothing they
compute signals, whatever the filters.
"""

from __future__ import annotations

import threading
import warnings

import numpy as np

__all__ = ["FP_SIGNALS", "quietly", "quiet", "ignore_kernel_warnings", "EAGER_MODULES",
           "quiet_thread", "add_reduce", "multiply_reduce", "add_accumulate",
           "multiply_accumulate"]

#: What a numpy floating-point signal arrives as: a warning turned into an exception by a
#: warnings filter, or numpy's own exception under `np.seterr(all="raise")`.
FP_SIGNALS = (RuntimeWarning, FloatingPointError)

#: The modules whose RuntimeWarnings eager's filter ignores: eager's own (kernels, and generated
#: code, whose globals name the eager module that generated it).
EAGER_MODULES = r"eager(\..*)?$"

# `warnings.catch_warnings` swaps the process-wide filter list: one swap at a time from here.
_FILTERS_LOCK = threading.Lock()


def quiet():
    """numpy's floating-point error state set to ignore, as a context manager (about 1 µs):
    for kernels that cannot be re-run because they update state in several steps."""
    return np.errstate(all="ignore")


def quietly(fn, *args, **kwargs):
    """`fn(*args, **kwargs)` computed without floating-point signals: under numpy's error state
    set to ignore, and, if a RuntimeWarning still escapes (one numpy issues through
    `warnings.warn` itself, outside its error state, such as "Mean of empty slice"), once more
    with RuntimeWarnings ignored. Only for functions without side effects: `fn` may run
    twice."""
    with np.errstate(all="ignore"):
        try:
            return fn(*args, **kwargs)
        except RuntimeWarning:
            pass
        # The filter list is process-wide, so this is the one place that changes it, and only
        # after a warnings-module RuntimeWarning was turned into an error.
        with _FILTERS_LOCK, warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return fn(*args, **kwargs)


def quiet_thread() -> None:
    """For a thread eager starts that computes nothing but eager's kernels (the asynchronous
    executor's worker, a simulated GPU's stream): numpy's error state set to ignore for the rest
    of the thread, so that no kernel it runs signals, whatever the warning filters. numpy's
    error state is per thread: the user's threads keep theirs."""
    np.seterr(all="ignore")


def ignore_kernel_warnings() -> None:
    """Installs the filter that ignores RuntimeWarnings raised at eager's own frames (module
    doc); `import eager` calls it once. It matches no other module, so the user's numpy code
    warns as the user's filters say."""
    warnings.filterwarnings("ignore", category=RuntimeWarning, module=EAGER_MODULES)


# -- reductions and scans whose signals are raised at eager's frames (module doc) --------------
# On numpy, the ufunc's method itself; CuPy never signals and keeps its array methods.

_add_reduce = np.add.reduce
_multiply_reduce = np.multiply.reduce
_add_accumulate = np.add.accumulate
_multiply_accumulate = np.multiply.accumulate


def add_reduce(xp, x, axis=None, dtype=None, keepdims=False):
    """`x.sum(axis, dtype, keepdims=keepdims)` for a kernel (`axis`: None, an int or a tuple)."""
    if xp is np:
        return _add_reduce(x, axis, dtype, None, keepdims)
    return x.sum(axis=axis, dtype=dtype, keepdims=keepdims)


def multiply_reduce(xp, x, axis=None, dtype=None, keepdims=False):
    """`x.prod(axis, dtype, keepdims=keepdims)` for a kernel."""
    if xp is np:
        return _multiply_reduce(x, axis, dtype, None, keepdims)
    return x.prod(axis=axis, dtype=dtype, keepdims=keepdims)


def add_accumulate(xp, x, axis, dtype=None):
    """`xp.cumsum(x, axis, dtype)` for a kernel (`x` has at least one dimension)."""
    if xp is np:
        return _add_accumulate(x, axis, dtype)
    return xp.cumsum(x, axis=axis, dtype=dtype)


def multiply_accumulate(xp, x, axis, dtype=None):
    """`xp.cumprod(x, axis, dtype)` for a kernel (`x` has at least one dimension)."""
    if xp is np:
        return _multiply_accumulate(x, axis, dtype)
    return xp.cumprod(x, axis=axis, dtype=dtype)
