"""`@xetile.autotune` and `xetile.Config`: a kernel launched over several configurations (constexprs
and the tile_mma anchor layout), each timed with `xetile.testing.do_bench`, the fastest kept per tuning key.

A launch computes its key (the values of the `key` arguments, an array's by its shape, plus every array's dtype
and memory order, and the device). A seen key runs its winner with no timing: from memory, else from the disk cache
(winner_key: entries of the compile cache, so a fresh process reuses a tuning). A new key tunes, in this order:
1. `prune_configs_by["early_config_prune"](configs, named_args, **kwargs)` (as Triton) keeps a subset; `kwargs`
   are the launch's keyword arguments, its `device` and `target` among them where given (PRUNE_OPTIONS: what a
   prune needs to decide for the device the configs will run on);
2. the rules: each config is traced and lowered to subgroup-level IR for the device's target (the numpy
   interpreter checks against `cpu`), which runs the verifiers of the RFC's rules (sg_data divides the tile,
   layouts, inst_data and 2D block-IO limits), the register budget (target/code_budget.py) and shared local memory,
   then the target's workgroup size (Target.workgroup_rule); a config that breaks one is pruned with the
   error's message;
3. `perf_model(**named_args, **kwargs, **config.all_kwargs())` ranks the rest and `top_k` (an int, or a
   fraction of the configs) of them are kept;
4. each is compiled and launched once, untimed, on the launch's device: every build (the
   OpenCL CPU driver's takes seconds) comes before any timing, so no config is timed in the wake of its own build
   (measured on opencl:cpu: up to 40% slow, enough to lose the best config). A config that fails to compile or
   launch is skipped with its error; when every config is pruned or fails, the first error is raised with all
   the reasons;
5. each is timed TIMING_ROUNDS times, in turns (device time on a profiling queue of that device, as do_bench
   times; the numpy interpreter: wall time),
   each timing the median of do_bench's runs, each config keeping its fastest; a config's runs are sized at its
   first timing (its first run, estimate and warm-up: testing.prepare), and its later timings run them alone;
6. the finalists, the configs within FINALIST_MARGIN of the fastest, are timed again RACE_ROUNDS times, in turns
   (a burst of load on a shared machine then slows each of them, not only one), and each keeps its fastest time:
   load only ever slows a run, and a long kernel gets a single run from do_bench's `rep`, so one timing of it
   decides by the machine's noise.
The launch then runs the winner with the caller's arguments and options. Timing runs the kernel many times on
the launch's own arguments, so a kernel that accumulates into its outputs names them in `reset_to_zero` (zeroed
before each run and after the tuning) or `restore_value` (written back as they were), as Triton's autotuner takes
them. The disk cache's key holds the configs early_config_prune kept, so a prune that reads arguments outside the
tuning key decides again in a fresh process.

`XETILE_PRINT_AUTOTUNING=1` prints each config as it is pruned, fails or is timed, then every config's result and the
winner. A tuning that takes longer than a second shows its progress on stderr (runtime/progress.py: which config,
which step, which compile stage, how long so far); XETILE_QUIET=1 silences it.
"""
from __future__ import annotations

import dataclasses
import json
import os
import time
from dataclasses import dataclass, field

from ..compiler.pipeline import lower
from ..target.cpu_features import host_cpu
from ..target.targets import get_target
from ..errors import CompilationError, LaunchError, did_you_mean
from ..runtime.args import NOT_ARRAYS, array_layout, as_array, dtype_and_order, is_array, usm_ndarray_of
from ..runtime.device import NUMPY, Device, queue_name, select_device
from ..runtime import progress
from ..runtime.profiling import recording
from ..testing import Bench, prepare, summarize
from . import kernel as jit
from ..compiler.dependencies import Dependency, resolve
from ..compiler.driver import compile_kernel
from ..runtime.cache import DiskCache, compiler_hash
from ..runtime.usm_entries import current_entry

FINALIST_MARGIN = 1.25
RACE_ROUNDS = 3
TIMING_ROUNDS = 2
RULE_TARGET_OF_INTERPRETER = "cpu"
MAX_USM_KEYS = 4096  # array_key's remembered parts; a full table starts over
_usm_keys: dict = {}  # (parameter name, usm entry token) -> array_key
PRUNE_KEYS = ("early_config_prune", "perf_model", "top_k")
# The launch options early_config_prune is given beside the kernel's own keyword arguments: without them a prune
# of numpy arrays launched with `device=` decided for the default device (xetile.ops.matmul built and timed all 8 of
# its configs of one B panel on a CPU queue, where its CPU rules keep one)
PRUNE_OPTIONS = ("device", "target")


