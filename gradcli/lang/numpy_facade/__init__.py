"""`numpy` as a program imports it: NumPy's own numeric API, its breadth a list (`allowlist`), every
call through one dispatcher (`dispatch`) that admits arrays of numbers only and sizes what a call
makes before NumPy allocates it (`sizes`). The ndarray's own protocol (operators, indexing, `len`,
`for`) is `lang.arrays`; `np.random` is `lang.stdlib.numpy_random`."""
