"""Presentation rules applied to every registered figure (issue 16 §3).

Every figure gets a title, its legends sit outside the data and list only series that are drawn,
and a panel whose series are all zero says so on the panel and in the caption instead of showing
an empty frame. The notebooks draw; :func:`tidy` enforces the rules once, where figures are saved.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

TITLE_MAX = 90


# a sentence ends at ". " before a capital, not after an abbreviation ("Eq. 4", "App. G", "e.g. a")
_SENTENCE_END = re.compile(
    r"(?<!\bEq)(?<!\bFig)(?<!\bApp)(?<!\bTab)(?<!\bSec)(?<!\bvs)(?<!\be\.g)(?<!\bi\.e)\.\s+(?=[A-Z])"
)


def title_from(caption: str, name: str) -> str:
    """A title from the caption's first sentence (or the artefact name), shortened to one line."""
    text = " ".join(caption.split())
    head = _SENTENCE_END.split(text)[0].rstrip(".") if text else name.replace("_", " ")
    if head.count("(") > head.count(")"):  # a sentence cut inside a parenthesis
        head = head[: head.rfind("(")].rstrip(" ,;:")
    if len(head) <= TITLE_MAX:
        return head
    cut = head[: TITLE_MAX - 1]
    cut = cut[: cut.rfind(" ")] if " " in cut else cut  # whole words
    if cut.count("(") > cut.count(")"):  # no dangling parenthesis
        cut = cut[: cut.rfind("(")]
    return cut.rstrip(" ,;:") + "…"


def _has_title(fig) -> bool:
    sup = getattr(fig, "_suptitle", None)
    if sup is not None and sup.get_text().strip():
        return True
    return any(ax.get_title().strip() or ax.get_title(loc="left").strip() for ax in fig.axes)


def _finite(values) -> np.ndarray:
    """Finite numbers among ``values``; categorical (string) data counts as drawn."""
    try:
        arr = np.asarray(values, dtype=float).ravel()
    except (TypeError, ValueError):
        return np.ones(len(list(values)))
    return arr[np.isfinite(arr)]


def _artist_values(artist) -> np.ndarray | None:
    """The data values an artist draws (bar heights/widths, line y, scatter offsets), or None."""
    from matplotlib.collections import Collection
    from matplotlib.container import BarContainer
    from matplotlib.lines import Line2D

    if isinstance(artist, BarContainer):
        horizontal = getattr(artist, "orientation", "vertical") == "horizontal"
        return _finite([p.get_width() if horizontal else p.get_height() for p in artist.patches])
    if isinstance(artist, Line2D):
        return _finite(artist.get_ydata())
    if isinstance(artist, Collection):
        offsets = np.asarray(artist.get_offsets())
        return _finite(offsets[:, 1]) if len(offsets) else _finite([])
    return None


def _series(ax) -> dict[str, list]:
    """Label → artists drawn under it on ``ax`` (labels matplotlib hides start with ``_``)."""
    out: dict[str, list] = {}
    for artist in [*ax.containers, *ax.lines, *ax.collections]:
        if _is_proxy(artist):  # seaborn adds empty labelled artists just to build its legend
            continue
        label = str(artist.get_label() or "")
        if label and not label.startswith("_"):
            out.setdefault(label, []).append(artist)
    return out


def _is_proxy(artist) -> bool:
    """An artist with no data points at all (a legend proxy), as opposed to one whose points are NaN."""
    from matplotlib.collections import Collection
    from matplotlib.lines import Line2D

    if isinstance(artist, Line2D):
        return len(np.asarray(artist.get_xdata())) == 0
    if isinstance(artist, Collection):
        return len(np.asarray(artist.get_offsets())) == 0
    return False


def _is_empty(artists: list) -> bool:
    """True when every artist under a label draws nothing: no finite value, or only zero-height bars."""
    from matplotlib.container import BarContainer

    for a in artists:
        vals = _artist_values(a)
        if vals is None:
            return False
        if isinstance(a, BarContainer):
            if vals.size and np.any(vals != 0):
                return False
        elif vals.size:
            return False
    return True


def _all_zero(ax) -> bool:
    """A panel whose every drawn bar/line value is zero (and which draws something)."""
    values = [v for a in [*ax.containers, *ax.lines] if (v := _artist_values(a)) is not None]
    if not values or not any(v.size for v in values):
        return False
    return all(not v.size or np.all(v == 0) for v in values)


def _rightmost(ax, axes: list) -> bool:
    box = ax.get_position()
    return not any(
        o is not ax and o.get_position().x0 >= box.x1 - 1e-3 and _overlap(o.get_position(), box) for o in axes
    )


def _overlap(a, b) -> bool:
    return min(a.y1, b.y1) - max(a.y0, b.y0) > 0


