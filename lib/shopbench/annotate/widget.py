"""The annotation interface (PADMÉ Appendix D.1, Figure 3; instructions of Appendix H.6).

:func:`annotate` returns an anywidget for a notebook (JupyterLab or Voila). The browser part
(``static/annotate.js`` and ``annotate.css``) only draws what the Python side sends and reports
keys and clicks; :class:`AnnotationSession` (plain Python, no widget) decides everything and writes
answers to the :class:`~shopbench.annotate.store.AnnotationStore`.

Screens: the instructions (once per annotator, remembered in the store folder, reopenable from the
header), a criterion intro whenever the criterion changes (and when a session starts), the pair,
and "done". On a pair: click a side or press ←/→; 1/2/3 (or click) rate confidence 0/50/100; Enter
submits and moves on; Backspace goes back to revise the previous pair.

What the browser receives (traits ``content``, ``ui``, ``instructions``): rendered HTML of the two
items in their on-screen slots, the criterion, the reference documents, the progress and the
current selection. Never a pair's hidden metadata (label, steering levels, filter outcome, source)
and never which underlying side a slot shows.

Messages from the browser (the same dicts the tests send)::

    {"type": "key", "key": "ArrowLeft" | "ArrowRight" | "1" | "2" | "3" | "Enter" | "Backspace" | <any>,
     "view_id": n}
    {"type": "pick", "slot": "A" | "B", "view_id": n}
    {"type": "confidence", "value": 0 | 50 | 100, "view_id": n}
    {"type": "next" | "back" | "start" | "begin" | "instructions", "view_id": n}

A message whose ``view_id`` is not the current one (a key pressed before the next pair arrived) is
ignored, so no answer is ever given to a pair that was not on screen.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from .pairs import Pair
from .render import noun as item_noun
from .render import render_item, render_reference, shared_context
from .store import CONFIDENCE_LEVELS, AnnotationStore, check_annotator, now_iso, slot_order

STATIC = Path(__file__).parent / "static"
KEY_CONFIDENCE = {"1": 0, "2": 50, "3": 100}


def instructions_html(noun: str = "conversation") -> str:
    """Appendix H.6, "Before you start" (the wording adapted to responses for PACEShop pairs)."""
    nouns = f"{noun}s"
    if noun == "conversation":
        what = "Pairwise annotation of agent conversations."
        docs = ("the agent's tool list, the policy it had to follow, and the knowledge base where one exists. "
                "They are closed by default and open on a click, one at a time. Tool results and searches "
                "inside a conversation open the same way.")  # fmt: skip
        reach = "Reach for the policy when the question is whether the agent was allowed to do something."
        extreme = "In an extreme scenario, a conversation can fail the task and still be the better one on the metric."
    else:
        what = "Pairwise annotation of shopping-assistant responses."
        docs = ("the shopper's full profile and the evidence pool the response could cite. They are closed by "
                "default and open on a click, one at a time.")  # fmt: skip
        reach = "Reach for the evidence pool when the question is whether a claim is supported."
        extreme = "In an extreme scenario, a response can look polished and still be the worse one on the criterion."
    return f"""
