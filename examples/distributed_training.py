"""Data-parallel training of a small regression on two local logical CPUs with
`eager.distribute.MirroredStrategy` (run: `python examples/distributed_training.py`).

Each step's global batch is split across the replicas; the replicas' gradients are summed
(the loss is scaled by the global batch size) and every replica applies the same update, so
the mirrored weights stay equal and match a one-device run."""

import numpy as np

import eager as tf

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
        loss = tf.reduce_sum(per_example) / GLOBAL_BATCH
    grads = tape.gradient(loss, [w, b])
    optimizer.apply_gradients(zip(grads, [w, b]))
    return loss


@tf.function
def train_step(xb, yb):
    return strategy.reduce("SUM", strategy.run(step, (xb, yb)), axis=None)


if __name__ == "__main__":
    for epoch in range(5):
        for xb, yb in dataset:
            loss = train_step(xb, yb)
        print(f"epoch {epoch}: loss {float(loss):.5f}")
    print("w =", w.numpy().ravel(), "b =", b.numpy())
