"""Malformed inputs for every loader, and how each loader answers them (issue 12 §2 and §6).

Each :class:`Case` writes one bad file (or folder) next to valid ones and calls a loader's public
function on it. The answer is classified (:func:`classify`):

- ``clear``: a :class:`~shopbench.errors.UserError` whose message names the file and that carries a
  fix or a field;
- ``no_fix``: an error that names neither a fix nor a field, or not the file;
- ``traceback``: any other exception (``UnicodeDecodeError``, ``KeyError``, a bare ``ValueError`` ...);
- ``silently_accepted``: the loader returned.

``lenient=True`` also counts a ``ValueError`` subclass defined in ``shopbench`` as an error (clear when
its message names the file and has a hint: "field", "fix" or a "; ..." clause): that is how main's
loaders answered before they raised ``UserError``, and the "before" count of the issue uses it.

Valid inputs are made by the project's own writers (a tiny PACEShop build, ``export_human_study`` of
a simulated study, ``AnnotationStore.record``, ``write_pairs``, ``write_esci_fixture``) and then
broken one way each.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from ..errors import UserError

Thunk = Callable[[], Any]


@dataclass(frozen=True)
class Case:
    """One malformed input: ``make(dir, fixtures)`` writes it and returns ``(call, file, where)``:
    the loader call, the file name its error must name, and the place (``"line 2"``, a record id)
    or None when there is no place (a missing file)."""

    name: str
    loader: str
    owner: str  # the loader family: data files (catalogs, records, personas, studies, stores), tau2 and recorded trajectories, profiles
    make: Callable[[Path, Fixtures], tuple[Thunk, str, str | None]]


CASES: list[Case] = []


def case(name: str, loader: str, owner: str = "data files") -> Callable:
    def register(fn: Callable[[Path, Fixtures], tuple[Thunk, str, str | None]]) -> Callable:
        CASES.append(Case(name, loader, owner, fn))
        return fn

    return register


def cases(
    family: str,
    loader: str,
    build: Callable,
    rows: list[tuple[str, Any, str | Callable[[Fixtures], str] | None]],
    owner: str = "data files",
) -> None:
    """Register one case per ``(name, edit, where)`` row: ``build(d, fx, edit)`` writes the broken
    input and returns ``(call, file)``; ``where`` is the place its error must name (None: no place; a
    function: of the fixtures). One row per case of issue 12 §2."""

    def make(d: Path, fx: Fixtures, edit: Any, where: Any) -> tuple[Thunk, str, str | None]:
        call, file = build(d, fx, edit)
        return call, file, where(fx) if callable(where) else where

    for name, edit, where in rows:
        CASES.append(
            Case(f"{family}: {name}", loader, owner, functools.partial(make, edit=edit, where=where))
        )


# ---- valid inputs, made once ---------------------------------------------------------------------


class Fixtures:
    """Valid inputs under ``root``, each made on first use by the project's own writers."""

    def __init__(self, root: Path):
        self.root = root

    @cached_property
    def shop_records(self) -> list[dict]:
        from ..shopsim.catalog.generate import control_catalog

        return [p.to_dict() for p in control_catalog(40, seed=0)[:4]]

    @cached_property
    def build_dir(self) -> Path:
        from ..paceshop.build import BuildConfig, build, write

        cfg = BuildConfig(seed=3, n_products=200, n_candidate_queries=60, n_queries=6, n_personas=20, n_holdout=6,
                          test_goods=4, dev_goods=4, swap_slice=4, s0_per_label=2, calibration_good=2,
                          calibration_bad_per_family=1)  # fmt: skip
        out = self.root / "_build"
        write(build(cfg, progress=False), out, cfg)
        return out

    def build_copy(self, d: Path) -> Path:
        out = d / "build"
        shutil.copytree(self.build_dir, out)
        return out

    @cached_property
    def study_dir(self) -> Path:
        from ..annotate.humanstudy import export_human_study, simulate_panels

        ann, key = simulate_panels(n_pairs=6, panels=2, per_panel=2, seed=1)
        return export_human_study(ann, key, self.root / "_study")

    def study_copy(self, d: Path) -> Path:
        out = d / "study"
        shutil.copytree(self.study_dir, out)
        return out

    @cached_property
    def store_lines(self) -> list[str]:
        from ..annotate.store import AnnotationStore, Slot, now_iso

        st = AnnotationStore(self.root / "_store")
        slots: tuple[Slot, ...] = ("A", "B")
        for i, slot in enumerate(slots):
            st.record("ann1", f"pair-{i}", slot, 50, ("side_a", "side_b"), now_iso())
        return st.path("ann1").read_text(encoding="utf-8").splitlines()

    @cached_property
    def pair_lines(self) -> list[str]:
        from ..annotate.pairs import synthetic_pairs, write_pairs

        p = self.root / "_pairs.jsonl"
        write_pairs(p, synthetic_pairs(3))
        return p.read_text(encoding="utf-8").splitlines()

    @cached_property
    def esci(self) -> tuple[Path, Path]:
        from ..catalog.importers import write_esci_fixture

        return write_esci_fixture(self.root / "_esci", n_queries=5, n_products=40)

    @staticmethod
    def tau_results() -> list[dict]:
        traj = [{"role": "system", "content": "policy"}, {"role": "user", "content": "I want a refund"},
                {"role": "assistant", "content": "Done."}]  # fmt: skip
        return [
            {"task_id": t, "trial": k, "reward": float(k), "traj": traj, "info": {}}
            for t in (0, 1)
            for k in (0, 1)
        ]

    @staticmethod
    def tau2_task(tid: str = "0") -> dict:
        return {"id": tid, "user_scenario": {"instructions": {"reason_for_call": "return an item", "known_info": "",
                                                              "unknown_info": None, "task_instructions": ""}},
                "evaluation_criteria": {"actions": [], "communicate_info": []}}  # fmt: skip

    def tau2_folder(self, d: Path, tasks: Any = None, db: Any = None) -> Path:
        out = d / "tau2"
        out.mkdir()
        tasks = [self.tau2_task("0"), self.tau2_task("1")] if tasks is None else tasks
        (out / "tasks.json").write_text(tasks if isinstance(tasks, str) else json.dumps(tasks))
        db = {"products": {}, "users": {}, "orders": {}} if db is None else db
        (out / "db.json").write_text(json.dumps(db))
        (out / "policy.md").write_text("# Retail policy\n")
        return out


