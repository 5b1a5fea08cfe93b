#!/usr/bin/env bash
# The checks that need a real CUDA device, in one run, for a machine lent for minutes:
#   1. the machine (GPU, driver, CPU, Python, numpy, CuPy, PyTorch) -> machine.txt
#   2. bench/gpu.py with its host-time profile                        -> bench_gpu.txt
#   3. the whole suite with the GPU as the default device, on
#      pytest-xdist workers (one per core, two cores left; tests, not
#      files, are spread: one file of 1600 tests takes 19 minutes alone) -> suite.log
#
#   tools/gpu_checks.sh [OUTDIR] [SUITE_SECONDS]
#
# Runs from a checkout without installing it (PYTHONPATH), under $PYTHON (default python3),
# which must have numpy, cupy, pytest, hypothesis, pytest-xdist and pytest-timeout. Each step
# has its own time limit and a failed step does not stop the next: what was measured before a
# limit is kept, since each bench row and each test result is written as it happens (and the
# suite, interrupted at its limit, still reports its failures with their tracebacks).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-gpu-checks}}
suite_seconds=${2:-330}
py=${PYTHON:-python3}
mkdir -p "$out"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1

{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  lscpu | grep -E "^Model name|^CPU\(s\)"
  "$py" -c "import sys, numpy, cupy; print('Python', sys.version.split()[0], '| numpy',
numpy.__version__, '| CuPy', cupy.__version__, '| CUDA runtime',
cupy.cuda.runtime.runtimeGetVersion())"
  "$py" -c "import torch; print('PyTorch', torch.__version__)" || true
  "$py" -m pytest --version
} > "$out/machine.txt" 2>&1

timeout 180 "$py" bench/gpu.py --rounds 10 --profile > "$out/bench_gpu.txt" 2>&1
echo "bench/gpu.py exit: $?" >> "$out/bench_gpu.txt"

workers=$(( $(nproc) > 4 ? $(nproc) - 2 : 2 ))
# At the limit pytest gets an interrupt (SIGINT), as from Ctrl-C: it stops the workers and still
# prints the tracebacks and the summary of what failed so far; a kill follows 30 s later.
timeout -s INT -k 30 "$suite_seconds" "$py" -m pytest -p no:cacheprovider -n "$workers" --dist load \
  --timeout 120 -v --tb=short -rfE --durations=20 > "$out/suite.log" 2>&1
echo "pytest exit: $?" >> "$out/suite.log"
grep -E "(FAILED|ERROR) |passed|failed|pytest exit" "$out/suite.log" | tail -40
