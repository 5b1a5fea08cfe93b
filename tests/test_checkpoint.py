"""eager.train.Checkpoint (≈ tf.train.Checkpoint): keys, round trips, the save counter and state
file, atomic writes, all-or-nothing validated restores, status objects, deferred restoration,
CheckpointManager, hostile files, and a fuzz test of damaged files."""

import copy
import gc
import hashlib
import io
import json
import logging
import os
import pickle
import struct
import sys
import threading
import warnings
import zipfile

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import eager as tf
import eager.optimizers as optimizers
from eager import train
from eager.errors import DataLossError, InvalidArgumentError, NotFoundError
from eager.train import _format, _restore, checkpoint_management
from eager.train._graph import object_graph, python_variables
from eager.train.checkpoint import restore_deferred
from eager.state.module import Module
from eager.state.trackable import Trackable


class Node(Trackable):
    """A minimal trackable: its attributes are its children, in assignment order."""

    def __init__(self, **children):
        self.__dict__.update(children)

    def _trackable_children(self):
        return dict(self.__dict__)


def _snapshot(obj):
    """Each reachable variable's bytes, dtype and shape (bitwise: -0.0 and NaNs count)."""
    return [(v.dtype, tuple(np.shape(v.numpy())), np.asarray(v.numpy()).tobytes())
            for v in python_variables(obj)]


def _model(seed=0.0):
    """A structure covering nesting, lists, dicts with awkward keys, dtypes, 0-d and empty."""
    return Node(
        layer=Node(kernel=tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3) + seed),
                   bias=tf.Variable(np.zeros(3, np.float64) - seed)),
        lst=[tf.Variable(np.int64(7 + seed)), tf.Variable(np.zeros((0, 2), np.float32))],
        d={"a": tf.Variable(np.array([True, seed == 0])), "b/c.d": tf.Variable(
            np.array([1 + 2j, seed], np.complex64))},
        u=tf.Variable(np.array([250 + seed, 3], np.uint8)))


# -- keys and round trips --------------------------------------------------------------------------


def test_keys_are_tensorflows_object_graph_paths(tmp_path):
    # The expected strings are what tf.train.list_variables printed for a TF checkpoint of the
    # same structure (tf.Module attributes, a list, a dict with a "/" in a key).
    m = Node(layer=Node(kernel=tf.Variable([[1.0, 2.0]])), lst=[tf.Variable(1), tf.Variable(2.0)],
             d={"a": tf.Variable(3.0), "b/c": tf.Variable(4.0)})
    path = train.Checkpoint(model=m, v=tf.Variable(5.0)).save(str(tmp_path / "ck"))
    assert path == str(tmp_path / "ck-1")
    assert train.list_variables(path) == [
        ("_CHECKPOINTABLE_OBJECT_GRAPH", []),  # TF's object-graph entry (a string scalar)
        ("model/d/a/.ATTRIBUTES/VARIABLE_VALUE", []),
        ("model/d/b.Sc/.ATTRIBUTES/VARIABLE_VALUE", []),
        ("model/layer/kernel/.ATTRIBUTES/VARIABLE_VALUE", [1, 2]),
        ("model/lst/0/.ATTRIBUTES/VARIABLE_VALUE", []),
        ("model/lst/1/.ATTRIBUTES/VARIABLE_VALUE", []),
        ("save_counter/.ATTRIBUTES/VARIABLE_VALUE", []),
        ("v/.ATTRIBUTES/VARIABLE_VALUE", [])]
    graph = train.load_variable(path, "_CHECKPOINTABLE_OBJECT_GRAPH")  # bytes, as in TF
    assert isinstance(graph, bytes) and json.loads(graph)[0]["children"]
    assert train.checkpoint.escape_local_name("x.y/z") == "x..y.Sz"


def test_round_trip_nested_structures_every_dtype_zero_d_and_empty(tmp_path):
    saved = _model()
    path = train.Checkpoint(model=saved).write(str(tmp_path / "w"))
    fresh = _model(seed=1.0)
    assert _snapshot(fresh) != _snapshot(saved)
    train.Checkpoint(model=fresh).read(path).assert_consumed()
    assert _snapshot(fresh) == _snapshot(saved)
    assert fresh.lst[1].shape == (0, 2) and fresh.lst[0].dtype == tf.int64


@given(hnp.arrays(st.sampled_from([np.float16, np.float32, np.float64, np.int8, np.int16,
                                   np.int32, np.int64, np.uint16, np.uint32, np.uint64,
                                   np.bool_, np.complex64, np.complex128]),
                  hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)))
def test_any_array_round_trips_bit_for_bit(tmp_path_factory, array):
    path = str(tmp_path_factory.mktemp("h") / "w")
    train.Checkpoint(x=tf.Variable(array)).write(path)
    target = tf.Variable(np.zeros_like(array))
    train.Checkpoint(x=target).read(path).assert_consumed()
    assert np.asarray(target.numpy()).tobytes() == array.tobytes()
    assert train.load_variable(path, "x").tobytes() == array.tobytes()


def test_the_file_is_a_plain_npz_and_equal_state_gives_equal_bytes(tmp_path):
    m = _model()
    a = train.Checkpoint(model=m).write(str(tmp_path / "a"))
    b = train.Checkpoint(model=m).write(str(tmp_path / "b"))
    assert open(a, "rb").read() == open(b, "rb").read()
    with np.load(a, allow_pickle=False) as npz:
        kernel = npz["model/layer/kernel/.ATTRIBUTES/VARIABLE_VALUE"]
    np.testing.assert_array_equal(kernel, m.layer.kernel.numpy())
    meta = json.loads(zipfile.ZipFile(a).read(_format.METADATA))
    assert meta["format"] == "eager.train.Checkpoint" and meta["version"] == 1
    assert meta["variables"]["model/d/b.Sc..d/.ATTRIBUTES/VARIABLE_VALUE"]["dtype"] == "complex64"