# ---- helpers -------------------------------------------------------------------------------------


def _write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    return path


def _lines(rows: list[dict]) -> list[str]:
    return [json.dumps(r) for r in rows]


def _latin1_line(line: str) -> bytes:
    """The line with its first ASCII letter after a quote replaced by a Latin-1 'é' (not UTF-8)."""
    return line.encode().replace(b'"', b'"\xe9', 1)


def _set(line: str, key: str, raw: str) -> str:
    """The JSON line with the top-level ``key``'s value replaced by the raw text ``raw`` (e.g. NaN)."""
    obj = json.loads(line)
    obj[key] = "__RAW__"
    return json.dumps(obj).replace('"__RAW__"', raw)


def _drop(line: str, key: str) -> str:
    obj = json.loads(line)
    del obj[key]
    return json.dumps(obj)


def _dup_key(line: str, key: str, raw: str) -> str:
    """The JSON line with ``key`` repeated at the end (``"key": raw``): a duplicate key."""
    return line.rstrip()[:-1] + f', "{key}": {raw}}}'


# ---- shop catalog (shopsim.catalog.files.load_products) ------------------------------------------------


_SHOP = "shopsim.catalog.files.load_products"


def _shop(d: Path, fx: Fixtures, edit: Callable[[list[str]], list[str] | bytes], name: str = "catalog.jsonl"):
    """The catalog file ``edit`` makes of the valid records' lines."""
    from ..shopsim.catalog.files import load_products

    lines = edit(_lines(fx.shop_records))
    data = lines if isinstance(lines, bytes) else "\n".join(lines) + "\n"
    p = _write(d / name, data)
    return (lambda: load_products(p)), p.name


@case("shop catalog: missing file", _SHOP)
def _shop_catalog_missing_file(d, fx):
    from ..shopsim.catalog.files import load_products

    return (lambda: load_products(d / "nope.jsonl")), "nope.jsonl", None


cases("shop catalog", _SHOP, _shop, [
    ("empty file", lambda ls: b"", None),
    ("non-UTF-8 byte on line 2", lambda ls: (ls[0] + "\n").encode() + _latin1_line(ls[1]) + b"\n", "line 2"),
    ("invalid JSON on line 3", lambda ls: [*ls[:2], ls[2][:-5], *ls[3:]], "line 3"),
])  # fmt: skip


@case("shop catalog: .json file not JSON", _SHOP)
def _shop_catalog_json_file_not_json(d, fx):
    return (*_shop(d, fx, lambda ls: ['[{"product_id": 1,'], name="catalog.json"), "line 2")


def _pid(i: int) -> Callable[[Fixtures], str]:
    return lambda fx: fx.shop_records[i]["product_id"]


