"""Corpus part 2 for `tools/compare_with_tensorflow.py`: array, linalg, sort, nn, random and print
ops, indexing and tensor methods (see tf_cases for the helpers a case's code sees)."""

from __future__ import annotations

from tf_cases import DTYPES, Case

C = Case


def array_cases():
    out = []
    add = out.append

    def group(prefix, codes, kind="value"):
        for code in codes:
            add(C(f"{prefix}.{code}", code, kind))

    # ------------------------------------------------------------------ shape manipulation
    group("reshape", [
        "tf.reshape(t('float32', 'mat'), [-1])", "tf.reshape(t('float32', 'mat'), [3, -1])",
        "tf.reshape(t('float32', 'mat'), [4, -1])", "tf.reshape(t('float32', 'mat'), [-1, -1])",
        "tf.reshape(t('float32', 'mat'), [5])", "tf.reshape(t('float32', 'scalar'), [1, 1])",
        "tf.reshape(t('float32', 'empty'), [0, 3])", "tf.reshape(t('float32', 'empty'), [-1, 0])",
        "tf.reshape(t('float32', 'mat'), tf.constant([3, 2]))", "tf.reshape(t('float32', 'mat'), ())",
        "tf.reshape([1, 2, 3, 4], (2, 2))", "tf.reshape(t('float32', 'mat'), [3, 2.0])",
        "tf.reshape(t('float32', 'mat'), [-2, 3])", "tf.reshape(tf.constant([5]), [])",
        "tf.reshape(t('float32', 'mat'), tf.constant([3, 2], tf.int64))",
        "tf.reshape(t('float32', 'mat'), np.array([6]))",
    ])
    group("squeeze", [
        "tf.squeeze(tf.zeros([1, 2, 1]))", "tf.squeeze(tf.zeros([1, 2, 1]), axis=0)",
        "tf.squeeze(tf.zeros([1, 2, 1]), axis=-1)", "tf.squeeze(tf.zeros([1, 2, 1]), axis=[0, 2])",
        "tf.squeeze(tf.zeros([1, 2, 1]), axis=1)", "tf.squeeze(tf.zeros([1, 2, 1]), axis=3)",
        "tf.squeeze(t('float32', 'scalar'))", "tf.squeeze([[1]])", "tf.squeeze(tf.zeros([1, 0]))",
    ])
    group("expand_dims", [
        "tf.expand_dims(t('float32'), 0)", "tf.expand_dims(t('float32'), -1)",
        "tf.expand_dims(t('float32'), 1)", "tf.expand_dims(t('float32'), 2)",
        "tf.expand_dims(t('float32'), -3)", "tf.expand_dims(t('float32', 'scalar'), 0)",
        "tf.expand_dims([1, 2], axis=1)", "tf.expand_dims(t('float32'), axis=tf.constant(0))",
        "tf.expand_dims(t('float32'), axis=[0])", "tf.expand_dims(t('float32'), axis=None)",
    ])
    group("transpose", [
        "tf.transpose(t('float32', 'mat'))", "tf.transpose(t('float32', 'cube'))",
        "tf.transpose(t('float32', 'cube'), perm=[1, 0, 2])", "tf.transpose(t('float32', 'cube'), [0, 1])",
        "tf.transpose(t('float32', 'cube'), [0, 0, 1])", "tf.transpose(t('float32', 'cube'), [0, 1, 3])",
        "tf.transpose(t('float32', 'cube'), [-1, 0, 1])", "tf.transpose(t('complex64', 'mat'), conjugate=True)",
        "tf.transpose(t('float32', 'mat'), conjugate=True)", "tf.transpose(t('float32', 'scalar'))",
        "tf.transpose(t('float32'))", "tf.transpose([[1, 2]])",
    ])
    for dt in DTYPES:
        add(C(f"transpose.{dt}", f"tf.transpose(t('{dt}', 'mat'))"))
        add(C(f"concat.{dt}", f"tf.concat([t('{dt}'), t('{dt}', 'pos')], 0)"))
        add(C(f"stack.{dt}", f"tf.stack([t('{dt}'), t('{dt}', 'pos')])"))
        add(C(f"tile.{dt}", f"tf.tile(t('{dt}', 'row'), [2])"))
        add(C(f"gather.{dt}", f"tf.gather(t('{dt}'), [3, 0])"))
        add(C(f"pad.{dt}", f"tf.pad(t('{dt}', 'row'), [[1, 2]])"))
        add(C(f"reverse_slice.{dt}", f"t('{dt}')[::-1]"))
        add(C(f"zeros.{dt}", f"tf.zeros([2], tf.{dt})"))
        add(C(f"ones.{dt}", f"tf.ones([2], tf.{dt})"))
        add(C(f"zeros_like.{dt}", f"tf.zeros_like(t('{dt}'))"))
        add(C(f"ones_like.{dt}", f"tf.ones_like(t('{dt}'))"))
        add(C(f"fill.{dt}", f"tf.fill([2], t('{dt}', 'scalar'))"))
        add(C(f"eye.{dt}", f"tf.eye(2, dtype=tf.{dt})"))
        add(C(f"one_hot.{dt}", f"tf.one_hot([0, 2], 3, dtype=tf.{dt})"))
        add(C(f"range.{dt}", f"tf.range(5, dtype=tf.{dt})"))
        add(C(f"broadcast_to.{dt}", f"tf.broadcast_to(t('{dt}', 'row'), [2, 3])"))
        add(C(f"identity.{dt}", f"tf.identity(t('{dt}'))"))
        add(C(f"split.{dt}", f"tf.split(t('{dt}'), 2)"))
        add(C(f"unstack.{dt}", f"tf.unstack(t('{dt}', 'mat'))"))
        add(C(f"reshape.{dt}", f"tf.reshape(t('{dt}', 'mat'), [3, 2])"))
        add(C(f"scatter_nd.{dt}", f"tf.scatter_nd([[1], [3]], t('{dt}', 'pos')[:2], [4])"))
        add(C(f"sort.{dt}", f"tf.sort(t('{dt}'))"))
        add(C(f"argsort.{dt}", f"tf.argsort(t('{dt}'))"))
        add(C(f"top_k.{dt}", f"tf.math.top_k(t('{dt}'), 2)"))
        add(C(f"matmul.{dt}", f"tf.matmul(t('{dt}', 'sq'), t('{dt}', 'sq'))"))
        add(C(f"norm.{dt}", f"tf.norm(t('{dt}'))"))
        add(C(f"tensordot.{dt}", f"tf.tensordot(t('{dt}', 'sq'), t('{dt}', 'sq'), 1)"))
        add(C(f"einsum.{dt}", f"tf.einsum('ij,jk->ik', t('{dt}', 'sq'), t('{dt}', 'sq'))"))
        add(C(f"relu.{dt}", f"tf.nn.relu(t('{dt}'))"))
        add(C(f"softmax.{dt}", f"tf.nn.softmax(t('{dt}'))"))
        add(C(f"gelu.{dt}", f"tf.nn.gelu(t('{dt}'))"))
        add(C(f"log_softmax.{dt}", f"tf.nn.log_softmax(t('{dt}'))"))
        add(C(f"stop_gradient.{dt}", f"tf.stop_gradient(t('{dt}'))"))
        add(C(f"slice.{dt}", f"tf.slice(t('{dt}', 'mat'), [0, 1], [2, -1])"))
        add(C(f"strided_slice.{dt}", f"tf.strided_slice(t('{dt}'), [3], [0], [-1])"))
        add(C(f"gather_nd.{dt}", f"tf.gather_nd(t('{dt}', 'mat'), [[1, 2], [0, 0]])"))
        add(C(f"squeeze.{dt}", f"tf.squeeze(t('{dt}', 'mat')[:1])"))
        add(C(f"expand_dims.{dt}", f"tf.expand_dims(t('{dt}'), 0)"))
        add(C(f"shape.{dt}", f"tf.shape(t('{dt}', 'mat'))"))
        add(C(f"size.{dt}", f"tf.size(t('{dt}', 'mat'))"))
        add(C(f"rank.{dt}", f"tf.rank(t('{dt}', 'mat'))"))
    group("concat", [
        "tf.concat([t('float32', 'mat'), t('float32', 'mat')], -1)",
        "tf.concat([t('float32', 'mat'), t('float32', 'mat')], 2)",
        "tf.concat([t('float32', 'mat'), t('float32', 'row')], 0)",
        "tf.concat([t('float32'), t('int32')], 0)", "tf.concat([t('float32')], 0)",
        "tf.concat([], 0)", "tf.concat([[1, 2], [3]], 0)", "tf.concat([t('float32'), [1, 2]], 0)",
        "tf.concat([t('float32', 'scalar'), t('float32', 'scalar')], 0)",
        "tf.concat([t('float32'), t('float32', 'empty')], 0)", "tf.concat(t('float32', 'mat'), 0)",
        "tf.concat([t('float32', 'mat'), t('float32', 'mat')], axis=tf.constant(1))",
        "tf.concat([t('float32', 'mat'), t('float32', 'mat')], axis=1.0)",
        "tf.concat([t('float32', 'mat'), t('float64', 'mat')], 0)",
    ])
    group("stack", [
        "tf.stack([t('float32'), t('float32')], axis=1)", "tf.stack([t('float32'), t('float32')], axis=-1)",
        "tf.stack([t('float32'), t('float32')], axis=2)", "tf.stack([t('float32'), t('float32')], axis=-3)",
        "tf.stack([t('float32'), t('float32', 'row')])", "tf.stack([1, 2])", "tf.stack([1, 2.5])",
        "tf.stack([t('float32', 'scalar'), 2.0])", "tf.stack([t('int32', 'scalar'), 2.5])",
        "tf.stack([])", "tf.stack([t('float32'), t('int32')])", "tf.stack(t('float32', 'mat'))",
        "tf.stack([[1, 2], [3, 4]], axis=1)",
    ])
    group("unstack", [
        "tf.unstack(t('float32', 'mat'), axis=1)", "tf.unstack(t('float32', 'mat'), axis=-1)",
        "tf.unstack(t('float32', 'mat'), num=2)", "tf.unstack(t('float32', 'mat'), num=3)",
        "tf.unstack(t('float32', 'scalar'))", "tf.unstack(t('float32', 'mat'), axis=2)",
        "tf.unstack(tf.zeros([0, 2]))", "tf.unstack([[1, 2]])",
    ])
    group("split", [
        "tf.split(t('float32', 'cube'), 3, axis=1)", "tf.split(t('float32', 'cube'), [1, 3], axis=2)",
        "tf.split(t('float32', 'cube'), [1, -1], axis=2)", "tf.split(t('float32', 'cube'), 3, axis=2)",
        "tf.split(t('float32', 'cube'), [1, 2], axis=2)", "tf.split(t('float32', 'cube'), 2, axis=-1)",
        "tf.split(t('float32', 'cube'), 2, axis=3)", "tf.split(t('float32', 'scalar'), 1)",
        "tf.split(t('float32'), tf.constant([1, 3]))", "tf.split(t('float32'), [1, -1, -1])",
        "tf.split(t('float32'), 0)", "tf.split(t('float32'), [])", "tf.split(t('float32'), 1)",
        "tf.split([1, 2, 3, 4], 2)", "tf.split(t('float32'), [4, 0])",
    ])
    group("tile", [
        "tf.tile(t('float32', 'mat'), [2, 3])", "tf.tile(t('float32', 'mat'), [2])",
        "tf.tile(t('float32', 'mat'), [0, 1])", "tf.tile(t('float32', 'scalar'), [])",
        "tf.tile(t('float32', 'mat'), [-1, 1])", "tf.tile(t('float32', 'mat'), tf.constant([1, 2]))",
        "tf.tile([1, 2], [2])", "tf.tile(t('float32'), [2.0])",
    ])
    group("broadcast_to", [
        "tf.broadcast_to(t('float32', 'scalar'), [2, 3])", "tf.broadcast_to(t('float32', 'row'), [3])",
        "tf.broadcast_to(t('float32', 'row'), [2, 4])", "tf.broadcast_to(t('float32', 'mat'), [3])",
        "tf.broadcast_to(t('float32', 'row'), [0, 3])", "tf.broadcast_to(1, [2])",
        "tf.broadcast_to(t('float32', 'row'), tf.constant([2, 3]))", "tf.broadcast_to(t('float32', 'row'), [-1, 3])",
        "tf.broadcast_to(t('float32', 'mat')[:1], [4, 3])",
    ])
    group("gather", [
        "tf.gather(t('float32', 'mat'), 1)", "tf.gather(t('float32', 'mat'), [1, 0], axis=1)",
        "tf.gather(t('float32', 'mat'), [[1, 0]], axis=-1)", "tf.gather(t('float32', 'mat'), [2])",
        "tf.gather(t('float32', 'mat'), [-1])", "tf.gather(t('float32', 'mat'), [0], axis=2)",
        "tf.gather(t('float32', 'mat'), [0.0])", "tf.gather(t('float32', 'scalar'), [0])",
        "tf.gather(t('float32', 'mat'), tf.constant([1], tf.int64))", "tf.gather(t('float32', 'mat'), [])",
        "tf.gather(t('float32', 'mat'), [[0, 1], [1, 0]], axis=1, batch_dims=1)",
        "tf.gather(t('float32', 'mat'), [[0], [1]], batch_dims=1, axis=1)",
        "tf.gather(t('float32', 'mat'), [[0], [1]], batch_dims=-1)",
        "tf.gather([1, 2, 3], [2, 0])", "tf.gather(t('float32', 'mat'), tf.constant([1], tf.uint8))",
        "tf.gather(t('float32', 'mat'), tf.constant([1], tf.int16))",
    ])
    group("gather_nd", [
        "tf.gather_nd(t('float32', 'mat'), [1])", "tf.gather_nd(t('float32', 'mat'), [[1], [0]])",
        "tf.gather_nd(t('float32', 'mat'), [[2, 0]])", "tf.gather_nd(t('float32', 'mat'), [[0, 0, 0]])",
        "tf.gather_nd(t('float32', 'mat'), [[0, -1]])", "tf.gather_nd(t('float32', 'mat'), [[0.0, 1.0]])",
        "tf.gather_nd(t('float32', 'mat'), [[1], [0]], batch_dims=1)",
        "tf.gather_nd(t('float32', 'mat'), tf.zeros([0, 2], tf.int32))",
        "tf.gather_nd(t('float32', 'cube'), [[[0, 1]], [[1, 2]]])",
    ])
    group("scatter_nd", [
        "tf.scatter_nd([[1], [1]], [1.0, 2.0], [3])", "tf.scatter_nd([[0, 1]], [5], [2, 2])",
        "tf.scatter_nd([[0]], [[1, 2]], [2, 2])", "tf.scatter_nd([[3]], [1.0], [3])",
        "tf.scatter_nd([[-1]], [1.0], [3])", "tf.scatter_nd([[0]], [1.0, 2.0], [3])",
        "tf.scatter_nd([[0]], [1.0], tf.constant([3]))", "tf.scatter_nd([[0.0]], [1.0], [3])",
        "tf.scatter_nd(tf.constant([[0]], tf.int64), [1.0], [3])", "tf.scatter_nd([[0]], [True], [2])",
        "tf.scatter_nd([[0]], [1.0], [3, -1])", "tf.scatter_nd(tf.zeros([0, 1], tf.int32), tf.zeros([0]), [2])",
    ])
    group("slice", [
        "tf.slice(t('float32', 'cube'), [0, 1, 1], [1, 2, 3])", "tf.slice(t('float32', 'cube'), [1, 1, 1], [-1, -1, -1])",
        "tf.slice(t('float32', 'cube'), [0, 0, 0], [3, 1, 1])", "tf.slice(t('float32', 'cube'), [0, 0], [1, 1])",
        "tf.slice(t('float32', 'cube'), [-1, 0, 0], [1, 1, 1])", "tf.slice(t('float32', 'cube'), [0, 0, 0], [-2, 1, 1])",
        "tf.slice([1, 2, 3], [1], [2])", "tf.slice(t('float32', 'cube'), tf.constant([0, 1, 1], tf.int64), [1, 1, 1])",
        "tf.slice(t('float32', 'cube'), [0, 0, 0], [0, 0, 0])", "tf.slice(t('float32', 'cube'), [0.0, 0, 0], [1, 1, 1])",
        "tf.slice(t('float32', 'scalar'), [], [])",
    ])
    group("strided_slice", [
        "tf.strided_slice(t('float32', 'cube'), [0, 1], [2, 3])",
        "tf.strided_slice(t('float32', 'cube'), [0, 1], [2, 3], [1, 2])",
        "tf.strided_slice(t('float32', 'cube'), [1, -1], [0, 0], [-1, -1])",
        "tf.strided_slice(t('float32', 'cube'), [0, 0], [1, 1], begin_mask=1, end_mask=2)",
        "tf.strided_slice(t('float32', 'cube'), [0, 1], [1, 2], shrink_axis_mask=1)",
        "tf.strided_slice(t('float32', 'cube'), [0, 0], [1, 1], new_axis_mask=1)",
        "tf.strided_slice(t('float32', 'cube'), [0, 1], [0, 2], ellipsis_mask=1)",
        "tf.strided_slice(t('float32', 'cube'), [0], [1], [0])",
        "tf.strided_slice(t('float32', 'cube'), [5], [6], shrink_axis_mask=1)",
        "tf.strided_slice(t('float32', 'cube'), [-10], [10])",
        "tf.strided_slice(t('float32', 'cube'), [0, 0], [1])",
    ])
    group("pad", [
        "tf.pad(t('float32', 'mat'), [[1, 0], [0, 2]])", "tf.pad(t('float32', 'mat'), [[1, 0]])",
        "tf.pad(t('float32', 'mat'), [[1, 0], [-1, 0]])", "tf.pad(t('float32', 'mat'), [[1, 1], [2, 2]], 'REFLECT')",
        "tf.pad(t('float32', 'mat'), [[1, 1], [3, 3]], 'REFLECT')", "tf.pad(t('float32', 'mat'), [[2, 2], [3, 3]], 'SYMMETRIC')",
        "tf.pad(t('float32', 'mat'), [[2, 2], [4, 3]], 'SYMMETRIC')", "tf.pad(t('float32', 'mat'), [[1, 1], [1, 1]], 'reflect')",
        "tf.pad(t('float32', 'mat'), [[1, 1], [1, 1]], 'WRAP')", "tf.pad(t('float32', 'mat'), [[1, 1], [1, 1]], constant_values=7)",
        "tf.pad(t('int32', 'mat'), [[1, 1], [1, 1]], constant_values=1.5)",
        "tf.pad(t('float32', 'mat'), [[1, 1], [1, 1]], constant_values=tf.constant(2.0))",
        "tf.pad(t('float32', 'scalar'), [])", "tf.pad([1, 2], [[1, 1]])",
        "tf.pad(t('float32', 'mat'), tf.constant([[1, 0], [0, 1]], tf.int64))",
        "tf.pad(t('float32', 'mat'), [[1, 0, 0], [0, 1, 0]])",
        "tf.pad(t('float32', 'mat'), [[1.0, 0], [0, 1]])",
    ])
    group("one_hot", [
        "tf.one_hot([0, 2, -1, 5], 3)", "tf.one_hot([[0, 2]], 3, axis=0)", "tf.one_hot([0, 2], 3, axis=-1)",
        "tf.one_hot([0, 2], 3, on_value=5, off_value=-1)", "tf.one_hot([0, 2], 3, on_value=5.0)",
        "tf.one_hot([0, 2], 3, on_value=5, off_value=1.5)", "tf.one_hot([0, 2], 3, on_value=True, off_value=False)",
        "tf.one_hot(1, 3)", "tf.one_hot([0, 2], 0)", "tf.one_hot([0, 2], -1)", "tf.one_hot([0.0], 3)",
        "tf.one_hot(tf.constant([0], tf.int64), 3)", "tf.one_hot(tf.constant([0], tf.uint8), 3)",
        "tf.one_hot([0, 2], 3, axis=2)", "tf.one_hot([0, 2], 3, on_value=5, dtype=tf.float32)",
        "tf.one_hot([0, 2], tf.constant(3))", "tf.one_hot([0, 2], 3.0)",
    ])
    group("zeros", [
        "tf.zeros([])", "tf.zeros(3)", "tf.zeros((2, 0))", "tf.zeros([2, -1])", "tf.zeros(tf.constant([2, 1]))",
        "tf.zeros([2.0])", "tf.zeros([2], 'int64')", "tf.ones([2], tf.bool)", "tf.ones(tf.constant(2))",
        "tf.zeros(np.array([2, 1]))", "tf.ones([2], dtype=np.int8)", "tf.zeros(tf.constant([2, 1], tf.int64))",
        "tf.zeros_like([1, 2])", "tf.zeros_like([1.0, 2.0], dtype=tf.int32)", "tf.ones_like(t('float32'), dtype=tf.bool)",
        "tf.zeros_like(t('float32', 'scalar'))", "tf.ones_like(1.5)", "tf.zeros_like(t('float32'), dtype='int8')",
        "tf.fill([2, 3], 1.5)", "tf.fill([2], 1)", "tf.fill([], 1)", "tf.fill([2], True)",
        "tf.fill([2, -1], 1)", "tf.fill([2], [1, 2])", "tf.fill(tf.constant([2]), 2**40)",
        "tf.fill([2.0], 1)", "tf.fill(2, 1)", "tf.fill([2], np.float64(1))", "tf.fill([0], 1.0)",
    ])
    group("range", [
        "tf.range(5)", "tf.range(1, 5)", "tf.range(1, 5, 2)", "tf.range(5, 1, -1)", "tf.range(1.0, 5)",
        "tf.range(0, 1, 0.25)", "tf.range(5, dtype=tf.float64)", "tf.range(1, 5, 0)", "tf.range(5, 1)",
        "tf.range(1, 5, -1)", "tf.range(0.0, 1.0, 0.3)", "tf.range(tf.constant(3))", "tf.range(tf.constant(3.0))",
        "tf.range(tf.constant(1), 4.5)", "tf.range(2**40, 2**40 + 2)", "tf.range(np.int64(3))",
        "tf.range(np.float64(3))", "tf.range(3, dtype=tf.bool)", "tf.range(3, dtype=tf.uint8)",
        "tf.range(1.5, dtype=tf.int32)", "tf.range(start=2)", "tf.range(3, limit=5)",
        "tf.range(tf.constant(1, tf.int64), tf.constant(3))", "tf.range(0)", "tf.range(-3)",
    ])
    group("eye", [
        "tf.eye(3)", "tf.eye(2, 3)", "tf.eye(3, 2)", "tf.eye(2, batch_shape=[2])", "tf.eye(2, 3, [2, 1])",
        "tf.eye(0)", "tf.eye(-1)", "tf.eye(2.0)", "tf.eye(tf.constant(2))", "tf.eye(2, dtype='int64')",
        "tf.eye(2, num_columns=0)",
    ])
    group("shape", [
        "tf.shape(t('float32', 'mat'), out_type=tf.int64)", "tf.shape(t('float32', 'scalar'))",
        "tf.shape([[1, 2]])", "tf.shape(t('float32', 'mat'), out_type=tf.float32)",
        "tf.size(t('float32', 'empty'))", "tf.size(t('float32', 'mat'), out_type=tf.int64)",
        "tf.size(1.5)", "tf.rank(t('float32', 'scalar'))", "tf.rank([[1]])", "tf.identity([1, 2])",
        "tf.identity(1.5)", "tf.stop_gradient([1.5])",
        "tf.shape(t('float32', 'mat'), out_type=tf.int16)",
    ])
    return out


