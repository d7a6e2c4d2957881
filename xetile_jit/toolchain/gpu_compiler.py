"""Where the current Intel GPU compiler stack is (ocloc 26.x with IGC 2.x, spirv-tools 2026): the one that takes
the 2025 SPIR-V extensions of the "spirv" builtin ABI and knows Xe2 and Xe3 devices (toolchain/ocloc.py uses it for those).

`XETILE_OCLOC` names its ocloc; otherwise `python -m xetile_jit install-gpu-compiler` puts the stack in
`root()` (the user's cache directory), with one launcher script per tool in `root()/bin`, and it is found there.
The 2022 stack of Debian 12 (`ocloc`, `iga64` on the PATH) checks the "legacy" ABI.

`install()` follows shared/reference/modern_igc.md: Debian unstable's packages, fetched by apt-get with a private
configuration (a sources list naming the Debian mirror the machine's own apt sources use, suite `sid`, and private
lists/cache directories), unpacked with `dpkg -x` into `root()/sysroot` (nothing of the system is replaced). Their
binaries need a newer C library than the machine's, so each launcher runs its tool through the unpacked C library's
own loader with the unpacked libraries first.

`install(with_mlir=True)` adds upstream MLIR's tools of the same suite (LLVM/MLIR 23: `mlir-opt`, the peer whose
XeGPU pipeline takes the kernels compiler/mlir_export.py prints), from shared/reference/upstream_mlir.md.
"""
from __future__ import annotations

import os
import platform
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

TOOLS = ("ocloc", "spirv-val", "iga64")
MLIR_TOOLS = ("mlir-opt",)


def root() -> Path:
    """The install directory: $XDG_CACHE_HOME (default ~/.cache)/xetile_jit/gpu-compiler."""
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "xetile_jit" / "gpu-compiler"


default_root = root  # install()'s parameter `root` hides the function


def find_tool(name: str) -> str | None:
    """The current stack's `name` (one of TOOLS or MLIR_TOOLS) as an executable path, or None when it is not installed.
    XETILE_OCLOC names ocloc, and the other tools beside it when they are there."""
    chosen = os.environ.get("XETILE_OCLOC")
    directory = Path(chosen).parent if chosen else root() / "bin"
    path = Path(chosen) if chosen and name == "ocloc" else directory / name
    return str(path) if path.is_file() and os.access(path, os.X_OK) else None


PACKAGES = ("intel-ocloc", "libigc2", "libigdgmm12", "libigc2-tools", "libc6", "libstdc++6", "libgcc-s1", "zlib1g",
            "spirv-tools")  # libigdfcl2 (OpenCL C front end, 41 MB) is not needed for SPIR-V input
MLIR_PACKAGES = ("mlir-23-tools", "libmlir-23", "libllvm23", "libz3-4", "libzstd1", "libxml2-16", "libedit2", "libffi8",
                 "libbsd0", "libmd0", "libtinfo6")
LLVM_DIR = "usr/lib/llvm-23"
# tool -> its file in the sysroot (a glob)
BINARIES = {"ocloc": "usr/bin/ocloc-*", "spirv-val": "usr/bin/spirv-val", "iga64": "usr/bin/iga64"}
MLIR_BINARIES = {"mlir-opt": f"{LLVM_DIR}/bin/mlir-opt"}
VERIFIED = ("ocloc", "spirv-val")  # the tools install() runs with --version
MLIR_VERIFIED = ("mlir-opt",)
LIBDIR = "usr/lib/x86_64-linux-gnu"
LOADER = f"{LIBDIR}/ld-linux-x86-64.so.2"
SUITE = "sid"
APT_ETC = Path("/etc/apt")


class InstallError(RuntimeError):
    """install() could not fetch, unpack or run the stack; the message names the step."""


