"""Every `$ gradcli ...` example in README.md and docs/*.md prints what the page shows.

An example is a ```text block: a `$ gradcli ...` line (a quoted program may run over several
lines), then its output up to the next `$` line or the block's end. It runs in-process through
the CLI, as the other golden tests do (NO_COLOR=1, COLUMNS=100), in a fresh temporary directory
laid out like the checkout (a copy of docs/examples/, a link to samples/), so a path works as
written from the repository's root and files an example writes are the test's own. Besides
`gradcli`, a block may show `$ cat FILE` (the file, as docs/examples/ holds it or as the example
wrote it) and `$ echo $?` (the exit code of the command before); any other `$` line
in a ```text block fails, so no example looks tested while it is not (use ```console for those).

The comparison is exact, except that trailing spaces are ignored, a line `...` stands for any
lines the page leaves out, and run times (`0.60s`, `"seconds": 0.0009`) are not compared. A block
right after `<!-- output varies: exit code only -->` is checked for its exit code only: 0, or what
its `$ echo $?` shows. Without `$ echo $?` an example may exit 0, 1 or 2, never 3 (a bug).

`python tests/test_docs.py` rewrites the outputs that differ (blocks with `...` excepted: those
are printed, to be cut by hand); read every change before committing it.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
EXAMPLES = ROOT / "docs" / "examples"
VARIES = "<!-- output varies: exit code only -->"
GAP = "..."
_TIMES = [(re.compile(r"\b\d+\.\d\ds\b"), "N.NNs"), (re.compile(r'"seconds": [0-9.e-]+'), '"seconds": N')]
_TABLE_EDGES = set("┏┃┡│└")
_TABLE_RULE = re.compile(r"([━─])\1+")
_TABLE_PADDING = re.compile(r" {2,}")


@dataclass
class Step:
    """One `$` line of a block and the output the page shows under it."""
    line: int
    argv: list[str]
    shown: list[str]
    first: int
    """Index of the first line of `shown` in the page."""


@dataclass
class Block:
    page: Path
    line: int
    varies: bool
    steps: list[Step] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The ```text blocks of a page that hold at least one `$` line."""
    lines = page.read_text(encoding="utf-8").split("\n")
    found: list[Block] = []
    i = 0
    while i < len(lines):
        if lines[i].strip() != "```text":
            i += 1
            continue
        before = [text for text in lines[:i] if text.strip()]
        block = Block(page, i + 2, bool(before) and before[-1].strip() == VARIES)
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            if lines[i].startswith("$ "):
                start, command = i, lines[i][2:]
                while _unclosed(command) and i + 1 < len(lines):
                    i += 1
                    command += "\n" + lines[i]
                block.steps.append(Step(start + 1, shlex.split(command), [], i + 1))
            elif block.steps:
                block.steps[-1].shown.append(lines[i])
            i += 1
        if block.steps:
            found.append(block)
        i += 1
    return found


def _unclosed(command: str) -> bool:
    try:
        shlex.split(command)
    except ValueError:
        return True
    return False


def matches(shown: list[str], got: list[str]) -> bool:
    """`shown` equals `got`, where each line `...` of `shown` may stand for any lines of `got`."""
    parts: list[list[str]] = [[]]
    for text in shown:
        if text.strip() == GAP:
            parts.append([])
        else:
            parts[-1].append(text)
    if len(parts) == 1:
        return shown == got
    first, *middle, last = parts
    if got[:len(first)] != first or len(got) < len(first) + len(last) or got[len(got) - len(last):] != last:
        return False
    at, end = len(first), len(got) - len(last)
    for part in middle:
        while at + len(part) <= end and got[at:at + len(part)] != part:
            at += 1
        if at + len(part) > end:
            return False
        at += len(part)
    return True


def normal(text: str) -> list[str]:
    """The lines to compare: times masked and, in an output that shows times, tables' padding and rules
    collapsed, since a run that takes 10 s instead of 9 widens its table's time column."""
    timed = any(pattern.search(text) for pattern, _ in _TIMES)
    for pattern, placeholder in _TIMES:
        text = pattern.sub(placeholder, text)
    lines = [line.rstrip() for line in text.split("\n")]
    if timed:
        lines = [_TABLE_PADDING.sub(" ", _TABLE_RULE.sub(r"\1", line)) if line[:1] in _TABLE_EDGES else line
                 for line in lines]
    while lines and not lines[-1]:
        lines.pop()
    return lines


class Shell:
    """Runs a block's steps in one directory: gradcli in-process, `cat` and `echo $?` by hand."""

    def __init__(self, cli, cwd: Path) -> None:
        self.cli, self.cwd, self.status = cli, cwd, 0

    def __call__(self, argv: list[str]) -> tuple[str, int | None]:
        """The text the step prints, and its exit code (None for a step that is not gradcli)."""
        if argv == ["echo", "$?"]:
            return f"{self.status}\n", None
        if len(argv) == 2 and argv[0] == "cat":
            return (self.cwd / argv[1]).read_text(encoding="utf-8"), None
        if not argv or argv[0] != "gradcli":
            raise AssertionError(f"`$ {shlex.join(argv)}` is not run by the docs test: show it in a ```console block")
        args, keep = argv[1:], {"stdout", "stderr"}
        assert not {"|", "&&", ";", "<"} & set(args), "pipes and command lists are not understood: one command a line"
        for redirect, stream in ((">", "stdout"), ("2>", "stderr")):
            if redirect in args:
                at = args.index(redirect)
                assert args[at + 1:at + 2] == ["/dev/null"], "only > /dev/null and 2> /dev/null are understood"
                del args[at:at + 2]
                keep.discard(stream)
        result = self.cli(*args)
        self.status = result.exit_code
        shown = {frozenset({"stdout", "stderr"}): result.output, frozenset({"stdout"}): result.stdout,
                 frozenset({"stderr"}): result.stderr, frozenset(): ""}
        return shown[frozenset(keep)], result.exit_code


