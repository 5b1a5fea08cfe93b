"""Gradient cases for the array, slicing, creation and padding ops (see test_gradients.py).

Every op here moves elements around, so each case is chosen to exercise a different way of
moving them back: every StridedSlice mask, negative and large strides, slices that overshoot
or are empty, gathers on every axis and with batch dimensions, duplicate indices (whose
gradients must add up), pads of both mirror modes up to their largest width.
"""

import numpy as np

import eager as tf
from eager.core import dispatch
from eager.ops.array_ops import BROADCAST_TO, RESHAPE, TILE
from eager.ops.collective_ops import collective_reduce, collective_reduce_n
from eager.ops.padding_ops import PAD
from eager.ops.creation_ops import FILL
from eager.ops.slicing_ops import (INDEX_AXIS, SCATTER_ND, SLICE_AXIS, SLICE_AXIS_GRAD,
                                   STRIDED_SLICE_GRAD)
from gradcase import GradCase, crand, rand

C = GradCase


def ints(*values):
    return np.array(values, dtype=np.int32)


def _index_axis(x, index, axis):
    return dispatch.execute(INDEX_AXIS, (tf.convert_to_tensor(x), tf.constant(index)),
                            {"axis": axis})


def _slice_axis(x, axis, bounds, step, start, stop, dynamic):
    return dispatch.execute(SLICE_AXIS, (tf.convert_to_tensor(x), *map(tf.constant, bounds)),
                            {"axis": axis, "step": step, "start": start, "stop": stop,
                             "dynamic": dynamic})


def _slice_axis_grad(dy, bounds, shape):
    """dy placed at rows bounds[0]:bounds[1] of zeros shaped `shape`."""
    return dispatch.execute(SLICE_AXIS_GRAD, (tf.convert_to_tensor(dy),
                                              *map(tf.constant, bounds)),
                            {"axis": 0, "step": 1, "start": None, "stop": None,
                             "dynamic": "both", "shape": shape})


def _slice_axis_grad_into(dy, bounds, shape):
    """As `_slice_axis_grad`, with the shape an input read when the op runs."""
    return dispatch.execute(SLICE_AXIS_GRAD, (tf.convert_to_tensor(dy), *map(tf.constant, bounds),
                                              tf.constant(shape, tf.int32)),
                            {"axis": 0, "step": 1, "start": None, "stop": None,
                             "dynamic": "both", "shape": None})


# Ops whose shape is an input read when they run (as in a function traced with None
# dimensions), run here directly with an eager shape tensor: eagerly the API gives attributes.

def _at_run_time(op, x, shape, first=False, attr="shape"):
    shape = tf.constant(shape, tf.int32)
    inputs = (shape, tf.convert_to_tensor(x)) if first else (tf.convert_to_tensor(x), shape)
    return dispatch.execute(op, inputs, {"dims" if op is FILL else attr: None})


def _pad_at_run_time(x, paddings):
    return dispatch.execute(PAD, (tf.convert_to_tensor(x), tf.constant(0.0, tf.float64),
                                  tf.constant(paddings, tf.int64)), {"paddings": None})


def _strided_slice_grad(dy, shape, **attrs):
    masks = {"begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0, "new_axis_mask": 0,
             "shrink_axis_mask": 0}
    return dispatch.execute(STRIDED_SLICE_GRAD, (tf.constant(shape, tf.int32),
                                                 tf.convert_to_tensor(dy)), {**masks, **attrs})


def _first_of_each(fn):
    """Uses some outputs of a multi-output op only: the others get zeros in the backward pass."""
    return lambda x: fn(x)[::2]


