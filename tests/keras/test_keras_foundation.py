"""eager.keras's foundation against Keras 3.15: activations (TF backend goldens), initializers
(numpy backend goldens: the same seeds give the same values), regularizers, constraints, and
the Layer base's contract (build, weights, training, losses, configs, errors)."""

import random

import numpy as np
import pytest

import eager
from eager import keras
from gradcheck import check_gradient

X = np.array([-7.0, -3.0, -1.5, -0.5, 0.0, 0.3, 1.0, 2.5, 8.0], dtype=np.float32)

# keras.activations.<name>(X) on the TensorFlow backend, Keras 3.15.
ACTIVATION_GOLDENS = {
    'relu': [0.0, 0.0, 0.0, 0.0, 0.0, 0.30000001192092896, 1.0, 2.5, 8.0],
    'leaky_relu': [-1.399999976158142, -0.6000000238418579, -0.30000001192092896, -0.10000000149011612, 0.0, 0.30000001192092896, 1.0, 2.5, 8.0],  # noqa: E501
    'relu6': [0.0, 0.0, 0.0, 0.0, 0.0, 0.30000001192092896, 1.0, 2.5, 6.0],
    'elu': [-0.9990881085395813, -0.9502129554748535, -0.7768698334693909, -0.39346933364868164, 0.0, 0.30000001192092896, 1.0, 2.5, 8.0],  # noqa: E501
    'selu': [-1.7564960718154907, -1.6705687046051025, -1.3658143281936646, -0.6917581558227539, 0.0, 0.3152103126049042, 1.0507010221481323, 2.6267526149749756, 8.405608177185059],  # noqa: E501
    'softplus': [0.0009114663698710501, 0.04858735576272011, 0.20141325891017914, 0.4740769863128662, 0.6931471824645996, 0.8543552160263062, 1.31326162815094, 2.578889846801758, 8.000335693359375],  # noqa: E501
    'softsign': [-0.875, -0.75, -0.6000000238418579, -0.3333333432674408, 0.0, 0.23076924681663513, 0.5, 0.7142857313156128, 0.8888888955116272],  # noqa: E501
    'soft_shrink': [-6.5, -2.5, -1.0, 0.0, 0.0, 0.0, 0.5, 2.0, 7.5],
    'sparse_plus': [0.0, 0.0, 0.0, 0.0625, 0.25, 0.42249998450279236, 1.0, 2.5, 8.0],
    'silu': [-0.006377358455210924, -0.14227759838104248, -0.2736383080482483, -0.1887703388929367, 0.0, 0.1723327338695526, 0.7310585379600525, 2.310354471206665, 7.997317314147949],  # noqa: E501
    'squareplus': [0.14005494117736816, 0.30277562141418457, 0.5, 0.7807763814926147, 1.0, 1.1611874103546143, 1.6180340051651, 2.850780963897705, 8.123106002807617],  # noqa: E501
    'gelu': [-8.958679284520876e-12, -0.004049696493893862, -0.10021080076694489, -0.1542687714099884, 0.0, 0.1853734254837036, 0.8413447141647339, 2.48447585105896, 8.0],  # noqa: E501
    'celu': [-0.9990881085395813, -0.9502129554748535, -0.7768698334693909, -0.39346933364868164, 0.0, 0.30000001192092896, 1.0, 2.5, 8.0],  # noqa: E501
    'tanh': [-0.9999983310699463, -0.9950547218322754, -0.9051483273506165, -0.46211713552474976, 0.0, 0.29131263494491577, 0.7615941762924194, 0.9866143465042114, 1.0],  # noqa: E501
    'tanh_shrink': [-6.000001907348633, -2.0049452781677246, -0.5948516726493835, -0.037882864475250244, 0.0, 0.008687376976013184, 0.23840582370758057, 1.5133856534957886, 7.0],  # noqa: E501
    'hard_tanh': [-1.0, -1.0, -1.0, -0.5, 0.0, 0.30000001192092896, 1.0, 1.0, 1.0],
    'hard_shrink': [-7.0, -3.0, -1.5, 0.0, 0.0, 0.0, 1.0, 2.5, 8.0],
    'sigmoid': [0.0009110512328334153, 0.04742586612701416, 0.18242552876472473, 0.3775406777858734, 0.5, 0.574442446231842, 0.7310585379600525, 0.9241418242454529, 0.9996646642684937],  # noqa: E501
    'exponential': [0.0009118819725699723, 0.049787070602178574, 0.22313016653060913, 0.6065306663513184, 1.0, 1.3498587608337402, 2.7182817459106445, 12.182494163513184, 2980.9580078125],  # noqa: E501
    'hard_sigmoid': [0.0, 0.0, 0.25, 0.4166666567325592, 0.5, 0.550000011920929, 0.6666666865348816, 0.9166666865348816, 1.0],  # noqa: E501
    'log_sigmoid': [-7.000911712646484, -3.0485870838165283, -1.7014132738113403, -0.9740769267082214, -0.6931471824645996, -0.5543552041053772, -0.3132616877555847, -0.07888974249362946, -0.00033540636650286615],  # noqa: E501
    'sparse_sigmoid': [0.0, 0.0, 0.0, 0.25, 0.5, 0.6499999761581421, 1.0, 1.0, 1.0],
    'hard_silu': [-0.0, -0.0, -0.375, -0.2083333283662796, 0.0, 0.16500000655651093, 0.6666666865348816, 2.2916667461395264, 8.0],  # noqa: E501
    'linear': [-7.0, -3.0, -1.5, -0.5, 0.0, 0.30000001192092896, 1.0, 2.5, 8.0],
    'mish': [-0.0063802627846598625, -0.14564748108386993, -0.29809972643852234, -0.22074377536773682, 0.0, 0.20800139009952545, 0.8650984168052673, 2.4713923931121826, 8.0],  # noqa: E501
    'softmax': [3.0405300321945106e-07, 1.660073030507192e-05, 7.439930777763948e-05, 0.00020223828323651105, 0.0003334346110932529, 0.0004500896902754903, 0.0009063691832125187, 0.004062064923346043, 0.9939544796943665],  # noqa: E501
    'log_softmax': [-15.006063461303711, -11.006063461303711, -9.506063461303711, -8.506063461303711, -8.006063461303711, -7.706063747406006, -7.006063938140869, -5.506063938140869, -0.006063873879611492],  # noqa: E501
}
ACTIVATION_CALL_GOLDENS = [
    (lambda a, x: a.gelu(x, approximate=True), [-0.0, -0.0036374330520629883, -0.10042843222618103, -0.1542859971523285, 0.0, 0.18537093698978424, 0.8411920070648193, 2.4849157333374023, 8.0]),  # noqa: E501
    (lambda a, x: a.relu(x, negative_slope=0.1, max_value=2.0, threshold=0.5), [-0.75, -0.3499999940395355, -0.20000000298023224, -0.10000000149011612, -0.05000000074505806, -0.019999999552965164, 1.0, 2.0, 2.0]),  # noqa: E501
    (lambda a, x: a.relu(x, max_value=6.0), [0.0, 0.0, 0.0, 0.0, 0.0, 0.30000001192092896, 1.0, 2.5, 6.0]),  # noqa: E501
    (lambda a, x: a.elu(x, alpha=0.5), [-0.49954405426979065, -0.47510647773742676, -0.38843491673469543, -0.19673466682434082, 0.0, 0.30000001192092896, 1.0, 2.5, 8.0]),  # noqa: E501
    (lambda a, x: a.threshold(x, 0.2, -1.0), [-1.0, -1.0, -1.0, -1.0, -1.0, 0.30000001192092896, 1.0, 2.5, 8.0]),  # noqa: E501
    (lambda a, x: a.glu(np.arange(8, dtype="float32").reshape(2, 4) / 4), [[0.0, 0.16979467868804932], [0.8175745010375977, 1.0649409294128418]]),  # noqa: E501
]


