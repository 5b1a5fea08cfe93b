"""Converted code means what the Python code means: on Python values, and traced on tensors.

AutoGraph rewrites every `if`, `while`, `for`, `break`, `continue`, `return`, `and`, `or`,
`not` and call, whatever the values; on Python values each must still do exactly what Python
does. Each function below is run as written and through `eager.autograph.to_graph`, and the
results (or the exceptions' types) must agree: loops with `else`, `break` and `continue`, early
`return`s inside loops and `try`, nested functions with `nonlocal`, `global`, generators,
classes, `match`, walrus in a `while` test, comprehensions and lambdas, `del`, star arguments.
Then functions of tensors with loops and branches on tensors (`break`, `continue`, `else`,
early returns, nested loops, conditional expressions, `and`/`not`): traced by `eager.function`
(one `If`/`While` op per statement) they must compute what they compute run eagerly, where each
`if` and `while` is Python's on an eager tensor.
"""

import contextlib

import numpy as np
import pytest

import eager
from eager.autograph import to_graph

c = eager.constant

G = 0

def f1(n):
    out = []
    for i in range(n):
        if i % 3 == 0:
            continue
        if i > 7:
            break
        out.append(i)
    else:
        out.append(-1)
    return out

def f2(x):
    try:
        if x > 0:
            return "pos"
        raise ValueError("neg")
    except ValueError as e:
        return str(e)
    finally:
        pass

def f3(xs):
    total = 0
    for a, (b, c) in xs:
        total += a * b - c
    return total

def f4(n):
    def gen():
        for i in range(n):
            yield i * i
    return sum(gen())

def f5(n):
    class K:
        def __init__(self, v):
            self.v = v
        def get(self):
            if self.v > 2:
                return self.v * 2
            return self.v
    return [K(i).get() for i in range(n)]

def f6(*args, k=2, **kw):
    s = sum(args) * k
    for _key, v in sorted(kw.items()):
        if v is None:
            continue
        s += v
    return s

def f7(n):
    global G
    for i in range(n):
        if i % 2:
            G += i
    return G

def f8(x):
    acc = []
    def push(v):
        nonlocal acc
        if v:
            acc = acc + [v]
    for c in x:
        push(c)
    return acc

def f9(n):
    i = 0
    while True:
        i += 1
        if i >= n:
            break
    return i

def f10(x):
    match x:
        case [a, b]:
            r = a + b
        case {"k": v}:
            r = v
        case _:
            r = None
    return r

def f11(x):
    y = f"{x!r:>5}" if x else "empty"
    return y, (x and len(x)), (not x), (x or "default")

def f12(n):
    res = 0
    for i in range(n):
        for j in range(i):
            if j == 2:
                break
            res += j
        else:
            res += 100
    return res

def f13(d):
    with contextlib.nullcontext("held") as held:
        if d:
            v = held
        else:
            v = None
    return v

def f14(n):
    fs = [lambda i=i: i * 2 for i in range(n)]
    return [f() for f in fs]

def f15(x):
    if x:
        y = 1
    else:
        pass
    try:
        return y
    except UnboundLocalError:
        return "unbound"

def f16(n):
    it = iter(range(n))
    total = 0
    while (v := next(it, None)) is not None:
        total += v
    return total

def f17(n):
    for i in range(n):  # noqa: B007 - the target outlives the loop, on purpose
        pass
    return i

def f18(x):
    def deco(k):
        def wrap(fn):
            return lambda *a: fn(*a) * k
        return wrap
    @deco(3)
    def g(v):
        return v + 1
    return g(x)

def f19(n):
    r = []
    i = 0
    while i < n:
        i += 1
        if i == 2:
            continue
        if i == 5:
            return r
        r.append(i)
    else:
        r.append("else")
    return r

def f20(xs):
    out = {}
    for k in xs:
        out.setdefault(k % 3, []).append(k)
    return out

def f21(n):
    x = 0
    del x
    try:
        return x
    except NameError:
        return "deleted"

def f22(a, b):
    return a if a > b else b if b > 0 else 0

def f23(n):
    s = 0
    for i in range(n):
        if i == 3:
            return s
        s += i
    return -1


