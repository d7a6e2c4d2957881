"""The current Intel GPU compiler stack (toolchain/gpu_compiler.py) and `python -m xetile_jit`: the Debian mirror read
from apt sources, the launcher scripts, where the tools are found, install() end to end on small local packages
(no network), and the installed tools themselves when they are there."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from xetile_jit import __main__ as cli
from xetile_jit.toolchain import gpu_compiler, ocloc
from xetile_jit.target.targets import get_target
from xetile_jit.toolchain.gpu_compiler import AptSource, InstallError

DEB822 = """\
Types: deb
# http://snapshot.example/archive/debian-security/20250520T000000Z
URIs: http://mirror.example/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://source.example/debian
Suites: bookworm
Components: main

Types: deb
URIs: http://disabled.example/debian
Suites: bookworm
Components: main
Enabled: no

Types: deb
URIs: http://mirror.example/debian http://second.example/debian
Suites: bookworm bookworm-updates
Components: main contrib
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""

ONE_LINE = """\
# deb http://commented.example/debian bookworm main
deb-src http://source.example/debian bookworm main
deb [arch=amd64 signed-by=/usr/share/keyrings/vendor.gpg] https://vendor.example/linux/debian bookworm stable
deb http://mirror.example/debian-security bookworm-security main
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://mirror.example/debian/ bookworm main # main
"""


def test_deb822_sources():
    assert gpu_compiler.deb822_sources(DEB822) == [
        AptSource("http://mirror.example/debian-security", ("bookworm-security",), ("main",)),
        AptSource("http://mirror.example/debian", ("bookworm", "bookworm-updates"), ("main", "contrib")),
    ]


def test_one_line_sources():
    assert gpu_compiler.one_line_sources(ONE_LINE) == [
        AptSource("https://vendor.example/linux/debian", ("bookworm",), ("stable",)),
        AptSource("http://mirror.example/debian-security", ("bookworm-security",), ("main",)),
        AptSource("http://mirror.example/debian/", ("bookworm",), ("main",)),
    ]


@pytest.mark.parametrize("uri, suite, component, expected", [
    ("http://mirror.example/debian", "bookworm", "main", True),
    ("http://snapshot.example/archive/debian/20250520T000000Z/", "bookworm", "main", True),
    ("mirror+file:///etc/apt/mirrors/debian.list", "bookworm", "main", True),
    ("http://mirror.example/debian-security", "bookworm-security", "main", False),
    ("mirror+file:///etc/apt/mirrors/debian-security.list", "bookworm-security", "main", False),
    ("http://mirror.example/debian", "bookworm", "contrib", False),
    ("http://mirror.example/ubuntu", "jammy", "main", False),
    ("http://debian.example/pool", "bookworm", "main", False),  # "debian" in the host name only
])
def test_is_debian_main(uri, suite, component, expected):
    assert AptSource(uri, (suite,), (component,)).is_debian_main() is expected


def write_etc(etc: Path, sources: str | None = None, sources_list: str | None = None) -> Path:
    (etc / "sources.list.d").mkdir(parents=True)
    if sources is not None:
        (etc / "sources.list.d" / "debian.sources").write_text(sources)
    if sources_list is not None:
        (etc / "sources.list").write_text(sources_list)
    return etc


def test_system_mirror_prefers_deb822_sources(tmp_path):
    etc = write_etc(tmp_path, DEB822, "deb http://other.example/debian bookworm main\n")
    assert gpu_compiler.system_mirror(etc) == "http://mirror.example/debian"


def test_system_mirror_from_sources_list(tmp_path):
    etc = write_etc(tmp_path, "Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\n"
                              "Components: main\n", ONE_LINE)
    assert gpu_compiler.system_mirror(etc) == "http://mirror.example/debian/"


def test_system_mirror_missing(tmp_path):
    etc = write_etc(tmp_path, sources_list="deb http://mirror.example/ubuntu jammy main\n")
    with pytest.raises(InstallError, match=r"no main Debian archive .*sources\.list"):
        gpu_compiler.system_mirror(etc)


