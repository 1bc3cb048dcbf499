"""The census: which torch, torch.nn, torch.nn.functional, Tensor, torch.distributions, torch.func and NumPy
names published tutorial code uses, and which of them gradcli has.

Two steps, so the report never needs the network or the mirrors:

    python tests/census/census.py count MIRROR... --out tests/census/counts.json
    python tests/census/census.py report [--counts tests/census/counts.json] [--out docs/coverage.md]

`count` reads each MIRROR (a git directory, bare or not, read at HEAD with `git`, or a plain
directory) and walks its `.py` files, the code cells of its `.ipynb` notebooks and the Python blocks
of its Markdown (d2l's books keep their code there; a block tabbed for another framework is left
out) with `ast`: nothing is run. Names are resolved through each file's imports (`import torch.nn
as nn`, `from torch.distributions import Normal`), so `nn.Linear(...)` counts as `torch.nn.Linear`
and `F.relu` as `torch.nn.functional.relu`. A method call or attribute on anything else counts as a
Tensor member when torch.Tensor has a public member of that name (torch must be importable for this
step); names that Python's str, list, dict or set also have (`split`, `index`, `copy`...) are left out,
since a file's text cannot tell a tensor from a string. Only facts are kept: names and counts per
repository.

`report` reads the counts and asks gradcli itself for each name's status: a probe program that reaches
the name (`import torch; torch.from_numpy`, or `x.masked_fill_` on a tensor) is parsed and run by the
interpreter, so the table says what a user meets today; rerun it after building names. It is not part
of the test suite (pytest collects only `test_*.py`) and needs neither the network nor the mirrors.
"""
from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COUNTS = Path(__file__).with_name("counts.json")
COVERAGE = ROOT / "docs" / "coverage.md"
TRACKED = ("torch", "numpy", "functorch")
MODULES = frozenset({
    "torch", "numpy", "functorch", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.nn.utils", "torch.optim",
    "torch.optim.lr_scheduler", "torch.utils", "torch.utils.data", "torch.autograd", "torch.autograd.functional",
    "torch.distributions", "torch.func", "torch.linalg", "torch.fft", "torch.special", "torch.cuda", "numpy.random",
    "numpy.linalg", "torch.nn.parameter", "torch.backends", "torch.jit", "torch.onnx", "torch.hub"})
"""Paths that are modules: a chain that stops at one (`torch` passed around) names nothing to count."""


# -- reading a mirror -----------------------------------------------------------------------------------------
def _sources(mirror: Path) -> list[tuple[str, str]]:
    """(path, text) of every .py, .ipynb and .md file at the mirror's HEAD."""
    wanted = re.compile(r"\.(py|ipynb|md)$")
    if (mirror / "HEAD").exists() or (mirror / ".git").exists():
        git = ["git", "--git-dir", str(mirror if (mirror / "HEAD").exists() else mirror / ".git")]
        names = subprocess.run(git + ["ls-tree", "-r", "-z", "--name-only", "HEAD"], capture_output=True,
                               check=True).stdout.decode().split("\0")
        out = []
        for name in filter(wanted.search, names):
            blob = subprocess.run(git + ["cat-file", "-p", f"HEAD:{name}"], capture_output=True).stdout
            out.append((name, blob.decode("utf-8", "replace")))
        return out
    return [(str(p.relative_to(mirror)), p.read_text("utf-8", "replace"))
            for p in sorted(mirror.rglob("*")) if p.is_file() and wanted.search(p.name)]


_MAGIC = re.compile(r"^\s*[%!]|^\s*\?|\?\s*$")
_FENCE = re.compile(r"^```(\S*)(.*)$")
_TAB = re.compile(r"^\s*(?:%%tab|#@tab)\s+(.*)$")


