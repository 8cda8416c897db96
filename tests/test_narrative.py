"""The results notebooks' closing reading (issue 16 §5): measured rows only, n beside each, checks named."""

import pandas as pd

from shopbench.report.narrative import reading, run_findings


def test_findings_read_only_measured_rows_with_their_n():
    df = pd.DataFrame({
        "backbone": ["local/checks", "llamacpp/qwen", "local/oracle-rules", "llamacpp/smollm2", "local/random"],
        "PACE_avg": ["0.33 [0.32, 0.35]", "–", "0.98 [0.98, 0.99]", "0.40 [0.10, 0.70]", "0.17 [0.15, 0.19]"],
        "n": [4080, 1, 4080, 12, 4080.0],
        "evidence": ["measured", "measured", "known-answer", "measured", "measured"],
    })  # fmt: skip
    text = run_findings(df, "backbone", "PACE_avg")
    assert text.index("`local/checks` 0.33 [0.32, 0.35] (n=4080)") < text.index("`local/random` 0.17")
    assert "`llamacpp/smollm2` 0.40 [0.10, 0.70] (n=12)" in text.split("Too few")[1]  # small n: not a finding
    assert "`llamacpp/qwen` – (n=1)" in text
    assert "Known-answer rows" in text and "`local/oracle-rules`" in text.split("Known-answer rows")[1]
    assert "0.98" not in text  # a known-answer number is never read as a finding


def test_numeric_columns_and_kinds_from_the_producer_name():
    df = pd.DataFrame({"agent": ["scripted:competent", "llm:llamacpp/qwen"], "rate": [0.82, 0.5],
                       "low": [0.74, 0.3], "high": [0.89, 0.7], "n": [100, 40]})  # fmt: skip
    text = run_findings(df, "agent", "rate", low="low", high="high")
    assert text.startswith("measured, best first: `llm:llamacpp/qwen` 0.50 [0.30, 0.70] (n=40).")
    assert "`scripted:competent`" in text.split("Known-answer rows")[1]
    md = reading("The paper's sentence.", text, "Different models.")
    assert md.count("**") == 6 and "What this run found" in md
    assert run_findings(df.iloc[:1], "agent", "rate").startswith("no measured row")
    assert (
        run_findings(df.set_index(["agent"]), "agent", "rate", low="low", high="high") == text
    )  # producer in the index