def test_a_shared_variable_is_saved_once_under_its_first_path(tmp_path):
    v = tf.Variable(5.0)
    path = train.Checkpoint(z=v, m=Node(a=v, b=v)).write(str(tmp_path / "w"))
    assert train.list_variables(path) == [("_CHECKPOINTABLE_OBJECT_GRAPH", []),
                                          ("z/.ATTRIBUTES/VARIABLE_VALUE", [])]
    # Restoring into a program where the two paths are now distinct variables fills both.
    m2 = Node(a=tf.Variable(0.0), b=tf.Variable(0.0))
    train.Checkpoint(z=tf.Variable(0.0), m=m2).read(path).assert_consumed()
    assert float(m2.a.numpy()) == float(m2.b.numpy()) == 5.0


def test_cycles_and_non_trackable_values_are_handled(tmp_path):
    a = Node(w=tf.Variable(1.0), note="not saved", n=3)
    a.me = a
    a.items = [1, "x", tf.Variable(2.0)]
    path = train.Checkpoint(a=a).write(str(tmp_path / "w"))
    assert [k for k, _ in train.list_variables(path)] == ["_CHECKPOINTABLE_OBJECT_GRAPH",
                                                          "a/items/2/.ATTRIBUTES/VARIABLE_VALUE",
                                                          "a/w/.ATTRIBUTES/VARIABLE_VALUE"]


def test_root_argument_puts_kwargs_beside_the_roots_children(tmp_path):
    m = Node(k=tf.Variable(1.0))
    ckpt = train.Checkpoint(root=m, extra=tf.Variable(2.0))
    path = ckpt.save(str(tmp_path / "r"))
    assert [k for k, _ in train.list_variables(path)] == [
        "_CHECKPOINTABLE_OBJECT_GRAPH", "extra/.ATTRIBUTES/VARIABLE_VALUE",
        "k/.ATTRIBUTES/VARIABLE_VALUE", "save_counter/.ATTRIBUTES/VARIABLE_VALUE"]
    m2 = Node(k=tf.Variable(0.0))
    train.Checkpoint(root=m2, extra=tf.Variable(0.0)).restore(path).assert_consumed()
    assert float(m2.k.numpy()) == 1.0


def test_bad_constructor_arguments(tmp_path):
    with pytest.raises(ValueError, match="expecting root"):
        train.Checkpoint(root=3)
    with pytest.raises(ValueError, match="expecting x to be a trackable"):
        train.Checkpoint(x=1.0)
    with pytest.raises(ValueError, match="reserved"):
        train.Checkpoint(save_counter=tf.Variable(1))
    with pytest.raises(TypeError, match="non-string key"):
        train.Checkpoint(d={1: tf.Variable(1.0)}).write(str(tmp_path / "never"))
    assert not os.listdir(tmp_path)


def test_restore_does_not_apply_constraints(tmp_path):
    path = train.Checkpoint(v=tf.Variable(-3.0)).write(str(tmp_path / "w"))
    v = tf.Variable(1.0, constraint=lambda x: tf.maximum(x, 0.0))
    train.Checkpoint(v=v).read(path)
    assert float(v.numpy()) == -3.0


# -- the save counter and the state file -----------------------------------------------------------


def test_save_numbers_files_and_keeps_tensorflows_state_file(tmp_path):
    ckpt = train.Checkpoint(v=tf.Variable(1.0))
    assert ckpt.save(str(tmp_path / "ck")) == str(tmp_path / "ck-1")
    assert ckpt.save(str(tmp_path / "ck")) == str(tmp_path / "ck-2")
    assert int(ckpt.save_counter.numpy()) == 2 and ckpt.save_counter.dtype == tf.int64
    assert (tmp_path / "checkpoint").read_text() == (
        'model_checkpoint_path: "ck-2"\nall_model_checkpoint_paths: "ck-2"\n')
    assert train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "ck-2")
    # A restored counter continues the numbering.
    other = train.Checkpoint(v=tf.Variable(0.0))
    other.restore(str(tmp_path / "ck-1")).assert_consumed()
    assert other.save(str(tmp_path / "ck")) == str(tmp_path / "ck-2")


def test_write_writes_exactly_the_path_without_counter_or_state(tmp_path):
    ckpt = train.Checkpoint(v=tf.Variable(1.0))
    assert ckpt.write(str(tmp_path / "sub" / "exact")) == str(tmp_path / "sub" / "exact")
    assert os.listdir(tmp_path / "sub") == ["exact"]
    assert [k for k, _ in train.list_variables(str(tmp_path / "sub" / "exact"))] == [
        "_CHECKPOINTABLE_OBJECT_GRAPH", "v/.ATTRIBUTES/VARIABLE_VALUE"]


def test_latest_checkpoint_is_none_without_a_usable_state(tmp_path, caplog):
    assert train.latest_checkpoint(str(tmp_path / "nowhere")) is None
    assert train.latest_checkpoint(str(tmp_path)) is None
    (tmp_path / "checkpoint").write_text('model_checkpoint_path: "gone-3"\n')
    assert train.latest_checkpoint(str(tmp_path)) is None
    (tmp_path / "checkpoint").write_bytes(b"model_checkpoint_path: \"unterminated\n\xff\x00")
    with caplog.at_level(logging.WARNING):
        assert train.latest_checkpoint(str(tmp_path)) is None
    assert "ignored" in caplog.text


def test_state_file_strings_round_trip_through_text_format_escapes(tmp_path):
    directory = tmp_path / 'dir "q" é'
    path = train.Checkpoint(v=tf.Variable(1.0)).save(str(directory / 'a\\b ü'))
    text = (directory / "checkpoint").read_text()
    assert '\\"' not in text and "\\\\" in text and "\\303\\274" in text  # TF's octal UTF-8
    assert train.latest_checkpoint(str(directory)) == path
    state = train.get_checkpoint_state(str(directory))
    assert state.all_model_checkpoint_paths == [path]


# -- atomic writes ---------------------------------------------------------------------------------


