"""TensorFlow 2's small top-level names and helpers: `group`, `get_logger`, `version`,
`type_spec_from_value`, the rest of `tf.nest`, and `tf.test.TestCase`/`main` (behaviour as TF
2.21's)."""

import collections
import logging
import unittest

import numpy as np
import pytest

import eager


def test_group_get_logger_version_type_spec():
    a = eager.Variable(1.0)
    assert eager.group(a.assign_add(1.0), a.assign_add(2.0)) is None
    assert a.numpy() == 4.0

    @eager.function
    def f():
        eager.group(a.assign_add(1.0))
        return a.read_value()

    assert f().numpy() == 5.0
    logger = eager.get_logger()
    assert isinstance(logger, logging.Logger) and logger.name == "tensorflow"
    assert eager.version.VERSION == eager.__version__ and isinstance(eager.version.GIT_VERSION,
                                                                     str)
    spec = eager.type_spec_from_value(eager.constant([[1, 2]]))
    assert spec == eager.TensorSpec([1, 2], eager.int32)
    assert eager.type_spec_from_value([1.0, 2.0]) == eager.TensorSpec([2], eager.float32)


def test_nest_completions():
    nest = eager.nest
    assert nest.map_structure(lambda x, y: x + y, [1, (2, 3)], [10, (20, 30)]) == [11, (22, 33)]
    nest.assert_same_structure({"a": 1, "b": [2]}, {"a": 3, "b": [4]})
    with pytest.raises(ValueError, match="don't have the same nested structure"):
        nest.assert_same_structure([1, 2], [1, [2]])
    with pytest.raises(TypeError, match="same sequence type"):
        nest.assert_same_structure([1, 2], (1, 2))
    nest.assert_same_structure([1, 2], (1, 2), check_types=False)
    # TF 2.21: map_structure_up_to([None, None], len, [[1, 2], [3]]) == [2, 1]
    assert nest.map_structure_up_to([None, None], len, [[1, 2], [3]]) == [2, 1]
    assert nest.flatten_up_to([None, (None,)], [[1, 2], ([3],)]) == [[1, 2], [3]]
    Point = collections.namedtuple("Point", "x y")
    assert nest.flatten_with_joined_string_paths({"b": [1, Point(2, 3)], "a": 0}) == [
        ("a", 0), ("b/0", 1), ("b/1/0", 2), ("b/1/1", 3)]


class _Case(eager.test.TestCase):
    def test_helpers(self):
        self.assertAllClose({"a": eager.constant([1.0, 2.0])}, {"a": np.array([1.0, 2.0])})
        self.assertAllEqual(eager.constant([1, 2]), [1, 2])
        self.assertNotAllClose([1.0], [1.1])
        self.assertAllInRange(eager.constant([0.5, 1.0]), 0.0, 1.0)
        self.assertDTypeEqual(eager.constant([1.0]), np.float32)
        np.testing.assert_array_equal(self.evaluate(eager.constant([3])), [3])
        with self.assertRaises(AssertionError):
            self.assertAllClose([1.0, 2.0], [1.0, 2.1])
        with self.assertRaises(AssertionError):
            self.assertAllEqual([1, 2], [1, 2, 3])


def test_testcase_is_unittest():
    result = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromTestCase(_Case).run(result)
    assert result.wasSuccessful() and result.testsRun == 1
    assert eager.test.main is not None and issubclass(eager.test.TestCase, unittest.TestCase)
