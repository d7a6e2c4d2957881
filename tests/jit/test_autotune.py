"""Autotuning: xetile.Config, @xetile.autotune (pruning with reasons, timing, winners in memory and on
disk), xetile.layouts and xetile.testing.do_bench. Mostly in the numpy interpreter (wall clock); the tests marked
opencl run on the OpenCL CPU device (device clock)."""
from __future__ import annotations

import io
import subprocess
import sys
import textwrap
import time
import warnings

import dpctl
import numpy as np
import pytest

import xetile_jit as xetile
from xetile_jit.runtime import progress
from xetile_jit.jit import autotune as autotune_module
from xetile_jit.jit import kernel as jit
from xetile_jit.ir.xetile_ops import check_distribution
from xetile_jit.runtime.profiling import profiling_queue

from conftest import subprocess_env, tutorial
from usm_arrays import Interface, count_interface_reads, needs_dpnp

M, N, K = 40, 24, 20
FAST = {"warmup": 0.1, "rep": 0.1}


gemm = tutorial("03-matrix-multiplication").matmul_kernel


GOOD = [xetile.Config({"BM": 16, "BN": 16, "BK": 16}, sg_layout=[1, 1], sg_data=[16, 16]),
        xetile.Config({"BM": 32, "BN": 16, "BK": 16}, sg_layout=[2, 1], sg_data=[16, 16]),
        xetile.Config(BM=32, BN=32, BK=8, sg_layout=[2, 2], sg_data=[16, 16])]


def grid(meta):
    return xetile.cdiv(M, meta["BM"]), xetile.cdiv(N, meta["BN"])


def operands(rng, m=M, n=N, k=K):
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
    return a, b, np.zeros((m, n), np.float32), a.astype(np.float32) @ b.astype(np.float32)


def tuned(configs, **options):
    return xetile.autotune(configs, key=["M", "N", "K"], **(FAST | options))(gemm)


@pytest.fixture
def bench_count(monkeypatch):
    """How many configs were timed (their runs sized by the tuner: testing.prepare, once a config). One round and
    no finalists' race: the interpreter's runs are slow."""
    monkeypatch.setattr(autotune_module, "TIMING_ROUNDS", 1)
    monkeypatch.setattr(autotune_module, "RACE_ROUNDS", 0)
    calls = []
    prepare = autotune_module.prepare
    monkeypatch.setattr(autotune_module, "prepare", lambda *a, **k: calls.append(1) or prepare(*a, **k))
    return calls


def scripted(monkeypatch, timings: list, before_each=lambda: None) -> dict:
    """The tuner's timings in call order from `timings` (ms, wall clock), each one run of a scripted Bench; returns
    the count of benches prepared and of timings."""
    counts = {"prepared": 0, "timed": 0}

    class Scripted:
        def time(self):
            before_each()
            counts["timed"] += 1
            return np.array([timings[counts["timed"] - 1]]), "wall"

    def prepare(launch, warmup, rep):
        counts["prepared"] += 1
        return Scripted()
    monkeypatch.setattr(autotune_module, "prepare", prepare)
    return counts


@pytest.fixture
def numpy_device(monkeypatch):
    monkeypatch.setenv("XETILE_DEVICE", "numpy")


def test_config_fills_constexprs_and_launch_options():
    config = xetile.Config({"BM": 32}, BN=16, sg_layout=(2, 1), sg_data=[16, 16])
    assert config.kwargs == {"BM": 32, "BN": 16}
    assert config.all_kwargs() == {"BM": 32, "BN": 16, "sg_layout": [2, 1], "sg_data": [16, 16]}
    assert repr(config) == "BM=32, BN=16, sg_layout=[2, 1], sg_data=[16, 16]"
    assert xetile.Config(num_subgroups=4).options() == {"num_subgroups": 4}
    with pytest.raises(ValueError, match="given twice"):
        xetile.Config({"BM": 32}, BM=64)
    with pytest.raises(ValueError, match="Config: num_warps is an option of Triton's Config .num_warps is Triton's; "
                                         "here it is num_subgroups"):
        xetile.Config({"BM": 32}, num_warps=4)
    with pytest.raises(ValueError, match="Config: pre_hook is an option of Triton's Config"):
        xetile.Config({"BM": 32}, pre_hook=print)
    with pytest.raises(ValueError, match="autotune: a config sets 'BKK', which is no parameter of matmul_kernel; did "
                                         "you mean 'BK'"):
        xetile.autotune([*GOOD, xetile.Config(BM=16, BN=16, BKK=16)], key=["M"])(gemm)
    with pytest.raises(TypeError, match="post_hook is an option of Triton's autotune: no hook runs around a "
                                        "config's runs here; reset_to_zero and restore_value"):
        xetile.autotune(GOOD, key=["M"], post_hook=print)


