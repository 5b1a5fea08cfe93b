"""The inputs the Keras goldens were recorded on (shared by the recorder and the tests).

Values come from numpy's legacy `RandomState`, whose streams are the same in every numpy
version, rounded to 4 decimals so the cases read as the literals they are.
"""

import numpy as np

_rs = np.random.RandomState(1234)


def _uniform(shape, lo=0.0, hi=1.0):
    return np.round(_rs.uniform(lo, hi, size=shape), 4).tolist()


def _probs(shape):
    x = np.round(_rs.uniform(0.05, 1.0, size=shape), 4)
    return np.round(x / x.sum(-1, keepdims=True), 4).tolist()


def _one_hot(labels, n):
    return np.eye(n)[labels].tolist()


REG_TRUE = _uniform((3, 4), -1, 2)
REG_PRED = _uniform((3, 4), -1, 2)
POS_TRUE = _uniform((3, 4), 0, 3)
POS_PRED = _uniform((3, 4), 0.1, 3)
BIN_TRUE = [[0., 1., 1., 0.], [1., 1., 0., 0.], [0., 0., 1., 1.]]
BIN_PROB = _uniform((3, 4), 0.01, 0.99)
BIN_EDGE = [[0., 1., 1., 0.], [1., 0., 0., 1.], [0.5, 1e-9, 1 - 1e-9, 0.3]]
BIN_LOGITS = _uniform((3, 4), -4, 4)
BIG_LOGITS = [[60., -60., 100., -100.], [0., 30., -30., 88.], [-88., 1., -1., 0.]]
CAT_LABELS = [2, 0, 1]
CAT_TRUE = _one_hot(CAT_LABELS, 3)
CAT_SOFT = _probs((3, 3))
CAT_PROB = _probs((3, 3))
CAT_EDGE = [[0., 0., 1.], [1., 0., 0.], [0.2, 0.8, 0.]]
CAT_LOGITS = _uniform((3, 3), -5, 5)
CAT_BIG = [[100., -100., 0.], [-50., 60., 50.], [0., 0., 90.]]
SW = [0.5, 2.0, 1.0]
SW_ZERO = [0., 0., 0.]
SW_FULL = _uniform((3, 4), 0, 2)
MASK = [[True, True, False, True], [False, False, False, False], [True, True, True, False]]
MASK_ROWS = [True, False, True]

REDUCTIONS = ["sum_over_batch_size", "sum", "mean", "mean_with_sample_weight", "none", None]


def _loss(cls, y_true, y_pred, **extra):
    return dict(cls=cls, y_true=y_true, y_pred=y_pred, **extra)


LOSS_CASES = []
for _cls, _t, _p in [("MeanSquaredError", REG_TRUE, REG_PRED),
                     ("MeanAbsoluteError", REG_TRUE, REG_PRED),
                     ("MeanAbsolutePercentageError", REG_TRUE, REG_PRED),
                     ("MeanSquaredLogarithmicError", POS_TRUE, POS_PRED),
                     ("LogCosh", REG_TRUE, REG_PRED),
                     ("Huber", REG_TRUE, REG_PRED),
                     ("CosineSimilarity", REG_TRUE, REG_PRED),
                     ("Hinge", BIN_TRUE, BIN_LOGITS),
                     ("SquaredHinge", BIN_TRUE, BIN_LOGITS),
                     ("CategoricalHinge", CAT_TRUE, CAT_LOGITS),
                     ("KLDivergence", CAT_SOFT, CAT_PROB),
                     ("Poisson", POS_TRUE, POS_PRED),
                     ("BinaryCrossentropy", BIN_TRUE, BIN_PROB),
                     ("BinaryFocalCrossentropy", BIN_TRUE, BIN_PROB),
                     ("CategoricalCrossentropy", CAT_TRUE, CAT_PROB),
                     ("CategoricalFocalCrossentropy", CAT_TRUE, CAT_PROB)]:
    for _red in REDUCTIONS:
        LOSS_CASES.append(_loss(_cls, _t, _p, kwargs={"reduction": _red}))
        LOSS_CASES.append(_loss(_cls, _t, _p, kwargs={"reduction": _red}, sample_weight=SW))
    LOSS_CASES.append(_loss(_cls, _t, _p, sample_weight=SW_ZERO))
    LOSS_CASES.append(_loss(_cls, _t, _p, kwargs={"dtype": "float64"}, pred_dtype="float64"))
    LOSS_CASES.append(_loss(_cls, _t, _p, sample_weight=[[0.5], [2.0], [1.0]]))

