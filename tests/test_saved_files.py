"""`torch.save`/`torch.load` in memory for the run, `optimizer.load_state_dict`, and deep copies of a
state_dict: the checkpoint round trips of the tutorials give PyTorch's numbers and touch no file."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from gradcli.errors import ArgumentError
from language_helpers import fails, run

RESUME = """import torch
from torch import nn
torch.manual_seed(0)
x, y = torch.randn(8, 3), torch.randn(8, 1)

def train(model, opt, steps):
    for _ in range(steps):
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()

model = nn.Linear(3, 1)
opt = torch.optim.Adam(model.parameters(), lr=0.1)
train(model, opt, 3)
torch.save({"epoch": 3, "model": model.state_dict(), "optimizer": opt.state_dict()}, "checkpoint.pt")
train(model, opt, 2)
straight = model.weight.detach().clone()

fresh = nn.Linear(3, 1)
fresh_opt = torch.optim.Adam(fresh.parameters(), lr=0.5)
checkpoint = torch.load("checkpoint.pt", weights_only=True)
print(fresh.load_state_dict(checkpoint["model"]))
fresh_opt.load_state_dict(checkpoint["optimizer"])
train(fresh, fresh_opt, 2)
print(checkpoint["epoch"], fresh_opt.param_groups[0]["lr"], torch.allclose(fresh.weight, straight))
try:
    torch.load("missing.pt")
except FileNotFoundError as e:
    print("not saved:", e)
"""
RESUME_TEXT = ["<All keys matched successfully>", "3 0.1 True",
               "not saved: [Errno 2] No such file or directory: 'missing.pt'"]


def test_a_checkpoint_resumes_training_where_it_stopped(tmp_path) -> None:
    before = set(os.listdir(tmp_path))
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        ran = run(RESUME)
    finally:
        os.chdir(cwd)
    assert ran.printed == RESUME_TEXT
    assert set(os.listdir(tmp_path)) == before  # nothing was written


def test_a_loaded_object_is_a_copy_of_what_was_saved() -> None:
    ran = run("import torch\nw = torch.ones(2)\ntorch.save({'w': w}, 'w.pt')\nw.add_(1)\n"
              "a = torch.load('w.pt')\na['w'].mul_(5)\nb = torch.load('w.pt')\n")
    np.testing.assert_array_equal(ran["b"]["w"]._data, [1.0, 1.0])
    np.testing.assert_array_equal(ran["a"]["w"]._data, [5.0, 5.0])


def test_what_one_run_saved_is_gone_in_the_next() -> None:
    run("import torch\ntorch.save(1, 'once.pt')\n")
    err = fails("import torch\nv = torch.load('once.pt')\n", ArgumentError)
    assert err.message == "[Errno 2] No such file or directory: 'once.pt'" and "same program" in err.hint


def test_a_path_must_be_a_string() -> None:
    err = fails("import torch\ntorch.save(1, 3)\n", ArgumentError)
    assert err.message == "save(): f must be a path (a string), not int"


def test_an_optimizer_checkpoint_must_fit_its_groups() -> None:
    err = fails("import torch\nw, v = torch.ones(1, requires_grad=True), torch.ones(1, requires_grad=True)\n"
                "s = torch.optim.SGD([w], lr=0.1).state_dict()\ntorch.optim.SGD([w, v], lr=0.1).load_state_dict(s)\n")
    assert err.message == "loaded state dict contains a parameter group that doesn't match the size of optimizer's " \
                          "group"


def test_deepcopy_of_a_state_dict_keeps_its_kind_and_its_values() -> None:
    ran = run("import copy\nimport torch\nfrom collections import defaultdict\nm = torch.nn.Linear(2, 1)\n"
              "best = copy.deepcopy(m.state_dict())\nm.weight.data.zero_()\nkeys = best.keys()\n"
              "d = defaultdict(list)\nd['a'].append(1)\ne = copy.deepcopy(d)\ne['b'].append(2)\n")
    assert repr(ran["keys"]) == "odict_keys(['weight', 'bias'])"
    assert np.all(ran["best"]["weight"]._data != 0)
    assert dict(ran["d"]) == {"a": [1]} and dict(ran["e"]) == {"a": [1], "b": [2]}


def test_the_texts_are_pytorchs(tmp_path) -> None:
    pytest.importorskip("torch")
    done = subprocess.run([sys.executable, "-c", RESUME], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == RESUME_TEXT
