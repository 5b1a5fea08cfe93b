"""Converting a Python function: source to tree to passes to code, cached per code object.

`convert(function, options)` returns the converted function, or None when `function` is not
converted (see `why_not_converted`): eager's own code, numpy's and other libraries' code, the
standard library, code this module generated, generators and `async` functions (TensorFlow
leaves them too), and functions whose source cannot be read or that the converter fails on;
the last warn once, naming the function and the cause, and are then called as they are (as
TensorFlow's AutoGraph falls back).

How the converted function is made. The converted `def` (or lambda) is put inside a factory,
`def ag__factory(ag__, <the function's free variables>): <converted def>`, so that
the compiler makes the runtime operators (`ag__`) and the original's free variables free
variables of the converted code. The factory is compiled under the user's file name, never
run: its code object holds the converted function's code, which becomes a function with the
original's globals, defaults and *the original's closure cells* (a `nonlocal` assignment in
converted code writes the enclosing function's variable) plus one cell holding the operators.
Zero-argument `super()` works because the converter spells it `super(__class__, self)` and
`__class__` is one of those cells.

The cache keeps, per code object and options, the converted code object, and per code object
why it is not converted (weakly: both go with the code). A second trace, a second instance's
method, or a second `eager.function` of the same function converts nothing: binding a cached
code object to a function's cells is the whole cost; and a call of a function that is not
converted (eager's own, a library's) is decided by the same one look-up.
"""

from __future__ import annotations

import __future__
import ast
import inspect
import os
import sysconfig
import threading
import types
import sys
import warnings
import weakref

from ..base.user_code import EAGER_DIR
from . import passes
from .errors import ConversionError
from .nodes import OPERATORS, Namer, function_def, located, position
from .operators import NAMESPACE, Caller
from .source import clear_cache as clear_sources, parse_function

__all__ = ["Options", "convert", "converted_source", "why_not_converted", "clear_cache",
           "is_generated"]

_FUTURE_FLAGS = 0
for _feature in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _feature).compiler_flag

#: Packages whose functions are called as they are (their code is not the user's).
_LIBRARIES = frozenset({"numpy", "scipy", "cupy", "cupyx", "pandas", "tensorflow", "keras",
                        "torch", "jax", "jaxlib", "IPython", "ipykernel", "_pytest", "pytest",
                        "pluggy", "hypothesis", "matplotlib", "absl"})
_STDLIB = os.path.realpath(sysconfig.get_paths()["stdlib"]) + os.sep
_CONVERTED = "ag__converted"  # the converted def's name inside the factory
_CODE_TYPE = types.CodeType
_NOT_CONVERTED_FLAGS = (inspect.CO_GENERATOR | inspect.CO_COROUTINE |
                        inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE)


class Options:
    """What a conversion does: `recursive` (convert callees too) and `builtin_functions`
    (`Feature.BUILTIN_FUNCTIONS`: `print` of tensors becomes `eager.print`). One instance per
    combination (`Options.get`), holding the operators namespace converted code runs with
    (`cell`) and its `converted_call` (`caller`)."""

    _instances = {}
    _lock = threading.Lock()

    def __init__(self, recursive, builtin_functions):
        self.recursive = recursive
        self.builtin_functions = builtin_functions
        namespace = types.SimpleNamespace(**NAMESPACE)
        namespace.converted_call = self.caller = Caller(self.convert, recursive=recursive)
        namespace.converted_iterable = self.caller.iterable
        self.cell = types.CellType(namespace)

    @classmethod
    def get(cls, recursive=True, builtin_functions=False) -> "Options":
        key = (bool(recursive), bool(builtin_functions))
        found = cls._instances.get(key)
        if found is None:
            with cls._lock:
                found = cls._instances.setdefault(key, cls(*key))
        return found

    def convert(self, function):
        return convert(function, self)


_DEFAULT = None


def default_options() -> Options:
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Options.get()
    return _DEFAULT