LOSS_CASES += [
    # regression extras: per-element weights, masks, huber's delta, zeros
    _loss("MeanSquaredError", REG_TRUE, REG_PRED, sample_weight=SW_FULL),
    _loss("MeanSquaredError", REG_TRUE, REG_PRED, mask=MASK),
    _loss("MeanSquaredError", REG_TRUE, REG_PRED, mask=MASK, sample_weight=SW),
    _loss("MeanSquaredError", REG_TRUE, REG_PRED, mask=MASK, kwargs={"reduction": "sum"}),
    _loss("MeanSquaredError", REG_TRUE, REG_PRED, mask=MASK,
          kwargs={"reduction": "mean_with_sample_weight"}, sample_weight=SW),
    _loss("MeanSquaredError", REG_TRUE, REG_PRED, mask=MASK_ROWS),
    _loss("MeanSquaredError", REG_TRUE, REG_PRED, mask=MASK_ROWS, sample_weight=SW),
    _loss("MeanSquaredError", REG_TRUE, REG_PRED, mask=MASK_ROWS, kwargs={"reduction": "sum"}),
    _loss("MeanSquaredError", REG_TRUE, REG_PRED, mask=MASK_ROWS,
          kwargs={"reduction": "mean_with_sample_weight"}, sample_weight=SW),
    _loss("MeanSquaredError", REG_TRUE, REG_PRED, mask=[False, False, False]),
    _loss("MeanAbsoluteError", [1., 2., 3.], [1.5, 2., 2.]),
    _loss("MeanAbsolutePercentageError", [[0., 1.], [2., 0.]], [[1., 1.], [1., 0.]]),
    _loss("MeanSquaredLogarithmicError", [[0., -1.], [2., 0.]], [[1., 1.], [-3., 0.]]),
    _loss("Huber", REG_TRUE, REG_PRED, kwargs={"delta": 0.3}),
    _loss("Huber", REG_TRUE, REG_PRED, kwargs={"delta": 2.5}, sample_weight=SW),
    _loss("CosineSimilarity", REG_TRUE, REG_PRED, kwargs={"axis": 0}),
    _loss("CosineSimilarity", [[0., 0.], [1., 1.]], [[1., 0.], [0., 0.]]),
    _loss("LogCosh", [[0., 0.]], [[100., -100.]]),
    _loss("Hinge", [[-1., 1.], [1., -1.]], [[0.3, -0.2], [2., 0.5]]),
    _loss("Hinge", [[2., 1.], [1., 0.]], [[0.3, -0.2], [2., 0.5]]),
    _loss("KLDivergence", CAT_EDGE, CAT_PROB),
    _loss("Poisson", [[0., 0.]], [[0., 1.]]),
    # binary cross-entropy: logits both ways, smoothing, edges, axis
    _loss("BinaryCrossentropy", BIN_TRUE, BIN_LOGITS, kwargs={"from_logits": True}),
    _loss("BinaryCrossentropy", BIN_TRUE, BIG_LOGITS, kwargs={"from_logits": True}),
    _loss("BinaryCrossentropy", BIN_TRUE, BIN_EDGE),
    _loss("BinaryCrossentropy", BIN_TRUE, BIN_PROB, kwargs={"label_smoothing": 0.1}),
    _loss("BinaryCrossentropy", BIN_TRUE, BIN_LOGITS,
          kwargs={"from_logits": True, "label_smoothing": 0.2}, sample_weight=SW),
    _loss("BinaryCrossentropy", BIN_TRUE, BIN_PROB, kwargs={"axis": 0}),
    _loss("BinaryCrossentropy", [0., 1., 1.], [0.2, 0.7, 0.99]),
    _loss("BinaryCrossentropy", [[0.], [1.], [1.]], [0.2, 0.7, 0.99]),
    _loss("BinaryCrossentropy", BIN_TRUE, BIN_PROB, mask=MASK),
    _loss("BinaryFocalCrossentropy", BIN_TRUE, BIN_LOGITS, kwargs={"from_logits": True}),
    _loss("BinaryFocalCrossentropy", BIN_TRUE, BIG_LOGITS, kwargs={"from_logits": True}),
    _loss("BinaryFocalCrossentropy", BIN_TRUE, BIN_PROB,
          kwargs={"apply_class_balancing": True, "alpha": 0.4, "gamma": 1.5,
                  "label_smoothing": 0.1}),
    _loss("BinaryFocalCrossentropy", BIN_TRUE, BIN_EDGE, kwargs={"gamma": 0.0}),
    # categorical
    _loss("CategoricalCrossentropy", CAT_TRUE, CAT_LOGITS, kwargs={"from_logits": True}),
    _loss("CategoricalCrossentropy", CAT_TRUE, CAT_BIG, kwargs={"from_logits": True}),
    _loss("CategoricalCrossentropy", CAT_TRUE, CAT_EDGE),
    _loss("CategoricalCrossentropy", CAT_SOFT, CAT_PROB),
    _loss("CategoricalCrossentropy", CAT_TRUE, [[2., 1., 1.], [0.5, 0.5, 0.], [1., 1., 2.]]),
    _loss("CategoricalCrossentropy", CAT_TRUE, CAT_PROB, kwargs={"label_smoothing": 0.1}),
    _loss("CategoricalCrossentropy", CAT_TRUE, CAT_LOGITS,
          kwargs={"from_logits": True, "label_smoothing": 0.3}, sample_weight=SW),
    _loss("CategoricalCrossentropy", CAT_TRUE, CAT_PROB, kwargs={"axis": 0}),
    _loss("CategoricalCrossentropy", CAT_TRUE, CAT_LOGITS,
          kwargs={"from_logits": True, "axis": 0}),
    _loss("CategoricalCrossentropy", CAT_TRUE, CAT_PROB, mask=MASK_ROWS),
    _loss("CategoricalFocalCrossentropy", CAT_TRUE, CAT_LOGITS, kwargs={"from_logits": True}),
    _loss("CategoricalFocalCrossentropy", CAT_TRUE, CAT_BIG, kwargs={"from_logits": True}),
    _loss("CategoricalFocalCrossentropy", CAT_TRUE, CAT_PROB,
          kwargs={"alpha": 0.6, "gamma": 1.0, "label_smoothing": 0.2}),
    # sparse categorical
    _loss("SparseCategoricalCrossentropy", CAT_LABELS, CAT_PROB),
    _loss("SparseCategoricalCrossentropy", [[2], [0], [1]], CAT_PROB),
    _loss("SparseCategoricalCrossentropy", CAT_LABELS, CAT_EDGE),
    _loss("SparseCategoricalCrossentropy", CAT_LABELS, CAT_LOGITS, kwargs={"from_logits": True}),
    _loss("SparseCategoricalCrossentropy", CAT_LABELS, CAT_BIG, kwargs={"from_logits": True}),
    _loss("SparseCategoricalCrossentropy", CAT_LABELS, CAT_PROB, sample_weight=SW),
    _loss("SparseCategoricalCrossentropy", CAT_LABELS, CAT_PROB, kwargs={"ignore_class": 0}),
    _loss("SparseCategoricalCrossentropy", CAT_LABELS, CAT_LOGITS,
          kwargs={"ignore_class": 1, "from_logits": True, "reduction": "sum"}),
    _loss("SparseCategoricalCrossentropy", CAT_LABELS, CAT_PROB,
          kwargs={"ignore_class": 2}, sample_weight=SW),
    _loss("SparseCategoricalCrossentropy", [[2, 0], [1, 1]],
          [[[0.1, 0.2, 0.7], [0.5, 0.3, 0.2]], [[0.3, 0.3, 0.4], [0.1, 0.8, 0.1]]],
          kwargs={"ignore_class": 1}),
    _loss("SparseCategoricalCrossentropy", CAT_LABELS, CAT_PROB, mask=MASK_ROWS),
    _loss("SparseCategoricalCrossentropy", CAT_LABELS, CAT_PROB,
          kwargs={"reduction": "none"}),
]
for _red in REDUCTIONS:
    LOSS_CASES.append(_loss("SparseCategoricalCrossentropy", CAT_LABELS, CAT_PROB,
                            kwargs={"reduction": _red}, sample_weight=SW))


