"""The launcher's command line and the cluster resolvers (no MPI needed: nothing is started).

Cluster resolver goldens recorded from TensorFlow 2.21's `tf.distribute.cluster_resolver`."""

import json
import sys

import pytest

from eager.distribute import cluster_resolver
from eager.distribute import run as launcher


@pytest.fixture
def fake_mpiexec(monkeypatch):
    monkeypatch.setattr(launcher, "find_mpiexec", lambda: "/venv/bin/mpiexec")
    monkeypatch.setattr(launcher, "mpi_flavor", lambda mpiexec: "mpich")


@pytest.fixture
def fake_open_mpi(monkeypatch):
    monkeypatch.setattr(launcher, "find_mpiexec", lambda: "/usr/bin/mpiexec")
    monkeypatch.setattr(launcher, "mpi_flavor", lambda mpiexec: "openmpi")


def tf_config(cluster, task=None) -> dict:
    config = {"cluster": cluster}
    if task:
        config["task"] = task
    return {"TF_CONFIG": json.dumps(config), "HOME": "/home/u"}


def test_plain_count_runs_this_python_on_the_script(fake_mpiexec):
    command, env = launcher.build_command(["-n", "2", "train.py", "--epochs", "3"],
                                          {"HOME": "/home/u"})
    assert command == ["/venv/bin/mpiexec", "-n", "2", sys.executable, "train.py",
                       "--epochs", "3"]
    assert env == {"HOME": "/home/u"}


def test_tf_config_gives_the_count_and_hosts_and_is_not_passed_on(fake_mpiexec):
    environ = tf_config({"chief": ["h0:2222"], "worker": ["h1:2222", "h2:2222"]},
                        {"type": "worker", "index": 0})
    command, env = launcher.build_command(["train.py"], environ)
    assert command == ["/venv/bin/mpiexec", "-n", "3", "-hosts", "h0,h1,h2", sys.executable,
                       "train.py"]
    assert env == {"HOME": "/home/u"}


def test_a_local_tf_config_needs_no_hosts(fake_mpiexec):
    environ = tf_config({"worker": ["localhost:12345", "localhost:23456"]})
    command, _ = launcher.build_command(["train.py"], environ)
    assert command == ["/venv/bin/mpiexec", "-n", "2", sys.executable, "train.py"]


def test_launcher_refuses_what_does_not_map(fake_mpiexec, capsys):
    with pytest.raises(SystemExit):
        launcher.build_command(["-n", "3", "train.py"],
                               tf_config({"worker": ["a:1", "b:1"]}))
    assert "-n 3 disagrees with TF_CONFIG's cluster of 2 workers" in capsys.readouterr().err
    with pytest.raises(ValueError, match=r"job\(s\) \['ps'\] have no MPI counterpart"):
        launcher.build_command(["train.py"], tf_config({"worker": ["a:1"], "ps": ["p:1"]}))
    with pytest.raises(SystemExit):
        launcher.build_command(["train.py"], {})
    assert "give the number of workers with -n N" in capsys.readouterr().err


def test_tf_config_cluster_resolver_matches_tf(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", json.dumps(
        {"cluster": {"worker": ["localhost:12345", "localhost:23456"]},
         "task": {"type": "worker", "index": 1}}))
    r = cluster_resolver.TFConfigClusterResolver()
    spec = r.cluster_spec()
    assert repr(spec) == "ClusterSpec({'worker': ['localhost:12345', 'localhost:23456']})"
    assert spec.as_dict() == {"worker": ["localhost:12345", "localhost:23456"]}
    assert (r.task_type, r.task_id, r.master(), r.rpc_layer) == (
        "worker", 1, "localhost:23456", None)
    assert (spec.num_tasks("worker"), spec.jobs, spec.task_address("worker", 1)) == (
        2, ["worker"], "localhost:23456")
    monkeypatch.delenv("TF_CONFIG")
    assert (r.task_type, r.task_id, r.cluster_spec().as_dict(), r.master()) == (
        None, None, {}, "")


def test_simple_cluster_resolver_matches_tf():
    r = cluster_resolver.SimpleClusterResolver(
        cluster_resolver.ClusterSpec({"worker": ["a:1", "b:2"]}), task_type="worker", task_id=0)
    assert (r.task_type, r.task_id, r.cluster_spec().as_dict(), r.master()) == (
        "worker", 0, {"worker": ["a:1", "b:2"]}, "")
    with pytest.raises(TypeError, match="must be a dictionary mapping one or more job names"):
        cluster_resolver.ClusterSpec(["a:1"])


@pytest.mark.parametrize("root", [False, True])
def test_open_mpi_gets_what_hydra_does_unasked(fake_open_mpi, monkeypatch, root):
    """Open MPI refuses root and more processes than cores unless asked, and passes remote
    workers no environment: the launcher asks, as Horovod's does."""
    monkeypatch.setattr(launcher.os, "geteuid", lambda: 0 if root else 1000, raising=False)
    as_root = ["--allow-run-as-root"] if root else []
    command, env = launcher.build_command(["-n", "4", "train.py"], {"HOME": "/home/u"})
    assert command == ["/usr/bin/mpiexec", "-n", "4", *as_root, "--oversubscribe",
                       sys.executable, "train.py"]
    environ = tf_config({"worker": ["h1:1", "h2:1"]})
    environ.update(PATH="/bin", EAGER_COLLECTIVE_OVERLAP="1", NCCL_DEBUG="INFO", SECRET="x")
    command, env = launcher.build_command(["train.py"], environ)
    assert command == ["/usr/bin/mpiexec", "-n", "2", *as_root, "--host", "h1,h2",
                       "-x", "EAGER_COLLECTIVE_OVERLAP", "-x", "NCCL_DEBUG", "-x", "PATH",
                       sys.executable, "train.py"]
    assert "TF_CONFIG" not in env and env["SECRET"] == "x"


def test_the_mpi_flavor_is_read_from_mpiexecs_version(tmp_path):
    for banner, flavor in (("mpiexec (OpenRTE) 4.1.6", "openmpi"),
                           ("mpirun (Open MPI) 5.0.3", "openmpi"),
                           ("HYDRA build details:\n    Version: 4.2.0", "mpich")):
        fake = tmp_path / "mpiexec"
        fake.write_text(f"#!/bin/sh\nprintf '{banner}\\n'\n")
        fake.chmod(0o755)
        assert launcher.mpi_flavor(str(fake)) == flavor
    assert launcher.mpi_flavor(str(tmp_path / "missing")) == "mpich"