@dataclass(init=False)
class Config:
    """One point of the search: constexpr values (`kwargs`) and launch options (sg_layout, sg_data and, for
    kernels without tile_mma, num_subgroups)."""
    kwargs: dict
    sg_layout: list | None = None
    sg_data: list | None = None
    num_subgroups: int | None = None

    def __init__(self, kwargs: dict | None = None, *, sg_layout=None, sg_data=None, num_subgroups=None,
                 **constexprs):
        both = set(kwargs or {}) & set(constexprs)
        if both:
            raise ValueError(f"Config: {sorted(both)} given twice (in kwargs and as keywords)")
        triton = [name for name in constexprs if name in TRITON_CONFIG_OPTIONS]
        if triton:
            raise ValueError(f"Config: {triton[0]} is an option of Triton's Config "
                             f"({TRITON_CONFIG_OPTIONS[triton[0]]}); keywords here are constexprs")
        self.kwargs = {**(kwargs or {}), **constexprs}
        self.sg_layout = None if sg_layout is None else list(sg_layout)
        self.sg_data = None if sg_data is None else list(sg_data)
        self.num_subgroups = num_subgroups

    def options(self) -> dict:
        """The launch options it sets."""
        return {k: v for k in ("sg_layout", "sg_data", "num_subgroups") if (v := getattr(self, k)) is not None}

    def all_kwargs(self) -> dict:
        return {**self.kwargs, **self.options()}

    def __repr__(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.all_kwargs().items()) or "(no parameters)"

    def __hash__(self) -> int:
        """By the names it sets, which equal configs share whatever their order or number types (a set of configs,
        a dict keyed by them)."""
        return hash((frozenset(self.kwargs), frozenset(self.options())))


STAGES = {"early_config_prune": "pruned by early_config_prune", "rules": "pruned", "perf_model":
          "pruned by perf_model", "failed": "failed", "only": "not timed"}


# Triton's Config options, which a keyword here would take for a constexpr: what to write instead
TRITON_CONFIG_OPTIONS = {**jit.TRITON_OPTIONS, "num_ctas": "no clusters of workgroups here",
                         "maxnreg": "the target decides the register file (Target.dpas_build_options: the large "
                                    "one for kernels with DPAS on the GPU targets)",
                         "pre_hook": "no hook runs before a config's launch here"}


@dataclass
class Trial:
    """What tuning did with one config: its time in ms (`clock` "device" or "wall"), or why it was not timed
    (`stage`, a key of STAGES, `reason`, and the `error` raised, if any)."""
    config: Config
    ms: float | None = None
    clock: str | None = None
    stage: str | None = None
    reason: str | None = None
    error: Exception | None = None
    timings: int = 0  # every config's rounds and the finalists' race: `ms` is the fastest
    bench: Bench | None = field(default=None, repr=False, compare=False)  # its timed runs, once sized

    def __str__(self) -> str:
        if self.ms is not None:
            best_of = f", best of {self.timings} timings" if self.timings > 1 else ""
            return f"{self.config}: {self.ms:.4f} ms ({self.clock} clock{best_of})"
        return f"{self.config}: {STAGES[self.stage]}: {self.reason}"


@dataclass
class Tuning:
    """One launch's arguments as the tuner sees them."""
    grid: object
    args: tuple
    kwargs: dict
    named: dict  # every argument, by parameter name (defaults included)
    arrays: dict  # the array arguments of `named`
    device: Device
    trials: list = field(default_factory=list)
    saved: dict = field(default_factory=dict)  # restore_value's arrays as they were before tuning, by name
    runs: int = 0  # launches of configs while tuning


