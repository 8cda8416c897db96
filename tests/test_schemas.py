"""Issue 26 §3 "Your files": the packaged JSON Schemas of the files a user brings.

- the shipped schema files are what :mod:`shopbench.schemas.build` derives from the readers' types, each
  valid Draft 2020-12 with ``$id``, ``version`` and a description on every field;
- the files the project itself writes (a PACEShop build, strict outputs of its records, the L5 fixtures
  and reference outputs, PADME pairs of real shop and tau2 rollouts, annotation answers) validate;
- the relaxed schema accepts exactly the outputs :func:`shopbench.paceshop.relaxed.normalise` imports;
- a file that breaks a schema is refused by its reader with one message naming file, line, field and
  the fix, and through ``shopbench eval`` with exit 2, no traceback and no log directory;
- ``shopbench schema`` lists and prints them; every example of docs/guides/files.md validates.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from shopbench import schemas
from shopbench.errors import InputError
from shopbench.schemas import build

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
GUIDE = ROOT / "docs" / "guides" / "files.md"


def valid(name: str, obj) -> bool:
    return schemas.validator(name).is_valid(obj)


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


# ---- the schema files ------------------------------------------------------------------------------
def test_shipped_schemas_are_what_the_code_generates():
    assert build.main(["--check"]) == 0, "run: python -m shopbench.schemas.build"
    assert sorted(p.name for p in (ROOT / "lib/shopbench/schemas").glob("*.schema.json")) == sorted(
        f"{n}.schema.json" for n in schemas.SCHEMAS
    )


def _objects(node, path="#"):
    if isinstance(node, dict):
        if isinstance(node.get("properties"), dict):
            yield path, node
        for k, v in node.items():  # the declaring objects, not the constraint branches (relaxed aliases)
            if k not in ("allOf", "anyOf", "oneOf", "not", "if", "then", "else"):
                yield from _objects(v, f"{path}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _objects(v, f"{path}/{i}")


@pytest.mark.parametrize("name", list(schemas.SCHEMAS))
def test_each_schema_is_valid_versioned_and_documented(name):
    from jsonschema import Draft202012Validator

    s = schemas.load(name)
    Draft202012Validator.check_schema(s)
    assert s["$id"] == schemas.schema_id(name, s["version"]) and isinstance(s["version"], int)
    assert s["title"] == schemas.SCHEMAS[name] and len(s["description"]) > 40
    undocumented = [f"{p}/{k}" for p, o in _objects(s) for k, v in o["properties"].items()
                    if not (isinstance(v, dict) and v.get("description"))]  # fmt: skip
    assert not undocumented


def test_a_field_without_a_description_stops_the_generator(monkeypatch):
    docs = json.loads(json.dumps(build.FIELD_DOCS))
    del docs["annotation"]["Answer"]["revision"]
    monkeypatch.setattr(build, "FIELD_DOCS", docs)
    with pytest.raises(KeyError, match="Answer.revision has no description"):
        build.generate()


# ---- the project's own files validate ----------------------------------------------------------------
@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A smoke-profile PACEShop build written as notebook 10 writes it (offline generator)."""
    from shopbench.config import load_profile
    from shopbench.paceshop.build import BuildConfig, build, write

    cfg = BuildConfig.from_profile(load_profile("smoke"))
    cfg.generator = "offline"
    folder = tmp_path_factory.mktemp("paceshop")
    res = build(cfg, progress=False)
    write(res, folder, cfg)
    return folder, res.records


def test_a_pace_build_validates_and_pace_judge_reads_it(built):
    folder, records = built
    # the packaged view (what load_records and -T records=FILE read) and the reading-literal variant;
    # records_clean / records_explicit are judge-facing views without the gold fields
    files = [folder / "records_packaged.jsonl", folder / "records_reading_literal.jsonl"]
    v = schemas.validator("pace-record")
    n = 0
    for f in files:
        for obj in lines(f):
            errs = list(v.iter_errors(obj))
            assert not errs, (f.name, obj.get("record_id"), errs[0].message)
            n += 1
    assert n >= len(records) > 10
    assert {r.kind for r in records} >= {"good", "bad"}


