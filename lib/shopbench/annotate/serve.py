"""Serve the annotation notebook with Voila on this machine: ``python -m shopbench.annotate.serve``.

Voila listens on 127.0.0.1 only (on ``--port``, or a free port), with ``--Voila.port_retries=0``
(the printed URL is the one it listens on, or it fails). The settings of ``voila.json`` beside this
file apply: idle kernels of closed pages are culled, and Voila's kernel-shutdown request on page
close works because the XSRF check is disabled, which is safe only because nothing but this
machine can reach the server: a non-loopback ``--ip`` is refused.

How a page knows who annotates what (each read by :func:`settings` in the notebook):

* environment variables, set by this launcher from its options, for the whole server:
  ``SHOPBENCH_ANNOTATOR`` (default annotator), ``SHOPBENCH_ANNOTATION_STORE`` (answers folder),
  ``SHOPBENCH_ANNOTATION_SOURCE`` (``paceshop`` | ``tau_bench``), ``SHOPBENCH_ANNOTATION_PAIRS``
  (how many pairs), ``SHOPBENCH_ANNOTATION_PROFILE`` (profile), ``SHOPBENCH_TAU_BENCH_PATH``,
  ``SHOPBENCH_ANNOTATION_PAIRS_FILE`` (``--pairs FILE``: a pair set served exactly as it is, e.g. a
  selection exported from the results explorer; checked here before Voila starts, so a missing or
  malformed file is one message naming it, exit 2, and never a traceback on an annotator's page);
* the query parameter ``annotator``, per page: ``http://127.0.0.1:PORT/?annotator=alice`` lets
  several annotators share one server, each with their own file. A URL never chooses a folder.

Precedence: query parameter, then environment, then the notebook's own parameters.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import re
import socket
import sys
import tempfile
from pathlib import Path
from urllib.parse import parse_qs, quote

from ..errors import exit_on_user_error
from ..paths import NOTEBOOKS_DIR

HERE = Path(__file__).resolve().parent
NOTEBOOK = NOTEBOOKS_DIR / "60_annotate_pairs.ipynb"
ENV = {
    "annotator": "SHOPBENCH_ANNOTATOR",
    "store_dir": "SHOPBENCH_ANNOTATION_STORE",
    "source": "SHOPBENCH_ANNOTATION_SOURCE",
    "n_pairs": "SHOPBENCH_ANNOTATION_PAIRS",
    "profile": "SHOPBENCH_ANNOTATION_PROFILE",
    "tau_bench_path": "SHOPBENCH_TAU_BENCH_PATH",
    "pairs_file": "SHOPBENCH_ANNOTATION_PAIRS_FILE",
}
QUERY_KEYS = ("annotator",)


def in_voila() -> bool:
    """Whether this kernel was started by Voila for a page (Voila sets these in the kernel's environment)."""
    return "VOILA_REQUEST_URL" in os.environ or "VOILA_APP_PORT" in os.environ


def settings(**params) -> dict:
    """The notebook's parameters with the server's environment and the page's query applied."""
    out = dict(params)
    for key, var in ENV.items():
        if os.environ.get(var):
            out[key] = os.environ[var]
    if in_voila():
        query = parse_qs(os.environ.get("QUERY_STRING", ""))
        for key in QUERY_KEYS:
            if query.get(key) and query[key][0]:
                out[key] = query[key][0]
    if "n_pairs" in out and out["n_pairs"] is not None:
        out["n_pairs"] = int(out["n_pairs"])
    return out


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


OFFLINE_TEMPLATE = "shopbench-offline"
_REMOTE_ASSET = re.compile(
    r"^\s*<(link|script)\b[^>]*\b(href|src)=\"https?://[^\"]*\"[^>]*>(\s*</script>)?\s*$\n?", re.M | re.I
)


def offline_template(root: str | Path | None = None) -> Path:
    """A Voila template that loads nothing from outside this machine.

    Voila's ``lab`` template links Font Awesome from a public CDN (two ``<link>`` tags in its
    ``index.html.j2``): offline they fail, and on a network they tell a third party who opened the
    page. This writes ``<root>/voila/templates/shopbench-offline/`` from the *installed* lab
    template with every remote ``<link>``/``<script>`` line removed (Voila's own bundle already
    carries the icon fonts), on top of ``lab`` (``conf.json``). Returns ``<root>``, a Jupyter data
    directory to put first on ``JUPYTER_PATH``.
    """
    from voila.paths import collect_template_paths

    root = Path(root or tempfile.mkdtemp(prefix="shopbench-voila-"))
    src = next(Path(p) / "index.html.j2" for p in collect_template_paths(["voila"], "lab", prune=True)
               if (Path(p) / "index.html.j2").exists())  # fmt: skip
    dest = root / "voila" / "templates" / OFFLINE_TEMPLATE
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "index.html.j2").write_text(
        _REMOTE_ASSET.sub("", src.read_text(encoding="utf-8")), encoding="utf-8"
    )
    (dest / "conf.json").write_text(json.dumps({"base_template": "lab"}), encoding="utf-8")
    return root