@pytest.mark.parametrize("name", sorted(ACTIVATION_GOLDENS))
def test_activations_equal_keras(name):
    got = keras.activations.get(name)(X)
    np.testing.assert_allclose(np.asarray(got), ACTIVATION_GOLDENS[name], rtol=2e-6, atol=1e-7)
    assert got.dtype == eager.float32


@pytest.mark.parametrize("case", range(len(ACTIVATION_CALL_GOLDENS)))
def test_activation_arguments_equal_keras(case):
    fn, expected = ACTIVATION_CALL_GOLDENS[case]
    np.testing.assert_allclose(np.asarray(fn(keras.activations, X)), expected, rtol=2e-6,
                               atol=1e-7)


@pytest.mark.parametrize("name", ["relu", "elu", "selu", "softplus", "softsign", "silu",
                                  "squareplus", "gelu", "celu", "tanh", "sigmoid", "mish",
                                  "softmax", "log_softmax", "hard_silu", "sparse_plus"])
def test_activation_gradients_match_finite_differences(name):
    fn = keras.activations.get(name)
    x = np.array([[-2.2, -0.7, 0.4, 1.3], [0.9, -1.6, 2.7, -0.2]])  # away from kinks
    check_gradient(fn, [x], rtol=1e-5, atol=1e-6)


