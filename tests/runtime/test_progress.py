"""Progress of slow work on stderr (runtime/progress.py): nothing for fast work, a line when work turns slow, at most
one a LOG_EVERY without a terminal and a redrawn line on one, a closing line with the total, nothing after it."""
from __future__ import annotations

import io
import re
import sys
import time
import types

import numpy as np
import pytest

import xetile_jit as xetile
from xetile_jit.compiler import pipeline
from xetile_jit.jit import kernel as kernel_module
from xetile_jit.runtime import progress


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def fast_progress(monkeypatch):
    """Work is slow after 50 ms; a log gets a line at most every 150 ms, a terminal every 20 ms."""
    monkeypatch.delenv("XETILE_QUIET", raising=False)
    monkeypatch.setattr(progress, "SLOW_AFTER", 0.05)
    monkeypatch.setattr(progress, "LOG_EVERY", 0.15)
    monkeypatch.setattr(progress, "REDRAW_EVERY", 0.02)
    monkeypatch.setitem(sys.modules, "tqdm", None)  # the plain line, whether or not tqdm is installed


def slow_work(seconds: float) -> float:
    """An activity of at least `seconds`; how long it took, as the test saw it."""
    start = time.perf_counter()
    with progress.activity("compile of k"):
        progress.at_phase("config 1/2")
        progress.at_stage("llvm-ir")
        time.sleep(seconds)
    return time.perf_counter() - start


def assert_closing_total(line: str, seconds: float, took: float) -> None:
    """`line` closes the work with its total in tenths of a second: at least the work's `seconds`, at most what the
    test saw it take (`took`), as rounded; a loaded machine may stretch the work, not the line's account of it."""
    total = re.fullmatch(r"xetile: compile of k: done in (\d+\.\d) s *", line)
    assert total and seconds - 0.05 <= float(total[1]) <= took + 0.05, (line, seconds, took)


def test_slow_work_without_a_terminal(fast_progress, capsys):
    took = slow_work(0.5)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("xetile: compile of k: config 1/2: llvm-ir (0.")
    assert 2 <= len(lines) - 1 <= 4  # at 0.05 s, then at most one every 0.15 s
    assert_closing_total(lines[-1], 0.5, took)
    time.sleep(0.2)
    assert capsys.readouterr().err == ""  # nothing after the work ended


def test_fast_work_prints_nothing(capsys, monkeypatch):
    monkeypatch.delenv("XETILE_QUIET", raising=False)
    slow_work(0.01)  # SLOW_AFTER is a second
    assert capsys.readouterr().err == ""


def test_slow_work_on_a_terminal(fast_progress, monkeypatch):
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    took = slow_work(0.3)
    shown = terminal.getvalue()
    assert shown.count("\n") == 1 and shown.endswith("\n")  # one line, redrawn
    redraws = shown.split("\r")[1:]
    assert len(redraws) >= 5 and redraws[0].startswith("xetile: compile of k: config 1/2: llvm-ir (0.")
    assert_closing_total(redraws[-1].rstrip("\n"), 0.3, took)


def test_tqdm_shows_the_line_where_installed(fast_progress, monkeypatch):
    shown = []

    class Bar:
        def __init__(self, **options):
            shown.append(("made", options["bar_format"]))

        def set_description_str(self, text):
            shown.append(text)

        def close(self):
            shown.append("closed")

    monkeypatch.setitem(sys.modules, "tqdm", types.SimpleNamespace(tqdm=Bar))
    monkeypatch.setattr(sys, "stderr", FakeTerminal())
    took = slow_work(0.2)
    assert shown[0] == ("made", "{desc}") and shown[1].startswith("xetile: compile of k: config 1/2: llvm-ir")
    assert_closing_total(shown[-2], 0.2, took)
    assert shown[-1] == "closed"


def test_quiet_and_nested_work(fast_progress, monkeypatch, capsys):
    with progress.activity("autotune k"):
        slow_work(0.2)  # part of the tuning: its phase and stage show on the tuning's line
    err = capsys.readouterr().err
    assert "xetile: autotune k: config 1/2: llvm-ir" in err and "compile of k" not in err
    monkeypatch.setenv("XETILE_QUIET", "1")
    slow_work(0.2)
    assert capsys.readouterr().err == ""