class Autotuner:
    """The autotuned kernel: launched as `kernel[grid](...)` like the kernel it wraps."""

    def __init__(self, kernel, configs, key, prune_configs_by=None, warmup=25, rep=100, cache_results=True,
                 reset_to_zero=(), restore_value=()):
        if not isinstance(kernel, jit.Kernel):
            raise TypeError("@xetile.autotune goes above @xetile.kernel")
        self.kernel = kernel
        self.configs = list(configs)
        if not self.configs or not all(isinstance(c, Config) for c in self.configs):
            raise ValueError("autotune: configs must be a non-empty list of xetile.Config")
        self.config_names = set().union(*(c.all_kwargs() for c in self.configs))  # what a launch must not pass
        strangers = sorted(set().union(*(c.kwargs for c in self.configs)) - set(kernel.params))
        if strangers:
            raise ValueError(f"autotune: a config sets {strangers[0]!r}, which is no parameter of {kernel.__name__}"
                             f"{did_you_mean(strangers[0], kernel.params)}; its parameters are {kernel.params}")
        self.key = list(key)
        unknown = [k for k in self.key if k not in kernel.params]
        if unknown:
            raise ValueError(f"autotune: key {unknown} are not parameters of {kernel.__name__} ({kernel.params})")
        self.prune = dict(prune_configs_by or {})
        if set(self.prune) - set(PRUNE_KEYS):
            raise ValueError(f"autotune: prune_configs_by takes {PRUNE_KEYS}, got {sorted(self.prune)}")
        self.warmup_ms, self.rep_ms, self.cache_results = warmup, rep, cache_results
        self.reset_to_zero, self.restore_value = list(reset_to_zero or ()), list(restore_value or ())
        unknown = [n for n in self.reset_to_zero + self.restore_value if n not in kernel.params
                   or n in kernel.constexprs]
        if unknown:
            raise ValueError(f"autotune: reset_to_zero and restore_value name {unknown}, not array parameters of "
                             f"{kernel.__name__} ({kernel.params})")
        self.best: dict = {}  # tuning key -> Config
        self.best_config: Config | None = None
        self.trials: list[Trial] = []  # of the last tuning
        self.__name__ = kernel.__name__
        self.__doc__ = kernel.__doc__

    def __repr__(self) -> str:
        return f"<xetile.autotune {self.__name__} over {len(self.configs)} configs>"

    def __getitem__(self, grid):
        return jit.Launcher(self, grid)

    def warmup(self, *args, grid=None, target: str | None = None, **kwargs) -> list:
        """The configs early_config_prune and the rules keep, compiled for these arguments, none run (Triton's
        Autotuner.warmup): their CompiledKernels, in config order."""
        tuning = self.tuning(grid, args, kwargs)
        kept = [c for i, c in enumerate(self.early_pruned(tuning)) if self.legal(tuning, c, f"rules of config {i + 1}")]
        return [self.kernel.warmup(*args, grid=grid, target=target, **with_config(kwargs, config)) for config in kept]

    def run(self, grid, args, kwargs) -> None:
        named = self.bound(args, kwargs)
        key = self.usm_key(named, kwargs)
        config = None if key is None else self.best.get(key)
        if config is None:
            tuning = self.tuning(grid, args, kwargs, named)
            key = self.tuning_key(tuning)
            config = self.best.get(key)
            if config is None:
                config = self.best[key] = self.cached_or_tuned(tuning, key)
        self.best_config = config
        return self.kernel.run(grid, args, with_config(kwargs, config))

    def usm_key(self, named: dict, kwargs) -> tuple | None:
        """`tuning_key` of a launch (its arguments `named`, as `bound` gives them) whose arrays are all dpnp arrays
        (usm_ndarray), found without a Tuning: its device is the first array's queue's, as `select_device` finds it
        (the launch itself then refuses arrays of other contexts or devices). None for any other launch, whose key
        `tuning_key` finds: one that names a device, passes another kind of array, or keys on an array. An autotuned
        launch on 3 dpnp arrays spent 7.5 us of its 20 in the Tuning and its key, this 2.8 (docs/performance.md)."""
        if kwargs.get("device") is not None:
            return None
        queue, arrays = None, []
        for name, value in named.items():
            usm = usm_ndarray_of(value)
            if usm is None:
                if is_array(value):
                    return None
                continue
            if queue is None:
                queue = usm.sycl_queue
            arrays.append(array_key(name, usm))
        if queue is None or any(k not in named or type(named[k]) not in NOT_ARRAYS for k in self.key):
            return None
        return tuple(named[k] for k in self.key), tuple(arrays), queue_name(queue)

    def bound(self, args, kwargs) -> dict:
        """The launch's arguments by parameter name (Kernel.named_arguments); a LaunchError where it sets a config's
        parameter or they do not bind."""
        clash = self.config_names & kwargs.keys()
        if clash:
            raise LaunchError(f"autotuned kernel {self.__name__}: {sorted(clash)} are set by its configs; "
                              "do not pass them at launch")
        try:
            return self.kernel.named_arguments(args, kwargs)
        except TypeError as e:
            raise LaunchError(f"{self.__name__}(): {e}; parameters are ({', '.join(self.kernel.params)})") from None

    def tuning(self, grid, args, kwargs, named: dict | None = None) -> Tuning:
        """The launch as the tuner sees it; `named`: its arguments already `bound`."""
        named = self.bound(args, kwargs) if named is None else named
        arrays = {n: v for n, v in named.items() if is_array(v)}
        return Tuning(grid, args, kwargs, named, arrays, select_device(kwargs.get("device"), list(arrays.values())))

    def tuning_key(self, tuning: Tuning) -> tuple:
        """The key argument values (an array by its shape), every array's dtype and memory order, and the device."""
        missing = [k for k in self.key if k not in tuning.named]
        if missing:
            raise LaunchError(f"autotuned kernel {self.__name__}: the key arguments {missing} were not given")
        values = tuple(array_layout(tuning.named[k])[0] if k in tuning.arrays else tuning.named[k] for k in self.key)
        arrays = tuple(array_key(n, v) for n, v in tuning.arrays.items())
        device = tuning.device
        return values, arrays, NUMPY if device.queue is None else queue_name(device.queue)

    def cached_or_tuned(self, tuning: Tuning, key: tuple) -> Config:
        """The winner among the configs early_config_prune keeps for this launch (which may depend on arguments
        outside the key): from the disk cache, whose key holds those configs, else tuned."""
        candidates = self.early_pruned(tuning)
        cache_key = winner_key(self.kernel, candidates, key, tuning.device) if self.cache_results else None
        index = None if cache_key is None else load_winner(self.kernel, cache_key)
        if index is not None and 0 <= index < len(candidates):
            report(f"autotune {self.__name__}: cached winner {candidates[index]} for key {key}")
            return candidates[index]
        config = self.tune(tuning, key, candidates)
        if cache_key is not None:
            compiled = self.kernel.warmup(*tuning.args, **with_config(tuning.kwargs, config))  # in memory: a hit
            store_winner(cache_key, candidates.index(config), config, compiled.artifact.dependencies)
        return config

    # ---- tuning -----------------------------------------------------------------------------
    def tune(self, tuning: Tuning, key: tuple, candidates: list[Config]) -> Config:
        """The fastest of `candidates`. Once a config ran, reset_to_zero's arrays are zeroed after the tuning and
        restore_value's written back as they were, for the launch that follows (as Triton's autotuner leaves them),
        also when the tuning raised."""
        tuning.saved = {n: copied(self.array_named(tuning, n)) for n in self.restore_value
                        if tuning.named[n] is not None}
        try:
            with progress.activity(f"autotune {self.__name__}"):
                return self.tuned(tuning, key, candidates)
        finally:
            if tuning.runs:
                self.restore(tuning)

    def array_named(self, tuning: Tuning, name: str):
        """Argument `name` of reset_to_zero or restore_value, which must be an array."""
        value = tuning.named[name]
        if not is_array(value):
            raise LaunchError(f"autotuned kernel {self.__name__}: {name!r} of reset_to_zero or restore_value is "
                              f"{type(value).__name__}, not an array")
        return value

    def restore(self, tuning: Tuning) -> None:
        """reset_to_zero's arrays zeroed and restore_value's written back as they were before tuning."""
        for name in self.reset_to_zero:
            if tuning.named[name] is not None:  # None: an optional array not given (Kernel.specialize)
                self.array_named(tuning, name)[...] = 0
        for name, saved in tuning.saved.items():
            tuning.named[name][...] = saved

    def tuned(self, tuning: Tuning, key: tuple, candidates: list[Config]) -> Config:
        start = time.perf_counter()
        candidates = self.ranked(tuning, [c for i, c in enumerate(candidates)
                                          if self.legal(tuning, c, f"rules of config {i + 1}/{len(candidates)}")])
        if len(candidates) == 1:
            tuning.trials.append(Trial(candidates[0], stage="only", reason="the only config left"))
        elif candidates:
            self.time_all(tuning, candidates)
        listed = [*self.configs, *(t.config for t in tuning.trials)]  # early_config_prune may make new configs
        self.trials = sorted(tuning.trials, key=lambda t: listed.index(t.config))
        for trial in self.trials:
            report(f"autotune {self.__name__}: {trial}")
        ran = [t for t in tuning.trials if t.ms is not None or t.stage == "only"]
        if not ran:
            raise no_config_error(self.__name__, tuning.trials)
        best = min(ran, key=lambda t: t.ms or 0.0).config
        report(f"autotune {self.__name__}: {time.perf_counter() - start:.2f} s for key {key}; best config {best}")
        return best

    def early_pruned(self, tuning: Tuning) -> list[Config]:
        prune = self.prune.get("early_config_prune")
        if prune is None:
            return list(self.configs)
        kept = list(prune(list(self.configs), tuning.named, **prune_kwargs(tuning.kwargs)))
        for config in self.configs:
            if config not in kept:
                self.note(tuning, Trial(config, stage="early_config_prune", reason="dropped by early_config_prune"))
        return kept

    def legal(self, tuning: Tuning, config: Config, phase: str) -> bool:
        """Whether `config` keeps the rules (module docstring, step 2); a Trial with the reason when not."""
        progress.at_phase(phase)
        try:
            check_rules(self.kernel, tuning, config)
            return True
        except (CompilationError, LaunchError) as e:
            self.note(tuning, Trial(config, stage="rules", reason=str(e), error=e))
            return False

    def note(self, tuning: Tuning, trial: Trial) -> None:
        """Records `trial` and prints it when XETILE_PRINT_AUTOTUNING=1."""
        tuning.trials.append(trial)
        report(f"autotune {self.__name__}: {trial}")

    def ranked(self, tuning: Tuning, configs: list[Config]) -> list[Config]:
        model = self.prune.get("perf_model")
        if model is None:
            return configs
        top_k = self.prune.get("top_k", len(configs))
        if isinstance(top_k, float) and top_k <= 1.0:
            top_k = max(1, int(len(configs) * top_k))
        if not isinstance(top_k, int) or isinstance(top_k, bool):
            raise ValueError(f"autotune: top_k must be an int or a fraction <= 1.0, got {top_k!r}")
        named, kwargs = tuning.named, plain_kwargs(tuning.kwargs)
        estimates = {id(c): model(**named, **kwargs, **c.all_kwargs()) for c in configs}
        ranked = sorted(configs, key=lambda c: estimates[id(c)])
        for config in ranked[top_k:]:
            self.note(tuning, Trial(config, stage="perf_model", reason=f"estimate {estimates[id(config)]} is not in "
                                    f"the top {top_k}"))
        return ranked[:top_k]

    def time_all(self, tuning: Tuning, configs: list[Config]) -> None:
        for i, config in enumerate(configs):
            progress.at_phase(f"build of config {i + 1}/{len(configs)}")
            trial = self.built(tuning, config)
            if trial.stage is None:
                tuning.trials.append(trial)  # printed once timed
            else:
                self.note(tuning, trial)
        trials = [t for t in tuning.trials if t.stage is None]  # built: to be timed
        for round in range(TIMING_ROUNDS):
            self.time_round(trials, tuning, f"timing round {round + 1}/{TIMING_ROUNDS}")
        self.race([t for t in trials if t.ms is not None], tuning)

    def time_round(self, trials: list[Trial], tuning: Tuning, phase: str) -> None:
        """Times each of `trials` once more, in turn."""
        for i, trial in enumerate(trials):
            progress.at_phase(f"{phase}, config {i + 1}/{len(trials)}")
            ms = self.time(trial, tuning)
            timing = trial if ms is None else f"{trial.config}: {ms:.4f} ms ({ms.clock} clock)"
            report(f"autotune {self.__name__}: {phase}: {timing}")

    def race(self, timed: list[Trial], tuning: Tuning) -> None:
        """Times the finalists among `timed` again, in turns (module docstring, step 6)."""
        if not timed:
            return
        fastest = min(t.ms for t in timed)
        finalists = [t for t in timed if t.ms <= fastest * FINALIST_MARGIN]
        if len(finalists) < 2:
            return
        for round in range(RACE_ROUNDS):
            self.time_round(finalists, tuning, f"finalists' round {round + 1}/{RACE_ROUNDS}")

    def launcher(self, tuning: Tuning, config: Config):
        """A launch of `config` that starts from the arrays as the caller gave them (reset_to_zero's zeroed,
        restore_value's written back), as each of Triton's timing runs does."""
        kwargs = with_config(tuning.kwargs, config)

        def launch():
            self.restore(tuning)
            tuning.runs += 1
            self.kernel.run(tuning.grid, tuning.args, dict(kwargs))  # run() takes the launch options out
        return launch

    def built(self, tuning: Tuning, config: Config) -> Trial:
        """`config` compiled and run once, untimed (module docstring, step 4): a Trial to time, or a failed one."""
        try:
            with recording() as run:
                self.launcher(tuning, config)()
                run.wait()
        except (CompilationError, LaunchError) as e:
            return Trial(config, stage="failed", reason=str(e), error=e)
        return Trial(config)

    def time(self, trial: Trial, tuning: Tuning):
        """One more timing of `trial`'s config, the median of do_bench's runs (returned; None when it failed), sized
        at its first timing (testing.Bench); the trial keeps its fastest."""
        try:
            if trial.bench is None:
                trial.bench = prepare(self.launcher(tuning, trial.config), self.warmup_ms, self.rep_ms)
            times, clock = trial.bench.time()
        except (CompilationError, LaunchError) as e:
            trial.ms, trial.stage, trial.reason, trial.error = None, "failed", str(e), e
            return None
        ms = summarize(times, clock, None, "median")
        trial.ms, trial.clock = float(ms) if trial.ms is None else min(trial.ms, float(ms)), ms.clock
        trial.timings += 1
        return ms


