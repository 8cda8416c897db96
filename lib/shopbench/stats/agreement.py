"""Inter-annotator agreement: Krippendorff's α (nominal), unanimity, Cohen's κ, majority vote.

Reliability data are a ``raters × units`` array of category codes with ``NaN`` for "this rater did
not rate this unit" (the layout of the ``krippendorff`` package). Definitions follow the PADMÉ paper
(Section 3.2, Section 4 "Human Validation Protocol", Appendix D.2, Table 12):

- Krippendorff's α: "evaluating Krippendorff's α across the human-only panel (a1, a2, a3) yields a
  baseline reliability of +0.350 on unfiltered data" (D.2); for the label, "α is Krippendorff's α for
  the same label-versus-majority decision" (Table 2). Nominal α =
  ``1 − (n−1) · Σ_{c≠k} o_ck / Σ_{c≠k} n_c n_k``, with ``o`` the coincidence matrix of pairable values
  (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability"). Point estimates come from the
  ``krippendorff`` package; :func:`alpha_from_coincidences` is the same formula vectorised over many
  weightings of the units, which the package lacks and the bootstrap needs (tests check both agree).
- Unanimous: "Unanimous indicates a 3–0 vote" (Table 12): every rating of the unit is the same.
- Majority vote: "The majority vote across the three annotators serves as the human reference label
  (maj)" (Section 4). With an even number of ratings a tie has no majority (``NaN``).
- Pairwise: "Lower blocks report pairwise agreement metrics for two-annotator panel subsets"
  (Table 12): raw agreement (share of co-rated units with the same choice), Cohen's κ (scikit-learn's
  ``cohen_kappa_score``) and agreement on the units where both annotators said "certain".
- Agreement between two preference providers (Eq. 5): ``Agr(r, r′; D) = (1/|D|) Σ_{p∈D} 1[ŷ_r(p) = ŷ_r′(p)]``.
"""

from __future__ import annotations

import warnings

import krippendorff
import numpy as np
from sklearn.metrics import cohen_kappa_score

from .bootstrap import BootstrapResult, bootstrap


def _as_float(data) -> np.ndarray:
    a = np.asarray(data, dtype=float)
    if a.ndim != 2:
        raise ValueError(f"reliability data must be raters × units (2-D), got shape {a.shape}")
    return a


def categories_of(data) -> np.ndarray:
    """The distinct non-missing values of ``data``, sorted."""
    a = np.asarray(data, dtype=float)
    return np.unique(a[~np.isnan(a)])


def krippendorff_alpha(data, level: str = "nominal", value_domain=None) -> float:
    """Krippendorff's α of ``raters × units`` data (NaN = missing), from the ``krippendorff`` package.

    Returns NaN when α is undefined (fewer than two pairable values, or a single observed category).
    """
    a = _as_float(data)
    dom = categories_of(a) if value_domain is None else np.asarray(value_domain, dtype=float)
    pairable = (np.sum(~np.isnan(a), axis=0) >= 2).sum()
    if pairable == 0 or (len(dom) < 2 and value_domain is None):
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            return float(krippendorff.alpha(reliability_data=a, value_domain=dom, level_of_measurement=level))
        except ValueError:
            return float("nan")


def unit_value_counts(data, categories=None) -> tuple[np.ndarray, np.ndarray]:
    """``(counts, categories)``: ``counts[u, c]`` = how many raters gave unit ``u`` category ``c``."""
    a = _as_float(data)
    cats = categories_of(a) if categories is None else np.asarray(categories, dtype=float)
    if len(cats) == 0:  # no rating at all (e.g. an empty subset of pairs)
        return np.zeros((a.shape[1] if a.ndim == 2 else 0, 0)), cats
    counts = np.stack([(a == c).sum(axis=0) for c in cats], axis=1).astype(float)
    return counts, cats


def unit_coincidences(counts) -> np.ndarray:
    """Each unit's contribution to the coincidence matrix, shape ``(units, C, C)``.

    ``o_u[c, k] = m_uc (m_uk − δ_ck) / (m_u − 1)`` for units with ``m_u ≥ 2`` values; zero otherwise
    (a lone value is not pairable).
    """
    m = np.asarray(counts, dtype=float)
    mu = m.sum(axis=1)
    o = m[:, :, None] * m[:, None, :] - np.einsum("uc,ck->uck", m, np.eye(m.shape[1]))
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.where(mu >= 2, 1.0 / np.where(mu >= 2, mu - 1, 1), 0.0)
    return o * scale[:, None, None]