def test_tuned_kernel_matches_numpy_for_every_config(numpy_device, rng, bench_count):
    a, b, c, expected = operands(rng)
    kern = tuned(GOOD)
    kern[grid](a, b, c, M, N, K)
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5)
    assert len(bench_count) == len(GOOD) and kern.best_config in GOOD
    assert [t.config for t in kern.trials] == GOOD and all(t.ms > 0 and t.clock == "wall" for t in kern.trials)
    for config in GOOD:  # every config the tuner timed computes the same numbers
        c[:] = 0
        gemm[grid](a, b, c, M, N, K, **config.all_kwargs())
        np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5)


def test_seen_key_reuses_the_winner_and_a_new_key_tunes_again(numpy_device, rng, bench_count):
    a, b, c, expected = operands(rng)
    kern = tuned(GOOD[:2])
    kern[grid](a, b, c, M, N, K)
    assert len(bench_count) == 2
    c[:] = 0
    kern[grid](a, b, c, M, N, K)
    assert len(bench_count) == 2  # no timing on a seen key
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5)
    a2, b2, c2, expected2 = operands(rng, k=K + 12)  # a new K: a new key
    kern[grid](a2, b2, c2, M, N, K + 12)
    assert len(bench_count) == 4
    np.testing.assert_allclose(c2, expected2, rtol=1e-5, atol=1e-5)
    kern[grid](a.astype(np.float32), b.astype(np.float32), c, M, N, K)  # new dtypes: a new key
    assert len(bench_count) == 6


def test_a_second_autotuner_finds_the_winner_on_disk(numpy_device, rng, bench_count, tmp_path, monkeypatch):
    monkeypatch.setenv("XETILE_CACHE_DIR", str(tmp_path))
    a, b, c, _ = operands(rng)
    tuned(GOOD[:2])[grid](a, b, c, M, N, K)
    again = tuned(GOOD[:2])
    again[grid](a, b, c, M, N, K)
    assert len(bench_count) == 2 and again.best_config in GOOD and again.trials == []
    uncached = tuned(GOOD[:2], cache_results=False)
    uncached[grid](a, b, c, M, N, K)
    assert len(bench_count) == 4


FRESH_PROCESS = textwrap.dedent("""
    import numpy as np
    import xetile_jit as xetile
    import test_autotune as t
    a, b, c, expected = t.operands(np.random.default_rng(0))
    kern = t.tuned(t.GOOD[:2])
    kern[t.grid](a, b, c, t.M, t.N, t.K)
    assert np.allclose(c, expected, rtol=1e-5, atol=1e-5)
    print("best", kern.best_config)
""")


def test_a_fresh_process_reuses_the_winner(tmp_path):
    env = subprocess_env(XETILE_CACHE_DIR=str(tmp_path), XETILE_DEVICE="numpy", XETILE_PRINT_AUTOTUNING="1")
    runs = [subprocess.run([sys.executable, "-c", FRESH_PROCESS], env=env, capture_output=True, text=True,
                           timeout=120) for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr
    results = [[line for line in run.stdout.splitlines() if " ms (wall clock" in line and "round" not in line]
               for run in runs]
    assert list(map(len, results)) == [2, 0]
    assert "autotune matmul_kernel: timing round 1/2: " in runs[0].stdout  # each config as it is timed
    assert "cached winner" in runs[1].stdout
    assert runs[0].stdout.splitlines()[-1] == runs[1].stdout.splitlines()[-1]  # the same best config


def test_pruned_configs_are_reported_with_their_reasons(numpy_device, rng, bench_count, capsys, monkeypatch):
    monkeypatch.setenv("XETILE_PRINT_AUTOTUNING", "1")
    bad = [xetile.Config(BM=32, BN=16, BK=16, sg_layout=[2, 1], sg_data=[12, 16]),   # sg_data does not divide
           xetile.Config(BM=64, BN=64, BK=16, sg_layout=[32, 32], sg_data=[2, 2]),   # 1024 subgroups
           xetile.Config(BM=256, BN=128, BK=16, sg_layout=[1, 1], sg_data=[256, 128])]  # 128 KiB a subgroup
    a, b, c, expected = operands(rng)
    kern = tuned(GOOD[:2] + bad)
    kern[grid](a, b, c, M, N, K)
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5)
    assert len(bench_count) == 2
    pruned = {repr(t.config): t.reason for t in kern.trials if t.stage == "rules"}
    assert list(pruned) == list(map(repr, bad))
    assert "sg_data[0] = 12 does not divide the result dim 32" in pruned[repr(bad[0])]
    assert "16384 work-items; a workgroup on target cpu has at most 8192" in pruned[repr(bad[1])]
    assert "each subgroup holds a 256x128 f32 value (128 KiB); the register budget" in pruned[repr(bad[2])]
    printed = capsys.readouterr().out
    # each pruned config and each timed config's time as it is pruned or timed, and again in the summary
    assert printed.count("pruned:") == 6 and printed.count(" ms (wall clock)") == 4 and "best config" in printed