def array_key(name: str, value) -> tuple[str, str, tuple[int, int]]:
    """An array argument's part of the tuning key: its name, dtype and memory order. A dpnp or usm_ndarray array's is
    remembered by its entry's token (runtime/usm_entries.py: a token stands for its dtype, shape and strides), which a
    launch reads anyway: reading its layout cost 2.4 us an array at each launch (Zen 5, 2026-12-04)."""
    usm = usm_ndarray_of(value)
    if usm is None:
        return layout_key(name, value)
    token = current_entry(usm)[2]
    key = _usm_keys.get((name, token))
    if key is None:
        if len(_usm_keys) >= MAX_USM_KEYS:
            _usm_keys.clear()
        key = _usm_keys[name, token] = layout_key(name, usm)
    return key


def layout_key(name: str, value) -> tuple[str, str, tuple[int, int]]:
    """`array_key` read from the array's layout."""
    dtype, order = dtype_and_order(name, *array_layout(as_array(name, value)))
    return name, str(dtype), order


def check_rules(kernel, tuning: Tuning, config: Config) -> None:
    """Traces `config` and lowers it to subgroup-level IR for the device's target, which raises the
    CompilationError of a broken rule; then the target's workgroup size. A launch option the kernels of this
    version do not take (num_subgroups, before it exists) is a LaunchError."""
    unsupported = set(config.options()) - set(jit.LAUNCH_OPTIONS)  # read now: LAUNCH_OPTIONS may grow
    if unsupported:
        raise LaunchError(f"this xetile_jit has no launch option {', '.join(sorted(unsupported))}")
    values, options = kernel.bind(tuning.args, kernel.with_heuristics(tuning.args, with_config(tuning.kwargs, config)))
    target = RULE_TARGET_OF_INTERPRETER if tuning.device.kind == NUMPY else tuning.device.target
    key, specs, consts, compile_options = kernel.specialize(values, options, target)
    traced = compile_kernel(kernel, specs, consts, key[1], dataclasses.replace(compile_options, target=NUMPY))
    func = lower(traced.func, until="xegpu-sg", target=target)["xegpu-sg"]
    rule = get_target(target).workgroup_rule(func.num_subgroups or 1)
    if rule:
        raise CompilationError(f"kernel {kernel.__name__}: {rule}")