CASES = {
    # -- shapes --------------------------------------------------------------------------------
    "CheckNumerics": [C(lambda x: tf.debugging.check_numerics(x, "checked"),
                        lambda: [rand(2, 3)])],
    "CollectiveReduceV2": [C(lambda x: collective_reduce(x, 1, 0, 1), lambda: [rand(2, 3)]),
                           C(lambda x: collective_reduce(x, 1, 0, 2, final_op="Div"),
                             lambda: [rand(3)])],
    "CollectiveReduceN": [C(lambda x, y: tf.add_n([tf.reduce_sum(t * t) for t in
                                                    collective_reduce_n([x, y], 1, 0, 3)]),
                            lambda: [rand(2, 3), rand(4)]),
                          C(lambda x: collective_reduce_n([x], 1, 0, 4, final_op="Div")[0],
                            lambda: [rand(3)])],
    "Identity": [C(tf.identity, lambda: [rand(2, 3)]),
                 C(tf.identity, lambda: [crand(3)])],
    "Reshape": [C(lambda x: tf.reshape(x, [3, -1]), lambda: [rand(2, 3, 2)]),
                C(lambda x: tf.reshape(x, []), lambda: [rand(1, 1)]),
                C(lambda x: tf.reshape(x, [2, 2]), lambda: [crand(4)]),
                C(lambda x: _at_run_time(RESHAPE, x, [3, -1]), lambda: [rand(2, 3, 2)])],
    "Squeeze": [C(tf.squeeze, lambda: [rand(1, 3, 1, 2)]),
                C(lambda x: tf.squeeze(x, axis=[-2]), lambda: [rand(1, 3, 1, 2)])],
    "ExpandDims": [C(lambda x: tf.expand_dims(x, 0), lambda: [rand(2, 3)]),
                   C(lambda x: tf.expand_dims(x, -1), lambda: [rand(2, 3)]),
                   C(lambda x: tf.expand_dims(x, 0), lambda: [rand()])],
    "Transpose": [C(tf.transpose, lambda: [rand(2, 3)]),
                  C(lambda x: tf.transpose(x, [1, 2, 0]), lambda: [rand(2, 3, 4)]),
                  C(lambda x: tf.transpose(x, [0, 2, 1]), lambda: [crand(2, 3, 2)]),
                  C(lambda x: tf.transpose(x, [0, 1]), lambda: [rand(2, 3)])],
    "ConjugateTranspose": [C(lambda x: tf.transpose(x, conjugate=True), lambda: [crand(2, 3)]),
                           C(lambda x: tf.transpose(x, [2, 0, 1], conjugate=True),
                             lambda: [crand(2, 3, 2)])],
    "BroadcastTo": [C(lambda x: tf.broadcast_to(x, [2, 3, 4]), lambda: [rand(3, 1)]),
                    C(lambda x: tf.broadcast_to(x, [4]), lambda: [rand(1)]),
                    C(lambda x: tf.broadcast_to(x, [2, 3]), lambda: [rand()]),
                    C(lambda x: tf.broadcast_to(x, [2, 3]), lambda: [rand(2, 3)]),
                    C(lambda x: tf.broadcast_to(x, [2, 2]), lambda: [crand(2, 1)]),
                    C(lambda x: _at_run_time(BROADCAST_TO, x, [2, 3, 4]), lambda: [rand(3, 1)])],
    "Tile": [C(lambda x: tf.tile(x, [2, 3]), lambda: [rand(2, 3)]),
             C(lambda x: tf.tile(x, [1, 2, 1]), lambda: [rand(2, 1, 3)]),
             C(lambda x: tf.tile(x, [3, 1]), lambda: [rand(1, 2)]),
             C(lambda x: tf.tile(x, [1, 1]), lambda: [rand(2, 2)]),
             C(lambda x: tf.tile(x, [0, 2]), lambda: [rand(2, 2)]),
             C(lambda x: _at_run_time(TILE, x, [2, 1, 3], attr="multiples"),
               lambda: [rand(2, 1, 3)]),
             C(lambda x: tf.tile(x, [2]), lambda: [crand(3)])],

    # -- joining and splitting -----------------------------------------------------------------
    "ConcatV2": [C(lambda a, b: tf.concat([a, b], 0), lambda: [rand(2, 3), rand(1, 3, seed=1)]),
                 C(lambda a, b, c: tf.concat([a, b, c], -1),
                   lambda: [rand(2, 1), rand(2, 3, seed=1), rand(2, 2, seed=2)]),
                 C(lambda a, b: tf.concat([a, b], 1), lambda: [rand(2, 0, 2), rand(2, 2, 2)]),
                 C(lambda a, b: tf.concat([a, b], 0), lambda: [crand(2), crand(3, seed=1)])],
    "Pack": [C(lambda a, b: tf.stack([a, b]), lambda: [rand(2, 3), rand(2, 3, seed=1)]),
             C(lambda a, b, c: tf.stack([a, b, c], axis=1),
               lambda: [rand(2, 3), rand(2, 3, seed=1), rand(2, 3, seed=2)]),
             C(lambda a, b: tf.stack([a, b], axis=-1), lambda: [rand(2), rand(2, seed=1)]),
             C(lambda a, b: tf.stack([a, b]), lambda: [rand(), rand(seed=1)])],
    "Unpack": [C(tf.unstack, lambda: [rand(3, 2)]),
               C(lambda x: tf.unstack(x, axis=-1), lambda: [rand(2, 3)]),
               C(_first_of_each(lambda x: tf.unstack(x, axis=1)), lambda: [rand(2, 3, 2)]),
               C(lambda x: tf.unstack(x)[1], lambda: [crand(3)])],
    "Split": [C(lambda x: tf.split(x, 3), lambda: [rand(6, 2)]),
              C(lambda x: tf.split(x, 2, axis=-1), lambda: [rand(2, 4)]),
              C(_first_of_each(lambda x: tf.split(x, 3, axis=1)), lambda: [rand(2, 3)]),
              C(lambda x: tf.split(x, 1), lambda: [rand(2, 2)])],
    "SplitV": [C(lambda x: tf.split(x, [1, 3, 2]), lambda: [rand(6, 2)]),
               C(lambda x: tf.split(x, [2, -1], axis=1), lambda: [rand(2, 5)]),
               C(lambda x: tf.split(x, [0, 2, 1], axis=0)[1], lambda: [rand(3, 2)])],

    # -- slicing -------------------------------------------------------------------------------
    "StridedSlice": [
        C(lambda x: x[1], lambda: [rand(3, 4)]),
        C(lambda x: x[-1, 2], lambda: [rand(3, 4)]),
        C(lambda x: x[1:3], lambda: [rand(4, 2)]),
        C(lambda x: x[:, 1:-1], lambda: [rand(2, 5)]),
        C(lambda x: x[::2], lambda: [rand(5, 2)]),          # odd length: zeros past the end
        C(lambda x: x[1::2], lambda: [rand(6)]),
        C(lambda x: x[1:6:3, ::4], lambda: [rand(7, 9)]),
        C(lambda x: x[::-1], lambda: [rand(4, 2)]),
        C(lambda x: x[3:0:-2, ::-1], lambda: [rand(5, 3)]),
        C(lambda x: x[:-4:-3], lambda: [rand(8)]),
        C(lambda x: x[2::-1], lambda: [rand(3)]),            # a single element, negative step
        C(lambda x: x[None, 1, ..., None, :2], lambda: [rand(3, 2, 4)]),
        C(lambda x: x[..., 1], lambda: [rand(2, 3, 4)]),
        C(lambda x: x[1, ...], lambda: [rand(2, 3)]),
        C(lambda x: x[..., None], lambda: [rand(2, 3)]),
        C(lambda x: x[...], lambda: [rand()]),
        C(lambda x: x[None], lambda: [rand()]),
        C(lambda x: x[-10:10], lambda: [rand(3)]),           # bounds clamp
        C(lambda x: x[2:2], lambda: [rand(4)]),              # empty
        C(lambda x: x[5:1], lambda: [rand(4, 2)]),
        C(lambda x: tf.strided_slice(x, [0, 1], [2, 3], [1, 1], begin_mask=1, end_mask=2,
                                     shrink_axis_mask=0), lambda: [rand(3, 4)]),
        C(lambda x: tf.strided_slice(x, [1, 0, 0], [2, 0, 2], [1, 1, 2], new_axis_mask=2,
                                     shrink_axis_mask=1), lambda: [rand(3, 4)]),
        C(lambda x: tf.strided_slice(x, [0, 1], [0, 2], [1, 1], ellipsis_mask=1,
                                     shrink_axis_mask=2), lambda: [rand(2, 3, 4)]),
        C(lambda x: x[1:, ::-2], lambda: [crand(3, 4)]),
        # Beyond TensorFlow: an integer array index is a StridedSlice and a gather.
        C(lambda x: x[1:, [2, 0, 2]], lambda: [rand(3, 4)]),
        C(lambda x: x[1, :, [0, 1]], lambda: [rand(2, 3, 4)]),
        C(lambda x: x[::-1, [-1, 0]], lambda: [rand(3, 2)]),
    ],
    # A scalar index known only at run time (a loop counter inside a traced function); run
    # here directly, as eagerly a scalar tensor index is a static StridedSlice.
    "IndexAxis": [C(lambda x: _index_axis(x, 1, 0), lambda: [rand(3, 4)]),
                  C(lambda x: _index_axis(x, -1, 1), lambda: [rand(2, 3, 2)]),
                  C(lambda x: _index_axis(x, 0, 0), lambda: [crand(2)])],
    # Slice bounds known only at run time (SliceAxis, and its gradient's own gradient).
    "SliceAxis": [
        C(lambda x: _slice_axis(x, 1, (1, 3), 1, None, None, "both"), lambda: [rand(3, 5)]),
        C(lambda x: _slice_axis(x, 0, (-2,), 1, None, None, "start"), lambda: [rand(4, 2)]),
        C(lambda x: _slice_axis(x, 0, (0,), -1, 3, None, "stop"), lambda: [crand(5)]),
    ],
    "SliceAxisGrad": [C(lambda dy: _slice_axis_grad(dy, (1, 3), (3, 4)), lambda: [rand(2, 4)]),
                      C(lambda dy: _slice_axis_grad(dy, (0, 5), (2,)), lambda: [crand(2)]),
                      C(lambda dy: _slice_axis_grad_into(dy, (1, 3), (3, 4)),
                        lambda: [rand(2, 4)])],
    # The gradient of a strided slice of an input whose shape is known only at run time.
    "StridedSliceGrad": [
        C(lambda dy: _strided_slice_grad(dy, [4, 3], begin=(1, 0), end=(3, 3), strides=(1, 2)),
          lambda: [rand(2, 2)]),
        C(lambda dy: _strided_slice_grad(dy, [3, 2], begin=(-1,), end=(0,), strides=(1,),
                                         shrink_axis_mask=1), lambda: [rand(2)]),
        C(lambda dy: _strided_slice_grad(dy, [5], begin=(4,), end=(0,), strides=(-2,)),
          lambda: [crand(2)]),
    ],
    "Slice": [C(lambda x: tf.slice(x, [1, 0], [2, -1]), lambda: [rand(4, 3)]),
              C(lambda x: tf.slice(x, [0, 1, 1], [2, 1, 2]), lambda: [rand(2, 3, 4)]),
              C(lambda x: tf.slice(x, [0, 0], [2, 3]), lambda: [rand(2, 3)]),
              C(lambda x: tf.slice(x, [1], [0]), lambda: [rand(3)]),
              C(lambda x: tf.slice(x, [1], [2]), lambda: [crand(4)])],

    # -- gathers and scatters ------------------------------------------------------------------
    "GatherV2": [
        C(lambda p: tf.gather(p, ints(2, 0, 2)), lambda: [rand(3, 2)]),  # duplicates add up
        C(lambda p: tf.gather(p, ints(1)), lambda: [rand(4)]),
        C(lambda p: tf.gather(p, np.int64(1)), lambda: [rand(3, 2)]),    # a scalar index
        C(lambda p: tf.gather(p, ints([0, 2], [2, 1])), lambda: [rand(3, 2, 2)]),
        C(lambda p: tf.gather(p, ints(1, 0, 1), axis=1), lambda: [rand(2, 3, 2)]),
        C(lambda p: tf.gather(p, ints([1, 1], [0, 2]), axis=-1), lambda: [rand(2, 3)]),
        C(lambda p: tf.gather(p, np.int16(2), axis=1), lambda: [rand(2, 3)]),
        C(lambda p: tf.gather(p, ints([0, 2, 2], [1, 1, 0]), batch_dims=1),
          lambda: [rand(2, 3, 2)]),
        C(lambda p: tf.gather(p, ints([0, 1], [1, 1]), axis=2, batch_dims=1),
          lambda: [rand(2, 2, 3, 2)]),
        C(lambda p: tf.gather(p, ints([[1], [0]], [[0], [0]]), axis=2, batch_dims=-1),
          lambda: [rand(2, 2, 2)]),
        C(lambda p: tf.gather(p, ints(), axis=1), lambda: [rand(2, 3)]),
        C(lambda p: tf.gather(p, ints(1, 1)), lambda: [crand(3)]),
        # Tensor.__getitem__ with an integer array: a gather along the array's axis.
        C(lambda x: x[[0, 2]], lambda: [rand(3, 2)]),
        C(lambda x: x[:, [1, 0]], lambda: [rand(2, 3)]),
        C(lambda x: x[..., [[0, 0], [1, 0]]], lambda: [rand(2, 2)]),
        C(lambda x: tf.gather(tf.gather(x, ints(1, 0, 1)), ints(2, 2)), lambda: [rand(2, 2)]),
    ],
    "GatherNd": [
        C(lambda p: tf.gather_nd(p, ints([0, 1], [2, 0], [0, 1])), lambda: [rand(3, 2)]),
        C(lambda p: tf.gather_nd(p, ints([1], [0], [1])), lambda: [rand(2, 3)]),
        C(lambda p: tf.gather_nd(p, ints([[1, 0]], [[0, 1]])), lambda: [rand(2, 2, 3)]),
        C(lambda p: tf.gather_nd(p, ints([1], [0], [1]), batch_dims=1), lambda: [rand(3, 2, 2)]),
        C(lambda p: tf.gather_nd(p, ints([[0, 1], [1, 1]], [[1, 0], [0, 0]]), batch_dims=1),
          lambda: [rand(2, 2, 2, 2)]),
        C(lambda p: tf.gather_nd(p, ints([[2], [0]], [[1], [1]]), batch_dims=2),
          lambda: [rand(2, 2, 3)]),
        C(lambda p: tf.gather_nd(p, ints([1, 1])), lambda: [crand(2, 2)]),
    ],
    "ScatterNd": [
        C(lambda u: tf.scatter_nd(ints([1], [3], [1]), u, [4]), lambda: [rand(3)]),
        C(lambda u: tf.scatter_nd(ints([0, 1], [2, 0]), u, [3, 2]), lambda: [rand(2)]),
        C(lambda u: tf.scatter_nd(ints([[1]], [[0]]), u, [2, 3]), lambda: [rand(2, 1, 3)]),
        C(lambda u: tf.scatter_nd(ints([0], [0]), u, [2]), lambda: [crand(2)]),
        C(lambda u: dispatch.execute(SCATTER_ND, (tf.constant(ints([1], [3], [1])),
                                                  tf.convert_to_tensor(u),
                                                  tf.constant([4, 2], tf.int32)),
                                     {"shape": None}), lambda: [rand(3, 2)]),
    ],

    # -- padding and creation ------------------------------------------------------------------
    "PadV2": [C(lambda x: tf.pad(x, [[1, 2], [0, 1]]), lambda: [rand(2, 3)]),
              C(lambda x: tf.pad(x, [[2, 0]], constant_values=1.5), lambda: [rand(3)]),
              C(lambda x: tf.pad(x, [[0, 0], [0, 0]]), lambda: [rand(2, 2)]),
              C(lambda x: tf.pad(x, [[1, 1]]), lambda: [crand(2)]),
              C(lambda x: _pad_at_run_time(x, [[1, 0], [2, 1]]), lambda: [rand(2, 3)])],
    "MirrorPad": [
        C(lambda x: tf.pad(x, [[2, 1]], "REFLECT"), lambda: [rand(4)]),
        C(lambda x: tf.pad(x, [[3, 3]], "REFLECT"), lambda: [rand(4)]),      # the widest
        C(lambda x: tf.pad(x, [[4, 4]], "SYMMETRIC"), lambda: [rand(4)]),    # the widest
        C(lambda x: tf.pad(x, [[1, 0], [2, 2]], "SYMMETRIC"), lambda: [rand(2, 3)]),
        C(lambda x: tf.pad(x, [[1, 1], [0, 2], [0, 0]], "REFLECT"), lambda: [rand(2, 3, 2)]),
        C(lambda x: tf.pad(x, [[1, 0], [1, 2]], "reflect"), lambda: [crand(2, 3)]),
    ],
    "Fill": [C(lambda v: tf.fill([2, 3], v), lambda: [rand()]),
             C(lambda v: tf.fill([], v), lambda: [rand()]),
             C(lambda v: tf.fill([0, 2], v), lambda: [rand()]),
             C(lambda v: tf.fill([3], v), lambda: [np.asarray(crand())]),
             C(lambda v: _at_run_time(FILL, v, [2, 3], first=True), lambda: [rand()])],
}