# -- what is converted -------------------------------------------------------------------------
class _ByIdentity:
    """A map from code objects *by identity* to values, forgetting a code object when it dies.
    (Code objects compare equal by contents, file name excluded: a converted function with no
    control flow can equal its original, and the same code from two files is equal, so weak
    dictionaries, which key by equality, would mix them up.)"""

    def __init__(self):
        self._items = {}

    def get(self, code):
        entry = self._items.get(id(code))
        if entry is not None and entry[0]() is code:
            return entry[1]
        return None

    def set(self, code, value):
        key = id(code)
        items = self._items

        def forget(ref):
            entry = items.get(key)
            if entry is not None and entry[0] is ref:
                del items[key]

        items[key] = (weakref.ref(code, forget), value)

    def clear(self):
        self._items.clear()


_GENERATED = _ByIdentity()  # converted code objects (and those nested in them)
#: code object -> {options: converted code object, or the `ConversionError` converting under
#: those options raised}, or why it is not converted at all (a str, or the `ConversionError`):
#: one look-up decides a call of a known function either way.
_CODE = _ByIdentity()
_LOCK = threading.RLock()


def is_generated(code) -> bool:
    """Whether `code` is converted code (so it is never converted again)."""
    return _GENERATED.get(code) is not None


_STDLIB_FILES = {}  # file name -> whether it is in the standard library


def _library_reason(function, code):
    """Why `function` (not eager's own) is not the user's code: a library's (by module) or
    the standard library's (by file); None when it is the user's."""
    filename = code.co_filename
    module = getattr(function, "__module__", None) or ""
    if module.partition(".")[0] in _LIBRARIES:
        return f"library code ({module})"
    stdlib = _STDLIB_FILES.get(filename)
    if stdlib is None:
        real = os.path.realpath(filename) if os.path.isabs(filename) else filename
        stdlib = real.startswith(_STDLIB) and "-packages" not in real[len(_STDLIB):]
        if len(_STDLIB_FILES) > 10000:
            _STDLIB_FILES.clear()
        _STDLIB_FILES[filename] = stdlib
    return "standard library code" if stdlib else None


def why_not_converted(function):
    """None when `function` (a Python function) is converted; else why not (cached per code
    object; the reasons that warn are `ConversionError`s)."""
    code = function.__code__
    if _GENERATED.get(code) is not None:
        return "converted code"
    known = _CODE.get(code)
    if known is not None:
        if known.__class__ is not dict:
            return known
        return next((v for v in known.values() if v.__class__ is not _CODE_TYPE), None)
    # Eager's own code is known by its file alone, before any library rule is asked: every
    # public function shares one code object (the traceback filter's wrapper), so which one
    # comes first decides nothing.
    if code.co_filename.startswith(EAGER_DIR):
        reason = "eager's own code"
    else:
        reason = _library_reason(function, code)
    if reason is None and code.co_flags & _NOT_CONVERTED_FLAGS:
        reason = "a generator or coroutine function"
    if reason is not None:
        _CODE.set(code, reason)
    return reason


def convert(function, options=None):
    """The converted form of Python function `function` under `options`, or None to call it as
    it is (see the module doc)."""
    options = options or default_options()
    code = function.__code__
    known = _CODE.get(code)
    if known is not None:
        if known.__class__ is not dict:
            return None  # refused before
        converted = known.get(options)
        if converted is not None:
            if converted.__class__ is not _CODE_TYPE:
                return None  # converting it under these options failed
            return _bind(converted, function, options)
    if why_not_converted(function) is not None:
        return None
    with _LOCK:
        per_options = _CODE.get(code)
        if per_options.__class__ is not dict:
            per_options = None
        converted = per_options.get(options) if per_options is not None else None
        if converted is None:
            try:
                converted = _compile(function, options)
            except Exception as exc:  # noqa: BLE001 - any failure: run it as it is
                if not isinstance(exc, ConversionError):  # a converter bug
                    exc = ConversionError(
                        f"the converter failed ({type(exc).__name__}: {exc}); this is a "
                        "bug in eager.autograph, please report it with the function")
                if per_options is None:
                    _CODE.set(code, exc)
                else:  # (what other options made of it stays)
                    per_options[options] = exc
                _warn(function, exc)
                return None
            if per_options is None:
                per_options = {}
                _CODE.set(code, per_options)
            per_options[options] = converted
        elif converted.__class__ is not _CODE_TYPE:
            return None
    return _bind(converted, function, options)