cases("shop catalog", _SHOP, _shop, [
    ("price NaN", lambda ls: [ls[0], _set(ls[1], "price", "NaN"), *ls[2:]], "line 2"),
    ("price Infinity", lambda ls: [_set(ls[0], "price", "Infinity"), *ls[1:]], "line 1"),
    ("price is text", lambda ls: [ls[0], _set(ls[1], "price", '"12.50"'), *ls[2:]], _pid(1)),
    ("title missing", lambda ls: [ls[0], _drop(ls[1], "title"), *ls[2:]], _pid(1)),
    ("duplicate product_id", lambda ls: [*ls, ls[0]], _pid(0)),
    ("duplicate key in a record", lambda ls: [ls[0], _dup_key(ls[1], "price", "1.0"), *ls[2:]], "line 2"),
])  # fmt: skip


@case("shop catalog: top level is a number", _SHOP)
def _shop_catalog_top_level_is_a_number(d, fx):
    return (*_shop(d, fx, lambda ls: ["42"], name="catalog.json"), None)


@case("shop catalog: negative stock", _SHOP)
def _shop_catalog_negative_stock(d, fx):
    rec = dict(fx.shop_records[2], stock=-3, variants=[])
    return (*_shop(d, fx, lambda ls: [*ls[:2], json.dumps(rec), *ls[3:]]), rec["product_id"])


# ---- generic JSON products (catalog.importers.load_json_products) ---------------------------------

_JSON_PRODUCTS = [{"id": i, "title": f"Trail shoe {i}", "brand": "Ridge", "price": 40.0 + i, "category": "shoes"}
                  for i in range(1, 4)]  # fmt: skip


def _jp(d: Path, data: str | bytes):
    from ..catalog.importers import load_json_products

    p = _write(d / "products.json", data)
    return (lambda: load_json_products(p)), p.name


def _jp_text(records: list[dict] | None = None, raw: tuple[int, str, str] | None = None) -> str:
    """The product list as indented JSON (one field per line), with record ``raw[0]``'s field
    ``raw[1]`` set to the raw text ``raw[2]``."""
    recs = [dict(r) for r in (records or _JSON_PRODUCTS)]
    if raw:
        recs[raw[0]][raw[1]] = "__RAW__"
    return json.dumps(recs, indent=1).replace('"__RAW__"', raw[2] if raw else "")


@case("json products: missing file", "catalog.importers.load_json_products")
def _json_products_missing_file(d, fx):
    from ..catalog.importers import load_json_products

    return (lambda: load_json_products(d / "none.json")), "none.json", None


cases("json products", "catalog.importers.load_json_products", lambda d, fx, data: _jp(d, data), [
    ("empty file", "", None),
    ("non-UTF-8", _jp_text().encode().replace(b"Trail shoe 2", b"Trail sh\xf6e 2"), "line"),
    ("invalid JSON", _jp_text()[:-3], "line"),
    ("price NaN", _jp_text(raw=(1, "price", "NaN")), "record 1"),
    ("integer title", _jp_text(raw=(1, "title", "12345")), "record"),
    ("duplicate id", _jp_text(_JSON_PRODUCTS + [_JSON_PRODUCTS[0]]), "record"),
    ("top level is text", '"products"', None),
    ("duplicate key", _jp_text().replace('"brand": "Ridge"', '"brand": "Ridge", "brand": "Other"', 1), "record 0"),
])  # fmt: skip


# ---- ESCI parquet (catalog.importers.load_esci) ---------------------------------------------------


def _esci(d: Path, fx: Fixtures, edit_products=None, edit_examples=None, swap: bool = False):
    import pandas as pd

    from ..catalog.importers import load_esci

    ex_src, pr_src = fx.esci
    ex, pr = pd.read_parquet(ex_src), pd.read_parquet(pr_src)
    if edit_products:
        pr = edit_products(pr)
    if edit_examples:
        ex = edit_examples(ex)
    d.mkdir(parents=True, exist_ok=True)
    ex_p, pr_p = d / "examples.parquet", d / "products.parquet"
    ex.to_parquet(ex_p, index=False)
    pr.to_parquet(pr_p, index=False)
    if swap:
        return (lambda: load_esci(pr_p, ex_p)), ex_p.name
    return (lambda: load_esci(ex_p, pr_p)), (pr_p.name if edit_products else ex_p.name)


@case("esci: products file missing", "catalog.importers.load_esci")
def _esci_products_file_missing(d, fx):
    from ..catalog.importers import load_esci

    ex_src, _ = fx.esci
    return (lambda: load_esci(ex_src, d / "products.parquet")), "products.parquet", None


@case("esci: products file is not parquet", "catalog.importers.load_esci")
def _esci_products_file_is_not_parquet(d, fx):
    from ..catalog.importers import load_esci

    ex_src, _ = fx.esci
    p = _write(d / "products.parquet", "product_id,product_title\n1,a\n")
    return (lambda: load_esci(ex_src, p)), p.name, None


