"""The compact JSON tool mode for small local models (issue 13 §4; seed 002 §3.1, §5).

Seed 002 runs every agent "with model-specific native chat templates and parsers" (§5). Small local
models (SmolLM2-135M, Qwen2.5-Coder-1.5B through llama.cpp) have no native tool calling the project
can rely on, and the general JSON mode (:data:`shopbench.shopsim.agents.AGENT_JSON_SCHEMA`: a message
plus a list of free-form calls, the ~900-token system prompt and raw JSON tool results) ended all
four of their trials in ``assistant_error``. This mode is built for them:

- **Fixed text first.** The system message is ``prompts/shopsim_agent_compact.txt`` with no slots,
  and the conversation is only ever appended to, so llama.cpp reuses its KV cache for everything
  before the newest message (within a trial, and the prompt across trials).
- **One tool call per step under a compact schema** (:data:`COMPACT_SCHEMA`): ``{"tool", "args"}``,
  one ``anyOf`` branch per tool with its own required arguments, and ``reply`` (the message to the
  customer) as a pseudo-tool that ends the turn. The grammar-constrained decoder can only emit a
  call with the right argument names and types, and every string is bounded so it cannot loop.
  ``list_categories`` and ``get_variant_details`` are left out (details list every variant with its
  stock); the environment still offers all eight tools.
- **Short tool results.** The agent sees each result as a few lines of text (:func:`render_result`):
  at most :data:`SEARCH_ROWS` search rows ``id | title | price | stock``, a product's description,
  attributes and variants (one line each, ``- size 8, colour olive: <variant id>``: Qwen2.5-1.5B took
  the first listed variant when they were run together on one line), a one-line cart change or error. The environment's JSON result is what
  the tool log and the verifier keep; this is only the agent's reading of it.
- **Bounded context.** When the rendered conversation passes :data:`MAX_PROMPT_CHARS`, results of
  earlier customer turns are shortened to ``(earlier result omitted)``, oldest first; the agent's own
  steps (which carry the product ids it used) stay.

The agent sees only what a real agent sees: the conversation and its tool results. It never reads the
scripted customer's ``intent`` side channel or the scenario.
"""

from __future__ import annotations

import json
from typing import Any

from .types import ToolCall

__all__ = ["COMPACT_PROMPT_STEM", "COMPACT_SCHEMA", "COMPACT_TOOLS", "compact_messages", "parse_compact",
           "render_result"]  # fmt: skip

COMPACT_PROMPT_STEM = "shopsim_agent_compact"
SEARCH_ROWS = 6
MAX_PROMPT_CHARS = 14_000  # ~4k tokens of conversation on top of the ~600-token prompt
_ID = {"type": "string", "maxLength": 24}
_QTY = {"type": "integer", "minimum": 0, "maximum": 99}


def _branch(tool: str, props: dict[str, dict]) -> dict:
    return {
        "type": "object",
        "properties": {
            "tool": {"const": tool},
            "args": {
                "type": "object",
                "properties": props,
                "required": list(props),
                "additionalProperties": False,
            },
        },
        "required": ["tool", "args"],
        "additionalProperties": False,
    }


COMPACT_TOOLS: dict[str, dict[str, dict]] = {
    "search_products": {"query": {"type": "string", "minLength": 1, "maxLength": 80}},
    "get_product_details": {"product_id": _ID},
    "add_to_cart": {"product_id": _ID, "variant_id": {"type": ["string", "null"], "maxLength": 24},
                    "quantity": {"type": "integer", "minimum": 1, "maximum": 99}},
    "update_cart_quantity": {"product_id": _ID, "quantity": _QTY},
    "remove_from_cart": {"product_id": _ID},
    "view_cart": {},
    "reply": {"text": {"type": "string", "minLength": 1, "maxLength": 700}},
}  # fmt: skip
"""Arguments per tool, in the order the model writes them (all required; ``variant_id`` may be null)."""

COMPACT_SCHEMA: dict = {"anyOf": [_branch(t, p) for t, p in COMPACT_TOOLS.items()]}
"""One step: ``{"tool": <name>, "args": {...}}``; ``reply`` ends the agent's turn."""


def parse_compact(obj: Any, call_id: str) -> tuple[str | None, ToolCall | None]:
    """``(message, None)`` for a reply, ``(None, call)`` for a tool call. Raises ValueError for
    anything else (the gateway has already checked the schema; this guards other backends)."""
    if (
        not isinstance(obj, dict)
        or obj.get("tool") not in COMPACT_TOOLS
        or not isinstance(obj.get("args"), dict)
    ):
        raise ValueError(f"not a {{tool, args}} step: {json.dumps(obj)[:200]}")
    tool, args = obj["tool"], obj["args"]
    if tool == "reply":
        text = args.get("text")
        if not isinstance(text, str) or not text.strip():
            raise ValueError("reply without text")
        return text.strip(), None
    unknown = set(args) - set(COMPACT_TOOLS[tool])
    if unknown:
        raise ValueError(f"{tool} takes no arguments {sorted(unknown)}")
    return None, ToolCall(tool, {k: v for k, v in args.items() if v is not None}, call_id=call_id)


def _money(x: Any) -> str:
    try:
        return f"${float(x):.2f}"
    except (TypeError, ValueError):
        return str(x)


