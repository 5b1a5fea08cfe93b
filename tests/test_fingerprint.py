"""`eager.strings.to_hash_bucket_fast` / `to_hash_bucket_strong` against TensorFlow 2.21's
values: FarmHash's Fingerprint64 and SipHash-2-4 bit for bit, at every length class boundary
of the hash (0..16, 17..32, 33..64 bytes, the 64-byte loop and its tail)."""

import pytest

import eager as tf

# The strings TensorFlow hashed: short ones, then bytes (7 i + 3) mod 256 of each length in
# _LENGTHS, then a few with non-ASCII bytes.
_LENGTHS = [15, 16, 17, 24, 31, 32, 33, 48, 63, 64, 65, 100, 127, 128, 129, 200, 255, 256, 1000]
STRINGS = ([b"", b"a", b"ab", b"abc", b"abcd", b"hello", b"1234567", b"12345678", b"123456789",
            b"0123456789abcdef", b"0123456789abcdefg"]
           + [bytes((i * 7 + 3) % 256 for i in range(n)) for n in _LENGTHS]
           + ["h\u00e9llo w\u00f6rld".encode(), b"\x00", b"\xff" * 70])

# tf.strings.to_hash_bucket_fast(STRINGS, 2**62)
FAST_2_62 = [
    1936946117179621455, 3694432073954588131, 3066228220894225694, 2640714258260161385,
    1897425971756105985, 3786372426573024488, 2791685920142820519, 3430003927990384362,
    2490690402781879402, 1493332391325024359, 2800675501336285770, 3216519055487487771,
    4528948699509268840, 671476038512894247, 3530932784303194834, 4421592475991032779,
    2684005117763720424, 166524871036432617, 2844150241367986207, 1604338371932276380,
    389040666157116578, 4026365912879116516, 2168416630947060488, 766062817087798142,
    2767501098359636593, 1738507677182238851, 3274404668230217687, 1320170673254435776,
    2463513541873173921, 2315272888042904652, 4390285103997208723, 4494688008148699988,
    2464969561578978608,
]
# tf.strings.to_hash_bucket_strong(STRINGS, 2**62, [123, 456])
STRONG_2_62 = [
    887865449656487406, 2150915142212405420, 1186974370200342541, 742242908378057305,
    2859666304309786263, 3917950836011642579, 1565945825611357019, 4004217248140371583,
    2685035122901458342, 4109648820432337367, 3659224312416206898, 1576782027984444912,
    615302407742573459, 3935373110045391555, 1983393707535005265, 2185328019506739611,
    3304998457821333384, 2335401195945750961, 4003741005640328877, 107566666084863373,
    4100935866612181844, 2716473671749186331, 1555074136712040095, 4156452004001681583,
    4069014203986407638, 4568462924523825563, 87197086706714439, 457613086527031740,
    3001157670476496771, 1788915093612075193, 1678984573145762008, 2912487405543210328,
    2274996693399738087,
]
# tf.strings.to_hash_bucket_strong(STRINGS, 1000, [2**63 - 1, 7])
STRONG_1000 = [
    143, 876, 742, 214, 946, 276, 203, 81, 775, 194, 679, 910, 609, 198, 88, 548, 363, 743, 647,
    767, 773, 14, 816, 300, 186, 230, 519, 492, 291, 98, 259, 693, 989,
]


def test_to_hash_bucket_fast_matches_tensorflow():
    out = tf.strings.to_hash_bucket_fast(tf.constant(STRINGS), 2**62)
    assert out.dtype == tf.int64 and out.shape == [len(STRINGS)]
    assert out.numpy().tolist() == FAST_2_62


def test_to_hash_bucket_strong_matches_tensorflow():
    assert tf.strings.to_hash_bucket_strong(STRINGS, 2**62, [123, 456]).numpy().tolist() == \
        STRONG_2_62
    assert tf.strings.to_hash_bucket_strong(STRINGS, 1000, [2**63 - 1, 7]).numpy().tolist() == \
        STRONG_1000


def test_to_hash_bucket_keeps_shape_and_small_buckets():
    out = tf.strings.to_hash_bucket_fast([["a", "b"], ["c", ""]], 5)
    assert out.shape == [2, 2] and out.numpy().tolist() == [[4, 2], [2, 3]]
    scalar = tf.strings.to_hash_bucket_fast("abc", 5)
    assert scalar.shape == [] and int(scalar) == 0


def test_to_hash_bucket_in_a_function_and_dataset():
    f = tf.function(lambda s: tf.strings.to_hash_bucket_fast(s, 2**62))
    assert f(tf.constant(STRINGS[:5])).numpy().tolist() == FAST_2_62[:5]
    ds = tf.data.Dataset.from_tensor_slices(STRINGS[:4]).map(
        lambda s: tf.strings.to_hash_bucket_fast(s, 2**62))
    assert [int(v) for v in ds] == FAST_2_62[:4]


def test_to_hash_bucket_errors_are_tensorflows():
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Value for attr 'num_buckets' of 0 must be at least minimum 1"):
        tf.strings.to_hash_bucket_fast(["a"], 0)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Value for attr 'num_buckets' of 0 must be at least minimum 1"):
        tf.strings.to_hash_bucket_strong(["a"], 0, [1, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Key must have 2 elements"):
        tf.strings.to_hash_bucket_strong(["a"], 3, [1])
    with pytest.raises((TypeError, tf.errors.InvalidArgumentError)):
        tf.strings.to_hash_bucket_fast(tf.constant([1]), 3)
