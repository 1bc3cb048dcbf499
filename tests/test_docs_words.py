"""The docs speak a user's words and their counts are true: no words of the project's own history
("seed 000", "seeds/", "the design card"), the sample listing is the samples that exist, and the
list of importable modules is the list the parser accepts."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from gradcli.lang import parser, stdlib

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "docs" / "examples").glob("*"))]
HISTORY = re.compile(r"\bseeds?\s*0\d\d\b|\bseed0\d\d|\bseeds/|design card", re.IGNORECASE)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_words_of_our_own_history(page):
    found = HISTORY.findall(page.read_text(encoding="utf-8"))
    assert found == [], f"{page.name}: {found}"


def test_the_history_pattern_finds_what_it_should():
    assert HISTORY.findall("Seed 000 of the tutorial; see seeds/ and the design card; seed002.grad") == \
        ["Seed 000", "seeds/", "design card", "seed002"]
    assert HISTORY.findall("seed 0 · dtype float64; --seed 0; torch.manual_seed(0)") == []


def test_the_pytest_listing_is_the_samples():
    text = (ROOT / "docs" / "pytest-plugin.md").read_text(encoding="utf-8")
    block = text[text.index("$ pytest samples/"):]
    block = block[:block.index("```")]
    samples = sorted(p.name for p in (ROOT / "samples").glob("*.grad"))
    assert f"collected {len(samples)} items" in block
    assert re.findall(r"samples/(\S+\.grad) \.", block) == samples
    assert re.search(rf"= {len(samples)} passed in ", block)


def test_the_importable_modules_are_listed_where_the_refusal_points():
    text = " ".join((ROOT / "docs" / "language.md").read_text(encoding="utf-8").split())
    paragraph = text[text.index("**Imports.**"):]
    paragraph = paragraph[:paragraph.index("**", len("**Imports.**"))]
    listed = set(re.findall(r"`([\w.]+)`", paragraph)) - {"pandas"}
    assert listed == set(parser._TORCH_MODULES) | set(stdlib.NAMES)
    assert "docs/language.md (Imports)" in parser._IMPORTS_HINT