def _metric(cls, updates, **kwargs):
    return dict(cls=cls, kwargs=kwargs, updates=updates)


def _u(y_true, y_pred, sample_weight=None, **extra):
    update = dict(y_true=y_true, y_pred=y_pred, **extra)
    if sample_weight is not None:
        update["sample_weight"] = sample_weight
    return update


SCORES = _uniform((6, 3))
SCORES2 = _uniform((6, 3))
LABELS = [[1., 0., 1.], [0., 0., 1.], [1., 1., 0.], [0., 1., 0.], [1., 0., 0.], [0., 1., 1.]]
LABELS2 = [[0., 0., 1.], [1., 1., 1.], [0., 1., 0.], [0., 0., 0.], [1., 0., 1.], [1., 1., 0.]]
SW6 = [1., 0.5, 2., 0., 1., 3.]
EDGE_SCORES = [[0., 0.5, 1.], [0.25, 0.75, 0.5], [1., 0., 0.5]]
EDGE_LABELS = [[0., 1., 1.], [1., 0., 1.], [1., 0., 0.]]

_two_batches = [_u(LABELS, SCORES), _u(LABELS2, SCORES2, SW6)]

METRIC_CASES = []
for _cls in ["Precision", "Recall", "TruePositives", "FalsePositives", "TrueNegatives",
             "FalseNegatives"]:
    METRIC_CASES += [
        _metric(_cls, _two_batches),
        _metric(_cls, _two_batches, thresholds=[0.0, 0.3, 0.5, 0.71, 1.0]),
        _metric(_cls, _two_batches, thresholds=[0.0, 0.25, 0.5, 0.75, 1.0]),
        _metric(_cls, [_u(EDGE_LABELS, EDGE_SCORES)], thresholds=[0.0, 0.5, 1.0]),
        _metric(_cls, [_u(EDGE_LABELS, EDGE_SCORES)], thresholds=[0.0, 0.4, 0.5, 1.0]),
    ]
