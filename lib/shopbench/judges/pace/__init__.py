"""Judge protocols, parsing and the judge sweep (seed 000, §4, §5.1, Appendices C.3, D.4, E.1).

- :mod:`.protocols`: the eight protocols, each a :class:`shopbench.judges.JudgeSpec` (prompt file
  + output contract + native PACE targets), the D.4 input bundle, prompt rendering and its inverse.
- :mod:`.parse`: a gateway row → the common judgment fields; parse failures are data.
- :mod:`.deterministic`: ``local/checks``, ``local/always-bad``, ``local/random`` (registered on
  import): baselines that see nothing but the prompt.
- :mod:`.oracle_rules`: ``local/oracle-rules``, the rule judge built on the generator's cue lists, a
  known-answer stand-in kept out of the judges under test (issue 13 §2).
- :mod:`.sweep`: records × protocols × backbones → the run table; majority vote, stability,
  stratified subsets, parse-failure counts.
"""

from . import (
    deterministic,  # noqa: F401 - registers the local/… judges
    oracle_rules,  # noqa: F401 - registers local/oracle-rules (known-answer)
)
from .parse import ERROR_KINDS, JUDGMENT_FIELDS, parse_judgment
from .protocols import (
    FAMILY_LABELS,
    LOCATION_LABELS,
    LOCATIONS,
    PROTOCOLS,
    Protocol,
    bundle,
    extract_bundle,
    get_protocol,
    gold_location_labels,
    location_label,
    messages,
)
from .sweep import (
    RUN_COLUMNS,
    build_calls,
    majority_vote,
    parse_failures,
    run_table,
    stability,
    stratified_subset,
    sweep,
)

__all__ = [
    "ERROR_KINDS", "FAMILY_LABELS", "JUDGMENT_FIELDS", "LOCATIONS", "LOCATION_LABELS", "PROTOCOLS", "Protocol",
    "RUN_COLUMNS", "build_calls", "bundle", "extract_bundle", "get_protocol", "gold_location_labels",
    "location_label", "majority_vote", "messages", "parse_failures", "parse_judgment", "run_table", "stability",
    "stratified_subset", "sweep",
]  # fmt: skip