def workdir(tmp_path: Path) -> Path:
    """A directory that looks like the checkout to an example: docs/examples/ (a copy) and samples/."""
    shutil.copytree(EXAMPLES, tmp_path / "docs" / "examples")
    (tmp_path / "samples").symlink_to(ROOT / "samples")
    return tmp_path


ALL = [block for page in PAGES for block in blocks(page)]


@pytest.mark.parametrize("block", ALL, ids=[b.id for b in ALL])
def test_example_prints_what_the_page_shows(block: Block, cli, tmp_path, monkeypatch):
    monkeypatch.chdir(workdir(tmp_path))
    shell = Shell(cli, tmp_path)
    for n, step in enumerate(block.steps):
        where = f"{block.page.relative_to(ROOT)}:{step.line}: $ {shlex.join(step.argv)}"
        got, code = shell(step.argv)
        shows_code = n + 1 < len(block.steps) and block.steps[n + 1].argv == ["echo", "$?"]
        if code is not None and not shows_code:
            assert code in ((0,) if block.varies else (0, 1, 2)), f"{where}\nexited {code}:\n{got}"
        if block.varies and step.argv[0] == "gradcli":
            continue
        expected = normal("\n".join(step.shown))
        actual = normal(got)
        assert matches(expected, actual), f"{where}\nthe page shows:\n" + "\n".join(expected) + \
            "\n\nit prints:\n" + "\n".join(actual)


def test_the_pages_hold_examples():
    """A collector that found nothing would pass every page: the README alone shows several."""
    assert len([b for b in ALL if b.page.name == "README.md"]) >= 5
    assert len(ALL) >= 30


_LINK = re.compile(r"\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return {slug(line.lstrip("#")) for line in text.split("\n") if line.startswith("#")}


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_link_leads_somewhere(page):
    for target in _LINK.findall(page.read_text(encoding="utf-8")):
        if target.startswith(("http://", "https://")):
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        assert resolved.exists(), f"{page.relative_to(ROOT)}: the link {target} leads nowhere"
        if anchor:
            assert anchor in anchors(resolved), f"{page.relative_to(ROOT)}: no heading for #{anchor} in {path or 'it'}"


@pytest.mark.parametrize("shown, got, expected", [
    (["a", "...", "d"], ["a", "b", "c", "d"], True),
    (["a", "...", "d"], ["a", "d"], True),
    (["a", "...", "c", "...", "e"], ["a", "b", "c", "d", "e"], True),
    (["a", "...", "x", "...", "e"], ["a", "b", "c", "d", "e"], False),
    (["a", "...", "d"], ["a", "b", "c"], False),
    (["a", "b"], ["a", "b", "c"], False),
    (["...", "c"], ["a", "b", "c"], True),
])
def test_a_gap_stands_for_any_lines_and_nothing_else(shown, got, expected):
    assert matches(shown, got) is expected


def test_a_run_table_matches_whatever_the_width_of_its_times_but_not_other_changes():
    nine = "┏━━━━━━┳━━━━━━━┓\n┃ file ┃  time ┃\n│ a    │ 9.99s │\n└──────┴───────┘"
    ten = "┏━━━━━━┳━━━━━━━━┓\n┃ file ┃   time ┃\n│ a    │ 10.64s │\n└──────┴────────┘"
    assert normal(nine) == normal(ten)
    assert normal(nine) != normal(ten.replace("│ a ", "│ b "))
    untimed = "tensor([[ 1.,  2.],\n        [10., 20.]])"
    assert normal(untimed) == untimed.split("\n")


def _rewrite() -> None:
    """Replace each differing output on its page (gaps excepted), printing what changed."""
    from tests.conftest import Cli
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").split("\n")
        edits: list[tuple[int, int, list[str]]] = []
        for block in blocks(page):
            with tempfile.TemporaryDirectory() as tmp:
                os.chdir(workdir(Path(tmp)))
                shell = Shell(Cli(), Path(tmp))
                for step in block.steps:
                    got, _ = shell(step.argv)
                    if block.varies or matches(normal("\n".join(step.shown)), normal(got)):
                        continue
                    actual = [line.rstrip() for line in got.rstrip("\n").split("\n")] if got.strip() else []
                    if any(text.strip() == GAP for text in step.shown):
                        print(f"--- {block.id} (has gaps: cut by hand)\n" + "\n".join(actual))
                        continue
                    print(f"--- rewrote {page.relative_to(ROOT)}:{step.line}")
                    edits.append((step.first, step.first + len(step.shown), actual))
                os.chdir(ROOT)
        for start, end, new in reversed(edits):
            lines[start:end] = new
        page.write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    _rewrite()
