"""Runs a corpus of calls through both `eager` and TensorFlow and reports every mismatch.

    python tools/compare_with_tensorflow.py [-k SUBSTRING] [-v] [--show-expected]

Needs TensorFlow installed (it is not a dependency of `eager`, and CI does not run this). The
corpus is `tools/tf_cases.py`: each case is an expression (or a snippet assigning `result`)
evaluated once with `tf` bound to `tensorflow` and once with `tf` bound to `eager`. Results are
compared on

* structure (tensor, tuple, Python scalar, numpy scalar/array, TensorShape, DType, None),
* dtype and shape of every tensor / numpy value,
* values: exact for integers and bools, within a dtype-dependent tolerance for floats
  (nan == nan),
* for failing calls, the exception *category*: `tf.errors.X` maps to `eager.errors.X` by class
  name; other exceptions by their first builtin class (TypeError, ValueError, IndexError, ...).
  Messages are never compared (eager words its own).

Cases of kind "tf_aborts" are calls on which TensorFlow kills the process (a failed CHECK in
its C++): they run through eager only, which must raise. Cases of kind "meta" (random ops)
compare only structure, dtypes and shapes; cases whose result is a boolean computed from several
calls (seed reproducibility) compare that boolean.

Mismatches that are documented, intentional deviations of eager are listed in
`tf_cases.EXPECTED` with the reason; known mismatches whose fix lies outside the op modules are
listed in `tf_cases.PENDING` with the place to fix them. Both are counted apart (listed with
--show-expected) and do not fail the run. The exit status is 1 when any other mismatch is found.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import sys
import tempfile
import warnings

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# TensorFlow's reference CPU kernels: with oneDNN on, some ops misbehave on edge cases (a conv
# whose window exceeds its input returns garbage of the wrong shape, softmax of a scalar raises
# AbortedError); eager follows the reference kernels.
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import tf_cases  # noqa: E402

import eager  # noqa: E402

RTOL = {"float16": 2e-3, "bfloat16": 1e-2, "float32": 2e-5, "float64": 1e-10,
        "complex64": 2e-5, "complex128": 1e-10}
ATOL = {"float16": 1e-3, "bfloat16": 1e-2, "float32": 1e-6, "float64": 1e-12,
        "complex64": 1e-6, "complex128": 1e-12}


# -----------------------------------------------------------------------------------------------
# Normalizing results
# -----------------------------------------------------------------------------------------------

def _error_category(exc, mod) -> str:
    errors = mod.errors
    if isinstance(exc, errors.OpError):
        return type(exc).__name__
    for cls in type(exc).__mro__:
        if cls.__module__ == "builtins":
            return cls.__name__
    return type(exc).__name__


def describe(value, mod):
    """A comparable, module-independent description of a result."""
    if isinstance(value, mod.Tensor):
        arr = np.asarray(value.numpy())
        return ("tensor", value.dtype.name, tuple(arr.shape), arr)
    if isinstance(value, mod.TensorShape):
        return ("TensorShape", tuple(value.as_list()) if value.rank is not None else None)
    if isinstance(value, mod.DType):
        return ("DType", value.name)
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.name, value.shape, value)
    if isinstance(value, np.generic):
        return ("numpy scalar", value.dtype.name, (), np.asarray(value))
    if isinstance(value, (bool, int, float, complex, str, type(None))):
        return (type(value).__name__, value)
    if isinstance(value, (tuple, list)):
        kind = type(value).__name__ if hasattr(value, "_fields") else (
            "list" if isinstance(value, list) else "tuple")
        return (kind, [describe(v, mod) for v in value])
    if isinstance(value, dict):
        return ("dict", {k: describe(v, mod) for k, v in value.items()})
    return ("object", type(value).__name__)


def _values_match(dtype, a, b) -> bool:
    if a.shape != b.shape:
        return False
    if dtype in RTOL:
        return bool(np.allclose(a.astype(np.complex128), b.astype(np.complex128),
                                rtol=RTOL[dtype], atol=ATOL[dtype], equal_nan=True))
    return bool(np.array_equal(a, b))


def compare(tf_desc, eg_desc, meta_only=False):
    """None when the descriptions agree, else (category, detail)."""
    if tf_desc[0] != eg_desc[0]:
        return "structure", f"tf gives {tf_desc[0]}, eager gives {eg_desc[0]}"
    kind = tf_desc[0]
    if kind in ("tensor", "ndarray", "numpy scalar"):
        if tf_desc[1] != eg_desc[1]:
            return "dtype", f"tf {tf_desc[1]}, eager {eg_desc[1]}"
        if tf_desc[2] != eg_desc[2]:
            return "shape", f"tf {tf_desc[2]}, eager {eg_desc[2]}"
        if not meta_only and not _values_match(tf_desc[1], tf_desc[3], eg_desc[3]):
            return "value", f"tf {_short(tf_desc[3])}, eager {_short(eg_desc[3])}"
        return None
    if kind in ("list", "tuple") or isinstance(tf_desc[1], list):
        if len(tf_desc[1]) != len(eg_desc[1]):
            return "structure", f"tf length {len(tf_desc[1])}, eager {len(eg_desc[1])}"
        for a, b in zip(tf_desc[1], eg_desc[1]):
            diff = compare(a, b, meta_only)
            if diff is not None:
                return diff
        return None
    if kind == "dict":
        if tf_desc[1].keys() != eg_desc[1].keys():
            return "structure", "dict keys differ"
        for k in tf_desc[1]:
            diff = compare(tf_desc[1][k], eg_desc[1][k], meta_only)
            if diff is not None:
                return diff
        return None
    if kind == "error":
        if tf_desc[1] != eg_desc[1]:
            return "error class", f"tf raises {tf_desc[1]}, eager raises {eg_desc[1]}"
        return None
    if kind == "float" and not meta_only:
        a, b = tf_desc[1], eg_desc[1]
        if a == b or (a != a and b != b) or abs(a - b) <= 1e-6 * max(abs(a), abs(b)):
            return None
        return "value", f"tf {a!r}, eager {b!r}"
    if meta_only and kind in ("int", "complex"):
        return None
    if tf_desc != eg_desc:
        return "value", f"tf {tf_desc[1:]!r}, eager {eg_desc[1:]!r}"
    return None


def _short(arr, limit=120) -> str:
    text = np.array2string(np.asarray(arr), threshold=20, separator=",").replace("\n", "")
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _show(desc) -> str:
    if desc[0] == "error":
        return f"raises {desc[1]}: {desc[2][:150]}"
    if desc[0] in ("tensor", "ndarray", "numpy scalar"):
        return f"{desc[0]} {desc[1]}{list(desc[2])} {_short(desc[3])}"
    return repr(desc)[:200]


# -----------------------------------------------------------------------------------------------
# Running cases
# -----------------------------------------------------------------------------------------------

def namespace(mod):
    """The names a case's code sees: `tf` (the module), `np`, and helpers from tf_cases."""
    ns = {"tf": mod, "np": np}
    ns.update(tf_cases.helpers(mod))
    return ns


