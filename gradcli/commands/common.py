"""What every command shares: consoles, the error-to-exit-code mapping, JSON on stdout.

Exit codes: 0 success, 1 a check or an assert failed, 2 a user error, 3 a bug in gradcli, and
141 when the reader of stdout went away (`gradcli run --json samples/ | head -c 1`): quietly, the
status a shell reports for any Unix tool that SIGPIPE stopped.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import traceback
from typing import Any, Callable, Iterable, Iterator

import typer
from rich.console import Console
from rich.markup import escape
from rich.segment import Segment

from gradcli.errors import ArgumentError, GradcliError, ProgramAssertionError

EXIT_OK, EXIT_FAILED, EXIT_USER, EXIT_BUG = 0, 1, 2, 3
EXIT_CLOSED_PIPE = 128 + 13  # 128 + SIGPIPE
CHECK_MODES = ("symbolic", "numeric", "all")


class _Console(Console):
    """rich's console, except that a closed pipe ends the command like any other write to it does,
    and no line ends in spaces (rich pads a table's title and caption to the table's width: in a
    pipe or a file they are noise to `diff`, `grep -x` and editors)."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return _TRAILING_SPACES.sub("\n", super()._render_buffer(buffer))


_TRAILING_SPACES = re.compile(r" +\n")


def console(stderr: bool = False) -> Console:
    """Plain text when not a terminal; with NO_COLOR, no escape at all (rich's own NO_COLOR drops the
    colours but keeps bold, dim and italic); width from COLUMNS."""
    plain = "NO_COLOR" in os.environ
    return _Console(stderr=stderr, highlight=False, soft_wrap=False, no_color=plain or None,
                    color_system=None if plain else "auto")


def print_error(view: Any) -> None:
    """Errors go to stderr unwrapped (the terminal wraps them): a message pasted into a search, or
    matched by a script, never breaks mid-sentence at whatever width the console had."""
    console(stderr=True).print(view, soft_wrap=True)