@pytest.mark.parametrize("failure", ["write_array", "fsync", "replace"])
def test_a_failing_save_leaves_the_previous_checkpoint_and_counter_intact(tmp_path, monkeypatch,
                                                                          failure):
    v = tf.Variable(np.arange(1000, dtype=np.float64))
    ckpt = train.Checkpoint(v=v)
    first = ckpt.save(str(tmp_path / "ck"))
    ckpt.write(str(tmp_path / "ck-2"))  # the path the failing save will try to replace
    before = {name: (tmp_path / name).read_bytes() for name in os.listdir(tmp_path)}
    v.assign(-v.read_value())

    def boom(*args, **kwargs):
        if failure == "write_array":  # fail half way through the data
            args[0].write(b"partial data")
        raise OSError("disk on fire")
    target = {"write_array": (np.lib.format, "write_array"), "fsync": (os, "fsync"),
              "replace": (os, "replace")}[failure]
    monkeypatch.setattr(*target, boom)
    with pytest.raises(OSError, match="disk on fire"):
        ckpt.save(str(tmp_path / "ck"))
    monkeypatch.undo()
    after = {name: (tmp_path / name).read_bytes() for name in os.listdir(tmp_path)}
    assert after == before  # no temporary files left, nothing replaced, state file unchanged
    assert int(ckpt.save_counter.numpy()) == 1
    assert train.latest_checkpoint(str(tmp_path)) == first


# -- restore validation ----------------------------------------------------------------------------


def test_missing_files_raise_not_found_with_a_hint(tmp_path):
    ckpt = train.Checkpoint(v=tf.Variable(1.0))
    with pytest.raises(NotFoundError, match="Failed to find a checkpoint file"):
        ckpt.restore(str(tmp_path / "nope"))
    with pytest.raises(NotFoundError, match="latest_checkpoint"):
        ckpt.restore(str(tmp_path))
    (tmp_path / "tf-1.index").write_bytes(b"")
    with pytest.raises(NotFoundError, match="TensorFlow checkpoint"):
        ckpt.restore(str(tmp_path / "tf-1"))
    with pytest.raises(NotFoundError, match="not found in checkpoint"):
        train.load_variable(ckpt.write(str(tmp_path / "w")), "nope")


