"""Which SYCL kernels a stretch of host code submitted (`xetile.testing.do_bench` times them on the
device). `submit_ranges` (sycl.py) hands every submitted kernel's event and queue to `record` (an asynchronous
launch, the hot path, only inside a recording: `active_recording`); inside `recording()` they are kept, so the
caller can read each event's device-side start and end (SYCL event profiling), which the runtime reports only for
queues made with `property="enable_profiling"` (`profiling_queue`). Outside a `recording()` nothing is kept. A
recording made with `device_times=True` (do_bench's) also moves the launches inside it to a profiling queue of their
queue's context and device (`launch_queue`), ordered with the work of the queue they were launched on
(runtime/ordering.py), so that every array kind is timed on the device: numpy arrays, whose launches copy them to and
from the device outside the kernel's event, and USM arrays of any queue.
"""
from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass, field

import dpctl

_active: contextvars.ContextVar["Recording | None"] = contextvars.ContextVar("xetile_recording", default=None)
active_recording = _active.get  # the innermost recording, None outside one: a C call, no Python frame (hot path)
_profiling_queues: dict = {}


@dataclass
class Recording:
    """The (queue, event) of every kernel submitted while it was active; `device_times`: the launches run on
profiling queues (module docstring)."""
    events: list = field(default_factory=list)
    device_times: bool = False

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
def recording(device_times: bool = False):
    """Keeps the kernels submitted inside the block (nested blocks: the innermost); `device_times`: on profiling
    queues (module docstring)."""
    current = Recording(device_times=device_times)
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


def launch_queue(queue: dpctl.SyclQueue) -> dpctl.SyclQueue:
    """The queue a launch on `queue` runs on: its profiling queue inside a recording that asks for device times,
    else `queue` itself."""
    current = _active.get()
    if current is None or not current.device_times:
        return queue
    return profiling_queue(queue)
