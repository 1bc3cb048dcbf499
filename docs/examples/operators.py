import torch


class Vec:
    def __init__(self, *xs):
        self.xs = list(xs)

    def __add__(self, other):
        if isinstance(other, Vec):
            return Vec(*[a + b for a, b in zip(self.xs, other.xs)])
        return NotImplemented

    def __mul__(self, k):
        return Vec(*[a * k for a in self.xs])

    __rmul__ = __mul__

    def __eq__(self, other):
        return isinstance(other, Vec) and self.xs == other.xs

    def __len__(self):
        return len(self.xs)

    def __repr__(self):
        return f"Vec{tuple(self.xs)}"


v = Vec(1, 2)
print(v + Vec(3, 4), 2 * v, v == Vec(1, 2), v != Vec(1, 2), len(v), bool(Vec()))
try:
    v + 1
except TypeError as e:
    print("TypeError:", e)
