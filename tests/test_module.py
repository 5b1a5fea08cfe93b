"""eager.Module (≈ tf.Module): names, name scopes, the variable/submodule walk in TensorFlow's
order, and the checkpoint children (`_trackable_children`). Expected orders and names were
produced by tf.Module in TensorFlow 2.21 on the same classes."""

import collections
import threading

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import eager as tf
from eager import nest
from eager.core.context import thread_state
from eager.state.module import Module
from eager.state.trackable import Trackable
from eager import train


class MyDense(Module):
    def __init__(self, name=None, prefix=""):
        super().__init__(name=name)
        self.w = tf.Variable(1.0, name=prefix + "w")
        self.b = tf.Variable(2.0, name=prefix + "b", trainable=False)


class HTTPServer2(Module):
    pass


Point = collections.namedtuple("Point", "y x")


class Seq(Module):
    def __init__(self):
        super().__init__()
        self.z = [MyDense("l0", "l0_"), MyDense("l1", "l1_")]
        self.a = {"b": tf.Variable(3.0, name="db"),
                  "a": (tf.Variable(4.0, name="ta"), MyDense("l2", "l2_"))}
        self.shared = self.z[0].w
        self.c = collections.OrderedDict([("y", tf.Variable(5.0, name="oy")),
                                          ("x", tf.Variable(6.0, name="ox"))])


def names(variables):
    return [v.name.split(":")[0] for v in variables]


# -- names and scopes -----------------------------------------------------------------------------

def test_default_names_are_snake_case_and_not_unique():
    assert MyDense().name == "my_dense" and MyDense().name == "my_dense"
    assert HTTPServer2().name == "http_server2"
    assert Module().name == "module"
    assert MyDense(name="custom").name == "custom"


@pytest.mark.parametrize("bad", ["a b", "a/b", "1abc", "", 3])
def test_names_must_be_identifiers(bad):
    with pytest.raises(ValueError, match="not a valid module name"):
        Module(name=bad)


def test_name_scope_is_the_enclosing_scope_plus_the_name():
    m = MyDense()
    assert m.name_scope.name == "my_dense/"
    assert thread_state().name_scope == ""
    with m.name_scope as scope:
        assert scope == "my_dense/" and thread_state().name_scope == "my_dense/"
        inner = MyDense(name="inner")
        with inner.name_scope:
            assert thread_state().name_scope == "my_dense/inner/"
        assert thread_state().name_scope == "my_dense/"
    assert thread_state().name_scope == ""
    assert inner.name == "inner" and inner.name_scope.name == "my_dense/inner/"


def test_name_scopes_are_per_thread_and_reentrant():
    m = MyDense()
    seen = []

    def other():
        seen.append(thread_state().name_scope)

    with m.name_scope:
        with m.name_scope:
            t = threading.Thread(target=other)
            t.start()
            t.join()
        assert thread_state().name_scope == "my_dense/"
    assert seen == [""] and thread_state().name_scope == ""


def test_with_name_scope_wraps_a_method():
    class Scoped(MyDense):
        @Module.with_name_scope
        def __call__(self, x):
            """Doc kept."""
            return thread_state().name_scope, x

    s = Scoped(name="c")
    assert s(3) == ("c/", 3)
    assert Scoped.__call__.__doc__ == "Doc kept." and thread_state().name_scope == ""


def test_a_module_is_trackable():
    assert isinstance(MyDense(), Trackable)
    assert "my_dense" in repr(MyDense())


# -- the walk --------------------------------------------------------------------------------------

def test_variables_and_submodules_follow_tensorflows_order():
    s = Seq()
    # tf.Module's order for this class (TF 2.21): attributes sorted (a, c, shared, z), dicts by
    # sorted key, each value once; then submodules in the order found (l2, l0, l1).
    assert names(s.variables) == ["ta", "db", "ox", "oy", "l0_w", "l2_b", "l2_w", "l0_b",
                                  "l1_b", "l1_w"]
    assert names(s.trainable_variables) == ["ta", "db", "ox", "oy", "l0_w", "l2_w", "l1_w"]
    assert names(s.non_trainable_variables) == ["l2_b", "l0_b", "l1_b"]
    assert [m.name for m in s.submodules] == ["l2", "l0", "l1"]
    assert isinstance(s.variables, tuple)


