"""A numpy stand-in for `cupy.ElementwiseKernel` and `cupy.ReductionKernel`: it parses the C
subset `eager.ops.cupy_kernels` writes its sources in and evaluates them on numpy arrays, with
CUDA's typing and conversions (a float converted to an integer saturates, NaN to 0). So a typo
or a wrong operator in a kernel source fails a CPU test.

The subset: statements `TYPE name = expr;` and `name = expr;`; expressions with `?:`, `||`,
`&&`, comparisons, `+ - * /`, unary `-` and `!`, parentheses, literals, calls of `exp`, `log`,
`tanh`, `sqrt`, `fabs`, `isnan`, `copysign`, casts written `TYPE(expr)`, and, in a reduction,
`_in_ind.size()` / `_out_ind.size()`. A reduction takes any number of inputs, broadcast together
as CuPy broadcasts them, and reduces their mapped values. Typing follows CUDA C++ as CuPy
compiles it: a float literal is a double, an integer literal takes the other operand's type,
integer division truncates, and a float16 value (CuPy's `float16` class) is read as a float32
and rounded only where it is stored (a declaration, a cast or an output), so a float16
expression computes in float32 as on the GPU. The reduction folds in sequence where CuPy reduces
in a tree: equal within rounding only.
"""

from __future__ import annotations

import re

import numpy as np

_TOKEN = re.compile(r"\s*(?:(\d+\.\d*(?:e[-+]?\d+)?f?|\d+e[-+]?\d+f?)|(\d+)|([A-Za-z_]\w*)"
                    r"|(\|\||&&|==|!=|<=|>=|[-+*/<>!?:(),=]))")
_FUNCTIONS = {"exp": np.exp, "log": np.log, "tanh": np.tanh, "sqrt": np.sqrt, "fabs": np.abs,
              "isnan": np.isnan, "copysign": np.copysign}
_CONCRETE = {"float": np.dtype(np.float32), "double": np.dtype(np.float64),
             "int": np.dtype(np.int32), "float16": np.dtype(np.float16),
             "float32": np.dtype(np.float32), "float64": np.dtype(np.float64),
             "bool": np.dtype(np.bool_)}


def _tokens(text):
    text = text.replace("_in_ind.size()", "_in_size").replace("_out_ind.size()", "_out_size")
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise SyntaxError(f"cannot read {text[pos:]!r}")
        floating, integer, name, op = m.groups()
        if floating is not None:
            kind = np.float32 if floating.endswith("f") else np.float64
            out.append(("num", kind(floating.rstrip("f"))))
        elif integer is not None:
            out.append(("num", int(integer)))  # C int: takes the other operand's type here
        elif name is not None:
            out.append(("name", name))
        else:
            out.append(("op", op))
        pos = m.end()
    return out


def _read(value):
    """A stored value as an expression reads it: float16 (CuPy's class) converts to float."""
    if isinstance(value, np.ndarray) and value.dtype == np.float16:
        return value.astype(np.float32)
    return value


def _as(value, dtype):
    """`value` converted to `dtype` as CUDA converts: a float to an integer truncates toward
    zero, saturates at the integer's limits and takes NaN to 0 (numpy leaves those undefined,
    and on x86 gives the minimum); everything else as numpy's cast."""
    value = np.asarray(value)
    dtype = np.dtype(dtype)
    if value.dtype.kind == "f" and dtype.kind in "iu":
        info = np.iinfo(dtype)
        wide = value.astype(np.float64)
        clipped = np.asarray(np.clip(np.trunc(np.nan_to_num(wide, nan=0.0)), info.min,
                                     info.max))
        out = np.array(clipped.astype(dtype))  # in range, but float64 rounds 2**63 - 1 up:
        out[...] = np.where(clipped >= float(info.max), info.max, out)
        return out
    return value.astype(dtype)


def _divide(a, b):
    def integral(v):
        return isinstance(v, int) or np.asarray(v).dtype.kind in "iu"
    if integral(a) and integral(b):
        q = np.abs(np.asarray(a)) // np.abs(np.asarray(b))
        result = np.where((np.asarray(a) < 0) != (np.asarray(b) < 0), -q, q)
        return int(result) if isinstance(a, int) and isinstance(b, int) else result
    return np.divide(a, b)


