"""API keys: recognise them, and take them out of anything the workbench writes.

DESIGN.md, "Secrets never land on disk": keys come from the environment only and are never in
outputs, logs, caches or executed notebooks. Two nets:

- **Key shapes** (:data:`KEY_SHAPES`): the published prefixes of the providers the README names
  and a few more (OpenAI ``sk-``/``sk-proj-``, Anthropic ``sk-ant-``, Google ``AIza``, Fireworks
  ``fw_``, Together ``tgp_v1_``, Hugging Face ``hf_``, xAI ``xai-``, Groq ``gsk_``, AWS ``AKIA``,
  GitHub, Replicate, Perplexity, Slack). Keys with no prefix (Mistral, Cohere, the older 64-hex
  Together keys) cannot be told from other tokens by shape (a cache key is 64 hex digits too): the
  second net catches them.
- **Secret environment values** (:func:`secret_values`): every value of a variable whose name
  says it is a secret (``*KEY*``, ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``, ``*CREDENTIAL*``).
  :func:`redact` removes them case-insensitively and also removes partial echoes: a provider
  error that quotes a key's first or last :data:`MIN_ECHO` or more characters (``"Incorrect API
  key provided: sk-abc123…"``), or any :data:`MIN_INNER` or more characters from its middle.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

REDACTED = "[REDACTED]"
MIN_SECRET = 8  # shorter environment values are not treated as secrets (too many false hits)
MIN_ECHO = 8  # a prefix or suffix of a secret this long is an echo of it
MIN_INNER = 16  # any run of a secret this long is an echo of it
_SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL")  # in a variable's name

# provider → (lowercase prefixes, pattern of its key); the prefix is matched case-insensitively (an
# echo may be lowercased). The prefixes let :func:`redact` skip the patterns whose prefix is absent
# (a plain substring test), so a 2 MB answer costs one ``lower()`` and a few ``in`` tests.
KEY_SHAPES: dict[str, tuple[tuple[str, ...], str]] = {
    "Anthropic": (("sk-ant-",), r"(?i:sk-ant-)[A-Za-z0-9_-]{20,}"),
    # sk-, sk-proj-, sk-svcacct-, OpenRouter sk-or-v1-, DeepSeek sk-: a digit somewhere, so a
    # hyphenated phrase (scikit-learn style: sk, a hyphen, then words) is not taken for a key
    "OpenAI-style": (("sk-",), r"(?i:sk-)(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{20,}"),
    "Google": (("aiza",), r"AIza[0-9A-Za-z_-]{35}"),
    "Fireworks": (("fw_",), r"(?i:fw_)[A-Za-z0-9]{20,}"),
    "Together": (("tgp_v1_",), r"(?i:tgp_v1_)[A-Za-z0-9_-]{20,}"),
    "Hugging Face": (("hf_",), r"(?i:hf_)[A-Za-z0-9]{30,}"),
    "xAI": (("xai-",), r"(?i:xai-)[A-Za-z0-9]{20,}"),
    "Groq": (("gsk_",), r"(?i:gsk_)[A-Za-z0-9]{20,}"),
    "AWS": (("akia", "asia"), r"(?:AKIA|ASIA)[0-9A-Z]{16}"),
    "GitHub": (
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
    ),
    "Replicate": (("r8_",), r"(?i:r8_)[A-Za-z0-9]{30,}"),
    "Perplexity": (("pplx-",), r"(?i:pplx-)[A-Za-z0-9]{30,}"),
    "Slack": (("xox",), r"xox[abprs]-[A-Za-z0-9-]{10,}"),
}
_SHAPES = {
    name: (prefixes, re.compile(rf"(?<![A-Za-z0-9_-]){p}(?![A-Za-z0-9_-])"))
    for name, (prefixes, p) in KEY_SHAPES.items()
}


# one scan for any shape's prefix first: most texts (every model answer) hold none
_ANY_PREFIX = re.compile("|".join(re.escape(p) for prefixes, _ in KEY_SHAPES.values() for p in prefixes))


def _candidates(low: str) -> list[tuple[str, re.Pattern]]:
    """The shapes whose prefix occurs in ``low`` (lowercased text)."""
    if not _ANY_PREFIX.search(low):
        return []
    return [(name, pat) for name, (prefixes, pat) in _SHAPES.items() if any(p in low for p in prefixes)]


def key_provider(text: str) -> str | None:
    """The provider whose key shape occurs in ``text`` (first match), else ``None``."""
    if not isinstance(text, str):
        return None
    for name, pattern in _candidates(text.lower()):
        if pattern.search(text):
            return name
    return None


def looks_like_key(text: str) -> bool:
    """True when ``text`` contains a token shaped like a provider's API key."""
    return key_provider(text) is not None


