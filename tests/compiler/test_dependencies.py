"""The re-check of what a trace read (compiler/dependencies.py): grouped identity checks, the forms behind them."""
from __future__ import annotations

import types

import pytest

from xetile_jit.compiler.dependencies import Dependency, LiveRead, Rereads, all_unchanged, value_form


def live_read(kind: str, source, name: str, value) -> LiveRead:
    return LiveRead(Dependency(kind, "owner", name, value_form(value)), source, value)


def rereads_of(globals_: dict, module, cell) -> Rereads:
    return Rereads([live_read("global", globals_, "N", globals_["N"]), live_read("global", globals_, "f", len),
                    live_read("attribute", module, "BM", module.BM), live_read("closure", cell, "s", 2.0),
                    live_read("global", globals_, "shape", globals_["shape"])])


def cell_of(value):
    return (lambda: value).__closure__[0]


def test_reads_of_immutable_values_check_in_one_expression_over_their_sources():
    globals_, module = {"N": 300, "f": len, "shape": [8, 8]}, types.SimpleNamespace(BM=16)
    cell = cell_of(2.0)
    reads = rereads_of(globals_, module, cell)
    # each source once, each immutable value read once; the list is checked by its form
    assert reads.same.__defaults__ == (globals_, 300, len, module, 16, cell, 2.0)
    assert [r.dependency.name for r in reads.mutable] == ["shape"]
    assert reads.same() and all_unchanged(reads)


def test_an_attribute_that_is_a_keyword_is_read_by_getattr():
    module = types.SimpleNamespace(**{"class": 3, "not a name": 4})
    reads = Rereads([live_read("attribute", module, "class", 3), live_read("attribute", module, "not a name", 4)])
    assert all_unchanged(reads)
    setattr(module, "not a name", 5)
    assert not all_unchanged(reads)


@pytest.mark.parametrize("change, unchanged", [
    (lambda g, m: g.update(N=int("300")), True),  # another object of the same form
    (lambda g, m: g.update(N=300.0), False),      # equal, but another form
    (lambda g, m: g.pop("N"), False),             # gone
    (lambda g, m: setattr(m, "BM", 32), False),
    (lambda g, m: delattr(m, "BM"), False),
    (lambda g, m: g["shape"].append(1), False),   # a mutable value changed in place
    (lambda g, m: g.update(f=len), True),
], ids=["same-form", "other-form", "deleted", "attribute", "attribute-deleted", "in-place", "same-object"])
def test_a_change_is_seen_and_an_equal_form_is_not_a_change(change, unchanged):
    globals_, module = {"N": 300, "f": len, "shape": [8, 8]}, types.SimpleNamespace(BM=16)
    reads = rereads_of(globals_, module, cell_of(2.0))
    change(globals_, module)
    assert all_unchanged(reads) is unchanged


def test_an_emptied_closure_cell_is_a_change():
    cell = cell_of(2.0)
    del cell.cell_contents  # as `del s` in the function whose closure it is
    reads = Rereads([LiveRead(Dependency("closure", "owner", "s", value_form(2.0)), cell, 2.0)])
    assert not all_unchanged(reads)
