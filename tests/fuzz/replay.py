"""Replays one generated case of the differential fuzzer: `python -m fuzz.replay SEED INDEX` (from tests/) runs case
INDEX of the run with XETILE_FUZZ_SEED=SEED (the INDEX-th of its XETILE_FUZZ_CASES cases) alone, at every level and
on both CPU targets, prints the mismatches (or "all levels agree") and writes its reproducer script.

A case draws from its own generator (gen.case_rng), and its batch's grid and launch options from the batch's, so
it is the same alone as in its batch.
"""
from __future__ import annotations

import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from . import gen, run, worker


def case_batch(seed: int, index: int) -> gen.Batch:
    """The batch holding case `index` of the run with `seed`, cut down to that case."""
    number, position = divmod(index, worker.PER_BATCH)
    whole = gen.batch(seed, number, position + 1)
    return replace(whole, name=f"{whole.name}_case{position}", cases=[whole.cases[position]])


def main(argv: list[str]) -> int:
    seed, index = map(int, argv)
    directory = Path(tempfile.mkdtemp(prefix="xetile_fuzz_replay_"))
    batch = case_batch(seed, index)
    problems = run.run_batch(batch, directory)
    print("\n".join(problems) or "all levels agree")
    print(f"reproducer: {worker.write_reproducer(batch, problems or ['(none)'], seed, directory)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