def test_shape_and_dtype_mismatches_name_the_key_and_change_nothing(tmp_path):
    path = train.Checkpoint(a=tf.Variable(1.0), z=tf.Variable([1.0, 2.0])).write(
        str(tmp_path / "w"))
    a, z = tf.Variable(10.0), tf.Variable([0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match=r"shape \(2,\) .* shape \(3,\) .*'z/\.ATTRIBUTES"):
        train.Checkpoint(a=a, z=z).read(path)
    assert float(a.numpy()) == 10.0  # `a` matched and was valid, but nothing was assigned
    z = tf.Variable([0, 0])
    with pytest.raises(InvalidArgumentError, match="z/.ATTRIBUTES/VARIABLE_VALUE; expected dtype "
                                                   "int32 does not equal original dtype float32"):
        train.Checkpoint(a=a, z=z).read(path)
    assert float(a.numpy()) == 10.0 and list(z.numpy()) == [0, 0]
    # A variable of unknown shape takes any shape.
    free = tf.Variable([0.0], validate_shape=False)
    train.Checkpoint(a=a, z=free).read(path)
    assert list(free.numpy()) == [1.0, 2.0]


def test_a_failing_assignment_rolls_back_the_ones_before_it(tmp_path, monkeypatch):
    path = train.Checkpoint(a=tf.Variable(1.0), b=tf.Variable(2.0)).write(str(tmp_path / "w"))
    a, b = tf.Variable(10.0), tf.Variable(20.0)
    real, calls = _restore._raw_assign, []

    def flaky(variable, value):
        calls.append(variable)
        if len(calls) == 2:
            raise RuntimeError("device lost")
        real(variable, value)
    monkeypatch.setattr(_restore, "_raw_assign", flaky)
    with pytest.raises(RuntimeError, match="device lost"):
        train.Checkpoint(a=a, b=b).read(path)
    assert (float(a.numpy()), float(b.numpy())) == (10.0, 20.0)
    assert len(calls) == 3  # a, b (failed), then a put back


# -- status objects --------------------------------------------------------------------------------


def test_status_assertions_follow_tensorflow(tmp_path):
    path = train.Checkpoint(a=tf.Variable(1.0), b=tf.Variable(2.0)).save(str(tmp_path / "ck"))
    full = train.Checkpoint(a=tf.Variable(0.0), b=tf.Variable(0.0)).restore(path)
    assert full.assert_consumed() is full
    assert full.assert_nontrivial_match() is full
    partial = train.Checkpoint(a=tf.Variable(0.0)).restore(path)
    partial.assert_existing_objects_matched()  # extra values in the file are allowed
    with pytest.raises(AssertionError, match=r"Unresolved object in checkpoint \(root\)\.b"):
        partial.assert_consumed()
    extra = train.Checkpoint(a=tf.Variable(0.0), b=tf.Variable(0.0), c=tf.Variable(0.0))
    status = extra.restore(path)
    with pytest.raises(AssertionError, match="1 Python objects that were not bound"):
        status.assert_existing_objects_matched()
    # As in TF, restore() creates save_counter, so a file from write() leaves it unmatched;
    # read() does not create it.
    written = train.Checkpoint(a=tf.Variable(1.0)).write(str(tmp_path / "w"))
    with pytest.raises(AssertionError, match="save_counter"):
        train.Checkpoint(a=tf.Variable(0.0)).restore(written).assert_existing_objects_matched()
    train.Checkpoint(a=tf.Variable(0.0)).read(written).assert_consumed()
    with pytest.raises(AssertionError, match="Nothing except the root"):
        train.Checkpoint(q=tf.Variable(0.0)).read(written).assert_nontrivial_match()


def test_restore_none_is_initialization_only():
    status = train.Checkpoint(a=tf.Variable(1.0)).restore(None)
    assert isinstance(status, train.InitializationOnlyStatus)
    assert status.expect_partial() is status
    for method in ("assert_consumed", "assert_existing_objects_matched",
                   "assert_nontrivial_match"):
        with pytest.raises(AssertionError, match="No checkpoint specified"):
            getattr(status, method)()


def test_unused_values_are_reported_unless_expect_partial(tmp_path, caplog):
    path = train.Checkpoint(a=tf.Variable(1.0), b=tf.Variable(2.0)).write(str(tmp_path / "w"))
    with caplog.at_level(logging.WARNING, logger="eager.train.checkpoint"):
        train.Checkpoint(a=tf.Variable(0.0)).read(path).expect_partial()
        gc.collect()
        assert "unrestored values" not in caplog.text
        train.Checkpoint(a=tf.Variable(0.0)).read(path)
        gc.collect()
    assert "unrestored values" in caplog.text and "(root).b" in caplog.text


# -- deferred restoration --------------------------------------------------------------------------


def test_values_wait_for_objects_attached_after_restore(tmp_path):
    path = train.Checkpoint(model=Node(w=tf.Variable(3.0)), v=tf.Variable(4.0)).save(
        str(tmp_path / "ck"))
    ckpt = train.Checkpoint()
    status = ckpt.restore(path)
    with pytest.raises(AssertionError, match="Unresolved"):
        status.assert_consumed()
    ckpt.model = Node(w=tf.Variable(0.0))  # restored on assignment, as TF does
    ckpt.v = tf.Variable(0.0)
    assert float(ckpt.model.w.numpy()) == 3.0 and float(ckpt.v.numpy()) == 4.0
    status.assert_consumed()
    assert not _restore._PENDING  # nothing left waiting


def test_lazily_created_children_are_restored_when_their_owner_says_so(tmp_path):
    opt = Node(slots=[tf.Variable([1.0, 2.0]), tf.Variable(7)])
    path = train.Checkpoint(opt=opt).write(str(tmp_path / "w"))
    fresh = Node(slots=[])
    status = train.Checkpoint(opt=fresh).read(path)
    status.assert_existing_objects_matched()
    fresh.slots.append(tf.Variable([0.0, 0.0]))
    restore_deferred(fresh)  # what an optimizer does after creating a slot
    assert list(fresh.slots[0].numpy()) == [1.0, 2.0]
    with pytest.raises(AssertionError, match="slots.1"):
        status.assert_consumed()
    fresh.slots.append(tf.Variable(0.0))  # wrong dtype: raises, assigns nothing, keeps waiting
    with pytest.raises(InvalidArgumentError):
        restore_deferred(fresh)
    fresh.slots[1] = tf.Variable(0)
    restore_deferred(fresh)
    assert int(fresh.slots[1].numpy()) == 7
    status.assert_consumed()
    restore_deferred(Node())  # nothing pending for it: a no-op


class _Tree(Module):
    """A module whose attributes the tests below set one by one."""


def test_lists_and_dicts_attached_after_a_restore_get_their_values(tmp_path):
    """TensorFlow's deferred restoration through list and dict trackables: values wait for
    containers attached after `restore`, and for items appended or set in them later."""
    saved = _Tree()
    saved.layers = [_Tree(), _Tree()]
    saved.layers[0].w, saved.layers[1].w = tf.Variable([1.0, 2.0]), tf.Variable([3.0, 4.0])
    saved.vars = {"a": tf.Variable(5.0), "b": tf.Variable([6.0])}
    saved.later = [tf.Variable(7.0), [tf.Variable(8.0)]]
    saved.table = {"x": tf.Variable(9.0)}
    path = train.Checkpoint(model=saved).save(str(tmp_path / "ck"))

    fresh = _Tree()
    fresh.later = []  # attached before the restore, filled after
    status = train.Checkpoint(model=fresh).restore(path)
    fresh.layers = [_Tree(), _Tree()]
    fresh.layers[0].w, fresh.layers[1].w = tf.Variable([0.0, 0.0]), tf.Variable([0.0, 0.0])
    fresh.vars = {"a": tf.Variable(0.0), "b": tf.Variable([0.0])}
    fresh.later.append(tf.Variable(0.0))
    fresh.later.append([])
    fresh.later[1].append(tf.Variable(0.0))  # a nested list is tracked too
    fresh.table = {}
    fresh.table["x"] = tf.Variable(0.0)
    assert [layer.w.numpy().tolist() for layer in fresh.layers] == [[1.0, 2.0], [3.0, 4.0]]
    assert float(fresh.vars["a"]) == 5.0 and fresh.vars["b"].numpy().tolist() == [6.0]
    assert float(fresh.later[0]) == 7.0 and float(fresh.later[1][0]) == 8.0
    assert float(fresh.table["x"]) == 9.0
    status.assert_consumed()
    assert not _restore._PENDING  # nothing left waiting


def test_tracked_containers_are_plain_lists_and_dicts_otherwise():
    m = _Tree()
    items = [1, [2]]
    m.items, m.table = items, {"k": [3]}
    assert m.items == items and isinstance(m.items, list) and isinstance(m.table, dict)
    m.items += [4]
    m.items.extend([5])
    m.items.insert(0, 0)
    m.items[1:2] = [1]
    assert m.items == [0, 1, [2], 4, 5]
    assert type(pickle.loads(pickle.dumps(m.items))) is list
    assert type(copy.deepcopy(m.table)) is dict and copy.deepcopy(m.table) == {"k": [3]}
    m.table.update(j=1)
    m.table.setdefault("i", 2)
    m.table |= {"h": 3}
    assert m.table == {"k": [3], "j": 1, "i": 2, "h": 3}
    ckpt = train.Checkpoint(lst=[tf.Variable(1.0)])
    assert isinstance(ckpt.lst, list) and float(ckpt.lst[0]) == 1.0


_leaf = st.tuples(st.just("var"), st.lists(st.integers(1, 3), max_size=2).map(tuple))
_tree = st.recursive(_leaf, lambda children: st.one_of(
    st.tuples(st.just("list"), st.lists(children, min_size=1, max_size=3)),
    st.tuples(st.just("dict"), st.dictionaries(st.sampled_from("abc"), children, min_size=1,
                                               max_size=3)),
    st.tuples(st.just("module"), st.dictionaries(st.sampled_from(["p", "q"]), children,
                                                 min_size=1, max_size=2))), max_leaves=6)
_attachments = st.dictionaries(st.sampled_from(["a", "b", "c"]),
                               st.tuples(_tree, st.sampled_from(["before", "after", "fill"])),
                               min_size=1, max_size=3)


def _build(spec, fill):
    kind, content = spec
    if kind == "var":
        return tf.Variable(fill(content))
    if kind == "list":
        return [_build(c, fill) for c in content]
    if kind == "dict":
        return {k: _build(c, fill) for k, c in content.items()}
    module = _Tree()
    for name, c in content.items():
        setattr(module, name, _build(c, fill))
    return module


@given(attachments=_attachments)
def test_random_object_graphs_restore_before_or_after_attachment(tmp_path_factory, attachments):
    """Random trees of modules, lists, dicts and variables; each top-level attribute attached
    before the restore, after it, or attached empty and filled item by item after it: every
    variable ends with its saved value and nothing stays waiting."""
    counter = iter(range(1, 10_000))

    def numbered(shape):
        return np.full(shape, float(next(counter)), np.float32)

    def zeros(shape):
        return np.zeros(shape, np.float32)

    saved = _Tree()
    for name, (spec, _) in sorted(attachments.items()):
        setattr(saved, name, _build(spec, numbered))
    path = train.Checkpoint(model=saved).write(str(tmp_path_factory.mktemp("g") / "ck"))
    fresh = _Tree()
    later = []
    for name, (spec, when) in sorted(attachments.items()):
        if when == "before":
            setattr(fresh, name, _build(spec, zeros))
        elif when == "fill" and spec[0] in ("list", "dict"):
            setattr(fresh, name, [] if spec[0] == "list" else {})
            later.append((name, spec))
        else:
            later.append((name, spec))
    status = train.Checkpoint(model=fresh).read(path)
    for name, spec in later:
        value = _build(spec, zeros)
        if name in vars(fresh):  # filled item by item
            container = getattr(fresh, name)
            for key, item in (value.items() if isinstance(value, dict) else enumerate(value)):
                if isinstance(container, dict):
                    container[key] = item
                else:
                    container.append(item)
        else:
            setattr(fresh, name, value)
    assert _by_key(fresh) == _by_key(saved)
    status.assert_consumed()
    assert not _restore._PENDING


def _by_key(model):
    """Checkpoint key -> the variable's bytes (attribute order does not matter)."""
    _, arrays = object_graph(train.Checkpoint(model=model))
    return {key: (array.dtype, array.shape, array.tobytes()) for key, (array, _) in arrays.items()}


def test_a_newer_restore_supersedes_values_still_waiting(tmp_path):
    one = train.Checkpoint(v=tf.Variable(1.0)).write(str(tmp_path / "one"))
    two = train.Checkpoint(v=tf.Variable(2.0), x=tf.Variable(9.0)).write(str(tmp_path / "two"))
    ckpt = train.Checkpoint(x=tf.Variable(0.0))
    ckpt.read(one)  # v waits
    ckpt.read(two)  # ... and now waits for two's value instead
    ckpt.v = tf.Variable(0.0)
    assert float(ckpt.v.numpy()) == 2.0


# -- eager.Module and optimizers -------------------------------------------------------------------


class Dense(Module):
    def __init__(self, n_in, n_out, seed):
        super().__init__()
        rng = np.random.default_rng(seed)
        self.w = tf.Variable(rng.normal(size=(n_in, n_out)).astype(np.float32))
        self.b = tf.Variable(np.zeros(n_out, np.float32))

    def __call__(self, x):
        return tf.matmul(x, self.w) + self.b


class Net(Module):
    def __init__(self, seed=0):
        super().__init__()
        self.layers = [Dense(3, 4, seed), Dense(4, 1, seed + 1)]
        self.config = {"units": 4}  # not trackable: not saved

    def __call__(self, x):
        for layer in self.layers:
            x = tf.tanh(layer(x))
        return x


X = np.linspace(-1, 1, 15, dtype=np.float32).reshape(5, 3)


def _train_step(model, optimizer):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.square(model(X) - 0.5))
    variables = model.trainable_variables
    optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))