@case("esci: product_title column missing", "catalog.importers.load_esci")
def _esci_product_title_column_missing(d, fx):
    return (*_esci(d, fx, edit_products=lambda pr: pr.drop(columns=["product_title"])), None)


@case("esci: integer product_title column", "catalog.importers.load_esci")
def _esci_integer_product_title_column(d, fx):
    return (*_esci(d, fx, edit_products=lambda pr: pr.assign(product_title=range(len(pr)))), "row")


@case("esci: empty product_id", "catalog.importers.load_esci")
def _esci_empty_product_id(d, fx):
    def edit(pr):
        pr = pr.copy()
        pr.loc[2, "product_id"] = ""
        return pr

    return (*_esci(d, fx, edit_products=edit), "row 2")


@case("esci: unknown esci_label", "catalog.importers.load_esci")
def _esci_unknown_esci_label(d, fx):
    def edit(ex):
        ex = ex.copy()
        ex.loc[3, "esci_label"] = "X"
        return ex

    return (*_esci(d, fx, edit_examples=edit), "row 3")


@case("esci: missing query text", "catalog.importers.load_esci")
def _esci_missing_query_text(d, fx):
    def edit(ex):
        ex = ex.copy()
        ex.loc[1, "query"] = None
        return ex

    return (*_esci(d, fx, edit_examples=edit), "row 1")


@case("esci: examples and products swapped", "catalog.importers.load_esci")
def _esci_examples_and_products_swapped(d, fx):
    return (*_esci(d, fx, swap=True), None)


# ---- PACEShop records (paceshop.build.load_records) ----------------------------------------------


def _records(d: Path, fx: Fixtures, edit: Callable[[list[str]], list[str] | bytes]):
    from ..paceshop.build import load_records

    b = fx.build_copy(d)
    p = b / "records_packaged.jsonl"
    lines = p.read_text(encoding="utf-8").splitlines()[:5]
    out = edit(lines)
    p.write_bytes(out if isinstance(out, bytes) else ("\n".join(out) + "\n").encode())
    return (lambda: load_records(b)), p.name


def _rid(i: int) -> Callable[[Fixtures], str]:
    """The record id on line ``i + 1`` of the valid build's records."""

    def rid(fx: Fixtures) -> str:
        lines = (fx.build_dir / "records_packaged.jsonl").read_text(encoding="utf-8").splitlines()
        return json.loads(lines[i])["record_id"]

    return rid


@case("records: no build folder", "paceshop.build.load_records")
def _records_no_build_folder(d, fx):
    from ..paceshop.build import load_records

    return (lambda: load_records(d / "no_build")), "no_build", None


@case("records: records file missing", "paceshop.build.load_records")
def _records_records_file_missing(d, fx):
    from ..paceshop.build import load_records

    b = fx.build_copy(d)
    (b / "records_packaged.jsonl").unlink()
    return (lambda: load_records(b)), "records_packaged.jsonl", None


cases("records", "paceshop.build.load_records", _records, [
    ("empty records file", lambda ls: b"", None),
    ("invalid JSON on line 2", lambda ls: [ls[0], ls[1][:40], *ls[2:]], "line 2"),
    ("non-UTF-8 byte on line 3", lambda ls: "\n".join(ls[:2]).encode() + b"\n" + _latin1_line(ls[2]) + b"\n", "line 3"),
    ("required field missing", lambda ls: [ls[0], _drop(ls[1], "query"), *ls[2:]], _rid(1)),
    ("duplicate record_id", lambda ls: [*ls, ls[0]], _rid(0)),
    ("tier NaN", lambda ls: [ls[0], _set(ls[1], "tier", "NaN"), *ls[2:]], "line 2"),
    ("tier is text", lambda ls: [ls[0], _set(ls[1], "tier", '"high"'), *ls[2:]], _rid(1)),
])  # fmt: skip


# ---- personas (paceshop.personas.load_personas) --------------------------------------------------


def _load_personas(path: Path) -> Any:
    """``personas.load_personas`` (main before issue 12 had none: then the generic JSONL reader)."""
    from ..paceshop import personas

    if hasattr(personas, "load_personas"):
        return personas.load_personas(path)
    from ..core import Persona
    from ..paceshop.io import read_jsonl

    return read_jsonl(path, Persona)


def _personas(d: Path, fx: Fixtures, edit: Callable[[list[str]], list[str] | bytes]):
    lines = (fx.build_dir / "personas.jsonl").read_text(encoding="utf-8").splitlines()[:4]
    out = edit(lines)
    p = _write(d / "personas.jsonl", out if isinstance(out, bytes) else "\n".join(out) + "\n")
    return (lambda: _load_personas(p)), p.name


