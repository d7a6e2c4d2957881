"""Cache hints of the memory ops (XeGPU RFC `load_nd`/`store_nd`/`prefetch_nd` attributes `l1_hint`, `l3_hint`).

The RFC's policies: loads `cached`, `uncached`, `streaming`, `read_invalidate`; stores `uncached`, `write_through`,
`write_back`, `streaming`. An Xe GPU uses L1 and L3 (the RFC: "may use L1_hint and L3_hint and omit L2_hint") and
accepts only some (L1, L3) pairs, the vISA LSC table (docs/reference/xe_builtins.md §5): LOAD_PAIRS, STORE_PAIRS.

A user gives one policy (`load_tile(t, cache="streaming")`), which names the L1 behaviour and takes the L3 one
of DEFAULT_L3, or an explicit (l1, l3) pair. `prefetch_tile`'s `locality` maps onto the load pairs (LOCALITY).
No hint (None) leaves the choice to the hardware's default. Hints change no value: the interpreter and the
CPU targets print and carry them but have no caches to steer.
"""
from __future__ import annotations

from dataclasses import dataclass

LOAD_POLICIES = ("cached", "uncached", "streaming", "read_invalidate")
STORE_POLICIES = ("uncached", "write_through", "write_back", "streaming")
LOAD_PAIRS = {("uncached", "uncached"), ("uncached", "cached"), ("cached", "uncached"), ("cached", "cached"),
              ("streaming", "uncached"), ("streaming", "cached"), ("read_invalidate", "cached")}
STORE_PAIRS = {("uncached", "uncached"), ("uncached", "write_back"), ("write_through", "uncached"),
               ("write_through", "write_back"), ("streaming", "uncached"), ("streaming", "write_back"),
               ("write_back", "write_back")}
# one policy -> its L1 behaviour with this L3 one: data read (written) with a hint stays in (goes back to) L3
# unless the hint is "uncached", which bypasses both levels
DEFAULT_L3 = {"load": {"cached": "cached", "uncached": "uncached", "streaming": "cached",
                       "read_invalidate": "cached"},
              "store": {"uncached": "uncached", "write_through": "write_back", "write_back": "write_back",
                        "streaming": "write_back"}}
# prefetch_tile locality (RFC: 0 no locality .. 3 keep in cache) -> (L1, L3): 3 into both caches; 2 into L3 only
# (RFC Appendix 2.5's large "L2" prefetch tiles); 1 into L1 as the first line to evict, and L3; 0 streamed
# through L1 only
LOCALITY = {3: ("cached", "cached"), 2: ("uncached", "cached"), 1: ("streaming", "cached"),
            0: ("streaming", "uncached")}
VISA = {"cached": "ca", "uncached": "uc", "streaming": "st", "read_invalidate": "ri", "write_back": "wb",
        "write_through": "wt"}
# SPV_INTEL_cache_controls: Load / Store Cache Control enumerants
SPIRV_LOAD = {"uncached": 0, "cached": 1, "streaming": 2, "read_invalidate": 3}
SPIRV_STORE = {"uncached": 0, "write_through": 1, "write_back": 2, "streaming": 3}
RULE = "cache hints are one of the RFC's policies, as an (L1, L3) pair an Xe LSC message accepts"


@dataclass(frozen=True)
class CacheHints:
    """The (L1, L3) policies of one load ("load", prefetches included) or store ("store")."""
    kind: str
    l1: str
    l3: str

    def problem(self) -> str | None:
        """Why these hints are not legal for their kind; None when they are."""
        pairs = LOAD_PAIRS if self.kind == "load" else STORE_PAIRS
        if (self.l1, self.l3) not in pairs:
            legal = ", ".join(f"({a}, {b})" for a, b in sorted(pairs))
            return f"{self.kind} cache hints ({self.l1}, {self.l3}) are not one of {legal}"
        return None

    def text(self, dialect: str) -> dict[str, str]:
        """The attributes as upstream XeGPU / XeTile print them: l1_hint = #xegpu.cache_hint<cached>."""
        return {f"{level}_hint": f"#{dialect}.cache_hint<{policy}>"
                for level, policy in (("l1", self.l1), ("l3", self.l3))}

    @property
    def visa(self) -> str:
        """The LSC message suffix, L1 then L3: `.ca.ca`."""
        return f".{VISA[self.l1]}.{VISA[self.l3]}"

    @property
    def spirv_controls(self) -> tuple[int, int]:
        """SPV_INTEL_cache_controls control of cache level 0 (L1) and level 1 (L3)."""
        table = SPIRV_LOAD if self.kind == "load" else SPIRV_STORE
        return table[self.l1], table[self.l3]


def cache_hints(kind: str, cache) -> CacheHints | None:
    """The hints of a user's `cache=` (None, a policy name, or an (l1, l3) pair) for a "load" or "store";
    ValueError naming the rule when it is none of them."""
    if cache is None:
        return None
    policies = LOAD_POLICIES if kind == "load" else STORE_POLICIES
    if isinstance(cache, str):
        if cache not in policies:
            raise ValueError(f"{kind} cache hint {cache!r} is not one of {', '.join(policies)} [{RULE}]")
        return CacheHints(kind, cache, DEFAULT_L3[kind][cache])
    if isinstance(cache, (tuple, list)) and len(cache) == 2 and all(isinstance(c, str) for c in cache):
        hints = CacheHints(kind, *cache)
        if (problem := hints.problem()) is not None:
            raise ValueError(f"{problem} [{RULE}]")
        return hints
    raise ValueError(f"{kind} cache hint must be a policy name or an (l1, l3) pair, got {cache!r} [{RULE}]")


def locality_hints(locality: int) -> CacheHints:
    """prefetch_tile's locality as the hints of its prefetch (LOCALITY)."""
    return CacheHints("load", *LOCALITY[locality])


def hint_attrs(hints: CacheHints | None, dialect: str) -> dict[str, str]:
    return {} if hints is None else hints.text(dialect)
