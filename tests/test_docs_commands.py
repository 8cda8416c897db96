"""Issue 26 §4 ("Docs a newcomer can follow"; Done when: "the suite runs every documented command"):
every shell command and Python block of README.md and docs/guides/*.md runs as a newcomer would run it,
in a fresh folder with embedded backends, and prints what the page shows.

How a page tells this test what a block is (an HTML comment on the line before the fence, visible in
the markdown source):

- ``<!-- docs-test: file NAME -->``: the block is a file the reader saves as NAME (in the page's folder;
  README's recipes use the guides' files, which they name);
- ``<!-- docs-test: skip (REASON) -->``: not run here (a real server, a key, `make paper`), with the reason;
- ``<!-- docs-test: covered (tests/FILE.py[::test]) -->``: run by that test, which reads this page;
- ``<!-- docs-test: needs PATH (how to get it) -->``: run when PATH (relative to the page's folder, e.g.
  ``../shared/data/...``) exists, else reported as not run.

Every other ``bash``/``sh`` block is run command by command (``bash -c``, exit status 0), and every
``python`` block as a script. Printed output a page shows is checked line by line against what the
command printed: in a shell block, the ``#  ``-prefixed lines (hash and two spaces) after a command; in
the page, a plain fenced block right after a paragraph ending in "prints" (or "prints (...)"), for the last command of the
shell block before it. ``…`` in a shown line stands for any text and ``<...>`` for one word (a run id).
Blocks of other languages (``json``, ``jsonl``, ``text``, ``yaml``) are data, not commands
(tests/test_schemas.py validates the schema examples of files.md).

Runs in a temporary SHOPBENCH_OUTPUTS and cache; the page's folder links ``prompts/`` and ``docs/`` of
this checkout and ``../shared`` beside it, as a clone sits on a user's machine.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs" / "guides").glob("*.md"))]
BLOCK = re.compile(
    r"(?:<!-- docs-test: (?P<marker>[^\n]*?) -->\n)?```(?P<lang>[\w-]*)\n(?P<body>.*?)```", re.S
)
SAYS_PRINTS = re.compile(r"(?:^|\s)prints(?: \([^)]*\))?:?$")  # a paragraph ending "prints" or "prints (...)"
SHELL, PYTHON = {"bash", "sh", "shell"}, {"python"}


@dataclass
class Command:
    text: str
    shown: list[str] = field(default_factory=list)  # printed lines the page shows for it


@dataclass
class Block:
    page: Path
    line: int
    lang: str
    body: str
    marker: str | None
    prose: str  # the text between the previous block and this one
    commands: list[Command] = field(default_factory=list)

    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def shell_commands(body: str) -> list[Command]:
    out: list[Command] = []
    for line in body.replace("\\\n", " ").splitlines():
        s = line.strip()
        if s.startswith("#  ") and out:
            out[-1].shown.append(s[3:])
        elif s and not s.startswith("#"):
            out.append(Command(s))
    return out


def blocks_of(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    out, prev_end = [], 0
    for m in BLOCK.finditer(text):
        b = Block(page, text.count("\n", 0, m.start()) + 1, m["lang"], m["body"], m["marker"],
                  text[prev_end:m.start()])  # fmt: skip
        if b.lang in SHELL and not b.marker:
            b.commands = shell_commands(b.body)
        elif b.lang in SHELL and b.marker.startswith("needs "):
            b.commands = shell_commands(b.body)
        out.append(b)
        prev_end = m.end()
    # a plain block introduced by "prints" shows the output of the last command of the shell block before it
    for before, b in zip(out, out[1:], strict=False):
        if (
            b.lang == ""
            and not b.marker
            and SAYS_PRINTS.search(b.prose.strip().split("\n\n")[-1])
            and before.commands
        ):
            before.commands[-1].shown += [x for x in b.body.splitlines() if x.strip()]
    return out


def files_of(page: Path) -> dict[str, str]:
    return {b.marker.split()[1]: b.body for b in blocks_of(page) if b.marker and b.marker.startswith("file ")}


def shown_pattern(line: str) -> re.Pattern:
    """A shown line as a pattern: ``…`` any text, ``<run id>`` one word, runs of blanks any blanks."""
    rx = ""
    for p in re.split(r"(…|<[^<>]+>)", line.strip()):
        if p == "…":
            rx += ".*"
        elif p.startswith("<") and p.endswith(">"):
            rx += r"\S+"
        else:
            rx += re.sub(r"(?:\\ )+", lambda _: r"\s+", re.escape(p))
    return re.compile(rx)


def matches(line: str, printed: list[str]) -> bool:
    pat = shown_pattern(line)
    return any(pat.fullmatch(p.strip()) for p in printed)


# ---- the pages' markers are well formed ---------------------------------------------------------------
def test_every_block_is_run_or_says_why_not():
    """Each marker is one of the four kinds, a skip gives its reason, a covering test exists and reads the
    page, and every page runs at least one command here (nothing silently left out)."""
    for page in PAGES:
        bs = blocks_of(page)
        for b in bs:
            if not b.marker:
                continue
            kind = b.marker.split()[0]
            assert kind in {"file", "skip", "covered", "needs"}, (
                f"{b.where()}: unknown docs-test marker {b.marker!r}"
            )
            if kind in {"skip", "covered"}:
                m = re.fullmatch(r"\w+ \((.{10,})\)", b.marker)
                assert m, f"{b.where()}: a {kind} marker needs its reason in parentheses"
            if kind == "covered":
                ref = re.search(r"(tests/\w+\.py)(?:::(\w+))?", b.marker)
                assert ref, f"{b.where()}: name the covering test file"
                src = (ROOT / ref[1]).read_text(encoding="utf-8")
                assert page.name in src, f"{b.where()}: {ref[1]} does not read {page.name}"
                assert ref[2] is None or f"def {ref[2]}(" in src, f"{b.where()}: no test {ref[2]} in {ref[1]}"
            if kind == "skip":
                assert b.lang in SHELL | PYTHON, f"{b.where()}: skip marker on a {b.lang or 'plain'} block"
        runnable = [b for b in bs if b.lang in SHELL | PYTHON and not b.marker]
        assert runnable, f"{page.relative_to(ROOT)}: no command of this page is run by the suite"


def test_readme_is_short_and_starts_with_the_recipes():
    """Issue 26 §4: README at most 150 lines; its first screen holds the two commands and four recipes."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150
    head = text.split("## External data", 1)[0]
    assert "make paper" in head and "make test" in head
    for recipe in (
        "eval pace_judge --model openai/",
        "-T responses=",
        "--agent my_agent:MyAgent",
        "-T prompt=",
    ):
        assert recipe in head, recipe
    for guide in ("judge", "assistant", "agent", "evaluator"):
        assert f"docs/guides/{guide}.md" in head, guide