def test_a_failing_config_does_not_stop_tuning(numpy_device, rng, bench_count):
    zero_step = xetile.Config(BM=16, BN=16, BK=0, sg_layout=[1, 1], sg_data=[16, 16])  # fails to trace
    bad_grid = xetile.Config(BM=8, BN=16, BK=16, sg_layout=[1, 1], sg_data=[8, 16])   # fails at launch

    def grid_of(meta):
        return (-1, 1) if meta["BM"] == 8 else grid(meta)

    a, b, c, expected = operands(rng)
    kern = tuned([zero_step, bad_grid] + GOOD[:2])
    kern[grid_of](a, b, c, M, N, K)
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5)
    trials = {repr(t.config): t for t in kern.trials}
    assert trials[repr(zero_step)].stage == "rules"
    assert "shape [16, 0] must be positive" in trials[repr(zero_step)].reason
    assert trials[repr(bad_grid)].stage == "failed" and "grid must be" in trials[repr(bad_grid)].reason
    assert kern.best_config in GOOD[:2]


def test_the_finalists_are_timed_again_in_turns_and_keep_their_fastest_time(numpy_device, rng, monkeypatch):
    """A config slowed by load in its timings still wins when it is within FINALIST_MARGIN: every config is timed
    in TIMING_ROUNDS turns, then the finalists again in turns; a config far behind is not timed again."""
    assert autotune_module.TIMING_ROUNDS == 2
    # the timings in call order: two rounds of GOOD[0], [1], [2], then the finalists GOOD[0] and [1] in turns
    timings = [1.0, 1.2, 5.0] + [1.1, 1.0, 4.0] + [1.0, 0.8] + [1.1, 0.9] + [1.0, 1.3]
    counts = scripted(monkeypatch, timings)
    a, b, c, expected = operands(rng)
    kern = tuned(GOOD, cache_results=False)
    kern[grid](a, b, c, M, N, K)
    # each config's runs sized once, at its first timing, then run again in each later round
    assert counts == {"prepared": len(GOOD), "timed": 6 + 2 * autotune_module.RACE_ROUNDS}
    assert kern.best_config == GOOD[1]
    assert [(t.ms, t.timings) for t in kern.trials] == [(1.0, 5), (0.8, 5), (4.0, 2)]
    assert "0.8000 ms (wall clock, best of 5 timings)" in str(kern.trials[1])
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5)


def test_every_config_is_built_and_run_before_any_is_timed(numpy_device, rng, monkeypatch):
    """No config is timed in the wake of its own build (the OpenCL CPU driver's takes seconds): the first timing
    comes after every config has been compiled and launched once."""
    launched, at_first_timing = [], []
    run = autotune_module.jit.Kernel.run

    def counted_run(self, *args):
        launched.append(1)
        return run(self, *args)

    monkeypatch.setattr(autotune_module.jit.Kernel, "run", counted_run)
    scripted(monkeypatch, [1.0] * 20, before_each=lambda: at_first_timing.append(len(launched)))
    a, b, c, expected = operands(rng)
    kern = tuned(GOOD, cache_results=False)
    kern[grid](a, b, c, M, N, K)
    assert at_first_timing[0] == len(GOOD) and len(kern.kernel.cache) >= len(GOOD)
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5)


def test_when_every_config_fails_the_error_lists_them(numpy_device, rng):
    a, b, c, _ = operands(rng)
    kern = tuned([xetile.Config(BM=32, BN=16, BK=16, sg_layout=[2, 1], sg_data=[12, 16]),
                  xetile.Config(BM=32, BN=16, BK=16, sg_layout=[2, 1], sg_data=[32, 3])])
    with pytest.raises(xetile.CompilationError, match=r"no config could run:\n.*sg_data\[0\] = 12(.|\n)*sg_data\[1\]"):
        kern[grid](a, b, c, M, N, K)
    assert not c.any()


def test_early_prune_perf_model_and_top_k(numpy_device, rng, bench_count):
    seen = {}

    def early(configs, named_args, **kwargs):
        seen.update(named_args)
        return [c for c in configs if c.kwargs["BK"] == 16]

    def model(**kwargs):  # bigger tiles are "faster"
        assert kwargs["M"] == M and kwargs["a"] is a
        return -kwargs["BM"] * kwargs["BN"]

    a, b, c, expected = operands(rng)
    configs = GOOD + [xetile.Config(BM=16, BN=32, BK=16, sg_layout=[1, 2], sg_data=[16, 16])]
    kern = tuned(configs, prune_configs_by={"early_config_prune": early, "perf_model": model, "top_k": 2})
    kern[grid](a, b, c, M, N, K)
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5)
    assert seen["M"] == M and seen["a"] is a
    stages = [t.stage for t in kern.trials]
    assert stages == ["perf_model", None, "early_config_prune", None] and len(bench_count) == 2
    with pytest.raises(ValueError, match="prune_configs_by takes"):
        tuned(GOOD, prune_configs_by={"topk": 2})


