"""The preview as text on the terminal and as ``outputs/<profile>/paper/preview.json`` (issue 14 §2)."""

from __future__ import annotations

import json
from pathlib import Path

from .lines import Preview


def _fmt_usd(v: float | None) -> str:
    return "unpriced" if v is None else f"${v:,.2f}"


def render(pv: Preview) -> str:
    rows = [("notebook", "backbone", "role", "calls", "input tok", "output tok", "$", "hours", "available")]
    for x in pv.lines:
        name = x.backbone + (f" (for {x.substitute_for})" if x.substitute_for else "")
        rows.append((x.notebook, name, x.role, f"{x.calls:,}", f"{x.input_tokens:,}", f"{x.output_tokens:,}",
                     _fmt_usd(x.usd) + (" b" if x.batch else ""), f"{x.hours:,.2f}",
                     "yes" if x.available else "no key/model"))  # fmt: skip
    widths = [min(60, max(len(r[i]) for r in rows)) for i in range(len(rows[0]))]
    lines = ["  ".join(str(c)[:w].ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    d = pv.as_dict()["totals"]
    lines += [
        "",
        f"API: {d['api']['calls']:,} calls, {_fmt_usd(d['api']['usd'])}, {d['api']['hours']:,.1f} h at the configured "
        f"concurrency; callable now (keys set): {_fmt_usd(d['api_available']['usd'])}",
        f"self-hosted servers: {d['self_hosted']['calls']:,} calls, {d['self_hosted']['hours']:,.1f} h",
        f"local (this machine): {d['local']['calls']:,} calls, {d['local']['hours']:,.1f} h",
    ]
    if any(x.batch for x in pv.lines):
        lines.append(
            "b: at the provider's batch price (gateway.mode: batch; litellm's batch rate, else half)"
        )
    lines += [f"note: {n}" for n in pv.notes]
    methods = sorted({f"{x.notebook}: {x.method}" for x in pv.lines})
    lines += ["how:"] + [f"  {m}" for m in methods]
    if pv.budget or pv.budget_notes:
        import pandas as pd

        from .budget import render_budget

        lines += ["", render_budget(pd.DataFrame(pv.budget), pv.budget_notes)]
    return "\n".join(lines)


def write(pv: Preview, paper_dir: Path, refused: list[str]) -> Path:
    paper_dir.mkdir(parents=True, exist_ok=True)
    path = paper_dir / "preview.json"
    data = pv.as_dict()
    data["refusals"] = refused
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path