def test_apt_options_are_private_to_root():
    assert gpu_compiler.apt_options(Path("/r")) == [
        "-o", "Dir::Etc::sourcelist=/r/sources.list", "-o", "Dir::Etc::sourceparts=-",
        "-o", "Dir::State::Lists=/r/lists", "-o", "Dir::Cache=/r/cache"]


@pytest.mark.parametrize("sysroot, quoted", [("/opt/gc/sysroot", "/opt/gc/sysroot"),
                                             ("/opt/my dir/sysroot", "'/opt/my dir/sysroot'")])
def test_launcher_script(sysroot, quoted):
    script = gpu_compiler.launcher_script(Path(sysroot), Path(sysroot) / "usr/bin/ocloc-26.27.1")
    assert script == (f"#!/bin/sh\nR={quoted}\n"
                      'exec "$R/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" --library-path '
                      '"$R/usr/lib/x86_64-linux-gnu:$R/usr/lib/llvm-23/lib" "$R/usr/bin/ocloc-26.27.1" "$@"\n')


def make_executable(path: Path, text: str = "#!/bin/sh\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def test_root_honours_xdg_cache_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert gpu_compiler.root() == tmp_path / "xetile_jit" / "gpu-compiler"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert gpu_compiler.root() == tmp_path / "home" / ".cache" / "xetile_jit" / "gpu-compiler"


def test_find_tool_in_root(monkeypatch, tmp_path):
    monkeypatch.delenv("XETILE_OCLOC", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    bin_dir = tmp_path / "xetile_jit" / "gpu-compiler" / "bin"
    assert gpu_compiler.find_tool("ocloc") is None
    ocloc = make_executable(bin_dir / "ocloc")
    (bin_dir / "iga64").write_text("not executable")
    assert gpu_compiler.find_tool("ocloc") == str(ocloc)
    assert gpu_compiler.find_tool("iga64") is None


def test_find_tool_honours_xetile_ocloc(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    make_executable(tmp_path / "cache" / "xetile_jit" / "gpu-compiler" / "bin" / "spirv-val")
    ocloc = make_executable(tmp_path / "mine" / "my-ocloc")
    spirv_val = make_executable(tmp_path / "mine" / "spirv-val")
    monkeypatch.setenv("XETILE_OCLOC", str(ocloc))
    assert gpu_compiler.find_tool("ocloc") == str(ocloc)
    assert gpu_compiler.find_tool("spirv-val") == str(spirv_val)
    assert gpu_compiler.find_tool("iga64") is None  # not beside XETILE_OCLOC, and the cache dir is not consulted


# install() offline: small .debs standing in for the real ones, with a "loader" that checks its arguments and runs
# the tool, so the launchers, the unpacking and the verification run for real.
FAKE_LOADER = '#!/bin/sh\n[ "$1" = --library-path ] || exit 99\nshift 2\nexec "$@"\n'
FAKE_FILES = {
    "libc6": {gpu_compiler.LOADER: FAKE_LOADER},
    "intel-ocloc": {"usr/bin/ocloc-9.9.1": '#!/bin/sh\necho "fake ocloc $*"\n'},
    "spirv-tools": {"usr/bin/spirv-val": '#!/bin/sh\necho "fake spirv-val $*"\n'},
    "libigc2-tools": {"usr/bin/iga64": "#!/bin/sh\necho fake iga64\n"},
}
FAKE_MLIR = {"mlir-23-tools": {"usr/lib/llvm-23/bin/mlir-opt": '#!/bin/sh\necho "fake mlir-opt $*"\n'}}


def build_debs(downloads: Path, files: dict[str, dict[str, str]], packages=gpu_compiler.PACKAGES) -> None:
    """One small .deb per package of `packages` in `downloads`, holding `files[package]` (path -> script)."""
    if shutil.which("dpkg-deb") is None:
        pytest.skip("dpkg-deb is not installed")
    for package in packages:
        tree = downloads.parent / "trees" / package
        make_executable(tree / "DEBIAN" / "control", f"Package: {package}\nVersion: 1.0\nArchitecture: amd64\n"
                        "Maintainer: test <test@localhost>\nDescription: test package\n").chmod(0o644)
        for path, text in files.get(package, {}).items():
            make_executable(tree / path, text)
        downloads.mkdir(exist_ok=True)
        subprocess.run(["dpkg-deb", "--root-owner-group", "-Znone", "-b", str(tree), str(downloads / f"{package}_1.0_amd64.deb")],
                       check=True, capture_output=True)


def test_install_offline_is_idempotent(tmp_path):
    build_debs(tmp_path / "downloads", FAKE_FILES)
    logged = []
    assert gpu_compiler.install(tmp_path, log=logged.append) == tmp_path
    assert logged == [f"unpacking 9 packages into {tmp_path / 'sysroot'}",
                      "ocloc: fake ocloc --version", "spirv-val: fake spirv-val --version"]
    run = subprocess.run([tmp_path / "bin" / "ocloc", "query", "a b"], capture_output=True, text=True, check=True)
    assert run.stdout == "fake ocloc query a b\n"
    logged.clear()
    gpu_compiler.install(tmp_path, log=logged.append)
    assert logged == ["ocloc: fake ocloc --version", "spirv-val: fake spirv-val --version"]  # nothing unpacked


def test_install_with_mlir(tmp_path):
    """--with-mlir adds upstream MLIR's packages and a mlir-opt launcher whose library path has LLVM's libraries."""
    build_debs(tmp_path / "downloads", {**FAKE_FILES, **FAKE_MLIR},
               gpu_compiler.PACKAGES + gpu_compiler.MLIR_PACKAGES)
    logged = []
    gpu_compiler.install(tmp_path, with_mlir=True, log=logged.append)
    assert logged == [f"unpacking 20 packages into {tmp_path / 'sysroot'}", "ocloc: fake ocloc --version",
                      "spirv-val: fake spirv-val --version", "mlir-opt: fake mlir-opt --version"]
    run = subprocess.run([tmp_path / "bin" / "mlir-opt", "-"], capture_output=True, text=True, check=True)
    assert run.stdout == "fake mlir-opt -\n"


def test_install_with_mlir_needs_its_packages(tmp_path, monkeypatch):
    """The Intel stack alone in the downloads: --with-mlir fetches the rest (apt-get stands in here)."""
    build_debs(tmp_path / "downloads", FAKE_FILES)
    fetched = []
    monkeypatch.setattr(gpu_compiler, "system_mirror", lambda: "http://deb.example/debian")
    monkeypatch.setattr(gpu_compiler, "run", lambda command, what, cwd=None: fetched.append(command) or "")
    with pytest.raises(InstallError, match="apt-get download did not fetch mlir-23-tools libmlir-23"):
        gpu_compiler.install(tmp_path, with_mlir=True, log=lambda line: None)
    assert fetched[-1][-len(gpu_compiler.MLIR_PACKAGES):] == list(gpu_compiler.MLIR_PACKAGES)


def test_install_names_the_tool_that_fails(tmp_path):
    broken = {**FAKE_FILES, "spirv-tools": {"usr/bin/spirv-val": "#!/bin/sh\necho broken >&2\nexit 3\n"}}
    build_debs(tmp_path / "downloads", broken)
    with pytest.raises(InstallError, match=r"bin/spirv-val --version failed \(exit code 3\):\nbroken"):
        gpu_compiler.install(tmp_path, log=lambda line: None)


def test_install_needs_one_ocloc(tmp_path):
    two = {**FAKE_FILES, "intel-ocloc": {"usr/bin/ocloc-9.9.1": "#!/bin/sh\n", "usr/bin/ocloc-9.9.2": "#!/bin/sh\n"}}
    build_debs(tmp_path / "downloads", two)
    with pytest.raises(InstallError, match=r"expected one .*/usr/bin/ocloc-\* for ocloc, found 2; remove .* and install again"):
        gpu_compiler.install(tmp_path, log=lambda line: None)


def test_cli_install(tmp_path, capsys):
    build_debs(tmp_path / "downloads", FAKE_FILES)
    assert cli.main(["install-gpu-compiler", "--root", str(tmp_path)]) == 0
    assert capsys.readouterr().out.endswith(f"installed in {tmp_path}; launchers in {tmp_path / 'bin'}\n")


def test_cli_devices(monkeypatch, tmp_path, capsys):
    devices = [SimpleNamespace(filter_string="level_zero:gpu:0", name="Intel(R) Arc(TM) B580 Graphics", is_gpu=True,
                               vendor="Intel(R) Corporation"),
               SimpleNamespace(filter_string="opencl:cpu:0", name="Some CPU", is_gpu=False, vendor="Intel(R) Corp")]
    monkeypatch.setattr(cli.dpctl, "get_devices", lambda: devices)
    system_ocloc = make_executable(tmp_path / "path" / "ocloc")
    monkeypatch.setenv("PATH", str(system_ocloc.parent))
    monkeypatch.setenv("XETILE_OCLOC", str(make_executable(tmp_path / "ocloc")))
    assert cli.main([]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "SYCL devices (filter string, name -> xetile target):",
        "  level_zero:gpu:0 Intel(R) Arc(TM) B580 Graphics  ->  target xe2",
        "  opencl:cpu:0     Some CPU  ->  target cpu",
        "GPU compilers:",
        "  2022 stack on the PATH (legacy builtin ABI):",
        f"    ocloc      {system_ocloc}",
        "    iga64      not found",
        "  current stack (spirv builtin ABI, Xe2/Xe3):",
        f"    ocloc      {tmp_path / 'ocloc'}",
        "    spirv-val  not found",
        "    iga64      not found",
        "    mlir-opt   not found",
    ]


def installed_tool(name: str) -> str:
    tool = gpu_compiler.find_tool(name)
    if tool is None:
        pytest.skip(f"the current GPU compiler's {name} is not installed (python -m xetile_jit install-gpu-compiler)")
    return tool


def test_installed_tools_run():
    """ocloc 24 or newer (the releases that know Xe2) and a spirv-val of the same stack."""
    ocloc = subprocess.run([installed_tool("ocloc"), "--version"], capture_output=True, text=True, timeout=60)
    assert ocloc.returncode == 0, ocloc.stderr
    assert int(re.match(r"(\d+)\.\d+\.\d+", ocloc.stdout)[1]) >= 24, ocloc.stdout
    spirv_val = subprocess.run([installed_tool("spirv-val"), "--version"], capture_output=True, text=True, timeout=60)
    assert spirv_val.returncode == 0 and spirv_val.stdout.startswith("SPIRV-Tools v"), spirv_val.stdout


GEMM_CALL = ("matmul_kernel(f16[512,512], f16[512,512], f32[512,512], 512, 512, 512, BM=256, BN=256, BK=32, "
             "sg_layout=[8,4], sg_data=[32,64])")
TUTORIAL_GEMM = str(Path(__file__).parents[2] / "tutorials" / "03-matrix-multiplication.py")


@pytest.mark.parametrize("level, expected", [("xetile", "xetile.tile_mma"), ("xegpu-simt", "xegpu.dpas"),
                                             ("llir", "define spir_kernel void @\"matmul_kernel\"(")])
def test_cli_compile_prints_a_level(capsys, level, expected):
    assert cli.main(["compile", TUTORIAL_GEMM, "--call", GEMM_CALL, "--target", "xe2", "--emit", level]) == 0
    assert expected in capsys.readouterr().out


def test_cli_compile_stats(capsys):
    if not ocloc.available(get_target("xe-hpc")):
        pytest.skip("the current GPU compiler is not installed")
    assert cli.main(["compile", TUTORIAL_GEMM, "--call", GEMM_CALL, "--target", "xe-hpc", "--stats"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "GRFs per thread: 256; spilled: 0 B; SLM per workgroup: 0 B"
    loop = out[3].split()
    assert loop[:2] == ["loop", "1"] and loop[2] == "32"  # 32 dpas per K step


@pytest.mark.parametrize("call, message", [
    ("matmul(f16[4,4])", "has no kernel 'matmul'; its kernels: matmul_kernel"),
    ("matmul_kernel", "--call must be a call of a kernel by name"),
])
def test_cli_compile_reports_a_bad_call(capsys, call, message):
    assert cli.main(["compile", TUTORIAL_GEMM, "--call", call]) == 1
    assert message in capsys.readouterr().err