@case("personas: missing file", "paceshop.personas.load_personas")
def _personas_missing_file(d, fx):
    return (lambda: _load_personas(d / "personas.jsonl")), "personas.jsonl", None


cases("personas", "paceshop.personas.load_personas", _personas, [
    ("empty file", lambda ls: b"", None),
    ("non-UTF-8 byte on line 2", lambda ls: (ls[0] + "\n").encode() + _latin1_line(ls[1]) + b"\n", "line 2"),
    ("invalid JSON on line 4", lambda ls: [*ls[:3], "{" + ls[3]], "line 4"),
    ("required field missing", lambda ls: [ls[0], _drop(ls[1], "preferences"), *ls[2:]], "line 2"),
    ("duplicate persona_id", lambda ls: [*ls, ls[1]], "line 5"),
])  # fmt: skip


# ---- human study (annotate.humanstudy.load_human_study) ------------------------------------------


def _study(d: Path, fx: Fixtures, edit: tuple[str, Callable[[str], str | bytes]]):
    """The study with its file ``edit[0]`` rewritten by ``edit[1]``."""
    from ..annotate.humanstudy import load_human_study

    rel, edit_text = edit

    s = fx.study_copy(d)
    p = s / rel
    out = edit_text(p.read_text(encoding="utf-8"))
    p.write_bytes(out if isinstance(out, bytes) else out.encode())
    return (lambda: load_human_study(s)), p.name


_ANN = "panel_1/annotator_1.json"


def _first_pref(text: str, raw: str) -> str:
    return re.sub(r'"judge_preference": \d', f'"judge_preference": {raw}', text, count=1)


def _dup_first_row(text: str, indent: int) -> str:
    rows = json.loads(text)
    return json.dumps(rows + [rows[0]], indent=indent)


@case("human study: missing folder", "annotate.humanstudy.load_human_study")
def _human_study_missing_folder(d, fx):
    from ..annotate.humanstudy import load_human_study

    return (lambda: load_human_study(d / "study")), "study", None


_KEY = "answer_key.json"
cases("human study", "annotate.humanstudy.load_human_study", _study, [
    ("answer key not UTF-8", (_KEY, lambda t: t.encode().replace(b'"kept"', b'"k\xe9pt"', 1)), "line"),
    ("annotator file not UTF-8", (_ANN, lambda t: t.encode().replace(b'"id"', b'"\xffid"', 1)), "line"),
    ("judge_preference NaN", (_ANN, lambda t: _first_pref(t, "NaN")), "record 0"),
    ("judge_preference Infinity", (_ANN, lambda t: _first_pref(t, "Infinity")), "record 0"),
    ("judge_preference 2.0", (_ANN, lambda t: _first_pref(t, "2.0")), "row 0"),
    ("judge_preference missing", (_ANN, lambda t: re.sub(r'"judge_preference": \d,?', "", t, count=1)), "row 0"),
    ("confidence is text", (_ANN, lambda t: re.sub(r'"confidence": \d+', '"confidence": "high"', t, count=1)), "row 0"),
    ("duplicate id in an annotator file", (_ANN, lambda t: _dup_first_row(t, indent=1)), "row"),
    ("duplicate key in a row", (_ANN, lambda t: re.sub(r'("judge_preference": \d)', r'\1, "judge_preference": 1', t,
                                                       count=1)), "record 0"),
    ("answer key invalid JSON", (_KEY, lambda t: t[:-10]), "line"),
    ("answer key empty", (_KEY, lambda t: ""), None),
    ("answer key duplicate id", (_KEY, lambda t: _dup_first_row(t, indent=2)), "row"),
])  # fmt: skip


@case("human study: answer key row lacks criterion_name", "annotate.humanstudy.load_human_study")
def _human_study_answer_key_row_lacks_criterion_name(d, fx):
    def edit(t):
        rows = json.loads(t)
        del rows[1]["criterion_name"]
        return json.dumps(rows, indent=2)

    return (*_study(d, fx, (_KEY, edit)), "row 1")


@case("human study: no panel folders", "annotate.humanstudy.load_human_study")
def _human_study_no_panel_folders(d, fx):
    from ..annotate.humanstudy import load_human_study

    s = fx.study_copy(d)
    for p in s.glob("panel_*"):
        shutil.rmtree(p)
    return (lambda: load_human_study(s)), "study", None


@case("human study: a pair rated by two panels", "padme.study.prepare")
def _human_study_a_pair_rated_by_two_panels(d, fx):
    from ..annotate.humanstudy import load_human_study
    from ..padme.study import prepare

    s = fx.study_copy(d)
    shutil.copy(s / _ANN, s / "panel_2" / "annotator_9.json")
    return (lambda: prepare(*load_human_study(s))), "study", None