def test_module_keys_are_tensorflows(tmp_path):
    # tf.Module with the same attributes gives these keys (a list of modules: "layers/0/w").
    path = train.Checkpoint(model=Net()).write(str(tmp_path / "w"))
    assert [k for k, _ in train.list_variables(path)] == ["_CHECKPOINTABLE_OBJECT_GRAPH"] + [
        f"model/layers/{i}/{v}/.ATTRIBUTES/VARIABLE_VALUE" for i in (0, 1) for v in ("b", "w")]


@pytest.mark.parametrize("make", [lambda: optimizers.Adam(0.05),
                                  lambda: optimizers.SGD(0.1, momentum=0.9)])
def test_model_and_optimizer_state_round_trip_and_training_continues_identically(tmp_path,
                                                                                 make):
    model, optimizer = Net(), make()
    for _ in range(3):
        _train_step(model, optimizer)
    path = train.Checkpoint(model=model, optimizer=optimizer).save(str(tmp_path / "ck"))
    assert len(train.list_variables(path)) == (len(model.variables) + len(optimizer.variables)
                                               + 2)  # + save_counter, the object graph
    model2, optimizer2 = Net(seed=5), make()
    optimizer2.build(model2.trainable_variables)  # slots exist: restored at once
    train.Checkpoint(model=model2, optimizer=optimizer2).restore(path).assert_consumed()
    for a, b in zip(model.variables + tuple(optimizer.variables),
                    model2.variables + tuple(optimizer2.variables)):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    _train_step(model, optimizer)
    _train_step(model2, optimizer2)
    for a, b in zip(model.variables, model2.variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert int(optimizer2.iterations.numpy()) == 4


def test_slots_created_after_restore_get_their_values_when_announced(tmp_path):
    model, optimizer = Net(), optimizers.Adam(0.05)
    _train_step(model, optimizer)
    path = train.Checkpoint(model=model, optimizer=optimizer).write(str(tmp_path / "w"))
    model2, optimizer2 = Net(seed=5), optimizers.Adam(0.05)  # no slots yet
    status = train.Checkpoint(model=model2, optimizer=optimizer2).read(path)
    status.assert_existing_objects_matched()
    with pytest.raises(AssertionError, match=r"\(root\)\.optimizer\."):
        status.assert_consumed()
    optimizer2.build(model2.trainable_variables)
    restore_deferred(optimizer2)  # what the optimizer calls once it has made slots
    status.assert_consumed()
    for a, b in zip(optimizer.variables, optimizer2.variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


# -- CheckpointManager -----------------------------------------------------------------------------


def test_manager_keeps_the_newest_and_recovers_them(tmp_path):
    ckpt = train.Checkpoint(v=tf.Variable(1.0))
    manager = train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=2)
    paths = [manager.save() for _ in range(3)]
    assert paths == [str(tmp_path / f"ckpt-{i}") for i in (1, 2, 3)]
    assert manager.checkpoints == paths[1:] and manager.latest_checkpoint == paths[2]
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "ckpt-2", "ckpt-3"]
    text = (tmp_path / "checkpoint").read_text()
    assert text.startswith('model_checkpoint_path: "ckpt-3"\nall_model_checkpoint_paths: '
                           '"ckpt-2"\nall_model_checkpoint_paths: "ckpt-3"\n')
    assert text.count("all_model_checkpoint_timestamps") == 2
    assert manager.save(checkpoint_number=10) == str(tmp_path / "ckpt-10")
    again = train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=2)
    assert again.checkpoints == [str(tmp_path / "ckpt-3"), str(tmp_path / "ckpt-10")]
    restored = train.Checkpoint(v=tf.Variable(0.0))
    assert train.CheckpointManager(restored, str(tmp_path), 2).restore_or_initialize() == str(
        tmp_path / "ckpt-10")
    assert float(restored.v.numpy()) == 1.0


