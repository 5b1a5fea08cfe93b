"""What `load` returns: plain objects holding the restored variables, functions and children.

* `RestoredFunction` ≈ TensorFlow's of the same name: one saved `eager.function` attribute, its
  concrete functions (one per trace that was saved), called like the original: a call runs the
  first trace whose signature the arguments fit, else TensorFlow's ValueError listing the
  options. Restored functions are never traced again (their Python code was not saved).
* `_UserObject`: a saved module or other trackable, as TensorFlow names it. It is an
  `eager.Module`, so `variables`, `trainable_variables` and `submodules` work (TensorFlow's
  loaded objects lack them; they make fine-tuning a loaded model one line), and it can be saved
  again. Calling it calls its restored `__call__`.
* `SignatureMap`: `loaded.signatures`, a read-only mapping from signature keys to concrete
  functions that take keyword arguments and return dicts of tensors.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..state.module import Module
from ..tensor import EagerTensor

__all__ = ["RestoredFunction", "SignatureMap"]

_MAX_FAST_KEYS = 256


class RestoredFunction:
    """A loaded `eager.function` (see the module doc)."""

    def __init__(self, name, concrete_functions, input_signature):
        self.__name__ = name
        self._concrete_functions = tuple(concrete_functions)
        self._input_signature = input_signature
        # The fast lookup, as `Function`'s: (meta, array shape) of all-EagerTensor positional
        # calls -> the concrete function that took them as its flat tensor arguments.
        self._fast = {}

    @property
    def input_signature(self):
        return self._input_signature

    @property
    def concrete_functions(self) -> tuple:
        return self._concrete_functions

    @property
    def variables(self) -> tuple:
        found, seen = [], set()
        for concrete in self._concrete_functions:
            for v in concrete.variables:
                if id(v) not in seen:
                    seen.add(id(v))
                    found.append(v)
        return tuple(found)

    @property
    def trainable_variables(self) -> tuple:
        return tuple(v for v in self.variables if v.trainable)

    def __call__(self, *args, **kwargs):
        # Hot path: positional EagerTensors of kinds seen before skip binding and checking.
        key = None
        if not kwargs:
            key = []
            for a in args:
                if a.__class__ is not EagerTensor:
                    key = None
                    break
                key.append(a._meta)
                key.append(a._value.shape)
            if key is not None:
                key = tuple(key)
                concrete = self._fast.get(key)
                if concrete is not None:
                    return concrete._call_flat(args)
        concrete, tensors = self._match(args, kwargs)
        if key is not None and len(tensors) == len(args) and \
                all(t is a for t, a in zip(tensors, args)):
            if len(self._fast) >= _MAX_FAST_KEYS:
                self._fast.clear()
            self._fast[key] = concrete
        return concrete._call_flat(tensors)

    def _match(self, args, kwargs):
        if self._input_signature is not None and len(self._concrete_functions) == 1:
            # As the original Function: arguments that do not fit the signature are TF's
            # TypeError ("Binding inputs to tf.function failed ...").
            concrete = self._concrete_functions[0]
            try:
                return concrete, concrete.check_arguments(concrete._binder.bind(args, kwargs))
            except TypeError as exc:
                raise concrete.binding_error(exc, args, kwargs) from None
        for concrete in self._concrete_functions:
            try:
                return concrete, concrete.check_arguments(concrete._binder.bind(args, kwargs))
            except TypeError:
                continue
        raise ValueError(self._no_match_text(args, kwargs))

    def get_concrete_function(self, *args, **kwargs):
        """The saved trace these arguments (tensors or TensorSpecs) fit; with none and an
        input_signature, the signature's."""
        if not args and not kwargs and len(self._concrete_functions) == 1:
            return self._concrete_functions[0]
        from ..functions.arguments import describe  # noqa: PLC0415 - inspection only
        for concrete in self._concrete_functions:
            try:
                values = concrete._binder.bind(args, kwargs)
            except TypeError:
                continue
            specs = []
            describe(values, specs, specs_allowed=True)
            if concrete.accepts(specs):
                return concrete
        raise ValueError(self._no_match_text(args, kwargs))

    def _no_match_text(self, args, kwargs) -> str:
        """TensorFlow's words for a call no saved trace fits, with each option's arguments."""
        def block(positional, keywords):
            lines = [f"  Positional arguments ({len(positional)} total):"]
            lines += [f"    * {a!r:.200}" for a in positional]
            lines.append(f"  Keyword arguments: {keywords!r:.200}")
            return "\n".join(lines)

        text = ["Could not find matching concrete function to call loaded from the SavedModel. "
                "Got:", block(args, kwargs), "",
                f" Expected these arguments to match one of the following "
                f"{len(self._concrete_functions)} option(s):"]
        for i, concrete in enumerate(self._concrete_functions, 1):
            positional, keywords = concrete.structured_input_signature
            text += ["", f"Option {i}:", block(positional, keywords)]
        return "\n".join(text)

    def __repr__(self):
        return f"<eager.saved_model.RestoredFunction {self.__name__}>"


class _UserObject(Module):
    """A loaded module or trackable (module doc)."""

    def __init__(self):
        super().__init__(name="restored")

    def __call__(self, *args, **kwargs):
        call = self.__dict__.get("__call__")
        if call is None:
            raise TypeError("This object was loaded from a SavedModel without a `__call__` "
                            "function, so it is not callable.")
        return call(*args, **kwargs)


class SignatureMap(Mapping):
    """`loaded.signatures`: signature key -> concrete function (module doc)."""

    def __init__(self, signatures):
        self._signatures = dict(signatures)

    def __getitem__(self, key):
        return self._signatures[key]

    def __iter__(self):
        return iter(self._signatures)

    def __len__(self):
        return len(self._signatures)

    def __repr__(self):
        return f"_SignatureMap({self._signatures!r})"