# ---- annotation store (annotate.store.AnnotationStore.rows) --------------------------------------


def _store(d: Path, fx: Fixtures, edit: Callable[[list[str]], list[str] | bytes]):
    """The answers file ``edit`` makes of the lines of two valid answers."""
    from ..annotate.store import AnnotationStore

    data = edit(fx.store_lines)
    p = _write(d / "answers" / "ann1.jsonl", data if isinstance(data, bytes) else "\n".join(data) + "\n")
    return (lambda: AnnotationStore(p.parent).rows("ann1")), p.name


cases("answer store", "annotate.store.AnnotationStore.rows", _store, [
    ("non-UTF-8 byte on line 2", lambda ls: (ls[0] + "\n").encode() + _latin1_line(ls[1]) + b"\n", "line 2"),
    ("invalid JSON on line 1", lambda ls: ["{not json", ls[1]], "line 1"),
    ("field missing", lambda ls: [ls[0], _drop(ls[1], "confidence")], "line 2"),
    ("confidence 75", lambda ls: [_set(ls[0], "confidence", "75"), ls[1]], "line 1"),
    ("time_spent_s NaN", lambda ls: [ls[0], _set(ls[1], "time_spent_s", "NaN")], "line 2"),
    ("duplicate key", lambda ls: [_dup_key(ls[0], "choice", '"B"'), ls[1]], "line 1"),
])  # fmt: skip


# ---- pair files and tau-bench results (annotate.pairs) -------------------------------------------


def _pairs(d: Path, fx: Fixtures, edit: Callable[[list[str]], list[str] | bytes]):
    """The pairs file ``edit`` makes of the lines of three valid pairs."""
    from ..annotate.pairs import read_pairs

    data = edit(fx.pair_lines)
    p = _write(d / "pairs.jsonl", data if isinstance(data, bytes) else "\n".join(data) + "\n")
    return (lambda: read_pairs(p)), p.name


@case("pairs: missing file", "annotate.pairs.read_pairs")
def _pairs_missing_file(d, fx):
    from ..annotate.pairs import read_pairs

    return (lambda: read_pairs(d / "pairs.jsonl")), "pairs.jsonl", None


cases("pairs", "annotate.pairs.read_pairs", _pairs, [
    ("invalid JSON on line 2", lambda ls: [ls[0], ls[1][:30], ls[2]], "line 2"),
    ("non-UTF-8 byte on line 1", lambda ls: _latin1_line(ls[0]) + b"\n" + "\n".join(ls[1:]).encode() + b"\n", "line 1"),
    ("duplicate pair id", lambda ls: [*ls, ls[0]], "line 4"),
])  # fmt: skip


def _tau(d: Path, data: Any, name: str = "gpt-4o-airline.json"):
    from ..annotate.pairs import pairs_from_tau_bench

    p = _write(d / name, data if isinstance(data, str | bytes) else json.dumps(data, indent=1))
    return (lambda: pairs_from_tau_bench(p)), p.name


@case("tau-bench results: missing file", "annotate.pairs.pairs_from_tau_bench")
def _tau_bench_results_missing_file(d, fx):
    from ..annotate.pairs import pairs_from_tau_bench

    return (lambda: pairs_from_tau_bench(d / "results.json")), "results.json", None


@case("tau-bench results: not a list", "annotate.pairs.pairs_from_tau_bench")
def _tau_bench_results_not_a_list(d, fx):
    return (*_tau(d, {"task_id": 0}), None)


@case("tau-bench results: conversation lacks traj", "annotate.pairs.pairs_from_tau_bench")
def _tau_bench_results_conversation_lacks_traj(d, fx):
    data = fx.tau_results()
    del data[1]["traj"]
    return (*_tau(d, data), "conversation [1]")


@case("tau-bench results: reward NaN", "annotate.pairs.pairs_from_tau_bench")
def _tau_bench_results_reward_nan(d, fx):
    text = json.dumps(fx.tau_results(), indent=1).replace('"reward": 1.0', '"reward": NaN', 1)
    return (*_tau(d, text), "line")


# ---- τ²-bench folders (padme.sources.tau2.load_tau2; owned by h8) ---------------------------------


def _t2(d: Path, fx: Fixtures, tasks: Any = None, db: Any = None):
    from ..padme.sources.tau2 import load_tau2

    f = fx.tau2_folder(d, tasks, db)
    return lambda: load_tau2(f)


@case("tau2: missing folder", "padme.sources.tau2.load_tau2", "tau2 and recorded trajectories")
def _tau2_missing_folder(d, fx):
    from ..padme.sources.tau2 import load_tau2

    return (lambda: load_tau2(d / "tau2_retail")), "tau2_retail", None