def test_activations_trace_and_resolve_like_keras():
    @eager.function
    def f(x):
        return keras.activations.selu(x) + keras.activations.get("swish")(x)
    np.testing.assert_allclose(np.asarray(f(X)), np.asarray(keras.activations.selu(X)) +
                               np.asarray(keras.activations.silu(X)), rtol=1e-6)
    assert keras.activations.get(None) is keras.activations.linear
    assert keras.activations.serialize(keras.activations.relu) == "relu"
    assert keras.activations.serialize(keras.activations.swish) == "silu"
    assert keras.activations.deserialize("relu") is keras.activations.relu
    with pytest.raises(ValueError, match="Could not interpret activation function identifier: "
                                         "nope"):
        keras.activations.get("nope")
    with pytest.raises(ValueError, match="divisible by 2"):
        keras.activations.glu(X)


# Keras 3.15 on the numpy backend (KERAS_BACKEND=numpy): initializer(shape) for these seeds.
INITIALIZER_GOLDENS = [
    (lambda i: i.GlorotUniform(seed=3), (4, 3), [[-0.7672290205955505, -0.48733198642730713, 0.557852029800415], [0.1521349996328354, -0.7515280246734619, -0.12382499873638153], [-0.03878900036215782, -0.6300410032272339, 0.43435201048851013], [-0.7153400182723999, -0.20140600204467773, 0.030997000634670258]]),  # noqa: E501
    (lambda i: i.GlorotNormal(seed=3), (4, 3), [[0.25406599044799805, -0.3450169861316681, -0.2750619947910309], [-0.1310119926929474, -0.14093799889087677, -0.525763988494873], [0.13720400631427765, -0.21428300440311432, -0.17092999815940857], [-0.40595200657844543, -0.6411839723587036, -0.23747800290584564]]),  # noqa: E501
    (lambda i: i.HeUniform(seed=5), (3, 2, 4), [[[0.6100059747695923, 0.6158819794654846, 0.030650999397039413, -0.428396999835968], [-0.8921390175819397, -0.23326200246810913, -0.18305400013923645, -0.9094499945640564]], [[-0.9024850130081177, 0.9983519911766052, 0.30473798513412476, -0.5309799909591675], [-0.13010500371456146, 0.9483720064163208, 0.7953550219535828, 0.6884620189666748]], [[-0.21519100666046143, -0.013953999616205692, 0.3533790111541748, -0.8783950209617615], [0.1111920028924942, -0.45709699392318726, 0.759302020072937, -0.8715710043907166]]]),  # noqa: E501
    (lambda i: i.HeNormal(seed=5), (3, 2, 4), [[[-0.5263550281524658, -0.869255006313324, -0.1630139946937561, 0.2759630084037781], [0.7456539869308472, 0.07200700044631958, -0.36273500323295593, -0.515097975730896]], [[0.49144598841667175, 1.073004961013794, 0.17903399467468262, -0.8095059990882874], [-0.6289659738540649, 1.0501869916915894, 0.13316400349140167, -1.1369019746780396]], [[-0.05493500083684921, -0.7634940147399902, -0.4130389988422394, -0.3203069865703583], [-0.4681900143623352, 0.36321499943733215, -0.04140700027346611, -0.38687899708747864]]]),  # noqa: E501
    (lambda i: i.LecunUniform(seed=7), (4, 3), [[0.21667200326919556, 0.6879940032958984, 0.4775019884109497], [-0.4759550094604492, -0.34612199664115906, 0.6470140218734741], [-0.856905996799469, 0.5563840270042419, 0.5145390033721924], [-0.05553799867630005, -0.341158002614975, -0.38377800583839417]]),  # noqa: E501
    (lambda i: i.LecunNormal(seed=7), (4, 3), [[0.0006990000256337225, 0.16981400549411774, -0.15582600235939026], [-0.5062329769134521, -0.25844600796699524, -0.5636749863624573], [0.03418700024485588, 0.7618100047111511, -0.2797819972038269], [-0.35269299149513245, 0.278438001871109, 0.20286299288272858]]),  # noqa: E501
    (lambda i: i.RandomNormal(mean=1.0, stddev=0.5, seed=11), (4, 3), [[1.0170960426330566, 1.6798739433288574, 1.612360954284668], [0.744845986366272, 0.8510149717330933, 0.7363079786300659], [1.284862995147705, 0.9719679951667786, 1.3734430074691772], [0.07633800059556961, 1.7832740545272827, 0.9517840147018433]]),  # noqa: E501
    (lambda i: i.RandomUniform(minval=-2, maxval=3, seed=11), (4, 3), [[-1.3571490049362183, 0.4963890016078949, 1.007491946220398], [-1.8565549850463867, -1.2603700160980225, 2.641055107116699], [-1.6478970050811768, -1.3511300086975098, 2.7416419982910156], [1.1094180345535278, -0.15503400564193726, 0.5569499731063843]]),  # noqa: E501
    (lambda i: i.TruncatedNormal(stddev=2.0, seed=13), (4, 3), [[3.653512954711914, 1.9161280393600464, 0.139274001121521], [2.6364998817443848, 0.7712579965591431, 3.6545169353485107], [0.06348799914121628, -1.032459020614624, 1.1609699726104736], [0.8642140030860901, -0.7136790156364441, -0.4946080148220062]]),  # noqa: E501
    (lambda i: i.VarianceScaling(scale=3.0, mode="fan_out", distribution="untruncated_normal", seed=17), (4, 3), [[1.1012619733810425, 0.3384310007095337, -0.5399720072746277], [-1.260241985321045, -1.8946210145950317, 0.018637999892234802], [-0.8105670213699341, -0.872156023979187, -0.22197000682353973], [-0.05184600129723549, -2.276782989501953, 0.9251469969749451]]),  # noqa: E501
    (lambda i: i.Orthogonal(gain=2.0, seed=19), (4, 3), [[-0.7174239754676819, 1.6322040557861328, 0.4999000132083893], [-1.1985290050506592, -0.575776994228363, -1.195281982421875], [1.1506799459457397, 0.8316640257835388, -1.3918579816818237], [0.8513320088386536, -0.5592190027236938, 0.6197850108146667]]),  # noqa: E501
]