def run_case(case, mod, ns):
    code = case.code
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if "result =" in code or "\n" in code:
                local = dict(ns)
                exec(code, local)  # noqa: S102 - the corpus is ours
                value = local["result"]
            else:
                value = eval(code, dict(ns))  # noqa: S307
            return describe(value, mod)
    except Exception as exc:  # noqa: BLE001 - every failure is a result to compare
        return ("error", _error_category(exc, mod), f"{type(exc).__name__}: {exc}")


def expected_reason(case_id):
    for pattern, reason in tf_cases.EXPECTED:
        if re.search(pattern, case_id):
            return reason
    return None


def pending_reason(case_id, detail):
    for pattern, text, reason in tf_cases.PENDING:
        if re.search(pattern, case_id) and text in detail:
            return reason
    return None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", dest="filter", default="", help="run cases whose id contains this")
    parser.add_argument("-v", dest="verbose", action="store_true", help="list every case")
    parser.add_argument("--show-expected", action="store_true",
                        help="also list the expected (documented) deviations")
    args = parser.parse_args(argv)

    # Not at the top: TensorFlow is optional and takes seconds to import; only a run needs it.
    import tensorflow as tf  # noqa: PLC0415

    tf.config.set_visible_devices([], "GPU")  # compare CPU kernels, deterministic
    tf_ns, eg_ns = namespace(tf), namespace(eager)
    cases = [c for c in tf_cases.build_cases() if args.filter in c.id]
    ids = collections.Counter(c.id for c in cases)
    dupes = [i for i, n in ids.items() if n > 1]
    if dupes:
        raise SystemExit(f"duplicate case ids: {dupes[:10]}")

    unexpected, expected, fixed, pending = [], [], [], collections.Counter()
    by_category = collections.Counter()
    with tempfile.TemporaryDirectory() as tmp:
        tf_ns["TMP"] = eg_ns["TMP"] = tmp
        for case in cases:
            if case.kind == "tf_aborts":
                # TensorFlow's process dies on these (a failed CHECK): eager must raise an
                # OpError or a TypeError/ValueError instead.
                tf_desc = ("error", "(TF aborts)", "")
                eg_desc = run_case(case, eager, eg_ns)
                ok = eg_desc[0] == "error"
                if args.verbose:
                    print(f"{'ok  ' if ok else 'DIFF'} {case.id}")
                if not ok:
                    unexpected.append((case, ("error class", "TF aborts; eager must raise"),
                                       tf_desc, eg_desc, None))
                    by_category["error class"] += 1
                continue
            tf_desc = run_case(case, tf, tf_ns)
            eg_desc = run_case(case, eager, eg_ns)
            diff = compare(tf_desc, eg_desc, meta_only=case.kind == "meta")
            reason = expected_reason(case.id)
            if args.verbose:
                print(f"{'ok  ' if diff is None else 'DIFF'} {case.id}")
            if diff is None:
                if reason is not None:
                    fixed.append((case, reason))
                continue
            entry = (case, diff, tf_desc, eg_desc, reason)
            waiting = pending_reason(case.id, diff[1]) if reason is None else None
            if waiting is not None:
                pending[waiting] += 1
                if args.show_expected:
                    print(f"pending [{diff[0]}] {case.id}: {diff[1]}")
            elif reason is None:
                unexpected.append(entry)
                by_category[diff[0]] += 1
            else:
                expected.append(entry)

    for case, (category, detail), tf_desc, eg_desc, _ in unexpected:
        print(f"MISMATCH [{category}] {case.id}\n    code:  {case.code}\n    {detail}\n"
              f"    tf:    {_show(tf_desc)}\n    eager: {_show(eg_desc)}")
    if args.show_expected:
        for case, (category, detail), _tf_desc, _eg_desc, reason in expected:
            print(f"expected [{category}] {case.id}: {detail}\n    reason: {reason}")
    if fixed and args.show_expected:
        for case, reason in fixed:
            print(f"note: {case.id} is listed as expected ({reason}) but matches TensorFlow")
    n_pending = sum(pending.values())
    print(f"\n{len(cases)} cases: {len(cases) - len(unexpected) - len(expected) - n_pending} "
          f"agree, {len(expected)} expected deviations, {n_pending} pending (fix outside the op "
          f"modules), {len(unexpected)} mismatches")
    for reason, n in pending.most_common():
        print(f"  pending {n}: {reason}")
    for category, n in sorted(by_category.items()):
        print(f"  {category}: {n}")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
