"""Prompts: the :class:`Prompt` type and the one prompt loader (issue 27; :mod:`.loader`).

Prompt files live in the checkout's ``prompts/`` (or ``$SHOPBENCH_PROMPTS_DIR``); each read is
hashed and recorded for the run's provenance.
"""

from .loader import (
    PROMPTS_ENV,
    Prompt,
    PromptNotFound,
    check_placeholders,
    load_prompt,
    load_template,
    note_prompt,
    placeholders,
    prompt_file,
    prompt_name,
    prompt_path,
    prompts_dir,
    read_prompt,
    read_prompt_file,
    record_prompts_with,
    strip_header,
)

__all__ = [
    "PROMPTS_ENV", "Prompt", "PromptNotFound", "check_placeholders", "load_prompt", "load_template", "note_prompt",
    "placeholders", "prompt_file", "prompt_name", "prompt_path", "prompts_dir", "read_prompt", "read_prompt_file",
    "record_prompts_with", "strip_header",
]  # fmt: skip


def __getattr__(name: str):
    # ``PROMPTS_DIR`` is resolved on each access (see :mod:`.loader`)
    if name == "PROMPTS_DIR":
        return prompts_dir()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