def test_strict_outputs_of_the_records_validate_and_import_with_the_records_checks(built, tmp_path):
    from shopbench.paceshop.relaxed import read_strict

    _, records = built
    good = [r for r in records if r.kind == "good"][:20]
    out = [{"id": r.record_id, "query": r.query, "response": r.response.model_dump(mode="json"),
            "persona": r.persona.model_dump(mode="json"), "candidate_evidence": r.candidate_evidence_ids}
           for r in good]  # fmt: skip
    assert all(valid("assistant-output", o) for o in out)
    f = tmp_path / "strict.jsonl"
    f.write_text("".join(json.dumps(o) + "\n" for o in out))
    rep = read_strict(f)
    assert [o.output_id for o in rep.imported] == [r.record_id for r in good] and not rep.rejected
    # the 12 checks of an imported output are the record's own (same response, same evidence pool)
    same = sum(o.checks == r.checks for o, r in zip(rep.imported, good, strict=True))
    assert same == len(good), [(o.output_id, o.checks, r.checks) for o, r in zip(rep.imported, good, strict=True) if o.checks != r.checks][:1]  # fmt: skip
    # a strict output is also a relaxed one, imported with no repair of substance
    assert all(valid("assistant-output-relaxed", o) for o in out)


RELAXED_FILES = [ROOT / "tests/fixtures/l5_assistant_outputs.jsonl",
                 *sorted((ROOT / "lib/shopbench/paceshop/reference/l5").glob("*.jsonl"))]  # fmt: skip
RELAXED_CASES = [
    {"query": "q", "response": {"overview": "x", "categories": "A; B"}},
    {"query": "q", "overview_text": "x", "productCategoryList": ["A"]},
    {
        "query": "q",
        "response": {"overview_text": "", "summary": "x", "categories": ["A"]},
    },  # first alias wins
    {"query": "q", "response": {"overview": "...", "categories": ["A"]}},  # a placeholder
    {"query": "q", "response": {"overview": "<overview>", "categories": ["A"]}},
    {"query": "q", "response": {"overview": "TODO", "categories": ["A"]}},
    {"query": "q", "response": {"overview": "x", "categories": ["..."]}},
    {"query": "q", "response": {"overview": "x", "categories": []}},
    {"query": "q", "response": {"overview": "x", "categories": None}},
    {"query": "q", "response": {"overview": "x", "categories": ["A"], "citations": [{"title": "no id"}]}},
    {"query": "q", "response": {"overview": "x", "categories": ["A"], "citations": [{"id": "M:1:0"}]}},
    {"query": "q", "response": {"overview": "x", "categories": ["A"], "related": [None]}},
    {"query": "q", "response": "plain text"},
    {"query": "q", "response": None},
    {"question": "  ", "overview": "x", "categories": ["A"]},
    {"prompt": "q", "answer": "x", "category_list": "A|B", "evidence": ["M:1:0"]},
    {"query": "q", "overview": "x", "categories": ["A"], "evidence": [[1]]},
    {"overview": "x", "categories": ["A"]},
    ["not", "an", "object"],
]


def test_relaxed_schema_accepts_exactly_what_the_importer_imports():
    from shopbench.paceshop.relaxed import _parse, normalise

    items = []
    for f in RELAXED_FILES:
        items += [(f"{f.name} {w}", o) for w, o in _parse(f, f.read_text(encoding="utf-8"))]
    assert len(items) > 10
    items += [(f"case {i}", o) for i, o in enumerate(RELAXED_CASES)]
    verdicts = []
    for where, obj in items:
        try:
            normalise(obj, 0)
            imported = True
        except ValueError:
            imported = False
        verdicts.append(imported)
        assert valid("assistant-output-relaxed", obj) == imported, (where, obj)
    assert any(verdicts) and not all(verdicts)  # both kinds are exercised


