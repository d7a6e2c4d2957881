"""The covering set of parametrizations a device test runs on opencl:cpu (tests/device_cover.py)."""
import itertools

from device_cover import combinations_held, covering


def test_every_value_of_every_parameter_is_run_with_strength_1():
    cases = [{"op": op, "dtype": dt, "mode": m} for op, dt, m in itertools.product("+-*/", ["f16", "i8", "u8"], "vs")]
    chosen = covering(cases, 1)
    assert len(chosen) == 4                      # the 4 ops each need a case; 3 dtypes and 2 modes fit in them
    for name in ("op", "dtype", "mode"):
        assert {cases[i][name] for i in chosen} == {c[name] for c in cases}


def test_every_pair_is_run_with_strength_2_and_the_choice_is_the_same_every_time():
    cases = [{"op": op, "dtype": dt, "mode": m} for op, dt, m in itertools.product("+-*/", ["f16", "i8", "u8"], "vs")]
    chosen = covering(cases, 2)
    assert len(chosen) == 12 < len(cases)        # op x dtype needs all 12; modes ride along in them
    held = set().union(*(combinations_held(cases[i], 2) for i in chosen))
    assert held == set().union(*(combinations_held(c, 2) for c in cases))
    assert covering(cases, 2) == chosen


def test_a_test_of_one_parameter_runs_each_value():
    cases = [{"dtype": dt} for dt in ["f16", "bf16", "f32"]]
    assert covering(cases, 2) == [0, 1, 2]