@pytest.mark.parametrize("case", range(len(INITIALIZER_GOLDENS)))
def test_seeded_initializers_equal_keras_numpy_backend(case):
    make, shape, expected = INITIALIZER_GOLDENS[case]
    init = make(keras.initializers)
    value = init(shape)
    assert value.dtype == eager.float32 and tuple(value.shape) == shape
    np.testing.assert_allclose(np.asarray(value), expected, rtol=1e-5, atol=2e-6)
    # An integer seed is a fixed draw (Keras 3): the same values on every call.
    np.testing.assert_array_equal(np.asarray(init(shape)), np.asarray(value))


def test_seed_generators_and_unseeded_initializers():
    gen = keras.SeedGenerator(4)
    init = keras.initializers.RandomNormal(seed=gen)
    a, b = np.asarray(init((3,))), np.asarray(init((3,)))
    assert not np.array_equal(a, b)
    again = keras.initializers.RandomNormal(seed=keras.SeedGenerator(4))
    np.testing.assert_array_equal(np.asarray(again((3,))), a)
    random.seed(1234)
    first = np.asarray(keras.initializers.GlorotUniform()((5, 5)))
    random.seed(1234)
    np.testing.assert_array_equal(np.asarray(keras.initializers.GlorotUniform()((5, 5))), first)
    assert not np.array_equal(np.asarray(keras.initializers.GlorotUniform()((5, 5))), first)


def test_constant_initializers_and_dtypes():
    I = keras.initializers  # noqa: E741, N806
    assert np.asarray(I.Zeros()((2,), dtype="int32")).tolist() == [0, 0]
    assert I.Ones()((2, 2), dtype="float64").dtype == eager.float64
    np.testing.assert_array_equal(np.asarray(I.Constant(3.5)((2,))), [3.5, 3.5])
    np.testing.assert_array_equal(np.asarray(I.Identity(2.0)((2, 3))),
                                  [[2, 0, 0], [0, 2, 0]])
    np.testing.assert_array_equal(np.asarray(I.get(np.arange(4.0).reshape(2, 2))((2, 2))),
                                  [[0, 1], [2, 3]])
    with pytest.raises(ValueError, match=r"Expected `shape` to be \(2, 2\)"):
        I.get(np.ones((2, 2)))((3,))
    with pytest.raises(ValueError, match="Identity matrix initializer can only be used for 2D"):
        I.Identity()((3,))
    with pytest.raises(ValueError, match="at least two-dimensional"):
        I.Orthogonal()((3,))
    with pytest.raises(ValueError, match="Argument `scale` must be positive float"):
        I.VarianceScaling(scale=0)
    with pytest.raises(ValueError, match="Could not interpret initializer identifier"):
        I.get(3)
    with pytest.raises(ValueError, match="Unknown initializer: 'Nope'"):
        I.get("Nope")