for _cls in ["Precision", "Recall"]:
    METRIC_CASES += [
        _metric(_cls, _two_batches, top_k=1),
        _metric(_cls, _two_batches, top_k=2, thresholds=[0.1, 0.6]),
        _metric(_cls, _two_batches, class_id=2),
        _metric(_cls, _two_batches, class_id=0, top_k=2),
        _metric(_cls, [_u([0., 1., 1., 0.], [0.6, 0.4, 0.8, 0.1], [1., 2., 0.5, 1.])]),
        _metric(_cls, [_u([[0.], [1.]], [[0.9], [0.2]])]),
    ]
for _curve in ["ROC", "PR", "PRGAIN"]:
    for _sum in ["interpolation", "majoring", "minoring"]:
        METRIC_CASES.append(_metric("AUC", _two_batches, curve=_curve, summation_method=_sum))
        METRIC_CASES.append(_metric("AUC", _two_batches, curve=_curve, summation_method=_sum,
                                    multi_label=True))
METRIC_CASES += [
    _metric("AUC", _two_batches, num_thresholds=7),
    _metric("AUC", _two_batches, num_thresholds=3, curve="PR"),
    _metric("AUC", _two_batches, thresholds=[0.2, 0.5, 0.9]),
    _metric("AUC", _two_batches, thresholds=[0.25, 0.5, 0.75], curve="PR"),
    _metric("AUC", _two_batches, multi_label=True, num_labels=3, label_weights=[1., 2., 0.5]),
    _metric("AUC", _two_batches, multi_label=True, curve="PR", label_weights=[0., 1., 1.]),
    _metric("AUC", _two_batches, label_weights=[1., 2., 0.5]),
    _metric("AUC", [_u(LABELS, _uniform((6, 3), -5, 5))],
            from_logits=True),
    _metric("AUC", [_u(EDGE_LABELS, EDGE_SCORES)]),
    _metric("AUC", [_u(EDGE_LABELS, EDGE_SCORES)], curve="PR"),
    _metric("AUC", [_u([0., 0., 0.], [0.1, 0.5, 0.9])]),
    _metric("AUC", [_u([1., 1., 1.], [0.1, 0.5, 0.9])], curve="PR"),
    _metric("AUC", [_u([0., 1., 1., 0.], [0.3, 0.6, 0.6, 0.2], [1., 2., 0.5, 1.])]),
    # averaging metrics
    _metric("Mean", [_u(None, None, values=[1., 2., 4.]),
                     _u(None, None, values=[[1., 3.], [5., 7.]], sample_weight=[1., 0.25])]),
    _metric("Sum", [_u(None, None, values=[1., 2., 4.]),
                    _u(None, None, values=[[1., 3.], [5., 7.]], sample_weight=[[1.], [2.]])]),
    _metric("Mean", [_u(None, None, values=[[1., 3.], [5., 7.]],
                        sample_weight=[[1., 0.], [0.5, 2.]])]),
    _metric("Mean", [_u(None, None, values=[[1., 3.], [5., 7.]], sample_weight=[0., 0.])]),
    _metric("Accuracy", [_u([[1.], [2.], [3.]], [[1.], [2.], [2.]]),
                         _u([1., 2., 3., 4.], [1., 0., 3., 4.], [1., 1., 0., 2.])]),
    _metric("BinaryAccuracy", [_u(BIN_TRUE, BIN_PROB), _u(BIN_TRUE, BIN_EDGE, SW)]),
    _metric("BinaryAccuracy", [_u(BIN_TRUE, BIN_PROB)], threshold=0.7),
    _metric("BinaryAccuracy", [_u([[1.], [0.]], [0.6, 0.3])]),
    _metric("CategoricalAccuracy", [_u(CAT_TRUE, CAT_PROB), _u(CAT_TRUE, CAT_LOGITS, SW)]),
    _metric("CategoricalAccuracy", [_u([[0., 1.], [1., 0.]], [[0.5, 0.5], [0.3, 0.7]])]),
    _metric("SparseCategoricalAccuracy", [_u(CAT_LABELS, CAT_PROB, true_dtype="int32"),
                                          _u([[2.], [1.], [1.]], CAT_LOGITS, SW)]),
    _metric("TopKCategoricalAccuracy", [_u(CAT_TRUE, CAT_PROB), _u(CAT_TRUE, CAT_LOGITS, SW)],
            k=2),
    _metric("TopKCategoricalAccuracy", [_u(CAT_TRUE, CAT_PROB)], k=1),
    _metric("TopKCategoricalAccuracy", [_u([[0., 1., 0.]], [[0.4, 0.4, 0.2]])], k=1),
    _metric("SparseTopKCategoricalAccuracy", [_u(CAT_LABELS, CAT_PROB, true_dtype="int32"),
                                              _u(CAT_LABELS, CAT_LOGITS, SW, true_dtype="int32")],
            k=2),
    _metric("SparseTopKCategoricalAccuracy", [_u([[2], [1], [0]], CAT_PROB, true_dtype="int32")],
            k=1),
    _metric("SparseTopKCategoricalAccuracy",
            [_u([1, 2, 0], [[1., 0., 2.], [2., 1., 0.], [0., 2., 1.]])], k=2,
            from_sorted_ids=True),
    _metric("MeanSquaredError", [_u(REG_TRUE, REG_PRED), _u(REG_TRUE, REG_PRED, SW)]),
    _metric("MeanAbsoluteError", [_u(REG_TRUE, REG_PRED), _u(REG_TRUE, REG_PRED, SW)]),
    _metric("RootMeanSquaredError", [_u(REG_TRUE, REG_PRED), _u(REG_TRUE, REG_PRED, SW)]),
    _metric("RootMeanSquaredError", [_u(REG_TRUE, REG_PRED, SW_FULL)]),
    _metric("MeanAbsolutePercentageError", [_u(REG_TRUE, REG_PRED)]),
    _metric("MeanSquaredLogarithmicError", [_u(POS_TRUE, POS_PRED)]),
    _metric("CosineSimilarity", [_u(REG_TRUE, REG_PRED, SW)]),
    _metric("LogCoshError", [_u(REG_TRUE, REG_PRED)]),
    _metric("KLDivergence", [_u(CAT_SOFT, CAT_PROB)]),
    _metric("Poisson", [_u(POS_TRUE, POS_PRED)]),
    _metric("Hinge", [_u(BIN_TRUE, BIN_LOGITS)]),
    _metric("SquaredHinge", [_u(BIN_TRUE, BIN_LOGITS)]),
    _metric("CategoricalHinge", [_u(CAT_TRUE, CAT_LOGITS)]),
    _metric("BinaryCrossentropy", [_u(BIN_TRUE, BIN_PROB), _u(BIN_TRUE, BIN_LOGITS, SW)],
            from_logits=False),
    _metric("BinaryCrossentropy", [_u(BIN_TRUE, BIN_LOGITS)], from_logits=True,
            label_smoothing=0.1),
    _metric("CategoricalCrossentropy", [_u(CAT_TRUE, CAT_PROB, SW)], label_smoothing=0.2),
    _metric("SparseCategoricalCrossentropy", [_u(CAT_LABELS, CAT_LOGITS)], from_logits=True),
]

