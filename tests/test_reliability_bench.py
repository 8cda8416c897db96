"""The reliability benchmark (issue 12 §6) at small size: kill -9 resumes lose, duplicate and
repeat nothing; a 429/5xx/hang storm completes with no error cached; concurrent annotators lose no
answer; the bad-input cases of this branch's loaders are all clear; the rows have the bench format."""

import json

from shopbench.benchmarks import reliability as R


def test_reliability_quick():
    doc = R.run(quick=True)
    k9 = doc["kill9_runs"]
    assert k9["kills"] == 3 and not k9["notes"], k9
    assert (k9["lost_rows"], k9["duplicate_rows"], k9["repeated_successful_calls"]) == (0, 0, 0)
    storm = doc["storm_429"]
    assert storm["completed_fraction"] == 1.0 and storm["errors_cached"] == 0
    assert storm["requests_by_behaviour"].get("status_429", 0) > 0.15 * storm["n_calls"]  # a real storm
    assert storm["rerun_not_from_cache"] == 0
    assert doc["concurrent_annotators"]["lost_answers"] == 0
    bad = doc["bad_inputs"]
    assert bad["cases"] >= 60 and bad["clear_error_fraction"] == 1.0, bad["by_owner"]
    assert set(bad["by_owner"]) == {"data files", "tau2 and recorded trajectories", "profiles"}
    assert len(doc["bad_inputs"]["cases_list"]) == doc["bad_inputs"]["cases"]
    rows = doc["results"]
    assert {
        "kill9_lost_rows",
        "storm_429_errors_cached",
        "bad_inputs_clear_error_fraction",
        "concurrent_annotators_lost_answers",
        "fuzz_crashes",
    } <= {r["name"] for r in rows}
    for r in rows:
        assert set(r) == {"name", "value", "unit", "goal", "meets_goal", "detail"}
    by_name = {r["name"]: r for r in rows}
    assert by_name["kill9_lost_rows"]["meets_goal"] is True
    assert (
        by_name["kill9_kills"]["meets_goal"] is False
    )  # quick: 3 kills of a 300-call sweep, not the goal's size
    json.dumps(doc, allow_nan=False)  # what make bench writes


def test_storm_script_faults_only_the_first_attempts():
    script = R._storm_script(p429=1.0, faulty_attempts=2)
    body = {"messages": [{"role": "user", "content": "x"}]}
    assert [script(body) for _ in range(3)] == [{"status": 429}, {"status": 429}, None]
