"""Issue 25 §4 (finding 4): Ctrl-C stops the pipeline with one line and exit 130, and the terminal shows
each sweep's units, calls, errors and ETA while a notebook runs."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shopbench.paths import ROOT
from shopbench.progress import FILE_ENV
from shopbench.runprogress import Watcher, read_progress, stopped_line, sweep_text

FIXTURE = ROOT / "tests" / "fixtures" / "pipeline_interrupt"  # a one-notebook pipeline: a slow anytime sweep
RUN = (
    "import sys; from pathlib import Path; import shopbench.pipeline as p, shopbench.pipeline_steps as s; d = Path(sys.argv[1]); "
    "s.PIPELINE_FILE = d / 'pipeline.yaml'; s.NOTEBOOKS_DIR = d; sys.exit(p.main(sys.argv[2:]))"
)


def _pipeline(out: Path, *args: str) -> subprocess.Popen:
    env = dict(os.environ, SHOPBENCH_OUTPUTS=str(out), LITELLM_LOCAL_MODEL_COST_MAP="True")
    env.pop(FILE_ENV, None)
    cmd = [sys.executable, "-c", RUN, str(FIXTURE), "run", "--profile", "smoke", "--only", "99_slow_sweep",
           "--no-preview", *args]  # fmt: skip
    # its own process group, as a terminal's foreground job: Ctrl-C signals the whole group
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
                            start_new_session=True)  # fmt: skip


def test_ctrl_c_is_one_line_exit_130_and_the_rerun_resumes(tmp_path):
    out = tmp_path / "out"
    proc = _pipeline(out)
    progress = out / "smoke" / "progress" / "99_slow_sweep.json"
    deadline = time.time() + 240  # a kernel start and the imports: slow on a loaded machine
    done = 0
    while time.time() < deadline and proc.poll() is None:
        sweeps = read_progress(progress)
        done = sweeps[-1]["done"] if sweeps else 0
        if done >= 5:
            break
        time.sleep(0.2)
    if done < 5:
        proc.kill()
        pytest.fail(f"the sweep never got going: {proc.communicate()}")
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, (stdout, stderr)
    assert "Traceback" not in stdout + stderr, (stdout, stderr)
    lines = [x for x in stderr.splitlines() if x.strip()]
    assert len(lines) == 1, (stdout, stderr)
    line = lines[0]
    assert line.startswith("[smoke] stopped in 99_slow_sweep; ") and line.endswith(
        "; rerun the same command to resume"
    )
    n = int(line.split("; ")[1].split(" of ")[0])
    assert 5 <= n < 40 and " of 40 units done" in line
    # the same command again: the units done before are answered from the cache, the rest are made
    again = _pipeline(out)
    stdout, stderr = again.communicate(timeout=300)
    assert again.returncode == 0, (stdout, stderr)
    rows = [
        json.loads(x) for x in (out / "smoke" / "calls" / "99_slow_sweep_echo.jsonl").read_text().splitlines()
    ]
    assert len(rows) == 40 and sum(r["cache_hit"] for r in rows) >= n
    assert "slow sweep 40/40 units · 40 calls · done" in stdout  # the finished sweep, on the terminal


@pytest.fixture
def progress_file(tmp_path, monkeypatch):
    path = tmp_path / "progress.json"
    monkeypatch.setenv(FILE_ENV, str(path))
    monkeypatch.setenv("SHOPBENCH_PROGRESS", "off")  # no bar drawn; the file is still written
    return path


def test_sweep_line_counts_units_calls_errors_and_parse_failures(progress_file, gateway):
    """A real anytime sweep through the gateway: 3 answers, 2 contract failures, 2 unreachable server calls."""
    from shopbench.llm import parse_backbones
    from shopbench.llm.anytime import run_anytime

    down = {"name": "down", "model": "openai/x", "api_base": "http://127.0.0.1:9/v1"}
    gw = gateway(max_retries=0, progress=True, backbones=parse_backbones(["local/echo", down]))
    schema = {"type": "object", "properties": {"label": {"enum": ["a"]}}, "required": ["label"]}

    def calls_of(u):
        msgs = [{"role": "user", "content": f"unit {u}"}]
        if u < 3:
            return [gw.call("local/echo", f"u{u}", msgs)]
        return (
            [gw.call("local/echo", f"u{u}", msgs, schema=schema)]
            if u < 5
            else [gw.call("down", f"u{u}", msgs)]
        )

    run_anytime(gw, list(range(7)), calls_of, lambda b: gw.run([c for u in b for c in calls_of(u)], run_id="t/x"),
                budget_s=None, name="judge demo")  # fmt: skip
    (s,) = read_progress(progress_file)
    assert (s["done"], s["total"], s["calls"], s["errors"], s["parse_failures"]) == (7, 7, 7, 2, 2)
    out = io.StringIO()
    Watcher("paper", "20_pace_judge_sweep", progress_file, out=out, tty=False).poll(final=True)
    assert out.getvalue() == (
        "[paper] 20_pace_judge_sweep: judge demo 7/7 units · 7 calls · 2 errors · 2 parse failures · done\n"
    )


def test_open_sweep_shows_eta_and_a_tty_gets_one_updating_line(tmp_path):
    now = time.time()
    s = {"name": "judge smol", "unit": "unit", "done": 12, "total": 20, "calls": 120, "errors": 3,
         "parse_failures": 12, "started": now - 60, "eta_s": None, "open": True}  # fmt: skip
    assert sweep_text(s, now) == "judge smol 12/20 units · 120 calls · 3 errors · 12 parse failures · ETA 40s"
    assert sweep_text(s | {"eta_s": 250.0}, now).endswith("ETA 4m10s")  # an anytime sweep's own estimate
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"sweeps": [s]}))
    out = io.StringIO()
    w = Watcher("paper", "20_pace_judge_sweep", path, out=out, tty=True, every_s=0)
    w.poll()
    path.write_text(json.dumps({"sweeps": [s | {"done": 13}]}))
    w.poll()
    w.stop()
    text = out.getvalue()
    assert text.count("\r") == 2 and text.count("\n") == 1 and text.endswith("\n")  # rewritten in place


def test_stopped_line_without_a_progress_file_counts_logged_calls(tmp_path):
    calls = tmp_path / "calls"
    calls.mkdir()
    rows = [{"status": "ok"}, {"status": "parse_error"}, {"status": "error"}]
    (calls / "40_padme_synthesis_steering.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert stopped_line("smoke", "40_padme_synthesis", tmp_path, 3, 9) == (
        "[smoke] stopped in 40_padme_synthesis; 2 calls done; 3 of 9 notebooks done; rerun the same command to resume"
    )


def test_stopped_line_names_the_sweep_cut_short_even_when_its_bar_closed(tmp_path):
    """The kernel's shutdown may close the interrupted sweep's bar before the pipeline writes its line."""
    (tmp_path / "progress").mkdir()
    done = {"name": "GOOD responses", "unit": "it", "done": 160, "total": 160, "open": False}
    cut = {"name": "judge smol", "unit": "unit", "done": 7, "total": 20, "calls": 35, "open": False}
    f = tmp_path / "progress" / "20_pace_judge_sweep.json"
    f.write_text(json.dumps({"sweeps": [done, cut]}))
    assert stopped_line("paper", "20_pace_judge_sweep", tmp_path, 2, 10) == (
        "[paper] stopped in 20_pace_judge_sweep; 7 of 20 units done (sweep 'judge smol', 35 calls); "
        "2 of 10 notebooks done; rerun the same command to resume"
    )
    f.write_text(json.dumps({"sweeps": [done]}))  # every sweep finished: no units to name
    assert stopped_line("paper", "20_pace_judge_sweep", tmp_path, 2, 10) == (
        "[paper] stopped in 20_pace_judge_sweep; 2 of 10 notebooks done; rerun the same command to resume"
    )


@pytest.mark.parametrize("drawn", [True, False])
def test_an_iterated_bar_counts_each_item_once(tmp_path, monkeypatch, drawn):
    """A drawn bar's own iteration calls update() at each redraw; the progress file still counts 1 per item
    (notebook 10 once showed "BAD tiers 8946/4525 steps")."""
    from shopbench.progress import tqdm

    path = tmp_path / "progress.json"
    monkeypatch.setenv(FILE_ENV, str(path))
    monkeypatch.setenv("SHOPBENCH_PROGRESS", "auto" if drawn else "off")
    bar = tqdm(range(300), desc="items", file=io.StringIO(), mininterval=0, miniters=1)
    for _ in bar:
        pass
    bar.close()
    (s,) = read_progress(path)
    assert (s["name"], s["done"], s["total"]) == ("items", 300, 300)
