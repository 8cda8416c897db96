"""The PADMÉ values the project chose where seed 003 gives none or our copy lost it, in one place
(issue 15: "each project choice where the copy lost the paper's value is listed in one place that the
notebooks read"). Notebook 50 shows them as ``padme_project_choices``.

Our copy of the paper (``shared/seeds/003_*.txt``) was extracted from HTML: Tables 1, 4, 5, 7–10,
13, 14, 16, 17 and 19–21 kept their captions only, and the text leaves several settings of its
pipeline and statistics unsaid. Each :class:`Choice` below quotes what the text does say, gives our
value, says whether the text pins it (``status``) and names where the code reads it (``where``:
``module:attribute``, a profile default as ``shopbench.profiles.padme:PadmeParams.<key>``). The
constants defined here are read by the modules named (``metrics.meta_eval.pairwise``,
``padme.experiment``, ``padme.evaluators``, ``padme.steering``, ``padme.filters``); the profile
defaults stay in :class:`shopbench.profiles.padme.PadmeParams` (the one validated source of a run's
settings) and are listed here as they are. To run with other values, edit them where ``where`` says.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "BOOTSTRAP_CI", "CHOICES", "Choice", "FILTER_JUDGE_NOISE", "HOLM_ALPHA", "MAX_STEERING_CHARS", "MAX_TOOL_CHARS",
    "NOISY_EVALUATOR_SD", "OURS", "TABLE4_SEVENTH_PROPERTY", "choices_table", "resolve",
]  # fmt: skip

OURS = "our choice; the paper gives no value or our copy lost it"

# ---- the values the modules read from here --------------------------------------------------------
TABLE4_SEVENTH_PROPERTY = "score_sd"
"""Table 4's seventh property (the text names six): average score SD, a guess."""
HOLM_ALPHA = 0.05
"""The family-wise level at which Table 4 marks a Holm-adjusted p-value significant."""
BOOTSTRAP_CI = 0.95
"""The central coverage of every bootstrap interval of the meta-evaluation (Table 2 pins 95 %)."""
FILTER_JUDGE_NOISE: dict[str, float] = {"J1": 0.1, "J2": 0.05}
"""The offline filter judges (heuristic stand-ins for J1 and J2): the chance each flips its choice."""
NOISY_EVALUATOR_SD = 0.1
"""The ``heuristic-noisy`` reference evaluator: SD of the Gaussian noise added per (rollout, run)."""
MAX_STEERING_CHARS = 1500
"""The longest steering instruction WriteSteer may return (its JSON contract's ``maxLength``)."""
MAX_TOOL_CHARS = 2000
"""A tool result is clipped to this many characters where a filter judge sees a trajectory."""


@dataclass(frozen=True)
class Choice:
    item: str  # what the value sets
    value: Any  # our value, as the code holds it
    paper: str  # the paper's words (seed 003, section), quoted
    where: str  # "module:attribute" the code reads (first entry is checked against ``value``)
    status: str = OURS  # OURS, or "the paper's value (<section>)" when the text pins it
    note: str = ""  # what the code does, where it is more than the value


_PP = "shopbench.profiles.padme:PadmeParams"

