"""Which SYCL kernels a stretch of host code submitted (`xetile.testing.do_bench` times them on the
device). `launch` (sycl.py) hands every submitted kernel's event and queue to `record`; inside `recording()` they
are kept, so the caller can read each event's device-side start and end (SYCL event profiling), which the
runtime reports only for queues made with `property="enable_profiling"` (`profiling_queue`). Outside a
`recording()` nothing is kept.
"""
from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass, field

import dpctl

_active: contextvars.ContextVar["Recording | None"] = contextvars.ContextVar("xetile_recording", default=None)
_profiling_queues: dict = {}


@dataclass
class Recording:
    """The (queue, event) of every kernel submitted while it was active."""
    events: list = field(default_factory=list)

    @property
    def profiled(self) -> bool:
        """Whether there were kernels and every one ran on a profiling queue (so its event has device times)."""
        return bool(self.events) and all(queue.has_enable_profiling for queue, _ in self.events)

    def wait(self) -> None:
        """Until every kernel submitted has finished (asynchronous launches return before)."""
        for _, event in self.events:
            event.wait()

    def device_ms(self) -> float:
        """The kernels' device time in ms: the sum of each event's end minus start (ns)."""
        return sum(e.profiling_info_end - e.profiling_info_start for _, e in self.events) / 1e6


@contextlib.contextmanager
def recording():
    """Keeps the kernels submitted inside the block (nested blocks: the innermost)."""
    current = Recording()
    token = _active.set(current)
    try:
        yield current
    finally:
        _active.reset(token)


def record(queue: dpctl.SyclQueue, event: dpctl.SyclEvent) -> None:
    current = _active.get()
    if current is not None:
        current.events.append((queue, event))


def profiling_queue(queue: dpctl.SyclQueue) -> dpctl.SyclQueue:
    """A queue with event profiling on `queue`'s context and device (USM memory of `queue` is valid on it), made
    once per context and device."""
    if queue.has_enable_profiling:
        return queue
    key = (queue.sycl_context, queue.sycl_device)
    if key not in _profiling_queues:
        _profiling_queues[key] = dpctl.SyclQueue(queue.sycl_context, queue.sycl_device, property="enable_profiling")
    return _profiling_queues[key]