def _warn(function, exc):
    """The one warning for a function that cannot be converted, at its definition."""
    code = function.__code__
    message = (f"AutoGraph could not transform {function!r} and will run it as-is.\nCause: "
               f"{exc}\nTo silence this warning, decorate the function with "
               "@eager.autograph.experimental.do_not_convert")
    try:
        warnings.warn_explicit(message, UserWarning, code.co_filename, code.co_firstlineno,
                               module=getattr(function, "__module__", None) or "<unknown>")
    except Warning:
        # A filter that turns warnings into errors (`-W error`, pytest's `filterwarnings =
        # error`) must not stop a function that runs fine as written; TensorFlow logs this
        # warning and goes on. It is printed instead.
        print(f"{code.co_filename}:{code.co_firstlineno}: UserWarning: {message}",
              file=sys.stderr)


def _bind(code, function, options):
    original = function.__code__.co_freevars
    closure = function.__closure__ or ()
    cells = []
    for var in code.co_freevars:
        if var == OPERATORS:
            cells.append(options.cell)
        else:
            cells.append(closure[original.index(var)])
    converted = types.FunctionType(code, function.__globals__, function.__name__,
                                   function.__defaults__, tuple(cells))
    converted.__kwdefaults__ = function.__kwdefaults__
    converted.__qualname__ = function.__qualname__
    converted.__module__ = function.__module__
    converted.__doc__ = function.__doc__
    return converted


# -- compiling ---------------------------------------------------------------------------------
def _converted_tree(function, options):
    """(the converted `def` or lambda node, its file name)."""
    node, filename = parse_function(function)
    if isinstance(node, ast.AsyncFunctionDef):
        raise ConversionError(f"{function!r} is an async function")
    if isinstance(node, ast.FunctionDef):
        node.decorator_list = []
    ctx = passes.Context(Namer(function.__code__), function.__code__,
                         builtin_functions=options.builtin_functions)
    passes.run(node, ctx)
    return node, filename


def _compile(function, options):
    node, filename = _converted_tree(function, options)
    code = function.__code__
    at = position(node)
    if isinstance(node, ast.Lambda):
        inner = [located(ast.Expr(node), at)]
    else:
        # Renamed inside the factory, so that the function's own name (a recursive call) still
        # means what it means outside; the code object gets its name back below.
        node.name = _CONVERTED
        inner = [node]
    # (The factory is never run: its code's constants hold the converted code.)
    factory = function_def("ag__factory", (OPERATORS, *code.co_freevars), inner, at)
    module = ast.Module(body=[factory], type_ignores=[])
    flags = code.co_flags & _FUTURE_FLAGS
    try:
        compiled = compile(module, filename, "exec", flags=flags, dont_inherit=True)
    except (TypeError, ValueError):  # a generated node without a position (a converter bug)
        compiled = compile(ast.fix_missing_locations(module), filename, "exec", flags=flags,
                           dont_inherit=True)
    except SyntaxError as exc:  # a construct the passes turned into invalid Python
        raise ConversionError(f"the converted code of {function!r} does not compile: "
                              f"{exc}") from None
    factory_code = next(c for c in compiled.co_consts if isinstance(c, types.CodeType))
    converted = next(c for c in factory_code.co_consts if isinstance(c, types.CodeType)
                     and c.co_name in (_CONVERTED, "<lambda>"))
    if converted.co_name == _CONVERTED:
        renamed = {"co_name": code.co_name}
        if hasattr(code, "co_qualname"):
            renamed["co_qualname"] = code.co_qualname
        converted = converted.replace(**renamed)
    _remember_generated(converted)  # (the module's and the factory's code never run)
    return converted


def _remember_generated(code):
    stack = [code]
    while stack:
        c = stack.pop()
        _GENERATED.set(c, True)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))


def converted_source(function, options=None) -> str:
    """The converted code of `function`, as Python source (`eager.autograph.to_code`)."""
    options = options or default_options()
    reason = why_not_converted(function)
    if isinstance(reason, ConversionError):
        raise reason
    node, _ = _converted_tree(function, options)
    return ast.unparse(node) + "\n"  # (the def keeps its name: the factory renames it)


def clear_cache():
    """Forgets every conversion (for measurements of converting from scratch)."""
    with _LOCK:
        _CODE.clear()
    clear_sources()
