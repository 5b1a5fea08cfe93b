"""Failures of ops, with TensorFlow's class names and error codes.

`OpError` carries the op's name (`.op` is the op type name, `.node_def` a short description of
the failing node) so that an error raised far from its cause (asynchronously, or inside a traced
function) still says which op failed and why.
"""

from __future__ import annotations

__all__ = [
    "OpError", "CancelledError", "UnknownError", "InvalidArgumentError", "DeadlineExceededError",
    "NotFoundError", "AlreadyExistsError", "PermissionDeniedError", "ResourceExhaustedError",
    "FailedPreconditionError", "AbortedError", "OutOfRangeError", "UnimplementedError",
    "InternalError", "UnavailableError", "DataLossError", "UnauthenticatedError",
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
    "UNAUTHENTICATED",
]

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """An op failed. ≈ `tf.errors.OpError(node_def, op, message, error_code)`."""

    def __init__(self, node_def, op, message, error_code=UNKNOWN, *args):
        super().__init__(message, *args)
        self._node_def = node_def
        self._op = op
        self._message = message
        self._error_code = error_code

    @property
    def message(self) -> str:
        return self._message

    @property
    def op(self):
        """The op type name (eager) or graph operation (traced) that failed, or None."""
        return self._op

    @property
    def node_def(self):
        return self._node_def

    @property
    def error_code(self) -> int:
        return self._error_code

    def __str__(self):
        return self._message

    def __reduce__(self):
        # Subclasses take (node_def, op, message); OpError itself also needs its error code.
        if type(self) is OpError:
            return OpError, (self._node_def, self._op, self._message, self._error_code)
        return type(self), (self._node_def, self._op, self._message)


def _subclass(name: str, code: int, doc: str):
    def __init__(self, node_def, op, message, *args):  # noqa: N807 - the new class's __init__
        OpError.__init__(self, node_def, op, message, code, *args)

    return type(name, (OpError,), {"__init__": __init__, "__doc__": doc, "__module__": __name__})


CancelledError = _subclass("CancelledError", CANCELLED, "An op or step was cancelled.")
UnknownError = _subclass("UnknownError", UNKNOWN, "An error with no more specific class.")
InvalidArgumentError = _subclass(
    "InvalidArgumentError", INVALID_ARGUMENT,
    "An op received an invalid argument (bad shape, dtype mismatch, out-of-range index).")
DeadlineExceededError = _subclass("DeadlineExceededError", DEADLINE_EXCEEDED,
                                  "A deadline expired before the op completed.")
NotFoundError = _subclass("NotFoundError", NOT_FOUND,
                          "A requested entity (resource, kernel, file) was not found.")
AlreadyExistsError = _subclass("AlreadyExistsError", ALREADY_EXISTS,
                               "An entity the op tried to create already exists.")
PermissionDeniedError = _subclass("PermissionDeniedError", PERMISSION_DENIED,
                                  "The caller may not run this op.")
ResourceExhaustedError = _subclass("ResourceExhaustedError", RESOURCE_EXHAUSTED,
                                   "Some resource (usually memory) has been exhausted.")
FailedPreconditionError = _subclass(
    "FailedPreconditionError", FAILED_PRECONDITION,
    "The system is not in a state to run the op (e.g. reading an uninitialized variable).")
AbortedError = _subclass("AbortedError", ABORTED, "The operation was aborted.")
OutOfRangeError = _subclass("OutOfRangeError", OUT_OF_RANGE,
                            "The op iterated or indexed past the valid range.")
UnimplementedError = _subclass("UnimplementedError", UNIMPLEMENTED,
                               "The op is not implemented or not supported here.")
InternalError = _subclass("InternalError", INTERNAL,
                          "An invariant of the runtime was broken: a bug in eager.")
UnavailableError = _subclass("UnavailableError", UNAVAILABLE, "A service is unavailable.")
DataLossError = _subclass("DataLossError", DATA_LOSS,
                          "Unrecoverable data loss or corruption (e.g. a damaged checkpoint).")
UnauthenticatedError = _subclass("UnauthenticatedError", UNAUTHENTICATED,
                                 "The request lacks valid credentials.")

_BY_CODE = {cls(None, None, "")._error_code: cls for cls in (
    CancelledError, UnknownError, InvalidArgumentError, DeadlineExceededError, NotFoundError,
    AlreadyExistsError, PermissionDeniedError, ResourceExhaustedError, FailedPreconditionError,
    AbortedError, OutOfRangeError, UnimplementedError, InternalError, UnavailableError,
    DataLossError, UnauthenticatedError)}


def exception_type_from_error_code(error_code: int):
    """The OpError subclass for a TensorFlow error code (as `tf.errors`)."""
    return _BY_CODE[error_code]


# Users meet these classes as `eager.errors.X` (the public namespace) in tracebacks, reprs and
# pickles; the public module re-exports them, so that is their home as far as Python can tell.
for _name in __all__:
    _value = globals()[_name]
    if isinstance(_value, type):
        _value.__module__ = "eager.errors"
del _name, _value