<h2>Before you start</h2>
<p>{what} Read this once.</p>
<h3>Judge one criterion, and nothing else</h3>
<p>Each pair is judged on a single named criterion. Only that criterion counts. Ignore everything else.
{extreme}</p>
<h3>The flow &mdash; three steps per pair</h3>
<ol>
<li><b>Pick a side.</b> Click the {noun} that better fits the criterion, or press the left/right arrow key.</li>
<li><b>Rate your confidence:</b> <kbd>1</kbd> for 0 (a guess), <kbd>2</kbd> for 50 (leaning one way),
<kbd>3</kbd> for 100 (certain).</li>
<li><b>Press Next</b> (<kbd>Enter</kbd>) to submit and move on.</li>
</ol>
<p><kbd>Backspace</kbd> goes back to revise.</p>
<h3>There is more to read if you need it</h3>
<p>Under the header are buttons labelled &ldquo;Additional documents to help you decide&rdquo;: {docs}</p>
<p>You do not need any of it for most pairs. {reach}</p>
<h3>How much to deliberate</h3>
<p>Use your best judgment, but it might hurt to think too much. Giving each example about a minute
should be sufficient.</p>
<p>If the two {nouns} really are hard to separate, still pick a side &mdash; then rate it 0. That records
the pair honestly as a coin-flip instead of hiding a guess among your real judgments.</p>
"""


class AnnotationSession:
    """The interface's state machine for one annotator over an ordered list of pairs."""

    def __init__(
        self, pairs: Sequence[Pair], annotator: str, store: AnnotationStore | str | Path, seed: int = 0
    ):
        if not pairs:
            raise ValueError("no pairs to annotate")
        ids = [p.id for p in pairs]
        if len(set(ids)) != len(ids):
            raise ValueError("pair ids must be unique")
        self.pairs = list(pairs)
        self.order = ids
        self.annotator = check_annotator(annotator)
        self.store = store if isinstance(store, AnnotationStore) else AnnotationStore(store)
        self.seed = seed
        self.noun = item_noun(self.pairs[0].side_a)
        self.instructions = instructions_html(self.noun)
        self.view_id = 0
        self.message = ""
        self.choice: str | None = None
        self.confidence: int | None = None
        self.shown_at: str | None = None
        self._answers = self.store.answers(self.annotator)
        self._resume_screen: str | None = None
        self.index = self.store.first_unanswered(self.annotator, self.order)
        if not self.store.instructions_seen(self.annotator):
            self.screen = "instructions"
        else:
            self.screen = "intro" if self.index < len(self.pairs) else "done"
        self._content_for: int | None = None
        self._content: dict = {}

    # ---- what the browser sees -------------------------------------------------------------------
    @property
    def pair(self) -> Pair | None:
        return self.pairs[self.index] if self.index < len(self.pairs) else None

    def slots(self, pair: Pair) -> tuple[str, str]:
        return slot_order(self.seed, self.annotator, pair.id)

    def content(self) -> dict:
        """The current pair, rendered in its on-screen slots (cached per pair)."""
        pair = self.pair
        if pair is None:
            return {}
        if self._content_for != self.index:
            left, right = self.slots(pair)
            noun = item_noun(pair.side_a)
            shared = shared_context(pair.side_a, pair.side_b)
            self._content = {
                "shared": shared or "",
                "left": render_item(pair.side(left), with_context=shared is None),  # type: ignore[arg-type]
                "right": render_item(pair.side(right), with_context=shared is None),  # type: ignore[arg-type]
                "references": [{"title": r.title, "html": render_reference(r)} for r in pair.references],
                "noun": noun,
                "question": f"Which {noun} is better on this criterion?",
            }
            self._content_for = self.index
        return self._content

    def ui(self) -> dict:
        pair = self.pair
        n = len(self.pairs)
        crit = pair.criterion if pair is not None else None
        return {
            "screen": self.screen,
            "view_id": self.view_id,
            "annotator": self.annotator,
            "reviewing_instructions": self._resume_screen is not None,
            "progress": {
                "index": min(self.index + 1, n),
                "total": n,
                "answered": sum(1 for pid in self.order if pid in self._answers),
            },  # fmt: skip
            "criterion": {"name": crit.name, "description": crit.description} if crit else None,
            "choice": self.choice,
            "confidence": self.confidence,
            "answered": pair is not None and pair.id in self._answers,
            "message": self.message,
        }

    # ---- transitions -----------------------------------------------------------------------------
    def _show_pair(self) -> None:
        self.screen = "pair"
        self.view_id += 1
        self.shown_at = now_iso()
        prior = self._answers.get(self.pair.id) if self.pair else None
        self.choice = prior.choice if prior else None
        self.confidence = prior.confidence if prior else None

    def _go(self, index: int, intro_if_new_criterion: bool) -> None:
        prev = self.pair
        self.index = index
        self.message = ""
        if self.pair is None:
            self.screen = "done"
            self.view_id += 1
            self.choice = self.confidence = None
        elif intro_if_new_criterion and prev is not None and prev.criterion.name != self.pair.criterion.name:
            self.screen = "intro"
            self.view_id += 1
        else:
            self._show_pair()

    def _start(self) -> None:
        """Leave the instructions screen."""
        self.store.mark_instructions_seen(self.annotator)
        self.view_id += 1
        self.message = ""
        if self._resume_screen is not None:
            self.screen, self._resume_screen = self._resume_screen, None
            if self.screen == "pair":
                self.shown_at = self.shown_at or now_iso()
        else:
            self.screen = "intro" if self.pair is not None else "done"

    def _submit(self) -> None:
        pair = self.pair
        if self.choice is None:
            self.message = "Pick a side first (click it, or press ← / →)."
            return
        if self.confidence is None:
            self.message = "Rate your confidence first: 1 = 0 (a guess), 2 = 50 (leaning), 3 = 100 (certain)."
            return
        prior = self._answers.get(pair.id)
        if prior is None or (prior.choice, prior.confidence) != (self.choice, self.confidence):
            try:
                ans = self.store.record(self.annotator, pair.id, self.choice, self.confidence,  # type: ignore[arg-type]
                                        self.slots(pair), shown_at=self.shown_at or now_iso())  # fmt: skip
            except OSError as e:
                self.message = f"Could not save this answer ({e}); it was not recorded. Try again."
                return
            self._answers[pair.id] = ans
        self._go(self.index + 1, intro_if_new_criterion=True)

    def _back(self) -> None:
        if self.index == 0 and self.screen != "done":
            self.message = "This is the first pair."
            return
        self._go(
            self.index - 1 if self.pair is not None else len(self.pairs) - 1, intro_if_new_criterion=False
        )

    def handle(self, msg: dict[str, Any]) -> bool:
        """Apply one browser message; returns whether anything changed."""
        if not isinstance(msg, dict):
            return False
        vid = msg.get("view_id")
        if vid is not None and vid != self.view_id:
            return False  # meant for a screen that is gone
        kind = msg.get("type")
        if kind == "key":
            return self._key(str(msg.get("key", "")))
        if kind == "instructions":
            if self.screen != "instructions":
                self._resume_screen = self.screen
                self.screen = "instructions"
                self.view_id += 1
                return True
            return False
        if self.screen == "instructions":
            if kind == "start":
                self._start()
                return True
            return False
        if self.screen == "intro":
            if kind == "begin":
                self._show_pair()
                return True
            if kind == "back":
                self._back()
                return True
            return False
        if self.screen == "done":
            if kind == "back":
                self._back()
                return True
            return False
        # the pair screen
        if kind == "pick" and msg.get("slot") in ("A", "B"):
            self.choice, self.message = msg["slot"], ""
        elif kind == "confidence" and msg.get("value") in CONFIDENCE_LEVELS:
            self.confidence, self.message = int(msg["value"]), ""
        elif kind == "next":
            self._submit()
        elif kind == "back":
            self._back()
        else:
            return False
        return True

    def _key(self, key: str) -> bool:
        if self.screen == "instructions":
            return self.handle({"type": "start"}) if key == "Enter" else False
        if self.screen == "intro":
            return self.handle({"type": "back" if key == "Backspace" else "begin"})
        if self.screen == "done":
            return self.handle({"type": "back"}) if key == "Backspace" else False
        if key == "ArrowLeft":
            return self.handle({"type": "pick", "slot": "A"})
        if key == "ArrowRight":
            return self.handle({"type": "pick", "slot": "B"})
        if key in KEY_CONFIDENCE:
            return self.handle({"type": "confidence", "value": KEY_CONFIDENCE[key]})
        if key == "Enter":
            return self.handle({"type": "next"})
        if key == "Backspace":
            return self.handle({"type": "back"})
        return False


