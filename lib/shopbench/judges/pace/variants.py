"""What a prompt reorder costs: agreement of two protocol variants on the same records (seed 000, D.4).

``pacejudge`` is the paper's verbatim D.4 prompt; ``pacejudge_prefix_first`` is the same text with
the fixed parts (labels, decision rules, schema) before the record, so a local model reuses the
KV cache of the shared prefix. D.4 reports PACEJudge only in its own order, so any difference in
what a model answers is a cost of the reorder that a reader must see: :func:`variant_agreement`
pairs the two variants' rows of one run table by (backbone, record, repeat) and reports how often
they agree on the verdict, the defect family and the defect location.
"""

from __future__ import annotations

import pandas as pd

BASE = "pacejudge"
VARIANT = "pacejudge_prefix_first"
KEYS = ("backbone", "record_id", "repeat")
AGREEMENT_COLUMNS = ("backbone", "n_base", "n_variant", "n_pairs", "n_unpaired", "verdict_agreement",
                     "family_agreement", "location_agreement", "full_agreement", "base_verdict_accuracy",
                     "variant_verdict_accuracy")  # fmt: skip


def _paired(run_table: pd.DataFrame, base: str, variant: str) -> pd.DataFrame:
    missing = {"protocol", *KEYS, "verdict", "defect_family", "defect_location", "parse_ok", "label"} - set(
        run_table.columns
    )
    if missing:
        raise ValueError(
            f"the run table lacks column(s) {sorted(missing)}; pass a judges.pace.sweep run table"
        )
    ok = run_table[run_table["parse_ok"] == True]  # noqa: E712 - pandas boolean column
    cols = [*KEYS, "verdict", "defect_family", "defect_location", "label"]
    a = ok.loc[ok["protocol"] == base, cols]
    b = ok.loc[ok["protocol"] == variant, cols[:-1]]
    return a.merge(b, on=list(KEYS), suffixes=("_base", "_variant"))


def _share(mask: pd.Series) -> float | None:
    return float(mask.mean()) if len(mask) else None


def variant_agreement(run_table: pd.DataFrame, base: str = BASE, variant: str = VARIANT) -> pd.DataFrame:
    """Per backbone: how often ``base`` and ``variant`` agree on the same (record, repeat).

    Only rows that both variants parsed are paired (``n_pairs``); ``n_base`` / ``n_variant`` count
    each variant's parsed rows and ``n_unpaired`` the parsed rows without a parsed partner. The
    family and location agreement is over all pairs, ``NONE`` being a label like any other (two GOOD
    answers with ``NONE`` agree); ``full_agreement`` needs all three. The verdict accuracy of each
    variant against the gold label on the paired records shows whether disagreement moves accuracy.
    Shares are missing (``None``, NaN in the frame) when nothing pairs."""
    pairs = _paired(run_table, base, variant)
    ok = run_table[run_table["parse_ok"] == True]  # noqa: E712
    out = []
    for bb in dict.fromkeys(run_table.loc[run_table["protocol"].isin([base, variant]), "backbone"]):
        g = pairs[pairs["backbone"] == bb]
        n_a = int(((ok["protocol"] == base) & (ok["backbone"] == bb)).sum())
        n_b = int(((ok["protocol"] == variant) & (ok["backbone"] == bb)).sum())
        same = {c: g[f"{c}_base"].astype(str) == g[f"{c}_variant"].astype(str)
                for c in ("verdict", "defect_family", "defect_location")}  # fmt: skip
        out.append({
            "backbone": bb, "n_base": n_a, "n_variant": n_b, "n_pairs": len(g), "n_unpaired": n_a + n_b - 2 * len(g),
            "verdict_agreement": _share(same["verdict"]), "family_agreement": _share(same["defect_family"]),
            "location_agreement": _share(same["defect_location"]),
            "full_agreement": _share(same["verdict"] & same["defect_family"] & same["defect_location"]),
            "base_verdict_accuracy": _share(g["verdict_base"] == g["label"]),
            "variant_verdict_accuracy": _share(g["verdict_variant"] == g["label"]),
        })  # fmt: skip
    return pd.DataFrame(out, columns=list(AGREEMENT_COLUMNS))
