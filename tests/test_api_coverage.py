"""eager has the TensorFlow names real programs use.

`tests/fixtures/tf-names-used.tsv` lists every `tf.*` name in the code of TensorFlow's official
guides and tutorials, with the number of documents using it (`files`). Its core names (group
`core`: outside Keras, TF Lite, Estimator, compat and feature columns) are the target:

* every core name used by 2 or more documents, and every one used by a single document in the
  modules TF programs meet first (`REQUIRED_MODULES`, and top-level `tf.x` names), must exist
  in eager, unless docs/API.md's "Not supported" section lists it (or a dotted prefix of it)
  with a reason;
* the coverage, weighted by `files` and with the unsupported names left out, must reach
  `TARGET` (95%), and never fall below `FLOOR` (the figure when this test was written:
  86.1%, 1214 of 1410);
* docs/API.md states the measured figure (`coverage_sentence`), so it never drifts from the
  truth: `PYTHONPATH=. python tests/test_api_coverage.py` prints the sentence to paste.

Names still to come are listed: `LATER` (`eager.distribute` and the cluster names beside it,
built by its own piece of work) and `PENDING` (the rest). Each such name must still be missing
(delete it from its list when it lands).
"""

import re


from test_api_reference import REFERENCE, TF_NAMES, NOT_TF_API, _MISSING, name_blocks, resolve, \
    sections

#: Modules whose single-document names are required too ("" is top level: `tf.x`).
REQUIRED_MODULES = {"", "strings", "io", "sparse", "ragged", "linalg", "math", "random",
                    "debugging", "image", "nest", "saved_model", "data", "train", "nn"}
TARGET = 0.95
#: The weighted coverage when this test was written; it may only go up.
FLOOR = 1214 / 1410

#: Multi-worker and multi-device distribution: a later piece of work builds `eager.distribute`
#: (these names stay in docs/API.md's "Not yet").
LATER = ("tf.distribute.", "tf.config.experimental_connect_to_cluster", "tf.train.ClusterSpec")

#: Required names still to be added (each could exist here; none is unsupported by nature),
#: with what adding them takes. Delete a name when it lands (a test checks).
PENDING = {
}


def tf_names() -> list:
    """[(name, group, files)] of the list's rows."""
    rows = []
    for line in TF_NAMES.read_text().splitlines():
        if line.startswith("#") or line.startswith("name\t"):
            continue
        name, group, files = line.split("\t")[:3]
        rows.append((name, group, int(files)))
    return rows


def not_supported() -> set:
    """Dotted `eager.` paths listed in docs/API.md's "Not supported" names blocks."""
    paths = []
    for title, body in sections(REFERENCE.read_text()):
        if title.strip() == "Not supported":
            paths += name_blocks(body)[1]
    return set(paths)


def eager_path(name: str) -> str:
    return "eager" + name[2:]


def is_unsupported(name: str, unsupported: set) -> bool:
    parts = eager_path(name).split(".")
    return any(".".join(parts[:i]) in unsupported for i in range(2, len(parts) + 1))


def core_names() -> list:
    return [(n, f) for n, g, f in tf_names() if g == "core" and n not in NOT_TF_API]


def coverage() -> tuple:
    """(covered files, counted files): core names weighted by the documents using them, the
    names docs/API.md lists as not supported left out."""
    unsupported = not_supported()
    covered = counted = 0
    for name, files in core_names():
        if is_unsupported(name, unsupported):
            continue
        counted += files
        if resolve(eager_path(name)) is not _MISSING:
            covered += files
    return covered, counted


def coverage_sentence() -> str:
    covered, counted = coverage()
    return (f"Weighted by the number of TensorFlow's guides and tutorials using each name, eager "
            f"has {100 * covered / counted:.1f}% of the core names they use ({covered} of "
            f"{counted} uses; the names under \"Not supported\" left out).")


def required(name: str, files: int) -> bool:
    module = name.split(".")[1] if name.count(".") >= 2 else ""
    return files >= 2 or module in REQUIRED_MODULES


def is_later(name: str) -> bool:
    return any(name == p or (p.endswith(".") and name.startswith(p)) for p in LATER)


def test_every_required_name_exists_or_is_not_supported():
    unsupported = not_supported()
    missing = [name for name, files in core_names()
               if required(name, files) and resolve(eager_path(name)) is _MISSING
               and not is_unsupported(name, unsupported) and not is_later(name)
               and name not in PENDING]
    assert not missing, ("TensorFlow's guides use these and eager lacks them: add them, or list "
                         "them under docs/API.md's 'Not supported' with the reason: "
                         f"{', '.join(missing)}")


def test_names_listed_as_still_to_come_are_still_missing():
    """PENDING names are deleted as they land (LATER is a set of prefixes: the work that builds
    them lands name by name)."""
    unsupported = not_supported()
    present = sorted(n for n in PENDING if resolve(eager_path(n)) is not _MISSING)
    assert not present, ("these now exist in eager: delete them from PENDING in "
                         f"tests/test_api_coverage.py: {', '.join(present)}")
    wrong = sorted(n for n in PENDING if is_unsupported(n, unsupported))
    assert not wrong, f"PENDING names listed as not supported in docs/API.md: {wrong}"


def test_names_listed_as_to_come_are_required_core_names():
    rows = dict(core_names())
    for name in PENDING:
        assert name in rows and required(name, rows[name]), name


def test_weighted_coverage_only_goes_up_and_reaches_the_target_when_done():
    covered, counted = coverage()
    figure = covered / counted
    print(f"\nweighted coverage of the core names: {figure:.2%} ({covered} of {counted})")
    assert figure >= FLOOR, (f"coverage fell to {figure:.2%} from {FLOOR:.1%}: a name TF's "
                             "guides use went missing")
    assert figure >= TARGET, f"coverage {figure:.2%} is below the target {TARGET:.0%}"


def test_docs_state_the_measured_coverage():
    text = REFERENCE.read_text()
    sentence = coverage_sentence()
    assert sentence in " ".join(text.split()), (
        "docs/API.md's 'Not yet' section must state the measured coverage; replace the old "
        f"sentence with: {sentence}")


def test_unsupported_names_have_their_reason_in_the_docs():
    body = dict((t.strip(), b) for t, b in sections(REFERENCE.read_text()))["Not supported"]
    prose = re.sub(r"^```.*?^```", "", body, flags=re.M | re.S)
    for path in sorted(not_supported()):
        tail = path.split(".", 1)[1]
        assert f"tf.{tail}" in prose or f"`{path}" in prose, (
            f"docs/API.md's 'Not supported' lists {path} without saying why (a bullet naming "
            f"tf.{tail})")


if __name__ == "__main__":
    print(coverage_sentence())
