"""Printed text compared with what live PyTorch prints, float by float to its last printed digit ± 1.

float32 sums, matrix products and convolutions round differently on different CPUs (vector width,
the order a BLAS adds in), in PyTorch as in NumPy, so a value printed to six decimals may end in
...067 on one machine and ...068 on another. Everything else must be equal: the words, the
integers, the layout, and each float's own format (how many decimals, an exponent).
"""
from __future__ import annotations

import re
from decimal import Decimal

FLOAT = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+)(?:e[-+]?\d+)?|[-+]?\d+e[-+]?\d+", re.IGNORECASE)


def _last_digit(text: str) -> Decimal:
    """One unit of the last digit `text` prints: 1.376068 -> 0.000001, 2.5e-03 -> 0.0001."""
    return Decimal(1).scaleb(Decimal(text).as_tuple().exponent)


def _format(text: str) -> tuple[int, str]:
    mantissa, _, exponent = text.lower().partition("e")
    return len(mantissa.partition(".")[2]), exponent and "e"


def differences(got: str, want: str) -> list[str]:
    """Where `got` differs from `want` beyond one unit of a float's last printed digit (empty: the same)."""
    got_floats, want_floats = FLOAT.findall(got), FLOAT.findall(want)
    if FLOAT.split(got) != FLOAT.split(want) or len(got_floats) != len(want_floats):
        return [f"the text around the numbers differs:\n{got}\n---\n{want}"]
    out = []
    for a, b in zip(got_floats, want_floats):
        if a == b:
            continue
        if _format(a) != _format(b) or abs(Decimal(a) - Decimal(b)) > _last_digit(b):
            out.append(f"{a} where PyTorch printed {b}")
    return out


def assert_printed_like_torch(got: str, want: str) -> None:
    wrong = differences(got, want)
    assert not wrong, "\n".join(wrong[:10])