def alpha_from_coincidences(o) -> np.ndarray:
    """Nominal α from coincidence matrices ``o`` of shape ``(..., C, C)``; NaN where undefined.

    ``α = 1 − (n − 1) · Σ_{c≠k} o_ck / (n² − Σ_c n_c²)`` with ``n_c = Σ_k o_ck`` and ``n = Σ_c n_c``.
    """
    o = np.asarray(o, dtype=float)
    nc = o.sum(axis=-1)
    n = nc.sum(axis=-1)
    off = n - np.trace(o, axis1=-2, axis2=-1)
    de = n**2 - (nc**2).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(de > 0, 1.0 - (n - 1) * off / np.where(de > 0, de, 1.0), np.nan)


def alpha_nominal(data, categories=None) -> float:
    """Nominal α computed here (same value as :func:`krippendorff_alpha`; used by the bootstrap)."""
    counts, _ = unit_value_counts(data, categories)
    return float(alpha_from_coincidences(unit_coincidences(counts).sum(axis=0)))


def bootstrap_alpha(data, n_boot: int = 2000, seed=0, ci: float = 0.95, strata=None,
                    categories=None, keep_samples: bool = False) -> BootstrapResult:  # fmt: skip
    """Nominal α with a percentile bootstrap CI, resampling units (columns), optionally within strata.

    Vectorised: each resample's coincidence matrix is ``w @ O`` for the per-unit coincidences ``O``.
    """
    counts, _ = unit_value_counts(data, categories)
    per_unit = unit_coincidences(counts)
    u, c, _ = per_unit.shape
    flat = per_unit.reshape(u, c * c)

    def stat(w):
        return alpha_from_coincidences((w @ flat).reshape(-1, c, c))

    return bootstrap(stat, u, n_boot, seed, ci, strata, keep_samples=keep_samples)


def unanimous(data) -> tuple[int, int]:
    """``(unanimous units, units with at least two ratings)``: all ratings of the unit are equal."""
    a = _as_float(data)
    counts, _ = unit_value_counts(a)
    if counts.shape[1] == 0:
        return 0, 0
    mu = counts.sum(axis=1)
    rated = mu >= 2
    return int(((counts.max(axis=1) == mu) & rated).sum()), int(rated.sum())


def majority_vote(data) -> np.ndarray:
    """Per unit, the category chosen by a strict majority of its raters; NaN on a tie or no rating."""
    a = _as_float(data)
    counts, cats = unit_value_counts(a)
    if counts.shape[1] == 0:
        return np.full(a.shape[1], np.nan)
    top = counts.max(axis=1)
    winner = cats[counts.argmax(axis=1)]
    tie = (counts == top[:, None]).sum(axis=1) > 1
    return np.where((top > 0) & ~tie, winner, np.nan)


def agreement_rate(x, y) -> float:
    """Eq. 5: share of units (both present) on which two providers give the same decision."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    both = ~np.isnan(x) & ~np.isnan(y)
    return float((x[both] == y[both]).mean()) if both.any() else float("nan")


def cohen_kappa(x, y) -> float:
    """Cohen's κ of two raters over the units both rated (scikit-learn); NaN when undefined."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    both = ~np.isnan(x) & ~np.isnan(y)
    if not both.any():
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(cohen_kappa_score(x[both], y[both]))


def pairwise_agreement(x, y, conf_x=None, conf_y=None, certain=100) -> dict:
    """Raw agreement, Cohen's κ and "both said certain" agreement of two raters (Table 12 row).

    ``conf_*`` are the raters' confidences on the same units; ``certain`` is the value meaning
    "certain" (100 in the human-study files, 2 on the paper's 0–2 scale).
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    both = ~np.isnan(x) & ~np.isnan(y)
    same = x[both] == y[both]
    row = {"n": int(both.sum()), "agree": int(same.sum()), "agreement": float(same.mean()) if both.any() else np.nan,
           "kappa": cohen_kappa(x, y)}  # fmt: skip
    if conf_x is not None and conf_y is not None:
        cx, cy = np.asarray(conf_x, dtype=float)[both], np.asarray(conf_y, dtype=float)[both]
        bc = (cx == certain) & (cy == certain)
        row.update(both_certain_n=int(bc.sum()), both_certain_agree=int(same[bc].sum()),
                   both_certain_agreement=float(same[bc].mean()) if bc.any() else np.nan)  # fmt: skip
    return row
