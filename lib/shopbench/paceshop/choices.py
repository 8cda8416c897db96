"""The one list of PACEShop / PACEJudge values the project chose because our copy of seed 000 lost
them or never gave them (issue 15: "each project choice where the copy lost the paper's value is
listed in one place the notebooks read"). Notebooks 10 and 30 show it as ``paceshop_project_choices``.

Each entry quotes the paper's words, says what our copy lacks, what the code does instead and where
the value lives, so a user who has the paper's value knows what to change.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Choice:
    item: str
    paper: str  # the paper's words (seed 000, section)
    missing: str  # what our copy does not give
    ours: str  # what the code does
    where: str  # the module / parameter holding it


CHOICES: tuple[Choice, ...] = (
    Choice(
        "tier-4 quads",
        '"Quad-defect — 4 locations — 4 curated quads covering all 4 component groups" (Table 17); '
        '"enumerated in pmsb.faults of the released benchmark code" (B.9)',
        "the four quads are in the paper's released code, not in our copy",
        "four quads of our own covering every group and every family at least once",
        "core.taxonomy.CURATED_QUADS",
    ),
    Choice(
        "category edits (PREF_CONFLICT, INTENT_DRIFT)",
        '"replace the first product category ... Location: productCategoryList[0]" and tiers composed '
        '"which avoids interactions between overview-modifying edits and category-modifying edits '
        '(e.g., bolded-category alignment)" (B.9)',
        "whether the bold span and category_search_queries[0] change with the category",
        "mirrored by default (Table 26: the overview \"includes a meaningless 'Conflict Pick' "
        "category\"; stealth 34 % vs the paper's 35.1 %); the literal reading is built alongside and "
        "compared in notebooks 10 and 30",
        "paceshop.category_edit, paceshop.compare_category_readings; paceshop/defects.py",
    ),
    Choice(
        "PREF_CONFLICT label",
        "\"a label that contradicts the persona's first hard constraint (e.g., leather handbags for a "
        'persona with avoid_leather)" (B.9)',
        "the label list; Table 26's released records show a placeholder 'Conflict Pick'",
        "the constraint's conflict_label (e.g. 'Leather Bags'), else an avoided brand, else a budget "
        "contradiction",
        "core.taxonomy.CONSTRAINTS, paceshop/defects.py",
    ),
    Choice(
        "INTENT_DRIFT pool",
        '"an unrelated category drawn from a fixed off-intent pool" (B.9)',
        "the pool",
        "20 labels of our own (≤ 15 chars)",
        "paceshop/defects.py OFF_INTENT_POOL",
    ),
    Choice(
        "fabricated history and claims",
        "\"e.g., 'Given their Dyson Airwrap, …'\"; \"e.g., 'It also highlights solar charging support.'\" (B.9)",
        "the lists beyond one example each",
        "10 history items and 8 claims of our own",
        "paceshop/defects.py FABRICATED_HISTORY, FABRICATED_CLAIMS",
    ),
    Choice(
        "UNSUPPORTED_CLAIM overview length",
        "Table 26: \"Overview text is truncated mid-word ('highli')\"",
        "whether the released code truncates the overview to 350 characters after the edit",
        "the overview is not truncated (an edit past 350 characters fails overview_length)",
        "paceshop/defects.py unsupported_claim",
    ),
    Choice(
        "raw-v1 personas",
        '"Persona pool of 1200: 200 raw-v1 plus 1000 behavior-seeded synthetic personas" (Table 16); '
        '"Merge 200 public v1 personas with 1,000 behavior-seeded synthetic personas" (B.2)',
        "the 200 public v1 personas, and how they differ from the synthetic ones",
        "all 1,200 are generated the same way; the first 200 carry the id style and origin label "
        "'raw-v1' only",
        "paceshop/personas.py build_personas",
    ),
    Choice(
        "contrary persona values",
        '"Each swap flips one axis ... to a value drawn from the 1,200-persona pool that directly '
        "contradicts an attestation\" (Table 27: 'luxury finishes', 'heavy-duty durability', 'no Wi-Fi devices')",
        "the pool's full vocabulary of such values and how many personas hold them",
        "25 % of the pool holds one contrary attribute preference from a 14-value list",
        "paceshop/personas.py CONTRARY_ATTRIBUTE, CONTRARY_SHARE",
    ),
    Choice(
        "brand swaps",
        'PS-ex-02 "brand_likes=[Kindle, Fire TV]; brand_avoids=[Ecco Press]", PS-ex-07 '
        '"brand_likes=[Nexpak] -> brand_avoids=[Nexpak]" (Table 27)',
        "what is attested when the response cites no liked brand",
        "a liked brand first; else a cited product's brand that some pool persona names",
        "paceshop/swaps.py",
    ),
    Choice(
        "swap axis balance",
        '"the 680-record held-out persona-swap slice" (Table 24) over four axes (Table 5)',
        "how many swaps each axis has",
        "one swap per test GOOD record, axes assigned most-constrained first to the least-used "
        "feasible axis (counts in paceshop_swap_balance)",
        "paceshop/swaps.py select_swaps",
    ),
    Choice(
        "S2 slice",
        '"the 100-record cross-field defect subset (XCOMP_MISMATCH, INTENT_DRIFT, REDUNDANCY)" (Table 25)',
        "how the 100 records were drawn",
        "every single-defect test BAD of those families",
        "metrics/pace/scenarios.py s2_mask",
    ),
    Choice(
        "S_swap and G(q, p)",
        '"S_swap = Σ_{a∈A_rel} w_a Δ_a − λ Σ_{a∈A_inv} w_a Δ_a"; "G(q,p) = H_gen(f(q,∅)) − '
        'H_pers(f(q,p))" (D.2)',
        "the weights w_a, λ, the distance Δ_a, the axis sets and H",
        "w_a = 1, λ = 1, Δ_a = |axis score difference| / 4 on the 1–5 scale; A_rel = persona_alignment, "
        "A_inv = the other three axes; H = the judge's overall quality",
        "metrics/pace/alignment.py",
    ),
    Choice(
        "L4 cross-generator slice",
        '"50 shared held-out inputs across 3 generator families" (Table 16)',
        "which generators, and how a small local model meets the contract",
        "the offline generator plus the backbones named in paceshop.l4_generators, each with its contract "
        "variant: b9 (B.9 prompt and plain contract) or b9_grammar (the same prompt; B.9's budgets as a "
        "llama.cpp decoding grammar, for small local models) or b9_grammar_labels_first (ours: that grammar "
        "with the labels and search queries before the overview, one added sentence)",
        "paceshop.l4_generators, paceshop.l4_inputs; paceshop/slices.py",
    ),
    Choice(
        "L5 real-assistant slice",
        '"100 normalized real-assistant outputs stored with raw originals preserved; persona claims '
        'withheld for this slice when persona context is unavailable" (Table 16)',
        "the assistant, its raw output format and the 100 outputs",
        "a relaxed-schema importer for JSON/JSONL outputs of any assistant; a fixture of our own in that "
        "schema shows it (no real assistant's outputs ship with the project)",
        "paceshop.l5_outputs; paceshop/relaxed.py",
    ),
    Choice(
        "Table 26 rows",
        '"Ten concrete failure cases" (Table 26 caption)',
        "our copy holds 8 of the 10 rows",
        "our table shows up to 10 records from our run table",
        "metrics/pace/examples.py",
    ),
    Choice(
        "Table 24 prompts",
        '"Full per-backbone persona-source diagnosis by conflict axis" (Table 24)',
        "our copy lists G-Eval, Persona-aware and PACEJudge only (no Scalar)",
        "our Table 24 lists every protocol in the run table",
        "metrics/pace/examples.py",
    ),
)


def choices_table():
    """The list as a DataFrame (one row per choice)."""
    import pandas as pd

    return pd.DataFrame([asdict(c) for c in CHOICES]).set_index("item")