def _pairs(tmp_path, source):
    from shopbench.padme.dataset import write_pairs_dataset
    from shopbench.padme.types import Context, Criterion, Pair

    ctx = Context("scripted:test", "scripted", 0)
    crit = Criterion("task_resolution", "")
    pairs = []
    for i, t in enumerate(source.tasks(3)):
        worse = source.rollout(t, crit, "bad", "Be careless.", ctx, 0)
        better = source.rollout(t, crit, "good", "Be careful.", ctx, 0)
        pairs.append(Pair(f"p{i}", f"c{i}", t.task_id, worse.domain, worse.source, crit.name, "bad-good",
                          ctx.agent_model, 0, worse, better, {"bad": "Be careless.", "good": "Be careful."}, kept=True))  # fmt: skip
    write_pairs_dataset(pairs, tmp_path)
    return tmp_path / "pairs.jsonl"


@pytest.mark.parametrize("kind", ["shop", "tau2"])
def test_pairs_and_trajectories_of_real_rollouts_validate_and_read_back(kind, tmp_path):
    from shopbench.padme.dataset import read_pairs_dataset
    from shopbench.padme.sources.factory import make_source

    if kind == "tau2" and not (DATA / "tau2_retail").exists():
        pytest.skip(f"{DATA / 'tau2_retail'} absent (external data beside the project)")
    spec = (
        {"kind": "shop", "n_products": 800}
        if kind == "shop"
        else {"kind": "tau2", "path": str(DATA / "tau2_retail")}
    )
    f = _pairs(tmp_path, make_source(spec, ROOT))
    objs = lines(f)
    assert len(objs) == 3 and all(valid("padme-pair", o) for o in objs)
    assert all(valid("trajectory", o[side]) for o in objs for side in ("worse", "better"))
    assert any(m.get("tool_calls") for o in objs for m in o["better"]["messages"])
    assert [p.pair_id for p in read_pairs_dataset(f)] == ["p0", "p1", "p2"]


def test_built_pairs_of_the_paper_nollm_profile_validate():
    f = Path("/work/main/outputs/paper-nollm/data/padme/dataset/pairs.jsonl")
    f = next(
        (p for p in (ROOT / "outputs/paper-nollm/data/padme/dataset/pairs.jsonl", f) if p.exists()), None
    )
    if f is None:
        pytest.skip("no notebook-40 build of profile paper-nollm here")
    v = schemas.validator("padme-pair")
    objs = lines(f)
    bad = [(o.get("pair_id"), next(v.iter_errors(o)).message) for o in objs if not v.is_valid(o)]
    assert objs and not bad


def test_annotation_answers_the_store_writes_validate(tmp_path):
    from shopbench.annotate.store import AnnotationStore

    st = AnnotationStore(tmp_path)
    st.record("a1", "p1", "A", 50, ("side_b", "side_a"), shown_at="2026-01-01T00:00:00.000Z",
              answered_at="2026-01-01T00:00:07.500Z")  # fmt: skip
    st.record("a1", "p1", "B", 100, ("side_b", "side_a"), shown_at="2026-01-01T00:00:00.000Z")
    objs = lines(tmp_path / "a1.jsonl")
    assert len(objs) == 2 and all(valid("annotation", o) for o in objs) and objs[1]["revision"] == 1


# ---- a file breaking a schema: one message from its reader ---------------------------------------------
def _one_line_message(e: InputError, path: Path, line: int, field: str) -> None:
    msg = str(e)
    assert "\n" not in msg and str(path) in msg and f"line {line}" in msg and f"field '{field}'" in msg, msg
    assert "Fix: " in msg and "shopbench schema" in msg, msg


