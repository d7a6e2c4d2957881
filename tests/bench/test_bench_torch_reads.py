"""bench/bench_torch_reads.py: its cases do what they name (the held tensors are found, each read agrees with
itself) and its table has a line for each and their sum."""
import json
import pathlib
import sys

import pytest

torch = pytest.importorskip("torch")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench"))
import bench_torch_reads  # noqa: E402


def test_each_case_runs_and_the_reads_agree():
    cases = bench_torch_reads.cases()
    assert len(cases) == 10
    assert cases["tensors held (HeldTensors.views)"]() is not None
    assert cases["  of it: TensorGuards check"]() is True
    assert all(cases[name]() is True for name in cases if name.startswith("read mapped"))


def test_the_table_has_a_line_a_case_and_the_sum(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(sys, "argv", ["bench_torch_reads.py", "--calls", "2", "--json", str(tmp_path / "t.json")])
    bench_torch_reads.main()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("CPU ") and len(lines) == 12
    assert lines[-1].startswith("the reads mapped, together") and float(lines[-1].split()[-1]) > 0
    written = json.loads((tmp_path / "t.json").read_text())
    assert len(written["us_a_tensor"]) == 10 and written["reads_mapped_together"] == pytest.approx(float(lines[-1].split()[-1]), abs=5e-4)
