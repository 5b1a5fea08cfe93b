"""Ctrl-C scenarios, each run in a fresh process by `tests/test_interrupts.py`.

A `KeyboardInterrupt` reaches the main thread at the next point where CPython checks for
signals: after a call returns, on a loop's back edge, at a function's entry. These scenarios
put it where it hurts, then check that eager is left consistent: every lock free, tape stacks
empty, `FAST_PATH` back at rest, syncs returning, results right. Run in a subprocess because a
failure is often a hang, or state that would poison every later test.

    python tests/interrupt_scenarios.py SCENARIO

prints one JSON line, {"problems": [...], ...}; an empty list is a pass. A scenario that does
not finish within its budget prints {"problems": ["hang: ..."]} with every thread's stack on
stderr, and the process exits at once.

Two kinds:

* Deterministic (`*_lock`, `async_*`): a helper thread holds the lock the main thread is about
  to take, trips an interrupt (`_thread.interrupt_main()`) while the main thread waits for it,
  then lets it go: the interrupt lands exactly at the first check after the lock is taken.
* `stress`: eager, asynchronous and traced loops run while a thread interrupts the main thread
  at random short intervals and another thread contends for the same variables and the
  fast-path lock. The main loop catches KeyboardInterrupt and goes on, as a program that
  handles Ctrl-C does.
"""

from __future__ import annotations

import _thread
import faulthandler
import json
import os
import random
import signal
import sys
import threading
import time

import numpy as np

import eager as tf
from eager import async_exec
from eager.core import context
from eager.devices.resource_handles import eager_handle
from eager.tensor import _ALL_METAS

SCENARIOS = {}


def scenario(budget_s):
    def register(fn):
        SCENARIOS[fn.__name__] = (fn, budget_s)
        return fn
    return register


# -- the checks ----------------------------------------------------------------------------------

def storage_lock(variable):
    return eager_handle(variable.handle).storage_or_uninitialized("check").lock


def lock_is_free_for_others(lock):
    """Whether another thread can take `lock` (an RLock held by this thread would let this
    thread in again, so ask another)."""
    got = []

    def take():
        if lock.acquire(timeout=2):
            lock.release()
            got.append(True)
    t = threading.Thread(target=take)
    t.start()
    t.join()
    return bool(got)


def state_problems(*variables):
    """What is left over in this thread and process-wide: tapes, interpreter, slow-path
    counters, switches and the metas' cached flags, locks."""
    problems = []
    with tf.GradientTape():  # a tape entry drops the tapes whose GradientTape is gone
        pass
    st = context.per_thread.state
    if st.tapes:
        problems.append(f"{len(st.tapes)} tape(s) left on the stack")
    if st.interpreter is not None:
        problems.append(f"interpreter left installed: {st.interpreter!r}")
    fast = context.FAST_PATH
    single = fast.device is not None  # one host device: at rest the switches are on
    if (fast.reasons, fast.tapes, fast.kernel_only, fast.kernel_and_tapes) != (0, 0, single,
                                                                               single):
        problems.append(f"fast path not at rest: reasons={fast.reasons} tapes={fast.tapes} "
                        f"kernel_only={fast.kernel_only} "
                        f"kernel_and_tapes={fast.kernel_and_tapes}")
    stale = [m for m in _ALL_METAS
             if m.fast_arith != (fast.kernel_and_tapes and m.device is fast.device
                                 and m.dtype._arith)]
    if stale:
        problems.append(f"{len(stale)} TensorMeta(s) with stale fast-path flags")
    if not lock_is_free_for_others(fast.lock):
        problems.append("the fast-path lock is held")
    for v in variables:
        if not lock_is_free_for_others(storage_lock(v)):
            problems.append(f"variable {v.name}'s lock is held")
    executor = async_exec._current_executor()
    if executor is not None and (executor._queue or executor._error is not None):
        problems.append(f"executor left with {len(executor._queue)} queued op(s), error "
                        f"{executor._error!r}")
    return problems


# -- deterministic: an interrupt at the first check after a contended lock is taken ---------------

def interrupt_while_blocked(lock, action):
    """Runs `action()` on this (main) thread while a helper holds `lock`; the helper trips an
    interrupt while the main thread waits for the lock, then releases it. Returns whether the
    interrupt came out of `action` (it may land after the action's work, at its last check)."""
    held = threading.Event()
    done = threading.Event()

    def holder():
        with lock:
            held.set()
            time.sleep(0.2)  # the main thread is blocked on `lock` by now
            _thread.interrupt_main()
        done.set()

    helper = threading.Thread(target=holder, daemon=True)
    helper.start()
    held.wait()
    try:
        action()
        interrupted = False
    except KeyboardInterrupt:
        interrupted = True
    done.wait()
    helper.join()
    return interrupted


