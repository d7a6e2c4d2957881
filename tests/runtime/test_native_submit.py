"""Submission through dpctl's C interface (runtime/native_submit.py): the C forms of each argument kind, the kernel
run with them, dependencies, and the arguments and launches that go to dpctl's own submit."""
import ctypes
import dataclasses

import dpctl
import dpctl.memory
import numpy as np
import pytest

import xetile_jit as xetile
from xetile_jit.runtime import native_submit

SOURCE = """
typedef struct { long scale; long count; } Sizes;
__kernel void axpy(__global float *out, __global const float *x, float a, int b, uchar flag, ushort h,
                   long c, Sizes sizes) {
    size_t i = get_global_id(0);
    if (i < sizes.count)
        out[i] = a * x[i] + b + (flag ? 1000.0f : 0.0f) + h * 0.5f + c * 0.25f + sizes.scale;
}
__kernel void add_one(__global float *out) { out[get_global_id(0)] += 1.0f; }
__kernel void add_local(__global float *out, __local float *scratch) {
    size_t i = get_global_id(0), lane = get_local_id(0);
    scratch[lane] = out[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[i] = scratch[get_local_size(0) - 1 - lane] + 1.0f;
}
"""
N = 40


@pytest.fixture
def calls(monkeypatch):
    """The C submissions made while a test runs, through a stand-in of the interface's submit: the references of
    the events each waits for. The tests' launches have few arguments: the C call is taken from one on."""
    interface, made = native_submit.c_interface(), []
    monkeypatch.setattr(native_submit, "C_CALL_FROM", 1)

    def submit(*args):
        after, count = args[-2:]
        made.append([ctypes.c_uint64.from_address(after + 8 * i).value for i in range(count)])
        return interface.submit(*args)

    monkeypatch.setattr(native_submit, "c_interface", lambda: dataclasses.replace(interface, submit=submit))
    return made


def device_array(queue, host: np.ndarray) -> dpctl.memory.MemoryUSMDevice:
    memory = dpctl.memory.MemoryUSMDevice(host.nbytes, queue=queue)
    memory.copy_from_host(host.view(np.uint8))
    return memory


