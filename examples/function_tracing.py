"""`eager.function`: tracing, retracing, a training step as a function, prints, control flow.

Run it: `python examples/function_tracing.py`. It prints what it does:

1. retracing made visible: a Python `print` runs only while tracing, so it shows each trace;
   `experimental_get_tracing_count()` counts them. A new shape retraces; an `input_signature`
   with a None dimension serves every length with one trace;
2. a training step as a function: a small linear model, a GradientTape and an Adam optimizer
   inside `@eager.function`; its slots are made on the first call, and the loss falls;
3. `eager.print` inside a function prints on every call, in program order with the function's
   other effects (a Python `print` would print once, while tracing);
4. `eager.cond` and `eager.while_loop` inside a function: both branches and the loop body are
   traced once, and the taken branch and the loop run per call;
5. AutoGraph: the same Collatz function written with Python's `while` and `if` (converted into
   a `While` and an `If` op, one trace for every input), a `for` over `range(n)` with `break`
   and `continue`, a `for` over a tensor's rows, the converted source (`to_code`), and the
   error a variable assigned in only one branch gets (TensorFlow's, naming the variable and the
   line).
"""

import sys

import numpy as np

import eager


def retracing():
    print("1. retracing")

    @eager.function
    def scale(x):
        print(f"   tracing scale for shape {x.shape}")  # Python side effect: tracing only
        return x * 2.0

    scale(eager.constant([1.0, 2.0]))
    scale(eager.constant([3.0, 4.0]))  # same shape and dtype: the trace is reused
    scale(eager.constant([1.0, 2.0, 3.0]))  # a new shape: a new trace
    print(f"   traces after 3 calls, 2 shapes: {scale.experimental_get_tracing_count()}")

    @eager.function(input_signature=[eager.TensorSpec([None], eager.float32)])
    def scale_any(x):
        print("   tracing scale_any for shape [None]")
        return x * 2.0

    for n in (2, 3, 5):
        scale_any(eager.constant(np.ones(n, np.float32)))
    print(f"   traces after 3 lengths with input_signature: "
          f"{scale_any.experimental_get_tracing_count()}")
    return scale.experimental_get_tracing_count(), scale_any.experimental_get_tracing_count()


def training(steps=60):
    print("2. a training step as a function")
    rng = np.random.default_rng(0)
    x = eager.constant(rng.standard_normal((64, 3)).astype(np.float32))
    true_w = np.array([[1.5], [-2.0], [0.5]], np.float32)
    y = eager.constant(x.numpy() @ true_w + 0.3)
    w = eager.Variable(np.zeros((3, 1), np.float32), name="w")
    b = eager.Variable(np.zeros(1, np.float32), name="b")
    opt = eager.optimizers.Adam(0.1)

    @eager.function
    def train_step(x, y):
        with eager.GradientTape() as tape:
            loss = eager.reduce_mean((eager.matmul(x, w) + b - y) ** 2)
        grads = tape.gradient(loss, [w, b])
        opt.apply_gradients(zip(grads, [w, b]))
        return loss

    losses = [float(train_step(x, y).numpy()) for _ in range(steps)]
    print(f"   loss {losses[0]:.3f} -> {losses[-1]:.4f} in {steps} steps; "
          f"traces: {train_step.experimental_get_tracing_count()} (the first call made Adam's "
          f"slots, so it traced once more); optimizer variables: {len(opt.variables)}")
    print(f"   learned w {np.round(w.numpy().ravel(), 2)}, b {np.round(b.numpy(), 2)}")
    return losses


def printing():
    print("3. eager.print inside a function", flush=True)
    v = eager.Variable(0)

    @eager.function
    def count():
        eager.print("   before:", v, output_stream=sys.stdout)
        v.assign_add(1)
        eager.print("   after: ", v, output_stream=sys.stdout)
        return v.read_value()

    for _ in range(2):
        count()
    sys.stdout.flush()
    return int(v.numpy())


def control_flow():
    print("4. eager.cond and eager.while_loop inside a function")

    @eager.function
    def collatz_steps(n):
        def body(n, steps):
            n = eager.cond(n % 2 == 0, lambda: n // 2, lambda: 3 * n + 1)
            return n, steps + 1

        _, steps = eager.while_loop(lambda n, steps: n > 1, body, [n, eager.constant(0)])
        return steps

    results = {n: int(collatz_steps(eager.constant(n)).numpy()) for n in (6, 7, 27)}
    print(f"   Collatz steps {results}; traces: "
          f"{collatz_steps.experimental_get_tracing_count()}")
    return results


def autograph():
    print("5. AutoGraph: Python control flow on tensors becomes eager.cond / eager.while_loop")

    @eager.function
    def collatz_steps(n):
        steps = 0
        while n > 1:
            if n % 2 == 0:
                n = n // 2
            else:
                n = 3 * n + 1
            steps += 1
        return steps

    results = {n: int(collatz_steps(eager.constant(n)).numpy()) for n in (6, 7, 27)}
    ops = [op.type for op in
           collatz_steps.get_concrete_function(eager.constant(6)).graph.get_operations()]
    print(f"   Collatz steps {results}; traces: "
          f"{collatz_steps.experimental_get_tracing_count()}; ops: {ops.count('While')} While")

    @eager.function
    def sum_of_odd_below(n, limit):
        total = 0
        for i in range(n):
            if i >= limit:
                break
            if i % 2 == 0:
                continue
            total += i
        return total

    print(f"   odd numbers below 10 summed, stopping at 7: "
          f"{int(sum_of_odd_below(eager.constant(10), eager.constant(7)).numpy())}")

    @eager.function
    def row_norms(x):
        norms = eager.zeros([0])
        for row in x:
            eager.autograph.experimental.set_loop_options(
                shape_invariants=[(norms, eager.TensorShape([None]))])
            norms = eager.concat([norms, eager.reshape(eager.norm(row), [1])], 0)
        return norms

    rows = row_norms(eager.constant([[3.0, 4.0], [6.0, 8.0], [5.0, 12.0]])).numpy()
    print(f"   row norms from a loop over the rows: {rows.tolist()}")

    print("   converted source of collatz_steps (first lines):")
    source = eager.autograph.to_code(collatz_steps.python_function)
    for line in [line for line in source.splitlines() if line.strip()][:10]:
        print("     " + line)

    @eager.function
    def one_branch(x):
        if x > 0:
            y = x * 2
        return y

    try:
        one_branch(eager.constant(1))
    except ValueError as exc:
        print(f"   {type(exc).__name__}: {str(exc).splitlines()[0]}")
    return results, rows


def main():
    traces = retracing()
    losses = training()
    count = printing()
    collatz = control_flow()
    converted = autograph()
    return traces, losses, count, collatz, converted


if __name__ == "__main__":
    main()
