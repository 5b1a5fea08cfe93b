"""The corpus of `tools/compare_with_tensorflow.py`: calls run through both `eager` and TensorFlow.

Each case is `Case(id, code, kind)`. `code` is a Python expression (or a snippet that assigns
`result`) seeing `tf` (the module under test), `np`, `operator`, and the helpers below:

* `t(dtype, kind="vec")`: a constant of `dtype` holding the sample `kind` (see `SAMPLES`),
* `a(dtype, kind="vec")`: the same sample as a numpy array,
* `printed(*inputs, **kwargs)`: what `tf.print` writes, as a string.

`kind` is "value" (compare values, dtypes, shapes, error classes) or "meta" (random ops: compare
only dtypes, shapes and error classes). `EXPECTED` lists the documented, intentional deviations
of eager from TensorFlow (case-id regex, reason): they are reported apart and do not fail a run.
"""

from __future__ import annotations

import collections
import operator
import os
import tempfile

import numpy as np

Case = collections.namedtuple("Case", ["id", "code", "kind"], defaults=["value"])
C = Case

DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
          "uint32", "uint64", "bool", "complex64", "complex128"]
FLOATS = ["float16", "float32", "float64"]

# Samples by kind of sample and numpy dtype kind (f: float, i: signed, u: unsigned, b, c).
SAMPLES = {
    "vec": {"f": [-1.5, 0.0, 2.5, 4.0], "i": [-3, 0, 2, 7], "u": [0, 1, 2, 7],
            "b": [True, False, True, False], "c": [1 + 2j, -0.5j, 3, 0]},
    "pos": {"f": [0.25, 1.0, 2.5, 9.0], "i": [1, 2, 3, 9], "u": [1, 2, 3, 9],
            "b": [True, True, False, True], "c": [0.25 + 1j, 1, 2.5 - 1j, 9]},
    "scalar": {"f": -2.5, "i": -3, "u": 3, "b": True, "c": 1 - 1j},
    "empty": {"f": [], "i": [], "u": [], "b": [], "c": []},
    "mat": {"f": [[1.5, -2.0, 0.0], [3.0, 0.5, -1.0]], "i": [[1, -2, 0], [3, 5, -1]],
            "u": [[1, 2, 0], [3, 5, 1]], "b": [[True, False, True], [False, False, True]],
            "c": [[1 + 1j, -2, 0], [3j, 0.5, -1 - 1j]]},
    "row": {"f": [0.5, -1.0, 2.0], "i": [2, -1, 3], "u": [2, 1, 3], "b": [False, True, True],
            "c": [0.5j, -1, 2 + 2j]},
    "cast": {"f": [0.0, 1.5, 2.7, 100.0], "i": [-3, 0, 2, 100], "u": [0, 1, 2, 200],
             "b": [True, False, True, False], "c": [1 + 2j, 0, 2.7 - 1j, 100]},
    "cube": {k: np.arange(24).reshape(2, 3, 4).tolist() for k in "fiuc"},
    "sq": {"f": [[2.0, -1.0], [0.5, 3.0]], "i": [[2, -1], [0, 3]], "u": [[2, 1], [0, 3]],
           "b": [[True, False], [True, True]], "c": [[2, -1j], [0.5, 3 + 1j]]},
}


def a(dtype, kind="vec"):
    dt = np.dtype(dtype)
    sample = SAMPLES[kind].get(dt.kind, SAMPLES[kind].get("i"))
    return np.array(sample, dtype=dt)


def helpers(mod):
    def t(dtype, kind="vec"):
        return mod.constant(a(dtype, kind))

    def printed(*inputs, **kwargs):
        fd, path = tempfile.mkstemp(suffix=".txt")
        os.close(fd)
        try:
            mod.print(*inputs, output_stream="file://" + path, **kwargs)
            with open(path, encoding="utf-8") as f:
                return f.read()
        finally:
            os.remove(path)

    return {"t": t, "a": a, "printed": printed, "operator": operator}