def test_early_prune_is_given_the_launch_device_and_target(numpy_device, rng, bench_count):
    """A prune decides for the device the configs will run on: the launch's `device` and `target` reach it where
    given (with numpy arrays the default device may be another), and no other launch option does."""
    seen = []

    def early(configs, named_args, **kwargs):
        seen.append(kwargs)
        return configs[:1]

    kern = tuned(GOOD, prune_configs_by={"early_config_prune": early})
    a, b, c, _ = operands(rng)
    kern[grid](a, b, c, M, N, K)
    a, b, c, expected = operands(rng, k=K + 16)  # a new key: tuned again
    kern[grid](a, b, c, M, N, K + 16, device="numpy", target="xe-emulated", check=True)
    assert seen == [{}, {"device": "numpy", "target": "xe-emulated"}]
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5)


def test_early_prune_reading_arguments_outside_the_key_decides_before_the_disk_cache(numpy_device, rng, bench_count,
                                                                                     tmp_path, monkeypatch):
    """The disk cache's key holds the configs early_config_prune kept, so a prune that reads what the tuning key
    does not hold (an argument outside it; here a dict the test changes) decides again in a new autotuner; and a
    prune may return configs of its own making (Triton's matmul prune does), which then run and are reported."""
    monkeypatch.setenv("XETILE_CACHE_DIR", str(tmp_path))
    allowed = {"BM": 32}

    def early(configs, named_args, **kwargs):
        return [xetile.Config(c.kwargs, sg_layout=c.sg_layout, sg_data=c.sg_data) for c in configs
                if c.kwargs["BM"] == allowed["BM"]]

    a, b, c, expected = operands(rng)
    first = tuned(GOOD[:2], prune_configs_by={"early_config_prune": early})
    first[grid](a, b, c, M, N, K)
    assert first.best_config == GOOD[1] and first.best_config is not GOOD[1]   # a copy the prune made
    assert [t.stage for t in first.trials] == ["early_config_prune", "only"]
    allowed["BM"] = 16
    c[:] = 0
    second = tuned(GOOD[:2], prune_configs_by={"early_config_prune": early})
    second[grid](a, b, c, M, N, K)
    assert second.best_config == GOOD[0]                                       # not the cached BM=32
    assert [t.stage for t in second.trials] == ["only", "early_config_prune"]  # chosen again, not read from disk
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5)


@xetile.kernel
def accumulate(x, total, hits, n, BLOCK: xetile.constexpr):
    """total += sum(x), hits += 1 per workgroup, atomically: a kernel that accumulates into its outputs."""
    offs = xetile.program_id(0) * BLOCK + xetile.arange(0, BLOCK)
    xetile.atomic_add(total + 0, xetile.tile_reduce("add", xetile.load(x + offs, mask=offs < n), [0]))
    xetile.atomic_add(hits + 0, 1)


def test_reset_to_zero_and_restore_value_let_an_accumulating_kernel_be_tuned(numpy_device, bench_count):
    """As Triton's: reset_to_zero's arrays start each timing run at zero and are zero after tuning, restore_value's
    start each as the caller gave them and are written back; the launch after tuning is one clean run."""
    x = np.ones(1000, np.float32)
    total, hits = np.zeros(1, np.float32), np.full(1, 5, np.int32)
    kern = xetile.autotune([xetile.Config(BLOCK=128), xetile.Config(BLOCK=256)], key=["n"], reset_to_zero=["total"],
                           restore_value=["hits"], **FAST)(accumulate)
    kern[lambda meta: (xetile.cdiv(1000, meta["BLOCK"]),)](x, total, hits, 1000)
    assert len(bench_count) == 2
    blocks = xetile.cdiv(1000, kern.best_config.kwargs["BLOCK"])
    assert total.tolist() == [1000.0] and hits.tolist() == [5 + blocks]
    for names in (["totl"], ["BLOCK"]):
        with pytest.raises(ValueError, match=rf"reset_to_zero and restore_value name \['{names[0]}'\], not array "):
            xetile.autotune([xetile.Config(BLOCK=128)], key=["n"], reset_to_zero=names)(accumulate)
    scalar = xetile.autotune([xetile.Config(BLOCK=128), xetile.Config(BLOCK=256)], key=["n"], restore_value=["n"],
                             cache_results=False, **FAST)(accumulate)
    with pytest.raises(xetile.LaunchError, match="'n' of reset_to_zero or restore_value is int, not an array"):
        scalar[lambda meta: (xetile.cdiv(1000, meta["BLOCK"]),)](x, total, hits, 1000)


