"""Running programs: `evaluate()` for one program and one backward, `.grad` scripts, the recorder
`--explain` reads, and the walks that read a recorded graph after the fact.
"""