def to_host(memory, dtype=np.float32) -> np.ndarray:
    host = np.empty(memory.nbytes // np.dtype(dtype).itemsize, dtype)
    memory.copy_to_host(host.view(np.uint8))
    return host


def test_the_installed_dpctl_has_the_c_interface():
    interface = native_submit.c_interface()
    assert interface is not None
    assert {"dpctl_void_ptr", "dpctl_raw_kernel_arg", "dpctl_int32", "dpctl_float32"} <= interface.codes.keys()


def test_forms_give_each_kind_its_code_and_word(queue):
    interface = native_submit.c_interface()
    memory, raw, scalar = dpctl.memory.MemoryUSMDevice(64, queue=queue), dpctl.RawKernelArg(bytes(16)), \
        ctypes.c_float(2.5)
    codes, address, getters = interface.forms((type(memory), type(raw), type(scalar), ctypes.c_bool))
    assert list(codes) == [interface.codes[name] for name in
                           ("dpctl_void_ptr", "dpctl_raw_kernel_arg", "dpctl_float32", "dpctl_uint8")]
    assert address == codes.buffer_info()[0]
    assert [get(value) for get, value in zip(getters, (memory, raw, scalar))] == \
        [memory._pointer, raw._ref, ctypes.addressof(scalar)]


@pytest.mark.parametrize("kind", [int, float, np.float32, dpctl.LocalAccessor])
def test_kinds_without_a_c_form_have_no_forms(kind):
    assert native_submit.c_interface().forms((dpctl.memory.MemoryUSMDevice, kind)) is native_submit.NOT_NATIVE


def test_a_kernel_runs_with_every_argument_kind(queue, program, calls):
    x = np.arange(N, dtype=np.float32)
    out, inputs = device_array(queue, np.zeros(N + 8, np.float32)), device_array(queue, x)
    sizes = dpctl.RawKernelArg(np.array([7, N], np.int64).tobytes())
    args = [out, inputs, ctypes.c_float(3.0), ctypes.c_int32(-2), ctypes.c_bool(True), ctypes.c_uint16(6),
            ctypes.c_int64(-8), sizes]
    event = native_submit.submit_async(queue, program.get_sycl_kernel("axpy"), args, [N + 8], [8], [])
    assert isinstance(event, dpctl.SyclEvent)
    event.wait()
    assert len(calls) == 1
    expected = np.concatenate([3.0 * x - 2 + 1000 + 3 - 2 + 7, np.zeros(8, np.float32)])
    np.testing.assert_array_equal(to_host(out), expected)


def test_the_kernel_waits_for_its_dependencies(queue, program, calls):
    out = device_array(queue, np.zeros(N, np.float32))
    kernel = program.get_sycl_kernel("add_one")
    events, waited = [], []
    for _ in range(5):  # each a read-modify-write of the same elements: they add up only if run in turn
        waited.append([e.addressof_ref() for e in events])
        events = [native_submit.submit_async(queue, kernel, [out], [N], [8], events)]
    events[0].wait()
    assert calls == waited and list(map(len, waited)) == [0, 1, 1, 1, 1]
    np.testing.assert_array_equal(to_host(out), np.full(N, 5.0, np.float32))


class DpctlSubmit:
    """A queue whose submit_async is recorded, for the launches native_submit leaves to dpctl."""

    def __init__(self, queue):
        self.queue, self.made = queue, []

    def addressof_ref(self):
        return self.queue.addressof_ref()

    def submit_async(self, *args):
        self.made.append(args)
        return self.queue.submit_async(*args)


def test_a_launch_without_a_local_range_goes_to_dpctl(queue, program, calls):
    out, recorded = device_array(queue, np.zeros(N, np.float32)), DpctlSubmit(queue)
    native_submit.submit_async(recorded, program.get_sycl_kernel("add_one"), [out], [N], None, []).wait()
    assert (len(calls), len(recorded.made)) == (0, 1)
    np.testing.assert_array_equal(to_host(out), np.ones(N, np.float32))


def test_a_launch_with_few_arguments_goes_to_dpctl(queue, program, calls, monkeypatch):
    monkeypatch.setattr(native_submit, "C_CALL_FROM", 2)
    out, recorded = device_array(queue, np.zeros(N, np.float32)), DpctlSubmit(queue)
    kernel = program.get_sycl_kernel("add_one")
    native_submit.submit_async(recorded, kernel, [out], [N], [8], []).wait()
    assert (len(calls), len(recorded.made)) == (0, 1)
    np.testing.assert_array_equal(to_host(out), np.ones(N, np.float32))


def test_an_argument_without_a_c_form_goes_to_dpctl(queue, program, calls):
    out, recorded = device_array(queue, np.arange(N, dtype=np.float32)), DpctlSubmit(queue)
    args = [out, dpctl.LocalAccessor("f4", (8,))]
    native_submit.submit_async(recorded, program.get_sycl_kernel("add_local"), args, [N], [8], []).wait()
    assert (len(calls), len(recorded.made)) == (0, 1)
    reversed_groups = np.arange(N, dtype=np.float32).reshape(-1, 8)[:, ::-1].reshape(-1)
    np.testing.assert_array_equal(to_host(out), reversed_groups + 1)


def test_a_submission_the_c_call_refuses_raises_dpctls_error(queue, program, calls):
    out = device_array(queue, np.zeros(N, np.float32))
    with pytest.raises((dpctl.SyclKernelSubmitError, dpctl.SyclKernelInvalidRangeError)):
        native_submit.submit_async(queue, program.get_sycl_kernel("add_one"), [out], [N], [16], [])  # 16 into 40
    assert len(calls) == 1


def test_a_plan_sends_by_dpctls_submit_below_the_c_call_and_by_the_c_call_from_it(queue):
    """sender: what an asynchronous plan submits by at every launch, chosen once for its arguments."""
    few = [dpctl.memory.MemoryUSMDevice(64, queue=queue)] * (native_submit.C_CALL_FROM - 1)
    assert native_submit.sender(few) is dpctl.SyclQueue.submit_async
    many = few + [ctypes.c_int32(1)]
    for args in many, [native_submit.HostAddress(64)]:
        send = native_submit.sender(args)  # the C call with the forms of these kinds bound
        assert (send.func, send.args) == (native_submit.submit_native,
                                          (native_submit.c_interface(), native_submit.forms_of(tuple(map(type, args)))))


@xetile.kernel
def load(a):
    return xetile.load_tile(xetile.init_tile(a, [0, 0], [4, 16]))


@xetile.kernel
def sum_of_eleven(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, out, scale):
    total = load(a0) + load(a1) + load(a2) + load(a3) + load(a4) + load(a5) + load(a6) + load(a7) + load(a8) + \
        load(a9) + load(a10)
    xetile.store_tile(xetile.init_tile(out, [0, 0], [4, 16]), total * scale)


def test_a_launch_with_many_arguments_takes_the_c_call(usm_kind, monkeypatch):
    """12 arrays and a scalar: 14 kernel arguments with the sizes packed (the pointers, the scalar, the sizes), over
    C_CALL_FROM; the launch's own path, not a lowered threshold."""
    interface, made = native_submit.c_interface(), []
    counted = dataclasses.replace(interface, submit=lambda *a: made.append(a) or interface.submit(*a))
    monkeypatch.setattr(native_submit, "c_interface", lambda: counted)
    hosts = [np.full((4, 16), i, np.float32) + np.arange(16, dtype=np.float32) for i in range(11)]
    out = usm_kind.asarray(np.zeros((4, 16), np.float32))
    inputs = list(map(usm_kind.asarray, hosts))
    for _ in range(2):  # the first launch and the plan's hot path
        sum_of_eleven[(1,)](*inputs, out, 0.5, target="cpu")
    np.testing.assert_array_equal(usm_kind.asnumpy(out), sum(hosts) * np.float32(0.5))
    assert len(made) == 2