def test_a_key_may_name_a_parameter_left_at_its_default_and_configs_hash(numpy_device, rng, bench_count):
    a, b, c, expected = operands(rng)
    kern = xetile.autotune(GOOD[:2], key=["M", "N", "K", "INPUT_PRECISION"], **FAST)(gemm)
    kern[grid](a, b, c, M, N, K)
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5)
    assert len({*GOOD, *GOOD[:1]}) == len(GOOD) and {GOOD[0]: 1}[xetile.Config(GOOD[0].kwargs, sg_layout=[1, 1],
                                                                               sg_data=[16, 16])] == 1
    assert len({xetile.Config(BM=32, BN=16), xetile.Config(BN=16, BM=32), xetile.Config(BM=32.0, BN=16)}) == 1


def test_warmup_compiles_the_configs_pruning_keeps_and_runs_none(numpy_device, rng, bench_count):
    a, b, c, _ = operands(rng)
    zero_step = xetile.Config(BM=16, BN=16, BK=0, sg_layout=[1, 1], sg_data=[16, 16])  # breaks a rule
    kern = tuned([GOOD[0], zero_step, GOOD[1]])
    compiled = kern.warmup(a, b, c, M, N, K, grid=grid)
    assert [type(k) for k in compiled] == [xetile.CompiledKernel] * 2 and not c.any() and bench_count == []
    assert ["BM = 16" in k.asm["xetile"].splitlines()[0] for k in compiled] == [True, False]


def test_a_single_legal_config_runs_untimed(numpy_device, rng, bench_count):
    a, b, c, expected = operands(rng)
    kern = tuned(GOOD[:1] + [xetile.Config(BM=32, BN=16, BK=16, sg_layout=[2, 1], sg_data=[12, 16])])
    kern[grid](a, b, c, M, N, K)
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5)
    assert bench_count == [] and kern.best_config == GOOD[0] and kern.trials[0].stage == "only"


def test_launch_errors(numpy_device, rng):
    a, b, c, _ = operands(rng)
    with pytest.raises(xetile.LaunchError, match=r"\['BM'\] are set by its configs"):
        tuned(GOOD)[grid](a, b, c, M, N, K, BM=16)
    with pytest.raises(xetile.LaunchError, match=r"key arguments \['K'\] were not given"):
        xetile.autotune(GOOD, key=["K"])(gemm)[grid](a, b, c, M, N)
    with pytest.raises(ValueError, match="not parameters of matmul_kernel"):
        xetile.autotune(GOOD, key=["X"])(gemm)
    with pytest.raises(TypeError, match="above @xetile.kernel"):
        xetile.autotune(GOOD, key=["M"])(lambda: None)


def test_a_launch_option_the_kernel_lacks_is_a_pruning_reason(numpy_device, rng, monkeypatch):
    monkeypatch.setattr(jit, "LAUNCH_OPTIONS", tuple(o for o in jit.LAUNCH_OPTIONS if o != "num_subgroups"))
    a, b, c, _ = operands(rng)
    kern = tuned(GOOD[:2] + [xetile.Config(BM=16, BN=16, BK=16, num_subgroups=2)])
    kern[grid](a, b, c, M, N, K)
    assert kern.trials[2].stage == "rules" and "no launch option num_subgroups" in kern.trials[2].reason


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("stream", [io.StringIO, FakeTerminal])
def test_a_tuning_of_three_configs_shows_its_progress(numpy_device, rng, monkeypatch, tmp_path, stream):
    """With or without a terminal: the config and step being done, then the total (work is slow here after 0 s)."""
    monkeypatch.setenv("XETILE_CACHE_DIR", str(tmp_path))  # no winner of an earlier test: it tunes
    monkeypatch.setitem(sys.modules, "tqdm", None)  # the plain line, whether or not tqdm is installed
    monkeypatch.delenv("XETILE_QUIET", raising=False)
    monkeypatch.setattr(progress, "SLOW_AFTER", 0.0)
    monkeypatch.setattr(progress, "LOG_EVERY", 0.0)  # a line at each of the watcher's wakes
    stderr = stream()
    monkeypatch.setattr(sys, "stderr", stderr)
    a, b, c, _ = operands(rng)
    tuned(GOOD)[grid](a, b, c, M, N, K)
    shown = stderr.getvalue()
    # the tuning's lines, to its total; the launch of the winner may show its compile's after them (slow after 0 s)
    tuning = shown[:shown.index("\n", shown.index("xetile: autotune matmul_kernel: done in ")) + 1]
    assert "xetile: autotune matmul_kernel: " in tuning and "/3" in tuning
    assert tuning.count("\n") == (1 if stream is FakeTerminal else len(tuning.splitlines()))


# ---- xetile.layouts ----------------------------------------------------------------------------------------

class Op:
    def error(self, message, rule):
        return ValueError(message)