def render_result(name: str, args: dict, result: Any) -> str:
    """The agent's short text reading of one tool result (the environment keeps the JSON)."""
    if not isinstance(result, dict):
        return f"Result: {str(result)[:300]}"
    if "error" in result:
        return f"Result: ERROR: {str(result['error'])[:400]}"
    if name == "search_products":
        rows = [r for r in result.get("results") or [] if isinstance(r, dict)][:SEARCH_ROWS]
        if not rows:
            return f"Result: no products found for '{args.get('query', '')}'. Try other words."
        lines = [f"{i}. {r.get('product_id')} | {r.get('title')} | {_money(r.get('price'))} | "
                 f"{'in stock' if r.get('in_stock', True) else 'OUT OF STOCK'}" for i, r in enumerate(rows, 1)]  # fmt: skip
        return "Result:\n" + "\n".join(lines)
    if name == "get_product_details" and isinstance(result.get("product"), dict):
        p = result["product"]
        attrs = ", ".join(f"{k}: {v}" for k, v in (p.get("attributes") or {}).items())
        variants = [v for v in p.get("variants") or [] if isinstance(v, dict)]
        if variants:  # one line per variant, size and colour first, so the match is easy to read off
            vs = "\n".join(
                f"- {', '.join(f'{k} {v.get(k)}' for k in ('size', 'colour') if v.get(k))}: {v.get('variant_id')}"
                + ("" if v.get("in_stock", True) else " (OUT OF STOCK)")
                for v in variants
            )
            var = f"variants (use the one whose size and colour both match):\n{vs}"
        else:
            var = "no variants (use variant_id null)"
        return (f"Result: {p.get('product_id')} | {p.get('title')} | {p.get('brand')} | {_money(p.get('price'))} | "
                f"{'in stock' if p.get('in_stock', True) else 'OUT OF STOCK'}\n{p.get('description', '')}\n"
                f"{attrs}\n{var}")  # fmt: skip
    if name == "add_to_cart":
        v = f" (variant {result.get('variant_id')})" if result.get("variant_id") else ""
        return (f"Result: added {result.get('added')} x {result.get('product_id')}{v}; the cart now holds "
                f"{result.get('quantity')} of it. Cart total {_money(result.get('cart_total'))}.")  # fmt: skip
    if name == "update_cart_quantity":
        return (f"Result: {result.get('product_id')} quantity set to {result.get('quantity')}. "
                f"Cart total {_money(result.get('cart_total'))}.")  # fmt: skip
    if name == "remove_from_cart":
        return f"Result: removed {result.get('product_id')}. Cart total {_money(result.get('cart_total'))}."
    if name == "view_cart":
        items = [i for i in result.get("items") or [] if isinstance(i, dict)]
        if not items:
            return "Result: the cart is empty."
        lines = [f"- {i.get('quantity')} x {i.get('product_id')} | {i.get('title')}"
                 + (f" | {i.get('variant_id')}" if i.get("variant_id") else "")
                 + f" | {_money(i.get('unit_price'))} each" for i in items]  # fmt: skip
        return "Result: cart:\n" + "\n".join(lines) + f"\ntotal {_money(result.get('total'))}"
    return "Result: " + json.dumps(result)[:600]


def _step_json(tool: str, args: dict) -> str:
    return json.dumps({"tool": tool, "args": args})


def compact_messages(
    messages: list[dict], system_prompt: str, max_chars: int = MAX_PROMPT_CHARS
) -> list[dict]:
    """The transcript as the compact agent reads it: its fixed system prompt, ``Customer: ...`` user
    messages, each of its own steps as the JSON object it wrote, and each tool result as a short
    ``Result: ...`` user message (consecutive user texts merged). Append-only as the trial grows, so
    the shared prefix stays in llama.cpp's KV cache, until :data:`MAX_PROMPT_CHARS` forces
    shortening earlier turns' results."""
    body: list[dict] = []  # {"role", "content", "turn", "result": bool}
    names: dict[str, tuple[str, dict]] = {}
    turn = -1
    for m in messages:
        role = m.get("role")
        if role == "system":
            continue
        if role == "user":
            turn += 1
            body.append({"role": "user", "content": f"Customer: {m.get('content') or ''}", "turn": turn})
        elif role == "assistant":
            calls = m.get("tool_calls") or []
            for tc in calls:
                fn = tc.get("function") or {}
                try:
                    args = json.loads(fn.get("arguments") or "{}")
                except (TypeError, ValueError):
                    args = {}
                full = {k: args.get(k) for k in COMPACT_TOOLS.get(fn.get("name"), {})} or args
                names[str(tc.get("id"))] = (str(fn.get("name")), args)
                body.append(
                    {"role": "assistant", "content": _step_json(str(fn.get("name")), full), "turn": turn}
                )
            if not calls and m.get("content") is not None:
                body.append({"role": "assistant", "content": _step_json("reply", {"text": m.get("content")}),
                             "turn": turn})  # fmt: skip
        elif role == "tool":
            name, args = names.get(str(m.get("tool_call_id")), (str(m.get("name") or "tool"), {}))
            c = m.get("content")
            try:
                result = json.loads(c) if isinstance(c, str) else c
            except ValueError:
                result = c
            body.append({"role": "user", "content": render_result(name, args, result), "turn": turn,
                         "result": True})  # fmt: skip
    total = sum(len(b["content"]) for b in body)
    for b in body:  # oldest results of earlier turns first
        if total <= max_chars:
            break
        if b.get("result") and b["turn"] < turn:
            total -= len(b["content"]) - len("Result: (earlier result omitted)")
            b["content"] = "Result: (earlier result omitted)"
    out: list[dict] = [{"role": "system", "content": system_prompt}]
    for b in body:
        if out[-1]["role"] == b["role"] and b["role"] == "user":
            out[-1] = {"role": "user", "content": f"{out[-1]['content']}\n{b['content']}"}
        else:
            out.append({"role": b["role"], "content": b["content"]})
    return out