# Intentional deviations: (case-id regex, reason). They do not fail a run.
EXPECTED = [
    (r"^index\.gather", "eager: a non-scalar integer tensor/list index gathers (TF raises "
                        "TypeError); documented in API.md"),
    (r"^convert\.string|tf\.string|as_dtype\('string'\)|\+ 'a'$|cast\('1'",
     "eager has no string dtype (TF makes a tf.string tensor)"),
    (r"^method\.numpy_writeable", "eager's numpy() is a read-only view (tensors are immutable)"),
    (r"^random\.value", "random values differ by design; only seeding semantics match"),
    (r"^method\.device", "eager reports short device names ('CPU:0'); TF the long form"),
    (r"^print\.complex", "eager prints complex numbers; TF prints '?'"),
    # TensorFlow pitfalls eager does better on:
    (r"^constant\.(300, tf\.int8|-1, tf\.uint8|2\*\*32, dtype=tf\.uint32|-1, dtype=tf\.uint64)\)$"
     r"|^convert\.(2\*\*40, dtype=tf\.int32|\[-1, 2\], dtype=tf\.uint8|\[300\], dtype=tf\.int8)\)$"
     r"|^operator\.tf\.constant\(\[1, 2\](, tf\.u?int8)?\) (\+|==) (300|-1|2\*\*40)$"
     r"|^operator\.tf\.math\.add\(tf\.constant\(\[1, 2\], tf\.uint8\), 256\)$"
     r"|^operator\.tf\.math\.floormod\(tf\.constant\(\[-7, 7\], tf\.uint8\)",
     "TF silently wraps an out-of-range Python int to the requested dtype (int32_tensor + 2**40 "
     "adds 0, constant(300, int8) is 44); eager raises ValueError"),
    (r"^constant\.np\.array\(\[1\.5\]\), dtype=tf\.int32\)$"
     r"|^operator\.tf\.math\.add\(tf\.constant\(\[1\]\), np\.array\(2\.0\)\)$",
     "TF force-casts numpy values to any requested dtype (int_tensor * np.float32(0.5) == 0); "
     "eager converts numpy values by the same rule as Python values (TypeError float -> int)"),
    (r"data_format='NCHW'", "eager runs NCHW on the CPU; TF's CPU kernels support only NHWC"),
    (r"^unary\.logical_not\.numpy_f64$", "TF force-casts a numpy array to the bool input "
                                         "(nonzero -> True); eager converts it by the Python "
                                         "rule (no float -> bool)"),
    (r"^slice\.tf\.slice\(t\('float32', 'scalar'\), \[\], \[\]\)$",
     "TF converts [] to float32, which Slice's index attr rejects; eager takes [] as no indices"),
    (r"^where\.one_arg\.float16$", "TF has no float16 kernel for one-argument where"),
    (r"^tile\.uint16$", "TF has no uint16 kernel for Tile"),
    (r"^sort\.tf\.sort\(tf\.constant\(\[np\.nan", "TF's sort puts NaN at an arbitrary place "
                                                 "(an artifact of its top_k); eager sorts NaN last"),
    (r"^gelu\.float64$|^nn\.tf\.nn\.gelu\(t\('float64'", "TF's float64 erf is accurate to ~1e-7 only; "
                                                      "eager's gelu is exact to float64"),
    (r"^einsum\.tf\.einsum\('ij->i', \[\[", "TF's einsum fails on a Python list (AttributeError); "
                                            "eager converts it"),
    (r"^method\.operator\.index\(tf\.constant\((2\.0|True)\)\)$",
     "TF raises AttributeError (a bug); eager raises TypeError as Python expects"),
]

# Known mismatches whose fix lies outside the op modules: (case-id regex, substring of the
# mismatch detail or "", where the fix belongs). Reported apart; they do not fail a run.
PENDING = [
    (r"^unary\.logical_not\.python_|^reduce\.reduce_(any|all)\.list_",
     "tf raises TypeError, eager raises InvalidArgumentError",
     "eager/ops/math_ops.py _unary/_reduction: a Python value passed to a bool-only op must be "
     "converted with bool (TypeError for 2.0 or [1, 0]); they call as_tensor(x), which infers "
     "float32/int32 first. Converting non-tensors with `same_type(op, x)[0]` does it"),
    (r"numpy_f64_left", "",
     "eager/ops/operators.py: TF's add(x, y) converts a leading non-tensor x by itself "
     "(add(np_f64, f32_tensor) fails), but its reflected operators (np_f64 + f32_tensor, "
     "1.5 + int_tensor) convert x strictly with the tensor's dtype. eager's reflected operators "
     "call the same add(x, y), so convert.same_type treats a leading non-tensor as the reflected "
     "case; the fix is reflected operators that convert `other` themselves"),
    (r"^operator\.\+tf\.constant", "", "Tensor.__pos__ (eager/tensor.py): TF has no unary +"),
]