def test_layouts_are_the_distribution_rule_without_broadcast():
    found = xetile.layouts([64, 32], num_subgroups=4, target="xe-hpc")
    assert ([2, 2], [32, 16]) in found and ([4, 1], [8, 8]) in found and ([1, 4], [64, 8]) in found
    assert ([2, 2], [64, 16]) not in found  # 2 x 64 > 64: two subgroups would hold the same rows
    assert ([2, 2], [24, 16]) not in found
    for sg_layout, sg_data in found:
        assert sg_layout[0] * sg_layout[1] == 4
        check_distribution(Op(), xetile.Layout(sg_layout, sg_data), [64, 32], "tile")
        assert all(s % (lay * d) == 0 for s, lay, d in zip([64, 32], sg_layout, sg_data))
    # sg_layout [1, 4]: 7 divisors of 64 x 4 of 8; [2, 2]: 6 of 32 x 5 of 16; [4, 1]: 5 of 16 x 6 of 32
    assert len(found) == len({(tuple(a), tuple(b)) for a, b in found}) == 28 + 30 + 30


def test_layouts_keep_the_register_budget_and_the_workgroup_size():
    f32 = xetile.layouts([256, 256], num_subgroups=1, target="xe-hpc")
    assert ([1, 1], [128, 128]) in f32 and ([1, 1], [256, 128]) not in f32  # 64 KiB of f32 at most
    assert ([1, 1], [256, 128]) in xetile.layouts([256, 256], num_subgroups=1, target="xe-hpc", dtype=xetile.float16)
    assert xetile.layouts([256, 256], num_subgroups=128, target="xe-hpc") == []  # 2048 work-items > 1024
    assert xetile.layouts([256, 256], num_subgroups=128, target="cpu") != []
    counts = {a * b for (a, b), _ in xetile.layouts([64, 64], target="xe-hpc")}
    assert max(counts) == 64 and 1 in counts


# ---- xetile.testing.do_bench ---------------------------------------------------------------------------------

def test_do_bench_times_the_host_with_the_wall_clock_and_says_so():
    calls = []

    def sleep():
        calls.append(1)
        time.sleep(0.002)

    with pytest.warns(xetile.testing.WallClockWarning, match="launched no SYCL kernel"):
        mean = xetile.testing.do_bench(sleep, warmup=5, rep=20)
    assert mean.clock == "wall" and 2 <= mean < 20
    assert 4 <= len(calls) <= 1 + 5 + 3 + 10 + 2  # first run, estimate (<= 5), warmup (>= 1), ~rep / 2 ms runs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", xetile.testing.WallClockWarning)
        low, median, high = xetile.testing.do_bench(sleep, warmup=1, rep=20, quantiles=[0.1, 0.5, 0.9])
        everything = xetile.testing.do_bench(sleep, warmup=1, rep=20, return_mode="all")
        assert xetile.testing.do_bench(sleep, rep=4, quantiles=[0.5]) >= 2
    assert 2 <= low <= median <= high < 20
    assert 1 <= len(everything) <= 12 and all(t >= 2 and t.clock == "wall" for t in everything)
    with pytest.raises(ValueError, match="return_mode"):
        xetile.testing.do_bench(sleep, return_mode="average")


def test_a_prepared_bench_times_its_runs_again_without_sizing_them_again():
    """The autotuner's later rounds (testing.prepare, Bench): the first run, the estimate and the warm-up once; each
    `time()` then runs `fn` exactly `runs` times."""
    calls = []

    def sleep():
        calls.append(1)
        time.sleep(0.002)

    bench = xetile.testing.prepare(sleep, warmup=5, rep=20)
    sized = len(calls)
    assert sized >= 1 + 1 + 1 and 1 <= bench.runs <= 10  # first run, estimate (>= 1), warm-up (>= 1); rep / 2 ms
    for _ in range(2):
        times, clock = bench.time()
        assert clock == "wall" and len(times) == bench.runs and all(t >= 2 for t in times)
    assert len(calls) == sized + 2 * bench.runs


def test_do_bench_flushes_the_host_caches_around_kernels_only_and_at_most_flush_bytes(monkeypatch, rng):
    """No flush for the interpreter (its runs are Python on the host); on the OpenCL CPU device one buffer of twice
    the largest cache, capped (a server's shared L3 of hundreds of MB would cost 0.2 s a run)."""
    sizes, flush_bytes = [], xetile.testing.host_flush_bytes

    def counted() -> int:
        sizes.append(flush_bytes())
        return sizes[-1]

    monkeypatch.setattr(xetile.testing, "host_flush_bytes", counted)
    a, b, c, expected = operands(rng)
    options = dict(BM=32, BN=32, BK=16, sg_layout=[2, 2], sg_data=[16, 16])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", xetile.testing.WallClockWarning)
        xetile.testing.do_bench(lambda: gemm[grid](a, b, c, M, N, K, device="numpy", **options), warmup=0, rep=0)
    assert sizes == []
    xetile.testing.do_bench(lambda: gemm[grid](a, b, c, M, N, K, device="opencl:cpu", **options), warmup=0, rep=0)
    assert len(sizes) == 1 and 0 < sizes[0] <= xetile.testing.FLUSH_BYTES
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5)
    monkeypatch.undo()
    for cache, flushed in ((300 * 2**20, xetile.testing.FLUSH_BYTES), (16 * 2**20, 32 * 2**20)):
        monkeypatch.setattr(xetile.testing, "host_cache_bytes", lambda cache=cache: cache)
        assert xetile.testing.host_flush_bytes() == flushed