@dataclass(frozen=True)
class AptSource:
    """One `deb` entry of the machine's apt sources."""
    uri: str
    suites: tuple[str, ...]
    components: tuple[str, ...]

    def is_debian_main(self) -> bool:
        """The main Debian archive: a path segment starting with `debian` (`/debian`, a snapshot's
        `/archive/debian/<date>`, a `mirror+file:` list `debian.list`), component main, not the security archive."""
        segments = self.uri.rstrip("/").split("/")[3:]  # after scheme://host
        security = "security" in self.uri or all(suite.endswith("-security") for suite in self.suites)
        debian = any(segment.startswith("debian") for segment in segments)
        return debian and "main" in self.components and not security


def deb822_sources(text: str) -> list[AptSource]:
    """The `deb` entries of a deb822 `.sources` file (paragraphs of `Field: value`, `Enabled: no` skipped)."""
    sources = []
    for paragraph in re.split(r"\n\s*\n", text):
        fields = dict(re.findall(r"^([A-Za-z-]+):[ \t]*(.*)$", paragraph, re.MULTILINE))
        if "deb" in fields.get("Types", "").split() and fields.get("Enabled", "yes") != "no" and fields.get("URIs"):
            sources.append(AptSource(fields["URIs"].split()[0], tuple(fields.get("Suites", "").split()),
                                     tuple(fields.get("Components", "").split())))
    return sources


ONE_LINE = re.compile(r"^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)((?:\s+\S+)*)\s*$")


def one_line_sources(text: str) -> list[AptSource]:
    """The `deb` lines of a one-line-style `sources.list` (options in brackets skipped, comments ignored)."""
    matches = (ONE_LINE.match(line.split("#")[0].strip()) for line in text.splitlines())
    return [AptSource(m[1], (m[2],), tuple(m[3].split())) for m in matches if m]


def system_mirror(etc: Path = APT_ETC) -> str:
    """The URI of the main Debian archive in the machine's apt sources (`sources.list.d/*.sources`, then
    `sources.list.d/*.list` and `sources.list`)."""
    files = [*sorted(etc.glob("sources.list.d/*.sources")), *sorted(etc.glob("sources.list.d/*.list")),
             etc / "sources.list"]
    for path in files:
        if path.is_file():
            parse = deb822_sources if path.suffix == ".sources" else one_line_sources
            uri = next((source.uri for source in parse(path.read_text()) if source.is_debian_main()), None)
            if uri:
                return uri
    raise InstallError(f"no main Debian archive (a `deb` source with a `debian` path and component main, not "
                       f"security) in {etc}/sources.list.d/*.sources, *.list or {etc}/sources.list")


def apt_options(root: Path) -> list[str]:
    """apt-get options that use only `root`'s sources list, lists and cache (the system's apt state untouched; the
    lock apt-get update takes is in `root`'s lists, so a normal user can run them too)."""
    options = {"Dir::Etc::sourcelist": root / "sources.list", "Dir::Etc::sourceparts": "-",
               "Dir::State::Lists": root / "lists", "Dir::Cache": root / "cache"}
    return [arg for key, value in options.items() for arg in ("-o", f"{key}={value}")]


def launcher_script(sysroot: Path, binary: Path) -> str:
    """A shell script running `binary` through `sysroot`'s C library loader with `sysroot`'s libraries."""
    quoted = shlex.quote(str(sysroot))
    return (f"#!/bin/sh\nR={quoted}\n"
            f'exec "$R/{LOADER}" --library-path "$R/{LIBDIR}:$R/{LLVM_DIR}/lib" "$R/{binary.relative_to(sysroot)}" "$@"\n')


@dataclass(frozen=True)
class Selection:
    """What install() puts in place: the packages to fetch, the launchers to write, the tools to check."""
    packages: tuple[str, ...]
    binaries: dict[str, str]
    verified: tuple[str, ...]


def selection(with_mlir: bool) -> Selection:
    """The Intel stack, with upstream MLIR's tools when `with_mlir`."""
    if not with_mlir:
        return Selection(PACKAGES, BINARIES, VERIFIED)
    return Selection(PACKAGES + MLIR_PACKAGES, {**BINARIES, **MLIR_BINARIES}, VERIFIED + MLIR_VERIFIED)