def _code_pieces(path: str, text: str) -> list[str]:
    """The Python a file holds: a .py whole, each notebook code cell, each Markdown Python block."""
    if path.endswith(".py"):
        return [text]
    if path.endswith(".ipynb"):
        try:
            cells = json.loads(text).get("cells", [])
        except (json.JSONDecodeError, AttributeError):
            return []
        return ["".join(c.get("source", "")) if isinstance(c.get("source"), list) else c.get("source", "")
                for c in cells if c.get("cell_type") == "code"]
    pieces, block, keep = [], None, False
    for line in text.splitlines():
        fence = _FENCE.match(line.strip())
        if block is None and fence and ("python" in fence.group(1) + fence.group(2)):
            block, keep = [], "{.python .input" not in line
        elif block is not None and line.strip() == "```":
            if keep:
                pieces.append("\n".join(block))
            block = None
        elif block is not None:
            tab = _TAB.match(line)
            if tab and not block:
                frameworks = {t.strip() for t in tab.group(1).split(",")}
                keep = bool(frameworks & {"pytorch", "all"})
            else:
                block.append(line)
    return pieces


def _parse(code: str) -> ast.AST | None:
    lines = [("pass" if _MAGIC.search(line) else line) for line in code.splitlines()]
    try:
        return ast.parse("\n".join(lines))
    except (SyntaxError, ValueError, RecursionError):
        return None


