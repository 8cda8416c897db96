"""What a run would send, per notebook × backbone (issue 14 §2): :class:`Line` and the
:class:`Preview` that sums them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field


@dataclass
class Line:
    """One notebook × backbone: what the run would send."""

    notebook: str
    backbone: str
    model: str
    role: str
    calls: int
    input_tokens: int
    output_tokens: int
    kind: str = "api"  # api | self-hosted | llamacpp | embedded
    method: str = ""
    cached_input_tokens: int = 0
    prefix_tokens: int = 0  # the fixed prefix each call shares with the sweep's others (provider caching)
    max_input_tokens: int = 0  # the largest single prompt of the sample (the preflight's need, issue 25)
    usd: float | None = 0.0
    hours: float = 0.0
    available: bool = True
    reason: str = ""
    substitute_for: str | None = None
    batch: bool = False  # priced at the provider's batch rate (gateway.mode: batch)
    #: (sweep key, minutes): an anytime sweep's time budget, shared by the lines with the same key;
    #: their hours are capped at it (calls and tokens stay the plan's: the budget stops it earlier)
    budget: tuple[str, float] | None = None


# conversation turns: a handful of calls per sweep (under gateway.batch_min_calls), so real-time even
# in batch mode (llm/batch.py); every other role is a sweep the batch APIs take
TURN_ROLES = ("agent", "user simulator", "steering")


@dataclass
class Preview:
    profile: str
    lines: list[Line] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: tasks × repeats to detect a difference, per planned comparison (issue 29 item 5; :mod:`.budget`)
    budget: list[dict] = field(default_factory=list)
    budget_notes: list[str] = field(default_factory=list)

    def total(self, kinds: Sequence[str] | None = None, only_available: bool = False) -> dict:
        ls = [
            x
            for x in self.lines
            if (kinds is None or x.kind in kinds) and (x.available or not only_available)
        ]
        return {
            "calls": sum(x.calls for x in ls),
            "input_tokens": sum(x.input_tokens for x in ls),
            "output_tokens": sum(x.output_tokens for x in ls),
            "usd": round(sum(x.usd or 0.0 for x in ls), 2),
            "hours": round(sum(x.hours for x in ls), 2),
            "unpriced": sorted({x.model for x in ls if x.usd is None}),
        }

    def as_dict(self) -> dict:
        return {
            "profile": self.profile,
            "lines": [asdict(x) for x in self.lines],
            "totals": {
                "all": self.total(),
                "api": self.total(["api"]),
                "api_available": self.total(["api"], only_available=True),
                "self_hosted": self.total(["self-hosted"]),
                "local": self.total(["llamacpp", "embedded"]),
                "local_available": self.total(["llamacpp", "embedded"], only_available=True),
            },
            "notes": self.notes,
            "budget": self.budget,
            "budget_notes": self.budget_notes,
        }
