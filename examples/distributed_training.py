"""Data-parallel training of a small regression with `eager.distribute`.

Run either way:

    python examples/distributed_training.py              # MirroredStrategy, 2 logical CPUs
    mpiexec -n 2 python examples/distributed_training.py # MultiWorkerMirroredStrategy, 2 workers

(`python -m eager.distribute.run -n 2 examples/distributed_training.py` is the same as the
second.) Each step's global batch is split across the replicas (across both workers' replicas
under mpiexec: each worker reads its half); the replicas' gradients are summed (the loss is
scaled by the global batch size) and every replica applies the same update, so the weights stay
equal everywhere and match a one-device run. The final weights are written by the chief alone
to `<dir>/final` (a checkpoint any run can restore; <dir>: the first argument, else
`eager_distributed_training` in the temporary directory)."""

import os
import sys
import tempfile

import numpy as np

import eager as tf
from eager.distribute.multi_worker import launched_processes

if launched_processes() > 1:  # started by mpiexec: one worker per process
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
else:
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
GLOBAL_BATCH = 32

rng = np.random.RandomState(0)
x = rng.randn(256, 4).astype(np.float32)
y = x @ np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32) + 0.1

with strategy.scope():
    w = tf.Variable(np.zeros((4, 1), np.float32), name="w")
    b = tf.Variable(np.zeros((1,), np.float32), name="b")
    optimizer = tf.keras.optimizers.SGD(0.1)

dataset = strategy.experimental_distribute_dataset(
    tf.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL_BATCH))


def step(xb, yb):
    with tf.GradientTape() as tape:
        per_example = tf.reduce_sum((tf.matmul(xb, w) + b - yb) ** 2, axis=1)
        loss = tf.nn.compute_average_loss(per_example, global_batch_size=GLOBAL_BATCH)
    grads = tape.gradient(loss, [w, b])
    optimizer.apply_gradients(zip(grads, [w, b]))
    return loss


@tf.function
def train_step(xb, yb):
    return strategy.reduce("SUM", strategy.run(step, (xb, yb)), axis=None)


if __name__ == "__main__":
    chief = strategy.extended.should_checkpoint
    for epoch in range(5):
        for xb, yb in dataset:
            loss = train_step(xb, yb)
        if chief:
            print(f"epoch {epoch}: loss {float(loss):.5f}")
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(tempfile.gettempdir(),
                                                             "eager_distributed_training")
    path = tf.train.Checkpoint(w=w, b=b).write(os.path.join(out, "final"))
    if chief:
        print(f"{strategy.num_replicas_in_sync} replicas; w = {w.numpy().ravel()}, "
              f"b = {b.numpy()}; saved to {path}")
