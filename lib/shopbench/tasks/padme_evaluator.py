"""Task ``padme_evaluator`` (issue 26 §1): the model is a pointwise PADMÉ evaluator (seed 003 §3.2, H.5).

samples: trajectory pairs, one of

- ``-T pairs=FILE``: a ``pairs.jsonl`` of :class:`shopbench.padme.types.Pair` (what notebook 40 and
  :func:`shopbench.padme.dataset.write_pairs_dataset` write; a folder holding one works too); the
  label is the synthetic one (x⁺ is the better-steered side); only kept pairs unless ``-T kept_only=false``;
- ``-T recorded=DIR``: recorded tau-bench conversations (``../shared/data/tau_bench_airline_trajectories``):
  every pair of conversations of one task with different environment rewards (notebook 50's real-data
  check), criterion ``task_resolution``, the label from the reward;
- neither: the pairs notebook 40 built for ``-T profile`` (``outputs/<profile>/data/padme/dataset``).

The PADMÉ human-study release (``../shared/data/padme_human_study``) holds pair ids, criteria and the
annotators' choices but not the trajectories, so a pointwise evaluator has nothing to read there.

subject → scorers → metrics: the H.5 prompt (or ``-T prompt=FILE``: the same slots ``{criterion_name}``,
``{criterion_description}``, ``{prompt}``, ``{response}``, checked before any call) asked of the model
for each trajectory of the first ``--limit`` pairs of the seeded stratified order, ``--epochs`` runs each
(:func:`shopbench.judges.padme.sweep.score_pairs_anytime`, notebook 50's path, with no time budget);
then :func:`shopbench.metrics.meta_eval.pair_outcomes` and ``evaluator_summary`` (synthetic label) or
``reward_label_accuracy`` (reward label; CIs resample tasks): pairwise accuracy with its bootstrap CI
(ties and parse failures incorrect), accuracy over parsed pairs with its CI, leniency, per-item score
SD, tie rate, distinct scores, parse-failure rates.
"""

from __future__ import annotations

import hashlib
import string
from pathlib import Path
from typing import Any

from ..errors import InputError, read_text
from .registry import Param, task

PROMPT_SLOTS = ("criterion_name", "criterion_description", "prompt", "response")


@task("padme_evaluator", "the model scores single PADME trajectories in [0, 1]; pairwise accuracy, leniency, "
      "ties, distinct scores", params=[
    Param("pairs", "path", None, "pairs.jsonl (padme Pair per line) or its folder"),
    Param("recorded", "path", None, "folder or file of recorded tau-bench conversations (reward-labelled pairs)"),
    Param("profile", "str", "smoke", "profile whose notebook-40 pairs are used when neither pairs nor recorded is given"),
    Param("prompt", "path", None, "evaluator prompt file replacing prompts/padme_evaluator.txt (slots: "
          + ", ".join("{" + s + "}" for s in PROMPT_SLOTS) + ")"),
    Param("criteria", "path", None, "criteria JSON/YAML ([{name, description}]) for pairs on other criteria"),
    Param("kept_only", "bool", True, "score only the pairs the filter cascade kept"),
    Param("n_boot", "int", 1000, "bootstrap resamples per CI"),
    Param("max_tokens", "int", 1024, "completion token cap per call"),
])  # fmt: skip
def padme_evaluator(**params: Any) -> PadmeEvaluatorTask:
    return PadmeEvaluatorTask(**params)


def read_prompt_file(path: str | Path):
    """A user's evaluator prompt: header comments stripped, every required slot present and no other
    ``{slot}`` (literal braces are written ``{{ }}``); a bad file is one :class:`InputError`."""
    from ..prompts import Prompt, strip_header

    p = Path(path).expanduser()
    text = read_text(p, "prompt file")
    body = strip_header(text)
    try:
        found = {f for _, f, _, _ in string.Formatter().parse(body) if f is not None}
    except ValueError as e:
        raise InputError(f"not a prompt template ({e})", file=p, field="prompt",
                         fix="write literal braces as {{ and }}") from None  # fmt: skip
    missing = [s for s in PROMPT_SLOTS if s not in found]
    unknown = sorted(f for f in found if f not in PROMPT_SLOTS)
    if missing:
        raise InputError(f"the prompt lacks the slot(s) {', '.join('{' + s + '}' for s in missing)}", file=p,
                         field="prompt", fix="an evaluator prompt must hold " + ", ".join("{" + s + "}" for s in PROMPT_SLOTS))  # fmt: skip
    if unknown:
        raise InputError(f"the prompt holds unknown slot(s) {', '.join('{' + s + '}' for s in unknown)}", file=p,
                         field="prompt", fix="use only " + ", ".join("{" + s + "}" for s in PROMPT_SLOTS)
                         + "; write literal braces as {{ and }}")  # fmt: skip
    return Prompt(p.stem, body, hashlib.sha256(text.encode()).hexdigest())


