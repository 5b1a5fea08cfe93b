"""Sizes known only when a traced function runs: ops whose shape is an input (range, zeros,
ones, fill, reshape, broadcast_to, scatter_nd, random draws, `tf.shape(x)[0]` as a size), the
static shapes inference keeps (goldens from TensorFlow 2.21's traced functions), and every
gradient rule traced with None dimensions against eager execution, over several shapes of one
trace."""

import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import eager as tf
from eager.errors import InvalidArgumentError

S = tf.TensorSpec


def _traced_once(fn, signature):
    return tf.function(fn, input_signature=signature)


# -- static shapes: what TensorFlow 2.21 infers for the same traces ------------------------------

# (name, function, input signature, the output's static shape as TensorFlow's trace gives it)
STATIC_SHAPES = [
    ("range(n)", lambda x: tf.range(tf.shape(x)[0]), [S([None, 3])], [None]),
    ("range(known dim)", lambda x: tf.range(tf.shape(x)[1]), [S([None, 5])], [5]),
    ("range(0, n, 2)", lambda x: tf.range(0, tf.shape(x)[0], 2), [S([None, 3])], [None]),
    ("range(float n)", lambda x: tf.range(tf.cast(tf.shape(x)[0], tf.float32)), [S([None, 3])],
     [None]),
    ("range(arg)", lambda n: tf.range(n), [S([], tf.int32)], [None]),
    ("zeros([n])", lambda x: tf.zeros([tf.shape(x)[0]]), [S([None, 3])], [None]),
    ("zeros([n, 3])", lambda x: tf.zeros([tf.shape(x)[0], 3]), [S([None, 3])], [None, 3]),
    ("zeros(shape(x))", lambda x: tf.zeros(tf.shape(x)), [S([None, 3])], [None, 3]),
    ("zeros(arg)", lambda n: tf.zeros(n), [S([], tf.int32)], [None]),
    ("zeros([arg, 2])", lambda n: tf.zeros([n, 2]), [S([], tf.int32)], [None, 2]),
    ("ones(shape(x))", lambda x: tf.ones(tf.shape(x), tf.int32), [S([None, 3])], [None, 3]),
    ("fill([n, 3])", lambda x: tf.fill([tf.shape(x)[0], 3], 2.0), [S([None, 3])], [None, 3]),
    ("reshape [n, -1]", lambda x: tf.reshape(x, [tf.shape(x)[0], -1]), [S([None, 28, 28])],
     [None, None]),
    ("reshape [-1, 784]", lambda x: tf.reshape(x, [-1, 784]), [S([None, 28, 28])],
     [None, 784]),
    ("reshape shape(x)", lambda x: tf.reshape(x, tf.shape(x)), [S([None, 28, 28])],
     [None, 28, 28]),
    ("reshape [n, 2, -1]", lambda x: tf.reshape(x, [tf.shape(x)[0], 2, -1]),
     [S([None, 28, 28])], [None, 2, None]),
    ("reshape [-1, n]", lambda x: tf.reshape(x, [-1, tf.shape(x)[0]]), [S([None, 4])],
     [None, None]),
    ("reshape [2n, m // 2]", lambda x: tf.reshape(x, [tf.shape(x)[0] * 2, tf.shape(x)[1] // 2]),
     [S([None, None])], [None, None]),
    ("n * 2", lambda x: tf.shape(x)[0] * 2, [S([None, 3])], []),
    ("broadcast_to([n, 3])", lambda x: tf.broadcast_to(tf.constant(1.0), [tf.shape(x)[0], 3]),
     [S([None, 3])], [None, 3]),
    ("mean over None", lambda x: tf.reduce_mean(x, 0), [S([None, 3])], [3]),
    ("concat 0", lambda x, y: tf.concat([x, y], 0), [S([None, 3]), S([None, 3])], [None, 3]),
    ("concat 1", lambda x, y: tf.concat([x, y], 1), [S([None, 3]), S([None, 2])], [None, 5]),
    ("random.uniform(shape(x))", lambda x: tf.random.uniform(tf.shape(x)), [S([None, 3])],
     [None, 3]),
    ("stack([n, 3])", lambda x: tf.stack([tf.shape(x)[0], 3]), [S([None, 3])], [2]),
    ("one_hot", lambda x: tf.one_hot(x, 10), [S([None], tf.int32)], [None, 10]),
    ("tile by a size", lambda x: tf.tile(x, [tf.shape(x)[0], 1]), [S([None, 3])], [None, 3]),
    ("tile by an argument", lambda x, n: tf.tile(x, [n, 2]), [S([None, 3]), S([], tf.int32)],
     [None, 6]),
    ("pad to a length", lambda x, n: tf.pad(x, [[0, n - tf.shape(x)[0]], [1, 0]]),
     [S([None, 3]), S([], tf.int32)], [None, 4]),
    ("pad both by an argument", lambda x, n: tf.pad(x, [[n, 0], [1, n]]),
     [S([None, 3]), S([], tf.int32)], [None, None]),
    ("sequence_mask", lambda lengths: tf.sequence_mask(lengths), [S([None], tf.int32)],
     [None, None]),
    ("sequence_mask(5)", lambda lengths: tf.sequence_mask(lengths, 5), [S([None], tf.int32)],
     [None, 5]),
    ("eye(n)", lambda x: tf.eye(tf.shape(x)[0]), [S([None, 3])], [None, None]),
    ("eye with a batch", lambda x: tf.eye(tf.shape(x)[0], 2, batch_shape=[tf.shape(x)[1]]),
     [S([None, None])], [None, None, 2]),
    ("eye with a known batch", lambda x: tf.eye(tf.shape(x)[0], 2, batch_shape=[4]),
     [S([None, None])], [4, None, 2]),
    ("scatter_nd into shape(x)", lambda x: tf.scatter_nd([[0]], x[:1], tf.shape(x)),
     [S([None, 3])], [None, 3]),
]


@pytest.mark.parametrize("name,fn,signature,expected", STATIC_SHAPES,
                         ids=[c[0] for c in STATIC_SHAPES])
def test_static_shapes_keep_what_the_trace_knows_as_tensorflow_does(name, fn, signature,
                                                                    expected):
    concrete = _traced_once(fn, signature).get_concrete_function()
    assert concrete.outputs[0].shape.as_list() == expected
    assert concrete.structured_outputs.shape.as_list() == expected


def test_split_of_a_known_axis_beside_a_none_dimension():
    # TensorFlow: [None, 2] twice, and [1, 4], [2, 4] for sizes along the None axis.
    concrete = _traced_once(lambda x: tf.split(x, 2, axis=1), [S([None, 4])])
    assert [o.shape.as_list() for o in concrete.get_concrete_function().outputs] == \
        [[None, 2], [None, 2]]
    concrete = _traced_once(lambda x: tf.split(x, [1, 2], axis=0), [S([None, 4])])
    assert [o.shape.as_list() for o in concrete.get_concrete_function().outputs] == \
        [[1, 4], [2, 4]]


def test_the_shape_is_an_input_of_the_op_in_the_graph():
    concrete = _traced_once(lambda x: (tf.zeros([tf.shape(x)[0], 3]),
                                       tf.reshape(x, [tf.shape(x)[0], -1]),
                                       tf.range(tf.shape(x)[0])),
                            [S([None, 3])]).get_concrete_function()
    ops = {op.type: op for op in concrete.graph.get_operations()}
    assert len(ops["Fill"].inputs) == 2 and ops["Fill"].inputs[0].dtype == tf.int32
    assert len(ops["Reshape"].inputs) == 2
    assert len(ops["Range"].inputs) == 3


# -- values: one trace, several shapes, as eager execution gives them ----------------------------

VALUE_CASES = [
    ("range", lambda x: tf.range(tf.shape(x)[0])),
    ("range with a step", lambda x: tf.range(1, tf.shape(x)[0] * 3, 2)),
    ("float range", lambda x: tf.range(tf.cast(tf.shape(x)[0], tf.float32), delta=0.5)),
    ("range downwards", lambda x: tf.range(tf.shape(x)[0], -1, -1, dtype=tf.int64)),
    ("zeros", lambda x: tf.zeros([tf.shape(x)[0], 2], tf.int64)),
    ("ones like shape", lambda x: tf.ones(tf.shape(x), tf.bool)),
    ("zeros of a scalar size", lambda x: tf.zeros(tf.shape(x)[0])),
    ("fill", lambda x: tf.fill([2, tf.shape(x)[0]], x[0, 0])),
    ("reshape", lambda x: tf.reshape(x, [tf.shape(x)[0], 3, -1])),
    ("reshape swapped", lambda x: tf.reshape(x, [tf.shape(x)[1], tf.shape(x)[0]])),
    ("broadcast_to", lambda x: tf.broadcast_to(x[:1], tf.shape(x))),
    ("broadcast_to new axis", lambda x: tf.broadcast_to(x[0], [tf.shape(x)[0], 2, 6])),
    ("scatter_nd", lambda x: tf.scatter_nd([[0], [0]], tf.concat([x[:1], x[:1]], 0),
                                           tf.shape(x))),
    ("size as a count", lambda x: tf.reduce_sum(x) / tf.cast(tf.shape(x)[0], tf.float32)),
    ("index by a size", lambda x: x[tf.shape(x)[0] - 1]),
    ("slice by a size", lambda x: x[tf.shape(x)[0] // 2:]),
    ("a draw of the shape", lambda x: tf.random.uniform(tf.shape(x)) * 0),
    ("tile", lambda x: tf.tile(x[:1], [tf.shape(x)[0], 2])),
    ("pad to a length", lambda x: tf.pad(x, [[0, 6 - tf.shape(x)[0]], [1, 0]],
                                         constant_values=-1.0)),
    ("eye", lambda x: tf.eye(tf.shape(x)[0], 3, batch_shape=[2], dtype=tf.int32)),
    ("sequence_mask", lambda x: tf.sequence_mask(tf.range(tf.shape(x)[0]))),
]


@pytest.mark.parametrize("name,fn", VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_run_time_sizes_give_eager_values_for_every_shape(name, fn):
    traced = _traced_once(fn, [S([None, None])])
    for n in (1, 2, 5, 4):
        x = tf.constant(np.arange(n * 6, dtype=np.float32).reshape(n, 6) - 3)
        want, got = fn(x), traced(x)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert traced.experimental_get_tracing_count() == 1


# TensorFlow 2.21's messages for the same failures inside a tf.function.
RUN_TIME_ERRORS = [
    (lambda x, n: tf.reshape(x, [n, -1]), 4,
     "Input to reshape is a tensor with 6 values, but the requested shape requires a multiple "
     "of 4"),
    (lambda x, n: tf.reshape(x, [n, 2]), 4,
     "Input to reshape is a tensor with 6 values, but the requested shape has 8"),
    (lambda x, n: tf.fill([n, 2], 1.0), -1, "Dimension -1 must be >= 0"),
    (lambda x, n: tf.zeros([n, 2]), -1, "Dimension -1 must be >= 0"),
    (lambda x, n: tf.range(0, 5, n), 0, "Requires delta != 0: 0"),
    (lambda x, n: tf.range(n, 0, 1), 3, "Requires start <= limit when delta > 0: 3/0"),
    (lambda x, n: tf.broadcast_to(x, [n, 3]), 4, "broadcast tensor of shape \\[2,3\\]"),
]


@pytest.mark.parametrize("fn,n,message", RUN_TIME_ERRORS)
def test_bad_run_time_sizes_raise_the_ops_error_when_the_function_runs(fn, n, message):
    traced = _traced_once(fn, [S([None, 3]), S([], tf.int32)])
    with pytest.raises(InvalidArgumentError, match=message):
        traced(tf.ones([2, 3]), tf.constant(n)).numpy()  # (a GPU's kernels fail later)


def test_a_shape_of_the_wrong_dtype_is_a_type_error_naming_the_op():
    with pytest.raises(TypeError, match="Reshape: shape must be an int32 or int64 tensor"):
        _traced_once(lambda x: tf.reshape(x, tf.cast(tf.shape(x), tf.float32)),
                     [S([None, 3])]).get_concrete_function()
    with pytest.raises(TypeError, match="'Pack' Op have types \\[int32, int64\\]"):
        _traced_once(lambda x: tf.zeros([tf.shape(x)[0], tf.shape(x, tf.int64)[1]]),
                     [S([None, 3])]).get_concrete_function()


# -- gradients: every rule with None dimensions, against eager execution -------------------------

def _sum(t):
    return tf.reduce_sum(t)


_W = np.linspace(-1, 1, 12).reshape(3, 4)

# (name, f(*xs) -> scalar, the inputs' shapes (a leading 0 is the varying size))
GRADIENT_CASES = [
    ("add, both varying", lambda x, b: _sum((x + b) ** 2), [(0, 3), (0, 3)]),
    ("add a bias", lambda x: _sum((x + tf.constant([1., 2, 3], tf.float64)) ** 2), [(0, 3)]),
    ("add a column", lambda x, y: _sum((x + y[:, :1]) ** 2), [(0, 3), (0, 3)]),
    ("mul by a column", lambda x, y: _sum(x * y), [(0, 3), (0, 1)]),
    ("sub", lambda x, y: _sum((x - y) ** 2), [(0, 3), (0, 1)]),
    ("div", lambda x, y: _sum(x / (y * y + 1)), [(0, 3), (0, 3)]),
    ("pow", lambda x: _sum(tf.pow(x * x + 1, tf.constant([1.0, 2.0, 0.5], tf.float64))),
     [(0, 3)]),
    ("maximum", lambda x, y: _sum(tf.maximum(x, y) ** 2), [(0, 3), (0, 1)]),
    ("where", lambda x, y: _sum(tf.where(x > 0, x, y) ** 2), [(0, 3), (0, 1)]),
    ("clip", lambda x: _sum(tf.clip_by_value(x, -0.5, 0.5) ** 2), [(0, 3)]),
    ("mean of all", lambda x: tf.reduce_mean(x * x), [(0, 3)]),
    ("mean over None", lambda x: _sum(tf.reduce_mean(x * x, 0) ** 2), [(0, 3)]),
    ("mean over known", lambda x: _sum(tf.reduce_mean(x * x, 1) ** 2), [(0, 3)]),
    ("mean keepdims", lambda x: _sum(tf.reduce_mean(x * x, 0, keepdims=True) * x), [(0, 3)]),
    ("sum over two axes", lambda x: _sum(tf.reduce_sum(x, [0, 2]) ** 2), [(0, 3, 2)]),
    ("max", lambda x: _sum(tf.reduce_max(x, 1) ** 2), [(0, 3)]),
    ("logsumexp", lambda x: _sum(tf.reduce_logsumexp(x, 0)), [(0, 3)]),
    ("prod", lambda x: _sum(tf.reduce_prod(x, 0)), [(0, 3)]),
    ("matmul", lambda x: _sum(tf.matmul(x, tf.constant(_W)) ** 2), [(0, 3)]),
    ("matmul x^T x", lambda x: _sum(tf.matmul(x, x, transpose_a=True)), [(0, 3)]),
    ("batch matmul", lambda x: _sum(tf.matmul(x, tf.constant(_W)) ** 2), [(0, 2, 3)]),
    ("einsum", lambda x: _sum(tf.einsum("ij,jk->ik", x, tf.constant(_W)) ** 2), [(0, 3)]),
    ("bias_add", lambda x: _sum(tf.nn.bias_add(x, tf.constant([1., 2, 3], tf.float64)) ** 2),
     [(0, 3)]),
    ("softmax cross entropy",
     lambda x, z: _sum(tf.nn.softmax_cross_entropy_with_logits(tf.nn.softmax(z), x)),
     [(0, 4), (0, 4)]),
    ("sparse softmax cross entropy",
     lambda x: _sum(tf.nn.sparse_softmax_cross_entropy_with_logits(
         tf.zeros([tf.shape(x)[0]], tf.int32), x)), [(0, 4)]),
    ("sigmoid cross entropy",
     lambda x: _sum(tf.nn.sigmoid_cross_entropy_with_logits(tf.ones_like(x), x)), [(0, 3)]),
    ("softmax", lambda x: _sum(tf.nn.softmax(x) ** 2), [(0, 4)]),
    ("log_softmax", lambda x: _sum(tf.nn.log_softmax(x)[:, 0]), [(0, 3)]),
    ("l2_normalize", lambda x: _sum(tf.math.l2_normalize(x, 1)), [(0, 3)]),
    ("moments", lambda x: _sum(tf.nn.moments(x, [0])[1]), [(0, 3)]),
    ("batch_normalization",
     lambda x: _sum(tf.nn.batch_normalization(x, *tf.nn.moments(x, [0]), None, None, 1e-3) ** 2),
     [(0, 3)]),
    ("reshape to -1", lambda x: _sum(tf.reshape(x, [-1]) ** 2), [(0, 3)]),
    ("reshape by sizes", lambda x: _sum(tf.reshape(x, [tf.shape(x)[0], 2, -1]) ** 2), [(0, 6)]),
    ("reshape swapped",
     lambda x: _sum(tf.reshape(x, [tf.shape(x)[1], tf.shape(x)[0]]) * tf.reshape(
         tf.range(tf.size(x), dtype=tf.float64), [tf.shape(x)[1], -1])), [(0, 3)]),
    ("expand and squeeze", lambda x: _sum(tf.squeeze(tf.expand_dims(x, 1), 1) ** 2), [(0, 3)]),
    ("transpose", lambda x: _sum(tf.transpose(x) ** 3), [(0, 3)]),
    ("concat along None", lambda x, y: _sum(tf.concat([x, y], 0) ** 3), [(0, 3), (0, 3)]),
    ("concat along known", lambda x, y: _sum(tf.concat([x, y], 1) ** 3), [(0, 3), (0, 2)]),
    ("concat with a constant", lambda x: _sum(tf.concat([x, tf.ones([2, 3], tf.float64)], 0) ** 3),
     [(0, 3)]),
    ("split", lambda x: _sum(tf.split(x, 3, axis=1)[1] ** 3), [(0, 3)]),
    ("stack of unstack", lambda x: _sum(tf.stack(tf.unstack(x, axis=1), 0) ** 3), [(0, 3)]),
    ("strided slice", lambda x: _sum(x[:, 1:] ** 3), [(0, 3)]),
    ("strided slice of None", lambda x: _sum(x[1:, ::-2] ** 3), [(0, 3)]),
    ("index", lambda x: _sum(x[0] ** 3), [(0, 3)]),
    ("index from the end", lambda x: _sum(x[-1, ::2] ** 3), [(0, 3)]),
    ("slice", lambda x: _sum(tf.slice(x, [0, 1], [-1, 2]) ** 3), [(0, 3)]),
    ("index by a size", lambda x: _sum(x[tf.shape(x)[0] - 1] ** 3), [(0, 3)]),
    ("slice by a size", lambda x: _sum(x[: tf.shape(x)[0] // 2 + 1] ** 3), [(0, 3)]),
    ("pad", lambda x: _sum(tf.pad(x, [[1, 2], [0, 1]]) ** 3), [(0, 3)]),
    ("tile", lambda x: _sum(tf.tile(x, [2, 3]) ** 3), [(0, 3)]),
    ("tile by a size", lambda x: _sum(tf.tile(x, [1, tf.shape(x)[0]]) ** 3), [(0, 3)]),
    ("pad to a length", lambda x: _sum(tf.pad(x, [[0, 6 - tf.shape(x)[0]], [2, 1]]) ** 3),
     [(0, 3)]),
    ("broadcast_to a run-time shape", lambda x: _sum(tf.broadcast_to(x[:, :1], tf.shape(x)) * x),
     [(0, 3)]),
    ("gather rows", lambda x: _sum(tf.gather(x, [0, 0, 0]) ** 3), [(0, 3)]),
    ("gather columns", lambda x: _sum(tf.gather(x, [1, 1, 0], axis=1) ** 3), [(0, 3)]),
    ("gather with 2-d indices", lambda x: _sum(tf.gather(x, [[0], [0]]) ** 3), [(0, 3)]),
    ("gather_nd", lambda x: _sum(tf.gather_nd(x, [[0, 1], [0, 2]]) ** 3), [(0, 3)]),
    ("fill of the shape", lambda x: _sum(tf.fill(tf.shape(x), x[0, 0]) * x), [(0, 3)]),
    ("zeros of the shape", lambda x: _sum((tf.zeros(tf.shape(x), tf.float64) + x) ** 2),
     [(0, 3)]),
    ("range as data", lambda x: _sum(tf.cast(tf.range(tf.shape(x)[0]), tf.float64)[:, None] * x),
     [(0, 3)]),
    ("cumsum", lambda x: _sum(tf.cumsum(x, 0) ** 2), [(0, 3)]),
    ("norm", lambda x: _sum(tf.norm(x, axis=1)), [(0, 3)]),
    ("conv2d", lambda x: _sum(tf.nn.conv2d(x, tf.constant(np.ones((2, 2, 1, 2))), 1, "SAME") ** 2),
     [(0, 4, 4, 1)]),
    ("max_pool", lambda x: _sum(tf.nn.max_pool2d(x, 2, 2, "VALID") ** 2), [(0, 4, 4, 1)]),
    ("avg_pool", lambda x: _sum(tf.nn.avg_pool2d(x, 2, 2, "VALID") ** 2), [(0, 4, 4, 1)]),
    ("squared_difference", lambda x: tf.reduce_mean(tf.math.squared_difference(x, 1.0)),
     [(0, 3)]),
    ("prod over two axes", lambda x: _sum(tf.reduce_prod(x, [0, 2])) + tf.reduce_prod(x),
     [(0, 3, 2)]),
    ("top_k", lambda x: _sum(tf.math.top_k(x, 2).values ** 2), [(0, 4)]),
    ("sort", lambda x: _sum(tf.sort(x, axis=0) ** 3), [(0, 3)]),
    ("unsorted_segment_sum",
     lambda x: _sum(tf.math.unsorted_segment_sum(x, tf.zeros([tf.shape(x)[0]], tf.int32), 2) ** 2),
     [(0, 3)]),
    ("mirror pad", lambda x: _sum(tf.pad(x, [[1, 1], [1, 1]], "SYMMETRIC") ** 3), [(0, 3)]),
    ("strided conv2d", lambda x: _sum(tf.nn.conv2d(x, tf.constant(np.ones((3, 3, 2, 2))), 2,
                                                   "VALID") ** 2), [(0, 5, 5, 2)]),
    ("max_pool SAME", lambda x: _sum(tf.nn.max_pool2d(x, 3, 2, "SAME") ** 2), [(0, 5, 5, 1)]),
    ("matmul of two varying", lambda x, y: _sum(tf.matmul(x, y, transpose_b=True)),
     [(0, 3), (0, 3)]),
    ("mean keepdims beside another", lambda x, y: _sum(tf.reduce_mean(x, 1, keepdims=True) * y),
     [(0, 3), (0, 4)]),
]

# Cases that need sizes a fully unknown shape does not give (TensorFlow cannot either: unstack
# needs its count).
_NEED_KNOWN_INNER_DIMS = {"stack of unstack"}


def _gradients(fn):
    def run(*xs):
        with tf.GradientTape() as tape:
            for x in xs:
                tape.watch(x)
            y = fn(*xs)
        return y, [tf.convert_to_tensor(g) for g in tape.gradient(y, list(xs))]
    return run


def _signature(shapes, all_unknown):
    return [S([None] * len(s) if all_unknown else [None, *s[1:]], tf.float64) for s in shapes]


def _check_gradients(fn, shapes, all_unknown, sizes=(1, 3, 5)):
    run = _gradients(fn)
    arity = {1: lambda a: run(a), 2: lambda a, b: run(a, b)}[len(shapes)]
    traced = _traced_once(arity, _signature(shapes, all_unknown))
    rng = np.random.default_rng(len(shapes))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in sizes:
            xs = [tf.constant(rng.normal(size=(n, *s[1:]))) for s in shapes]
            (want, want_grads), (got, got_grads) = run(*xs), traced(*xs)
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10)
            for g, w in zip(got_grads, want_grads):
                assert g.shape == w.shape
                np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-9, atol=1e-12)
    assert traced.experimental_get_tracing_count() == 1


@pytest.mark.parametrize("name,fn,shapes", GRADIENT_CASES, ids=[c[0] for c in GRADIENT_CASES])
def test_gradients_with_a_none_batch_dimension_match_eager(name, fn, shapes):
    _check_gradients(fn, shapes, all_unknown=False)


@pytest.mark.parametrize("name,fn,shapes",
                         [c for c in GRADIENT_CASES if c[0] not in _NEED_KNOWN_INNER_DIMS],
                         ids=[c[0] for c in GRADIENT_CASES if c[0] not in _NEED_KNOWN_INNER_DIMS])
def test_gradients_with_every_dimension_unknown_match_eager(name, fn, shapes):
    _check_gradients(fn, shapes, all_unknown=True)


def test_image_gradients_with_unknown_image_sizes_read_them_at_run_time():
    run = _gradients(lambda x: _sum(tf.nn.avg_pool2d(x, 2, 2, "VALID") ** 2) + _sum(
        tf.nn.conv2d(x, tf.ones([2, 2, 1, 1], tf.float64), 1, "SAME") ** 2))
    traced = _traced_once(lambda x: run(x), [S([None, None, None, 1], tf.float64)])
    for shape in ((1, 4, 4, 1), (2, 6, 2, 1), (3, 2, 8, 1)):
        x = tf.constant(np.random.default_rng(3).normal(size=shape))
        (want, (want_grad,)), (got, (got_grad,)) = run(x), traced(x)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
        np.testing.assert_allclose(got_grad.numpy(), want_grad.numpy(), rtol=1e-12)
    assert traced.experimental_get_tracing_count() == 1


def test_batch_jacobian_with_a_none_batch_dimension_matches_eager():
    def jacobian(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            z = tf.stack([tf.reduce_sum(x * x, 1), tf.reduce_sum(tf.sin(x), 1)], 1)
        return tape.batch_jacobian(z, x)

    traced = _traced_once(jacobian, [S([None, 3], tf.float64)])
    for n in (1, 2, 4):
        x = tf.constant(np.random.default_rng(n).normal(size=(n, 3)))
        np.testing.assert_allclose(traced(x).numpy(), jacobian(x).numpy(), rtol=1e-12)
    assert traced.get_concrete_function().outputs[0].shape.as_list() == [None, 2, 3]
    assert traced.experimental_get_tracing_count() == 1


@st.composite
def _broadcast_calls(draw):
    """Two calls' shapes for a binary op whose signature hides some dimensions: the hidden ones
    may differ between the calls (1 in one, more in the other), the others may not."""
    rank = draw(st.integers(1, 3))
    cuts = [draw(st.integers(0, rank)) for _ in range(2)]
    hidden = [[draw(st.booleans()) for _ in range(rank - cut)] for cut in cuts]
    fixed = [[draw(st.sampled_from([1, 3])) for _ in range(rank - cut)] for cut in cuts]
    calls = []
    for _ in range(2):
        full = draw(st.lists(st.sampled_from([1, 2, 3]), min_size=rank, max_size=rank))
        calls.append([tuple(draw(st.sampled_from([1, full[cut + i]])) if h else f
                            for i, (h, f) in enumerate(zip(hs, fs)))
                      for cut, hs, fs in zip(cuts, hidden, fixed)])
    for shapes in calls:
        try:
            np.broadcast_shapes(*shapes)
        except ValueError:
            assume(False)
    return calls, hidden


@settings(max_examples=60, deadline=None)
@given(_broadcast_calls(), st.sampled_from(["add", "mul", "sub", "maximum"]))
def test_broadcasting_gradients_with_hidden_dimensions_match_eager(calls, op):
    calls, hidden = calls
    fn = {"add": tf.add, "mul": tf.multiply, "sub": tf.subtract, "maximum": tf.maximum}[op]
    run = _gradients(lambda x, y: _sum(fn(x, y) ** 2))
    signature = [S([None if h else d for d, h in zip(s, hs)], tf.float64)
                 for s, hs in zip(calls[0], hidden)]
    traced = _traced_once(lambda a, b: run(a, b), signature)
    rng = np.random.default_rng(7)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for sx, sy in calls:
            x, y = tf.constant(rng.normal(size=sx)), tf.constant(rng.normal(size=sy))
            (want, want_grads), (got, got_grads) = run(x, y), traced(x, y)
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
            for g, w in zip(got_grads, want_grads):
                assert g.shape == w.shape
                np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12)
    assert traced.experimental_get_tracing_count() == 1


# -- a training step: one trace for every batch size ---------------------------------------------

def _mlp(optimizer):
    rng = np.random.default_rng(0)
    variables = [tf.Variable(rng.normal(size=(784, 32)).astype(np.float32) * 0.05),
                 tf.Variable(np.zeros(32, np.float32)),
                 tf.Variable(rng.normal(size=(32, 10)).astype(np.float32) * 0.05),
                 tf.Variable(np.zeros(10, np.float32))]
    opt = {"sgd": lambda: tf.optimizers.SGD(0.1), "adam": lambda: tf.optimizers.Adam(0.01)}[
        optimizer]()

    def step(x, y):
        w1, b1, w2, b2 = variables
        with tf.GradientTape() as tape:
            h = tf.nn.relu(tf.matmul(x, w1) + b1)
            logits = tf.matmul(h, w2) + b2
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=y, logits=logits))
        opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    return variables, step


# TensorFlow 2.21 traces such a step twice when the optimizer makes its slots on the first call
# (Adam), once otherwise, and never again for other batch sizes.
@pytest.mark.parametrize("optimizer,traces", [("sgd", 1), ("adam", 2)])
def test_a_training_step_with_a_none_batch_traces_once_and_trains_as_eager(optimizer, traces):
    eager_vars, eager_step = _mlp(optimizer)
    traced_vars, step = _mlp(optimizer)
    traced = tf.function(step, input_signature=[S([None, 784]), S([None], tf.int32)])
    rng = np.random.default_rng(1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in (32, 64, 100, 32):
            x = rng.normal(size=(n, 784)).astype(np.float32)
            y = rng.integers(0, 10, n).astype(np.int32)
            want = eager_step(tf.constant(x), tf.constant(y))
            got = traced(tf.constant(x), tf.constant(y))
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)
    for a, b in zip(traced_vars, eager_vars):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-6)
    assert traced.experimental_get_tracing_count() == traces
    concrete = traced.get_concrete_function()
    assert concrete.inputs[0].shape.as_list() == [None, 784]


def test_compiled_array_form_and_async_calls_run_run_time_sizes(no_inference_check):
    fn = _gradients(lambda x: tf.reduce_mean(tf.reshape(x, [tf.shape(x)[0], -1]) ** 2))
    traced = _traced_once(lambda x: fn(x), [S([None, 2, 3], tf.float64)])
    for n in (2, 5, 1, 3):
        x = tf.constant(np.arange(n * 6, dtype=np.float64).reshape(n, 2, 3))
        (want, (want_grad,)), (got, (got_grad,)) = fn(x), traced(x)
        np.testing.assert_allclose(got.numpy(), want.numpy())
        np.testing.assert_allclose(got_grad.numpy(), want_grad.numpy())
    with tf.experimental.async_scope():
        x = tf.constant(np.ones((4, 2, 3)))
        got, (got_grad,) = traced(x)
        assert got_grad.shape == (4, 2, 3)
        np.testing.assert_allclose(got_grad.numpy(), np.full((4, 2, 3), 2 / 24))
    assert traced.experimental_get_tracing_count() == 1