_BINARY = {"||": np.logical_or, "&&": np.logical_and, "==": np.equal, "!=": np.not_equal,
           "<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
           "+": np.add, "-": np.subtract, "*": np.multiply, "/": _divide}
_LEVELS = [("||",), ("&&",), ("==", "!="), ("<", "<=", ">", ">="), ("+", "-"), ("*", "/")]


class _Parser:
    def __init__(self, tokens, env, types):
        self.tokens, self.i, self.env, self.types = tokens, 0, env, types

    def peek(self):
        return self.tokens[self.i] if self.i < len(self.tokens) else (None, None)

    def take(self, op=None):
        token = self.peek()
        if op is not None and token != ("op", op):
            raise SyntaxError(f"expected {op!r}, found {token}")
        self.i += 1
        return token

    def expression(self):
        cond = self.binary(0)
        if self.peek() == ("op", "?"):
            self.take("?")
            yes = self.expression()
            self.take(":")
            no = self.expression()
            return np.where(cond, yes, no)
        return cond

    def binary(self, level):
        if level == len(_LEVELS):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek()[0] == "op" and self.peek()[1] in _LEVELS[level]:
            op = self.take()[1]
            left = _BINARY[op](left, self.binary(level + 1))
        return left

    def unary(self):
        kind, value = self.peek()
        if (kind, value) == ("op", "-"):
            self.take()
            operand = self.unary()
            return -operand if isinstance(operand, int) else np.negative(operand)
        if (kind, value) == ("op", "!"):
            self.take()
            return np.logical_not(self.unary())
        return self.primary()

    def primary(self):
        kind, value = self.take()
        if kind == "num":
            return value
        if (kind, value) == ("op", "("):
            inner = self.expression()
            self.take(")")
            return inner
        if kind != "name":
            raise SyntaxError(f"unexpected {value!r}")
        if self.peek() == ("op", "("):
            self.take("(")
            args = [self.expression()]
            while self.peek() == ("op", ","):
                self.take(",")
                args.append(self.expression())
            self.take(")")
            if value in self.types:
                (arg,) = args
                return _as(arg, self.types[value])
            if value not in _FUNCTIONS:
                raise NameError(f"no function {value!r} in the stand-in (or in CUDA?)")
            return _FUNCTIONS[value](*args)
        if value not in self.env:
            raise NameError(f"{value!r} is not defined")
        return _read(self.env[value])


def run_statements(source, env, types, declared):
    """Runs `source`'s statements, updating `env`; `declared` maps a stored name to its dtype
    (a store converts to it, as C's assignment does). Returns `env`."""
    with np.errstate(all="ignore"):
        for statement in filter(str.strip, source.split(";")):
            tokens = _tokens(statement)
            if (len(tokens) > 2 and tokens[0][0] == "name" and tokens[1][0] == "name"
                    and tokens[2] == ("op", "=")):
                if tokens[0][1] not in types:
                    raise NameError(f"unknown type {tokens[0][1]!r}")
                if tokens[1][1] in declared or tokens[1][1] in env:
                    raise SyntaxError(f"{tokens[1][1]!r} redeclared (a C++ compile error)")
                declared[tokens[1][1]] = types[tokens[0][1]]
                tokens = tokens[1:]
            if len(tokens) < 3 or tokens[0][0] != "name" or tokens[1] != ("op", "="):
                raise SyntaxError(f"not an assignment: {statement!r}")
            name = tokens[0][1]
            if name not in declared:
                raise NameError(f"assignment to undeclared {name!r}")
            parser = _Parser(tokens[2:], env, types)
            value = parser.expression()
            if parser.i != len(parser.tokens):
                raise SyntaxError(f"trailing tokens in {statement!r}")
            env[name] = _as(value, declared[name])
    return env


def _params(text):
    out = []
    for part in filter(str.strip, text.split(",")):
        words = part.split()
        if len(words) != 2:
            raise SyntaxError(f"bad parameter {part!r}")
        out.append(tuple(words))
    return out


def _types(params, args):
    types = dict(_CONCRETE)
    for (type_name, _), arg in zip(params, args):
        if type_name not in _CONCRETE:
            types.setdefault(type_name, np.asarray(arg).dtype)
    return types