FUNCTION_CASES = [
    dict(module="metrics", fn="binary_accuracy", y_true=BIN_TRUE, y_pred=BIN_PROB),
    dict(module="metrics", fn="binary_accuracy", y_true=BIN_TRUE, y_pred=BIN_PROB,
         kwargs={"threshold": 0.3}),
    dict(module="metrics", fn="binary_accuracy", y_true=[[1.], [0.]], y_pred=[0.6, 0.3]),
    dict(module="metrics", fn="categorical_accuracy", y_true=CAT_TRUE, y_pred=CAT_PROB),
    dict(module="metrics", fn="sparse_categorical_accuracy", y_true=CAT_LABELS, y_pred=CAT_PROB),
    dict(module="metrics", fn="sparse_categorical_accuracy", y_true=[[2.], [0.], [0.]],
         y_pred=CAT_PROB),
    dict(module="metrics", fn="top_k_categorical_accuracy", y_true=CAT_TRUE, y_pred=CAT_PROB,
         kwargs={"k": 2}),
    dict(module="metrics", fn="sparse_top_k_categorical_accuracy", y_true=CAT_LABELS,
         y_pred=CAT_PROB, true_dtype="int32", kwargs={"k": 1}),
    dict(module="metrics", fn="sparse_top_k_categorical_accuracy", y_true=[[2, 0], [1, 1]],
         y_pred=[[[0.1, 0.2, 0.7], [0.5, 0.3, 0.2]], [[0.3, 0.3, 0.4], [0.1, 0.8, 0.1]]],
         true_dtype="int32", kwargs={"k": 1}),
    dict(module="metrics", fn="accuracy", y_true=[1., 2., 3.], y_pred=[1., 2., 2.]),
    dict(module="losses", fn="mean_squared_error", y_true=REG_TRUE, y_pred=REG_PRED),
    dict(module="losses", fn="mean_squared_error", y_true=[[1.], [2.]], y_pred=[1.5, 2.]),
    dict(module="losses", fn="huber", y_true=REG_TRUE, y_pred=REG_PRED, kwargs={"delta": 0.5}),
    dict(module="losses", fn="binary_crossentropy", y_true=BIN_TRUE, y_pred=BIN_LOGITS,
         kwargs={"from_logits": True}),
    dict(module="losses", fn="categorical_crossentropy", y_true=CAT_TRUE, y_pred=CAT_LOGITS,
         kwargs={"from_logits": True, "label_smoothing": 0.1}),
    dict(module="losses", fn="sparse_categorical_crossentropy", y_true=CAT_LABELS,
         y_pred=CAT_PROB),
    dict(module="losses", fn="kl_divergence", y_true=CAT_SOFT, y_pred=CAT_PROB),
    dict(module="losses", fn="cosine_similarity", y_true=REG_TRUE, y_pred=REG_PRED),
    dict(module="losses", fn="categorical_hinge", y_true=CAT_TRUE, y_pred=CAT_LOGITS),
]