class PadmeEvaluatorTask:
    name = "padme_evaluator"

    def __init__(self, pairs: str | None, recorded: str | None, profile: str, prompt: str | None,
                 criteria: str | None, kept_only: bool, n_boot: int, max_tokens: int):  # fmt: skip
        if pairs is not None and recorded is not None:
            raise InputError("give -T pairs=FILE or -T recorded=DIR, not both", field="pairs")
        if n_boot < 0 or max_tokens < 1:
            raise InputError(f"-T n_boot={n_boot} / max_tokens={max_tokens}: n_boot ≥ 0 and max_tokens ≥ 1")
        self.pairs_path, self.recorded_path, self.profile = pairs, recorded, profile
        self.criteria_path, self.kept_only, self.n_boot, self.max_tokens = (
            criteria,
            kept_only,
            n_boot,
            max_tokens,
        )
        self.template = read_prompt_file(prompt) if prompt is not None else None
        self.units: list = []
        self.pairs_df: Any = None
        self.reward_label = False
        self.data_source = ""
        self._criteria: dict = {}

    # ---- samples --------------------------------------------------------------------------------
    def _criteria_map(self) -> dict:
        from ..padme.criteria import CriteriaError, load_criteria

        try:
            crit = load_criteria(
                None if self.criteria_path is None else str(Path(self.criteria_path).expanduser())
            )
        except (CriteriaError, FileNotFoundError) as e:
            raise InputError(str(e), field="criteria", fix="a list of {name, description} objects") from None
        return {c.name: c for c in crit}

    def prepare(self, *, limit: int | None, seed: int) -> None:
        from ..judges.padme.sweep import order_pair_units, pair_units, reward_pair_units
        from ..metrics import meta_eval as ME

        self._criteria = self._criteria_map()
        if self.recorded_path is not None:
            from ..padme.sources.recorded import load_recorded

            p = Path(self.recorded_path).expanduser()
            if not p.exists():
                raise InputError("no such folder or file of recorded conversations", file=p, field="recorded",
                                 fix="give the tau-bench results folder, e.g. ../shared/data/tau_bench_airline_trajectories")  # fmt: skip
            rollouts = load_recorded(p)
            df = ME.reward_pairs(rollouts, criterion="task_resolution")
            if df.empty:
                raise InputError("no task has conversations with different rewards: no labelled pair", file=p)
            if "task_resolution" not in self._criteria:
                raise InputError("reward pairs are judged on task_resolution, which the criteria lack",
                                 field="criteria", fix="add a task_resolution criterion or drop -T criteria")  # fmt: skip
            units = reward_pair_units(df, rollouts)
            self.reward_label = True
            self.data_source = f"recorded conversations {p} (label: environment reward)"
        else:
            pairs = self._read_pairs()
            if self.kept_only:
                pairs = [q for q in pairs if q.kept]
                if not pairs:
                    raise InputError("no pair was kept by the filter cascade", field="kept_only",
                                     fix="score every pair with -T kept_only=false")  # fmt: skip
            unknown = sorted({q.criterion for q in pairs} - set(self._criteria))
            if unknown:
                raise InputError(f"pairs on criteria {unknown} that the criteria list lacks", field="criterion",
                                 fix="give their descriptions with -T criteria=FILE")  # fmt: skip
            df = ME.pairs_frame(pairs)
            units = pair_units(pairs)
        self.units = order_pair_units(units, seed, limit)
        chosen = {u.pair_id for u in self.units}
        self.pairs_df = df[df["pair_id"].isin(chosen)].reset_index(drop=True)

    def _read_pairs(self) -> list:
        from ..padme.dataset import DatasetError, read_pairs_dataset
        from ..paths import outputs_root

        if self.pairs_path is not None:
            p = Path(self.pairs_path).expanduser()
            self.data_source = f"pairs file {p} (label: synthetic, the better-steered side)"
        else:
            p = outputs_root() / Path(self.profile).stem / "data" / "padme" / "dataset"
            self.data_source = f"notebook 40 pairs of profile {self.profile} ({p})"
            if not (p / "pairs.jsonl").exists():
                raise InputError("no PADME pairs to score", file=p, field="pairs",
                                 fix="give -T pairs=FILE (a pairs.jsonl) or -T recorded=DIR (tau-bench "
                                     f"conversations), or build them with notebook 40 of profile {self.profile}")  # fmt: skip
        if not p.exists():
            raise InputError(
                "no such pairs file", file=p, field="pairs", fix="give a pairs.jsonl (-T pairs=FILE)"
            )
        try:
            return read_pairs_dataset(p)
        except DatasetError:  # names file, line, field and the fix (schema padme-pair, issue 26 §3)
            raise
        except (ValueError, AttributeError) as e:
            raise InputError(f"a pair is malformed ({e})", file=p, fix="one padme Pair per line") from None

    @property
    def n_samples(self) -> int:
        return len(self.units)

    def prompts(self) -> dict[str, str]:
        if self.template is not None:
            return {self.template.name: self.template.sha256}
        from ..judges.padme.evaluators import PROMPT_NAME
        from ..prompts import read_prompt

        return {
            PROMPT_NAME: hashlib.sha256(read_prompt(PROMPT_NAME, "task padme_evaluator").encode()).hexdigest()
        }

    def _criterion_of(self, rollout):
        c = self._criteria.get(rollout.criterion) if rollout.criterion else None
        if c is None:
            c = self._criteria["task_resolution"] if self.reward_label else None
        if c is None:
            raise InputError(f"trajectory {rollout.rollout_id}: criterion {rollout.criterion!r} is not known",
                             field="criterion", fix="give its description with -T criteria=FILE")  # fmt: skip
        return c

    # ---- subject -------------------------------------------------------------------------------
    def _spec(self, backbone):
        from ..judges.padme.roster import evaluator_spec

        return evaluator_spec({"name": backbone.name, "backbone": backbone.name})

    def calls(self, gateway, backbone, *, epochs: int) -> list:
        from ..judges.padme.sweep import _distinct_rollouts

        judge = self._spec(backbone).judge(gateway, "preview", self.max_tokens, template=self.template)
        rolls = _distinct_rollouts(x for u in self.units for x in (u.worse, u.better))
        return judge.calls([(r, self._criterion_of(r), k) for k in range(epochs) for r in rolls])

    def run(self, gateway, backbone, *, epochs: int, run_id: str):
        """Notebook 50's scoring (:func:`~shopbench.judges.padme.sweep.score_pairs_anytime`, no time
        budget) and :func:`~shopbench.metrics.meta_eval.pair_outcomes`: one row per pair and epoch."""
        import pandas as pd

        from ..judges.padme.sweep import score_pairs_anytime
        from ..metrics import meta_eval as ME

        spec = self._spec(backbone)
        scores, res = score_pairs_anytime(self.units, self._criterion_of, spec, gateway=gateway, budget_s=None,
                                          runs=epochs, run_id=run_id, max_tokens=self.max_tokens,
                                          template=self.template)  # fmt: skip
        # one order however the anytime walk batched the pairs (a resumed run reads them in other batches),
        # so sums over scores are the same to the last bit
        scores = scores.sort_values(["rollout_id", "run"], kind="stable").reset_index(drop=True)
        self.scores = scores
        out = ME.pair_outcomes(self.pairs_df, scores)
        st = scores.set_index(["rollout_id", "run"])
        status = st["status"].to_dict()
        err = (st["error"].fillna(st["parse_error"])).to_dict()
        why = st["reasoning"].to_dict()

        def unit(w, b, r):
            s = (status.get((w, r)), status.get((b, r)))
            return "error" if "error" in s else ("parse_error" if "parse_error" in s else "ok")

        out.insert(0, "sample_id", out["pair_id"])
        out.insert(1, "epoch", out["run"])
        out["unit_status"] = [
            unit(w, b, r) for w, b, r in zip(out.worse_id, out.better_id, out.run, strict=True)
        ]
        out["unit_error"] = [err.get((w, r)) or err.get((b, r)) for w, b, r in zip(out.worse_id, out.better_id, out.run,
                                                                                  strict=True)]  # fmt: skip
        out["reasoning_worse"] = [why.get((w, r)) for w, r in zip(out.worse_id, out.run, strict=True)]
        out["reasoning_better"] = [why.get((b, r)) for b, r in zip(out.better_id, out.run, strict=True)]
        return pd.DataFrame(out)

    # ---- metrics -------------------------------------------------------------------------------
    def metrics(self, rows, *, seed: int) -> dict:
        from ..metrics import meta_eval as ME

        if self.reward_label:
            s = ME.reward_label_accuracy(self.pairs_df, self.scores, n_boot=self.n_boot, seed=seed)
        else:
            s = ME.evaluator_summary(rows.drop(columns=["sample_id", "epoch", "unit_status", "unit_error",
                                                        "reasoning_worse", "reasoning_better"]),
                                     self.scores, n_boot=self.n_boot, seed=seed)  # fmt: skip
        r = s.iloc[0]

        def num(x):
            return None if x is None or x != x else float(x)

        head = {
            "accuracy": {"estimate": num(r.accuracy), "ci_low": num(r.accuracy_ci_low),
                         "ci_high": num(r.accuracy_ci_high), "sd_over_epochs": num(r.accuracy_sd)},
            "accuracy_parsed": {"estimate": num(r.accuracy_parsed), "ci_low": num(r.accuracy_parsed_ci_low),
                                "ci_high": num(r.accuracy_parsed_ci_high)},
            "leniency": {"estimate": num(r.leniency)}, "score_sd": {"estimate": num(r.score_sd)},
            "tie_rate": {"estimate": num(r.tie_rate)}, "distinct_scores": {"estimate": num(r.distinct_scores)},
            "parse_failure_rate": {"estimate": num(r.parse_failure_rate)},
            "pair_parse_failure_rate": {"estimate": num(r.pair_parse_failure_rate)},
        }  # fmt: skip
        return {"headline": head, "n_pairs": int(r.n_pairs), "n_epochs": int(r.n_runs),
                "label": "environment reward" if self.reward_label else "synthetic (better-steered side)",
                "ci": "bootstrap 95%, resampling " + ("tasks" if self.reward_label else "pairs"),
                "n_boot": self.n_boot}  # fmt: skip
