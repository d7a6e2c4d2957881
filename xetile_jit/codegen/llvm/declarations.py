"""A module's function of a name: the one declared (or defined) before, else a new declaration. A module has one
signature per name, as the SPIR-V emitter maps the built-ins by name: a second signature is an error."""
from __future__ import annotations

from llvmlite import ir


def declared(module: ir.Module, name: str, ty: ir.FunctionType) -> ir.Function:
    fn = module.globals.get(name) or ir.Function(module, ty, name)
    if fn.function_type != ty:
        raise NotImplementedError(f"to-llvm: {name} is declared as {fn.function_type} and used as {ty}")
    return fn