def test_manager_interval_and_initializer(tmp_path):
    step = tf.Variable(0, dtype=tf.int64)
    calls = []
    manager = train.CheckpointManager(train.Checkpoint(step=step), str(tmp_path), None,
                                      step_counter=step, checkpoint_interval=5,
                                      init_from_checkpoint_fn=calls.append)
    assert manager.restore_or_initialize() is None and calls == [manager]
    saved = []
    for _ in range(12):
        saved.append(manager.save())
        step.assign_add(1)
    assert [p is not None for p in saved].count(True) == 3  # steps 0, 5, 10
    with pytest.raises(ValueError, match="max_to_keep"):
        train.CheckpointManager(train.Checkpoint(), str(tmp_path), 0)


def test_manager_keeps_one_checkpoint_per_n_hours(tmp_path, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(checkpoint_management.time, "time", lambda: clock[0])
    manager = train.CheckpointManager(train.Checkpoint(v=tf.Variable(1.0)), str(tmp_path), 1,
                                      keep_checkpoint_every_n_hours=1)
    for hours in (0.5, 1.2, 1.4):
        clock[0] = 1000.0 + hours * 3600
        manager.save()
    # ckpt-1 (0.5 h) was dropped; ckpt-2 (1.2 h after the start) was preserved for good.
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "ckpt-2", "ckpt-3"]
    assert manager.checkpoints == [str(tmp_path / "ckpt-3")]


# -- hostile files ---------------------------------------------------------------------------------

PICKLE_RAN = []


def _pickle_payload():
    PICKLE_RAN.append(True)
    return 1.0


class _Payload:
    def __reduce__(self):
        return _pickle_payload, ()


def _zip(members, compression=zipfile.ZIP_STORED, seal=True):
    """A hand-made file; sealed with a correct whole-file digest, so that the checks behind the
    digest are what must reject it."""
    buffer = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buffer, "w", compression=compression) as zf:
        warnings.simplefilter("ignore")  # "Duplicate name" is the point of one case
        for name, data in members:
            zf.writestr(name, data)
    if seal:
        _format._seal(buffer)
    return buffer.getvalue()


def _npy(array, allow_pickle=False):
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, allow_pickle=allow_pickle)
    return buffer.getvalue()


def _huge_npy_header():
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": "<f4", "fortran_order": False,
                                                  "shape": (10**13,)})
    return buffer.getvalue()


def _meta(dtype="float32", shape=(), digest="0" * 64, version=1, key="v/.ATTRIBUTES/"
          "VARIABLE_VALUE"):
    return json.dumps({"format": "eager.train.Checkpoint", "version": version,
                       "nodes": [{"children": [["v", 1]]}, {"children": [], "variable": key}],
                       "variables": {key: {"dtype": dtype, "shape": list(shape),
                                           "sha256": digest}}}).encode()