CASES = [(f1, (10,)), (f1, (5,)), (f2, (1,)), (f2, (-1,)), (f3, ([(1, (2, 3)), (4, (5, 6))],)),
         (f4, (5,)), (f5, (5,)), (f6, (1, 2, 3), ), (f7, (5,)), (f8, ("ab c",)), (f9, (4,)),
         (f10, ([1, 2],)), (f10, ({"k": 3},)), (f10, (7,)), (f11, ("ab",)), (f11, ("",)),
         (f12, (6,)), (f13, (1,)), (f13, (0,)), (f14, (3,)), (f15, (1,)), (f15, (0,)), (f16, (5,)),
         (f17, (4,)), (f18, (2,)), (f19, (3,)), (f19, (8,)), (f20, (range(7),)), (f21, (1,)),
         (f22, (1, 2)), (f22, (3, 2)), (f22, (-3, -2)), (f23, (10,)), (f23, (2,))]


@pytest.mark.parametrize("function,args", CASES,
                         ids=[f"{f.__name__}{args!r}"[:40] for f, args in CASES])
def test_converted_code_on_python_values_is_python(function, args):
    global G

    def outcome(fn):
        global G
        G = 0
        try:
            return fn(*args)
        except Exception as exc:  # noqa: BLE001 - the outcome compared may be an exception
            return ("raised", type(exc).__name__)

    assert outcome(to_graph(function)) == outcome(function)


# -- on tensors: traced (staged) against eager (Python on eager tensors) ------------------------
def t1(x, n):
    s = eager.zeros_like(x)
    for i in range(n):
        if eager.reduce_sum(s) > 10.0:
            break
        s = s + x * eager.cast(i, eager.float32)
    return s

def t2(x):
    while eager.reduce_max(x) > 1.0:
        x = x / 2.0
        if eager.reduce_min(x) < 0.1:
            x = x + 0.05
            continue
        x = x - 0.01
    return x

def t3(x, n):
    if n > 3:
        if eager.reduce_sum(x) > 0:
            return x * 2.0
        return x * 3.0
    elif n > 1:
        return -x
    return x

def t4(x, n):
    total = 0.0
    i = 0
    while i < n:
        j = 0
        while j < i:
            total += eager.reduce_sum(x) * eager.cast(j, eager.float32)
            j += 1
        i += 1
    return total

def t5(x):
    count = 0
    for v in x:
        if v > 0 and v < 5:
            count += 1
        elif not v > -1:
            count -= 1
    return count

def t6(x, n):
    acc = x
    for _ in range(n):
        acc = acc * 0.5 if eager.reduce_sum(acc) > 1.0 else acc + 1.0
    return acc

def t7(x, n):
    r = c(0.0)
    for i in range(n):
        if i % 2 == 0:
            continue
        for j in range(i):
            if j > 2:
                break
            r += eager.cast(i * j, eager.float32)
    return r + eager.reduce_sum(x)

def t8(x, n):
    res = x
    k = 0
    while k < n:
        k += 1
        if eager.reduce_sum(res) > 100.0:
            break
        res = res * 2.0
    else:
        res = res - 1.0
    return res, k


_X2 = np.array([1.0, -3.0], np.float32)
TENSOR_CASES = [
    (t1, (np.array([0.5, 1.5, -0.2], np.float32), 6)),
    (t2, (np.array([5.0, 0.3], np.float32),)), (t2, (np.array([0.5], np.float32),)),
    *[(t3, (_X2, k)) for k in (0, 2, 4)], (t3, (np.array([1.0, 3.0], np.float32), 5)),
    (t4, (np.ones(2, np.float32), 4)), (t4, (np.ones(2, np.float32), 0)),
    (t5, (np.array([1.0, -2.0, 3.0, 7.0, 0.5], np.float32),)),
    (t6, (np.array([3.0], np.float32), 5)), (t6, (np.array([0.1], np.float32), 3)),
    (t7, (np.ones(2, np.float32), 7)), (t7, (np.ones(2, np.float32), 0)),
    (t8, (np.ones(2, np.float32), 3)), (t8, (np.ones(2, np.float32), 10)),
]


@pytest.mark.parametrize("function,args", TENSOR_CASES,
                         ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(TENSOR_CASES)])
def test_converted_code_traced_on_tensors_computes_what_it_computes_eagerly(function, args):
    tensors = [c(a) for a in args]
    want = function(*tensors)
    traced = eager.function(function)
    got = traced(*tensors)
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    for w, g in zip(want, got):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
    ops = {op.type for op in traced.get_concrete_function(*tensors).graph.get_operations()}
    assert ops & {"If", "While"}
