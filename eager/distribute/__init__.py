"""`eager.distribute`: data-parallel training across devices and processes (≈ `tf.distribute`)."""
