import pandas as pd
import pytest

from shopbench.config import ParamError, load_profile
from shopbench.context import start
from shopbench.llm import parse_backbones, parse_output
from shopbench.report import build_index


def write(tmp_path, text, name="p.yaml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_profiles_in_repo_load():
    for name in ("smoke", "paper", "full"):
        prof = load_profile(name)
        assert prof.name == name and len(prof.sha256) == 64
        parse_backbones([b if isinstance(b, str) else b.given() for b in prof.params.backbones])


def test_bad_yaml_names_file_and_line(tmp_path):
    p = write(tmp_path, "seed: 1\nbackbones: [a\n")
    with pytest.raises(
        ParamError, match=r"p\.yaml, line \d+, column \d+: not valid YAML.*Fix: check the indentation"
    ):
        load_profile(p)


def test_wrong_type_names_key_path(tmp_path):
    p = write(tmp_path, "seed: 1\ngateway:\n  concurrency:\n    openai: many\n")
    with pytest.raises(
        ParamError, match=r"p\.yaml, line 4: key 'gateway\.concurrency\.openai': must be a whole number"
    ):
        load_profile(p)


def test_secrets_in_params_are_refused(tmp_path):
    p = write(tmp_path, "seed: 1\nbackbones:\n  - {model: openai/gpt-4o, api_key: abc123}\n")
    with pytest.raises(ParamError, match=r"backbones\[0\]\.api_key.*environment"):
        load_profile(p)
    p = write(tmp_path, "seed: 1\nnote: " + "sk-" + "ant-abcdefghijklmnopqrstuvwxyz\n", "q.yaml")
    with pytest.raises(ParamError, match="looks like an API key"):
        load_profile(p)


def test_unknown_profile_lists_known():
    with pytest.raises(ParamError, match="Known profiles: .*smoke"):
        load_profile("nope")


def test_backbone_parsing_errors():
    with pytest.raises(ValueError, match="duplicate backbone names"):
        parse_backbones(["local/echo", "local/echo"])
    with pytest.raises(ValueError, match=r"backbones\[0\]: unknown keys \['temp'\]"):
        parse_backbones([{"model": "local/echo", "temp": 1}])


def test_model_not_installed_says_which_command(tmp_path, monkeypatch):
    monkeypatch.setenv("SHOPBENCH_MODEL_DIR", str(tmp_path / "empty"))
    (b,) = parse_backbones(["llamacpp/qwen2.5-coder-1.5b-instruct"])
    ok, why = b.availability()
    assert not ok and "make local-llm" in why


def test_parse_output_rules():
    schema = {
        "type": "object",
        "properties": {"p": {"type": "number", "minimum": 0, "maximum": 1}},
        "required": ["p"],
    }
    assert parse_output('{"p": 0.4}', schema).value == {"p": 0.4}
    assert parse_output('```json\n{"p": 0.4}\n```', schema).ok
    assert (
        "maximum" in parse_output('{"p": 100}', schema).error
        or "100" in parse_output('{"p": 100}', schema).error
    )
    assert parse_output('{"p": true}', schema).error.startswith("contract violation")
    assert parse_output('{"p": 0.4}', schema, "length").error.startswith("truncated")
    assert parse_output("not json", schema).error.startswith("invalid JSON")
    assert parse_output(None, schema).error.startswith("empty")


def test_tables_figures_and_index(outputs):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ctx = start("smoke", notebook="99_test")
    ctx.prompt("backends_roundtrip")
    ctx.use_backbones(["local/echo"])
    df = pd.DataFrame({"acc": [0.5, 0.75]}, index=pd.Index(["a", "b"], name="judge"))
    ctx.table(df, "test_tab", "A caption & more.", evidence="measured")
    fig, ax = plt.subplots()
    ax.plot([1, 2])
    ctx.figure(fig, "test_fig", "A figure.", evidence="known-answer")
    paper = outputs / "smoke" / "paper"
    for f in ("tables/test_tab.csv", "tables/test_tab.md", "tables/test_tab.tex", "figures/test_fig.png",
              "figures/test_fig.pdf"):  # fmt: skip
        assert (paper / f).stat().st_size > 0
    assert "\\caption{A caption \\& more. Evidence: measured.}" in (paper / "tables/test_tab.tex").read_text()
    md, html = build_index(paper, {"profile": "smoke", "wall_s": 1.0, "notebooks": [{"name": "99_test", "wall_s": 1.0}],
                                   "calls": 0, "cache_hit_rate": None, "cost_usd": 0.0})  # fmt: skip
    text = md.read_text()
    assert "test_tab" in text and "test_fig" in text and "backends_roundtrip" in text and "local/echo" in text
    assert ctx.profile.sha256[:12] in text and "<img" in html.read_text()
