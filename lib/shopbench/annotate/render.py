"""HTML for what the annotator reads: conversations, PACEShop responses and reference documents.

Everything is rendered in Python and escaped here; the browser only places the HTML. Only the
:class:`~shopbench.annotate.pairs.Item` content and the references are rendered, never a pair's
hidden metadata.

Conversations (Appendix H.6): numbered turns (a turn is one party speaking, the agent's tool calls
included); each tool call is a collapsed ``Agent calls name(args)`` block and each tool output a
collapsed ``Tool result -> name`` block (HTML ``<details>``).
"""

from __future__ import annotations

import html
import json
import re

from .pairs import Conversation, Item, PaceshopView, Reference, ShownMessage, ShownToolCall

_BOLD = re.compile(r"\*\*(.+?)\*\*")
ROLE_LABEL = {"user": "Customer", "assistant": "Agent"}


def esc(text: object) -> str:
    return html.escape("" if text is None else str(text), quote=True)


def _pretty(text: str | None) -> str:
    """Pretty-print JSON text; other text is returned as it is."""
    if text is None:
        return ""
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except (json.JSONDecodeError, TypeError):
        return text


def call_signature(call: ShownToolCall, limit: int = 110) -> str:
    """``name(key="value", n=2)`` from the call's JSON arguments, shortened to ``limit`` characters."""
    try:
        args = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        args = call.arguments
    if isinstance(args, dict):
        inner = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    else:
        inner = str(args)
    sig = f"{call.name}({inner})"
    return sig if len(sig) <= limit else sig[: limit - 2] + "…)"


def _call_block(call: ShownToolCall) -> str:
    return (f'<details class="sb-call"><summary>Agent calls <code>{esc(call_signature(call))}</code></summary>'
            f'<pre class="sb-pre">{esc(_pretty(call.arguments))}</pre></details>')  # fmt: skip


def _result_block(m: ShownMessage) -> str:
    name = f" {esc(m.name)}" if m.name else ""
    return (f'<details class="sb-result"><summary>Tool result -&gt;{name}</summary>'
            f'<pre class="sb-pre">{esc(_pretty(m.content))}</pre></details>')  # fmt: skip


def render_conversation(conv: Conversation) -> str:
    turns: list[tuple[str, list[str]]] = []  # (party, blocks)
    for m in conv.messages:
        party = "user" if m.role == "user" else "assistant"  # tool output belongs to the agent's turn
        if not turns or turns[-1][0] != party:
            turns.append((party, []))
        blocks = turns[-1][1]
        if m.role == "tool":
            blocks.append(_result_block(m))
            continue
        if m.content:
            blocks.append(f'<div class="sb-text">{esc(m.content)}</div>')
        blocks += [_call_block(c) for c in m.tool_calls]
    out = ['<ol class="sb-conv">']
    for n, (party, blocks) in enumerate(turns, 1):
        cls = "sb-user" if party == "user" else "sb-agent"
        out.append(f'<li class="sb-turn {cls}"><div class="sb-turn-head"><span class="sb-turn-no">{n}</span> '
                   f'{ROLE_LABEL[party]}</div>{"".join(blocks)}</li>')  # fmt: skip
    out.append("</ol>")
    return "".join(out)


def bold(text: str) -> str:
    """Escape, then turn ``**x**`` into ``<strong>x</strong>``."""
    return _BOLD.sub(r"<strong>\1</strong>", esc(text))


def render_context(v: PaceshopView) -> str:
    """The shopper's query and profile: shown once above both sides when they share them."""
    return (f'<div class="sb-ps-query"><b>Shopper query:</b> {esc(v.query)}</div>'
            f'<div class="sb-ps-shopper"><b>Shopper:</b> {esc(v.persona.summary)}</div>')  # fmt: skip


def shared_context(a: Item, b: Item) -> str | None:
    """``render_context`` of a PACEShop pair whose two sides answer the same query for the same
    shopper (GOOD/BAD siblings always do); ``None`` otherwise (each side then shows its own)."""
    pa, pb = a.parsed(), b.parsed()
    if isinstance(pa, PaceshopView) and isinstance(pb, PaceshopView):
        if pa.query == pb.query and pa.persona.summary == pb.persona.summary:
            return render_context(pa)
    return None


def render_paceshop(v: PaceshopView, with_context: bool = True) -> str:
    cats = []
    for i, c in enumerate(v.productCategoryList):
        q = v.category_search_queries[i] if i < len(v.category_search_queries) else ""
        search = f' <span class="sb-muted">search: {esc(q)}</span>' if q else ""
        cats.append(f"<li>{esc(c)}{search}</li>")
    attrs = []
    for eid in v.attribution_list:
        ev = v.evidence.get(eid)
        if ev is None:
            attrs.append(
                f'<li><code>{esc(eid)}</code> <span class="sb-muted">(not in the evidence pool)</span></li>'
            )
        else:
            attrs.append(f'<li><code>{esc(eid)}</code> <b>{esc(ev.title)}</b> <span class="sb-muted">'
                         f"({esc(ev.brand)}, {esc(ev.source_field)})</span>: {esc(ev.snippet)}</li>")  # fmt: skip
    return "".join([
        '<div class="sb-ps">',
        render_context(v) if with_context else "",
        f'<section><h4>Overview</h4><p class="sb-ps-overview">{bold(v.overview_text)}</p></section>',
        f'<section><h4>Product categories</h4><ol>{"".join(cats)}</ol></section>',
        f'<section><h4>Related queries</h4><ul>{"".join(f"<li>{esc(q)}</li>" for q in v.rqList)}</ul></section>',
        f'<section><h4>Attributions ({len(v.attribution_list)})</h4><ul class="sb-ps-attr">{"".join(attrs)}</ul></section>',
        "</div>",
    ])  # fmt: skip


def render_item(item: Item, with_context: bool = True) -> str:
    """An item's HTML; ``with_context=False`` leaves out the shopper block shown above the pair."""
    parsed = item.parsed()
    if isinstance(parsed, Conversation):
        return render_conversation(parsed)
    return render_paceshop(parsed, with_context)


def render_reference(ref: Reference) -> str:
    if ref.format == "markdown":
        import markdown

        # escaped first: a document can show markup, never inject it
        return f'<div class="sb-doc">{markdown.markdown(html.escape(ref.text, quote=False))}</div>'
    return f'<pre class="sb-doc sb-pre">{esc(ref.text)}</pre>'


def noun(item: Item) -> str:
    return "conversation" if item.kind == "conversation" else "response"