@pytest.mark.parametrize("mutate,field", [
    (lambda d: d.pop("cell_id"), "cell_id"),
    (lambda d: d.update(attempt="first"), "attempt"),
    (lambda d: d["better"].pop("messages"), "better.messages"),
    (lambda d: d["worse"].update(reward="high"), "worse.reward"),
    (lambda d: d.update(votes=[{"judge": "j"}]), "votes.0.stage"),
])  # fmt: skip
def test_a_bad_pair_line_is_one_message_naming_file_line_field_and_fix(tmp_path, mutate, field):
    from shopbench.padme.dataset import DatasetError, read_pairs_dataset
    from shopbench.padme.sources.factory import make_source

    f = _pairs(tmp_path, make_source({"kind": "shop", "n_products": 800}, ROOT))
    objs = lines(f)
    mutate(objs[1])
    assert not valid("padme-pair", objs[1])
    f.write_text("".join(json.dumps(o) + "\n" for o in objs))
    with pytest.raises(DatasetError) as ei:
        read_pairs_dataset(f)
    assert isinstance(ei.value, InputError) and ei.value.field == field
    _one_line_message(ei.value, f, 2, field)


def test_a_bad_record_line_is_refused_by_reader_and_schema_alike(built, tmp_path):
    from shopbench.core import Record
    from shopbench.paceshop.io import DataFileError, read_jsonl

    folder, _ = built
    objs = lines(folder / "records_packaged.jsonl")[:3]
    cases = [("label", lambda d: d.update(label="OK")), ("persona.persona_id", lambda d: d["persona"].pop("persona_id")),
             ("tier", lambda d: d.update(tier=[1])), ("response.rqList", lambda d: d["response"].update(rqList="a b")),
             ("surprise", lambda d: d.update(surprise=1))]  # fmt: skip
    for field, mutate in cases:
        bad = json.loads(json.dumps(objs))
        mutate(bad[2])
        assert not valid("pace-record", bad[2]), field
        f = tmp_path / f"{field}.jsonl"
        f.write_text("".join(json.dumps(o) + "\n" for o in bad))
        with pytest.raises(DataFileError) as ei:
            read_jsonl(f, Record, id_field="record_id", fix="see `shopbench schema pace-record`")
        assert ei.value.field == field
        _one_line_message(ei.value, f, 3, field)
        with pytest.raises(InputError) as es:  # the schema check names the same field
            schemas.check(bad[2], "pace-record", file=f, where="line 3")
        assert es.value.field == field


def test_a_bad_strict_output_is_one_message(tmp_path):
    from shopbench.paceshop.relaxed import read_strict

    ok = {"id": "o1", "query": "q", "response": {"overview_text": "**A**", "bold_categories": ["A"],
          "productCategoryList": ["A"], "category_search_queries": ["a"], "rqList": [], "attribution_list": []}}  # fmt: skip
    bad = json.loads(json.dumps(ok)) | {"id": "o2"}
    bad["response"]["categories"] = bad["response"].pop("productCategoryList")
    f = tmp_path / "out.jsonl"
    f.write_text(json.dumps(ok) + "\n" + json.dumps(bad) + "\n")
    assert valid("assistant-output", ok) and not valid("assistant-output", bad)
    with pytest.raises(InputError) as ei:
        read_strict(f)
    _one_line_message(ei.value, f, 2, "response.productCategoryList")