def install(root: Path | None = None, *, with_mlir: bool = False, log=print) -> Path:
    """Fetch, unpack and check the current stack (and upstream MLIR's tools when `with_mlir`) in `root` (default
    `root()`); return `root`. Quick when done."""
    root = Path(root) if root is not None else default_root()
    if platform.machine() != "x86_64":
        raise InstallError(f"the GPU compiler packages are fetched for x86_64 only, this machine is {platform.machine()}")
    chosen = selection(with_mlir)
    debs = download(root, chosen.packages, log)
    sysroot = unpack(root, debs, log)
    write_launchers(root, sysroot, chosen.binaries)
    verify(root, chosen.verified, log)
    return root


def missing_packages(downloads: Path, packages: tuple[str, ...]) -> list[str]:
    return [package for package in packages if not list(downloads.glob(f"{package}_*.deb"))]


def download(root: Path, packages: tuple[str, ...], log) -> list[Path]:
    """The `packages`' .debs in root/downloads, fetched by apt-get from Debian unstable when any is missing."""
    downloads = root / "downloads"
    missing = missing_packages(downloads, packages)
    if missing:
        for directory in (downloads, root / "lists" / "partial", root / "cache" / "archives" / "partial"):
            directory.mkdir(parents=True, exist_ok=True)
        mirror = system_mirror()
        (root / "sources.list").write_text(f"deb {mirror} {SUITE} main\n")
        log(f"fetching {' '.join(missing)} from Debian {SUITE} (the mirror of this machine's apt sources)")
        run(["apt-get", *apt_options(root), "update"], "apt-get update")
        run(["apt-get", *apt_options(root), "download", *missing], "apt-get download", cwd=downloads)
    still_missing = missing_packages(downloads, packages)
    if still_missing:
        raise InstallError(f"apt-get download did not fetch {' '.join(still_missing)} into {downloads}")
    return sorted(downloads.glob("*.deb"))


def unpack(root: Path, debs: list[Path], log) -> Path:
    """root/sysroot holding exactly `debs` unpacked (redone from scratch when the set of .debs changed)."""
    sysroot, stamp = root / "sysroot", root / "unpacked.txt"
    names = "".join(f"{deb.name}\n" for deb in debs)
    if sysroot.is_dir() and stamp.is_file() and stamp.read_text() == names:
        return sysroot
    shutil.rmtree(sysroot, ignore_errors=True)
    log(f"unpacking {len(debs)} packages into {sysroot}")
    for deb in debs:
        run(["dpkg", "-x", str(deb), str(sysroot)], f"dpkg -x {deb.name}")
    stamp.write_text(names)
    return sysroot


def write_launchers(root: Path, sysroot: Path, binaries: dict[str, str]) -> None:
    (root / "bin").mkdir(parents=True, exist_ok=True)
    for tool, pattern in binaries.items():
        matches = sorted(sysroot.glob(pattern))
        if len(matches) != 1:
            raise InstallError(f"expected one {sysroot}/{pattern} for {tool}, found {len(matches)}; remove "
                               f"{root} and install again")
        launcher = root / "bin" / tool
        launcher.write_text(launcher_script(sysroot, matches[0]))
        launcher.chmod(0o755)


def verify(root: Path, tools: tuple[str, ...], log) -> None:
    """Run each of `tools` with --version; InstallError naming the tool when it does not run."""
    for tool in tools:
        output = run([str(root / "bin" / tool), "--version"], f"{root}/bin/{tool} --version")
        log(f"{tool}: {output.splitlines()[0] if output else '(no output)'}")


def run(command: list[str], what: str, cwd: Path | None = None) -> str:
    """`command`'s stdout; InstallError naming `what` with its output when it fails or cannot start."""
    try:
        result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    except OSError as e:
        raise InstallError(f"{what} could not run: {e}") from None
    if result.returncode != 0:
        raise InstallError(f"{what} failed (exit code {result.returncode}):\n{result.stderr}{result.stdout}")
    return result.stdout