class ElementwiseKernel:
    def __init__(self, in_params, out_params, operation, name="kernel", options=(),
                 preamble=""):
        self.in_params, self.out_params = _params(in_params), _params(out_params)
        self.operation, self.name, self.options = operation, name, options

    def __call__(self, *args):
        n_in = len(self.in_params)
        if len(args) not in (n_in, n_in + len(self.out_params)):
            raise TypeError(f"{self.name}: wrong number of arguments")
        types = _types(self.in_params + self.out_params, args)
        for (type_name, name), arg in zip(self.in_params, args):
            if np.asarray(arg).dtype != types[type_name]:
                raise TypeError(f"{self.name}: {name} is {np.asarray(arg).dtype}, "
                                f"{type_name} is {types[type_name]}")
        shape = np.broadcast_shapes(*(np.shape(a) for a in args))
        outs = list(args[n_in:]) or [np.empty(shape, types[t]) for t, _ in self.out_params]
        env = {name: np.asarray(a) for (_, name), a in zip(self.in_params, args)}
        env.update({name: np.array(o) for (_, name), o in zip(self.out_params, outs)})
        declared = {name: types[t] for t, name in self.out_params}
        run_statements(self.operation, env, types, declared)
        for (_, name), out in zip(self.out_params, outs):
            out[...] = np.broadcast_to(env[name], shape)
        return outs[0] if len(outs) == 1 else tuple(outs)


class ReductionKernel:
    def __init__(self, in_params, out_params, map_expr, reduce_expr, post_map_expr, identity,
                 name="reduce_kernel", options=()):
        self.in_params, (self.out_param,) = _params(in_params), _params(out_params)
        self.map_expr, self.reduce_expr = map_expr, reduce_expr
        self.post_map_expr, self.identity, self.name = post_map_expr, identity, name

    def _value(self, expression, env, types, dtype):
        declared = {"_v": dtype}
        return run_statements(f"_v = {expression}", dict(env), types, declared)["_v"]

    def __call__(self, *args, axis=None, keepdims=False):
        if len(args) != len(self.in_params):
            raise TypeError(f"{self.name}: wrong number of arguments")
        types = _types(self.in_params, args)
        for (type_name, name), arg in zip(self.in_params, args):
            if np.asarray(arg).dtype != types[type_name]:
                raise TypeError(f"{self.name}: {name} is {np.asarray(arg).dtype}, "
                                f"{type_name} is {types[type_name]}")
        dtype = types[self.out_param[0]]  # the reduce type: the output's
        types["_type_reduce"] = dtype
        arrays = np.broadcast_arrays(*(np.asarray(a) for a in args))
        shape = arrays[0].shape
        ndim = len(shape)
        axes = tuple(range(ndim)) if axis is None else tuple(
            a % ndim for a in (axis if isinstance(axis, tuple) else (axis,)))
        kept = [i for i in range(ndim) if i not in axes]
        env = {name: a for (_, name), a in zip(self.in_params, arrays)}
        mapped = np.broadcast_to(self._value(self.map_expr, env, types, dtype), shape)
        mapped = np.transpose(mapped, kept + list(axes))
        reduced = int(np.prod([shape[a] for a in axes]))  # (-1 cannot size an empty array)
        mapped = mapped.reshape(mapped.shape[:len(kept)] + (reduced,))
        acc = np.full(mapped.shape[:-1], self._value(self.identity, {}, types, dtype))
        for i in range(mapped.shape[-1]):
            acc = self._value(self.reduce_expr, {"a": acc, "b": mapped[..., i]}, types, dtype)
        size = int(np.prod(shape))
        env = {"a": acc, "_in_size": size, "_out_size": max(acc.size, 1)}
        out = run_statements(self.post_map_expr, env, types,
                             {self.out_param[1]: dtype})[self.out_param[1]]
        if keepdims:
            out = out.reshape([1 if i in axes else d for i, d in enumerate(shape)])
        return out


class StandIn:
    """What `eager.ops.cupy_kernels` reads of the `cupy` module."""

    ElementwiseKernel = ElementwiseKernel
    ReductionKernel = ReductionKernel