def _cases():
    out = []
    add = out.append

    # ------------------------------------------------------------------ constant / conversion
    for code in [
        "tf.constant(1.5)", "tf.constant(2)", "tf.constant(True)", "tf.constant(1+2j)",
        "tf.constant(2**31)", "tf.constant(-2**31)", "tf.constant(-2**31-1)", "tf.constant(2**63)",
        "tf.constant(2**63-1)", "tf.constant(-2**63)", "tf.constant([1, 2**70])",
        "tf.constant([1, 2**40])", "tf.constant([1, 2.5])", "tf.constant([1, 2], dtype=tf.float32)",
        "tf.constant([1.5], dtype=tf.int32)", "tf.constant(1.5, tf.int32)",
        "tf.constant(300, tf.int8)", "tf.constant(-1, tf.uint8)", "tf.constant([[1, 2], [3]])",
        "tf.constant(None)", "tf.constant(object())", "tf.constant([True, 1])",
        "tf.constant([1+2j, 1])", "tf.constant(np.float64(1.5))", "tf.constant(np.array(1))",
        "tf.constant(np.int32(3))", "tf.constant([np.float64(1), 2.0])",
        "tf.constant([np.float32(1), 2.0])", "tf.constant([np.int64(1), 2])",
        "tf.constant(5, shape=[2, 3])", "tf.constant([1, 2, 3, 4], shape=[2, 2])",
        "tf.constant([1, 2, 3], shape=[2, 2])", "tf.constant(1, shape=[0])",
        "tf.constant([1, 2], shape=[1, 2, 1])", "tf.constant(1.5, dtype=tf.complex64)",
        "tf.constant(2, dtype=tf.float16)", "tf.constant(np.array([1.5]), dtype=tf.int32)",
        "tf.constant(np.array([1, 2]), dtype=tf.float32)",
        "tf.constant(np.array([1.5, 2]), dtype=tf.float16)",
        "tf.constant(tf.constant([1, 2]), dtype=tf.float32)", "tf.constant(tf.constant([1, 2]))",
        "tf.constant([], dtype=tf.int64)", "tf.constant([])", "tf.constant([[]])",
        "tf.constant([[], []], dtype=tf.bool)", "tf.constant(())", "tf.constant([[1], [2, 3]])",
        "tf.constant(2**32, dtype=tf.uint32)", "tf.constant(2**64 - 1, dtype=tf.uint64)",
        "tf.constant(-1, dtype=tf.uint64)", "tf.constant(1e40, dtype=tf.float32)",
        "tf.constant(1e40)", "tf.constant([1e40, 1])", "tf.constant(True, dtype=tf.int32)",
        "tf.constant(1, dtype=tf.bool)", "tf.constant(1.5, dtype=tf.bool)",
        "tf.constant(1+2j, dtype=tf.float32)", "tf.constant(np.bool_(True))",
        "tf.constant(np.array([1, 2], np.uint16))", "tf.constant(np.array(2.5, np.float16))",
        "tf.constant(np.array([], np.float64))", "tf.constant(np.array([[1, 2]], np.int8))",
        "tf.constant(range(3))", "tf.constant((1, 2))", "tf.constant([[1, 2], (3, 4)])",
        "tf.constant(3, dtype='float64')", "tf.constant(3, dtype=np.float64)",
        "tf.constant(3, dtype=float)", "tf.constant([1, 2], dtype=tf.float32, shape=[2, 1])",
        "tf.constant([1, 2], shape=[-1])", "tf.constant([1, 2], shape=[3])",
    ]:
        add(C(f"constant.{code[12:]}", code))
    for code in [
        "tf.convert_to_tensor(tf.constant(1), dtype=tf.float32)",
        "tf.convert_to_tensor(tf.constant(1), dtype=tf.int32)",
        "tf.convert_to_tensor([1, 2], dtype_hint=tf.float32)",
        "tf.convert_to_tensor(1.5, dtype_hint=tf.int32)",
        "tf.convert_to_tensor(np.array([1, 2], np.int64), dtype=tf.int32)",
        "tf.convert_to_tensor(np.array([1.5]), dtype=tf.float32)",
        "tf.convert_to_tensor([tf.constant(1), 2])",
        "tf.convert_to_tensor([tf.constant(1.0), tf.constant(2.0)])",
        "tf.convert_to_tensor([tf.constant(1.0), 2])",
        "tf.convert_to_tensor([tf.constant(1), tf.constant(2.0)])",
        "tf.convert_to_tensor(2**40)", "tf.convert_to_tensor(2**40, dtype=tf.int32)",
        "tf.convert_to_tensor(np.float32(1))", "tf.convert_to_tensor([[1.0, 2.0]])",
        "tf.convert_to_tensor(None)", "tf.convert_to_tensor({'a': 1})",
        "tf.convert_to_tensor(1, dtype=tf.float32)", "tf.convert_to_tensor(1, dtype='int64')",
        "tf.convert_to_tensor([1, 2], dtype=tf.uint8)",
        "tf.convert_to_tensor([-1, 2], dtype=tf.uint8)",
        "tf.convert_to_tensor([300], dtype=tf.int8)",
    ]:
        add(C(f"convert.{code[21:]}", code))
    add(C("convert.string_constant", "tf.constant('a')"))
    add(C("convert.string_list", "tf.convert_to_tensor(['a', 'b'])"))

    # ------------------------------------------------------------------ unary math
    unary = ["negative", "abs", "sign", "square", "sqrt", "exp", "sin", "cos", "tanh",
             "sigmoid", "rsqrt", "log", "log1p", "logical_not"]
    for op in unary:
        for dt in DTYPES:
            add(C(f"unary.{op}.{dt}", f"tf.math.{op}(t('{dt}'))"))
        for kind in ("scalar", "empty", "mat", "pos"):
            add(C(f"unary.{op}.float32.{kind}", f"tf.math.{op}(t('float32', '{kind}'))"))
        add(C(f"unary.{op}.python_float", f"tf.math.{op}(2.0)"))
        add(C(f"unary.{op}.python_int", f"tf.math.{op}(2)"))
        add(C(f"unary.{op}.python_list", f"tf.math.{op}([1.0, -2.0])"))
        add(C(f"unary.{op}.numpy_f64", f"tf.math.{op}(np.array([1.0, 4.0]))"))
        add(C(f"unary.{op}.bool_list", f"tf.math.{op}([True, False])"))
    for op in ["negative", "abs", "sign", "square", "sqrt", "exp", "sin", "cos", "tanh",
               "sigmoid", "logical_not"]:
        add(C(f"toplevel.{op}", f"tf.{op}(t('float32') if '{op}' != 'logical_not' "
                                f"else t('bool'))"))
    for code in ["tf.nn.sigmoid(t('float64'))", "tf.math.sqrt(t('float32', 'vec'))",
                 "tf.math.log(t('float32', 'vec'))", "tf.math.rsqrt(tf.constant([0.0, -1.0]))",
                 "tf.math.sign(tf.constant([np.nan, -0.0, 0.0]))",
                 "tf.math.sigmoid(tf.constant([-100.0, 100.0, 0.0]))",
                 "tf.math.exp(tf.constant([1000.0, -1000.0]))",
                 "tf.math.abs(tf.constant([-128], tf.int8))",
                 "tf.math.negative(tf.constant([-128], tf.int8))",
                 "tf.math.log1p(tf.constant([-1.0, -2.0, 1e-10]))"]:
        add(C(f"unary.edge.{code}", code))

    # ------------------------------------------------------------------ binary math
    binary = ["add", "subtract", "multiply", "divide", "truediv", "pow", "maximum", "minimum",
              "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
              "logical_and", "logical_or", "floordiv", "floormod", "mod"]
    for op in binary:
        for dt in DTYPES:
            add(C(f"binary.{op}.{dt}", f"tf.math.{op}(t('{dt}'), t('{dt}', 'pos'))"))
        add(C(f"binary.{op}.broadcast", f"tf.math.{op}(t('float32', 'mat'), t('float32', 'row'))"))
        add(C(f"binary.{op}.broadcast_bool", f"tf.math.{op}(t('bool', 'mat'), t('bool', 'row'))"))
        add(C(f"binary.{op}.scalar", f"tf.math.{op}(t('float32', 'scalar'), t('float32', 'scalar'))"))
        add(C(f"binary.{op}.empty", f"tf.math.{op}(t('float32', 'empty'), t('float32', 'scalar'))"))
        add(C(f"binary.{op}.incompatible", f"tf.math.{op}(t('float32', 'mat'), t('float32'))"))
        add(C(f"binary.{op}.f32_i32", f"tf.math.{op}(t('float32'), t('int32'))"))
        add(C(f"binary.{op}.f32_f64", f"tf.math.{op}(t('float32'), t('float64'))"))
        add(C(f"binary.{op}.tensor_pyfloat", f"tf.math.{op}(t('float32'), 1.5)"))
        add(C(f"binary.{op}.pyfloat_tensor", f"tf.math.{op}(1.5, t('float32'))"))
        add(C(f"binary.{op}.int_tensor_pyfloat", f"tf.math.{op}(t('int32'), 1.5)"))
        add(C(f"binary.{op}.int_tensor_pyint", f"tf.math.{op}(t('int32'), 2)"))
        add(C(f"binary.{op}.python_both", f"tf.math.{op}(3, 2)"))
        add(C(f"binary.{op}.python_mixed", f"tf.math.{op}(3, 2.5)"))
        add(C(f"binary.{op}.lists", f"tf.math.{op}([1, 2], [3.5, 4])"))
        add(C(f"binary.{op}.numpy_f64_left", f"tf.math.{op}(np.array([1.0, 2.0]), t('float32', 'row')[:2])"))
        add(C(f"binary.{op}.f16_numpy_f64", f"tf.math.{op}(t('float16', 'row')[:2], np.array([1.0, 2.0]))"))
    for code in [
        "tf.constant([1, 2]) // 0", "tf.constant([1, 2]) % 0", "tf.constant([1.0, 2.0]) // 0.0",
        "tf.constant([1.0, 2.0]) % 0.0", "tf.constant([7, -7]) // 2", "tf.constant([7, -7]) % 3",
        "tf.constant([7, -7]) % -3", "tf.constant([7.5, -7.5]) % 2", "tf.constant([1.0]) // 0.1",
        "tf.constant(2) ** -1", "tf.constant(2.0) ** -1", "2 ** tf.constant(3)",
        "tf.constant([0, 2]) ** 0", "tf.constant([1, 2]) / 2", "tf.constant([1, 2]) / tf.constant([2, 2])",
        "tf.constant([1, 2], tf.int8) / 2", "tf.constant([1, 2], tf.uint8) / 2",
        "tf.constant([1, 2], tf.int64) / 2", "tf.constant([1, 2], tf.uint16) / 2",
        "tf.constant([1, 2], tf.uint32) / 2", "tf.constant([1, 2], tf.uint64) / 2",
        "tf.constant([1, 2], tf.int16) / 2", "tf.constant([1, 2]) / 0", "tf.constant([0.0]) / 0.0",
        "tf.constant([True]) / tf.constant([True])",
        "tf.constant([3], tf.uint8) - tf.constant([5], tf.uint8)",
        "tf.constant([2**31 - 1]) + 1", "tf.constant([1, 2], tf.int8) + 300",
        "tf.constant([1, 2], tf.uint8) + -1", "tf.constant([1, 2]) + 2**40",
        "tf.constant([1.0, 2.0], tf.float16) + 1e10", "tf.constant([1, 2]) + True",
        "tf.constant([True]) + True", "tf.constant([1.0]) + True", "tf.constant(1.5) + 2",
        "tf.constant([1, 2]) + 1.5", "tf.constant([1, 2]) * 1.0", "tf.constant([1.0, 2.0]) + np.float64(1)",
        "tf.constant([1, 2]) + np.int64(1)", "tf.constant([1, 2]) + np.int8(1)",
        "tf.constant([1.0, 2.0]) + np.array([1.0, 2.0])", "np.array([1.0, 2.0]) + tf.constant([1.0, 2.0])",
        "np.float64(2.5) * tf.constant([1.0, 2.0])", "np.float32(2.5) * tf.constant([1.0, 2.0])",
        "np.int32(2) * tf.constant([1, 2])", "np.int64(2) - tf.constant([1, 2])",
        "2 - tf.constant([1, 2])", "2.5 - tf.constant([1.0, 2.0])", "1 / tf.constant([1.0, 2.0])",
        "1 / tf.constant([1, 2])", "7 // tf.constant([2, 3])", "7 % tf.constant([2, 3])",
        "[1, 2] + tf.constant([1, 2])", "(1.5, 2) * tf.constant([1.0, 2.0])",
        "tf.constant([1.0, 2.0]) + [1, 2]", "tf.constant([1, 2]) + [1.5, 2]",
        "tf.constant([1.0, 2.0]) + 'a'", "tf.constant([1.0, 2.0]) + None", "tf.constant([1.0]) + object()",
        "tf.constant([1+1j]) + 1.5", "tf.constant([1+1j], tf.complex64) * 2",
        "tf.constant([1.0]) + 1j", "tf.constant([1]) + 1j",
        "tf.constant([1.0, 2.0]) @ tf.constant([[1.0], [2.0]])",
        "tf.constant([[1.0, 2.0]]) @ tf.constant([[1.0], [2.0]])", "[[1.0, 2.0]] @ tf.constant([[1.0], [2.0]])",
        "tf.constant([[1, 2]]) @ [[1], [2]]", "-tf.constant([1, 2], tf.uint8)",
        "-tf.constant([True])", "abs(tf.constant([-1, 2]))", "abs(tf.constant([1+1j]))",
        "~tf.constant([True, False])", "~tf.constant([1, 2])", "~tf.constant([1, 2], tf.uint8)",
        "~tf.constant([1.0])", "tf.constant([True]) & tf.constant([False])",
        "tf.constant([True]) | False", "tf.constant([True]) ^ True", "True ^ tf.constant([True])",
        "tf.constant([6]) & 3", "tf.constant([6]) | 3", "tf.constant([6]) ^ 3", "3 & tf.constant([6])",
        "tf.constant([1.0]) & tf.constant([1.0])", "tf.constant([True]) & 1",
        "tf.constant([1]) & True", "+tf.constant([1])",
        "tf.constant([1, 2]) == 1.5", "tf.constant([1, 2]) == 1", "tf.constant([1, 2]) == None",
        "tf.constant([1, 2]) != None", "tf.constant([1, 2]) == [1, 3]", "tf.constant([1, 2]) == tf.constant([1, 2, 3])",
        "tf.constant([1, 2]) != tf.constant([1, 2, 3])", "tf.constant([1, 2]) == 'a'",
        "tf.constant([1.0, 2.0]) == tf.constant([1, 2])", "tf.constant([1.0, 2.0]) != tf.constant([1, 2])",
        "tf.constant([1, 2]) != 1.5", "tf.constant([1, 2]) < 1.5", "tf.constant([1, 2]) < 2",
        "tf.constant([1.0, 2.0]) < 2", "2 < tf.constant([1, 2])", "1.5 > tf.constant([1.0, 2.0])",
        "tf.constant([1, 2]) < tf.constant([1.0, 2.0])", "tf.constant([True]) < tf.constant([False])",
        "tf.constant([1+1j]) < tf.constant([1+1j])", "tf.constant([1+1j]) == tf.constant([1+1j])",
        "tf.constant([True]) == True", "tf.constant([1, 2]) == np.int64(1)",
        "np.float64(1) == tf.constant([1.0, 2.0])", "tf.constant(1) == tf.constant(1)",
        "tf.constant([1, 2]) == tf.constant([[1], [2]])", "tf.constant([1, 2], tf.int64) == 2**40",
        "tf.constant([1, 2]) == 2**40",
        "tf.math.equal(tf.constant([1, 2]), tf.constant([1, 2, 3]))",
        "tf.math.equal(tf.constant([1, 2]), 1.5)", "tf.math.equal(tf.constant([1, 2]), None)",
        "tf.math.maximum(tf.constant([np.nan, 1.0]), tf.constant([1.0, np.nan]))",
        "tf.math.minimum(tf.constant([np.nan, 1.0]), 0.0)", "tf.math.pow(tf.constant([-8.0]), 1/3)",
        "tf.math.pow(tf.constant([0, 2]), tf.constant([0, 40]))",
        "tf.math.floordiv(tf.constant([-7.5, 7.5]), tf.constant([2.0, -2.0]))",
        "tf.math.floormod(tf.constant([-7, 7], tf.int8), tf.constant([2, -2], tf.int8))",
        "tf.math.floormod(tf.constant([-7, 7], tf.uint8), tf.constant([2, 3], tf.uint8))",
        "tf.math.floordiv(tf.constant([7], tf.uint8), tf.constant([2], tf.uint8))",
        "tf.math.truediv(tf.constant([1, 2]), tf.constant([1.0, 2.0]))",
        "tf.math.truediv(tf.constant([True]), tf.constant([True]))",
        "tf.math.divide(1, 2)", "tf.math.truediv(1, 2)", "tf.math.divide(tf.constant([1.0]), 2)",
        "tf.math.add(tf.constant([1, 2], tf.uint8), 256)", "tf.math.add(tf.constant([1, 2], tf.uint8), 255)",
        "tf.math.add(tf.constant([1, 2], tf.int64), 2**40)", "tf.math.add(tf.constant([1, 2]), tf.constant([1, 2], tf.int64))",
        "tf.math.multiply(tf.constant([1.5]), np.float16(2))",
        "tf.math.add(tf.constant([1.0]), np.array(2))", "tf.math.add(tf.constant([1]), np.array(2.0))",
        "tf.math.logical_and(tf.constant([True]), 1)", "tf.math.logical_and([True, False], [True, True])",
        "tf.math.logical_or(tf.constant([1]), tf.constant([0]))",
        "tf.math.logical_xor(tf.constant([True, False]), tf.constant([True, True]))",
    ]:
        add(C(f"operator.{code}", code))

    # ------------------------------------------------------------------ cast
    for src in DTYPES:
        for dst in DTYPES:
            add(C(f"cast.{src}.{dst}", f"tf.cast(t('{src}', 'cast'), tf.{dst})"))
    for code in ["tf.cast(1.7, tf.int32)", "tf.cast([1, 2], tf.float16)", "tf.cast(-1.5, tf.uint8)",
                 "tf.cast(t('float32'), 'int64')", "tf.cast(t('float32'), np.int64)",
                 "tf.cast(t('float32'), tf.float32)", "tf.cast(np.array([1.5]), tf.int32)",
                 "tf.cast(tf.constant([np.nan, np.inf]), tf.bool)",
                 "tf.cast(tf.constant([0.5j, 0]), tf.bool)", "tf.cast(tf.constant([1e10]), tf.float16)",
                 "tf.cast(True, tf.float32)", "tf.cast(t('float32'), tf.string)",
                 "tf.cast('1', tf.float32)", "tf.cast(None, tf.float32)"]:
        add(C(f"cast.edge.{code}", code))

    # ------------------------------------------------------------------ reductions
    reductions = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod",
                  "reduce_any", "reduce_all", "reduce_logsumexp"]
    for op in reductions:
        for dt in DTYPES:
            add(C(f"reduce.{op}.{dt}", f"tf.math.{op}(t('{dt}', 'mat'))"))
            add(C(f"reduce.{op}.{dt}.axis0", f"tf.math.{op}(t('{dt}', 'mat'), axis=0)"))
        for axis in ["0", "-1", "1", "[0, 1]", "(0,)", "[-1, 0]", "2", "-3", "[0, 0]", "1.5",
                     "[]", "tf.constant(1)", "tf.constant([0, 1])", "np.int64(1)", "None"]:
            dt = "bool" if op in ("reduce_any", "reduce_all") else "float32"
            add(C(f"reduce.{op}.axis={axis}", f"tf.math.{op}(t('{dt}', 'mat'), axis={axis})"))
            add(C(f"reduce.{op}.keepdims.axis={axis}",
                  f"tf.math.{op}(t('{dt}', 'mat'), axis={axis}, keepdims=True)"))
        for dt in ("float32", "int32", "bool"):
            add(C(f"reduce.{op}.{dt}.scalar", f"tf.math.{op}(t('{dt}', 'scalar'))"))
            add(C(f"reduce.{op}.{dt}.scalar_axis0", f"tf.math.{op}(t('{dt}', 'scalar'), axis=0)"))
            add(C(f"reduce.{op}.{dt}.empty", f"tf.math.{op}(t('{dt}', 'empty'))"))
            add(C(f"reduce.{op}.{dt}.empty2d_axis1",
                  f"tf.math.{op}(tf.zeros([2, 0], tf.{dt}), axis=1)"))
        add(C(f"reduce.{op}.list_int", f"tf.math.{op}([1, 0, 3])"))
        add(C(f"reduce.{op}.list_float", f"tf.math.{op}([1.5, 0.0, 3.0])"))
        add(C(f"reduce.{op}.list_bool", f"tf.math.{op}([True, False])"))
        add(C(f"reduce.{op}.keepdims_none", f"tf.math.{op}(t('float32', 'mat'), keepdims=True)"))
        add(C(f"reduce.{op}.toplevel", f"tf.{op}(t('float32', 'mat')) if hasattr(tf, '{op}') else 'absent'"))
    for code in ["tf.reduce_mean(tf.constant([1, 2]))", "tf.reduce_mean(tf.constant([-1, -2]))",
                 "tf.reduce_mean(tf.constant([100, 100], tf.int8))",
                 "tf.reduce_sum(tf.constant([100, 100], tf.int8))",
                 "tf.reduce_max(tf.constant([np.nan, 1.0]))", "tf.reduce_min(tf.constant([1.0, np.nan]))",
                 "tf.reduce_max(tf.zeros([0], tf.uint8))", "tf.reduce_min(tf.zeros([0], tf.int8))",
                 "tf.reduce_prod(tf.zeros([0]))", "tf.reduce_mean(tf.zeros([0], tf.int32))",
                 "tf.math.reduce_logsumexp(tf.constant([-np.inf, -np.inf]))",
                 "tf.math.reduce_logsumexp(tf.constant([np.inf, 1.0]))",
                 "tf.reduce_sum(t('float32', 'mat'), axis=[0, 1, 2])",
                 "tf.reduce_sum(t('float32', 'mat'), 1, True)", "tf.reduce_sum(None)",
                 "tf.reduce_sum(t('float32', 'mat'), axis=tf.constant(1.0))"]:
        add(C(f"reduce.edge.{code}", code))

    # ------------------------------------------------------------------ argmax / argmin
    for op in ("argmax", "argmin"):
        for dt in DTYPES:
            add(C(f"arg.{op}.{dt}", f"tf.math.{op}(t('{dt}'))"))
        for code in [f"tf.{op}(t('float32', 'scalar'))", f"tf.{op}(t('float32', 'mat'))",
                     f"tf.{op}(t('float32', 'mat'), axis=-1)", f"tf.{op}(t('float32', 'mat'), 1)",
                     f"tf.{op}(t('float32', 'mat'), axis=2)", f"tf.{op}(t('float32', 'mat'), axis=[1])",
                     f"tf.{op}(t('float32', 'mat'), axis=tf.constant(1))",
                     f"tf.{op}(t('float32', 'mat'), output_type=tf.int32)",
                     f"tf.{op}(t('float32', 'mat'), output_type=tf.float32)",
                     f"tf.{op}(t('float32', 'mat'), output_type=tf.int16)",
                     f"tf.{op}(t('float32', 'empty'))", f"tf.{op}(tf.zeros([2, 0]), axis=1)",
                     f"tf.{op}(tf.zeros([2, 0]), axis=0)", f"tf.{op}([3, 1, 3])",
                     f"tf.{op}([1.0, np.nan, 3.0])", f"tf.{op}([True, False, True])",
                     f"tf.{op}(t('float32', 'scalar'), axis=0)"]:
            add(C(f"arg.{code}", code))

    # ------------------------------------------------------------------ cumsum
    for dt in DTYPES:
        add(C(f"cumsum.{dt}", f"tf.math.cumsum(t('{dt}'))"))
    for code in ["tf.cumsum(t('float32', 'scalar'))", "tf.cumsum(t('float32', 'scalar'), axis=-1)",
                 "tf.cumsum(t('float32', 'scalar'), axis=1)", "tf.cumsum(t('float32', 'empty'))",
                 "tf.cumsum(t('float32', 'mat'), axis=1)", "tf.cumsum(t('float32', 'mat'), axis=-1)",
                 "tf.cumsum(t('float32', 'mat'), axis=2)", "tf.cumsum(t('float32', 'mat'), exclusive=True)",
                 "tf.cumsum(t('float32', 'mat'), axis=1, reverse=True)",
                 "tf.cumsum(t('float32', 'mat'), axis=1, exclusive=True, reverse=True)",
                 "tf.cumsum([1, 2, 3])", "tf.cumsum(t('float32', 'mat'), axis=tf.constant(1))",
                 "tf.cumsum(t('float32', 'mat'), axis=1.0)", "tf.cumsum(t('float32', 'mat'), axis=[1])",
                 "tf.cumsum(tf.zeros([2, 0]), axis=1, exclusive=True)"]:
        add(C(f"cumsum.{code}", code))

    # ------------------------------------------------------------------ where / clip
    for dt in DTYPES:
        add(C(f"where.{dt}", f"tf.where(t('bool'), t('{dt}'), t('{dt}', 'pos'))"))
        add(C(f"where.one_arg.{dt}", f"tf.where(t('{dt}'))"))
        add(C(f"clip.{dt}", f"tf.clip_by_value(t('{dt}'), t('{dt}', 'scalar'), t('{dt}', 'pos')[1])"))
    for code in ["tf.where(t('bool', 'mat'), t('float32', 'row'), 0.0)",
                 "tf.where(t('bool', 'row'), t('float32', 'mat'), t('float32', 'scalar'))",
                 "tf.where(t('bool', 'mat'), 1, 2)", "tf.where(t('bool', 'mat'), 1.0, 2)",
                 "tf.where(t('bool', 'mat'), t('int32', 'mat'), 2.5)",
                 "tf.where(t('bool'), t('float32'), t('int32'))", "tf.where(t('int32'), 1, 2)",
                 "tf.where(t('bool'), t('float32', 'mat'), 0.0)", "tf.where(t('bool'), t('float32'))",
                 "tf.where(t('bool', 'scalar'))", "tf.where(t('bool', 'empty'))",
                 "tf.where([True, False], [1, 2], [3, 4])", "tf.where(True, 1, 2)",
                 "tf.where(tf.constant([np.nan, 0.0]))", "tf.where(t('float32', 'cube'))",
                 "tf.clip_by_value(t('float32'), 0.0, 1.0)", "tf.clip_by_value(t('int32'), 0, 1)",
                 "tf.clip_by_value(t('int32'), 0.0, 1.0)", "tf.clip_by_value(t('float32'), 0, 1)",
                 "tf.clip_by_value(t('float32', 'mat'), t('float32', 'row'), 10.0)",
                 "tf.clip_by_value(t('float32', 'row'), t('float32', 'mat'), 10.0)",
                 "tf.clip_by_value(t('float32', 'scalar'), t('float32'), 10.0)",
                 "tf.clip_by_value(t('float32'), 2.0, 1.0)", "tf.clip_by_value([1, 5], 2, 3)",
                 "tf.clip_by_value(t('float32'), t('float64', 'scalar'), 1.0)",
                 "tf.clip_by_value(t('float32', 'empty'), 0.0, 1.0)",
                 "tf.clip_by_value(t('float32', 'mat'), [0.0, 0.0], 1.0)",
                 "tf.clip_by_value(tf.constant([np.nan, 1.0]), 0.0, 0.5)"]:
        add(C(f"where_clip.{code}", code))

    return out


def build_cases():
    """Every case: math here, array/nn/indexing/tensor-method cases in tf_cases_arrays."""
    import tf_cases_arrays  # noqa: PLC0415 - it imports Case from this module

    return _cases() + tf_cases_arrays.array_cases() + tf_cases_arrays.more_cases()
