"""Runs a TensorFlow guide notebook's code cells under TensorFlow and under eager and compares
what each cell prints, cell by cell.

Why: the measure of eager's reach is whether a TF user's real program, with only
`import tensorflow as tf` changed to `import eager as tf`, prints TF's values. TensorFlow's own
guides are the programs most users start from. This tool is for contributors; it needs a
TensorFlow installation (any Python with `tensorflow`, given by `--tf-python`) and the guide
notebooks (github.com/tensorflow/docs, `site/en/guide/*.ipynb`); the test suite does not use it.

    python tools/guide_cells.py path/to/function.ipynb --tf-python /path/to/tf-venv/bin/python

Each framework runs in its own process: the cells execute in order in one namespace, as a
notebook kernel would, a cell's last expression is displayed (its `repr`, as IPython shows it),
and a cell that raises is recorded and the run goes on. Shell (`!`) and magic (`%`) lines are
dropped, and cells with a cell magic (`%%`) are skipped. Outputs are compared after
normalising what differs by design and not by value: the framework's name in reprs, devices,
object addresses, whitespace. Numbers are compared with a relative tolerance. The report lists
each cell as `same`, `differs`, `eager-error`, `tf-error` or `both-error`, with the first
differing lines.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile

#: Runs inside the framework's process: reads the cells, executes them, writes one record each.
_RUNNER = r'''
import ast, json, linecache, os, re, signal, sys, tempfile
#: Lines a framework logs (absl's C++ logging, Python warnings), not the program's output.
LOG_LINE = re.compile(r"^([WIEF]\d{4} |WARNING:|.*Warning: |\s+warnings\.warn|.*oneDNN custom)")
cells = json.load(open(sys.argv[1]))
timeout = int(sys.argv[3])
ns = {"__name__": "__main__"}
log = open(sys.argv[2], "w")

def on_alarm(signum, frame):
    raise TimeoutError(f"cell ran past {timeout} s")

signal.signal(signal.SIGALRM, on_alarm)
saved = os.dup(1), os.dup(2)
for index, source in enumerate(cells):
    error = None
    filename = f"<cell {index}>"
    # As IPython does: the cell's source is findable, so `inspect.getsource` (AutoGraph) works.
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    # Both streams go, at the descriptor level, to one file, so what C++ writes (TensorFlow's
    # tf.print) is captured in order with what Python prints.
    capture = tempfile.TemporaryFile()
    sys.stdout.flush(); sys.stderr.flush()
    os.dup2(capture.fileno(), 1); os.dup2(capture.fileno(), 2)
    stream = open(1, "w", buffering=1, closefd=False)
    real = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = stream
    try:
        tree = ast.parse(source)
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        signal.alarm(timeout)
        exec(compile(tree, filename, "exec"), ns)
        if last is not None:
            value = eval(compile(last, filename, "eval"), ns)
            if value is not None:
                print(repr(value))
    except BaseException as exc:  # noqa: BLE001 - every cell's failure is a result to record
        error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    finally:
        signal.alarm(0)
        stream.flush()
        sys.stdout, sys.stderr = real
        os.dup2(saved[0], 1); os.dup2(saved[1], 2)
    capture.seek(0)
    text = capture.read().decode("utf-8", "replace")
    text = "\n".join(line for line in text.splitlines() if not LOG_LINE.match(line))
    log.write(json.dumps({"output": text[-20000:], "error": error}) + "\n")
    log.flush()
'''

_TF_IMPORT = re.compile(r"^(\s*)import tensorflow as tf\s*$", re.M)
#: The guides' other spellings of TensorFlow's Keras (`import keras` is Keras 3, which TF 2.21's
#: `tf.keras` is), rewritten to eager's.
_KERAS_IMPORTS = [
    (re.compile(r"^(\s*)import keras\s*$", re.M), r"\1from eager import keras"),
    (re.compile(r"^(\s*)from tensorflow import keras\s*$", re.M), r"\1from eager import keras"),
    (re.compile(r"^(\s*)from (?:tensorflow\.)?keras(\.\w+)* import ", re.M),
     lambda m: f"{m.group(1)}from eager.keras{m.group(2) or ''} import "),
]


def as_eager(cell: str) -> str:
    """A cell with TensorFlow's imports (and Keras's) replaced by eager's."""
    cell = _TF_IMPORT.sub(r"\1import eager as tf", cell)
    for pattern, replacement in _KERAS_IMPORTS:
        cell = pattern.sub(replacement, cell)
    return cell

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf")
_NOISE = [
    (re.compile(r"0x[0-9a-fA-F]+"), "0x?"),
    (re.compile(r"\bdevice=\S+"), ""),
    (re.compile(r"/job:localhost/replica:0/task:0/device:"), ""),
    (re.compile(r"\beager\.(?=[A-Za-z])"), "tf."),  # the user's `tf` is eager
    (re.compile(r"<tf\.Tensor:? "), "<tf.Tensor "),
    (re.compile(r"numpy=array\(|\)>"), ""),
    (re.compile(r",?\s*dtype=(?=float|int|bool|complex|uint)"), " dtype="),
    (re.compile(r"\s+"), " "),
]