def test_initializer_configs_equal_keras():
    I = keras.initializers  # noqa: E741, N806
    assert I.serialize(I.HeNormal(seed=2)) == {
        'module': 'keras.initializers', 'class_name': 'HeNormal',
        'config': {'seed': 2, 'input_axes': None, 'output_axes': None}, 'registered_name': None}
    assert I.serialize(I.VarianceScaling(scale=2.0, mode="fan_avg", distribution="uniform")) == {
        'module': 'keras.initializers', 'class_name': 'VarianceScaling',
        'config': {'seed': None, 'scale': 2.0, 'mode': 'fan_avg', 'distribution': 'uniform',
                   'input_axes': None, 'output_axes': None}, 'registered_name': None}
    assert I.serialize(I.Constant(3.0)) == {'module': 'keras.initializers',
                                             'class_name': 'Constant', 'config': {'value': 3.0},
                                             'registered_name': None}
    for name, cls in [("glorot_uniform", I.GlorotUniform), ("he_normal", I.HeNormal),
                      ("zero", I.Zeros), ("uniform", I.RandomUniform),
                      ("Orthogonal", I.Orthogonal)]:
        assert type(I.get(name)) is cls
    rebuilt = I.get(I.serialize(I.TruncatedNormal(stddev=2.0, seed=13)))
    np.testing.assert_allclose(np.asarray(rebuilt((4, 3))), INITIALIZER_GOLDENS[8][2], rtol=1e-5)


W = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], dtype=np.float32)


def test_regularizers_and_constraints_equal_keras():
    R, C = keras.regularizers, keras.constraints  # noqa: N806
    assert float(R.L1(0.3)(W)) == pytest.approx(1.8000000715255737, rel=1e-6)
    assert float(R.L2(0.2)(W)) == pytest.approx(1.625, rel=1e-6)
    assert float(R.L1L2(l1=0.1, l2=0.05)(W)) == pytest.approx(1.006250023841858, rel=1e-6)
    assert float(R.OrthogonalRegularizer(0.5)(W)) == pytest.approx(0.12869787216186523, rel=1e-5)
    assert float(R.OrthogonalRegularizer(0.5, mode="columns")(W)) == \
        pytest.approx(0.18454013764858246, rel=1e-5)
    expected = {
        "MaxNorm": (C.MaxNorm(1.0), [[0.3162277340888977, -0.9701424241065979, 0.936329185962677], [0.9486832022666931, 0.24253560602664948, -0.3511234521865845]]),  # noqa: E501
        "MaxNorm1": (C.MaxNorm(2.0, axis=1), [[0.4364357590675354, -0.8728715181350708, 1.7457430362701416], [1.4999998807907104, 0.2499999850988388, -0.7499999403953552]]),  # noqa: E501
        "MinMax": (C.MinMaxNorm(0.5, 1.0, rate=0.5), [[0.40811383724212646, -0.9850711822509766, 1.4681645631790161], [1.2243415117263794, 0.24626779556274414, -0.5505617260932922]]),  # noqa: E501
        "NonNeg": (C.NonNeg(), [[0.5, 0.0, 2.0], [1.5, 0.25, 0.0]]),
        "Unit": (C.UnitNorm(axis=1), [[0.2182178795337677, -0.4364357590675354, 0.8728715181350708], [0.8846516609191895, 0.14744193851947784, -0.4423258304595947]]),  # noqa: E501
    }
    for name, (constraint, values) in expected.items():
        np.testing.assert_allclose(np.asarray(constraint(W)), values, rtol=2e-6, err_msg=name)
    assert R.serialize(R.L2(0.2)) == {'module': 'keras.regularizers', 'class_name': 'L2',
                                      'config': {'l2': 0.2}, 'registered_name': None}
    assert R.serialize(R.L1L2(l1=0.1)) == {'module': 'keras.regularizers', 'class_name': 'L1L2',
                                           'config': {'l1': 0.1, 'l2': 0.0},
                                           'registered_name': None}
    for bad in (-1, "x"):
        with pytest.raises(ValueError, match=f"Invalid value for argument l2: expected a "
                                             f"non-negative float.Received: l2={bad}"):
            R.L2(bad)
    assert type(R.get("l2")) is R.L2 and R.get(None) is None
    assert type(C.get("non_neg")) is C.NonNeg


