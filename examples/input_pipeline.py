"""An input pipeline feeding a traced training step: from_tensor_slices -> shuffle -> map ->
batch -> prefetch, with the time per step printed with and without the prefetch.

Run: python examples/input_pipeline.py [EPOCHS]

The map function (a per-example normalisation with a little noise) is traced once, as TensorFlow
traces it; the training step is an `eager.function` (softmax regression with SGD). With
`prefetch`, the next batch is made on a background thread while the step runs, so the step
loop waits less for data (how much depends on the machine's free cores: numpy and BLAS release
the GIL in their kernels).
"""

import sys
import time

import numpy as np

import eager as tf

ROWS, FEATURES, CLASSES, BATCH = 8192, 784, 10, 128


def make_data(seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((CLASSES, FEATURES)).astype(np.float32)
    labels = rng.integers(0, CLASSES, ROWS)
    images = centers[labels] + rng.standard_normal((ROWS, FEATURES)).astype(np.float32)
    return images, labels.astype(np.int64)


def preprocess(image, label):
    """Per-example work the pipeline does: standardise, add a little noise."""
    image = (image - tf.reduce_mean(image)) / (tf.math.reduce_std(image) + 1e-6)
    image = image + tf.random.normal(tf.shape(image), stddev=0.05)
    return image, label


def pipeline(images, labels, prefetch):
    ds = tf.data.Dataset.from_tensor_slices((images, labels))
    ds = ds.shuffle(1024, seed=1).map(preprocess, num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.batch(BATCH, drop_remainder=True)
    return ds.prefetch(tf.data.AUTOTUNE) if prefetch else ds


def train(epochs, prefetch):
    images, labels = make_data()
    w = tf.Variable(tf.zeros([FEATURES, CLASSES]))
    b = tf.Variable(tf.zeros([CLASSES]))
    optimizer = tf.optimizers.SGD(0.1)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            logits = tf.matmul(x, w) + b
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        optimizer.apply_gradients(zip(tape.gradient(loss, [w, b]), [w, b]))
        return loss

    ds = pipeline(images, labels, prefetch)
    for x, y in ds.take(2):  # warm up: trace and compile the step
        float(step(x, y))
    steps, loss = 0, None
    start = time.perf_counter()
    for _ in range(epochs):
        for x, y in ds:
            loss = step(x, y)
            steps += 1
    float(loss)  # wait for the last step
    seconds = time.perf_counter() - start
    return seconds / steps, float(loss), steps


def main(epochs=2):
    for prefetch in (False, True):
        per_step, loss, steps = train(epochs, prefetch)
        print(f"{'with' if prefetch else 'without'} prefetch: {steps} steps, "
              f"{per_step * 1e3:.2f} ms per step, final loss {loss:.3f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