def with_config(kwargs: dict, config: Config) -> dict:
    return {**kwargs, **config.all_kwargs()}


def plain_kwargs(kwargs: dict) -> dict:
    return {k: v for k, v in kwargs.items() if k not in jit.LAUNCH_OPTIONS}


def prune_kwargs(kwargs: dict) -> dict:
    """early_config_prune's keyword arguments: the kernel's, and of the launch options PRUNE_OPTIONS."""
    return {k: v for k, v in kwargs.items() if k not in jit.LAUNCH_OPTIONS or k in PRUNE_OPTIONS}


def no_config_error(name: str, trials: list[Trial]) -> Exception:
    """The error of the first config that raised one (CompilationError when none did), with every reason."""
    kind = next((type(t.error) for t in trials if t.error is not None), CompilationError)
    reasons = "\n".join(f"  {t}" for t in trials)
    return kind(f"autotuned kernel {name}: no config could run:\n{reasons}")


def report(line: str) -> None:
    if os.environ.get("XETILE_PRINT_AUTOTUNING") == "1":
        progress.message(line)


# Triton's autotune options that have no counterpart here: what to write instead
NO_HOOKS = "no hook runs around a config's runs here; reset_to_zero and restore_value do what Triton's hooks mostly do"
TRITON_AUTOTUNE_OPTIONS = {"pre_hook": NO_HOOKS, "post_hook": NO_HOOKS,
                           "use_cuda_graph": "there are no CUDA graphs: drop it",
                           "do_bench": "every config is timed by xetile.testing.do_bench: drop it"}


