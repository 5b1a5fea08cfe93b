"""The runtime half of AutoGraph: what converted code calls (as `ag__.<name>`).

Each converted statement or expression becomes a call of one of these, which decides when it
runs: a symbolic tensor of a function being traced makes it a control-flow op (`eager.cond`,
`eager.while_loop`), anything else runs it as Python would. One module per kind:
`conditionals` (if, conditional expressions), `loops` and `staging` (while, for), `logical`
(and, or, not), `builtins` (len, range, int, ...), `calls` (recursive conversion of callees),
`loop_vars` (TensorFlow's rules for the variables they carry), `state` (reading and writing
them), `undefined` (variables without a value yet), `located` (errors that name the user's line).

`NAMESPACE` maps the names converted code uses to the operators; the converter adds
`converted_call` for its options (`eager.autograph.conversion`).
"""

from .builtins import TensorRange
from .calls import Caller
from .conditionals import if_exp, if_stmt
from .logical import and_, not_, or_
from .loops import ForLoop, for_stmt, while_stmt
from .undefined import Undefined, UndefinedReturnValue, ld, retval

__all__ = ["NAMESPACE", "Caller", "ForLoop", "TensorRange"]

def nothing():
    """The `else` branch of an `if` statement that has none."""


NAMESPACE = {
    "if_stmt": if_stmt, "if_exp": if_exp, "while_stmt": while_stmt, "for_stmt": for_stmt,
    "and_": and_, "or_": or_, "not_": not_, "ld": ld, "retval": retval,
    "Undefined": Undefined, "UndefinedReturnValue": UndefinedReturnValue,
    "nothing": nothing,
}
