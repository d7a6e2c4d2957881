"""No silent waits: a first launch, a compile or an autotuning that takes longer than SLOW_AFTER seconds says so on
stderr, naming the kernel, what it is doing and how long it has taken so far (docs/guide.md "Progress").

The work runs inside `activity(title)`; its steps name themselves with `at_phase` (the autotuner: which config)
and `at_stage` (runtime/timing.py's stages: the trace, each lowering stage, LLVM IR, SPIR-V, the driver's build).
One watcher thread shows the activities that turned slow:
- stderr a terminal: one line redrawn every REDRAW_EVERY seconds (`\\r`; tqdm's line when tqdm is installed),
  ended by a line with the total time;
- otherwise (a log, a pipe, pytest's capture): a line when the work turns slow, at most one every LOG_EVERY
  seconds while it lasts, and a closing line with the total time.
Work that ends before SLOW_AFTER prints nothing; once `activity` returns nothing more is printed for it (the
closing line is written under the watcher's lock, which every line takes). An activity inside another (the
compiles of an autotuning) is part of the outer one. XETILE_QUIET=1 prints nothing.
"""
from __future__ import annotations

import contextlib
import os
import sys
import threading
import time

SLOW_AFTER = 1.0  # seconds of work before the first line
REDRAW_EVERY = 0.2  # seconds between redraws of a terminal's line
LOG_EVERY = 5.0  # seconds between lines without a terminal
PREFIX = "xetile: "

_local = threading.local()  # the activity of this thread, if any


def quiet() -> bool:
    return os.environ.get("XETILE_QUIET") == "1"


class LogLines:
    """Lines for a stream that is not a terminal."""

    def __init__(self, stream):
        self.stream, self.every = stream, LOG_EVERY

    def show(self, text: str) -> None:
        print(PREFIX + text, file=self.stream, flush=True)

    close = show

    def clear(self) -> None:
        """Nothing to clear: every line stays."""


class TerminalLine:
    """One line of a terminal, redrawn in place."""

    def __init__(self, stream):
        self.stream, self.every, self.width = stream, REDRAW_EVERY, 0

    def show(self, text: str) -> None:
        line = PREFIX + text
        self.stream.write("\r" + line.ljust(self.width))
        self.stream.flush()
        self.width = len(line)

    def close(self, text: str) -> None:
        self.show(text)
        self.stream.write("\n")
        self.stream.flush()

    def clear(self) -> None:
        self.stream.write("\r" + " " * self.width + "\r")
        self.stream.flush()
        self.width = 0


class TqdmLine:
    """tqdm's status line (its terminal handling), showing the same text."""

    def __init__(self, stream, tqdm):
        self.bar, self.every = tqdm(total=None, bar_format="{desc}", file=stream, leave=True), REDRAW_EVERY

    def show(self, text: str) -> None:
        self.bar.set_description_str(PREFIX + text)

    def close(self, text: str) -> None:
        self.show(text)
        self.bar.close()

    def clear(self) -> None:
        self.bar.clear()


def display_for(stream):
    if not stream.isatty():
        return LogLines(stream)
    try:
        from tqdm import tqdm
    except ImportError:
        return TerminalLine(stream)
    return TqdmLine(stream, tqdm)


class Activity:
    """A piece of work that may turn slow: its title, current phase and stage, and its display once shown."""

    def __init__(self, title: str, stream):
        self.title, self.stream = title, stream
        self.phase = self.stage = ""
        self.start = time.perf_counter()
        self.due = self.start + SLOW_AFTER  # when the watcher next shows it
        self.display = None

    def status(self, now: float) -> str:
        return ": ".join(filter(None, (self.title, self.phase, self.stage))) + f" ({now - self.start:.1f} s)"

    def tick(self, now: float) -> None:
        if self.display is None:
            self.display = display_for(self.stream)
        self.display.show(self.status(now))
        self.due = now + self.display.every

    def finish(self) -> None:
        if self.display is not None:
            self.display.close(f"{self.title}: done in {time.perf_counter() - self.start:.1f} s")


class Watcher:
    """The thread that shows slow activities; it sleeps while there are none."""

    def __init__(self):
        self.condition = threading.Condition()
        self.activities: list[Activity] = []
        self.thread: threading.Thread | None = None

    def add(self, activity: Activity) -> None:
        with self.condition:
            self.activities.append(activity)
            if self.thread is None:
                self.thread = threading.Thread(target=self.run, name="xetile progress", daemon=True)
                self.thread.start()
            self.condition.notify()

    def remove(self, activity: Activity) -> None:
        with self.condition:
            self.activities.remove(activity)
            activity.finish()

    def run(self) -> None:
        with self.condition:
            while True:
                now = time.perf_counter()
                for activity in self.activities:
                    if now >= activity.due:
                        activity.tick(now)
                due = min((activity.due for activity in self.activities), default=None)
                self.condition.wait(None if due is None else max(0.0, due - time.perf_counter()))


_watcher = Watcher()


def new_watcher() -> None:
    """A forked child's own watcher: the parent's thread is not in the child, and its lock may have been held."""
    global _watcher
    _watcher = Watcher()


os.register_at_fork(after_in_child=new_watcher)


@contextlib.contextmanager
def activity(title: str):
    """Shows the block's progress on stderr if it takes longer than SLOW_AFTER (module docstring); inside another
    activity of the same thread, or with XETILE_QUIET=1, it shows nothing of its own."""
    if quiet() or getattr(_local, "current", None) is not None:
        yield
        return
    current = _local.current = Activity(title, sys.stderr)
    _watcher.add(current)
    try:
        yield
    finally:
        _local.current = None
        _watcher.remove(current)


def at_phase(phase: str) -> None:
    """The current activity's phase (an autotuning's config); its stage starts empty."""
    current = getattr(_local, "current", None)
    if current is not None:
        current.phase, current.stage = phase, ""


def at_stage(stage: str) -> None:
    """The current activity's stage (a compile stage, the driver's build)."""
    current = getattr(_local, "current", None)
    if current is not None:
        current.stage = stage


def message(text: str, file=None) -> None:
    """Prints `text` (to `file`, default stdout), first clearing a progress line a terminal shows."""
    current = getattr(_local, "current", None)
    with _watcher.condition:
        if current is not None and current.display is not None:
            current.display.clear()
        print(text, file=file, flush=True)
