"""`python -m xetile_jit`: the command line.

    python -m xetile_jit [devices]                         the SYCL devices dpctl sees, the xetile target each
                                                           compiles for (runtime/device.py), and the Intel GPU
                                                           compilers installed
    python -m xetile_jit install-gpu-compiler [--root DIR] [--with-mlir]
                                                           fetch the current Intel GPU compiler stack into DIR
                                                           (default: toolchain/gpu_compiler.py's root()), with
                                                           upstream MLIR 23's mlir-opt when --with-mlir
    python -m xetile_jit compile FILE --call CALL [--target T] [--emit LEVEL] [--stats]
                                                           a kernel of FILE compiled for target T as CALL says, its
                                                           code at LEVEL (xetile, xegpu, xegpu-sg, xegpu-simt, llir,
                                                           spirv, isa, or mlir: upstream MLIR's XeGPU syntax;
                                                           default isa) or with --stats its ISA counts
"""
from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import dpctl

from .toolchain import gpu_compiler, isa_stats
from .jit.example_call import compile_call
from .runtime.device import device_target

SYSTEM_TOOLS = ("ocloc", "iga64")  # Debian 12's 2022 stack, on the PATH


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "install-gpu-compiler":
        return install_gpu_compiler(args.root, args.with_mlir)
    if args.command == "compile":
        return compile_command(args)
    print("\n".join(device_lines() + compiler_lines()))
    return 0


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m xetile_jit", description="xetile_jit: devices and GPU compilers")
    commands = parser.add_subparsers(dest="command")
    commands.add_parser("devices", help="list the SYCL devices, their targets and the GPU compilers (the default)")
    install = commands.add_parser("install-gpu-compiler", help="fetch the current Intel GPU compiler stack")
    install.add_argument("--root", type=Path, default=None, metavar="DIR",
                         help=f"install directory (default {gpu_compiler.root()})")
    install.add_argument("--with-mlir", action="store_true",
                         help="also install upstream MLIR 23's mlir-opt (the peer compiler of `--emit mlir`)")
    compile_ = commands.add_parser("compile", help="print a kernel's code for a target without running it")
    compile_.add_argument("file", type=Path, help="a Python file defining @xetile.kernel functions")
    compile_.add_argument("--call", required=True, help=(
        "the launch to compile, written like one: 'matmul_kernel(f16[1024,1024], f16[1024,1024], f32[1024,1024], "
        "1024, 1024, 1024, BM=256, BN=256, BK=32, sg_layout=[8,4], sg_data=[32,64])'; dtype[shape] is an array "
        "of that dtype and shape (f16 bf16 f32 i8 u8 i16 u16 i32 u32 i64 u64 bool; dtype[shape].T a column-major "
        "one), anything else a Python literal"))
    compile_.add_argument("--target", default="xe-hpc", help="the target (default xe-hpc)")
    compile_.add_argument("--emit", default="isa", choices=EMIT_LEVELS, help="the code to print (default isa)")
    compile_.add_argument("--stats", action="store_true", help="print the ISA counts (asm['isa_stats']) instead")
    return parser


EMIT_LEVELS = ("xetile", "xegpu", "xegpu-sg", "xegpu-simt", "llir", "spirv", "isa", "mlir")


def compile_command(args) -> int:
    try:
        asm = compile_call(args.file, args.call, args.target).asm
        level = "isa_stats" if args.stats else args.emit
        text = asm[level] if level in asm else None
    except Exception as e:  # noqa: BLE001 - a command line reports any failure of the user's file or call
        print(f"compile: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    if text is None:
        print(f"compile: no {level!r} for target {args.target} (the ISA needs an Intel GPU compiler: "
              "python -m xetile_jit devices)", file=sys.stderr)
        return 1
    if level == "spirv":
        sys.stdout.buffer.write(text)
    else:
        print(isa_stats.format_summary(text) if args.stats else text)
    return 0


def install_gpu_compiler(root: Path | None, with_mlir: bool = False) -> int:
    try:
        installed = gpu_compiler.install(root, with_mlir=with_mlir)
    except gpu_compiler.InstallError as e:
        print(f"install-gpu-compiler: {e}", file=sys.stderr)
        return 1
    print(f"installed in {installed}; launchers in {installed / 'bin'}")
    return 0


def device_lines() -> list[str]:
    devices = dpctl.get_devices()
    rows = [f"  {d.filter_string:<16} {d.name}  ->  target {device_target(d)}" for d in devices]
    return ["SYCL devices (filter string, name -> xetile target):", *(rows or ["  (none)"])]


def compiler_lines() -> list[str]:
    """The 2022 system stack (legacy ABI) and the current stack (spirv ABI, Xe2/Xe3), tool by tool."""
    system = {tool: shutil.which(tool) for tool in SYSTEM_TOOLS}
    current = {tool: gpu_compiler.find_tool(tool) for tool in gpu_compiler.TOOLS + gpu_compiler.MLIR_TOOLS}
    hint = "" if current["ocloc"] else "  (python -m xetile_jit install-gpu-compiler, or set XETILE_OCLOC)"
    return ["GPU compilers:",
            "  2022 stack on the PATH (legacy builtin ABI):",
            *tool_lines(system),
            f"  current stack (spirv builtin ABI, Xe2/Xe3){hint}:",
            *tool_lines(current)]


def tool_lines(tools: dict[str, str | None]) -> list[str]:
    return [f"    {tool:<10} {path or 'not found'}" for tool, path in tools.items()]


if __name__ == "__main__":
    sys.exit(main())
