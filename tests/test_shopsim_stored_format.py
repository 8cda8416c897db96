"""Trial records stored by an earlier version still load (issue 11: "old files must load").

``fixtures/shopsim_trials_b4a3580.jsonl`` holds two trial lines written by the smoke run at commit
b4a3580 (a scripted agent's refusal probe, and the schema-sampler LLM agent's probe that ended in an
agent error after ten tool calls). A change to :class:`~shopbench.shopsim.types.TrialRecord` must keep
reading them: they load through the trajectory store, write back byte for byte, and their one
conversation (:attr:`TrialRecord.conversation`, derived from the turns, never stored) holds every
customer message, tool call and agent reply once.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from shopbench.shopsim.sweep import TrajectoryStore
from shopbench.shopsim.types import TrialRecord

FIXTURE = Path(__file__).parent / "fixtures" / "shopsim_trials_b4a3580.jsonl"


def test_records_of_b4a3580_load_and_write_back_unchanged(tmp_path):
    lines = FIXTURE.read_text(encoding="utf-8").splitlines(keepends=True)
    assert len(lines) == 2
    for line in lines:
        t = TrialRecord.from_dict(json.loads(line))
        assert json.dumps(t.to_dict(), sort_keys=True) + "\n" == line
    # through the store, as notebook 80 and the explorer read them
    agent = json.loads(lines[1])["agent"]
    out = TrajectoryStore(tmp_path)
    shutil.copy(FIXTURE, out.path(agent))  # both lines in one agent's file: load() only reads
    got = out.load(agent)
    assert [t.trial_id for t in got] == ["refusal-176843814654678", "refusal-154033902520123"]


def test_the_conversation_of_a_stored_record_is_derived_from_its_turns():
    for line in FIXTURE.read_text(encoding="utf-8").splitlines():
        t = TrialRecord.from_dict(json.loads(line))
        msgs = t.conversation.messages
        users = [m["content"] for m in msgs if m["role"] == "user"]
        replies = [m["content"] for m in msgs if m["role"] == "assistant" and m.get("content") is not None]
        calls = [c for m in msgs if m["role"] == "assistant" for c in m.get("tool_calls") or []]
        tools = [m for m in msgs if m["role"] == "tool"]
        assert msgs[0] == {"role": "system", "content": t.system_prompt}
        assert users == [x.user.message for x in t.turns]
        assert replies == [x.agent_message for x in t.turns if x.agent_message]
        assert len(calls) == len(tools) == len(t.events) and [m["tool_call_id"] for m in tools] == [
            e.call.call_id for e in t.events
        ]
        assert t.conversation.termination == t.termination
    assert len(TrialRecord.from_dict(json.loads(line)).events) == 10  # the LLM agent's ten calls
