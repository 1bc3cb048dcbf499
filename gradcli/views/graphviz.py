"""`--dot FILE`: the recorded graph as Graphviz DOT, one box per tensor with its name, shape, value
and gradient (micrograd's `draw_dot`, for tensors), each edge labelled with the gradient it carried back.

After backward a graph has freed what it saved, and it never kept intermediate values or their
gradients (PyTorch's `.grad` of a non-leaf is None). So the export rebuilds the graph op by op
from its own leaves and constants through `apply`, and runs the engine's backward once more on
that copy with a `Recorder`: every number shown comes from the engine, not from a second
implementation, and the program's tensors (their `.grad` included) are left as they were. The
copy starts from the inputs as they are when the program ends: a program that rewrote an input's
`.data` after using it is drawn with the new values.
"""
from __future__ import annotations

import itertools
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from gradcli.engine.backward import run_backward
from gradcli.errors import ArgumentError
from gradcli.program.graph import ProgramNames, graph_nodes
from gradcli.program.recorder import Recorder, summarize
from gradcli.jsonable import number
from gradcli.views.render import shape_text
from gradcli.engine.tensor import Node, Tensor, apply

RENDERED = (".svg", ".png", ".pdf")
RENDER_TIMEOUT = 60


def _replay(nodes: list[Node]) -> dict[int, Tensor]:
    """The graph again, node for node, with its values: each op re-applied to the same inputs."""
    copies: dict[int, Tensor] = {}
    for node in nodes:
        args = [copies[id(x)] if type(x) is Node else x for x in node.inputs]
        copies[id(node)] = apply(node.op, *args, name=node.name, **node.params)
    return copies


def _field(text: str) -> str:
    """One field of a record label: Graphviz reads { } | < > as structure unless escaped."""
    return re.sub(r'([{}|<>"\\])', r"\\\1", text)


def _record(title: str, shape: tuple[int, ...], value: str, grad: str | None) -> str:
    """Fields stacked top to bottom (with rankdir=LR a record without braces is a column)."""
    fields = [title, f"shape {shape_text(shape)}", f"value {value}"]
    if grad is not None:
        fields.append(f"grad {grad}")
    return " | ".join(_field(f) for f in fields)


class _Graph:
    """The DOT statements, with one id per node or leaf and a fresh one per constant use."""

    def __init__(self, *names: Mapping[str, Any]) -> None:
        self.lines: list[str] = []
        self.counter = itertools.count()
        self.ids: dict[int, str] = {}
        self.known = ProgramNames(*names)

    def declare(self, key: int | None, label: str, attributes: str) -> str:
        ident = f"n{next(self.counter)}"
        if key is not None:
            self.ids[key] = ident
        self.lines.append(f'  {ident} [label="{label}"{attributes}];')
        return ident

    def source(self, x: Any) -> str:
        """The id an edge starts from: a node's or a tensor's own, or a new one for a number."""
        if type(x) is Node:
            return self.ids[id(x)]
        if isinstance(x, Tensor):
            if id(x) not in self.ids:
                self._tensor(x)
            return self.ids[id(x)]
        return self.declare(None, _field(f"constant {number(x)}"), ', shape=plaintext, fontcolor="gray40"')

    def _tensor(self, t: Tensor) -> None:
        name = self.known.tensor.get(id(t))
        if t.requires_grad:
            grad = "None" if t.grad is None else summarize(t.grad)
            label = _record(name or "leaf", t.shape, summarize(t), grad)
            self.declare(id(t), label, ', style=filled, fillcolor="#dff0d8"')
        else:
            label = _record(f"{name} (constant)" if name else "constant", t.shape, summarize(t), None)
            self.declare(id(t), label, ', color="gray60", fontcolor="gray40"')


def graph_dot(output: Tensor, gradient: Any, output_name: str, *names: Mapping[str, Any]) -> str:
    """DOT text for the graph of `output`, backpropagated from `gradient` (an array of its shape).

    `names` map program names to tensors (the inputs, then any variables) to title the boxes.
    """
    graph = _Graph(*names)
    root = output._node
    if root is None:
        graph.source(output)
    else:
        nodes, _ = graph_nodes(output)
        recorder = Recorder()
        with np.errstate(all="ignore"):
            copies = _replay(nodes)
            if copies[id(root)].requires_grad:
                run_backward((copies[id(root)],), (gradient,), inputs=(), trace=recorder)
        steps = {id(step.node): step for step in recorder.steps}
        for node in nodes:
            copy = copies[id(node)]
            step = steps.get(id(copy._node))
            name = output_name if node is root else graph.known.node.get(id(node))
            title = f"{name} = {node.name}" if name else node.name
            attributes = ', style="filled,bold", fillcolor="#fcf3cf", penwidth=2' if node is root else \
                ', style=filled, fillcolor="#dbe9f6"'
            label = _record(title, node.shape, summarize(copy), step.incoming if step else "None")
            graph.declare(id(node), label, attributes)
            passes = step.passes if step else (None,) * len(node.inputs)
            for x, passed in zip(node.inputs, passes):
                start = graph.source(x)
                if passed is not None and passed.gradient is not None:
                    graph.lines.append(f'  {start} -> {graph.ids[id(node)]} [label="{_field(passed.gradient)}"];')
                else:
                    graph.lines.append(f'  {start} -> {graph.ids[id(node)]} [style=dashed, color="gray60"];')
    header = ["digraph gradcli {", "  rankdir=LR;",
              '  node [shape=record, fontname="Helvetica", fontsize=11];',
              '  edge [fontname="Helvetica", fontsize=9, fontcolor="gray30"];']
    return "\n".join(header + graph.lines + ["}"]) + "\n"


def export_dot(result: Any, path: str) -> str:
    """Write the graph of an evaluation `Result` to `path` and say, in plain text, what was written.

    `.svg`, `.png` and `.pdf` are rendered by Graphviz's `dot` when it is installed; otherwise
    the DOT text goes next to them with the command that renders it.
    """
    text = graph_dot(result.output, result.gradient, result.output_name, result.leaves, result.env)
    target = Path(path)
    fmt = target.suffix.lower()
    if fmt not in RENDERED:
        _write(target, text)
        return (f"wrote the graph to {target}; render it with: dot -Tsvg {target} -o "
                      f"{target.with_suffix('.svg')}")
    dot_file = target.with_suffix(".dot")
    program = shutil.which("dot")
    if program is None:
        _write(dot_file, text)
        return (f"Graphviz's dot program is not installed, so the graph went to {dot_file}; install "
                      f"Graphviz (e.g. apt-get install graphviz) and render it with: dot -T{fmt[1:]} {dot_file} "
                      f"-o {target}")
    try:
        done = subprocess.run([program, f"-T{fmt[1:]}", "-o", str(target)], input=text, text=True,
                              capture_output=True, timeout=RENDER_TIMEOUT)
        failure = done.stderr.strip() if done.returncode else None
    except (OSError, subprocess.TimeoutExpired) as exc:
        failure = str(exc)
    if failure is None:
        return (f"wrote the graph to {target} (rendered by Graphviz)")
    _write(dot_file, text)
    return (f"Graphviz could not render {target} ({failure}); the graph went to {dot_file}")


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ArgumentError(f"--dot {path}: cannot write the file ({exc.strerror or exc})",
                            hint="choose a path in a folder that exists and that you can write to") from None
