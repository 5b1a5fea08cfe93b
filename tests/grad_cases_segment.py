"""Gradient cases for the segment reductions (see test_gradients.py): duplicate ids add up,
dropped (negative) ids get no gradient, ids may be multi-dimensional."""

import numpy as np

import eager as tf
from gradcase import GradCase, crand, rand

C = GradCase

CASES = {
    "UnsortedSegmentSum": [
        C(lambda d: tf.math.unsorted_segment_sum(d, [0, 2, 0, -1], 3), lambda: [rand(4, 3)]),
        C(lambda d: tf.math.unsorted_segment_sum(d, np.array([[1, 0], [1, 1]]), 2),
          lambda: [rand(2, 2, 3)]),
        C(lambda d: tf.math.unsorted_segment_mean(d, [1, 1, 0], 3), lambda: [rand(3, 2)]),
    ],
    "SegmentSum": [
        C(lambda d: tf.math.segment_sum(d, [0, 0, 1]), lambda: [crand(3)]),
        C(lambda d: tf.math.segment_sum(d, [0, 2, 2]), lambda: [rand(3, 2)]),
    ],
    # max/min: distinct values keep away from ties (where the rule shares the gradient)
    "SegmentMax": [C(lambda d: tf.math.segment_max(d, [0, 0, 2, 2]), lambda: [rand(4, 3)])],
    "SegmentMin": [C(lambda d: tf.math.segment_min(d, [0, 1, 1, 1]), lambda: [rand(4, 2)])],
    "SegmentProd": [
        C(lambda d: tf.math.segment_prod(d, [0, 0, 2, 2]), lambda: [rand(4, 3)]),
        C(lambda d: tf.math.segment_prod(d, [0, 0, 0]), lambda: [crand(3)]),
    ],
    "SegmentMean": [C(lambda d: tf.math.segment_mean(d, [0, 0, 0, 2]), lambda: [rand(4, 2)])],
    "UnsortedSegmentMax": [
        C(lambda d: tf.math.unsorted_segment_max(d, [2, 0, 1, -1, 2], 3), lambda: [rand(5, 3)]),
        C(lambda d: tf.math.unsorted_segment_max(d, np.array([[1, 0], [1, 1]]), 2),
          lambda: [rand(2, 2, 3)]),
    ],
    "UnsortedSegmentMin": [
        C(lambda d: tf.math.unsorted_segment_min(d, [1, 1, 0, -1], 2), lambda: [rand(4, 2)]),
    ],
    "CumulativeLogsumexp": [
        C(lambda x: tf.math.cumulative_logsumexp(x, axis=1), lambda: [rand(2, 4)]),
        C(lambda x: tf.math.cumulative_logsumexp(x, reverse=True),  # exclusive: -inf first
          lambda: [rand(3, 2)]),
    ],
    "Complex": [  # not a segment op: the one new op of its kind (broadcast parts)
        C(lambda x, y: tf.complex(x, y), lambda: [rand(2, 3), rand(3, seed=1)]),
    ],
    "UnsortedSegmentProd": [
        C(lambda d: tf.math.unsorted_segment_prod(d, [1, 1, 0, -1, 1], 3), lambda: [rand(5, 2)]),
    ],
}
