"""Train a small MLP on synthetic MNIST-shaped data twice: with Keras's `compile`/`fit` (and its
progress bar), then with a hand-written `GradientTape` loop over the same batches from the same
initial weights. Both end at the same weights, so at the same accuracy.

    python examples/keras_mnist_like.py

The data: 28x28 "images" in 10 classes, each class a fixed random template plus noise, so a
linear-ish model learns it in a couple of epochs. The model is a `keras.layers.Layer` with the
`Trainer` mixin (what `keras.Model` is built from) on two hand-written dense layers.
"""

from __future__ import annotations

import numpy as np

import eager as tf
from eager import keras


def make_data(n, seed=0):
    templates = np.random.default_rng(1234).uniform(0, 1, (10, 28, 28)).astype("float32")
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, n)
    images = templates[labels] + rng.normal(0, 1.5, (n, 28, 28)).astype("float32")
    return images.astype("float32"), labels.astype("int64")


class Dense(keras.layers.Layer):
    def __init__(self, units, activation=None, **kwargs):
        super().__init__(**kwargs)
        self.units, self.activation = units, activation

    def build(self, input_shape):
        self.kernel = self.add_weight((input_shape[-1], self.units),
                                      initializer=keras.initializers.GlorotUniform(seed=1),
                                      name="kernel")
        self.bias = self.add_weight((self.units,), initializer="zeros", name="bias")

    def call(self, x):
        y = tf.matmul(x, self.kernel) + self.bias
        return self.activation(y) if self.activation is not None else y


class MLP(keras.trainers.Trainer, keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hidden = Dense(64, tf.nn.relu)
        self.out = Dense(10)

    def call(self, images):
        return self.out(self.hidden(tf.reshape(images, [-1, 28 * 28])))


def sparse_crossentropy_from_logits(labels, logits):
    return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.cast(labels, "int32"),
                                                          logits=logits)


def accuracy(model, images, labels):
    predicted = np.argmax(model.predict(images, verbose=0), axis=-1)
    return float(np.mean(predicted == labels))


def main(epochs=2, batch_size=64, verbose="auto"):
    x, y = make_data(3000)
    x_test, y_test = make_data(1000, seed=1)

    # 1. compile / fit, with Keras's progress bar
    model = MLP()
    model(x[:1])
    initial = model.get_weights()
    model.compile(optimizer=tf.optimizers.SGD(0.05), loss=sparse_crossentropy_from_logits,
                  metrics=["accuracy"])
    history = model.fit(x, y, batch_size=batch_size, epochs=epochs, shuffle=False,
                        validation_data=(x_test, y_test), verbose=verbose)
    fit_accuracy = accuracy(model, x_test, y_test)

    # 2. the same training as a custom GradientTape loop (same weights, batches, optimizer)
    loop_model = MLP()
    loop_model(x[:1])
    loop_model.set_weights(initial)
    optimizer = tf.optimizers.SGD(0.05)

    @tf.function
    def train_step(images, labels):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(sparse_crossentropy_from_logits(labels, loop_model(images)))
        grads = tape.gradient(loss, loop_model.trainable_weights)
        optimizer.apply_gradients(zip(grads, loop_model.trainable_weights))
        return loss

    for _ in range(epochs):
        for start in range(0, len(x), batch_size):
            train_step(tf.constant(x[start:start + batch_size]),
                       tf.constant(y[start:start + batch_size]))
    loop_accuracy = accuracy(loop_model, x_test, y_test)

    print(f"fit:         test accuracy {fit_accuracy:.4f}")
    print(f"custom loop: test accuracy {loop_accuracy:.4f}")
    return history, fit_accuracy, loop_accuracy, model, loop_model


if __name__ == "__main__":
    main()