KEY = "v/.ATTRIBUTES/VARIABLE_VALUE"
HOSTILE = {
    "empty file": b"",
    "unsealed but otherwise valid": _zip([(KEY + ".npy", _npy(np.float32(1))),
                                          (_format.METADATA, _meta())], seal=False),
    "not a zip": b"hello world, this is not a checkpoint at all...",
    "pickled object array": _zip([(KEY + ".npy", _npy(np.array([_Payload()], dtype=object),
                                                      allow_pickle=True)),
                                  (_format.METADATA, _meta("object", (1,)))]),
    "object dtype claimed consistently": _zip([
        (KEY + ".npy", _npy(np.array([_Payload()], dtype=object), allow_pickle=True)),
        (_format.METADATA, _meta("float32", (1,)))]),
    "compressed member (zip bomb shape)": _zip([(KEY + ".npy", _npy(np.zeros(10**6, np.float32))),
                                               (_format.METADATA, _meta("float32", (10**6,)))],
                                              compression=zipfile.ZIP_DEFLATED),
    "huge declared shape": _zip([(KEY + ".npy", _huge_npy_header() + b"12345678"),
                                 (_format.METADATA, _meta("float32", (10**13,)))]),
    "deeply nested json": _zip([(_format.METADATA, b"[" * 100000 + b"]" * 100000)]),
    "duplicate members": _zip([(KEY + ".npy", _npy(np.float32(1))),
                               (KEY + ".npy", _npy(np.float32(2))),
                               (_format.METADATA, _meta())]),
    "newer version": _zip([(KEY + ".npy", _npy(np.float32(1))),
                           (_format.METADATA, _meta(version=99))]),
    "unknown variable in graph": _zip([(KEY + ".npy", _npy(np.float32(1))),
                                       (_format.METADATA, _meta(key="other"))]),
    "missing metadata": _zip([(KEY + ".npy", _npy(np.float32(1)))]),
    "wrong checksum": _zip([(KEY + ".npy", _npy(np.float32(1))), (_format.METADATA, _meta())]),
    "npy header disagrees with the metadata": _zip([
        (KEY + ".npy", _npy(np.array([1, 2], np.int32))),
        (_format.METADATA, _meta("float32", (2,), hashlib.sha256(
            np.array([1, 2], np.int32).tobytes()).hexdigest()))]),
    "metadata not an object": _zip([(_format.METADATA, b"[1, 2, 3]")]),
    "node child out of range": _zip([(_format.METADATA, json.dumps(
        {"format": "eager.train.Checkpoint", "version": 1, "variables": {},
         "nodes": [{"children": [["x", 5]]}]}).encode())]),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_files_raise_data_loss_and_never_unpickle(tmp_path, name):
    path = tmp_path / "hostile"
    path.write_bytes(HOSTILE[name])
    v = tf.Variable(np.float32(5.0))
    with pytest.raises(DataLossError, match="is damaged or is not an eager checkpoint"):
        train.Checkpoint(v=v).read(str(path))
    assert float(v.numpy()) == 5.0 and not PICKLE_RAN


# -- fuzz: damaged files ---------------------------------------------------------------------------


# The fuzz tests run without the suite's inference cross-check (`no_inference_check`): they
# test file handling, not ops, and thousands of loads are then several times faster.

class _Fuzzer:
    """Loads damaged copies of one checkpoint into live objects: each load must either restore
    every value exactly or raise a clear error having changed no variable. The objects are
    reused across failed loads (which must leave them untouched) and remade after a success."""

    def __init__(self, tmp_path):
        saved = _model()
        self.raw = open(train.Checkpoint(model=saved).write(str(tmp_path / "good")), "rb").read()
        self.expected = _snapshot(saved)
        self.path = str(tmp_path / "damaged")
        self.stats = {"ok": 0, "error": 0}
        self._fresh_target()

    def _fresh_target(self):
        self.target = _model(seed=1.0)
        self.before = _snapshot(self.target)
        assert self.before != self.expected

    def load(self, data, consistent_file=False):
        """`consistent_file`: the damage was hidden from every checksum (a hostile author), so
        the file may legitimately describe another program: then a mismatched dtype may raise
        InvalidArgumentError, and a success may restore only some variables, but every value
        must still be either the old one or the saved one."""
        with open(self.path, "wb") as f:
            f.write(data)
        errors = (DataLossError, ValueError, NotFoundError)
        if consistent_file:
            errors += (InvalidArgumentError,)
        try:
            status = train.Checkpoint(model=self.target).read(self.path)
            if not consistent_file:
                status.assert_consumed()
        except errors as e:
            assert self.path in str(e), f"the error does not name the file: {e}"
            assert _snapshot(self.target) == self.before, "a failed restore changed a variable"
            self.stats["error"] += 1
        else:
            now = _snapshot(self.target)
            if consistent_file:
                assert all(v in (b, e) for v, b, e in zip(now, self.before, self.expected))
            else:
                assert now == self.expected, "restored values differ"
            self.stats["ok"] += 1
            self._fresh_target()


def test_fuzz_every_single_byte_flip(tmp_path, no_inference_check):
    fuzz = _Fuzzer(tmp_path)
    raw = fuzz.raw
    rng = np.random.default_rng(1234)
    for offset in range(len(raw)):  # every byte of the file, one random bit each
        data = bytearray(raw)
        data[offset] ^= 1 << int(rng.integers(8))
        fuzz.load(bytes(data))
    # The whole-file digest covers every byte, even zip fields no reader looks at.
    assert fuzz.stats == {"ok": 0, "error": len(raw)} and len(raw) > 1500


def test_fuzz_truncation_appending_and_random_damage(tmp_path, no_inference_check):
    fuzz = _Fuzzer(tmp_path)
    raw = fuzz.raw
    rng = np.random.default_rng(99)
    for length in range(0, len(raw), 5):  # truncations
        fuzz.load(raw[:length])
    for _ in range(150):  # appended garbage, including things that look like zip records
        tail = rng.bytes(int(rng.integers(1, 200)))
        if rng.random() < 0.3:
            tail = b"PK\x05\x06" + tail
        fuzz.load(raw + tail)
    assert fuzz.stats == {"ok": 0, "error": len(range(0, len(raw), 5)) + 150}
    unchanged = 0
    for _ in range(300):  # several flips, overwritten runs, and zeroed regions
        data = bytearray(raw)
        kind = int(rng.integers(3))
        if kind == 0:
            for offset in rng.integers(len(data), size=int(rng.integers(2, 8))):
                data[offset] = int(rng.integers(256))
        else:
            start = int(rng.integers(len(data)))
            length = int(rng.integers(1, 64))
            chunk = rng.bytes(length) if kind == 1 else bytes(length)
            data[start:start + length] = chunk[:len(data) - start]
        unchanged += bytes(data) == raw  # (zeroing zeros): must simply load
        fuzz.load(bytes(data))
    assert unchanged < 10
    assert fuzz.stats == {"ok": unchanged, "error": len(range(0, len(raw), 5)) + 150 + 300
                          - unchanged}


def _reseal(body):
    """`body` (a file without its digest comment) with a correct digest appended: damage
    hidden from the whole-file check, so the checks behind it must catch it."""
    body = bytearray(body)
    body[-2:] = struct.pack("<H", len(_format.COMMENT_PREFIX) + 64)
    return bytes(body) + _format.COMMENT_PREFIX + hashlib.sha256(body).hexdigest().encode()


def test_fuzz_resealed_damage_reaches_the_inner_checks(tmp_path, no_inference_check):
    fuzz = _Fuzzer(tmp_path)
    body = fuzz.raw[:-len(_format.COMMENT_PREFIX) - 64]
    assert _reseal(body) == fuzz.raw
    rng = np.random.default_rng(7)
    for offset in range(len(body)):  # every byte of the zip itself, digest recomputed
        data = bytearray(body)
        data[offset] ^= 1 << int(rng.integers(8))
        fuzz.load(_reseal(data))
    for _ in range(200):  # random overwrites, digest recomputed
        data = bytearray(body)
        start, length = int(rng.integers(len(data))), int(rng.integers(1, 32))
        data[start:start + length] = rng.bytes(length)[:len(data) - start]
        fuzz.load(_reseal(data))
    # Zip fields no reader checks (timestamps, attributes, "version made by") are inert; the
    # rest is refused.
    assert fuzz.stats["error"] > 0.8 * (len(body) + 200)


def test_fuzz_member_contents_behind_correct_crcs_and_digest(tmp_path, no_inference_check):
    # Damage inside a member, with the zip rebuilt (correct CRC-32s) and resealed: what a
    # hostile author could produce. The JSON and .npy validation must hold on their own.
    fuzz = _Fuzzer(tmp_path)
    with zipfile.ZipFile(io.BytesIO(fuzz.raw)) as zf:
        members = [(info.filename, zf.read(info)) for info in zf.infolist()]
    rng = np.random.default_rng(11)
    array_cases = errors_in_arrays = 0
    for _ in range(300):
        index = int(rng.integers(len(members)))
        name, content = members[index]
        content = bytearray(content)
        for offset in rng.integers(len(content), size=int(rng.integers(1, 3))):
            content[offset] ^= 1 << int(rng.integers(8))
        damaged = list(members)
        damaged[index] = (name, bytes(content))
        before = fuzz.stats["error"]
        # A changed array must be refused or (an equivalent header: "(3,)" -> "(3,)\f") give
        # back exactly the saved values; a changed JSON may describe another program.
        fuzz.load(_zip(damaged), consistent_file=not name.endswith(".npy"))
        if name.endswith(".npy"):
            array_cases += 1
            errors_in_arrays += fuzz.stats["error"] > before
    # Array changes are refused: headers are checked against the metadata, data against the
    # SHA-256s; only whitespace-like header edits (or a byte flipped back) are inert.
    assert array_cases > 150 and errors_in_arrays > 0.97 * array_cases


def test_a_consistent_file_for_another_program_fails_cleanly(tmp_path):
    # Not damage: a well-formed file whose shapes differ. Still all-or-nothing.
    other = _model()
    other.layer.kernel = tf.Variable(np.zeros((3, 3), np.float32))
    path = train.Checkpoint(model=other).write(str(tmp_path / "other"))
    target = _model(seed=1.0)
    before = _snapshot(target)
    with pytest.raises(ValueError, match=r"model/layer/kernel/\.ATTRIBUTES/VARIABLE_VALUE"):
        train.Checkpoint(model=target).read(path)
    assert _snapshot(target) == before


def test_damage_behind_a_recomputed_digest_is_still_caught(tmp_path):
    # Someone "repairs" a damaged file by recomputing the whole-file digest: the members' own
    # checks (zip CRC-32, then each array's SHA-256) still refuse it.
    path = train.Checkpoint(v=tf.Variable(np.arange(64, dtype=np.float64))).write(
        str(tmp_path / "w"))
    raw = bytearray(open(path, "rb").read())
    offset = raw.index(np.arange(64, dtype=np.float64).tobytes()) + 100
    raw[offset] ^= 0xFF
    unsealed = io.BytesIO(bytes(raw[:-len(_format.COMMENT_PREFIX) - 64]))
    unsealed.seek(-2, io.SEEK_END)
    unsealed.write(b"\0\0")
    _format._seal(unsealed)
    (tmp_path / "resealed").write_bytes(unsealed.getvalue())
    with pytest.raises(DataLossError, match="CRC"):
        train.Checkpoint(v=tf.Variable(np.zeros(64))).read(str(tmp_path / "resealed"))


# -- saving from several threads ---------------------------------------------------------------


def _saves_at_once(save, threads=4):
    """Runs `save()` in `threads` threads released together by a barrier; returns the paths.
    The interpreter switches threads every microsecond meanwhile (instead of every 5 ms), so a
    race between taking a number and reading it shows up in most trials instead of rarely."""
    barrier = threading.Barrier(threads)
    paths, errors = [], []

    def run():
        try:
            barrier.wait(10)
            paths.append(save())
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    workers = [threading.Thread(target=run) for _ in range(threads)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for w in workers:
            w.start()
        for w in workers:
            w.join(60)
    finally:
        sys.setswitchinterval(interval)
    assert not errors and not any(w.is_alive() for w in workers)
    return paths


def test_first_saves_from_several_threads_get_distinct_numbers(tmp_path):
    """Four threads making the first `save()` of a fresh Checkpoint at once: each gets its own
    number and file (none overwrites another), every file restores, and the state file names
    the highest."""
    for trial in range(25):
        directory = tmp_path / f"t{trial}"
        ckpt = train.Checkpoint(v=tf.Variable(float(trial)))
        paths = _saves_at_once(lambda ckpt=ckpt, d=directory: ckpt.save(str(d / "ck")))
        assert sorted(paths) == sorted(str(directory / f"ck-{n}") for n in (1, 2, 3, 4))
        assert int(ckpt.save_counter.numpy()) == 4
        for path in paths:
            fresh = train.Checkpoint(v=tf.Variable(-1.0))
            fresh.restore(path).assert_consumed()
            assert float(fresh.v.numpy()) == float(trial)
        assert train.latest_checkpoint(str(directory)) == str(directory / "ck-4")


def test_manager_saves_from_several_threads_get_distinct_numbers(tmp_path):
    for trial in range(10):
        directory = tmp_path / f"m{trial}"
        ckpt = train.Checkpoint(v=tf.Variable(float(trial)))
        manager = train.CheckpointManager(ckpt, str(directory), max_to_keep=None)
        paths = _saves_at_once(manager.save)
        assert sorted(paths) == sorted(str(directory / f"ckpt-{n}") for n in (1, 2, 3, 4))
        assert sorted(manager.checkpoints) == sorted(paths)
        for path in paths:
            train.Checkpoint(v=tf.Variable(-1.0)).restore(path).assert_consumed()
        state = train.get_checkpoint_state(str(directory))
        assert sorted(state.all_model_checkpoint_paths) == sorted(paths)


def test_a_failed_save_gives_its_number_back_only_if_no_later_save_took_one(tmp_path):
    ckpt = train.Checkpoint(v=tf.Variable(1.0))
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    with pytest.raises(OSError):
        ckpt.save(str(blocked / "ck"))
    assert int(ckpt.save_counter.numpy()) == 0  # nothing used up
    taken = ckpt._take_save_number()
    assert ckpt.save(str(tmp_path / "ck")) == str(tmp_path / "ck-2")
    ckpt._return_save_number(taken)  # 2 was taken since: the counter stays
    assert int(ckpt.save_counter.numpy()) == 2
