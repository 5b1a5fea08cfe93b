"""Optimisation passes: functions `Program -> Program`, run before a program is compiled.

* `prune`: only the nodes the fetches and targets need (`prune.py`).
* `fold_constants`: pure nodes of known inputs computed once, at compile time
  (`constant_folding.py`).
* `eliminate_common_subexpressions`: one node per distinct pure computation (`cse.py`).
* `fold_broadcasts`: a `BroadcastTo` whose readers broadcast by themselves is bypassed
  (`broadcasts.py`).
* `bypass_identities`: `x * 1` and `x / 1` read as `x` (`identities.py`).
* `fold_scaled_updates`: `v.assign_sub(lr * g)` as one `ResourceApplyGradientDescent`
  (`scaled_updates.py`).
* `group_updates`: on a GPU, the optimizer updates (gradient descent, Adam) of several
  variables as one grouped update, one launch per eight variables (`grouped_updates.py`).
* `fuse_elementwise`: trees of elementwise ops as one node (`fusion.py`).
* `overlap_collectives`: a cross-process all-reduce split into a start moved to just after its
  inputs and a wait where it was, so the exchange overlaps the computation between them
  (`collectives.py`).

None of them ever removes, merges, folds or fuses a stateful node (splitting an all-reduce
into its start and its wait keeps both stateful; a scaled update becomes one update of the same
variable, with the same effect, in the same place; grouped updates have their members' effects,
with every edge into and out of a member kept) or a node on a resource
(`Node.is_stateful`), or a node named in `targets`; each returns a program that passes
`Program.validate` and computes the same fetches as its input under `run_program`.

`optimize(program)` runs them in the order `DEFAULT_PASSES` gives: prune first (later passes
then work only on what runs), fold, merge what folding made equal, bypass broadcasts, then
identities (with the ones folding made, possibly no longer broadcast), fold scaled updates,
group the updates (the folded ones too), prune what folding, merging, bypassing and the updates
left unused, and fuse last (fusion needs
final use counts, and its opaque nodes would hide duplicates from CSE), and split collectives
after everything (the start's position depends on the final node order). Callers switch passes
off by name with `PassOptions`, or give their own sequence of names.
"""

from __future__ import annotations

from .broadcasts import fold_broadcasts
from .collectives import overlap_collectives
from .constant_folding import DEFAULT_MAX_BYTES, fold_constants
from .cse import eliminate_common_subexpressions
from .fusion import fuse_elementwise
from .identities import bypass_identities
from .prune import prune
from .grouped_updates import group_updates
from .scaled_updates import fold_scaled_updates

__all__ = ["optimize", "PassOptions", "PASSES", "DEFAULT_PASSES", "prune", "fold_constants",
           "bypass_identities", "eliminate_common_subexpressions", "fold_broadcasts",
           "fold_scaled_updates", "group_updates", "fuse_elementwise",
           "overlap_collectives"]

#: Every pass by the name `optimize` and `PassOptions` know it by.
PASSES = {
    "prune": prune,
    "fold_constants": fold_constants,
    "bypass_identities": bypass_identities,
    "cse": eliminate_common_subexpressions,
    "fold_broadcasts": fold_broadcasts,
    "fold_scaled_updates": fold_scaled_updates,
    "group_updates": group_updates,
    "fuse_elementwise": fuse_elementwise,
    "overlap_collectives": overlap_collectives,
}

#: The order `optimize` runs passes in by default (see the module doc for why).
DEFAULT_PASSES = ("prune", "fold_constants", "cse", "fold_broadcasts", "bypass_identities",
                  "fold_scaled_updates", "group_updates", "prune", "fuse_elementwise",
                  "overlap_collectives")


class PassOptions:
    """Which passes `optimize` runs, and their settings.

    `PassOptions(cse=False)` switches common-subexpression elimination off; every pass in
    `PASSES` has a flag of its name. `fold_max_bytes` bounds the size of each folded output.
    `validate=True` checks the program after every pass (`Program.validate`), naming the pass
    that broke it: for debugging a pass, not for every call."""

    __slots__ = ("enabled", "fold_max_bytes", "validate")

    def __init__(self, *, fold_max_bytes=DEFAULT_MAX_BYTES, validate=False, **switches):
        unknown = set(switches) - set(PASSES)
        if unknown:
            raise ValueError(f"PassOptions: unknown pass {', '.join(sorted(unknown))}; the "
                             f"passes are {', '.join(PASSES)}.")
        self.enabled = {name: bool(switches.get(name, True)) for name in PASSES}
        self.fold_max_bytes = fold_max_bytes
        self.validate = validate

    def __repr__(self):
        off = [name for name, on in self.enabled.items() if not on]
        return (f"PassOptions(off={off}, fold_max_bytes={self.fold_max_bytes}, "
                f"validate={self.validate})")


_DEFAULT_OPTIONS = PassOptions()


def optimize(program, passes=DEFAULT_PASSES, options=None):
    """`program` rewritten by `passes` (names from `PASSES`, in order; a name may repeat),
    skipping those `options` switches off."""
    options = _DEFAULT_OPTIONS if options is None else options
    for name in passes:
        try:
            run = PASSES[name]
        except (KeyError, TypeError):
            raise ValueError(f"optimize: unknown pass {name!r}; the passes are "
                             f"{', '.join(PASSES)}.") from None
        if not options.enabled[name]:
            continue
        if run is fold_constants:
            program = run(program, options.fold_max_bytes)
        else:
            program = run(program)
        if options.validate:
            try:
                program.validate()
            except ValueError as exc:
                raise ValueError(f"optimize: pass {name!r} made an invalid program: "
                                 f"{exc}") from exc
    return program
