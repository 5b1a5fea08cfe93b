"""The cases of tests/fixtures/keras_conv_transpose_goldens.json (recorded by
record_conv_transpose_goldens.py, replayed by test_conv_transpose.py)."""

#: tf.nn.conv2d_transpose: (input shape, filter shape, output_shape, strides, padding, format)
OP_CASES = {
    "same_s2": ((2, 3, 3, 4), (3, 3, 5, 4), (2, 6, 6, 5), 2, "SAME", "NHWC"),
    "valid_s2": ((1, 3, 4, 2), (2, 3, 3, 2), (1, 6, 9, 3), (2, 2), "VALID", "NHWC"),
    "valid_s1": ((2, 4, 3, 3), (3, 2, 2, 3), (2, 6, 4, 2), 1, "VALID", "NHWC"),
    "same_odd_out": ((1, 3, 3, 2), (3, 3, 2, 2), (1, 5, 6, 2), 2, "SAME", "NHWC"),
    "explicit": ((1, 3, 3, 2), (2, 2, 3, 2), (1, 5, 5, 3), 2, [[0, 0], [1, 0], [0, 1], [0, 0]],
                 "NHWC"),
}

#: Keras layers: (class, kwargs, input shape)
LAYER_CASES = {
    "conv2dt_default": ("Conv2DTranspose", {"filters": 3, "kernel_size": 3}, (2, 4, 4, 2)),
    "conv2dt_same_s2": ("Conv2DTranspose", {"filters": 3, "kernel_size": (3, 2), "strides": 2,
                                            "padding": "same", "activation": "relu"},
                        (2, 3, 4, 2)),
    "conv2dt_output_padding": ("Conv2DTranspose", {"filters": 2, "kernel_size": 3,
                                                   "strides": (2, 3), "output_padding": (1, 2)},
                               (1, 3, 3, 2)),
    "conv2dt_same_output_padding": ("Conv2DTranspose",
                                    {"filters": 2, "kernel_size": 4, "strides": 2,
                                     "padding": "same", "output_padding": 1}, (1, 3, 3, 1)),
    "conv2dt_stride_gt_kernel": ("Conv2DTranspose", {"filters": 1, "kernel_size": 2,
                                                     "strides": 3}, (1, 2, 2, 1)),
    "conv1dt_default": ("Conv1DTranspose", {"filters": 3, "kernel_size": 3}, (2, 5, 2)),
    "conv1dt_same_s2": ("Conv1DTranspose", {"filters": 2, "kernel_size": 3, "strides": 2,
                                            "padding": "same"}, (2, 4, 3)),
    "conv1dt_output_padding": ("Conv1DTranspose", {"filters": 2, "kernel_size": 3,
                                                   "strides": 3, "output_padding": 2},
                               (1, 3, 2)),

    "depthwise_default": ("DepthwiseConv2D", {"kernel_size": 3}, (2, 5, 5, 3)),
    "depthwise_mult_same_s2": ("DepthwiseConv2D", {"kernel_size": (3, 2), "strides": 2,
                                                   "padding": "same", "depth_multiplier": 2,
                                                   "activation": "relu"}, (1, 5, 4, 2)),
    "separable_default": ("SeparableConv2D", {"filters": 4, "kernel_size": 3}, (2, 5, 5, 3)),
    "separable_mult_dilated": ("SeparableConv2D", {"filters": 3, "kernel_size": 2,
                                                   "depth_multiplier": 2, "dilation_rate": 2,
                                                   "padding": "same"}, (1, 6, 5, 2)),
}

ERROR_CASES = {
    "output_padding_ge_strides": ("Conv2DTranspose", {"filters": 2, "kernel_size": 3,
                                                      "strides": 2, "output_padding": 2}),
    "zero_filters": ("Conv2DTranspose", {"filters": 0, "kernel_size": 3}),
    "zero_kernel": ("Conv1DTranspose", {"filters": 2, "kernel_size": 0}),
    "strides_and_dilation": ("Conv2DTranspose", {"filters": 2, "kernel_size": 3, "strides": 2,
                                                 "dilation_rate": 2}),
    "bad_padding": ("Conv2DTranspose", {"filters": 2, "kernel_size": 3, "padding": "full"}),
    "depthwise_zero_multiplier": ("DepthwiseConv2D", {"kernel_size": 3,
                                                      "depth_multiplier": 0}),
    "separable_zero_filters": ("SeparableConv2D", {"filters": 0, "kernel_size": 3}),
}