class AnnotationWidget(anywidget.AnyWidget):
    """The browser half; every decision is the session's."""

    _esm = STATIC / "annotate.js"
    _css = STATIC / "annotate.css"
    content = traitlets.Dict().tag(sync=True)
    ui = traitlets.Dict().tag(sync=True)
    instructions = traitlets.Unicode("").tag(sync=True)

    def __init__(self, session: AnnotationSession, **kw):
        super().__init__(**kw)
        self.session = session
        self.instructions = session.instructions
        self._push()
        self.on_msg(self._on_msg)

    def __repr__(self) -> str:
        s = self.session
        return (f"AnnotationWidget(annotator={s.annotator!r}, pairs={len(s.pairs)}, "
                f"answered={len(s._answers)}, store={str(s.store.root)!r})")  # fmt: skip

    def _push(self) -> None:
        with self.hold_sync():  # one update message: the browser never draws new content with an old ui
            content = self.session.content()
            if content != self.content:
                self.content = content
            self.ui = self.session.ui()

    def _on_msg(self, _widget, msg, _buffers) -> None:
        if self.session.handle(msg):
            self._push()


def annotate(pairs: Sequence[Pair], annotator: str, store_dir: str | Path, seed: int = 0) -> AnnotationWidget:
    """The annotation widget for ``annotator`` over ``pairs`` (in this order), answers appended to
    ``<store_dir>/<annotator>.jsonl``. Reopening resumes at the first unanswered pair."""
    return AnnotationWidget(AnnotationSession(pairs, annotator, AnnotationStore(store_dir), seed=seed))