def test_nested_submodules_come_after_their_parents_siblings():
    class Outer(Module):
        def __init__(self):
            super().__init__()
            self.first = Seq()
            self.second = MyDense("second")

    assert [m.name for m in Outer().submodules] == ["seq", "second", "l2", "l0", "l1"]


def test_namedtuples_and_paths():
    class Holder(Module):
        def __init__(self):
            super().__init__()
            self.t = Point(tf.Variable(1.0, name="py"), tf.Variable(2.0, name="px"))
            self.d = {"z": "nothing", "k": [tf.Variable(3.0, name="k0")]}
            self._priv = tf.Variable(4.0, name="priv")

    h = Holder()
    assert names(h.variables) == ["priv", "k0", "py", "px"]
    paths = [p for p, _ in h._flatten(predicate=lambda v: isinstance(v, tf.Variable),
                                      with_path=True)]
    assert paths == [("_priv",), ("d", "k", 0), ("t", "y"), ("t", "x")]


def test_each_value_is_reported_once_but_every_path_with_paths():
    class Twice(Module):
        def __init__(self):
            super().__init__()
            self.v = tf.Variable(1.0)
            self.again = [self.v, self.v]
            self.child = MyDense()
            self.child_again = self.child

    t = Twice()
    assert len(t.variables) == 3 and len(t.submodules) == 1
    with_paths = list(t._flatten(predicate=lambda v: isinstance(v, tf.Variable),
                                 with_path=True))
    assert [p for p, _ in with_paths] == [("again", 0), ("again", 1), ("v",), ("child", "b"),
                                          ("child", "w"), ("child_again", "b"),
                                          ("child_again", "w")]


def test_cycles_between_modules_terminate():
    parent, child = MyDense("parent"), MyDense("child")
    parent.child = child
    child.parent = parent
    child.itself = child
    assert [m.name for m in parent.submodules] == ["child"]
    assert len(parent.variables) == 4
    assert len(list(parent._flatten(with_path=True))) > 0


def test_lists_changed_after_assignment_are_seen():
    m = Module()
    m.layers = []
    m.layers.append(MyDense("late"))
    assert [s.name for s in m.submodules] == ["late"]
    assert len(m.variables) == 2


def test_unsortable_dict_keys_are_a_clear_error():
    m = Module()
    m.d = {3: "x", "k": tf.Variable(1.0)}
    with pytest.raises(ValueError, match="Error processing property 'd'"):
        m.variables  # noqa: B018


def test_objects_that_are_not_modules_are_not_searched_and_ignored_properties_are_skipped():
    class Plain:
        def __init__(self):
            self.v = tf.Variable(1.0)

    class Ignoring(Module):
        _TF_MODULE_IGNORED_PROPERTIES = frozenset({"hidden"})

        def __init__(self):
            super().__init__()
            self.plain = Plain()
            self.hidden = tf.Variable(2.0)
            self.shown = tf.Variable(3.0)

    m = Ignoring()
    assert [float(v) for v in m.variables] == [3.0]


def test_flatten_without_recursion_and_with_a_traversal_key():
    s = Seq()
    top = list(s._flatten(recursive=False, predicate=lambda v: isinstance(v, tf.Variable)))
    assert names(top) == ["ta", "db", "ox", "oy", "l0_w"]
    reverse = list(s._flatten(recursive=False,
                              predicate=lambda v: isinstance(v, tf.Variable),
                              attribute_traversal_key=lambda k: [-ord(c) for c in k]))
    assert names(reverse) == ["l0_w", "ox", "oy", "ta", "db"]


structures = st.recursive(
    st.builds(lambda x: tf.Variable(float(x)), st.integers(-5, 5)) | st.just("leaf") |
    st.integers(),
    lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner) |
    st.dictionaries(st.text("abc", min_size=1, max_size=2), inner, max_size=3),
    max_leaves=8)


@given(st.dictionaries(st.text("xyz", min_size=1, max_size=2), structures, max_size=3))
def test_variables_are_tf_nest_order_over_sorted_attributes(attributes):
    m = Module()
    for key, value in attributes.items():
        setattr(m, key, value)
    expected, seen = [], set()
    for key in sorted(attributes):
        for leaf in nest.flatten(attributes[key]):
            if isinstance(leaf, tf.Variable) and id(leaf) not in seen:
                seen.add(id(leaf))
                expected.append(leaf)
    assert [id(v) for v in m.variables] == [id(v) for v in expected]


