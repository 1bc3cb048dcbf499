"""The one graph walk (`run --check`, `--dot` and the checker all use it) and the names it gives leaves."""
from __future__ import annotations

from gradcli import tensor
from gradcli.program.graph import graph_nodes, leaf_names


def test_graph_leaves_walks_deep_graphs_without_recursion():
    x = tensor([1.0], requires_grad=True)
    y = x
    for _ in range(5000):
        y = y * 1.0
    assert graph_nodes(y)[1] == [x]
    assert graph_nodes(x)[1] == [x] and graph_nodes(tensor([1.0]))[1] == []
    assert len(graph_nodes(y)[0]) == 5000 and graph_nodes(x)[0] == []


def test_nodes_come_in_creation_order_and_shared_ones_once():
    a = tensor([1.0, 2.0], requires_grad=True)
    b = tensor([3.0, 4.0], requires_grad=True)
    first = a * b
    second = first.exp()
    out = (second + first).sum()
    nodes, leaves = graph_nodes(out)
    assert nodes == [first.grad_fn, second.grad_fn, nodes[2], out.grad_fn]
    assert [n.seq for n in nodes] == sorted(n.seq for n in nodes)
    assert leaves == [a, b]


def test_unnamed_leaves_get_names_no_variable_uses():
    w = tensor([1.0], requires_grad=True)
    inline = tensor([2.0], requires_grad=True)
    other = tensor([3.0], requires_grad=True)
    env = {"leaf0": tensor([0.0]), "w": w, "alias": w}
    named = leaf_names([inline, w, other], env)
    assert list(named) == ["w", "leaf1", "leaf2"]
    assert named["w"] is w and named["leaf1"] is inline and named["leaf2"] is other