def more_cases():
    out = []
    add = out.append

    def group(prefix, codes, kind="value"):
        for code in codes:
            add(C(f"{prefix}.{code}", code, kind))

    # ------------------------------------------------------------------ linalg
    group("matmul", [
        "tf.matmul(t('float32', 'mat'), tf.transpose(t('float32', 'mat')))",
        "tf.matmul(t('float32', 'mat'), t('float32', 'mat'), transpose_b=True)",
        "tf.matmul(t('float32', 'mat'), t('float32', 'mat'), transpose_a=True)",
        "tf.matmul(t('complex64', 'mat'), t('complex64', 'mat'), adjoint_b=True)",
        "tf.matmul(t('float32', 'mat'), t('float32', 'mat'))", "tf.matmul(t('float32'), t('float32'))",
        "tf.matmul(t('float32', 'mat'), t('float32', 'row'))", "tf.matmul(t('float32', 'scalar'), t('float32', 'scalar'))",
        "tf.matmul(t('float32', 'cube'), tf.ones([4, 2]))", "tf.matmul(t('float32', 'cube'), tf.ones([1, 4, 2]))",
        "tf.matmul(t('float32', 'cube'), tf.ones([3, 4, 2]))", "tf.matmul(tf.ones([2, 1, 2, 3]), tf.ones([3, 3, 1]))",
        "tf.matmul(t('float32', 'mat'), t('int32', 'mat'), transpose_b=True)",
        "tf.matmul([[1.0, 2.0]], [[3.0], [4.0]])", "tf.matmul([[1, 2]], [[3], [4]])",
        "tf.matmul(tf.zeros([2, 0]), tf.zeros([0, 3]))",
        "tf.matmul(t('float32', 'mat'), t('float32', 'mat'), transpose_a=True, adjoint_a=True)",
        "tf.linalg.matmul(t('float64', 'sq'), t('float64', 'sq'))",
    ])
    group("tensordot", [
        "tf.tensordot(t('float32', 'mat'), t('float32', 'mat'), [[1], [1]])",
        "tf.tensordot(t('float32', 'row'), t('float32', 'row'), 0)",
        "tf.tensordot(t('float32', 'mat'), t('float32', 'mat'), 2)",
        "tf.tensordot(t('float32', 'mat'), t('float32', 'mat'), 1)",
        "tf.tensordot(t('float32', 'cube'), t('float32', 'cube'), [[0, 1], [0, 1]])",
        "tf.tensordot(t('float32', 'mat'), t('float32', 'mat'), [[-1], [-1]])",
        "tf.tensordot(t('float32', 'mat'), t('float32', 'mat'), 3)",
        "tf.tensordot(t('float32', 'mat'), t('float32', 'mat'), [1, 1])",
        "tf.tensordot(t('float32', 'mat'), t('int32', 'mat'), [[1], [1]])",
        "tf.tensordot([1.0, 2.0], [3.0, 4.0], 1)",
    ])
    group("einsum", [
        "tf.einsum('ii->i', t('float32', 'sq'))", "tf.einsum('ij->', t('float32', 'mat'))",
        "tf.einsum('i,i->', t('float32'), t('float32'))", "tf.einsum('ij->ji', t('float32', 'mat'))",
        "tf.einsum('bij,bjk->bik', t('float32', 'cube'), tf.ones([2, 4, 2]))",
        "tf.einsum('...ij,...jk->...ik', t('float32', 'cube'), tf.ones([4, 2]))",
        "tf.einsum('ij,jk->ik', t('float32', 'mat'), t('int32', 'mat'))",
        "tf.einsum('ij,jk->ik', t('float32', 'mat'), t('float32', 'mat'))",
        "tf.einsum('ij,jk', t('float32', 'mat'), tf.ones([3, 2]))", "tf.einsum('i,j->ij', t('float32'), t('float32', 'row'))",
        "tf.einsum('ii', t('float32', 'sq'))", "tf.einsum('ij->i', [[1.0, 2.0]])", "tf.einsum('ij->k', t('float32', 'mat'))",
        "tf.einsum('i->i', t('float32', 'scalar'))", "tf.einsum('->', t('float32', 'scalar'))",
    ])
    group("norm", [
        "tf.norm(t('float32', 'mat'))", "tf.norm(t('float32', 'mat'), ord=1)", "tf.norm(t('float32', 'mat'), ord=2)",
        "tf.norm(t('float32', 'mat'), ord=np.inf)", "tf.norm(t('float32', 'mat'), ord='fro', axis=[0, 1])",
        "tf.norm(t('float32', 'mat'), ord=1, axis=[0, 1])", "tf.norm(t('float32', 'mat'), ord=np.inf, axis=[0, 1])",
        "tf.norm(t('float32', 'mat'), axis=0)", "tf.norm(t('float32', 'mat'), axis=-1, keepdims=True)",
        "tf.norm(t('float32', 'mat'), keepdims=True)", "tf.norm(t('float32', 'mat'), ord=3, axis=1)",
        "tf.norm(t('float32', 'mat'), ord=0.5)", "tf.norm(t('float32', 'mat'), ord=2, axis=[0, 1])",
        "tf.norm(t('float32', 'mat'), ord='fro')", "tf.norm(t('float32', 'mat'), ord='nuc', axis=[0, 1])",
        "tf.norm(t('float32', 'mat'), axis=2)", "tf.norm(t('float32', 'empty'))", "tf.norm(t('float32', 'scalar'))",
        "tf.norm([3.0, 4.0])", "tf.norm(t('complex64'))", "tf.linalg.norm(t('float64', 'mat'), ord=1, axis=1)",
        "tf.norm(t('float32', 'mat'), ord=-1)", "tf.norm(t('float32', 'mat'), axis=[0, 0])",
    ])
    # ------------------------------------------------------------------ sort
    group("sort", [
        "tf.sort(t('float32', 'mat'), axis=0)", "tf.sort(t('float32', 'mat'), direction='DESCENDING')",
        "tf.sort(t('float32', 'mat'), direction='descending')", "tf.sort(t('float32', 'mat'), axis=2)",
        "tf.sort(t('float32', 'scalar'))", "tf.sort([3, 1, 2])", "tf.sort(tf.constant([np.nan, 1.0, -np.inf]))",
        "tf.sort(tf.constant([np.nan, 1.0, -np.inf]), direction='DESCENDING')", "tf.sort(t('float32', 'empty'))",
        "tf.argsort(t('float32', 'mat'), axis=0)", "tf.argsort([3, 1, 3, 1], stable=True)",
        "tf.argsort([3, 1, 3, 1], direction='DESCENDING', stable=True)", "tf.argsort(t('float32', 'scalar'))",
        "tf.argsort(t('float32', 'mat'), axis=-3)", "tf.argsort(t('float32'), direction='UP')",
        "tf.math.top_k(t('float32', 'mat'), 2)", "tf.math.top_k(t('float32', 'mat'))",
        "tf.math.top_k(t('float32', 'mat'), 4)", "tf.math.top_k(t('float32', 'mat'), -1)",
        "tf.math.top_k(t('float32', 'mat'), 0)", "tf.math.top_k(t('float32', 'scalar'), 1)",
        "tf.math.top_k([1, 3, 3, 2], 2)", "tf.math.top_k([1, 3, 3, 2], 3, sorted=True).indices",
        "tf.math.top_k(t('float32'), 2, index_type=tf.int64)", "tf.math.top_k(t('float32'), tf.constant(2))",
        "tf.math.top_k(tf.constant([1.0, np.nan, 3.0]), 2)", "tf.math.top_k(t('float32'), 2.0)",
    ])
    # ------------------------------------------------------------------ nn
    group("nn", [
        "tf.nn.relu([-1, 2])", "tf.nn.relu(t('float32', 'scalar'))", "tf.nn.gelu(t('float32'), approximate=True)",
        "tf.nn.gelu(t('float64', 'mat'), True)", "tf.nn.gelu([1, 2])", "tf.nn.sigmoid(t('float32', 'mat'))",
        "tf.nn.softmax(t('float32', 'mat'), axis=0)", "tf.nn.softmax(t('float32', 'mat'), axis=2)",
        "tf.nn.softmax(t('float32', 'scalar'))", "tf.nn.softmax(t('float32', 'empty'))",
        "tf.nn.softmax([1.0, 2.0])", "tf.nn.softmax(tf.constant([1000.0, 0.0, -np.inf]))",
        "tf.nn.log_softmax(t('float32', 'mat'), axis=0)", "tf.nn.log_softmax(tf.constant([1000.0, 0.0]))",
        "tf.nn.log_softmax(t('float32', 'scalar'))",
        "tf.nn.sigmoid_cross_entropy_with_logits(labels=t('float32', 'mat'), logits=t('float32', 'mat'))",
        "tf.nn.sigmoid_cross_entropy_with_logits(labels=t('float32'), logits=t('float32', 'mat'))",
        "tf.nn.sigmoid_cross_entropy_with_logits(t('float32'), t('float32'))",
        "tf.nn.sigmoid_cross_entropy_with_logits(labels=t('int32'), logits=t('float32'))",
        "tf.nn.sigmoid_cross_entropy_with_logits(labels=[0.0, 1.0], logits=[100.0, -100.0])",
        "tf.nn.softmax_cross_entropy_with_logits(labels=[[0.0, 1.0, 0.0]], logits=t('float32', 'mat'))",
        "tf.nn.softmax_cross_entropy_with_logits(labels=t('float32', 'mat'), logits=t('float32', 'mat'))",
        "tf.nn.softmax_cross_entropy_with_logits(labels=t('float32', 'mat'), logits=t('float32', 'mat'), axis=0)",
        "tf.nn.softmax_cross_entropy_with_logits(labels=t('float32'), logits=t('float32', 'mat'))",
        "tf.nn.softmax_cross_entropy_with_logits(labels=t('float32'), logits=t('float32'))",
        "tf.nn.softmax_cross_entropy_with_logits(labels=t('float32', 'scalar'), logits=t('float32', 'scalar'))",
        "tf.nn.softmax_cross_entropy_with_logits(labels=t('float64', 'mat'), logits=t('float32', 'mat'))",
        "tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[1, 0], logits=t('float32', 'mat'))",
        "tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([1, 0], tf.int64), logits=t('float64', 'mat'))",
        "tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[1, 3], logits=t('float32', 'mat'))",
        "tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[1, -1], logits=t('float32', 'mat'))",
        "tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[1.0, 0.0], logits=t('float32', 'mat'))",
        "tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[1], logits=t('float32', 'mat'))",
        "tf.nn.sparse_softmax_cross_entropy_with_logits(labels=1, logits=t('float32'))",
        "tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[[1, 0]], logits=tf.ones([1, 2, 3]))",
    ])
    img = "tf.reshape(tf.range(32.0), [1, 4, 4, 2])"
    ker = "tf.reshape(tf.range(24.0) / 10, [2, 2, 2, 3])"
    group("conv", [
        f"tf.nn.conv2d({img}, {ker}, 1, 'VALID')", f"tf.nn.conv2d({img}, {ker}, 1, 'SAME')",
        f"tf.nn.conv2d({img}, {ker}, 2, 'SAME')", f"tf.nn.conv2d({img}, {ker}, [1, 2, 1, 1], 'VALID')",
        f"tf.nn.conv2d({img}, {ker}, [2, 1], 'SAME')", f"tf.nn.conv2d({img}, {ker}, 1, 'SAME', dilations=2)",
        f"tf.nn.conv2d({img}, {ker}, 2, 'SAME', dilations=2)", f"tf.nn.conv2d({img}, {ker}, 1, 'valid')",
        f"tf.nn.conv2d({img}, {ker}, 1, [[0, 0], [1, 1], [0, 1], [0, 0]])",
        f"tf.nn.conv2d({img}, {ker}, 1, 'VALID', data_format='NCHW')",
        f"tf.nn.conv2d({img}, tf.ones([2, 2, 3, 1]), 1, 'VALID')",
        f"tf.nn.conv2d({img}, tf.cast({ker}, tf.float64), 1, 'VALID')",
        f"tf.nn.conv2d(tf.cast({img}, tf.int32), tf.cast({ker}, tf.int32), 1, 'VALID')",
        f"tf.nn.conv2d(tf.cast({img}, tf.float16), tf.cast({ker}, tf.float16), 1, 'SAME')",
        f"tf.nn.conv2d(tf.cast({img}, tf.float64), tf.cast({ker}, tf.float64), 1, 'SAME')",
        f"tf.nn.conv2d({img}, {ker}, 0, 'VALID')",
        f"tf.nn.conv2d({img}, tf.ones([5, 5, 2, 1]), 1, 'VALID')",
        f"tf.nn.conv2d({img}, {ker}, 1, 'FULL')",
        f"tf.nn.max_pool2d({img}, 2, 2, 'VALID')", f"tf.nn.max_pool2d({img}, 3, 2, 'SAME')",
        f"tf.nn.max_pool2d({img}, [2, 1], [1, 2], 'VALID')", f"tf.nn.max_pool2d({img}, [1, 2, 2, 1], 1, 'SAME')",
f"tf.nn.max_pool2d(tf.cast({img}, tf.int32), 2, 2, 'VALID')",
        f"tf.nn.max_pool2d(tf.cast({img}, tf.float64), 2, 2, 'VALID')",
        f"tf.nn.max_pool2d(tf.cast({img}, tf.float16), 2, 2, 'VALID')",
        f"tf.nn.max_pool2d({img}[0], 2, 2, 'VALID')", f"tf.nn.max_pool2d({img}, 2, 2, 'VALID', data_format='NCHW')",
        f"tf.nn.max_pool2d(tf.cast({img}, tf.uint8), 2, 2, 'VALID')",
    ])
    group("conv", [f"tf.nn.max_pool2d({img}, 5, 1, 'VALID')"])
    group("conv", [f"tf.nn.conv2d({img}[0], {ker}, 1, 'VALID')"], kind="tf_aborts")
    # ------------------------------------------------------------------ random (dtypes/shapes only)
    group("random.value", [
        "tf.random.normal([2, 3])", "tf.random.normal([2], dtype=tf.float64)", "tf.random.normal([2], dtype=tf.float16)",
        "tf.random.normal([])", "tf.random.normal([0, 2])", "tf.random.normal(tf.constant([2]))",
        "tf.random.normal([2], mean=[1.0, 2.0])", "tf.random.normal([2], dtype=tf.int32)",
        "tf.random.normal([-1])", "tf.random.normal([2], stddev=tf.constant([1.0, 2.0], tf.float64))",
        "tf.random.uniform([2, 3])", "tf.random.uniform([2], maxval=10, dtype=tf.int32)",
        "tf.random.uniform([2], dtype=tf.int32)", "tf.random.uniform([2], dtype=tf.int64, maxval=5)",
        "tf.random.uniform([2], minval=5, maxval=5, dtype=tf.int32)", "tf.random.uniform([2], dtype=tf.float64)",
        "tf.random.uniform([2], dtype=tf.bool)", "tf.random.uniform([2], dtype=tf.int8, maxval=4)",
        "tf.random.uniform([2], minval=[0.0, 1.0], maxval=2.0)", "tf.random.uniform(3)",
        "tf.random.uniform([2], seed=1)", "tf.random.normal([2], seed=1.5)",
        "tf.nn.dropout(t('float32', 'mat'), 0.5)", "tf.nn.dropout(t('float32', 'mat'), 0.0)",
        "tf.nn.dropout(t('float32', 'mat'), 1.0)", "tf.nn.dropout(t('int32', 'mat'), 0.5)",
        "tf.nn.dropout(t('float32', 'mat'), 0.5, noise_shape=[1, 3])",
        "tf.nn.dropout(t('float32', 'mat'), 0.5, noise_shape=[3, 3])",
        "tf.random.Generator.from_seed(1).normal([2])", "tf.random.Generator.from_seed(1).uniform([2], maxval=3, dtype=tf.int64)",
    ], kind="meta")
    seeded = [
        ("global_op_seed", "tf.random.set_seed(3); x = tf.random.normal([3], seed=5)\n"
                           "tf.random.set_seed(3); y = tf.random.normal([3], seed=5)\n"
                           "result = bool(tf.reduce_all(x == y))"),
        ("global_only", "tf.random.set_seed(3); x = tf.random.uniform([3]); x2 = tf.random.uniform([3])\n"
                        "tf.random.set_seed(3); y = tf.random.uniform([3]); y2 = tf.random.uniform([3])\n"
                        "result = (bool(tf.reduce_all(x == y)), bool(tf.reduce_all(x2 == y2)), "
                        "bool(tf.reduce_all(x == x2)))"),
        ("op_seed_repeat", "tf.random.set_seed(4)\nx = tf.random.normal([3], seed=1)\n"
                           "y = tf.random.normal([3], seed=1)\nresult = bool(tf.reduce_all(x == y))"),
        ("generator", "g = tf.random.Generator.from_seed(7); h = tf.random.Generator.from_seed(7)\n"
                      "result = bool(tf.reduce_all(g.normal([4]) == h.normal([4])))"),
        ("dropout_scale", "x = tf.ones([1000])\ny = tf.nn.dropout(x, 0.25, seed=1)\n"
                          "result = sorted(set(np.round(y.numpy(), 4).tolist()))"),
        ("int_uniform_range", "x = tf.random.uniform([1000], 2, 5, dtype=tf.int32)\n"
                              "result = sorted(set(x.numpy().tolist()))"),
    ]
    for name, code in seeded:
        add(C(f"random.seeding.{name}", code))
    # ------------------------------------------------------------------ print
    group("print", [
        "printed(t('float32'))", "printed(t('int32', 'mat'))", "printed(t('bool'))", "printed(t('float64', 'scalar'))",
        "printed('a', 1, t('float16'))", "printed(tf.range(10))", "printed(tf.range(10), summarize=2)",
        "printed(tf.range(10), summarize=-1)", "printed(t('float32', 'cube'))", "printed(t('float32', 'empty'))",
        "printed({'b': t('int8'), 'a': [1, t('uint8')]})", "printed(t('float32'), sep=',', end='!')",
        "printed(tf.constant([1e-7, 123456789.0, 0.1]))", "printed(tf.constant([np.nan, np.inf, -np.inf]))",
        "printed(tf.constant([1.0, 2.5]))", "printed(tf.constant(0.1, tf.float64))", "printed(tf.zeros([2, 0]))",
        "printed(tf.constant([1/3], tf.float16))", "printed()", "printed('x')",
    ])
    group("print.complex", ["printed(t('complex64'))"])
    # ------------------------------------------------------------------ indexing
    cube = "t('int32', 'cube')"
    for key in ["0", "-1", "1, 2", ":, 1", "..., 1", "None", ":, None, 1", "::-1", "::-2, ::2",
                "1:0", "2", "-3", "0, 0, 0, 0", "tf.constant(1)", "np.int64(1)", "1.5", "'a'",
                "True", "..., ...", "1, ..., 2", "tf.newaxis, ..., 0", ":, :, tf.newaxis",
                "-100:100", "::0", "tf.constant(1, tf.int64), 1", "tf.constant(1.0)",
                "None, None", "0, :, ::-1", ":, -1:", "slice(None, None, -1)", "0:2:1, 1:",
                "tf.constant(1, tf.uint8)", "0:tf.constant(2)",
                ":, tf.constant(-1)", "np.array(1)", "2:1:-1, 3::-2", "(0, 1)", "()",
                "tf.constant(True)", "1:2, 5", "-3:"]:
        add(C(f"index.{key}", f"{cube}[{key}]"))
    for key in ["[0, 1]", "tf.constant([0, 1])", "[[0], [1]]", "[True, False]", "tf.constant([1])"]:
        add(C(f"index.gather.{key}", f"{cube}[{key}]"))
    for key in ["0", "1:3", "::-1", "3:1:-1", "-100:100", "5", "4:", "None", "..."]:
        add(C(f"index.vec.{key}", f"t('float32')[{key}]"))
    for key in ["0", "...", "None", "..., None", ":"]:
        add(C(f"index.scalar.{key}", f"t('float32', 'scalar')[{key}]"))
    # ------------------------------------------------------------------ tensor methods
    group("method", [
        "t('float32', 'scalar').numpy()", "t('float32').numpy()", "t('int64', 'scalar').numpy()",
        "t('bool', 'scalar').numpy()", "t('complex64', 'scalar').numpy()", "type(t('float32').numpy()).__name__",
        "type(t('float32', 'scalar').numpy()).__name__", "int(tf.constant(2.7))", "int(tf.constant(-2.7))",
        "float(tf.constant(3))", "bool(tf.constant(0))", "bool(tf.constant(0.5))", "bool(tf.constant([1, 2]))",
        "bool(tf.constant([1]))", "bool(tf.constant([]))", "int(tf.constant([1, 2]))", "int(tf.constant([1]))",
        "float(tf.constant([1.5]))", "operator.index(tf.constant(2))", "operator.index(tf.constant(2.0))",
        "operator.index(tf.constant([2]))", "operator.index(tf.constant(True))",
        "[1, 2, 3][tf.constant(1)]", "list(range(tf.constant(3)))", "len(tf.constant([1, 2]))",
        "len(tf.constant(1))", "len(tf.zeros([0, 3]))", "list(tf.constant([[1, 2], [3, 4]]))",
        "list(tf.constant(1))", "list(tf.zeros([0]))", "t('float32', 'mat').shape", "t('float32', 'mat').ndim",
        "t('float32', 'mat').dtype", "t('float32', 'mat').shape.as_list()", "t('float32', 'mat').get_shape()",
        "t('float32', 'mat').shape.rank", "t('float32', 'mat').shape.num_elements()",
        "t('float32', 'mat').shape == [2, 3]", "t('float32', 'mat').shape == (2, 3)",
        "t('float32', 'mat').shape[1]", "t('float32', 'mat').shape[-1:]", "complex(tf.constant(1+2j))",
        "complex(tf.constant(1.5))", "float(tf.constant(1+2j))", "int(tf.constant(True))",
        "np.asarray(t('float32'))", "np.asarray(t('float32'), dtype=np.float64)", "np.array(t('int8', 'mat'))",
        "np.add(t('float32'), 1)", "hash(t('float32'))", "t('float32').ref() == t('float32').ref()",
        "tf.is_tensor(t('float32'))", "tf.is_tensor(1.0)", "tf.is_tensor(np.array(1))",
        "t('float32').dtype == tf.float32", "t('float32').dtype == np.float32", "t('float32').dtype == 'float32'",
        "t('float32', 'scalar').__format__('.2f')", "f'{tf.constant(2.5):.1f}'", "tf.constant(2.5).__round__()",
        "t('float32') in [1, 2]", "tf.constant(1.5).dtype.name", "tf.float32.is_floating", "tf.int8.min",
        "tf.uint8.max", "tf.float16.max", "tf.as_dtype(np.float64)", "tf.as_dtype('int32')", "tf.as_dtype(float)",
        "tf.as_dtype('string')", "tf.as_dtype(np.float64).as_numpy_dtype", "tf.int32.size",
        "tf.complex64.real_dtype", "tf.float32.is_integer", "tf.bool.is_bool", "tf.double", "tf.half",
        "tf.TensorShape([2, None]).as_list()", "tf.TensorShape([2, 3]).num_elements()",
        "tf.TensorShape(None).rank", "tf.TensorShape([2, 3]) == [2, 3]",
        "tf.TensorShape([2, None]).is_fully_defined()", "tf.TensorShape([]).rank",
        "np.float32(2) * tf.constant(3.0)", "np.float32(2) > tf.constant(3.0)", "np.int64(2) + tf.constant([1, 2])",
        "np.array([1.0]) * tf.constant([3.0])", "np.array([1]) == tf.constant([1])",
        "t('float32').numpy().dtype", "tf.constant([1.5]).numpy().tolist()",
        "tf.constant(2**40).numpy()", "tf.zeros([2, 0]).numpy().shape",
    ])
    group("method.numpy_writeable", ["t('float32').numpy().flags.writeable"])
    group("method.device", ["t('float32').device"])
    return out