# -- the Layer base ------------------------------------------------------------------------

class Linear(keras.layers.Layer):
    def __init__(self, units, act="relu", **kw):
        super().__init__(**kw)
        self.units = units
        self.act = act

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), name="w")
        self.m = self.add_weight(shape=(self.units,), initializer="zeros", trainable=False,
                                 name="m")
        self.b = self.add_weight(shape=(self.units,), initializer="zeros", name="b",
                                 regularizer=keras.regularizers.L2(0.5))

    def call(self, x):
        return eager.matmul(x, self.w) + self.b


class Mode(keras.layers.Layer):
    """Reports the `training` value each call saw."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.seen = []

    def call(self, x, training=None):
        self.seen.append(training)
        return x


class Outer(keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.second = Linear(2)
        self.first = Linear(3)
        self.mode = Mode()

    def call(self, x, training=False):
        return self.second(self.mode(self.first(x)))


def test_lazy_build_weight_order_paths_and_configs_equal_keras():
    layer = Linear(2)
    assert not layer.built and layer.weights == []
    layer(np.ones((1, 3), "float32"))
    assert layer.built
    # Keras 3.15: paths ['linear/w', 'linear/b', 'linear/m'] for a layer named "linear".
    assert [v.path for v in layer.weights] == [f"{layer.name}/w", f"{layer.name}/b",
                                               f"{layer.name}/m"]
    assert [v.name for v in layer.trainable_weights] == ["w", "b"]
    assert [v.name for v in layer.non_trainable_weights] == ["m"]
    assert all(isinstance(v, eager.Variable) for v in layer.weights)
    assert layer.get_config() == {
        'units': 2, 'act': 'relu', 'trainable': True,
        'dtype': {'module': 'keras', 'class_name': 'DTypePolicy', 'config': {'name': 'float32'},
                  'registered_name': None}}
    assert keras.layers.Layer(name="x", trainable=False).get_config() == {
        'name': 'x', 'activity_regularizer': None, 'trainable': False,
        'dtype': {'module': 'keras', 'class_name': 'DTypePolicy', 'config': {'name': 'float32'},
                  'registered_name': None}, 'autocast': True}
    assert repr(layer) == f"<Linear name={layer.name}, built=True>"
    assert layer.count_params() == 3 * 2 + 2 + 2
    rebuilt = Linear.from_config(layer.get_config())
    assert rebuilt.units == 2 and rebuilt.act == "relu"


def test_names_are_unique_per_class_and_reset_by_clear_session():
    keras.backend.clear_session()
    assert [Linear(1).name for _ in range(3)] == ["linear", "linear_1", "linear_2"]
    assert keras.layers.Layer(name="given").name == "given"
    keras.backend.clear_session()
    assert Linear(1).name == "linear"
    with pytest.raises(ValueError, match="cannot contain character `/`"):
        keras.layers.Layer(name="a/b")


def test_sublayers_in_assignment_order_and_freezing():
    outer = Outer()
    outer(np.ones((2, 4), "float32"))
    names = [v.path for v in outer.weights]
    second, first = outer.second.name, outer.first.name
    assert names == [f"{outer.name}/{second}/w", f"{outer.name}/{second}/b",
                     f"{outer.name}/{second}/m", f"{outer.name}/{first}/w",
                     f"{outer.name}/{first}/b", f"{outer.name}/{first}/m"]
    outer.trainable = False
    assert outer.trainable_weights == [] and len(outer.non_trainable_weights) == 6
    assert not outer.first.w.trainable and not outer.first.trainable
    with eager.GradientTape() as tape:
        y = eager.reduce_sum(outer(np.ones((2, 4), "float32")))
    assert tape.gradient(y, outer.first.w) is None
    outer.trainable = True
    assert len(outer.trainable_weights) == 4 and outer.first.w.trainable
    assert not outer.first.m.trainable  # created non-trainable: stays so


def test_training_flows_from_the_outermost_call():
    outer = Outer()
    x = np.ones((1, 4), "float32")
    outer(x)                  # call's default training=False is handed down
    outer(x, training=True)
    outer.mode(x)             # alone: its own default (None)
    outer.mode(x, training=True)
    assert outer.mode.seen == [False, True, None, True]


def test_losses_are_cleared_per_outermost_call_and_include_regularizers():
    class AddsLoss(keras.layers.Layer):
        def call(self, x):
            self.add_loss(eager.reduce_sum(x))
            return x

    class Holder(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.inner = AddsLoss()
            self.lin = Linear(1)

        def call(self, x):
            return self.lin(self.inner(x))

    h = Holder()
    h(np.ones((1, 2), "float32"))
    h.lin.b.assign([2.0])
    losses = [float(v) for v in h.losses]
    assert losses == [2.0, 0.5 * 4.0]
    h(np.full((1, 2), 3.0, "float32"))
    assert [float(v) for v in h.losses] == [6.0, 2.0]
    with pytest.raises(ValueError, match="`add_loss\\(\\)` can only be called from inside"):
        h.add_loss(1.0)


def test_inputs_are_converted_and_autocast():
    layer = Linear(2, dtype="float64")
    y = layer(np.ones((1, 3), "float32"))
    assert y.dtype == eager.float64 and layer.w.dtype == eager.float64
    assert layer.dtype == layer.compute_dtype == "float64"
    assert Linear(2)(np.ones((1, 3))).dtype == eager.float32  # float64 arrays are cast


def test_keras_errors():
    layer = Linear(2)
    with pytest.raises(ValueError, match="Only input tensors may be passed as positional "
                                         "arguments. The following argument value should be "
                                         "passed as a keyword argument: 3 "):
        layer(np.ones((1, 3), "float32"), 3)

    class Bad(keras.layers.Layer):
        def __init__(self):
            pass
    with pytest.raises(RuntimeError, match="you forgot to call `super\\(\\).__init__\\(\\)`"):
        Bad()(np.ones(2))
    with pytest.raises(ValueError, match="Unrecognized keyword arguments passed to Layer: "
                                         "{'foo': 1}"):
        keras.layers.Layer(foo=1)
    with pytest.raises(ValueError, match="`name` must be passed as a keyword argument"):
        layer.add_weight("kernel", (2,))

    class NotSerializable(keras.layers.Layer):
        def __init__(self, fn):
            super().__init__()
            self.fn = fn
    with pytest.raises(NotImplementedError, match="Object NotSerializable was created by "
                                                  "passing\nnon-serializable argument values"):
        NotSerializable(lambda x: x).get_config()


def test_input_spec_is_checked_with_keras_messages():
    class Needs4(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.input_spec = keras.InputSpec(ndim=2, axes={-1: 4})

        def call(self, x):
            return x
    layer = Needs4()
    layer(np.ones((2, 4), "float32"))
    with pytest.raises(ValueError, match="Input 0 with name 'None' of layer '.*' is "
                                         "incompatible with the layer: expected ndim=2, found "
                                         "ndim=3. Full shape received: \\(1, 2, 4\\)"):
        layer(np.ones((1, 2, 4), "float32"))
    with pytest.raises(ValueError, match="expected axis -1 of input shape to have value 4, but "
                                         "received input with shape \\(2, 3\\)"):
        layer(np.ones((2, 3), "float32"))
    assert repr(keras.InputSpec(ndim=2, axes={-1: 4})) == "InputSpec(ndim=2, axes={-1: 4})"


def test_symbolic_calls_give_shapes_and_record_nodes():
    outer = Outer()
    x = keras.KerasTensor((None, 4))
    y = outer(x)
    assert isinstance(y, keras.KerasTensor) and y.shape == (None, 2) and y.dtype == "float32"
    node = outer._inbound_nodes[0]
    assert y._keras_history.operation is outer and node.input_tensors == [x]
    assert outer.built and len(outer.weights) == 6
    assert outer._losses == []
    with pytest.raises(TypeError):
        bool(x)
    assert repr(keras.KerasTensor((None, 3), name="t")) == \
        "<KerasTensor shape=(None, 3), dtype=float32, sparse=False, ragged=False, name=t>"


def test_a_layer_first_called_inside_a_function_gets_eager_weights_and_traces_once():
    layer = Linear(3)
    traces = []

    @eager.function
    def step(x):
        traces.append(1)
        with eager.GradientTape() as tape:
            loss = eager.reduce_sum(layer(x) ** 2)
        return loss, tape.gradient(loss, layer.trainable_weights)

    x = np.random.default_rng(0).normal(size=(4, 5)).astype("float32")
    loss, grads = step(x)
    step(x + 1)
    assert len(traces) == 1
    w, b = layer.w.numpy(), layer.b.numpy()  # real, eagerly initialised values
    y = x @ w + b
    assert float(loss) == pytest.approx(float((y ** 2).sum()), rel=1e-5)
    np.testing.assert_allclose(np.asarray(grads[0]), x.T @ (2 * y), rtol=1e-4, atol=1e-5)


def test_get_and_set_weights():
    layer = Linear(2)
    layer(np.ones((1, 3), "float32"))
    values = [np.full((3, 2), 0.5, "float32"), np.array([1.0, 2.0], "float32"),
              np.zeros(2, "float32")]
    layer.set_weights(values)
    for got, want in zip(layer.get_weights(), values):
        np.testing.assert_array_equal(got, want)
    before = layer.get_weights()
    with pytest.raises(ValueError, match="weight shape \\(2,\\) is not compatible with "
                                         "provided weight shape \\(3,\\)"):
        layer.set_weights([np.ones((3, 2)), np.ones(3), np.ones(2)])
    for got, want in zip(layer.get_weights(), before):  # nothing half-applied
        np.testing.assert_array_equal(got, want)


def test_tf_losses_metrics_initializers_are_keras_modules():
    assert eager.losses is keras.losses and eager.metrics is keras.metrics
    assert eager.initializers is keras.initializers
    assert eager.keras.optimizers.Adam is eager.optimizers.Adam


def test_softmax_and_sigmoid_outputs_let_crossentropy_use_their_logits():
    # Keras 3 (TF backend): categorical_crossentropy([[1, 0, 0]], softmax([[1, 2, 30]])) == 29.0;
    # computed from the clipped probability it would be -log(1e-7) = 16.1.
    y = keras.activations.softmax(eager.constant([[1.0, 2.0, 30.0]]))
    assert float(keras.losses.categorical_crossentropy([[1.0, 0, 0]], y)[0]) == \
        pytest.approx(29.0, rel=1e-6)
    p = keras.activations.sigmoid(eager.constant([[-40.0]]))
    assert float(keras.losses.binary_crossentropy([[1.0]], p)[0]) == pytest.approx(40.0, rel=1e-5)


def test_optimizers_update_layer_weights_and_apply_their_constraints():
    layer = keras.layers.Dense(3, kernel_constraint=keras.constraints.NonNeg())
    model = keras.Sequential([keras.Input((4,)), layer])
    opt = keras.optimizers.SGD(0.5, momentum=0.9)
    x = np.random.default_rng(1).random((8, 4)).astype("float32")
    for _ in range(2):
        with eager.GradientTape() as tape:
            loss = eager.reduce_sum(model(x))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
    assert layer.kernel.numpy().min() >= 0.0  # the constraint ran after each update
    np.testing.assert_allclose(layer.bias.numpy(), -0.5 * 8 * (1 + 1.9), rtol=1e-6)
    # Keras 3: slots are named after the weight's path.
    assert [v.name.split(":")[0] for v in opt.variables] == [
        "iteration", "learning_rate", f"{model.name}_{layer.name}_kernel_momentum",
        f"{model.name}_{layer.name}_bias_momentum"]


def test_errors_in_call_carry_the_innermost_layers_arguments_as_keras():
    class Inner(keras.layers.Layer):
        def call(self, x, flag=True):
            return eager.matmul(x, eager.ones((3, 3)))

    class Outer(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.inner = Inner()

        def call(self, x, training=None):
            return self.inner(x)

    # Keras 3.15 (TF backend) raises InvalidArgumentError with this text (its op message
    # differs: TensorFlow's kernel text).
    with pytest.raises(eager.errors.InvalidArgumentError) as info:
        Outer()(eager.ones((1, 4)))
    text = str(info.value)
    assert text.startswith("Exception encountered when calling Inner.call().\n\n\x1b[1mMatMul: ")
    assert text.endswith("\x1b[0m\n\nArguments received by Inner.call():\n"
                         "  • x=eager.Tensor(shape=(1, 4), dtype=float32)\n  • flag=True")
    assert text.count("Exception encountered") == 1

    class Raises(keras.layers.Layer):
        def call(self, x, n=2):
            raise KeyError("boom")
    with pytest.raises(KeyError) as info:
        Raises()(eager.ones((2,)), n=5)
    assert info.value.args[0] == (
        "Exception encountered when calling Raises.call().\n\n\x1b[1mboom\x1b[0m\n\n"
        "Arguments received by Raises.call():\n"
        "  • x=eager.Tensor(shape=(2,), dtype=float32)\n  • n=5")