def test_readme_links_resolve():
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *PAGES[1:]]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if "://" not in target:
                assert (page.parent / target).exists(), f"{page.relative_to(ROOT)}: broken link {target}"


# ---- running them -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    base = tmp_path_factory.mktemp("newcomer")
    if (ROOT.parent / "shared").is_dir():
        (base / "shared").symlink_to(ROOT.parent / "shared")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(SHOPBENCH_OUTPUTS=str(base / "outputs"), SHOPBENCH_CACHE_DIR=str(base / "cache"),
               LITELLM_LOCAL_MODEL_COST_MAP="True", SHOPBENCH_PROGRESS="off",
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")  # fmt: skip
    return base, env


def page_folder(base: Path, page: Path) -> Path:
    d = base / page.stem
    d.mkdir()
    for name in ("prompts", "docs"):
        (d / name).symlink_to(ROOT / name)
    return d  # ../shared from here is base/shared


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_the_page_runs_as_written(page, sandbox, monkeypatch):
    base, env = sandbox
    work = page_folder(base, page)
    if page.name == "README.md":  # README's recipes use the files their guides ask the reader to save
        readme = page.read_text(encoding="utf-8")
        for guide in PAGES[1:]:
            for name, body in files_of(guide).items():
                if f"`{name}`" in readme:
                    (work / name).write_text(body, encoding="utf-8")
    ran: list[str] = []
    not_run: list[str] = []
    for b in blocks_of(page):
        if b.marker and b.marker.startswith("file "):
            (work / b.marker.split()[1]).write_text(b.body, encoding="utf-8")
            continue
        if b.lang not in SHELL | PYTHON:
            continue
        if b.marker and not b.marker.startswith("needs "):
            not_run.append(f"{b.where()}: {b.marker}")
            continue
        if b.marker:
            need = b.marker.split()[1]
            if not (work / need).exists():
                not_run.append(f"{b.where()}: {need} absent")
                continue
        if b.lang in PYTHON:  # in this process (the imports are warm), from the page's folder
            t0 = time.monotonic()
            with monkeypatch.context() as mp:
                mp.chdir(work)
                mp.syspath_prepend(str(work))
                for k in [k for k in os.environ if k.endswith("_API_KEY")]:
                    mp.delenv(k)
                for k in (
                    "SHOPBENCH_OUTPUTS",
                    "SHOPBENCH_CACHE_DIR",
                    "LITELLM_LOCAL_MODEL_COST_MAP",
                    "SHOPBENCH_PROGRESS",
                ):
                    mp.setenv(k, env[k])
                exec(compile(b.body, b.where(), "exec"), {"__name__": "__docs__"})
            ran.append(f"{b.where()} {time.monotonic() - t0:.0f}s")
            continue
        for c in b.commands:
            t0 = time.monotonic()
            r = subprocess.run(["bash", "-c", c.text], cwd=work, env=env, capture_output=True, text=True,
                               timeout=600)  # fmt: skip
            assert r.returncode == 0, f"{b.where()}: `{c.text}` exited {r.returncode}\n{r.stderr[-3000:]}"
            printed = r.stdout.replace(str(base / "outputs") + "/", "outputs/").splitlines()
            missing = [s for s in c.shown if not matches(s, printed)]
            assert not missing, (
                f"{b.where()}: `{c.text}` did not print {missing}\nit printed:\n{r.stdout[-3000:]}"
            )
            ran.append(f"{b.where()} {time.monotonic() - t0:.0f}s")
    print(f"\n{page.name}: ran {ran}; not run here: {not_run}")
    assert ran
