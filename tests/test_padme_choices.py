"""Seed 003's values that the paper does not give or our copy lost (issue 15, "each project choice where
the copy lost the paper's value is listed in one place that the notebooks read"): one module holds them
(``shopbench.padme.choices``), the code reads them from there, every value names the place that reads
it, and notebook 50 registers the table. Each test quotes the sentence it follows."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest
import yaml

from shopbench.judges.padme import evaluators, filters
from shopbench.metrics.meta_eval import pairwise
from shopbench.padme import choices, experiment, steering
from shopbench.profiles.padme import PadmeParams

ROOT = Path(__file__).resolve().parents[1]
SEED = next((ROOT.parent / "shared" / "seeds").glob("003_*.txt"), None)


def test_the_code_reads_the_values_from_the_one_module():
    """Table 4: "Seven evaluator properties against accuracy [...] p_holm is the Holm-Bonferroni corrected
    p-value across the seven tests, and bolded where it indicates significance" — the seventh property and
    the level are ours, and the Table 4 code takes them from ``choices``."""
    assert (
        pairwise.TABLE4_PROPERTIES[-1] is choices.TABLE4_SEVENTH_PROPERTY
        and len(pairwise.TABLE4_PROPERTIES) == 7
    )
    assert pairwise.TABLE4_SOURCES[choices.TABLE4_SEVENTH_PROPERTY].startswith("guessed")
    assert inspect.signature(pairwise.property_correlations).parameters["alpha"].default == choices.HOLM_ALPHA
    for fn in (
        pairwise.evaluator_summary,
        pairwise.accuracy_by,
        pairwise.contamination,
        pairwise.reward_label_accuracy,
    ):
        assert inspect.signature(fn).parameters["ci"].default == choices.BOOTSTRAP_CI
    assert {j.heuristic: j.noise for j in experiment.DEFAULT_JUDGES} == choices.FILTER_JUDGE_NOISE
    assert evaluators.NOISY_SD == choices.NOISY_EVALUATOR_SD
    assert steering.MAX_INSTRUCTION_CHARS == choices.MAX_STEERING_CHARS
    assert steering.STEERING_SCHEMA["properties"]["bad"]["maxLength"] == choices.MAX_STEERING_CHARS
    assert (
        inspect.signature(filters.render_trajectory).parameters["max_tool_chars"].default
        == choices.MAX_TOOL_CHARS
    )


def _matches(value, got) -> bool:
    if value == got:
        return True
    if isinstance(got, tuple) and got and hasattr(got[0], "heuristic"):  # the offline filter judges
        return {j.heuristic: j.noise for j in got} == value
    return isinstance(got, (tuple, list)) and value in got


def test_every_value_listed_names_a_real_place():
    """Every choice names where the code reads it; a value (not a rule) equals what is there."""
    items = [c.item for c in choices.CHOICES]
    assert len(items) == len(set(items)) >= 15
    for c in choices.CHOICES:
        got = choices.resolve(c.where)
        if callable(got) and not isinstance(got, type):  # a rule: its function exists, the value describes it
            assert isinstance(c.value, str) and c.value, c.item
        else:
            assert _matches(c.value, got), f"{c.item}: {c.value!r} but {c.where} holds {got!r}"
        assert c.paper.count('"') >= 2, f"{c.item}: quote the paper's words"
    with pytest.raises(LookupError, match="no_such_key"):
        choices.resolve("shopbench.profiles.padme:PadmeParams.no_such_key")
    # the profile defaults listed are PadmeParams's own
    for c in choices.CHOICES:
        if c.where.startswith("shopbench.profiles.padme:PadmeParams."):
            assert PadmeParams.model_fields[c.where.rsplit(".", 1)[1]].default == c.value


def _norm(text: str) -> str:
    return "".join(ch for ch in text.replace("\\", "").lower() if ch.isalnum())


@pytest.mark.skipif(SEED is None, reason="../shared/seeds/003_*.txt is not present")
def test_every_quote_is_in_the_paper():
    """What ``paper`` quotes is seed 003's text ([...] marks a cut, e.g. doubled math of the HTML copy)."""
    seed = _norm(SEED.read_text(encoding="utf-8"))
    for c in choices.CHOICES:
        for quote in c.paper.split('"')[1::2]:
            for piece in quote.split("[...]"):
                assert _norm(piece) in seed, f"{c.item}: {piece!r} is not in seed 003"


def test_the_table_marks_every_value_as_ours_unless_the_text_pins_it():
    """§3.1: "We set R=2 in our experiment"; §4: "on all 1,000 kept pairs across 3 runs"; Table 2: "bootstrap
    95% confidence intervals"; Table 13: "permutation tests over 100,000 shuffles" — the four values the text
    pins; every other value is marked ours."""
    t = choices.choices_table()
    assert list(t.columns) == ["item", "our_value", "status", "paper_says", "where", "note"]
    pinned = t[t.status != choices.OURS]
    assert set(pinned.item) == {"retry budget R", "evaluator runs", "bootstrap interval coverage",
                                "permutation shuffles (confidence tests)"}  # fmt: skip
    assert all(s.startswith("the paper's value (") for s in pinned.status)
    assert t.loc[t.item == "Table 4's seventh property", "status"].item() == choices.OURS
    assert t.loc[t.item == "permutation shuffles (confidence tests)", "our_value"].item() == "100,000"
    # the index shows no raw missing value and no empty column (tests/test_notebooks.py::index_problems)
    assert not t.isin(["nan", "None", "<NA>", ""]).any().any()


def test_the_table_shows_what_this_run_set():
    from shopbench.config import load_profile

    P = load_profile("paper").params.padme
    t = choices.choices_table(P).set_index("item")
    assert t.loc["tasks per source", "our_value"] == "40" and t.loc["tasks per source", "this_run"] == "120"
    assert t.loc["LM evaluator pairs per run", "this_run"] == "unset (see note)"
    assert t.loc["Table 4's seventh property", "this_run"] == "–"


def test_notebook_50_registers_the_table():
    """The table is registered in notebook 50 with an evidence kind and listed in the pipeline's
    ``produces`` (checked against the index by ``test_notebooks.py::test_pipeline_smoke_run``)."""
    steps = yaml.safe_load((ROOT / "notebooks" / "pipeline.yaml").read_text())
    steps = steps.get("notebooks", steps) if isinstance(steps, dict) else steps
    nb50 = next(s for s in steps if s["name"] == "50_padme_meta_eval")
    assert "padme_project_choices" in nb50["produces"]
    nb = json.loads((ROOT / "notebooks" / "50_padme_meta_eval.ipynb").read_text())
    code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    call = re.search(r'ctx\.table\(padme_choices, "padme_project_choices", .*evidence="reference"', code)
    assert call and "choices_table(P)" in code