def _relocate_legend(ax, outside: bool) -> list[str]:
    """Redraw ``ax``'s legend with only drawn series; outside the axes when ``outside``."""
    leg = ax.get_legend()
    if leg is None:
        return []
    handles = list(getattr(leg, "legend_handles", None) or getattr(leg, "legendHandles", []))
    labels = [t.get_text() for t in leg.get_texts()]
    series = _series(ax)
    keep = [
        (h, lab)
        for h, lab in zip(handles, labels, strict=False)
        if not (lab in series and _is_empty(series[lab]))
    ]
    dropped = [
        lab for h, lab in zip(handles, labels, strict=False) if lab in series and _is_empty(series[lab])
    ]
    title = leg.get_title().get_text() or None
    leg.remove()
    if not keep:
        return dropped
    kw: dict[str, Any] = {"title": title, "fontsize": "small", "title_fontsize": "small"}
    if outside:
        kw.update(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False)
    else:
        kw.update(loc="best", framealpha=0.85)
    ax.legend([h for h, _ in keep], [lab for _, lab in keep], **kw)
    return dropped


def merge_identical_series(long, key: str, x: str, y: str):
    """``long`` (one row per series and ``x``) with ``key`` relabelled so that series with the same
    ``y`` at every ``x`` share one label, e.g. ``"ares, etapp / local/schema-sampler"`` (a common
    ``" / <suffix>"`` is written once; otherwise the names are joined with ", "). Series that coincide
    draw one visible line: one legend entry names them all, instead of entries for lines hidden under
    another. Values are compared rounded to 9 decimals; a missing value matches only a missing value."""
    wide = long.pivot_table(index=key, columns=x, values=y, aggfunc="mean", dropna=False)
    groups: dict[tuple, list[str]] = {}
    for k in dict.fromkeys(long[key]):  # first-appearance order
        row = wide.loc[k].to_numpy(dtype=float) if k in wide.index else np.array([])
        groups.setdefault(tuple("nan" if np.isnan(v) else round(float(v), 9) for v in row), []).append(str(k))
    label = {}
    for members in groups.values():
        suffixes = {m.rsplit(" / ", 1)[-1] for m in members if " / " in m}
        if len(members) > 1 and len(suffixes) == 1 and all(" / " in m for m in members):
            text = ", ".join(m.rsplit(" / ", 1)[0] for m in members) + " / " + suffixes.pop()
        else:
            text = ", ".join(members)
        label.update({m: text for m in members})
    return long.assign(**{key: long[key].astype(str).map(label)})


def _kind_of(text: str, parts: dict[str, str]) -> str | None:
    """The evidence kind of a legend entry or tick label naming one of ``parts``: the label is the part,
    ends with ``" / <part>"`` (protocol / backbone) or starts with ``"<part> ("`` (``"heuristic (n=664)"``).
    The longest matching part wins."""
    best = None
    for part in parts:
        if text == part or text.endswith(" / " + part) or text.startswith(part + " ("):
            if best is None or len(part) > len(best):
                best = part
    return None if best is None else parts[best]


def mark_kinds(fig, parts: dict[str, str]) -> int:
    """In a figure that mixes evidence kinds (issue 13 §1: "labelled so everywhere it is shown"), append
    ``[known-answer]`` / ``[reference]`` … to every legend entry and tick label naming a part that is not
    ``measured``, unless the label already says it. Returns the number of labels marked."""
    if len(set(parts.values())) < 2:
        return 0
    marked = 0

    def mark(text_artist) -> None:
        nonlocal marked
        text = text_artist.get_text()
        kind = _kind_of(text, parts)
        if kind and kind != "measured" and kind not in text:
            text_artist.set_text(f"{text} [{kind}]")
            marked += 1

    for ax in fig.axes:
        leg = ax.get_legend()
        for t in leg.get_texts() if leg is not None else []:
            mark(t)
        for axis in (ax.xaxis, ax.yaxis):
            ticks = axis.get_ticklabels()
            if any(_kind_of(t.get_text(), parts) for t in ticks):
                for t in ticks:
                    mark(t)
                axis.set_ticks(axis.get_ticklocs(), [t.get_text() for t in ticks])
    return marked


def tidy(fig, name: str, caption: str) -> list[str]:
    """Apply the presentation rules to ``fig`` in place; return sentences to add to the caption."""
    notes: list[str] = []
    axes = [ax for ax in fig.axes if ax.get_visible() and ax.get_label() != "<colorbar>"]
    if not _has_title(fig):
        fig.suptitle(title_from(caption, name), fontsize="medium")
    dropped: list[str] = []
    for ax in axes:
        dropped += _relocate_legend(ax, outside=_rightmost(ax, axes))
        if _all_zero(ax):
            ax.text(0.5, 0.5, "all values are zero", transform=ax.transAxes, ha="center", va="center",
                    fontsize="small", color="0.35", bbox={"facecolor": "white", "edgecolor": "0.7"})  # fmt: skip
            panel = ax.get_title().strip() or "a panel"
            notes.append(f"Every value in {panel} is zero.")
    if dropped:
        shown = ", ".join(sorted(set(dropped))[:6])
        notes.append(f"Series with no value are left out of the legend ({shown}).")
    return notes