def silence_stdout() -> int:
    """Point stdout at /dev/null, so nothing more is written to the closed pipe; the exit status to use."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # a stdout without a file descriptor (an in-process runner)
        pass
    return EXIT_CLOSED_PIPE


_RAW = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def json_line(payload: dict) -> str:
    """One line of JSON, readable as UTF-8, with every character a terminal acts on escaped (`json` escapes only
    those below a space; DEL, C1 controls such as CSI and bidirectional overrides are escaped here too)."""
    text = json.dumps(payload, ensure_ascii=False)
    return _RAW.sub(lambda found: f"\\u{ord(found.group()):04x}", text) + "\n"


def emit_json(payload: dict) -> None:
    sys.stdout.write(json_line(payload))


@contextlib.contextmanager
def guarded(as_json: bool = False, debug: bool = False) -> Iterator[None]:
    """Turn library errors into styled messages and exit codes; tracebacks only with --debug."""
    from gradcli.views.render import error_view
    try:
        yield
    except GradcliError as exc:
        if debug:
            traceback.print_exc()
        if as_json:
            sys.stderr.write(json_line({"error": exc.to_dict()}))
        else:
            print_error(error_view(exc))
        raise typer.Exit(EXIT_USER) from None
    except ProgramAssertionError as exc:
        if as_json:
            sys.stderr.write(json_line({"error": exc.to_dict()}))
        else:
            print_error(error_view(exc))
        raise typer.Exit(EXIT_FAILED) from None
    except BrokenPipeError:
        raise typer.Exit(silence_stdout()) from None
    except (typer.Exit, typer.Abort, KeyboardInterrupt):
        raise
    except Exception as exc:  # a bug in gradcli, not the user's mistake: say so plainly
        if debug:
            traceback.print_exc()
        message = f"internal error in gradcli: {type(exc).__name__}: {exc}"
        if as_json:
            sys.stderr.write(json.dumps({"error": {"kind": "internal", "message": message, "hint": None,
                                                   "line": None, "column": None}}) + "\n")
        else:
            console(stderr=True).print(f"[bold red]{escape(message)}[/]\n"
                                       "this is a bug; rerun with --debug for the traceback and please report it")
        raise typer.Exit(EXIT_BUG) from None


@contextlib.contextmanager
def budgeted(timeout: float | None, max_memory: str) -> Iterator[None]:
    """The whole command (program, printing, drawing, checking) within --timeout and --max-memory."""
    from gradcli.engine.budget import limited
    if timeout is not None and not timeout > 0:
        raise ArgumentError(f"--timeout {timeout}: the time limit must be a positive number of seconds",
                            hint="e.g. --timeout 60")
    with limited(timeout, memory_size(max_memory)):
        yield


_UNITS = {"": 1, "K": 2 ** 10, "M": 2 ** 20, "G": 2 ** 30, "T": 2 ** 40}


def memory_size(text: str) -> int:
    """`--max-memory 1.5G`: bytes, or a number with K, M, G or T (binary units; a trailing B or iB is allowed)."""
    cleaned = text.strip().upper().removesuffix("IB").removesuffix("B")
    unit = cleaned[-1:] if cleaned[-1:] in _UNITS else ""
    try:
        size = float(cleaned[:len(cleaned) - len(unit)]) * _UNITS[unit]
    except ValueError:
        size = -1.0
    if not 2 ** 20 <= size < 2 ** 60:
        raise ArgumentError(f"--max-memory {text}: give a size of at least 1M, such as 800M or 4G",
                            hint="bytes, or a number with K, M, G or T (powers of 1024)")
    return int(size)


def split_names(text: str | None) -> list[str] | None:
    """`--wrt a,b` into names."""
    if not text:
        return None
    return [n.strip() for n in text.split(",") if n.strip()]


def check_mode(check: str | None, rtol: float | None = None, atol: float | None = None, exact: bool = False) -> None:
    """A known mode, and tolerances that can mean something: a negative or nan one would fail every
    element (or pass every one), and one given without --check (or --exact) would silently do nothing."""
    if check is not None and check not in CHECK_MODES:
        raise ArgumentError(f"--check {check!r} is not a check mode",
                            hint="use --check, --check numeric or --check all (a path or input named right after a "
                                 "bare --check is read as its mode: put --check after it)")
    if exact and check is None:
        raise ArgumentError("--exact is a way of --check, and there is no --check", hint="add --check")
    for flag, value in (("--rtol", rtol), ("--atol", atol)):
        if value is None:
            continue
        if check is None:
            raise ArgumentError(f"{flag} {value:g} is a tolerance of --check, and there is no --check",
                                hint=f"add --check, e.g. --check {flag} {value:g}")
        if not 0 <= value < float("inf"):
            raise ArgumentError(f"{flag} {value:g}: a tolerance is a finite number of at least 0",
                                hint=f"e.g. {flag} {'1e-6' if flag == '--rtol' else '1e-9'}")


def require_known_inputs(wanted: list[str] | None, names: dict[str, str]) -> None:
    """`--wrt` may only name inputs that were given."""
    for name in wanted or []:
        if name not in names:
            raise ArgumentError(f"--wrt {name}: there is no input named '{name}'",
                                hint=f"the inputs are: {', '.join(names) or 'none'}")


def program_inputs(program: str, positional: list[str] | None, options: list[str] | None) -> tuple[str, dict[str, str]]:
    """The program's text and its inputs by name, as the command line gave them.

    `-` reads the program from stdin and `@FILE` from a file (a program that a shell would
    mangle, or a long one). A program the shell split into words (`gradcli eval y = x*2 x=1`
    arrives as `y`, `=`, `x*2`) is named as such, not as an input with an empty name.
    """
    from gradcli.program.evaluation import parse_input_args
    words = list(positional or [])
    if any(word.startswith("=") for word in words):
        split = [w for w in words if w.startswith("=") or "=" not in w]
        given = [w for w in words if w not in split]
        arguments = " ".join([f"'{' '.join([program, *split])}'", *given])
        raise ArgumentError("the program reached gradcli as several arguments: the shell splits it at its spaces",
                            hint=f"quote the program as one argument: {arguments}")
    return _program_text(program), parse_input_args(words + list(options or []))


def _program_text(program: str) -> str:
    if program == "-":
        return sys.stdin.read()
    if program.startswith("@") and "\n" not in program:
        try:
            with open(program[1:], encoding="utf-8") as file:
                return file.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise ArgumentError(f"cannot read the program from '{program[1:]}': {exc.strerror or exc}",
                                hint="give @FILE of a readable text file, - for stdin, or the program itself") from None
    return program


def checked(run: Callable[[Callable[[int, int], None]], Any]) -> Any:
    """Run a check with a progress bar on stderr (shown only if it takes more than about a second)."""
    from gradcli.views.progress import progress_reporter
    with progress_reporter(console(stderr=True)) as progress:
        return run(progress)


@contextlib.contextmanager
def running(as_json: bool, what: str = "running the program") -> Iterator[None]:
    """A spinner on a terminal's stderr while a program runs for over a second (never beside JSON)."""
    if as_json:
        yield
        return
    from gradcli.views.progress import busy
    with busy(console(stderr=True), what):
        yield


def emit_json_with_check(payload: dict, report: Any) -> None:
    """One JSON object on stdout, with `"check"` when a check ran."""
    if report is not None:
        payload["check"] = report.to_json()
    emit_json(payload)


def print_check(report: Any) -> None:
    if report is not None:
        from gradcli.views.check_view import check_view
        console().print(check_view(report))


def exit_if_failed(report: Any) -> None:
    """A failed check is exit code 1, after everything has been shown."""
    if report is not None and report.status == "fail":
        raise typer.Exit(EXIT_FAILED)
