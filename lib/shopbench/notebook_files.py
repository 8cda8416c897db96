"""Keep the stored notebooks in the form JupyterLab writes back (issue 16 §5).

JupyterLab marks a notebook "modified" as soon as its kernel starts when the file's ``kernelspec``
or ``language_info`` differ from what the kernel reports (it writes both into the metadata). The
pipeline's notebooks are stored with exactly those values, no outputs and no execution counts, so
opening one and running nothing leaves it unmodified, and diffs show only what a person changed.

``python -m shopbench.notebook_files check`` lists notebooks that are not normal (exit 1);
``python -m shopbench.notebook_files normalize`` rewrites them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .paths import ROOT

NOTEBOOKS = ROOT / "notebooks"


def kernel_metadata() -> dict:
    """``kernelspec`` and ``language_info`` as the project's python3 kernel reports them."""
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec("python3")
    return {
        "kernelspec": {"display_name": spec.display_name, "language": spec.language, "name": "python3"},
        "language_info": {
            "codemirror_mode": {"name": "ipython", "version": 3},
            "file_extension": ".py",
            "mimetype": "text/x-python",
            "name": "python",
            "nbconvert_exporter": "python",
            "pygments_lexer": "ipython3",
            "version": sys.version.split()[0],
        },
    }


def normal_form(nb: dict, meta: dict) -> dict:
    """``nb`` with the kernel's metadata and every code cell cleared of outputs and counts."""
    out = dict(nb)
    out["metadata"] = {**nb.get("metadata", {}), **meta}
    cells = []
    for cell in nb.get("cells", []):
        cell = dict(cell)
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        cells.append(cell)
    out["cells"] = cells
    return out


def dumps(nb: dict) -> str:
    """The text JupyterLab saves: one-space indent, keys sorted, a final newline."""
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def not_normal(paths: list[Path] | None = None, *, same_python: bool = True) -> list[Path]:
    """Notebooks not in the stored form; ``same_python=False`` accepts another Python patch release
    in ``language_info.version`` (the test's setting, so a newer interpreter does not fail it)."""
    meta = kernel_metadata()
    bad = []
    for p in paths or sorted(NOTEBOOKS.glob("*.ipynb")):
        text = p.read_text(encoding="utf-8")
        nb = json.loads(text)
        if not same_python:
            stored = nb.get("metadata", {}).get("language_info", {}).get("version")
            meta["language_info"]["version"] = stored or meta["language_info"]["version"]
        if text != dumps(normal_form(nb, meta)):
            bad.append(p)
    return bad


def normalize(paths: list[Path] | None = None) -> list[Path]:
    meta = kernel_metadata()
    changed = not_normal(paths)
    for p in changed:
        p.write_text(dumps(normal_form(json.loads(p.read_text(encoding="utf-8")), meta)), encoding="utf-8")
    return changed


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    cmd = args[0] if args else "check"
    if cmd == "normalize":
        for p in normalize():
            print(f"normalized {p.relative_to(ROOT)}")
        return 0
    bad = not_normal()
    for p in bad:
        print(
            f"{p.relative_to(ROOT)}: not in the stored form (run: python -m shopbench.notebook_files normalize)"
        )
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