@case("tau2: tasks.json invalid JSON", "padme.sources.tau2.load_tau2", "tau2 and recorded trajectories")
def _tau2_tasks_json_invalid_json(d, fx):
    return _t2(d, fx, tasks='[{"id": "0",'), "tasks.json", "line 1"


@case("tau2: tasks.json not UTF-8", "padme.sources.tau2.load_tau2", "tau2 and recorded trajectories")
def _tau2_tasks_json_not_utf_8(d, fx):
    call = _t2(d, fx)
    p = d / "tau2" / "tasks.json"
    p.write_bytes(p.read_bytes().replace(b"return", b"r\xe9turn", 1))
    return call, "tasks.json", "line 1"


@case("tau2: duplicated task id", "padme.sources.tau2.load_tau2", "tau2 and recorded trajectories")
def _tau2_duplicated_task_id(d, fx):
    return _t2(d, fx, tasks=[fx.tau2_task("0"), fx.tau2_task("0")]), "tasks.json", "0"


@case("tau2: reason_for_call missing", "padme.sources.tau2.load_tau2", "tau2 and recorded trajectories")
def _tau2_reason_for_call_missing(d, fx):
    t = fx.tau2_task("0")
    del t["user_scenario"]["instructions"]["reason_for_call"]
    return _t2(d, fx, tasks=[t]), "tasks.json", "0"


@case("tau2: db.json lacks orders", "padme.sources.tau2.load_tau2", "tau2 and recorded trajectories")
def _tau2_db_json_lacks_orders(d, fx):
    return _t2(d, fx, db={"products": {}, "users": {}}), "db.json", None


@case(
    "tau2: db.json order price not a number", "padme.sources.tau2.load_tau2", "tau2 and recorded trajectories"
)
def _tau2_db_json_price_not_a_number(d, fx):
    addr = dict.fromkeys(("address1", "address2", "city", "country", "state", "zip"), "x")
    order = {"order_id": "#W1", "user_id": "u", "address": addr, "status": "pending", "fulfillments": [],
             "payment_history": [], "items": [{"name": "Lamp", "product_id": "1", "item_id": "2", "price": "12",
                                               "options": {}}]}  # fmt: skip
    return _t2(d, fx, db={"products": {}, "users": {}, "orders": {"#W1": order}}), "items[0].price", "#W1"


# ---- recorded trajectories (padme.sources.recorded.load_recorded; owned by h8) --------------------


def _rec(d: Path, data: Any):
    from ..padme.sources.recorded import load_recorded

    p = _write(
        d / "gpt-4o-airline.json", data if isinstance(data, str | bytes) else json.dumps(data, indent=1)
    )
    return (lambda: load_recorded(p)), p.name


@case("recorded: missing path", "padme.sources.recorded.load_recorded", "tau2 and recorded trajectories")
def _recorded_missing_path(d, fx):
    from ..padme.sources.recorded import load_recorded

    return (lambda: load_recorded(d / "trajectories")), "trajectories", None


@case("recorded: not UTF-8", "padme.sources.recorded.load_recorded", "tau2 and recorded trajectories")
def _recorded_not_utf_8(d, fx):
    return (*_rec(d, json.dumps(Fixtures.tau_results(), indent=1).encode().replace(b"refund", b"r\xe9fund", 1)),
            "line")  # fmt: skip


@case("recorded: reward is text", "padme.sources.recorded.load_recorded", "tau2 and recorded trajectories")
def _recorded_reward_is_text(d, fx):
    data = fx.tau_results()
    data[2]["reward"] = "abc"
    return (*_rec(d, data), "conversation [2]")


@case("recorded: reward NaN", "padme.sources.recorded.load_recorded", "tau2 and recorded trajectories")
def _recorded_reward_nan(d, fx):
    return (
        *_rec(d, json.dumps(fx.tau_results(), indent=1).replace('"reward": 1.0', '"reward": NaN', 1)),
        "line",
    )


@case(
    "recorded: conversation lacks traj",
    "padme.sources.recorded.load_recorded",
    "tau2 and recorded trajectories",
)
def _recorded_conversation_lacks_traj(d, fx):
    data = fx.tau_results()
    del data[0]["traj"]
    return (*_rec(d, data), "conversation [0]")


# ---- profiles (config.load_profile; typed profiles owned by h2) -----------------------------------


def _profile(d: Path, edit: Callable[[str], str]):
    from .. import paths
    from ..config import load_profile

    text = (paths.ROOT / "params" / "smoke.yaml").read_text(encoding="utf-8")
    p = _write(d / "mine.yaml", edit(text))
    return (lambda: load_profile(p)), p.name


