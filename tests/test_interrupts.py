"""Ctrl-C never hangs or poisons the process: a `KeyboardInterrupt` at the worst points of
eager, asynchronous and traced code leaves every lock free, no tape recording, the fast path at
rest and syncs returning (the scenarios are in `tests/interrupt_scenarios.py`, each run in its
own process: a failure is often a hang, or state that would poison every later test)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from interrupt_scenarios import SCENARIOS

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(__file__).with_name("interrupt_scenarios.py")


#: The stress scenario runs again with two simulated GPUs as the devices (the fast path off,
#: ops on stream workers); the deterministic ones interrupt the host-only hot paths (a
#: variable's lock taken on the fast path, the async executor) and run with the host alone.
ON_SIMULATED_GPUS = "stress on 2 simulated GPUs"


@pytest.fixture(scope="module")
def runs():
    """Every scenario's process, started together (they mostly wait, so they overlap)."""
    host = {k: v for k, v in os.environ.items() if k != "EAGER_SIMULATED_GPUS"}
    host["PYTHONPATH"] = str(ROOT)
    commands = {name: (name, host) for name in SCENARIOS}
    commands[ON_SIMULATED_GPUS] = ("stress", dict(host, EAGER_SIMULATED_GPUS="2"))
    started = {name: subprocess.Popen([sys.executable, str(SCRIPT), scenario], cwd=ROOT,
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True)
               for name, (scenario, env) in commands.items()}
    yield started
    for process in started.values():
        if process.poll() is None:
            process.kill()
            process.communicate()


def outcome(runs, name):
    budget_s = SCENARIOS["stress" if name == ON_SIMULATED_GPUS else name][1]
    try:
        out, err = runs[name].communicate(timeout=budget_s + 60)  # (it stops itself at budget_s)
    except subprocess.TimeoutExpired:
        runs[name].kill()
        out, err = runs[name].communicate()
        pytest.fail(f"{name} hung past its own watchdog:\n{err[-4000:]}")
    lines = out.strip().splitlines()
    assert lines, f"{name} printed nothing (exit code {runs[name].returncode}):\n{err[-4000:]}"
    return json.loads(lines[-1]), err


@pytest.mark.parametrize("name", ["read_lock", "update_lock", "sgd_lock", "momentum_lock"])
def test_an_interrupt_as_a_variable_lock_is_taken_leaves_it_free_and_the_update_whole(runs, name):
    result, err = outcome(runs, name)
    assert result["problems"] == [], err[-4000:]


def test_an_interrupt_as_a_gradient_tape_starts_leaves_no_tape_and_the_fast_path_lock_free(
        runs):
    result, err = outcome(runs, "tape_fast_path_lock")
    assert result["problems"] == [], err[-4000:]


def test_an_interrupt_as_async_dispatch_is_installed_leaves_it_off_and_the_fast_path_at_rest(
        runs):
    result, err = outcome(runs, "async_scope_fast_path_lock")
    assert result["problems"] == [], err[-4000:]


def test_an_interrupt_while_an_async_op_is_issued_leaves_every_sync_returning(runs):
    result, err = outcome(runs, "async_issue")
    assert result["problems"] == [], err[-4000:]


@pytest.mark.parametrize("name", ["stress", ON_SIMULATED_GPUS])
def test_random_interrupts_in_eager_async_and_traced_loops_leave_eager_consistent(runs, name):
    """Interrupts every 0.1-2 ms while the main thread runs eager, asynchronous and traced
    loops (another thread contending for the same variable and the fast-path lock): afterwards
    syncs return, nothing is held or left recording, and every result is right."""
    result, err = outcome(runs, name)
    assert result["problems"] == [], err[-4000:]
    details = result["details"]
    assert set(details) == {"eager", "async", "traced"}
    for mode, counts in details.items():  # not vacuous: each loop was interrupted, and ran
        assert counts["interrupts"] > 0 and counts["iterations"] > counts["interrupts"], (
            mode, counts)
    assert "Exception ignored" not in err, err[-4000:]
