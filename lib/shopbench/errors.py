"""User-facing errors: a mistake in something the user gave, told so they can fix it.

Every loader and the profile validation raise a :class:`UserError` (never a bare ``ValueError``,
``KeyError`` or ``UnicodeDecodeError``): it names the file, the place in it (line or record id),
the field, what is wrong and what to do. The pipeline and the command-line entry points print
``str(err)`` and exit non-zero with no traceback (:func:`exit_on_user_error`).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar


class UserError(ValueError):
    """Something the user supplied is wrong. ``str()`` is one message a user can act on.

    ``file``: the file at fault; ``where``: the line or record (``"line 12"``, ``"record q-017"``);
    ``field``: the key path; ``problem``: what is wrong; ``fix``: what to do about it.
    """

    def __init__(
        self,
        problem: str,
        *,
        file: str | Path | None = None,
        where: str | None = None,
        field: str | None = None,
        fix: str | None = None,
    ) -> None:
        self.problem = problem
        self.file = str(file) if file is not None else None
        self.where = where
        self.field = field
        self.fix = fix
        super().__init__(self._message())

    def _message(self) -> str:
        head = ", ".join(p for p in (self.file, self.where) if p)
        parts = [head] if head else []
        if self.field:
            parts.append(f"field '{self.field}'")
        msg = ": ".join(parts + [self.problem]) if parts else self.problem
        if self.fix:
            msg += f". Fix: {self.fix}"
        return msg


class InputError(UserError):
    """A data file (catalog, personas, records, human study, τ² folder, annotation store) is bad."""


class ParamError(UserError):
    """A parameter file (profile) is unreadable, or a key in it is unknown, missing or of the wrong kind."""

    def __init__(self, problem: str, **kw: Any) -> None:
        # older call sites pass one pre-formatted message
        super().__init__(problem, **kw)


def read_text(path: str | Path, what: str = "file") -> str:
    """A file's text as UTF-8; a missing, empty-handed or non-UTF-8 file is an :class:`InputError`
    naming the line and byte of the first bad byte."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise InputError(f"no such {what}", file=p, fix="check the path in your profile or call") from None
    except IsADirectoryError:
        raise InputError(f"expected a {what}, found a folder", file=p) from None
    except OSError as e:
        raise InputError(f"cannot read the {what}: {e.strerror}", file=p) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise InputError(
            f"not UTF-8 text (byte 0x{data[e.start]:02x} at byte {e.start})",
            file=p,
            where=f"line {line}",
            fix="re-save the file as UTF-8",
        ) from None


F = TypeVar("F", bound=Callable[..., Any])


def exit_on_user_error(fn: F) -> F:
    """Decorator for ``main()`` functions: a :class:`UserError` prints one line and exits 2."""

    @functools.wraps(fn)
    def wrapper(*a: Any, **kw: Any) -> Any:
        try:
            return fn(*a, **kw)
        except UserError as e:
            print(f"error: {e}", file=sys.stderr)
            raise SystemExit(2) from None

    return wrapper  # type: ignore[return-value]