def test_do_bench_sets_the_grads_of_grad_to_none_to_none_before_each_run():
    torch = pytest.importorskip("torch")
    w = torch.ones(3, requires_grad=True)

    def backward():
        (w * 2).sum().backward()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", xetile.testing.WallClockWarning)
        xetile.testing.do_bench(backward, warmup=0.1, rep=0.1, grad_to_none=[w])
        assert w.grad.tolist() == [2.0, 2.0, 2.0]                       # the last run's alone
        xetile.testing.do_bench(backward, warmup=0.1, rep=0.1)
    assert w.grad[0] > 2                                                # accumulated over the runs


def test_do_bench_times_the_device_on_numpy_arrays(rng):
    """Launches on numpy arrays run on a profiling queue of their own: the device time leaves out the host's copies
    and the launch; every sample is a run's, and the quantiles are of several of them."""
    queue = dpctl.get_device_cached_queue("opencl:cpu")
    a, b, c, expected = operands(rng)
    options = dict(BM=32, BN=32, BK=16, sg_layout=[2, 2], sg_data=[16, 16])

    runs = []

    def run(device):
        return lambda: runs.append(1) or gemm[grid](a, b, c, M, N, K, device=device, **options)

    with warnings.catch_warnings():
        warnings.simplefilter("error", xetile.testing.WallClockWarning)
        samples = xetile.testing.do_bench(run(queue), warmup=1, rep=5, return_mode="all")
        runs.clear()
        low, high = xetile.testing.do_bench(run(queue), warmup=0.001, rep=0.001, quantiles=[0.0, 1.0])
        assert len(runs) == 1 + 1 + 1 + xetile.testing.MIN_QUANTILE_RUNS  # first, estimate, warmup, timed
        on_a_profiling_queue = xetile.testing.do_bench(run(profiling_queue(queue)), warmup=1, rep=5)
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5)
    start = time.perf_counter()
    run(queue)()
    wall_ms = (time.perf_counter() - start) * 1e3
    assert {t.clock for t in samples} == {"device"} and 0 < min(samples) < wall_ms
    assert on_a_profiling_queue.clock == "device"
    assert low.clock == "device" and low < high  # the fastest and slowest of 5 runs, not one run repeated


def test_do_bench_times_the_device_on_usm_arrays_of_any_queue(rng):
    """USM arrays of a queue without profiling: their launches run on its profiling queue, in the order of the
    arrays' queue (the second launch reads what the first wrote), launches of plans that ran outside do_bench on
    the same grid (their hot path) as well."""
    queue = dpctl.get_device_cached_queue("opencl:cpu")
    usm = Interface(queue)
    x = rng.uniform(-1, 1, (32, 8)).astype(np.float32)
    dx, dy, dz = usm.asarray(x), usm.asarray(np.zeros_like(x)), usm.asarray(np.zeros_like(x))

    def fn():
        scaled_copy[(2,)](dx, dy, BM=16)
        scaled_copy[(2,)](dy, dz, BM=16)
    fn()
    with warnings.catch_warnings():
        warnings.simplefilter("error", xetile.testing.WallClockWarning)
        ms = xetile.testing.do_bench(fn, warmup=1, rep=2, return_mode="median")
    assert ms.clock == "device" and ms > 0
    np.testing.assert_array_equal(usm.asnumpy(dz), x)


def test_autotune_on_opencl_cpu_times_on_the_device(rng, monkeypatch, bench_count):
    monkeypatch.setenv("XETILE_DEVICE", "opencl:cpu")
    a, b, c, expected = operands(rng)
    kern = tuned(GOOD[1:], warmup=1, rep=2)
    kern[grid](a, b, c, M, N, K)
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5)
    assert [t.clock for t in kern.trials] == ["device", "device"] and len(bench_count) == 2


