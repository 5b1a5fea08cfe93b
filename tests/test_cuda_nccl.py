"""The NCCL engine on real GPUs (CuPy's `cupy.cuda.nccl`). Skipped, with the reason, where fewer
than two CUDA devices answer or CuPy has no NCCL; run on a multi-GPU machine to exercise it.
The engine's logic is tested everywhere against a fake NCCL (tests/test_collectives_nccl.py)."""

import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from eager.devices.cuda import cuda_device_count

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _nccl_missing():
    if cuda_device_count() < 2:
        return "fewer than 2 CUDA devices answer (NCCL tests need 2 GPUs)"
    try:
        from eager.distribute.collectives.nccl import load_cupy  # noqa: PLC0415

        load_cupy()
    except Exception as e:  # noqa: BLE001 - any failure: no NCCL here
        return f"CuPy's NCCL bindings cannot be imported: {e}"
    return None


pytestmark = pytest.mark.skipif(_nccl_missing() is not None, reason=str(_nccl_missing()))


def _in_fresh_process(body):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("EAGER_SIMULATED_GPUS", None)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(body)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_two_gpus_all_reduce_through_nccl():
    out = _in_fresh_process("""
        import numpy as np
        from eager.devices import registry
        from eager.distribute.collectives.nccl import NCCLCollectives

        gpus = [registry.lookup("GPU:0"), registry.lookup("GPU:1")]
        engine = NCCLCollectives.for_local_devices(gpus)
        parts = []
        for r, gpu in enumerate(gpus):
            with gpu.compute_stream._device, gpu.compute_stream.cupy_stream:
                parts.append(gpu.from_host(np.arange(1 << 20, dtype=np.float32) * (r + 1)))
        outs = [engine.all_reduce_replicas(1, r, parts[r], "mean") for r in range(2)]
        for gpu, out in zip(gpus, outs):
            host = gpu.to_host(out)
            np.testing.assert_allclose(host, np.arange(1 << 20, dtype=np.float32) * 1.5)
        engine.close()
        print("ok")
        """)
    assert out.strip() == "ok"


def test_mirrored_step_on_two_gpus_equals_one_device():
    out = _in_fresh_process("""
        import numpy as np
        import eager as tf

        rng = np.random.RandomState(0)
        X = rng.randn(64, 8).astype(np.float32)
        Y = rng.randn(64, 1).astype(np.float32)

        def train(strategy):
            with strategy.scope():
                w = tf.Variable(np.ones((8, 1), np.float32))
                opt = tf.keras.optimizers.SGD(0.1)
            ds = strategy.experimental_distribute_dataset(
                tf.data.Dataset.from_tensor_slices((X, Y)).batch(32))

            def step(xb, yb):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_sum((tf.matmul(xb, w) - yb) ** 2) / 32.0
                opt.apply_gradients([(tape.gradient(loss, w), w)])

            for xb, yb in ds:
                strategy.run(step, (xb, yb))
            return w

        strategy = tf.distribute.MirroredStrategy(["/gpu:0", "/gpu:1"])
        assert type(strategy.extended._replica_all_reduce.engine).__name__ == "NCCLCollectives"
        w2 = train(strategy)
        w1 = train(tf.distribute.OneDeviceStrategy("/gpu:0"))
        for component in w2.values:
            np.testing.assert_allclose(component.numpy(), w1.numpy(), rtol=1e-5, atol=1e-6)
        print("ok")
        """)
    assert out.strip() == "ok"


def test_nccl_engine_reduces_like_numpy_for_each_dtype():
    out = _in_fresh_process("""
        import numpy as np
        from eager.devices import registry
        from eager.distribute.collectives.nccl import NCCLCollectives

        gpus = [registry.lookup("GPU:0"), registry.lookup("GPU:1")]
        engine = NCCLCollectives.for_local_devices(gpus)
        key = 0
        for dtype in (np.float16, np.float64, np.int32, np.int64, np.uint8):
            for op in ("sum", "max", "min"):
                key += 1
                values = [np.array([1, 5, 3], dtype) * (r + 1) for r in range(2)]
                outs = [engine.all_reduce_replicas(key, r, gpus[r].from_host(values[r]), op)
                        for r in range(2)]
                want = {"sum": np.add, "max": np.maximum, "min": np.minimum}[op](*values)
                for gpu, o in zip(gpus, outs):
                    np.testing.assert_array_equal(gpu.to_host(o), want)
        print("ok")
        """)
    assert out.strip() == "ok"