def code_cells(notebook_path: str) -> list[str]:
    """The notebook's code cells as they would run in a kernel: `!`/`%` lines dropped, cells
    with a cell magic left empty (so cell numbers stay the notebook's)."""
    with open(notebook_path, encoding="utf-8") as f:
        notebook = json.load(f)
    cells = []
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        if source.lstrip().startswith("%%"):
            cells.append("")
            continue
        lines = [line for line in source.splitlines()
                 if not line.lstrip().startswith(("!", "%"))]
        cells.append("\n".join(lines))
    return cells


def run(python: str, cells: list[str], timeout: int) -> list[dict]:
    """Executes the cells in a fresh process of `python`; one record per cell."""
    with tempfile.TemporaryDirectory() as tmp:
        cells_path, out_path = os.path.join(tmp, "cells.json"), os.path.join(tmp, "out.json")
        runner = os.path.join(tmp, "runner.py")
        with open(cells_path, "w") as f:
            json.dump(cells, f)
        with open(runner, "w") as f:
            f.write(_RUNNER)
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONWARNINGS="ignore", MPLBACKEND="Agg")
        try:
            subprocess.run([python, runner, cells_path, out_path, str(timeout)], cwd=tmp,
                           env=env, check=False, timeout=timeout * max(len(cells), 1) + 60)
        except subprocess.TimeoutExpired:
            pass
        with open(out_path) as f:
            records = [json.loads(line) for line in f]
        # A process that died (a crash, a hang past every timeout) leaves its later cells unrun.
        records += [{"output": "", "error": "NotRun: the process ended before this cell"}
                    ] * (len(cells) - len(records))
        return records


#: A traceback's frames (which differ by framework: each shows its own internals), not its
#: final message.
_FRAMES = re.compile(r"Traceback \(most recent call last\):\n|^  File .*\n(?:    .*\n)*", re.M)


def normalise(text: str) -> str:
    text = _FRAMES.sub("", text + "\n")
    for pattern, replacement in _NOISE:
        text = pattern.sub(replacement, text)
    return text.strip()


def same_output(tf_text: str, eager_text: str, rtol: float) -> bool:
    """Equal after normalising, numbers within `rtol` (the words around them must match)."""
    a, b = normalise(tf_text), normalise(eager_text)
    if _NUMBER.sub("#", a) != _NUMBER.sub("#", b):
        return False
    for x, y in zip(_NUMBER.findall(a), _NUMBER.findall(b)):
        fx, fy = float(x), float(y)
        if math.isnan(fx) and math.isnan(fy):
            continue
        if not math.isclose(fx, fy, rel_tol=rtol, abs_tol=rtol):
            return False
    return True


def compare(tf_records, eager_records, rtol):
    results = []
    for index, (t, e) in enumerate(zip(tf_records, eager_records)):
        if t["error"] and e["error"]:
            status = "both-error"
        elif e["error"]:
            status = "eager-error"
        elif t["error"]:
            status = "tf-error"
        else:
            status = "same" if same_output(t["output"], e["output"], rtol) else "differs"
        results.append((index, status, t, e))
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="+")
    parser.add_argument("--tf-python", required=True, help="a Python with tensorflow installed")
    parser.add_argument("--eager-python", default=sys.executable)
    parser.add_argument("--timeout", type=int, default=120, help="seconds per cell")
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--verbose", "-v", action="store_true", help="show outputs that differ")
    args = parser.parse_args(argv)
    for path in args.notebooks:
        cells = code_cells(path)
        eager_cells = [as_eager(c) for c in cells]
        tf_records = run(args.tf_python, cells, args.timeout)
        eager_records = run(args.eager_python, eager_cells, args.timeout)
        results = compare(tf_records, eager_records, args.rtol)
        counts = {}
        for _, status, _, _ in results:
            counts[status] = counts.get(status, 0) + 1
        print(f"== {os.path.basename(path)}: {len(results)} code cells: "
              + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
        for index, status, t, e in results:
            if status == "same" or not cells[index].strip():
                continue
            print(f"  cell {index}: {status}")
            if status in ("eager-error", "both-error"):
                print(f"    eager: {e['error']}")
            if status in ("tf-error", "both-error"):
                print(f"    tf:    {t['error']}")
            if status == "differs" and args.verbose:
                print("    tf:    " + normalise(t["output"])[:300])
                print("    eager: " + normalise(e["output"])[:300])
    return 0


if __name__ == "__main__":
    sys.exit(main())