def test_an_autotuned_launch_on_dpnp_arrays_does_not_wait_for_the_queue(rng, monkeypatch, bench_count):
    """It reads no dpnp array's `__sycl_usm_array_interface__` (which waits for every kernel queued before), neither
    tuning nor at a launch of its winner: launches stay asynchronous."""
    dpnp = needs_dpnp()
    reads = count_interface_reads(monkeypatch, dpnp)
    x = rng.uniform(-1, 1, (32, 8)).astype(np.float32)
    dx, dy = dpnp.asarray(x, device="opencl:cpu"), dpnp.zeros((32, 8), dtype=np.float32, device="opencl:cpu")
    kern = xetile.autotune([xetile.Config(BM=8), xetile.Config(BM=16)], key=[], cache_results=False,
                           **FAST)(scaled_copy)
    for _ in range(2):
        kern[lambda meta: (32 // meta["BM"],)](dx, dy)
    np.testing.assert_array_equal(dpnp.asnumpy(dy), x)
    assert len(bench_count) == 2 and reads == []


def test_a_dpnp_launch_finds_its_key_without_a_tuning_and_other_launches_take_the_full_path(rng):
    """usm_key: on dpnp arrays the key tuning_key finds (the tuned winner found by it); None where the launch names
    a device, passes a numpy array or keys on an array (tuning_key's); a config's parameter set is refused first."""
    dpnp = needs_dpnp()
    x = rng.uniform(-1, 1, (32, 8)).astype(np.float32)
    dx, dy = dpnp.asarray(x, device="opencl:cpu"), dpnp.zeros((32, 8), dtype=np.float32, device="opencl:cpu")
    kern = xetile.autotune([xetile.Config(BM=8), xetile.Config(BM=16)], key=["y"], cache_results=False,
                           **FAST)(scaled_copy)
    assert kern.usm_key(kern.bound((dx, dy), {}), {}) is None  # keyed on an array: its shape is tuning_key's
    keyed = xetile.autotune([xetile.Config(BM=8), xetile.Config(BM=16)], key=[], cache_results=False,
                            **FAST)(scaled_copy)
    keyed[lambda meta: (32 // meta["BM"],)](dx, dy)
    key = keyed.usm_key(keyed.bound((dx, dy), {}), {})
    assert key == keyed.tuning_key(keyed.tuning(None, (dx, dy), {})) and key in keyed.best
    assert key[1] == (("x", "f32", (1, 0)), ("y", "f32", (1, 0))) and key[2] == "opencl:cpu:0"
    for args, kwargs in (((dx, dy), {"device": "opencl:cpu"}), ((x, dy), {})):
        assert keyed.usm_key(keyed.bound(args, kwargs), kwargs) is None
    with pytest.raises(xetile.LaunchError, match=r"\['BM'\] are set by its configs"):
        keyed[lambda meta: (1,)](dx, dy, BM=8)
    np.testing.assert_array_equal(dpnp.asnumpy(dy), x)


SCALE = 1.0


@xetile.kernel
def scaled_copy(x, y, BM: xetile.constexpr):
    m = xetile.program_id(0) * BM
    value = xetile.load_tile(xetile.init_tile(x, [m, 0], [BM, 8]))
    xetile.store_tile(xetile.init_tile(y, [m, 0], [BM, 8]), value * SCALE)


def test_a_changed_global_the_winner_read_tunes_again(numpy_device, rng, bench_count, tmp_path, monkeypatch):
    monkeypatch.setenv("XETILE_CACHE_DIR", str(tmp_path))
    x, y = rng.uniform(-1, 1, (16, 8)).astype(np.float32), np.zeros((16, 8), np.float32)
    configs = [xetile.Config(BM=8), xetile.Config(BM=16)]

    def launch():
        kern = xetile.autotune(configs, key=[], **FAST)(scaled_copy)
        kern[lambda meta: (16 // meta["BM"],)](x, y)

    launch()
    launch()
    assert len(bench_count) == 2  # the second autotuner found the winner on disk
    monkeypatch.setattr(sys.modules[__name__], "SCALE", 2.0)
    launch()
    assert len(bench_count) == 4  # what the winner's trace read changed: tuned again
    np.testing.assert_allclose(y, 2 * x)


def test_a_usm_arrays_key_part_is_remembered_by_its_entry_and_follows_its_layout():
    """array_key: a dpnp array's dtype and memory order, remembered by its usm entry's token; a transposed view and an
    array reshaped in place (its entry made again) get their own."""
    dpnp = needs_dpnp()
    from xetile_jit.jit.autotune import array_key
    from xetile_jit.runtime import usm_entries
    x = dpnp.zeros((4, 8), dtype=np.float32, device="opencl:cpu")
    assert array_key("a", x) == array_key("a", x) == ("a", "f32", (1, 0))
    assert array_key("a", x.T) == ("a", "f32", (0, 1))
    assert array_key("a", dpnp.zeros((4, 8), dtype=np.float16, device="opencl:cpu")) == ("a", "f16", (1, 0))
    usm = x.get_array()
    usm.shape = (8, 4)
    assert array_key("a", x) == ("a", "f32", (1, 0)) and usm_entries.entries_get(id(usm))[0] == (8, 4)
