"""External data: the public datasets the workbench reads, where they are expected, and whether they are
there (issue 25 §6).

The datasets are written by others and are not copied into the repository: they live beside it, in
``../shared/data`` (from the repository root), and profiles name them by path
(``padme.sources: [{kind: tau2, path: ../shared/data/tau2_retail}]``, ``padme.recorded``, a
notebook's ``human_study_dir``). :data:`DATASETS` lists each one: its source, licence, the files the
workbench reads with their SHA-256 (of the copies checked here), who reads it, and how to get it.

``python -m shopbench.data`` (``make data``) reports each dataset: present or not, its path, its files
and whether their checksums match. ``--fetch`` downloads the missing ones whose source is a plain
https download (tau2-bench and tau-bench files on GitHub at a fixed commit), each file checked against
its SHA-256 before it is put in place; for the others it prints exactly how to obtain them.
``pipeline check`` uses :func:`missing_files` to stop a profile that needs a missing dataset before
any notebook runs (:mod:`shopbench.plancheck`).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from .errors import exit_on_user_error
from .paths import ROOT

DEFAULT_DIR = ROOT.parent / "shared" / "data"
"""``../shared/data`` from the repository root."""
TAU2_COMMIT = "a2c024725189473d2d7cea3a5cfdbcc67478e41f"
"""The tau2-bench commit whose retail files the project's τ² code was checked against (byte-identical;
``domains/tau2_retail/reference``)."""
TAU_BENCH_REF = "main"
_TAU2 = f"https://raw.githubusercontent.com/sierra-research/tau2-bench/{TAU2_COMMIT}"
_TAU = f"https://raw.githubusercontent.com/sierra-research/tau-bench/{TAU_BENCH_REF}"


@dataclass(frozen=True)
class Dataset:
    """One public dataset: ``folder`` under the data directory, the files read (name → SHA-256), the
    ones a run cannot do without (``required``), where each file comes from (``urls``, plain https) or,
    when there is no plain download, how to obtain it (``how``)."""

    folder: str
    title: str
    source: str
    licence: str
    read_by: str
    files: dict[str, str]
    required: tuple[str, ...]
    urls: dict[str, str] = field(default_factory=dict)
    how: str = ""
    profile_key: str = ""  # the profile key (or notebook parameter) that points at it

    def path(self, data_dir: Path | None = None) -> Path:
        return (data_dir or DEFAULT_DIR) / self.folder


DATASETS: dict[str, Dataset] = {
    d.folder: d
    for d in (
        Dataset(
            folder="tau2_retail",
            title="τ²-bench retail domain",
            source=f"github.com/sierra-research/tau2-bench, commit {TAU2_COMMIT[:7]}, data/tau2/domains/retail",
            licence="MIT",
            read_by="notebook 40 (the τ² trajectory source, the τ² fidelity table); the preview (agent prompt sizes)",
            files={
                "db.json": "413a65160adbdb5fde0ffc0015c49b6d70250b10c18128de169b597af7766765",
                "tasks.json": "8e03ebce7901bd6218e7a7dc3105faa9324091a68058f7fe61c65262868812e8",
                "policy.md": "2c9652afbce57d6e087768d37cda64d31c53d50b3e3225cfdb791bac66466467",
                "split_tasks.json": "ed0580ec52575b63fbf76568af42490da6ee7783ecb4aa81af46961291358f20",
                "LICENSE": "e67c5aa0074dfcaefd3c3a1aedb94cb539234aecd15d5a972574e3200e6252fe",
            },
            required=("db.json", "tasks.json", "policy.md"),
            urls={
                **{
                    f: f"{_TAU2}/data/tau2/domains/retail/{f}"
                    for f in ("db.json", "tasks.json", "policy.md", "split_tasks.json")
                },  # fmt: skip
                "LICENSE": f"{_TAU2}/LICENSE",
            },
            profile_key="padme.sources[].path ({kind: tau2, path: ...})",
        ),
        Dataset(
            folder="tau_bench_airline_trajectories",
            title="τ-bench airline trajectories (gpt-4o)",
            source="github.com/sierra-research/tau-bench, historical_trajectories/gpt-4o-airline.json",
            licence="MIT",
            read_by="notebook 50 (evaluators against the environment reward); notebooks 60/70 with source tau_bench; "
            "the preview (evaluator prompt sizes)",
            files={
                "gpt-4o-airline.json": "e9e6c0297660c537f83d4fd9c476ce7a9a86ecd2784874b7bfc13be598e37bfa",
                "policy.md": "56c335801c16e26b54f600f9db99eb04d31db477e86eb160341d5c66b796c5c8",
                "LICENSE": "243d23d45b80122b5ac575586ccef352fdc9c45e6d7d2605449aca8a17478b42",
            },
            required=("gpt-4o-airline.json",),
            urls={
                "gpt-4o-airline.json": f"{_TAU}/historical_trajectories/gpt-4o-airline.json",
                "policy.md": f"{_TAU}/tau_bench/envs/airline/wiki.md",
                "LICENSE": f"{_TAU}/LICENSE",
            },
            profile_key="padme.recorded; the tau_bench_path parameter of notebooks 60 and 70",
        ),
        Dataset(
            folder="padme_human_study",
            title="PADMÉ human study (150 pairs, 6 annotators)",
            source="the PADMÉ paper's released human-study files",
            licence="MIT",
            read_by="notebook 70 (agreement statistics; simulated panels when absent)",
            files={
                "answer_key.json": "e23781cec5a08aa13ad0ef5592b0555c869398704de62476c7be8d7929e2c921",
                "criteria.json": "cd6ecf3d2284745e4eacc9f8703d851620b7819465d44c6fb21adcd5b3f712e1",
                "sampling.json": "a3707a6947b2e3dc8bb57b5d80c0264b8e71442290d47f9cf7a0228411be3671",
                "panel_1/annotator_1.json": "24f1917a551355acac7dde428fd89fa127537a8fb7088aa5aee058d124fa932e",
                "panel_1/annotator_2.json": "dc2480a3920adf8484753af56d4bcb32d9cb6f76d89141847df2f1aa58c3b50d",
                "panel_1/annotator_3.json": "2f2cac21036ca2ba78b2f208a4866d7f8d55819db336e929f325a68b25a1093a",
                "panel_2/annotator_4.json": "afe8fc6778de798b4eb04e2ab3d3017b393e68f2078c38144e8004d8d95e7585",
                "panel_2/annotator_5.json": "33c30c1cae83b1fa38d4c366d05df97d946a625ce31e880e9a8164084308e145",
                "panel_2/annotator_6.json": "85ca1dd1e728d054671bbf15772e209ea2b8bbd9c35f7b080383677d56e0bfb5",
            },
            required=("answer_key.json",),
            how="no plain download: the files were transcribed from the PADMÉ release's stored text (layout in "
            "lib/shopbench/annotate/humanstudy.py). Copy a PADMÉ release's human-study folder (answer_key.json, "
            "criteria.json, sampling.json, panel_1/, panel_2/) to {path}; `python -m shopbench.data` then "
            "says whether it is the copy this project checked",
            profile_key="the human_study_dir parameter of notebook 70",
        ),
        Dataset(
            folder="catalog_dummyjson",
            title="DummyJSON products (194 products, 24 categories)",
            source="dummyjson.com, its products API (github.com/Ovi/DummyJSON)",
            licence="MIT",
            read_by="a profile whose catalog is {json: ../shared/data/catalog_dummyjson/products.json} (none by "
            "default); tests of the catalog importers",
            files={
                "products.json": "3de51f68955246ff09fdd0d776dc5f662d2f58a9e83794ff5064886a72424322",
                "LICENSE": "a154b5c7abadcb881866862014e8e4f27996640bdb32a9c0c37e3eec5d1ada6b",
            },
            required=("products.json",),
            how="no fixed file: the products come from DummyJSON's API. Run `curl -s "
            "'https://dummyjson.com/products?limit=0' | python -c \"import json,sys; "
            "json.dump(json.load(sys.stdin)['products'], sys.stdout, indent=2)\" > {path}/products.json` and copy "
            "DummyJSON's MIT LICENSE beside it (the API's answer may differ in bytes from the copy checked here)",
            profile_key="paceshop.catalog / shopsim.catalog ({json: ...})",
        ),
    )
}


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def missing_files(folder: Path, ds: Dataset) -> list[str]:
    """The required files of ``ds`` that are not in ``folder`` (no checksum: a cheap look)."""
    return [f for f in ds.required if not (folder / f).is_file()]


def dataset_for(folder: Path) -> Dataset | None:
    """The dataset a folder holds, by its name (``.../tau2_retail`` → τ²-retail)."""
    return DATASETS.get(folder.name)


@dataclass
class Status:
    dataset: Dataset
    path: Path
    missing: list[str]
    bad: list[str]  # present, checksum differs
    ok: list[str]

    @property
    def present(self) -> bool:
        return not any(f in self.missing for f in self.dataset.required)

    def line(self) -> str:
        d = self.dataset
        if not self.path.is_dir():
            return f"{d.folder}: MISSING ({self.path}); {_how(d, self.path)}"
        state = "present" if self.present else "INCOMPLETE"
        parts = [f"{len(self.ok)} of {len(d.files)} files checksum ok"]
        if self.bad:
            parts.append(f"checksum differs: {', '.join(self.bad)}")
        if self.missing:
            parts.append(f"missing: {', '.join(self.missing)}")
        return f"{d.folder}: {state} ({self.path}); " + "; ".join(parts)


def status(ds: Dataset, data_dir: Path | None = None) -> Status:
    path = ds.path(data_dir)
    missing, bad, ok = [], [], []
    for name, digest in ds.files.items():
        f = path / name
        if not f.is_file():
            missing.append(name)
        elif sha256(f) != digest:
            bad.append(name)
        else:
            ok.append(name)
    return Status(ds, path, missing, bad, ok)


def _how(ds: Dataset, path: Path) -> str:
    if ds.urls:
        return (
            f"fetch it with `make data` (python -m shopbench.data --fetch; downloads from {ds.source} over "
            "https, checksums checked), or copy the published files there"
        )
    return ds.how.format(path=path)


def fetch(ds: Dataset, data_dir: Path | None = None, opener=urllib.request.urlopen) -> list[str]:
    """Download the files of ``ds`` that are missing, each checked against its SHA-256 before it is put in
    place; returns what went wrong (empty: all there). Only for datasets with plain https ``urls``."""
    path = ds.path(data_dir)
    problems = []
    for name, url in ds.urls.items():
        dest = path / name
        if dest.is_file():
            continue
        try:
            with opener(url, timeout=60) as r:
                body = r.read()
        except Exception as e:  # noqa: BLE001 - no network, 404: said, and the next file is tried
            problems.append(f"{name}: cannot download {url} ({e})")
            continue
        got = hashlib.sha256(body).hexdigest()
        if got != ds.files[name]:
            problems.append(
                f"{name}: {url} has SHA-256 {got[:12]}…, expected {ds.files[name][:12]}…; not installed"
            )
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(dest.name + ".part")
        tmp.write_bytes(body)
        tmp.replace(dest)
    return problems


@exit_on_user_error
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m shopbench.data", description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--dir", type=Path, default=DEFAULT_DIR, help=f"the data directory (default {DEFAULT_DIR})"
    )
    ap.add_argument(
        "--fetch", action="store_true", help="download missing datasets that have a plain https source"
    )
    ap.add_argument("names", nargs="*", help=f"datasets (default: all): {', '.join(DATASETS)}")
    a = ap.parse_args(argv)
    unknown = [n for n in a.names if n not in DATASETS]
    if unknown:
        print(f"unknown datasets {unknown}; known: {', '.join(DATASETS)}", file=sys.stderr)
        return 2
    failed = False
    for name in a.names or list(DATASETS):
        ds = DATASETS[name]
        if a.fetch and ds.urls and status(ds, a.dir).missing:
            print(f"{name}: fetching from {ds.source} ...", flush=True)
            for p in fetch(ds, a.dir):
                print(f"{name}: {p}", file=sys.stderr)
        st = status(ds, a.dir)
        print(st.line())
        failed |= bool(st.bad) or not st.present
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