CHOICES: tuple[Choice, ...] = (
    Choice("Table 4's seventh property", TABLE4_SEVENTH_PROPERTY,
           '"Table 4: Seven evaluator properties against accuracy" (§5.3); the text names six: tie rate, '
           'distinct score count, mean score (leniency), total and active parameters, "Reasoning is a binary '
           'factor"; the rows are lost in our copy',
           "shopbench.metrics.meta_eval.pairwise:TABLE4_PROPERTIES",
           note="average score SD, marked 'guessed' in the source column of every Table 4"),
    Choice("Table 4 significance level (Holm)", HOLM_ALPHA,
           '"p_holm [...] is the Holm-Bonferroni corrected p-value across the seven tests, and bolded where it '
           'indicates significance" (Table 4); no level is given',
           "shopbench.metrics.meta_eval.pairwise:HOLM_ALPHA"),
    Choice("bootstrap interval coverage", BOOTSTRAP_CI,
           '"Synthetic label accuracy reports [...] with bootstrap 95% confidence intervals in '
           'brackets" (Table 2)',
           "shopbench.metrics.meta_eval.pairwise:BOOTSTRAP_CI", status="the paper's value (Table 2 caption)"),
    Choice("bootstrap resamples", 1000,
           '"bootstrap 95% confidence intervals" (Table 2); the number of resamples is not given',
           f"{_PP}.n_boot"),
    Choice("retry budget R", 2,
           '"We set R=2 [...] in our experiment" (§3.1)', f"{_PP}.retries", status="the paper's value (§3.1)"),
    Choice("evaluator runs", 3,
           '"We evaluate 25 LMs as evaluators [...] on all 1,000 kept pairs across 3 runs" (§4)',
           f"{_PP}.evaluator_runs", status="the paper's value (§4)",
           note="padme.llm_evaluator_runs may lower it for local models (the paper profile runs 1)"),
    Choice("tasks per source", 40,
           '"The base version of [...]-bench comprises 375 tasks across four task domains [...] The '
           'task-criterion matrix contains 1,125 evaluation cells" (§4)',
           f"{_PP}.tasks_per_source",
           note="default 40; profiles set 6 (smoke), 120 (paper), 188 (full: 2 sources x 188 x 3 = 1,128 cells)"),
    Choice("LM evaluator pairs per run", 12,
           '"We evaluate 25 LMs as evaluators [...] on all 1,000 kept pairs" (§4)',
           f"{_PP}.llm_evaluator_pairs",
           note="an anytime sweep over the kept pairs in a seeded stratified order; null = every pair"),
    Choice("evaluator max tokens", 512,
           '"Model evaluations run under vendor-default reasoning budgets and at temperature 0" (§4)',
           f"{_PP}.evaluator_max_tokens"),
    Choice("LM filter judge max tokens", 1024,
           '"Filtering employs K=2 [...] judges" (§4); no output budget is given',
           "shopbench.profiles.padme:LLMJudgeSpec.max_tokens"),
    Choice("offline filter judges J1, J2 (flip chance)", FILTER_JUDGE_NOISE,
           '"Filtering employs K=2 [...] judges (J1=nemotron-lightning-3.5 [...] and J2=gpt-oss-120b [...])" (§4)',
           "shopbench.padme.experiment:DEFAULT_JUDGES",
           note="without padme.filter_judges: two heuristic stand-ins (known-answer), ties to slot 1; "
                "the models are named in params/full.yaml"),
    Choice("offline steering", "scripted",
           '"Steering instructions are generated by gpt-oss-120b" (§4); "Two to five sentences each, '
           'addressed to the agent as "you"" (H.2)', f"{_PP}.steering",
           note="fixed per-criterion instructions (simulated, known-answer); a backbone runs WriteSteer (H.2)"),
    Choice("steering instruction length cap (characters)", MAX_STEERING_CHARS,
           '"Two to five sentences each, addressed to the agent as "you"" (H.2); no length in characters',
           "shopbench.padme.steering:MAX_INSTRUCTION_CHARS"),
    Choice("offline agent", "scripted",
           '"We test agent trajectory pairs generated using gpt-oss-20b, gpt-oss-120b, and '
           'nemotron-lightning-3.5, with both rollouts in a pair generated by the same model" (§4)',
           f"{_PP}.agent", note="scripted steered agents (simulated steering, known-answer) unless backbones are listed"),
    Choice("offline user simulator", "scripted",
           '"User interactions are simulated via qwen3-30b-a3b-instruct" (§4)', f"{_PP}.user"),
    Choice("agent model per cell", "seeded balanced round-robin over (criterion, domain, contrast) strata",
           '"because agent assignment is deterministic per cell rather than random, excluding '
           'self-generated pairs confounds underlying trajectory difficulty with evaluator bias" (App. F.2); '
           "the rule is not given", "shopbench.padme.agents:assign_agents"),
    Choice("contrasts when cells are not a multiple of 3", "n // 3 each; the n % 3 extra cells on seeded contrasts",
           '"Each cell randomly selects two distinct steering levels, with the three resulting contrasts [...] '
           'stratified equally across the dataset" (§3.1)', "shopbench.padme.cells:make_cells"),
    Choice("tool-result clip in the judges' view (characters)", MAX_TOOL_CHARS,
           '"Annotators receive the same rendered input as the filtering judges and the evaluators under '
           'test" (App. D.1); no clipping is described', "shopbench.judges.padme.filters:MAX_TOOL_CHARS"),
    Choice("noisy reference evaluator SD", NOISY_EVALUATOR_SD,
           '"We evaluate 25 LMs as evaluators" (§4); the offline roster\'s reference evaluators are ours',
           "shopbench.judges.padme.evaluators:NOISY_SD",
           note="heuristic-noisy = heuristic + N(0, SD) per (rollout, run); a reference, not a model"),
    Choice("permutation shuffles (confidence tests)", 100_000,
           '"Statistical significance (p [...]) is computed via permutation tests over 100,000 shuffles" (Table 13)',
           "shopbench.stats.tests:N_PERM", status="the paper's value (Table 13 caption)"),
)  # fmt: skip


def resolve(where: str) -> Any:
    """The value at ``where`` (``"pkg.module:Attr.sub"``): the attribute chain, where a pydantic model
    class's field gives its default. Raises ``LookupError`` naming the part that is missing."""
    import importlib

    mod_name, _, path = where.partition(":")
    obj: Any = importlib.import_module(mod_name)
    for part in path.split("."):
        fields = getattr(obj, "model_fields", None) if isinstance(obj, type) else None
        if fields is not None and part in fields:
            obj = fields[part].default
        elif hasattr(obj, part):
            obj = getattr(obj, part)
        else:
            raise LookupError(f"{where}: {part!r} is not in {getattr(obj, '__name__', obj)!r}")
    return obj


def choices_table(padme=None):
    """One row per choice: item, our value, status (ours unless the text pins it), what the paper says
    and where the code reads it. Given a run's ``padme`` section (``ctx.params.padme``), a column
    ``this_run`` shows the value the run's profile set for each profile key ("–" for the others)."""
    import pandas as pd

    def show(v: Any) -> str:
        if isinstance(v, dict):
            return ", ".join(f"{k} {x:g}" if isinstance(x, float) else f"{k} {x}" for k, x in v.items())
        if v is None:
            return "unset (see note)"
        return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) and v >= 10_000 else str(v)

    rows = [{"item": c.item, "our_value": show(c.value), "status": c.status, "paper_says": c.paper,
             "where": c.where, "note": c.note or "–"} for c in CHOICES]  # fmt: skip
    df = pd.DataFrame(rows)
    if padme is not None:
        prefix = f"{_PP}."
        df.insert(2, "this_run", [show(getattr(padme, c.where[len(prefix):])) if c.where.startswith(prefix) else "–"
                                  for c in CHOICES])  # fmt: skip
    return df