def autotune(configs, key, prune_configs_by=None, warmup=25, rep=100, cache_results=True, reset_to_zero=(),
             restore_value=(), **triton_options):
    """Decorator above `@xetile.kernel`: tunes the kernel over `configs` per value of the `key` arguments
    (module docstring). `reset_to_zero` and `restore_value` name array arguments (Triton's): the first are zeroed
    before each timing run and after the tuning, the second written back as they were before it, so that a kernel
    that accumulates into its outputs can be tuned. Other options of Triton's autotune are a TypeError naming what
    to write here."""
    for name in triton_options:
        hint = TRITON_AUTOTUNE_OPTIONS.get(name)
        raise TypeError(f"autotune() got an unexpected keyword argument '{name}'" +
                        (f" ({name} is an option of Triton's autotune: {hint})" if hint else ""))

    def decorate(kernel) -> Autotuner:
        return Autotuner(kernel, configs, key, prune_configs_by, warmup, rep, cache_results, reset_to_zero,
                         restore_value)
    return decorate


def copied(array):
    """A copy of an array argument (a torch tensor's clone, any other array's copy)."""
    return array.clone() if hasattr(array, "clone") else array.copy()


# ---- the winners on disk: entries of the compile cache (runtime/cache.py: same directory, atomic writes, privacy
# checks and size cap). A winner's key covers xetile_jit's own sources (`compiler_hash`), the kernel's source, the
# configs early_config_prune kept for the launch, the tuning key's values, every array argument's dtype and the device
# (its target, name and driver version; on a CPU device the CPU's feature flags, target/cpu_features.py). The entry
# holds the winner's index among those configs and what the winner's trace read (globals, closure cells, inlined
# kernels: compiler/dependencies.py), checked on load as the compile cache does: a changed helper kernel or global
# tunes again.
WINNER_FIELD = "autotune"


def device_identity(device: Device) -> tuple:
    if device.kind == NUMPY:
        return (NUMPY,)
    sycl = device.queue.sycl_device
    return device.target, sycl.name, sycl.driver_version, host_cpu().key if sycl.is_cpu else None


def winner_key(kernel, configs, key: tuple, device: Device) -> str:
    return DiskCache.key(WINNER_FIELD, compiler_hash(), kernel.source_hash, configs, key, device_identity(device))


def load_winner(kernel, cache_key: str) -> int | None:
    """The index of the cached winner, or None (no entry, another layout of entry, or a changed dependency)."""
    entry = DiskCache().get(cache_key)
    if entry is None or WINNER_FIELD not in entry:
        return None
    try:
        data = json.loads(entry[WINNER_FIELD])
        index = int(data["index"])
        dependencies = tuple(Dependency(*map(str, d)) for d in data["dependencies"])
    except (KeyError, ValueError, TypeError):
        return None
    return None if resolve(kernel, dependencies) is None else index


def store_winner(cache_key: str, index: int, config, dependencies) -> None:
    data = {"index": index, "config": repr(config), "dependencies": [d.to_json() for d in dependencies]}
    DiskCache().put(cache_key, {WINNER_FIELD: json.dumps(data)})
