"""Asynchronous launches in dpctl's and dpnp's order of work on a queue (docs/DESIGN.md §4).

dpctl queues need not be in order; dpnp orders what it offloads with `dpctl.utils.SequentialOrderManager[queue]`:
each operation waits for `submitted_events` and adds its own event with `add_event_pair`. A kernel launch does
the same, so a dpnp operation after it (and `dpnp.asnumpy`) waits for it, and it waits for the dpnp operations
before it. A synchronous launch (numpy arguments, copied back after the kernel) waits for the same events and
then for its own kernel; a launch on another queue than its USM arrays' waits for their queues' events too.

A launch submits through dpctl's C interface (native_submit.py), which, as `SyclQueue.submit_async`, leaves the
arguments' lifetime to the caller: an asynchronous launch keeps its arguments (USM memory objects) and their owners
(the arrays launched: a memory object made from an interface's address alone owns nothing, memory.interface_memory)
here until its event completes, so an array freed right after the launch is not freed under the running kernel.
Completed launches are dropped at every DROP_EVERY-th launch on the queue and at `synchronize`: reading an event's
status costs more than anything else a launch adds to dpctl's own ordered submit (~5 us of a launch on the 2-core
machine while kernels run, docs/performance.md), so a launch looks only now and then, and an array dropped after its
kernel ran lives at most DROP_EVERY launches longer. Thread safe: one lock guards dpctl's order managers and the
pending lists.

A launch reads and records its events through the manager's C state (`_OrderManager`, what the manager's
`submitted_events` and `add_event_pair` call after a Python frame and, for the pair, four isinstance tests) where
this dpctl's manager keeps one (DIRECT): 0.44 and 0.59 us a launch against 0.65 and 1.03 on the AVX2 EPYC, and
1.6-6.8 us less a launch while kernels run (docs/performance.md "On the AVX2 EPYC"). Any other dpctl takes the
public calls.
"""
from __future__ import annotations

import threading
from collections import deque

import dpctl
import dpctl.utils

from . import native_submit


def direct_state() -> bool:
    """Whether dpctl's order managers keep their events in an `_OrderManager` state with the two calls a launch
    makes (module docstring)."""
    try:
        from dpctl.utils._order_manager import _SequentialOrderManager
        from dpctl.utils._seq_order_keeper import _OrderManager
    except ImportError:
        return False
    calls = ("get_submitted_events", "add_vector_to_both_events")
    return all(hasattr(_OrderManager, call) for call in calls) and \
        isinstance(getattr(_SequentialOrderManager(), "_state", None), _OrderManager)


DIRECT = direct_state()
NO_HOST_TASKS = ()  # a launch's host-task events: it has none

_COMPLETE = dpctl.event_status_type.complete
DROP_EVERY = 16  # launches on a queue between two looks for its completed launches (module docstring)
# guards dpctl's order managers and the pending lists: dpctl 0.22's SequentialOrderManager[queue] is one object for
# every thread (its ContextVar's default map is shared) and not thread safe; a suite run's four-thread launch test once
# crashed inside its wait
_order = threading.Lock()
_pending: dict = {}  # queue -> deque of (event, args, owners) of launches that may still run


def submit(queue: dpctl.SyclQueue, kernel, args: list, global_range, local_range, wait: bool,
           after=(), owners=(), ordered_with: dpctl.SyclQueue | None = None) -> dpctl.SyclEvent:
    """`kernel` submitted to `queue` after the work ordered on `ordered_with` (default `queue`: another queue of the
    same context and device, whose work the launch belongs to, as a profiling queue's launch does) and on the queues
    `after` (other queues of the arrays, for a launch that waits); waited for, or ordered and kept (module
    docstring)."""
    if not wait:
        return submit_kept(queue, native_submit.submit_async, kernel, args, global_range, local_range, owners,
                           ordered_with or queue)
    with _order:
        dependencies = dpctl.utils.SequentialOrderManager[ordered_with or queue].submitted_events
        for other in after:
            dependencies += dpctl.utils.SequentialOrderManager[other].submitted_events
        event = native_submit.submit_async(queue, kernel, args, global_range, local_range, dependencies)
    event.wait()
    return event


def submit_kept(queue: dpctl.SyclQueue, send, kernel, args: list, global_range, local_range, owners,
                ordered_with: dpctl.SyclQueue) -> dpctl.SyclEvent:
    """`submit(..., wait=False)` by `send` (native_submit.submit_async, or its `sender`'s choice for a plan's
    arguments): the launch ordered and kept under one lock. The hot path of a launch, in one frame."""
    with _order:
        manager = dpctl.utils.SequentialOrderManager[ordered_with]
        if DIRECT:
            state = manager._state
            event = send(queue, kernel, args, global_range, local_range, state.get_submitted_events())
            state.add_vector_to_both_events(NO_HOST_TASKS, (event,))
        else:
            event = send(queue, kernel, args, global_range, local_range, manager.submitted_events)
            manager.add_event_pair(NO_HOST_TASKS, (event,))
        pending = _pending.get(queue)
        if pending is None:
            pending = _pending[queue] = deque()
        if len(pending) % DROP_EVERY == 0:
            drop_completed(pending)
        pending.append((event, args, owners))
        return event


def synchronize(queue: dpctl.SyclQueue | None = None) -> None:
    """Waits for all work on `queue` and on the other queues of its device a launch ran asynchronously on (None:
    on every queue a launch ran asynchronously on): the work each SequentialOrderManager ordered and everything
    else submitted to the queue."""
    with _order:
        queues = [q for q in _pending if queue is None or q.sycl_device == queue.sycl_device]
    for q in queues + ([] if queue is None or queue in queues else [queue]):
        with _order:
            dpctl.utils.SequentialOrderManager[q].wait()
        q.wait()
        with _order:  # a launch another thread made meanwhile may still run: only the completed ones go
            drop_completed(_pending.get(q, ()))


def drop_completed(pending: deque) -> None:
    """Forgets the launches at the front of `pending` that have completed (the caller holds the lock)."""
    while pending and pending[0][0].execution_status == _COMPLETE:
        pending.popleft()