def _cli(args, outputs, timeout=300):
    env = {"SHOPBENCH_OUTPUTS": str(outputs), "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-m", "shopbench.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=ROOT)  # fmt: skip


def test_eval_on_a_bad_pairs_file_exits_2_with_one_message_and_writes_nothing(tmp_path):
    from shopbench.padme.sources.factory import make_source

    f = _pairs(tmp_path / "pairs", make_source({"kind": "shop", "n_products": 800}, ROOT))
    objs = lines(f)
    objs[2]["kept"] = "yes"
    f.write_text("".join(json.dumps(o) + "\n" for o in objs))
    outputs = tmp_path / "outputs"
    r = _cli(
        ["eval", "padme_evaluator", "--model", "local/schema-sampler", "-T", f"pairs={f}", "--no-progress"],
        outputs,
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    err = r.stderr.strip()
    assert (
        len(err.splitlines()) == 1
        and f"{f}, line 3: field 'kept'" in err
        and "shopbench schema padme-pair" in err
    )
    assert not (outputs / "tasks").exists()  # nothing half-written


def test_eval_on_a_bad_records_file_exits_2_with_one_message_and_writes_nothing(built, tmp_path):
    folder, _ = built
    objs = lines(folder / "records_packaged.jsonl")[:4]
    objs[3]["evidence"][0].pop("snippet")
    f = tmp_path / "records.jsonl"
    f.write_text("".join(json.dumps(o) + "\n" for o in objs))
    outputs = tmp_path / "outputs"
    r = _cli(
        ["eval", "pace_judge", "--model", "local/checks", "-T", f"records={f}", "--no-progress"], outputs
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    err = r.stderr.strip()
    assert len(err.splitlines()) == 1 and "line 4" in err and "field 'evidence.0.snippet'" in err
    assert "shopbench schema pace-record" in err and not (outputs / "tasks").exists()


# ---- the command and the guide ------------------------------------------------------------------------
def test_shopbench_schema_lists_and_prints(tmp_path):
    r = _cli(["schema"], tmp_path)
    assert r.returncode == 0 and all(n in r.stdout for n in schemas.SCHEMAS)
    r = _cli(["schema", "padme-pair"], tmp_path)
    assert r.returncode == 0 and json.loads(r.stdout) == schemas.load("padme-pair")
    r = _cli(["schema", "pairs"], tmp_path)
    assert r.returncode == 2 and "no schema named 'pairs'" in r.stderr and "Traceback" not in r.stderr


def guide_examples() -> list[tuple[str, str]]:
    """(schema name, example text) of every ```json block of the guide preceded by <!-- schema: NAME -->."""
    text = GUIDE.read_text(encoding="utf-8")
    return re.findall(r"<!-- schema: ([a-z-]+) -->\s*```jsonl?\n(.*?)```", text, re.S)


def test_the_guide_shows_a_valid_example_of_every_schema():
    found = guide_examples()
    assert sorted({n for n, _ in found}) == sorted(schemas.SCHEMAS)
    for name, block in found:
        for line in block.strip().splitlines():
            obj = json.loads(line)
            errs = list(schemas.validator(name).iter_errors(obj))
            assert not errs, (name, errs[0].message)


def test_the_guide_examples_are_read_by_their_readers(tmp_path):
    from shopbench.annotate.store import Answer
    from shopbench.core import Record, Trajectory
    from shopbench.paceshop.io import read_jsonl
    from shopbench.paceshop.relaxed import load_relaxed, read_strict
    from shopbench.padme.dataset import read_pairs_dataset

    ex = {n: b for n, b in guide_examples()}
    paths = {}
    for name, block in ex.items():
        paths[name] = tmp_path / f"{name}.jsonl"
        paths[name].write_text(block)
    assert read_jsonl(paths["pace-record"], Record, id_field="record_id")[0].record_id == "r1"
    assert read_strict(paths["assistant-output"]).imported[0].output_id == "o1"
    rep = load_relaxed(paths["assistant-output-relaxed"])
    assert len(rep.imported) == 1 and not rep.rejected and rep.imported[0].repairs
    assert read_pairs_dataset(paths["padme-pair"])[0].better.level == "good"
    t = Trajectory.from_dict(json.loads(ex["trajectory"]))
    assert t.turns[1].tool_calls[0].arguments == {"query": "quiet blender"}
    assert Answer.model_validate_json(ex["annotation"].strip()).chosen_item == "side_b"


def test_the_guides_error_example_is_what_the_reader_says(tmp_path):
    from shopbench.padme.dataset import read_pairs_dataset

    pair = json.loads(dict(guide_examples())["padme-pair"])
    f = tmp_path / "my_pairs.jsonl"
    rows = [pair | {"pair_id": f"p{i}"} for i in range(3)]
    rows[2]["kept"] = "yes"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError) as ei:
        read_pairs_dataset(f)
    shown = re.search(r"```text\nerror: (.*?)\n```", GUIDE.read_text(encoding="utf-8"), re.S).group(1)
    assert str(ei.value).replace(str(f), "my_pairs.jsonl") == shown