# -- counting one piece of code ------------------------------------------------------------------------------
def _chain(node: ast.AST) -> tuple[str, list[str]] | None:
    """`a.b.c` as ('a', ['b', 'c']); None when the chain does not start at a plain name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return (node.id, parts[::-1]) if isinstance(node, ast.Name) else None


def _tracked(path: str) -> bool:
    return path.split(".")[0] in TRACKED


class _Counter(ast.NodeVisitor):
    def __init__(self, tensor_members: frozenset[str], aliases: dict[str, str]) -> None:
        self.tensor_members = tensor_members
        self.aliases = aliases  # carried from cell to cell of one notebook
        self.counts: Counter[str] = Counter()

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if _tracked(alias.name):
                if alias.asname:
                    self.aliases[alias.asname] = alias.name
                else:
                    self.aliases[alias.name.split(".")[0]] = alias.name.split(".")[0]

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module and node.level == 0 and _tracked(node.module):
            for alias in node.names:
                if alias.name != "*":
                    self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def visit_Attribute(self, node: ast.Attribute) -> None:
        chain = _chain(node)
        if chain and chain[0] in self.aliases:
            path = ".".join([self.aliases[chain[0]], *chain[1]])
            if path not in MODULES:
                self.counts[path] += 1
            return  # the inner links of a chain are not uses of their own
        if node.attr in self.tensor_members:
            self.counts[f"Tensor.{node.attr}"] += 1
        self.generic_visit(node)

    def visit_If(self, node: ast.If) -> None:
        """d2l's shared blocks branch on `tab.selected('mxnet', ...)`: only PyTorch's branch is PyTorch code."""
        test = node.test
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr == "selected":
            frameworks = {a.value for a in test.args if isinstance(a, ast.Constant)}
            for child in (node.body if "pytorch" in frameworks else node.orelse):
                self.visit(child)
            return
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load) and node.id in self.aliases:
            path = self.aliases[node.id]
            if path not in MODULES:
                self.counts[path] += 1


def tensor_members() -> frozenset[str]:
    """torch.Tensor's public members, less the names Python's own str, list, dict and set also have."""
    import torch
    python = set(dir(str)) | set(dir(list)) | set(dir(dict)) | set(dir(set))
    return frozenset(n for n in dir(torch.Tensor) if not n.startswith("_") and n not in python)


def count(mirrors: list[Path]) -> dict:
    members = tensor_members()
    repos = {}
    for mirror in mirrors:
        name = mirror.parent.name.replace("+", "/") if mirror.name == "repo" else mirror.name
        totals: Counter[str] = Counter()
        files = unparsed = 0
        for path, text in _sources(mirror):
            pieces = _code_pieces(path, text)
            counter = _Counter(members, {})
            used = False
            for piece in pieces:
                tree = _parse(piece)
                if tree is None:
                    unparsed += 1
                    continue
                counter.visit(tree)
                used = True
            if counter.counts:
                totals.update(counter.counts)
            files += used
        repos[name] = {"files": files, "unparsed_pieces": unparsed, "counts": dict(totals.most_common())}
        print(f"{name}: {files} files, {sum(totals.values())} uses of {len(totals)} names", file=sys.stderr)
    return {"repositories": repos}


# -- the report ---------------------------------------------------------------------------------------------
FAMILIES = (("torch.nn.functional.", "torch.nn.functional"), ("torch.nn.", "torch.nn"),
            ("torch.distributions.", "torch.distributions"), ("torch.func.", "torch.func"),
            ("functorch.", "torch.func"), ("torch.optim.", "torch.optim"), ("torch.utils.", "torch.utils"),
            ("torch.autograd.", "torch.autograd"), ("torch.linalg.", "torch.linalg"), ("torch.", "torch"),
            ("numpy.", "NumPy"), ("Tensor.", "Tensor"))


OUT_OF_SCOPE = ("torch.cuda", "torch.distributed.", "torch.backends.cudnn.", "torch.compile", "torch.fx.",
                "torch.multiprocessing.", "torch.nn.parallel.", "torch.nn.DataParallel", "torch.jit.", "torch.onnx.",
                "torch.utils.data.distributed.", "torch.bfloat16", "torch.float16", "torch.half", "torch.amp.",
                "torch.mps.", "torch.hub.", "torch.utils.model_zoo.", "torch.profiler.")
"""Prefixes of what a CPU gradient calculator never runs: GPUs, half precision, processes, compilers and exporters,
model downloads. The report gives the covered share with and without them; the names stay in every table."""


def family(name: str) -> str:
    return next(label for prefix, label in FAMILIES if name.startswith(prefix))


_PROBES = {"torch": "import torch\ntorch{rest}\n", "numpy": "import numpy\nnumpy{rest}\n",
           "functorch": "import functorch\nfunctorch{rest}\n", "Tensor": "import torch\nx = torch.zeros(2)\nx{rest}\n"}


def status(name: str) -> str:
    """'built' when a program that reaches the name runs in gradcli; else 'refused: ' and gradcli's own reason.

    The probe is gradcli itself: `import torch; torch.from_numpy` (or `x.masked_fill_` on a tensor) parsed
    and run by the interpreter, so the answer is what a user would meet, whatever table holds the name.
    """
    from gradcli.errors import GradcliError
    from gradcli.lang.interpreter import Interpreter
    from gradcli.lang.parser import parse_program
    root, _, rest = name.partition(".")
    source = _PROBES[root].format(rest="." + rest if rest else "")
    try:
        Interpreter(source).run(parse_program(source))
    except GradcliError as exc:
        reason = exc.pytorch_text.splitlines()[0]
        return "refused: " + (reason if len(reason) <= 90 else reason[:87] + "...")
    return "built"


def report(counts: dict, top: int) -> str:
    repos = counts["repositories"]
    total: Counter[str] = Counter()
    used_in: Counter[str] = Counter()
    for data in repos.values():
        total.update(data["counts"])
        used_in.update(data["counts"].keys())
    uses = sum(total.values())
    statuses = {name: status(name) for name in total}
    built = {name: statuses[name] == "built" for name in total}
    covered = sum(n for name, n in total.items() if built[name])
    scope_out = sum(n for name, n in total.items() if name.startswith(OUT_OF_SCOPE) and not built[name])
    lines = [
        "# Coverage: what tutorial code calls, and what gradcli has",
        "",
        "Generated by `python tests/census/census.py report` from `tests/census/counts.json`, which",
        "`python tests/census/census.py count MIRROR...` wrote from the repositories below (see the script's",
        "docstring for what counts as a use). The status column is computed by gradcli itself",
        "(a probe program per name, `import torch; torch.NAME` or `x.NAME` on a tensor, run by gradcli's interpreter):",
        "**built** when it runs, else **refused** with the first line of gradcli's error.",
        "Rerun `report` after building names; rerun `count` to change the corpus.",
        "",
        f"**Covered: {covered / uses:.1%} of {uses:,} uses** ({sum(built.values()):,} of {len(total):,} names built).",
        "",
        f"Leaving out what a CPU gradient calculator never runs (names starting {', '.join(f'`{p}`' for p in OUT_OF_SCOPE)}:",
        f"{scope_out:,} uses), **{covered / (uses - scope_out):.1%}** of the remaining {uses - scope_out:,} uses are covered.",
        "",
        "A `Tensor.` name is any attribute or method of that name on something not imported from torch or NumPy, so it",
        "also counts other objects' members of the same name (a PIL image's `resize`, an argument's `name`).",
        "",
        "## By family",
        "",
        "| family | uses | names | covered uses | refused names |",
        "|---|---:|---:|---:|---:|",
    ]
    by_family: dict[str, list[str]] = {}
    for name in total:
        by_family.setdefault(family(name), []).append(name)
    for label, names in sorted(by_family.items(), key=lambda kv: -sum(total[n] for n in kv[1])):
        n_uses = sum(total[n] for n in names)
        ok = sum(total[n] for n in names if built[n])
        lines.append(f"| {label} | {n_uses:,} | {len(names):,} | {ok / n_uses:.1%} | "
                     f"{sum(not built[n] for n in names):,} |")
    lines += ["", "## By repository", "", "| repository | files | uses | covered uses |", "|---|---:|---:|---:|"]
    for name, data in sorted(repos.items()):
        n_uses = sum(data["counts"].values())
        ok = sum(n for k, n in data["counts"].items() if built[k])
        lines.append(f"| {name} | {data['files']:,} | {n_uses:,} | {ok / max(n_uses, 1):.1%} |")
    missing = [(name, n) for name, n in total.most_common() if not built[name]]
    lines += ["", f"## The most-used missing names (top {top})", "",
              "What to build next: each name with its uses, its share of all uses and how many repositories use it.",
              "", "| name | uses | share | repositories | gradcli's reason |", "|---|---:|---:|---:|---|"]
    lines += [f"| `{name}` | {n:,} | {n / uses:.2%} | {used_in[name]} | {statuses[name][9:]} |"
              for name, n in missing[:top]]
    lines += ["", f"## Every name used at least 5 times", "", "| name | family | uses | share | repositories | gradcli |",
              "|---|---|---:|---:|---:|---|"]
    lines += [f"| `{name}` | {family(name)} | {n:,} | {n / uses:.2%} | {used_in[name]} | "
              f"{statuses[name]} |" for name, n in total.most_common() if n >= 5]
    rare = [(name, n) for name, n in total.items() if n < 5]
    lines += ["", f"Names used fewer than 5 times: {len(rare):,}, {sum(n for _, n in rare):,} uses, "
                  f"{sum(built[name] for name, _ in rare):,} of them built (`tests/census/counts.json` lists them).", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    counting = commands.add_parser("count", help="count name uses in mirrored repositories")
    counting.add_argument("mirrors", nargs="+", type=Path)
    counting.add_argument("--out", type=Path, default=COUNTS)
    reporting = commands.add_parser("report", help="write docs/coverage.md from the counts")
    reporting.add_argument("--counts", type=Path, default=COUNTS)
    reporting.add_argument("--out", type=Path, default=COVERAGE)
    reporting.add_argument("--top", type=int, default=60)
    args = parser.parse_args()
    if args.command == "count":
        args.out.write_text(json.dumps(count(args.mirrors), indent=1, sort_keys=True) + "\n")
    else:
        sys.path.insert(0, str(ROOT))
        args.out.write_text(report(json.loads(args.counts.read_text()), args.top))


if __name__ == "__main__":
    main()
