"""docs/API.md, the user's reference, tells the truth about what exists today.

The reference marks names in two ways, and this test reads both:

* **Name blocks**: fenced code blocks whose info string is `names`. Each line is either
  `namespace: name name ...` (the namespace is `eager` or a dotted path under it) or a
  continuation line whose names belong to the namespace of the line above. A name may be dotted
  (`Dataset.from_tensor_slices`); it stands for `namespace.name`.
* **Inline code** outside fenced blocks that starts with `eager.`: its leading dotted path
  (`eager.Session` in `eager.Session(graph).run(fetches, feed_dict)`) names something.

Name blocks in the sections `## Not yet` and `## Not supported` list names that must NOT
resolve; every other name block lists names that must resolve (getattr chain from the `eager`
package). Inline `eager.` code anywhere must resolve, unless its path is listed in a Not yet /
Not supported block (prose there talks about the missing names).

Completeness: every public name of each module the reference lists (its `__all__`, else the
public non-module attributes of `dir()`) must be listed, so a name that lands is documented;
and when the shared list of names TF's guides use (`tf-names-used.tsv`) sits beside this
checkout, every one of them that eager lacks must be covered by the Not yet / Not supported
lists (the name itself or a dotted prefix of it).
"""

import re
import types
from pathlib import Path

import pytest

import eager

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO / "docs" / "API.md"
README = REPO / "README.md"
#: The `tf.*` names TensorFlow's guides and tutorials use (a copy kept with the tests, so the
#: check runs on every checkout; its first line says how it was made).
TF_NAMES = Path(__file__).with_name("fixtures") / "tf-names-used.tsv"
ABSENT_SECTIONS = ("Not yet", "Not supported")

#: Names in tf-names-used.tsv that are not TensorFlow API: the "create an op" guide's examples
#: of op registrations a reader would build in C++.
NOT_TF_API = {"tf.number_type", "tf.number_or_boolean_type"}

_MISSING = object()
_PATH = r"eager(?:\.[A-Za-z_]\w*)*"


def resolve(path: str):
    """The object at dotted `path` ("eager.a.b") or _MISSING."""
    obj = eager
    for part in path.split(".")[1:]:
        obj = getattr(obj, part, _MISSING)
        if obj is _MISSING:
            return _MISSING
    return obj


def sections(text: str) -> list:
    """[(title, body)] of the '## ' sections ('' for the text before the first)."""
    parts = re.split(r"^## (.*)$", text, flags=re.M)
    return [("", parts[0])] + list(zip(parts[1::2], parts[2::2]))


def name_blocks(body: str) -> tuple:
    """(namespaces, dotted paths) listed in the body's ```names blocks."""
    namespaces, paths = [], []
    for block in re.findall(r"^```names\n(.*?)^```", body, re.M | re.S):
        namespace = None
        for line in block.splitlines():
            head = re.match(rf"^({_PATH}):(.*)$", line)
            if head:
                namespace, names = head.group(1), head.group(2)
                namespaces.append(namespace)
            else:
                names = line
            assert namespace is not None or not names.strip(), \
                f"names before any namespace in a names block: {line!r}"
            for name in names.split():
                assert re.fullmatch(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*", name), \
                    f"not a name in a names block: {name!r} ({line!r})"
                paths.append(f"{namespace}.{name}")
    return namespaces, paths


def inline_paths(body: str) -> list:
    """Leading dotted `eager.` paths of inline code outside fenced blocks."""
    prose = re.sub(r"^```.*?^```", "", body, flags=re.M | re.S)
    return [m.group(1) for m in re.finditer(rf"`({_PATH})[^`]*`", prose)
            if m.group(1) != "eager"]


def reference() -> dict:
    text = REFERENCE.read_text()
    listed, absent, inline, namespaces = [], [], [], []
    for title, body in sections(text):
        heads, paths = name_blocks(body)
        if title.strip() in ABSENT_SECTIONS:
            absent += paths
        else:
            listed += paths
            namespaces += heads
        inline += inline_paths(body)
    return {"text": text, "listed": listed, "absent": absent, "inline": inline,
            "namespaces": sorted(set(namespaces))}


@pytest.fixture(scope="module")
def ref():
    return reference()


def test_the_reference_parses(ref):
    titles = [t.strip() for t, _ in sections(ref["text"])]
    for title in ABSENT_SECTIONS:
        assert title in titles, f"docs/API.md has no '## {title}' section"
    assert len(ref["listed"]) > 300 and len(ref["absent"]) > 50
    assert "eager.math.reduce_logsumexp" in ref["listed"]
    assert "eager.keras.applications" in ref["absent"] and "eager.graph_util" in ref["absent"]
    assert {"eager", "eager.math", "eager.nn", "eager.config.experimental"} <= \
        set(ref["namespaces"])


def test_listed_names_exist(ref):
    missing = [p for p in ref["listed"] if resolve(p) is _MISSING]
    assert not missing, ("docs/API.md lists names eager does not have (remove them or move them "
                         f"to 'Not yet'): {', '.join(missing)}")


def test_not_yet_and_not_supported_names_do_not_exist(ref):
    present = [p for p in ref["absent"] if resolve(p) is not _MISSING]
    assert not present, ("docs/API.md says these do not exist, but they do (move them out of "
                         f"'Not yet' / 'Not supported' into the reference): {', '.join(present)}")


def test_names_in_prose_exist_unless_listed_as_missing(ref):
    absent = set(ref["absent"])
    wrong = sorted({p for p in ref["inline"] if p not in absent and resolve(p) is _MISSING})
    assert not wrong, ("docs/API.md mentions names that do not exist (fix them, or list them "
                       f"under 'Not yet'): {', '.join(wrong)}")


def public_names(module) -> set:
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in dir(module) if not n.startswith("_")
                 and not isinstance(getattr(module, n), types.ModuleType)]
    return {n for n in names if n != "annotations"}  # `from __future__ import annotations`


def test_every_public_name_of_a_listed_module_is_listed(ref):
    documented = set(ref["listed"]) | set(ref["namespaces"])
    undocumented = []
    for namespace in ref["namespaces"]:
        module = resolve(namespace)
        if isinstance(module, types.ModuleType):
            undocumented += [f"{namespace}.{n}" for n in sorted(public_names(module))
                             if f"{namespace}.{n}" not in documented]
    assert not undocumented, ("public names missing from docs/API.md (add them to their "
                              f"module's names block): {', '.join(undocumented)}")


def test_every_name_tf_guides_use_that_eager_lacks_is_in_the_absent_lists(ref):
    absent = set(ref["absent"])
    uncovered = []
    for line in TF_NAMES.read_text().splitlines():
        name = line.split("\t")[0]
        if not name.startswith("tf.") or name in NOT_TF_API:
            continue
        path = "eager" + name[2:]
        if resolve(path) is not _MISSING:
            continue
        parts = path.split(".")
        if not any(".".join(parts[:i]) in absent for i in range(2, len(parts) + 1)):
            uncovered.append(path)
    assert not uncovered, ("TensorFlow's guides use these, eager lacks them, and docs/API.md "
                           f"does not say so (add them to 'Not yet'): {', '.join(uncovered)}")


def test_readme_links_the_reference_and_its_not_yet_list(ref):
    assert re.search(r"^## Not yet$", ref["text"], re.M)  # GitHub's anchor: #not-yet
    readme = README.read_text()
    assert "(docs/API.md)" in readme and "(docs/API.md#not-yet)" in readme
