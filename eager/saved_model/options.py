"""`SaveOptions` and `LoadOptions` ≈ TensorFlow's: accepted with every argument TensorFlow's
take; an option set to anything but its default raises NotImplementedError, since eager's
format has nothing to do with it (namespaces, debug info, sharding, device placement of I/O,
partial checkpoints)."""

from __future__ import annotations

__all__ = ["SaveOptions", "LoadOptions", "check_save_options", "check_load_options"]


class _Options:
    _DEFAULTS: dict = {}

    def __init__(self, **given):
        for name, default in self._DEFAULTS.items():
            setattr(self, name, given.pop(name, default))
        if given:
            raise TypeError(f"{type(self).__name__}() got an unexpected keyword argument "
                            f"{next(iter(given))!r}")

    def _check(self, what):
        for name, default in self._DEFAULTS.items():
            value = getattr(self, name)
            if value != default and not (default is None and value in ((), [], {})):
                raise NotImplementedError(
                    f"eager.saved_model.{what}: {type(self).__name__}({name}={value!r}) is not "
                    "supported by eager's SavedModel format; leave it at its default "
                    f"({default!r}).")

    def __repr__(self):
        fields = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._DEFAULTS)
        return f"{type(self).__name__}({fields})"


class SaveOptions(_Options):
    """≈ `tf.saved_model.SaveOptions` (module doc)."""

    _DEFAULTS = {"namespace_whitelist": None, "save_debug_info": False, "function_aliases": None,
                 "experimental_debug_stripper": False, "experimental_io_device": None,
                 "experimental_variable_policy": None, "experimental_custom_gradients": True,
                 "experimental_image_format": False, "experimental_skip_saver": False,
                 "experimental_sharding_callback": None, "extra_tags": None}

    def __init__(self, namespace_whitelist=None, save_debug_info=False, function_aliases=None,
                 experimental_debug_stripper=False, experimental_io_device=None,
                 experimental_variable_policy=None, experimental_custom_gradients=True,
                 experimental_image_format=False, experimental_skip_saver=False,
                 experimental_sharding_callback=None, extra_tags=None):
        super().__init__(**{k: v for k, v in locals().items()
                            if k not in ("self", "__class__")})


class LoadOptions(_Options):
    """≈ `tf.saved_model.LoadOptions` (module doc)."""

    _DEFAULTS = {"allow_partial_checkpoint": False, "experimental_io_device": None,
                 "experimental_skip_checkpoint": False, "experimental_variable_policy": None,
                 "experimental_load_function_aliases": False}

    def __init__(self, allow_partial_checkpoint=False, experimental_io_device=None,
                 experimental_skip_checkpoint=False, experimental_variable_policy=None,
                 experimental_load_function_aliases=False):
        super().__init__(**{k: v for k, v in locals().items()
                            if k not in ("self", "__class__")})


def check_save_options(options):
    if options is None:
        return
    if not isinstance(options, SaveOptions):
        raise TypeError(f"options must be an eager.saved_model.SaveOptions, got {options!r:.80}")
    options._check("save")


def check_load_options(options):
    if options is None:
        return
    if not isinstance(options, LoadOptions):
        raise TypeError(f"options must be an eager.saved_model.LoadOptions, got {options!r:.80}")
    options._check("load")
