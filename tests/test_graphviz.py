"""`--dot`: Graphviz text that parses, shows every tensor's value and gradient, and never touches the result."""
from __future__ import annotations

import os
import re
import stat

import numpy as np
import pytest

import gradcli.views.graphviz as D
from gradcli.errors import GradcliError
from gradcli.program.evaluation import evaluate

SEED_000 = "y = x + 2; z = y*y*3; out = z.mean()"
STATEMENT = re.compile(r'^\s*(\w+)\s*(->\s*(\w+)\s*)?\[(.*)\];$')


def structure(text: str) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    """Check DOT without Graphviz: one digraph, braces balanced outside quotes, edges between declared ids."""
    depth, quoted, escaped = 0, False, False
    for ch in text:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == '"':
            quoted = not quoted
        elif not quoted and ch in "{}":
            depth += 1 if ch == "{" else -1
            assert depth >= 0
    assert depth == 0 and not quoted
    lines = text.strip().splitlines()
    assert lines[0] == "digraph gradcli {" and lines[-1] == "}"
    nodes: dict[str, str] = {}
    edges: list[tuple[str, str, str]] = []
    for line in lines[1:-1]:
        if line.strip().startswith(("rankdir", "node [", "edge [")):
            continue
        m = STATEMENT.match(line)
        assert m, line
        if m.group(2):
            edges.append((m.group(1), m.group(3), m.group(4)))
        else:
            assert m.group(1) not in nodes, f"{m.group(1)} declared twice"
            nodes[m.group(1)] = re.search(r'label="((?:[^"\\]|\\.)*)"', m.group(4)).group(1)
    for a, b, _ in edges:
        assert a in nodes and b in nodes, (a, b)
    return nodes, edges


def test_seed000_graph():
    result = evaluate(SEED_000, {"x": "ones(2,2)"})
    nodes, edges = structure(D.graph_dot(result.output, result.gradient, result.output_name, result.leaves,
                                         result.env))
    labels = set(nodes.values())
    assert "x | shape (2, 2) | value all 1 | grad all 4.5" in labels
    assert "y = AddBackward0 | shape (2, 2) | value all 3 | grad all 4.5" in labels
    assert "MulBackward0 | shape (2, 2) | value all 9 | grad all 0.75" in labels
    assert "z = MulBackward0 | shape (2, 2) | value all 27 | grad all 0.25" in labels
    assert "out = MeanBackward0 | shape () | value 27 | grad 1" in labels
    ids = {label.split(" |")[0]: ident for ident, label in nodes.items()}
    carried = sorted(label for a, b, label in edges if a == ids["y = AddBackward0"])
    assert carried == ['label="all 2.25"', 'label="all 2.25"']      # y*y: one share per operand
    assert len(edges) == 7 and sum("dashed" in e[2] for e in edges) == 2   # the constants 2 and 3


def test_export_leaves_the_result_alone(tmp_path):
    result = evaluate(SEED_000, {"x": "ones(2,2)"})
    D.export_dot(result, str(tmp_path / "g.dot"))
    np.testing.assert_allclose(result.leaves["x"].grad._data, np.full((2, 2), 4.5))
    np.testing.assert_allclose(result.grads["x"], np.full((2, 2), 4.5))


def test_weighted_backward_and_broadcasting(tmp_path):
    result = evaluate("y = w*x + b", {"w": "[0.3, 0.7]", "x": "[1.0]", "b": "[0.5]"}, grad="[1, 2]")
    nodes, _ = structure(D.graph_dot(result.output, result.gradient, result.output_name, result.leaves))
    labels = set(nodes.values())
    assert "y = AddBackward0 | shape (2,) | value [0.8, 1.2] | grad [1, 2]" in labels
    assert "b | shape (1,) | value 0.5 | grad 3" in labels
    assert "x | shape (1,) | value 1 | grad 1.7" in labels


def test_deep_loop_graph_is_iterative():
    result = evaluate("y = x\nfor i in range(3000):\n    y = y * 1.0001\nout = y.sum()", {"x": "[1.0]"})
    nodes, edges = structure(D.graph_dot(result.output, result.gradient, result.output_name, result.leaves))
    assert len(nodes) > 6000 and len(edges) > 6000