# -- checkpoint children ---------------------------------------------------------------------------

def test_trackable_children_are_attributes_in_assignment_order():
    s = Seq()
    children = s._trackable_children()
    assert list(children) == ["z", "a", "shared", "c"]  # assignment order, as TensorFlow
    assert children["shared"] is s.z[0].w
    # Containers are children as they are (the checkpoint names their items "0", "1", by
    # namedtuple field or by key): the same object on every call.
    assert children["z"] is s.z and children["a"] is s.a and children["c"] is s.c
    assert list(s.z[1]._trackable_children()) == ["w", "b"]


def test_trackable_children_skip_what_a_checkpoint_does_not_save():
    m = Module()
    m.number, m.text, m.tensor = 3, "x", tf.constant(1.0)
    m.empty, m.plain_list = [], [1, "two", (3,), {"k": 2.0}]
    m.sparse_list = [1, tf.Variable(2.0), "x"]
    m.deep = {"a": [(1, MyDense())]}
    m.point = Point(y=tf.Variable(1.0), x=2.0)
    m._private = tf.Variable(0.0)
    m.optimizer = tf.optimizers.SGD()
    children = m._trackable_children()
    assert list(children) == ["sparse_list", "deep", "point", "_private", "optimizer"]


def test_self_containing_lists_do_not_loop():
    m = Module()
    m.loop = []
    m.loop.append(m.loop)
    assert m._trackable_children() == {}
    m.loop.append(tf.Variable(1.0))
    assert m._trackable_children()["loop"] is m.loop


def test_checkpoint_paths_of_a_module_are_tensorflows(tmp_path):
    """The keys tf.train.Checkpoint gives the same tf.Module (TF 2.21)."""
    s = Seq()
    path = train.Checkpoint(model=s).write(str(tmp_path / "ck"))
    assert sorted(k for k, _ in train.list_variables(path)) == [
        "_CHECKPOINTABLE_OBJECT_GRAPH", "model/a/a/0/.ATTRIBUTES/VARIABLE_VALUE",
        "model/a/a/1/b/.ATTRIBUTES/VARIABLE_VALUE",
        "model/a/a/1/w/.ATTRIBUTES/VARIABLE_VALUE", "model/a/b/.ATTRIBUTES/VARIABLE_VALUE",
        "model/c/x/.ATTRIBUTES/VARIABLE_VALUE", "model/c/y/.ATTRIBUTES/VARIABLE_VALUE",
        "model/shared/.ATTRIBUTES/VARIABLE_VALUE", "model/z/0/b/.ATTRIBUTES/VARIABLE_VALUE",
        "model/z/1/b/.ATTRIBUTES/VARIABLE_VALUE", "model/z/1/w/.ATTRIBUTES/VARIABLE_VALUE"]


def test_attributes_set_after_a_restore_get_the_saved_values(tmp_path):
    saved = MyDense()
    saved.w.assign(7.0)
    saved.extra = [tf.Variable(8.0)]
    path = train.Checkpoint(model=saved).write(str(tmp_path / "ck"))
    fresh = Module(name="fresh")
    status = train.Checkpoint(model=fresh).read(path)
    fresh.w = tf.Variable(0.0)  # attached later: restored on assignment, as in TensorFlow
    fresh.extra = [tf.Variable(0.0)]
    assert float(fresh.w) == 7.0 and float(fresh.extra[0]) == 8.0
    fresh.b = tf.Variable(0.0, trainable=False)
    status.assert_consumed()


def test_variables_of_a_module_train():
    """A Module's trainable_variables feed a tape and an optimizer, as in TensorFlow."""
    class Linear(Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(np.zeros((2, 1), np.float32))
            self.b = tf.Variable(np.zeros(1, np.float32))

        @Module.with_name_scope
        def __call__(self, x):
            return tf.matmul(x, self.w) + self.b

    model = Linear()
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x))
    grads = tape.gradient(loss, model.trainable_variables)
    assert [g.shape for g in grads] == [(1,), (2, 1)]  # b before w: sorted attributes
    np.testing.assert_array_equal(grads[1].numpy(), [[4.0], [6.0]])