@scenario(budget_s=20)
def read_lock():
    v = tf.Variable(np.arange(3, dtype=np.float32))
    interrupt_while_blocked(storage_lock(v), v.numpy)
    problems = state_problems(v)
    if not problems and not np.array_equal(v.numpy(), [0, 1, 2]):
        problems.append(f"value changed: {v.numpy()}")
    return problems


@scenario(budget_s=20)
def update_lock():
    v = tf.Variable(np.zeros(3, np.float32))
    interrupt_while_blocked(storage_lock(v), lambda: v.assign_add(np.ones(3, np.float32)))
    problems = state_problems(v)
    if not problems and v.numpy().tolist() not in ([0, 0, 0], [1, 1, 1]):
        problems.append(f"half an update: {v.numpy()}")  # all of it or none
    return problems


@scenario(budget_s=20)
def sgd_lock():
    v = tf.Variable(np.ones(3, np.float32))
    opt = tf.optimizers.SGD(0.5)
    opt.apply_gradients([(tf.constant(np.ones(3, np.float32)), v)])  # slots and step exist
    interrupt_while_blocked(storage_lock(v), lambda: opt.apply_gradients(
        [(tf.constant(np.ones(3, np.float32)), v)]))
    problems = state_problems(v)
    if not problems and v.numpy().tolist() not in ([0.5] * 3, [0.0] * 3):
        problems.append(f"half an update: {v.numpy()}")
    return problems


@scenario(budget_s=20)
def momentum_lock():
    v = tf.Variable(np.ones(3, np.float32))
    opt = tf.optimizers.SGD(0.5, momentum=0.5)
    opt.apply_gradients([(tf.constant(np.ones(3, np.float32)), v)])
    before = v.numpy()
    interrupt_while_blocked(storage_lock(v), lambda: opt.apply_gradients(
        [(tf.constant(np.ones(3, np.float32)), v)]))
    problems = state_problems(v)
    if not problems and not (np.array_equal(v.numpy(), before)
                             or np.allclose(v.numpy(), before - 0.75)):
        problems.append(f"half an update: {v.numpy()} (before: {before})")
    return problems


@scenario(budget_s=20)
def tape_fast_path_lock():
    """An interrupt as a GradientTape takes the process-wide fast-path lock: afterwards the
    tape is either recording (and exits) or was never pushed, and another thread's tape
    works."""
    x = tf.constant([1.0, 2.0])

    def record():
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(x * x)
        return tape.gradient(y, x)
    interrupt_while_blocked(context.FAST_PATH.lock, record)
    problems = state_problems()
    grads = []
    other = threading.Thread(target=lambda: grads.append(record().numpy().tolist()),
                             daemon=True)
    other.start()
    other.join(timeout=10)
    if other.is_alive():
        problems.append("another thread's GradientTape deadlocked")
    elif grads != [[2.0, 4.0]]:
        problems.append(f"wrong gradient: {grads}")
    return problems


@scenario(budget_s=20)
def async_scope_fast_path_lock():
    """An interrupt as async dispatch installs itself (taking the fast-path lock)."""
    def run():
        with tf.experimental.async_scope():
            (tf.constant([1.0]) + 1.0).numpy()
    interrupt_while_blocked(context.FAST_PATH.lock, run)
    problems = state_problems()
    with tf.experimental.async_scope():
        y = tf.constant([1.0, 2.0]) * 3.0
    if not problems and y.numpy().tolist() != [3.0, 6.0]:
        problems.append(f"wrong result after: {y.numpy()}")
    return problems


@scenario(budget_s=20)
def async_issue():
    """An interrupt while an op is being issued (here: where its issuing line is looked up),
    after which the scope's exit, `async_wait` and `sync_devices` must return."""
    real = async_exec._user_point
    calls = [0]

    def interrupted_once(depth):
        calls[0] += 1
        if calls[0] == 3:
            raise KeyboardInterrupt
        return real(depth)
    async_exec._user_point = interrupted_once
    x = tf.constant([1.0, 2.0])
    try:
        with tf.experimental.async_scope():
            for _ in range(5):
                x = x + 1.0
    except KeyboardInterrupt:
        pass
    finally:
        async_exec._user_point = real
    with tf.experimental.async_scope():
        y = tf.constant([1.0]) * 2.0
        tf.experimental.async_wait()
    tf.experimental.sync_devices()
    problems = state_problems()
    if y.numpy().tolist() != [2.0]:
        problems.append(f"wrong result after: {y.numpy()}")
    return problems


# -- the stress test ------------------------------------------------------------------------------

