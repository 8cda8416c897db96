"""General statistics for agreement studies and judge meta-evaluation (definitions cite the papers that use them).

- :mod:`~shopbench.stats.agreement` — Krippendorff's α (nominal), unanimity, Cohen's κ, majority vote;
- :mod:`~shopbench.stats.bootstrap` — a vectorised, seeded percentile bootstrap over units;
- :mod:`~shopbench.stats.tests` — permutation test, binomial position balance, Holm correction;
- :mod:`~shopbench.stats.poststrat` — post-stratified accuracy.

The PADMÉ human-study analysis built on them (Section 5.2, App. C–E) is :mod:`shopbench.padme.study`
(issue 27: a paper's study lives with its paper).

The bootstrap benchmark is :mod:`shopbench.benchmarks.agreement`.

Names are imported lazily (``from shopbench.stats import bootstrap_mean`` loads only that module), so
``import shopbench.stats.bootstrap`` stays light.
"""

from __future__ import annotations

from .._lazy import lazy_exports

_EXPORTS = {
    ".agreement": ["krippendorff_alpha", "alpha_nominal", "alpha_from_coincidences", "bootstrap_alpha", "unanimous",
                   "majority_vote", "agreement_rate", "cohen_kappa", "pairwise_agreement", "pairwise_table"],
    ".bootstrap": ["BootstrapResult", "bootstrap", "bootstrap_mean", "bootstrap_ratio", "percentile_ci",
                   "resample_counts"],
    ".tests": ["permutation_test", "position_balance", "holm", "minimum_detectable_difference"],
    ".poststrat": ["poststratified_mean", "poststratified_table"],
}  # fmt: skip
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
