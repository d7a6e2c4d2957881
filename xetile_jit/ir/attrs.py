"""Layout attribute: how a workgroup-level tile or vector is shared by subgroups and lanes.

The XeTile RFC calls it `wg_map` (sg_layout, sg_data); the XeGPU RFC's `xegpu.layout` adds inst_data,
lane_layout, lane_data and order. One class carries all six; unset fields stay None. As the RFC's distribution
goes down the levels, each level drops the fields it has used: a subgroup-level value keeps inst_data and the
lane fields (`subgroup_level`), a blocked one the lane fields only (blocking writes them).
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from itertools import product
from math import prod


def format_list(values) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def _as_tuple(name: str, value) -> tuple[int, ...] | None:
    if value is None:
        return None
    try:
        items = tuple(value)
    except TypeError:
        raise TypeError(f"Layout {name} must be a list of ints, got {value!r}") from None
    ints = bool(items) and all(isinstance(v, int) and not isinstance(v, bool) for v in items)
    if name == "order":
        if not ints or sorted(items) != list(range(len(items))):
            raise ValueError(f"Layout order must be a permutation of the dims, got {value!r}")
    elif not ints or not all(v > 0 for v in items):
        raise ValueError(f"Layout {name} must be a non-empty list of positive ints, got {value!r}")
    return items


@dataclass(frozen=True)
class Layout:
    sg_layout: tuple[int, ...] | None = None
    sg_data: tuple[int, ...] | None = None
    inst_data: tuple[int, ...] | None = None
    lane_layout: tuple[int, ...] | None = None
    lane_data: tuple[int, ...] | None = None
    order: tuple[int, ...] | None = None

    def __post_init__(self):
        for f in fields(self):
            object.__setattr__(self, f.name, _as_tuple(f.name, getattr(self, f.name)))
        if (self.sg_layout is None) != (self.sg_data is None):
            raise ValueError("Layout needs sg_layout and sg_data together")
        if not self.set_fields():
            raise ValueError("Layout needs sg_layout and sg_data (workgroup level), or inst_data or lane fields")
        ranks = {len(v) for v in self.set_fields().values()}
        if len(ranks) != 1:
            raise ValueError(f"Layout fields must all have the same rank: {self}")

    def set_fields(self) -> dict[str, tuple[int, ...]]:
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}

    @property
    def rank(self) -> int:
        return len(next(iter(self.set_fields().values())))

    @property
    def num_subgroups(self) -> int:
        return prod(self.sg_layout)

    def shares_data(self, shape) -> bool:
        """Whether subgroups hold the same elements of a value of `shape` (XeGPU RFC distribution rule: along a dim
        where sg_layout x sg_data exceeds the value, the assignment wraps)."""
        return any(n * d > w for n, d, w in zip(self.sg_layout, self.sg_data, shape))

    def subgroup_pieces(self, shape, subgroup: int) -> tuple[tuple[int, ...], ...]:
        """The offsets of the sg_data pieces subgroup `subgroup` owns in a value of `shape`, row-major (XeGPU RFC
        distribution rule: its index in sg_layout counts `order`'s first dim fastest; round robin along each dim,
        wrapping where sg_layout x sg_data exceeds the value)."""
        index, rest = [0] * self.rank, subgroup
        for d in self.order or reversed(range(self.rank)):
            index[d], rest = rest % self.sg_layout[d], rest // self.sg_layout[d]
        return tuple(product(*([(j * data + r * n * data) % w for r in range(max(1, w // (n * data)))]
                               for j, n, data, w in zip(index, self.sg_layout, self.sg_data, shape))))

    def distributes_like(self, other: Layout, shape) -> bool:
        """Whether every subgroup owns the same pieces of a value of `shape` under both layouts (RFC Appendix 2.3:
        sg_layout [32, 1] and sg_layout [4, 8] with order [0, 1], sg_data [64, 32], of a 256x32 tile); layouts
        without a workgroup map, when neither has one."""
        if self.sg_layout is None or other.sg_layout is None:
            return self.sg_layout is other.sg_layout
        return self.sg_data == other.sg_data and self.num_subgroups == other.num_subgroups and all(
            self.subgroup_pieces(shape, s) == other.subgroup_pieces(shape, s) for s in range(self.num_subgroups))

    def workgroup_level(self) -> Layout | None:
        """How subgroups share the value: sg_layout, sg_data and order (None at the subgroup level)."""
        return self._only("sg_layout", "sg_data", "order")

    def subgroup_level(self) -> Layout | None:
        """What a subgroup's piece keeps after wg-to-sg: inst_data and the lane fields (None when unset)."""
        return self._only("inst_data", "lane_layout", "lane_data")

    def _only(self, *names: str) -> Layout | None:
        kept = {name: getattr(self, name) for name in names if getattr(self, name) is not None}
        return Layout(**kept) if kept else None

    def text(self, dialect: str = "xetile") -> str:
        """`#xetile.wg_map<...>` in XeTile IR, `#xegpu.layout<...>` in XeGPU IR."""
        body = ", ".join(f"{k} = {format_list(v)}" for k, v in self.set_fields().items())
        return f"#xetile.wg_map<{body}>" if dialect == "xetile" else f"#xegpu.layout<{body}>"

    def __str__(self) -> str:
        return self.text()