@scenario(budget_s=40)
def stress():
    seconds = float(os.environ.get("EAGER_INTERRUPT_STRESS_S", "0.8"))
    rng = random.Random()
    armed = [False]

    def on_sigint(signum, frame):
        # Only inside the loop body: the harness's own bookkeeping (counting iterations,
        # comparing results) is not what is being tested, and a real program's outermost
        # `except KeyboardInterrupt` is not interrupted either.
        if armed[0]:
            raise KeyboardInterrupt
    signal.signal(signal.SIGINT, on_sigint)

    x = tf.constant(np.arange(4, dtype=np.float32))
    v = tf.Variable(0.0)
    w = tf.Variable(np.zeros(4, np.float32))  # shared with the contending thread
    stop = threading.Event()
    contended = [0]

    # The longest pause between interrupts. It doubles after ten iterations in a row were all
    # cut short, so that a slow (loaded, or simulated-GPU) machine still finishes some: the
    # interrupts keep landing at random points, and the loops are not vacuous.
    pace = [0.002]

    def interrupter():
        while not stop.is_set():
            time.sleep(rng.uniform(0.0001, pace[0]))
            _thread.interrupt_main()

    def contender():  # the same variable's lock and the fast-path lock, from another thread
        ones = np.ones(4, np.float32)
        while not stop.is_set():
            w.assign_add(ones)
            contended[0] += 1
            with tf.GradientTape():
                w.numpy()
            time.sleep(0)  # lets the main thread run (else it waits out a switch interval)

    @tf.function
    def step(x):
        v.assign_add(1.0)
        return x * 2.0 + v

    step(x)  # traced before the interrupts start
    results = {}
    minus_ones = -np.ones(4, np.float32)
    threads = [threading.Thread(target=interrupter, daemon=True),
               threading.Thread(target=contender, daemon=True)]
    for t in threads:
        t.start()
    w_tried = w_done = 0
    for mode in ("eager", "async", "traced"):
        wrong = []
        tried = done = iterations = interrupts = streak = 0
        v_start = float(v.numpy())
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            iterations += 1
            try:
                armed[0] = True
                if mode == "eager":
                    with tf.GradientTape() as tape:
                        tape.watch(x)
                        y = tf.reduce_sum(x * x)
                    g = tape.gradient(y, x)
                    if g.numpy().tolist() != [0.0, 2.0, 4.0, 6.0]:
                        wrong.append(f"gradient {g.numpy()}")
                    tried += 1
                    v.assign_add(1.0)
                    done += 1
                    w_tried += 1
                    w.assign_add(minus_ones)
                    w_done += 1
                elif mode == "async":
                    with tf.experimental.async_scope():
                        y = x * 3.0
                        tried += 1
                        v.assign_add(1.0)
                        done += 1
                        w_tried += 1
                        w.assign_add(minus_ones)
                        w_done += 1
                        if y.numpy().tolist() != [0.0, 3.0, 6.0, 9.0]:
                            wrong.append(f"x * 3 = {y.numpy()}")
                else:
                    tried += 1
                    out = step(x).numpy()
                    done += 1
                    offset = out - 2.0 * np.arange(4)
                    if not (np.all(offset == offset[0]) and offset[0] == int(offset[0])):
                        wrong.append(f"step gave {out}")
                armed[0] = False
                streak = 0
            except KeyboardInterrupt:
                armed[0] = False
                interrupts += 1
                streak += 1
                if streak % 10 == 0:
                    pace[0] = min(2 * pace[0], 0.2)
        armed[0] = False
        tape = y = g = None  # noqa: F841 - (a tape whose exit was interrupted goes with its owner)
        tf.experimental.sync_devices()
        added = float(v.numpy()) - v_start
        if not done <= added <= tried:
            wrong.append(f"v grew by {added}, with {done} to {tried} increments issued")
        results[mode] = {"iterations": iterations, "interrupts": interrupts,
                         "wrong": wrong[:5]}
    stop.set()
    for t in threads:
        t.join()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    problems = [f"{mode}: {w}" for mode, r in results.items() for w in r["wrong"]]
    problems += state_problems(v, w)
    w_value = w.numpy()
    if not all(contended[0] - w_tried <= value <= contended[0] - w_done for value in w_value):
        problems.append(f"w = {w_value}: {contended[0]} increments and {w_done} to {w_tried} "
                        "decrements")
    for r in results.values():
        del r["wrong"]
    return problems, results


def main(name):
    fn, budget_s = SCENARIOS[name]
    tf.constant(0.0)  # the devices exist: the fast path can be at rest
    finished = threading.Event()

    def watchdog():
        if not finished.wait(budget_s):
            print(json.dumps({"problems": [f"hang: {name} did not finish in {budget_s} s"]}),
                  flush=True)
            faulthandler.dump_traceback(all_threads=True)
            os._exit(3)
    threading.Thread(target=watchdog, daemon=True).start()
    out = fn()
    problems, details = out if isinstance(out, tuple) else (out, {})
    finished.set()
    print(json.dumps({"problems": problems, "details": details}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
