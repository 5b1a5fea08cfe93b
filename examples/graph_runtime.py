"""The graph runtime, seen from the outside: what a traced function turns into, a TF1-style
Session over a graph, and the semantics explorer telling which results a racy graph may give.

    python examples/graph_runtime.py
"""

import numpy as np

import eager
from eager.graph import Graph
from eager.ops import resource_ops
from eager.runtime import Program, optimize


def what_a_function_becomes():
    """A traced chain of 100 elementwise ops is fused into one node and compiled to a Python
    function (`experimental_get_program` shows both); the traced graph itself is never
    changed."""

    @eager.function
    def chain(x):
        for _ in range(50):
            x = x * 1.0001 + 0.5
        return x

    x = eager.constant(np.arange(4, dtype=np.float32))
    chain(x)
    concrete = chain.get_concrete_function(x)
    program = chain.experimental_get_program(x)  # the optimised program calls run
    print(f"traced graph: {len(concrete.graph.get_operations())} operations; "
          f"optimised program: {len(program.nodes)} node(s)")
    program.print_readable()
    print("compiled source:")
    print("    " + program.source.replace("\n", "\n    ").rstrip())
    # In a notebook, `concrete.graph` and `program` display as pictures (SVG, no Graphviz
    # needed); `program.draw(expand=True)` opens the fused node into its 100 ops.
    print(f"picture: {len(program.to_svg(engine='builtin', expand=True))} bytes of SVG")
    return len(concrete.graph.get_operations()), len(program.nodes)


def a_session():
    """Feeds and fetches by tensor or by name; only what the fetches need runs."""
    g = Graph("model")
    with g.as_default():
        x = g.placeholder(eager.float32, [None, 3], name="x")
        unused = g.placeholder(eager.float32, [], name="unused")
        hidden = eager.nn.relu(eager.matmul(x, eager.constant(np.eye(3, dtype=np.float32))))
        total = eager.reduce_sum(hidden, name="total")
        _ = unused * 2.0
    sess = eager.Session(g)
    xs = np.array([[1.0, -2.0, 3.0]], np.float32)
    # by name: `unused` need not be fed, the fetch does not need it
    value = sess.run("total:0", {"x:0": xs})
    both = sess.run({"h": hidden, "t": total}, {x: xs})
    print(f"session: total={value}, hidden={both['h'].tolist()}, cache={sess.cache_stats}")
    return float(value)


def which_results_are_allowed():
    """Two unordered increments of X may lose one (update ops are read-compute-write in the
    semantics); the runtime never does (they hold the variable's lock)."""
    counter = eager.Variable(0.0, name="X")
    one = eager.constant(1.0)
    g = Graph("increments", auto_control_deps=False)  # TF1 style: only the edges we add
    with g.as_default():
        g.capture(counter.handle)
        g.capture(one)
        first = g.add_op(resource_ops.ASSIGN_ADD, (counter.handle, one), {})
        second = g.add_op(resource_ops.ASSIGN_ADD, (counter.handle, one), {})
    g.control_outputs = [first, second]
    allowed = eager.experimental.allowed_outcomes(g)
    finals = sorted(o.variable("X") for o in allowed)
    program = optimize(Program.from_graph(g, constants={p: v for v, p in g.captures}))
    eager.runtime.run_program(program, [])
    print(f"explorer: X may end at {finals}; the runtime gave {float(counter.numpy())}")
    return finals, float(counter.numpy())


def main():
    sizes = what_a_function_becomes()
    total = a_session()
    outcomes = which_results_are_allowed()
    return sizes, total, outcomes


if __name__ == "__main__":
    main()