def last_built_profile() -> str | None:
    """The profile whose ``make paper`` finished last (newest ``outputs/<profile>/paper/run.json``)."""
    from ..paths import outputs_root

    runs = sorted(outputs_root().glob("*/paper/run.json"), key=lambda p: p.stat().st_mtime)
    return runs[-1].parent.parent.name if runs else None


def voila_argv(notebook: str | Path, port: int, ip: str = "127.0.0.1") -> list[str]:
    """Voila's command line: the settings of ``voila.json`` beside this file, then port and address."""
    if not is_loopback(ip):
        raise SystemExit(f"refusing to serve on {ip}: the annotation server disables XSRF checks and binds "
                         "loopback addresses only (127.0.0.1, ::1); reach it from elsewhere over an SSH tunnel")  # fmt: skip
    return [str(notebook), f"--Voila.config_file_paths={HERE}", f"--Voila.ip={ip}", f"--Voila.port={port}",
            "--Voila.port_retries=0", "--no-browser", f"--VoilaConfiguration.template={OFFLINE_TEMPLATE}"]  # fmt: skip


@exit_on_user_error
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m shopbench.annotate.serve", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--annotator", help="default annotator id (a page may pass ?annotator=ID)")
    ap.add_argument("--store", help="answers folder (default: outputs/<profile>/annotations)")
    ap.add_argument("--source", choices=["paceshop", "tau_bench", "padme"], help="which pairs to annotate")
    ap.add_argument("--n-pairs", type=int, help="how many pairs")
    ap.add_argument("--pairs", metavar="FILE",
                    help="a pair set (JSONL) to annotate exactly, e.g. the explorer's 'Export selection as pairs'")  # fmt: skip
    ap.add_argument(
        "--profile", help="profile name or YAML path (default: the profile built last, else smoke)"
    )
    ap.add_argument("--tau-bench-path", help="tau-bench results JSON (for --source tau_bench)")
    ap.add_argument("--notebook", default=str(NOTEBOOK), help="the notebook to serve")
    ap.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    ap.add_argument("--ip", default="127.0.0.1", help="loopback address to listen on")
    a = ap.parse_args(argv)
    nb = Path(a.notebook).resolve()
    if not nb.exists():
        ap.error(f"notebook {nb} does not exist (python -m shopbench.annotate.notebook writes it)")
    if a.pairs is not None:
        if a.source or a.n_pairs is not None:
            ap.error("--pairs serves exactly the pairs of its file: drop --source and --n-pairs")
        from .pairs import read_pair_set

        n = len(read_pair_set(a.pairs))  # a missing or malformed file: one message naming it (exit 2)
        print(f"pairs: the {n} pairs of {Path(a.pairs).resolve()}", flush=True)
    if a.profile is None:
        a.profile = last_built_profile()
        print(f"profile: {a.profile or 'smoke'} "
              f"({'the one built last' if a.profile else 'no profile built yet'}; --profile or PROFILE= to choose)")  # fmt: skip
    values = {"annotator": a.annotator, "store_dir": a.store, "source": a.source, "n_pairs": a.n_pairs,
              "profile": a.profile, "tau_bench_path": a.tau_bench_path, "pairs_file": a.pairs}  # fmt: skip
    for key, value in values.items():
        if value is not None:
            if key in ("store_dir", "tau_bench_path", "pairs_file"):
                value = str(Path(value).resolve())
            os.environ[ENV[key]] = str(value)
    if a.annotator:
        from .store import check_annotator

        check_annotator(a.annotator)
    port = a.port or free_port(a.ip)
    host = f"[{a.ip}]" if ":" in a.ip else a.ip
    url = f"http://{host}:{port}/"
    print(
        f"annotation server: {url}" + (f"?annotator={quote(a.annotator)}" if a.annotator else ""), flush=True
    )
    print(f"  other annotators: {url}?annotator=<id>; answers in "
          f"{os.environ.get(ENV['store_dir']) or 'outputs/<profile>/annotations'}; Ctrl-C stops", flush=True)  # fmt: skip
    data_dir = offline_template()
    os.environ["JUPYTER_PATH"] = os.pathsep.join(
        p for p in (str(data_dir), os.environ.get("JUPYTER_PATH")) if p
    )
    from voila.app import main as voila_main

    voila_main(argv=voila_argv(nb, port, a.ip))
    return 0


if __name__ == "__main__":
    sys.exit(main())