def test_escaping_of_record_fields():
    assert D._field('a{b}|<c>"d\\') == 'a\\{b\\}\\|\\<c\\>\\"d\\\\'


def test_plain_dot_file(tmp_path):
    result = evaluate(SEED_000, {"x": "ones(2,2)"})
    message = D.export_dot(result, str(tmp_path / "graph.gv"))
    structure((tmp_path / "graph.gv").read_text())
    assert "dot -Tsvg" in message


def test_svg_without_graphviz_writes_dot_and_says_how(tmp_path, monkeypatch):
    monkeypatch.setattr(D.shutil, "which", lambda name: None)
    result = evaluate(SEED_000, {"x": "ones(2,2)"})
    message = D.export_dot(result, str(tmp_path / "graph.svg"))
    assert (tmp_path / "graph.dot").exists() and not (tmp_path / "graph.svg").exists()
    assert "not installed" in message and f"dot -Tsvg {tmp_path / 'graph.dot'} -o {tmp_path / 'graph.svg'}" in message


def fake_dot(tmp_path, body: str) -> str:
    program = tmp_path / "dot"
    program.write_text("#!/bin/sh\n" + body)
    program.chmod(program.stat().st_mode | stat.S_IEXEC)
    return str(program)


def test_png_with_graphviz_renders(tmp_path, monkeypatch):
    program = fake_dot(tmp_path, 'cat > "$3.input"; printf PNG > "$3"\n')    # dot -Tpng -o FILE
    monkeypatch.setattr(D.shutil, "which", lambda name: program)
    result = evaluate(SEED_000, {"x": "ones(2,2)"})
    message = D.export_dot(result, str(tmp_path / "graph.png"))
    assert (tmp_path / "graph.png").read_text() == "PNG" and "rendered by Graphviz" in message
    structure((tmp_path / "graph.png.input").read_text())


def test_failed_render_falls_back_to_dot(tmp_path, monkeypatch):
    program = fake_dot(tmp_path, 'echo "syntax error" >&2; exit 1\n')
    monkeypatch.setattr(D.shutil, "which", lambda name: program)
    result = evaluate(SEED_000, {"x": "ones(2,2)"})
    message = D.export_dot(result, str(tmp_path / "graph.svg"))
    assert "syntax error" in message and (tmp_path / "graph.dot").exists()


def test_unwritable_path_is_a_user_error(tmp_path):
    result = evaluate(SEED_000, {"x": "ones(2,2)"})
    with pytest.raises(GradcliError, match="cannot write"):
        D.export_dot(result, str(tmp_path / "missing" / "graph.dot"))


def test_eval_dot_on_the_command_line(cli, tmp_path):
    target = tmp_path / "seed.dot"
    result = cli("eval", SEED_000, "x=ones(2,2)", "--dot", str(target))
    assert result.exit_code == 0, result.stderr
    assert "wrote the graph" in result.stderr
    nodes, _ = structure(target.read_text())
    assert len(nodes) == 7
    bad = cli("eval", SEED_000, "x=ones(2,2)", "--dot", os.path.join(str(tmp_path), "no", "g.dot"))
    assert bad.exit_code == 2 and "cannot write" in bad.stderr
    assert len(bad.stderr.splitlines()) == 2, "the message and its hint, each on one line at any path length"


def test_an_input_that_stopped_requiring_grad_is_drawn_without_gradients():
    """The engine skips it in backward; the drawing says None instead of failing."""
    result = evaluate("y = x * 2; x.requires_grad = False; out = y.sum()", {"x": "[1.0]"})
    nodes, edges = structure(D.graph_dot(result.output, result.gradient, result.output_name, result.leaves))
    assert "x (constant) | shape (1,) | value 1" in nodes.values()
    assert all("dashed" in label for *_, label in edges) and len(edges) == 3


def test_the_export_module_does_not_shadow_the_dot_product():
    import gradcli
    assert gradcli.dot(gradcli.tensor([1.0, 2.0]), gradcli.tensor([3.0, 4.0])).item() == 11.0