def _yaml_set(text: str, section: str, key: str, value: str) -> str:
    """``text`` with ``section.key: value`` set (the key added under the section if absent)."""
    import yaml

    data = yaml.safe_load(text)
    data.setdefault(section, {})
    data[section][key] = "__RAW__"
    return yaml.safe_dump(data, sort_keys=False).replace("__RAW__", value)


@case("profile: unknown profile name", "config.load_profile", "profiles")
def _profile_unknown_profile_name(d, fx):
    from ..config import load_profile

    return (lambda: load_profile("nosuch")), "nosuch", None


_GOOGLE_KEY = "AIza" + "SyD-fake0123456789abcdefghijklmnopqr"
cases("profile", "config.load_profile", lambda d, fx, edit: _profile(d, edit), [
    ("invalid YAML", lambda t: t + "\ngateway: [unclosed\n", "line"),
    ("typo gateway.timeout_secs", lambda t: _yaml_set(t, "gateway", "timeout_secs", "30"), None),
    ("top-level typo gatway", lambda t: t + "\ngatway:\n  timeout_s: 30\n", None),
    ("gateway.max_retries -3", lambda t: _yaml_set(t, "gateway", "max_retries", "-3"), None),
    ("gateway.concurrency.openai 0", lambda t: _yaml_set(t, "gateway", "concurrency", "{openai: 0}"), None),
    ("gateway.concurrency.openai many", lambda t: _yaml_set(t, "gateway", "concurrency", "{openai: many}"), None),
    ("paceshop.n_queries true", lambda t: _yaml_set(t, "paceshop", "n_queries", "true"), None),
    ("paceshop.n_queries -40", lambda t: _yaml_set(t, "paceshop", "n_queries", "-40"), None),
    ("judging.repeats one", lambda t: _yaml_set(t, "judging", "repeats", "one"), None),
    ("a Google-style key in a value", lambda t: t + f"\nnotes: {_GOOGLE_KEY}\n", None),
], owner="profiles")  # fmt: skip


# ---- running and classifying ---------------------------------------------------------------------

_HINT = re.compile(r"\bfield\b|\bfix\b|;\s*\w", re.I)


def classify(exc: BaseException | None, file_name: str, lenient: bool = False) -> str:
    """``clear``, ``no_fix``, ``traceback`` or ``silently_accepted`` (see the module docstring)."""
    if exc is None:
        return "silently_accepted"
    msg = str(exc)
    if isinstance(exc, UserError):
        return "clear" if file_name in msg and (exc.fix or exc.field) else "no_fix"
    own = isinstance(exc, ValueError) and type(exc).__module__.startswith("shopbench")
    if lenient and own:
        return "clear" if file_name in msg and _HINT.search(msg) else "no_fix"
    return "traceback"


def run_case(c: Case, root: Path, fx: Fixtures) -> dict:
    """Make the case's input under ``root`` and call its loader; one result row."""
    d = root / re.sub(r"\W+", "_", c.name)
    d.mkdir(parents=True)
    call, file_name, where = c.make(d, fx)
    exc: BaseException | None = None
    try:
        call()
    except Exception as e:  # every exception is what we measure
        exc = e
    msg = "" if exc is None else str(exc)
    return {"case": c.name, "loader": c.loader, "owner": c.owner, "outcome": classify(exc, file_name),
            "outcome_lenient": classify(exc, file_name, lenient=True),
            "exception": None if exc is None else type(exc).__name__, "message": msg[:400],
            "names_file": file_name in msg, "names_place": where is None or where in msg,
            "has_fix": bool(getattr(exc, "fix", None))}  # fmt: skip


def run_all(cases: list[Case] | None = None) -> Iterator[dict]:
    """Every case in a fresh temporary folder (valid fixtures made once)."""
    with tempfile.TemporaryDirectory(prefix="bad_inputs_") as tmp:
        root = Path(tmp)
        fx = Fixtures(root)
        for c in cases or CASES:
            yield run_case(c, root, fx)


def summary(rows: list[dict], key: str = "outcome") -> dict:
    counts = {
        k: sum(r[key] == k for r in rows) for k in ("clear", "no_fix", "traceback", "silently_accepted")
    }
    return {
        "cases": len(rows),
        **counts,
        "clear_error_fraction": round(counts["clear"] / max(1, len(rows)), 4),
    }


if __name__ == "__main__":
    rows = list(run_all())
    for r in rows:
        print(
            f"{r['outcome']:18} {r['outcome_lenient']:18} {r['owner']} {r['case']}: {r['exception']} {r['message'][:150]}"
        )
    print("strict ", summary(rows))
    print("lenient", summary(rows, "outcome_lenient"))
