"""Where a profile's results are, and reading them (never writing, never calling a model).

The explorer reads what the pipeline already wrote under ``outputs/<profile>/data/``:

=====================================  ==========================  =============================
file                                   written by                  read as
=====================================  ==========================  =============================
``judging/run_table.parquet``          20_pace_judge_sweep         :attr:`Results.run_table`
``paceshop/`` (records, subsets.json)  10_paceshop_build           :attr:`Results.records`
``shopsim/trajectories/*.jsonl``       80_shop_agents              :attr:`Results.trials`
``shopsim/scores.parquet``             80_shop_agents              :attr:`Results.shop_scores`
``padme/dataset/``                     40_padme_synthesis          :attr:`Results.padme_pairs`
``padme/evaluator_scores.parquet``     50_padme_meta_eval          :attr:`Results.evaluator_scores`
=====================================  ==========================  =============================

Each part is loaded on first use and kept. A part whose file is missing raises
:class:`MissingResults` (an :class:`~shopbench.errors.InputError` naming the file and the notebook
that writes it); :meth:`Results.available` says which parts are there without raising.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..paths import outputs_root

# part -> (path under data/, the notebook that writes it)
PARTS: dict[str, tuple[str, str]] = {
    "run_table": ("judging/run_table.parquet", "20_pace_judge_sweep"),
    "records": ("paceshop/manifest.json", "10_paceshop_build"),
    "subsets": ("paceshop/subsets.json", "10_paceshop_build"),
    "trials": ("shopsim/trajectories", "80_shop_agents"),
    "shop_scores": ("shopsim/scores.parquet", "80_shop_agents"),
    "padme_pairs": ("padme/dataset", "40_padme_synthesis"),
    "evaluator_scores": ("padme/evaluator_scores.parquet", "50_padme_meta_eval"),
}


class MissingResults(InputError):
    """A part of the results the explorer needs has not been written (yet) for this profile."""


class Results:
    """The results of one profile, read lazily from ``<root>/data``."""

    def __init__(self, root: str | Path, profile: str | None = None):
        self.root = Path(root)
        self.profile = profile or self.root.name
        if not self.root.is_dir():
            raise MissingResults(
                f"no results folder for profile {self.profile!r}",
                file=self.root,
                fix=f"run the pipeline first: python -m shopbench.pipeline run --profile {self.profile} "
                "(or pass the outputs/<profile> folder)",
            )

    def __repr__(self) -> str:
        have = [k for k, v in self.available().items() if v]
        return f"Results({self.profile!r}, {str(self.root)!r}, parts={have})"

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    def path(self, part: str) -> Path:
        return self.data_dir / PARTS[part][0]

    def available(self) -> dict[str, bool]:
        """Which parts exist on disk (nothing is read)."""
        out = {}
        for part in PARTS:
            p = self.path(part)
            out[part] = p.is_dir() and any(p.iterdir()) if part in ("trials", "padme_pairs") else p.exists()
        return out

    def _need(self, part: str) -> Path:
        p = self.path(part)
        if not self.available()[part]:
            rel, nb = PARTS[part]
            raise MissingResults(
                f"the {part.replace('_', ' ')} of profile {self.profile!r} are not there",
                file=p,
                fix=f"run notebook {nb} for this profile (python -m shopbench.pipeline run --profile "
                f"{self.profile} --only {nb}, with the notebooks it needs)",
            )
        return p

    # ---- PACEShop ----------------------------------------------------------------------------------
    @functools.cached_property
    def run_table(self):
        import pandas as pd

        return pd.read_parquet(self._need("run_table"))

    @functools.cached_property
    def records(self) -> dict[str, Any]:
        """record id -> :class:`~shopbench.core.Record` (every split)."""
        from ..paceshop.build import load_records

        return {r.record_id: r for r in load_records(self._need("records").parent)}

    @functools.cached_property
    def subsets(self) -> dict:
        return json.loads(self._need("subsets").read_text(encoding="utf-8"))

    # ---- shop trials ----------------------------------------------------------------------------------
    @functools.cached_property
    def trials(self) -> list:
        """Every finished trial of every agent (:class:`~shopbench.shopsim.types.TrialRecord`)."""
        from .shop import read_trials

        return read_trials(self._need("trials"))

    @functools.cached_property
    def shop_scores(self):
        import pandas as pd

        return pd.read_parquet(self._need("shop_scores"))

    # ---- PADMÉ ----------------------------------------------------------------------------------------
    @functools.cached_property
    def padme_pairs(self) -> list:
        from ..padme.dataset import read_pairs_dataset

        return read_pairs_dataset(self._need("padme_pairs"))

    @functools.cached_property
    def evaluator_scores(self):
        import pandas as pd

        return pd.read_parquet(self._need("evaluator_scores"))


def open_results(profile: str | Path = "smoke") -> Results:
    """A profile's results: a profile name or YAML file (its ``outputs/<profile>`` folder,
    ``$SHOPBENCH_OUTPUTS`` honoured) or the path of an ``outputs/<profile>`` folder itself."""
    p = Path(profile)
    if p.is_dir() and (p / "data").is_dir():
        return Results(p)
    from ..config import load_profile

    try:
        prof = load_profile(str(profile))
    except InputError:
        raise
    except Exception:  # not a profile we can validate here: its outputs folder by name
        name = Path(str(profile)).stem if str(profile).endswith((".yaml", ".yml")) else str(profile)
        return Results(outputs_root() / name, name)
    return Results(prof.out, prof.name)


__all__ = ["PARTS", "MissingResults", "Results", "open_results"]
