"""The τ²-retail LLM agent: a gateway model behind the retail tools, system prompt = τ²-bench's
agent instruction and the policy (with the PADMÉ H.3 wrapper appended when steered)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from ...core.conversation import ToolCall, merge_same_role, tool_call_schema
from ...env.protocols import AgentStep
from ...llm.result import CallResult, call_usage
from .specs import TOOL_NAMES, tool_specs

__all__ = ["LLMRetailAgent"]


_JSON_AGENT = {
    "type": "object",
    "properties": {
        "message": {"type": ["string", "null"], "maxLength": 3000},
        "tool_call": tool_call_schema(TOOL_NAMES, nullable=True),
    },
    "required": ["message", "tool_call"],
    "additionalProperties": False,
}
_JSON_CONTRACT = (
    'Answer with one JSON object {"message": <text for the user or null>, "tool_call": {"name": ..., '
    '"arguments": {...}} or null}: either a message or one tool call. The tools:\n'
)


def _json_tools(specs: Sequence[Mapping]) -> str:
    lines = []
    for s in specs:
        fn = s["function"]
        lines.append(f"- {fn['name']}({', '.join(fn['parameters']['properties'])}): {fn['description']}")
    return "\n".join(lines)


class LLMRetailAgent:
    """A gateway model behind the retail tools: ``tool_mode="native"`` (function calling) or
    ``"json"`` (a ``{message, tool_call}`` object under a JSON schema, for models without tools).
    ``tool_texts``: the tool descriptions it is given, ``"tau2"`` (τ²-bench's own, the default) or
    ``"short"`` (the project's one-line texts, for small local models); see
    :func:`~shopbench.domains.tau2_retail.specs.tool_specs`. ``specs``: another domain's tool specs
    instead (airline, banking_knowledge, telecom; :mod:`shopbench.domains.base`)."""

    def __init__(self, gateway, backbone: str, system_prompt: str, run_id: str, item_prefix: str,
                 tool_mode: str = "native", max_tokens: int = 1024, tool_texts: str = "tau2",
                 specs: Sequence[Mapping] | None = None):  # fmt: skip
        if tool_mode not in ("native", "json"):
            raise ValueError(f"tool_mode {tool_mode!r}: use 'native' (function calling) or 'json'")
        self.tool_specs = tool_specs(tool_texts)
        self.json_schema = _JSON_AGENT
        if specs is not None:  # another domain's tools (issue 28 item 4: shopbench.domains.base)
            self.tool_specs = [dict(s) for s in specs]
            names = tuple(s["function"]["name"] for s in self.tool_specs)
            props = {"message": _JSON_AGENT["properties"]["message"],  # type: ignore[index]
                     "tool_call": tool_call_schema(names, nullable=True)}  # fmt: skip
            self.json_schema = {**_JSON_AGENT, "properties": props}
        self.tool_texts = tool_texts
        self.gateway, self.backbone, self.system_prompt = gateway, backbone, system_prompt
        self.run_id, self.item_prefix, self.tool_mode, self.max_tokens = (
            run_id,
            item_prefix,
            tool_mode,
            int(max_tokens),
        )
        self.round = 0
        self.name = f"llm:{backbone}"

    def reset(self, episode_id: str) -> None:
        self.round = 0

    def _json_messages(self, messages: Sequence[Mapping]) -> list[dict]:
        out = [
            {
                "role": "system",
                "content": f"{self.system_prompt}\n\n{_JSON_CONTRACT}{_json_tools(self.tool_specs)}",
            }
        ]
        for m in messages[1:]:
            if m["role"] == "assistant" and m.get("tool_calls"):
                fn = m["tool_calls"][0]["function"]
                out.append(
                    {
                        "role": "assistant",
                        "content": json.dumps(
                            {
                                "message": None,
                                "tool_call": {"name": fn["name"], "arguments": json.loads(fn["arguments"])},
                            }
                        ),
                    }
                )
            elif m["role"] == "assistant":
                out.append(
                    {
                        "role": "assistant",
                        "content": json.dumps({"message": m.get("content"), "tool_call": None}),
                    }
                )
            elif m["role"] == "tool":
                out.append({"role": "user", "content": f"Tool result: {m.get('content')}"})
            else:
                out.append({"role": "user", "content": str(m.get("content") or "")})
        return merge_same_role(out)

    def step(self, messages: Sequence[Mapping], observation: object = None) -> AgentStep:
        item = f"{self.item_prefix}:r{self.round}"
        self.round += 1
        params = {"max_tokens": self.max_tokens, "temperature": 0}
        if self.tool_mode == "native":
            call = self.gateway.call(
                self.backbone, item, list(messages), tools=self.tool_specs, params=params
            )
        else:
            call = self.gateway.call(self.backbone, item, self._json_messages(messages), schema=self.json_schema,
                                     schema_name="tau2_agent_step", params=params)  # fmt: skip
        row: CallResult = self.gateway.run([call], run_id=self.run_id, desc=None)[0]
        usage = call_usage(row)
        if row.get("status") == "error":
            return AgentStep(error=f"{item}: model call failed: {row.get('error')}", usage=usage)
        calls: list[ToolCall] = []
        if self.tool_mode == "native":
            for i, native in enumerate(row.get("tool_calls") or []):
                fn = native.get("function") or {}
                raw = fn.get("arguments") or "{}"
                try:
                    args = json.loads(raw) if isinstance(raw, str) else dict(raw)
                except (json.JSONDecodeError, TypeError, ValueError):
                    args = {"_unparsable_arguments": str(raw)[:200]}
                calls.append(
                    ToolCall(
                        str(fn.get("name")),
                        args if isinstance(args, dict) else {},
                        str(native.get("id") or f"{item}:c{i}"),
                    )
                )
            text = row.get("raw_output")
        else:
            obj = row.get("parsed") if row.get("status") == "ok" else None
            if not isinstance(obj, dict):
                return AgentStep(
                    error=f"{item}: output breaks the JSON contract: {row.get('parse_error')}", usage=usage
                )
            tc = obj.get("tool_call")
            if isinstance(tc, dict) and tc.get("name"):
                calls.append(ToolCall(str(tc["name"]), dict(tc.get("arguments") or {}), f"{item}:c0"))
            text = obj.get("message")
        text = text.strip() if isinstance(text, str) and text.strip() else None
        if calls:
            return AgentStep(tool_calls=calls, usage=usage)
        if text is None:
            return AgentStep(error=f"{item}: empty reply (no text, no tool call)", usage=usage)
        return AgentStep(message=text, usage=usage)
