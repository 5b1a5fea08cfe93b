"""`eager.base.user_code`: finding the first frame outside eager (where an op was issued)."""

import os

from eager.base.user_code import EAGER_DIR, line_of, user_point

_PROBE = "def probe(depth):\n    return user_point(depth)\n"


def _probe_from(filename):
    scope = {"user_point": user_point}
    exec(compile(_PROBE, filename, "exec"), scope)  # noqa: S102 - the same code, two files
    return scope["probe"]


def test_equal_code_from_eager_and_from_the_user_is_told_apart():
    # Code objects compare equal by contents, file name excluded: the same source compiled
    # under eager's directory and under the user's is two equal code objects, and only the
    # one from eager's directory is skipped.
    ours = _probe_from(os.path.join(EAGER_DIR, "_probe.py"))  # (a name only: never written)
    theirs = _probe_from(os.path.join(os.path.dirname(EAGER_DIR), "user_probe.py"))
    assert ours.__code__ == theirs.__code__ and ours.__code__ is not theirs.__code__

    here = test_equal_code_from_eager_and_from_the_user_is_told_apart.__code__
    assert ours(0)[0] is here  # eager's frame is skipped: the caller is the user
    assert theirs(0)[0] is theirs.__code__  # the user's own frame
    assert ours(0)[0] is here  # (and asking again gives the same answers)
    assert line_of(theirs(0)) == (theirs.__code__.co_filename, 2)