def secret_in(text: str) -> str | None:
    """What secret ``text`` holds, for an error message ("a Google key", "the value of a secret
    environment variable"), or ``None``. Used to refuse keys in parameter files."""
    if not isinstance(text, str):
        return None
    provider = key_provider(text)
    if provider:
        return f"a {provider} key"
    if redact(text) != text:
        return "the value of a secret environment variable"
    return None


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of the environment variables whose names say they hold a secret (longest first).
    Skipped, as settings rather than secrets: paths and URLs, text with spaces, and short values
    without a digit (``PIP_KEYRING_PROVIDER=disabled`` must not redact every "disabled")."""
    env = os.environ if environ is None else environ
    names = [
        k for k in env if any(w in k.upper() for w in _SECRET_WORDS)
    ]  # names first: values decode slowly
    return sorted({v for v in (env.get(k, "") for k in names) if _secret_like(v)}, key=len, reverse=True)


def _secret_like(value: str) -> bool:
    if len(value) < MIN_SECRET or value.startswith(("/", "~", ".")) or "://" in value:
        return False
    if any(c.isspace() for c in value):
        return False
    return len(value) >= 16 or any(c.isdigit() for c in value)


def _lower_aligned(text: str) -> str:
    """``text.lower()`` with one character per character (a few letters lower to two)."""
    low = text.lower()
    return low if len(low) == len(text) else "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


def _echo_spans(low: str, secret: str) -> list[tuple[int, int]]:
    """Spans of ``low`` that repeat part of ``secret`` (both lowercase): a prefix or suffix of at
    least MIN_ECHO characters, or any run of at least MIN_INNER."""
    n = len(secret)
    anchors = {0, max(0, n - MIN_ECHO)} | set(range(0, max(1, n - MIN_ECHO + 1), MIN_ECHO))
    spans: list[tuple[int, int]] = []
    for a in sorted(anchors):
        seed = secret[a : a + MIN_ECHO]
        if len(seed) < min(MIN_ECHO, n):
            continue
        i = low.find(seed)
        while i >= 0:
            lo, hi, s_lo, s_hi = i, i + len(seed), a, a + len(seed)
            while lo > 0 and s_lo > 0 and low[lo - 1] == secret[s_lo - 1]:
                lo, s_lo = lo - 1, s_lo - 1
            while hi < len(low) and s_hi < n and low[hi] == secret[s_hi]:
                hi, s_hi = hi + 1, s_hi + 1
            if s_lo == 0 or s_hi == n or hi - lo >= MIN_INNER:
                spans.append((lo, hi))
            i = low.find(seed, i + 1)
    return spans


def redact(text: str, secrets: Iterable[str] | None = None) -> str:
    """``text`` with every secret (default: :func:`secret_values`), every partial echo of one
    (case-insensitive) and every key-shaped token replaced by ``[REDACTED]``."""
    if not isinstance(text, str) or not text:
        return text
    values = secret_values() if secrets is None else [s for s in secrets if s and len(s) >= MIN_SECRET]
    low = _lower_aligned(text)
    if values:
        spans = sorted(sp for s in values for sp in _echo_spans(low, _lower_aligned(s)))
        if spans:
            text = _cut(text, spans)
            low = _lower_aligned(text)
    for _name, pattern in _candidates(low):
        text = pattern.sub(REDACTED, text)
    return text


def redact_tree(x, secrets: Iterable[str] | None = None):
    """``x`` (JSON-like: dicts, lists, tuples, strings) with :func:`redact` applied to every string in it."""
    if isinstance(x, str):
        return redact(x, secrets)
    if isinstance(x, dict):
        return {k: redact_tree(v, secrets) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [redact_tree(v, secrets) for v in x]
    return x


def _cut(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with the (sorted, possibly overlapping) spans replaced by one marker each."""
    out, pos = [], 0
    merged: list[list[int]] = []
    for lo, hi in spans:
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    for lo, hi in merged:
        out.append(text[pos:lo])
        out.append(REDACTED)
        pos = hi
    out.append(text[pos:])
    return "".join(out)