def test_a_message_clears_the_terminals_line(fast_progress, monkeypatch, capsys):
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with progress.activity("autotune k"):
        time.sleep(0.1)
        progress.message("config 1: 2.0 ms", file=terminal)
        time.sleep(0.1)
    line = terminal.getvalue().split("config 1: 2.0 ms\n")
    assert line[0].endswith("\r" + " " * len("xetile: autotune k (0.1 s)") + "\r") and "xetile: autotune k" in line[1]


@xetile.kernel
def add_four(x, y):
    tile = xetile.load_tile(xetile.init_tile(x, [0, 0], [16, 16]))
    xetile.store_tile(xetile.init_tile(y, [0, 0], [16, 16]), tile + 4)


@pytest.mark.parametrize("stream", [io.StringIO, FakeTerminal])
def test_a_slow_compile_shows_its_stage(fast_progress, monkeypatch, tmp_path, stream):
    """A compile whose blocking stage takes 0.4 s (made slow here) shows it, with or without a terminal."""
    monkeypatch.setenv("XETILE_CACHE_DIR", str(tmp_path))  # compiled anew
    index = pipeline.STAGE_NAMES.index("xegpu-blocked")
    stage = pipeline.STAGES[index][1]

    def slow_blocking(*args):
        time.sleep(0.4)
        return stage(*args)
    stages = list(pipeline.STAGES)
    stages[index] = ("xegpu-blocked", slow_blocking)
    monkeypatch.setattr(pipeline, "STAGES", stages)
    stderr = stream()
    monkeypatch.setattr(sys, "stderr", stderr)
    x = np.zeros((16, 16), np.float32)
    add_four.cache.clear()
    add_four.warmup(x, np.empty_like(x), target="cpu")
    shown = stderr.getvalue()
    assert re.search(r"xetile: compile of add_four: xegpu-blocked \(\d+\.\d s\)", shown)
    # the closing line: the compile's total, the slowed stage's 0.4 s at least (more on a loaded machine)
    total = re.findall(r"xetile: compile of add_four: done in (\d+\.\d) s *\n", shown)  # a terminal pads it
    assert shown.endswith("\n") and len(total) == 1 and float(total[0]) >= 0.4


@xetile.kernel
def exp_rows(x, y):
    for i in range(0, 64, 16):
        tile = xetile.exp(xetile.load_tile(xetile.init_tile(x, [i, 0], [16, 256])))
        xetile.store_tile(xetile.init_tile(y, [i, 0], [16, 256]), tile)


class TimedLines(io.StringIO):
    """stderr that notes when each line was written."""
    def __init__(self):
        super().__init__()
        self.written: list[tuple[float, str]] = []

    def write(self, text: str) -> int:
        self.written += [(time.perf_counter(), line) for line in text.splitlines()]
        return super().write(text)


def test_the_line_moves_while_the_driver_builds(fast_progress, monkeypatch, tmp_path):
    """The OpenCL CPU driver's build lets the watcher run: lines written while the build runs, not only after it,
    their times in order, then the total. The build's start and end are taken around the driver's call, so the
    check does not hang on the tenths of a second a line prints."""
    monkeypatch.setenv("XETILE_CACHE_DIR", str(tmp_path))  # no kept binary: a build
    # lines from the launch's start and then every 2 ms: several in a build of this kernel's 0.04 s (AVX-512 Xeon)
    # to 0.3 s (AVX2 EPYC), where a build holding the interpreter's lock lets one through
    monkeypatch.setattr(progress, "SLOW_AFTER", 0.0)
    monkeypatch.setattr(progress, "LOG_EVERY", 0.002)
    build = {}

    def timed_program(*args):
        build["start"] = time.perf_counter()
        try:
            return sycl_program(*args)
        finally:
            build["end"] = time.perf_counter()
    sycl_program = kernel_module.SyclProgram
    monkeypatch.setattr(kernel_module, "SyclProgram", timed_program)
    stderr = TimedLines()
    monkeypatch.setattr(sys, "stderr", stderr)
    x = np.zeros((64, 256), np.float32)
    exp_rows[(1,)](x, np.empty_like(x), device="opencl:cpu")
    building = [(at, float(line.rsplit("(", 1)[1].split()[0])) for at, line in stderr.written
                if ": driver build (opencl:cpu:0, cpu) (" in line]
    during = [at for at, _ in building if build["start"] < at < build["end"]]
    assert len(during) >= 3, (len(during), build, building)
    assert [seconds for _, seconds in building] == sorted(seconds for _, seconds in building)
    assert re.fullmatch(r"xetile: first launch of exp_rows: done in \d+\.\d s", stderr.getvalue().splitlines()[-1])
