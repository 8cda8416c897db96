"""General statistics for agreement studies and judge meta-evaluation (definitions cite the papers that use them).

- :mod:`~shopbench.stats.agreement` — Krippendorff's α (nominal), unanimity, Cohen's κ, majority vote;
- :mod:`~shopbench.stats.bootstrap` — a vectorised, seeded percentile bootstrap over units;
- :mod:`~shopbench.stats.tests` — permutation test, binomial position balance, Holm correction;
- :mod:`~shopbench.stats.poststrat` — post-stratified accuracy.

The PADMÉ human-study analysis built on them (Section 5.2, App. C–E) is :mod:`shopbench.padme.study`
(issue 27: a paper's study lives with its paper).

How much of a score is noise (issue 29, item 2; docs/NOISE.md):

- :mod:`~shopbench.stats.passk` — τ-bench's pass^k and pass@k over repeated trials, CI over tasks;
- :mod:`~shopbench.stats.clustered` — cluster-robust CI of a mean, naive CI and design effect (Miller);
- :mod:`~shopbench.stats.variance` — task / agent / user / judge variance shares on a factorial repeat design;
- :mod:`~shopbench.stats.paired` — paired difference of two subjects on shared trials, with its power;
- :mod:`~shopbench.stats.power` — minimum detectable effect and tasks × repeats needed (Miller §5).

The bootstrap benchmark is :mod:`shopbench.benchmarks.agreement`.

Names are imported lazily (``from shopbench.stats import bootstrap_mean`` loads only that module), so
``import shopbench.stats.bootstrap`` stays light.
"""

from __future__ import annotations

from .._lazy import lazy_exports

_EXPORTS = {
    ".agreement": ["krippendorff_alpha", "alpha_nominal", "alpha_from_coincidences", "bootstrap_alpha", "unanimous",
                   "majority_vote", "agreement_rate", "cohen_kappa", "pairwise_agreement"],
    ".bootstrap": ["BootstrapResult", "bootstrap", "bootstrap_mean", "bootstrap_ratio", "percentile_ci",
                   "resample_counts"],
    ".tests": ["permutation_test", "position_balance", "holm", "minimum_detectable_difference"],
    ".poststrat": ["poststratified_mean", "poststratified_table"],
    ".passk": ["pass_hat_k", "pass_at_k", "success_counts"],
    ".clustered": ["ClusteredMean", "clustered_mean", "clustered_mean_arrays", "clustered_means"],
    ".variance": ["variance_components", "one_way_components"],
    ".paired": ["PairedComparison", "paired_difference", "paired_design_table"],
    ".power": ["minimum_detectable_effect", "tasks_needed", "repeats_needed", "design_table"],
}  # fmt: skip
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
