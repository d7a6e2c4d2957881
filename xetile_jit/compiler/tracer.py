"""Trace: a kernel's Python AST -> XeTile IR at the workgroup level.

Python values (constexprs, literals) are computed at trace time; IR values build ops. `for ... in range`
becomes scf.for with loop-carried values, `while` on a runtime scalar scf.while, `if` on a runtime scalar
scf.if, `static_range`, `while` and branches on compile-time values unroll or resolve while tracing. `if cond: return` at the top level
makes the rest of the kernel the else branch.
"""
from __future__ import annotations

import ast
import builtins
import inspect
import operator
import sys
import textwrap
import types

from ..errors import CompilationError, Loc, did_you_mean
from ..ir import core_ops as C
from ..ir.core import Block, Value
from ..ir.types import MemRefType, ScalarType, TileType, VectorType, bool_
from ..runtime.args import python_scalar
from ..language import dsl, pointers, shapes
from .dependencies import Reads
from ..language.semantic import Semantic, activate, default_dtype, is_py_scalar

PY_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
             ast.Pow: "**", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>"}
PY_CMPOPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
PY_OPERATORS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
                "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "&": operator.and_,
                "|": operator.or_, "^": operator.xor, "<<": operator.lshift, ">>": operator.rshift,
                "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq,
                "!=": operator.ne, "is": operator.is_, "is not": operator.is_not,
                "in": lambda a, b: a in b, "not in": lambda a, b: a not in b}
PY_BUILTINS = {"range": range, "min": min, "max": max, "abs": builtins.abs, "int": int, "float": float,
               "bool": bool, "len": len, "True": True, "False": False, "None": None}
PY_CALLABLES = (min, max, builtins.abs, int, float, bool, len, dsl.static_range, dsl.Layout)
MAX_UNROLL = 4096
PY_INSTEAD = {  # Python names a kernel does not have, and what to write instead
    "print": "print does not run in a kernel; use xetile.device_print(\"x =\", x), which prints from the device "
             "(one line per element of a vector)",
}
COMPREHENSIONS = {ast.ListComp: "a list comprehension", ast.SetComp: "a set comprehension",
                  ast.DictComp: "a dict comprehension", ast.GeneratorExp: "a generator expression"}


class Function:
    """A Python function's source, parsed once: the AST, where it came from and the names it sees."""

    def __init__(self, fn):
        self.fn = fn
        self.filename = inspect.getsourcefile(fn) or "<unknown>"
        try:
            lines, first = inspect.getsourcelines(fn)
        except (OSError, TypeError):
            raise CompilationError(f"kernel {fn.__name__}: its source code is not available; define kernels "
                                   "in a .py file (not in `python -c` or an interactive prompt)") from None
        self.source = "".join(lines)
        self.tree = ast.parse(textwrap.dedent(self.source))
        self.line_offset = first - 1
        self.node = self.tree.body[0]
        # both looked up while tracing (names defined after the kernel count) and again at each cache hit
        self.closure = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
        self.globals = fn.__globals__

    def loc(self, node) -> Loc:
        return Loc(self.filename, getattr(node, "lineno", 1) + self.line_offset)


def assigned_names(stmts) -> set[str]:
    names = set()
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return names


def ends_with_return(stmts) -> bool:
    return bool(stmts) and isinstance(stmts[-1], ast.Return)


class Tracer(ast.NodeVisitor):
    """`reads` records the globals, closure cells and module attributes the trace reads (compiler/dependencies.py);
    `chain` is the kernels being inlined into this one, outermost first."""

    def __init__(self, function: Function, sem: Semantic, scope: dict, reads: Reads | None = None,
                 chain: tuple = ()):
        self.function = function
        self.sem = sem
        self.scope = dict(scope)
        self.reads = Reads() if reads is None else reads
        self.chain = chain
        self.loop_locals: dict[str, int] = {}
        self.returned = False
        self.return_value = None

    # ---- driver --------------------------------------------------------------------------
    def trace(self):
        with activate(self.sem):
            self.visit_body(self.function.node.body, tail=True)
        return self.return_value

    def error(self, node, message: str) -> CompilationError:
        return CompilationError(message, self.function.loc(node))

    def visit(self, node):
        if isinstance(node, (ast.stmt, ast.expr)):
            self.sem.builder.loc = self.function.loc(node)
        return self.guarded(node, super().visit, node)

    def guarded(self, node, step, *args):
        """step(*args), a Python error in it a CompilationError at `node`; so is an expression nested deeper than
        Python's recursion limit lets the trace walk."""
        try:
            return step(*args)
        except CompilationError:
            raise
        except (TypeError, ValueError, ZeroDivisionError, IndexError, KeyError, OverflowError) as e:
            raise self.error(node, f"{type(e).__name__}: {e}") from e
        except RecursionError:
            raise self.error(node, f"an expression nests too deeply to trace (Python's recursion limit is "
                                   f"{sys.getrecursionlimit()}); split it into statements") from None

    def generic_visit(self, node):
        if type(node) in COMPREHENSIONS:
            raise self.error(node, f"{COMPREHENSIONS[type(node)]} is not supported in a kernel; write the values "
                                   "out ([a, b, c]), or unroll with `for i in xetile.static_range(n):` and keep one "
                                   "variable per tile or vector")
        raise self.error(node, f"unsupported Python syntax in a kernel: {type(node).__name__}")

    def visit_body(self, stmts, tail: bool) -> None:
        """Trace statements; `tail` means nothing of the kernel follows them, so `return` may end them."""
        for i, stmt in enumerate(stmts):
            if self.returned:
                return
            if tail and isinstance(stmt, ast.If) and (ends_with_return(stmt.body) or ends_with_return(stmt.orelse)):
                self.visit_if(stmt, rest=stmts[i + 1:])
                return
            if isinstance(stmt, ast.Return):
                if not tail:
                    raise self.error(stmt, "return inside a loop or a conditional is not supported; "
                                           "use `if cond: return` at the top level of the kernel")
                self.visit_Return(stmt)
                return
            self.visit(stmt)

    # ---- statements ----------------------------------------------------------------------
    def visit_Expr(self, node):
        if isinstance(node.value, ast.Constant):
            return  # docstring or bare literal
        self.visit(node.value)

    def visit_Pass(self, node):
        pass

    def visit_Return(self, node):
        self.sem.builder.loc = self.function.loc(node)
        self.return_value = None if node.value is None else self.visit(node.value)
        self.returned = True

    def visit_Assign(self, node):
        value = self.visit(node.value)
        for target in node.targets:
            self.assign(target, value)

    def visit_AnnAssign(self, node):
        if node.value is None:
            raise self.error(node, "a bare annotation declares nothing in a kernel")
        self.assign(node.target, self.visit(node.value))

    def visit_AugAssign(self, node):
        if not isinstance(node.target, ast.Name):
            raise self.error(node, "augmented assignment needs a plain name")
        current = self.lookup(node.target.id, node.target)
        self.assign(node.target, self.binop(PY_BINOPS[type(node.op)], current, self.visit(node.value)))

    def assign(self, target, value) -> None:
        if isinstance(target, ast.Name):
            if isinstance(value, (list, tuple)) and any(isinstance(v, Value) and isinstance(
                    v.type, (TileType, VectorType)) for v in value):
                raise self.error(target, "Python lists of tiles or vectors are not supported; "
                                         "use one variable per tile")
            self.scope[target.id] = value
            self.loop_locals.pop(target.id, None)
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            if not isinstance(value, (list, tuple)) or len(value) != len(target.elts):
                raise self.error(target, f"cannot unpack {value!r} into {len(target.elts)} names")
            for t, v in zip(target.elts, value):
                self.assign(t, v)
            return
        raise self.error(target, "only names and tuples of names can be assigned in a kernel")

    def visit_Assert(self, node):
        cond = self.visit(node.test)
        if isinstance(cond, Value):
            raise self.error(node, "assert needs a compile-time condition")
        if not cond:
            message = self.visit(node.msg) if node.msg is not None else "assertion failed"
            raise self.error(node, f"assert: {message}")

    def visit_While(self, node):
        """A condition that is a runtime value on entry makes an scf.while; a compile-time one unrolls."""
        if node.orelse:
            raise self.error(node, "while ... else is not supported in a kernel")
        if isinstance(self.throwaway(lambda: self.visit(node.test)), Value):
            return self.scf_while(node)
        for _ in range(MAX_UNROLL):
            cond = self.visit(node.test)
            if isinstance(cond, Value):
                raise self.error(node, "this while condition is a compile-time value on entry but a runtime value "
                                       "after an iteration: give its variables runtime values before the loop "
                                       "(e.g. `done = x < 0` rather than `done = False`)")
            if not cond:
                return
            self.visit_body(node.body, tail=False)
        raise self.error(node, f"compile-time while loop ran more than {MAX_UNROLL} iterations")

    def throwaway(self, trace):
        """trace() with the ops it makes in a block that is dropped, and the scope left as it was."""
        saved_scope, saved_locals = dict(self.scope), dict(self.loop_locals)
        try:
            with self.sem.builder.at_end_of(Block()):
                return trace()
        finally:
            self.scope, self.loop_locals = saved_scope, saved_locals

    def scf_while(self, node):
        carried = self.carried_values(node, {})
        names = list(carried)
        op = self.sem.builder.create(C.WhileOp, list(carried.values()), names)
        before = dict(self.scope)
        self.scope.update(zip(names, op.before.args))
        with self.sem.builder.at_end_of(op.before):
            test = self.visit(node.test)
            self.sem.builder.loc = self.function.loc(node.test)
            self.sem.builder.create(C.ConditionOp, self.while_condition(node, test), op.before.args)
        self.scope = dict(before)
        self.scope.update(zip(names, op.after.args))
        with self.sem.builder.at_end_of(op.after):
            self.visit_body(node.body, tail=False)
            yields = [self.carry_checked(node, n, self.scope[n], v.type) for n, v in zip(names, op.after.args)]
            self.sem.builder.create(C.YieldOp, yields)
        self.sem.builder.loc = self.function.loc(node)
        op.verify()
        self.close_loop(node, before, names, op.results)

    def while_condition(self, node, test) -> Value:
        """A scalar, or the element of a one-element vector (a 1x1 tile's value): one value for the workgroup."""
        if isinstance(test, Value) and isinstance(test.type, VectorType) and all(n == 1 for n in test.type.shape):
            test = self.sem.builder.create(C.ExtractElementOp, test).result
        if isinstance(test, Value) and not isinstance(test.type, ScalarType):
            raise self.error(node.test, f"a while condition must be a scalar or a one-element vector, the same for "
                                        f"the whole workgroup, got {test.type}; reduce it first, e.g. "
                                        "`xetile.tile_reduce(\"max\", t, [0, 1]) != 0` of a tile")
        return self.sem.condition(test)

    def close_loop(self, node, before: dict, names, results) -> None:
        """After a loop: names it defined are loop locals, carried names take its results."""
        for name in set(self.scope) - set(before):
            self.loop_locals[name] = node.lineno + self.function.line_offset
        self.scope = before
        for name, value in zip(names, results):
            value.name_hint = name
            self.scope[name] = value

    def visit_Break(self, node):
        raise self.error(node, "break is not supported in a kernel loop; fold the exit into a while loop's condition "
                               "(e.g. `while i < n and not done:`, with `done` set in the body)")

    def visit_Continue(self, node):
        raise self.error(node, "continue is not supported in a kernel loop; put the rest of the body under an `if`")

    # ---- if ------------------------------------------------------------------------------
    def visit_If(self, node):
        self.visit_if(node, rest=None)

    def visit_if(self, node, rest):
        """`rest` (the statements after a tail `if ... return`) is appended to the branch that goes on."""
        body, orelse = node.body, node.orelse
        tail = rest is not None
        if tail:
            body = body[:-1] if ends_with_return(body) else body + rest
            orelse = orelse[:-1] if ends_with_return(orelse) else orelse + rest
        cond = self.visit(node.test)
        if not isinstance(cond, Value):
            self.visit_body(node.body if cond else node.orelse, tail=tail)
            if tail and not self.returned:
                self.visit_body(rest, tail=True)
            return
        if any(ends_with_return(b) and b[-1].value is not None for b in (node.body, node.orelse)):
            raise self.error(node, "returning a value from inside a runtime `if` is not supported")
        cond = self.sem.condition(cond)
        before = dict(self.scope)
        then_block, then_scope = self.trace_branch(body, before, tail)
        else_block, else_scope = self.trace_branch(orelse, before, tail)
        self.scope = before
        self.merge_branches(node, cond, then_block, then_scope, else_block, else_scope)
        if tail:
            self.returned = True

    def trace_branch(self, stmts, before: dict, tail: bool):
        block = Block()
        self.scope = dict(before)
        with self.sem.builder.at_end_of(block):
            self.visit_body(stmts, tail=tail)
        if self.return_value is not None:
            raise self.error(stmts[-1], "returning a value from inside a runtime `if` is not supported")
        self.returned = False
        return block, self.scope

    def merge_branches(self, node, cond, then_block, then_scope, else_block, else_scope):
        names = [n for n in then_scope if n in else_scope and then_scope[n] is not else_scope[n]]
        results = {}
        for name in names:
            a, b = then_scope[name], else_scope[name]
            if not isinstance(a, Value) and not isinstance(b, Value):
                if is_py_scalar(a) and is_py_scalar(b) and a != b:
                    results[name] = ScalarType(default_dtype(a if isinstance(a, float) else b))
                elif a != b:
                    raise self.error(node, f"'{name}' is a different Python object in each branch")
                continue
            types = {v.type for v in (a, b) if isinstance(v, Value)}
            if len(types) != 1:
                raise self.error(node, f"'{name}' has type {' in one branch and '.join(map(str, types))} "
                                       "in the other; branches must agree")
            results[name] = types.pop()
        result_types = list(results.values())
        for block, scope in ((then_block, then_scope), (else_block, else_scope)):
            with self.sem.builder.at_end_of(block):
                yields = [self.carry(scope[n], t) for n, t in zip(results, result_types)]
                self.sem.builder.create(C.YieldOp, yields)
        self.sem.builder.loc = self.function.loc(node)
        op = self.sem.builder.create(C.IfOp, cond, result_types, then_block, else_block)
        for name, value in zip(results, op.results):
            value.name_hint = name
            self.scope[name] = value

    def carry(self, value, t) -> Value:
        """`value` as an IR value of type `t` at a region's end (Python numbers become constants)."""
        if isinstance(value, Value):
            return value
        v = self.sem.to_value(value, t.dtype)
        return self.sem.broadcast_to(v, t.shape) if isinstance(t, VectorType) else v

    # ---- for -----------------------------------------------------------------------------
    def visit_For(self, node):
        if node.orelse:
            raise self.error(node, "for ... else is not supported in a kernel")
        if not isinstance(node.iter, ast.Call):
            raise self.error(node, "kernel loops must be `for i in range(...)` or `xetile.static_range(...)`")
        fn = self.visit(node.iter.func)
        args = [self.visit(a) for a in node.iter.args]
        if fn is dsl.static_range:
            return self.unroll(node, args)
        if fn is not range:
            raise self.error(node, "kernel loops must be `for i in range(...)` or `xetile.static_range(...)`")
        if not isinstance(node.target, ast.Name):
            raise self.error(node, "the loop variable must be a single name")
        self.scf_for(node, args)

    def unroll(self, node, args):
        if any(isinstance(a, Value) for a in args):
            raise self.error(node, "static_range bounds must be compile-time ints")
        iterations = range(*args)
        if len(iterations) > MAX_UNROLL:
            raise self.error(node, f"static_range unrolls {len(iterations)} iterations, more than the cap of "
                                   f"{MAX_UNROLL}; use `for ... in range(...)` for a runtime loop")
        for i in iterations:
            self.assign(node.target, i)
            self.visit_body(node.body, tail=False)

    def scf_for(self, node, args):
        if not 1 <= len(args) <= 3:
            raise self.error(node, "range takes 1 to 3 arguments")
        if len(args) == 1:
            lower, upper, step = 0, args[0], 1
        else:
            lower, upper, step = args[0], args[1], args[2] if len(args) == 3 else 1
        if is_py_scalar(step) and step == 0:
            raise self.error(node, "range step must not be zero (a runtime step of 0 runs the loop zero times)")
        lower, upper, step = self.sem.unify(lower, upper, step)
        if not isinstance(lower.type, ScalarType) or not lower.type.dtype.is_int:
            raise self.error(node, f"range bounds must be integer scalars, got {lower.type}")
        carried = self.carried_values(node, {node.target.id: Value(lower.type)})
        names = list(carried)
        op = self.sem.builder.create(C.ForOp, lower, upper, step, list(carried.values()), node.target.id, names)
        before = dict(self.scope)
        self.scope.update(zip([node.target.id] + names, op.body.args))
        with self.sem.builder.at_end_of(op.body):
            self.visit_body(node.body, tail=False)
            yields = [self.carry_checked(node, n, self.scope[n], v.type) for n, v in zip(names, op.body.args[1:])]
            self.sem.builder.create(C.YieldOp, yields)
        self.sem.builder.loc = self.function.loc(node)
        op.verify()
        self.close_loop(node, before, names, op.results)

    def carried_values(self, node, bound: dict) -> dict:
        """Values of the names the loop body reassigns that exist before it: the scf.for iter_args, the scf.while
        carried values. `bound`: the names the loop itself binds (a for loop's variable) and their values."""
        names = sorted(n for n in assigned_names(node.body) if n in self.scope and n not in bound)
        inits = {}
        for name in names:
            value = self.scope[name]
            if not isinstance(value, Value) and not is_py_scalar(value):
                raise self.error(node, f"'{name}' ({type(value).__name__}) cannot be carried through a loop: "
                                       "only numbers, vectors and tiles can")
            inits[name] = value
        self.materialize_python_inits(node, inits, bound)
        return inits

    def materialize_python_inits(self, node, inits: dict, bound: dict) -> None:
        """A Python number the loop reassigns becomes a value of the type the body gives it."""
        pending = [n for n, v in inits.items() if not isinstance(v, Value)]
        if not pending:
            return
        types = self.dry_run_types(node, inits, bound)
        for name in pending:
            t = types.get(name)
            value = inits[name]
            if t is None:
                t = ScalarType(default_dtype(value))
            inits[name] = self.carry(value, t)

    def dry_run_types(self, node, inits: dict, bound: dict) -> dict:
        """Trace the body once into a throwaway block to see what type each carried name ends with."""
        def trace():
            self.scope.update(bound)
            self.scope.update((n, Value(v.type)) for n, v in inits.items() if isinstance(v, Value))
            self.visit_body(node.body, tail=False)
            return {n: self.scope[n].type for n in inits if isinstance(self.scope.get(n), Value)}
        return self.throwaway(trace)

    def carry_checked(self, node, name: str, value, t) -> Value:
        v = self.carry(value, t)
        if v.type != t:
            raise self.error(node, f"loop-carried '{name}' is {t} before the loop but {v.type} after an "
                                   "iteration; convert it (e.g. `.to(...)`) so the types agree")
        return v

    # ---- expressions ---------------------------------------------------------------------
    def visit_Constant(self, node):
        return node.value

    def visit_Name(self, node):
        return self.lookup(node.id, node)

    def lookup(self, name: str, node):
        if name in self.scope:
            return self.scope[name]
        if name in self.loop_locals:
            raise self.error(node, f"'{name}' is defined inside the loop at line {self.loop_locals[name]} and "
                                   "is not available after it; assign it before the loop to carry it")
        found = self.outer_value(name)
        if found is not None:
            kind, value = found
            self.reads.record(kind, self.function, name, value, self.function.loc(node))
            return python_scalar(value)
        if name in PY_BUILTINS:
            return PY_BUILTINS[name]
        if name in PY_INSTEAD:
            raise self.error(node, PY_INSTEAD[name])
        known = [*self.scope, *self.function.closure, *self.function.globals, *PY_BUILTINS]
        raise self.error(node, f"name '{name}' is not defined{did_you_mean(name, known)}")

    def outer_value(self, name: str) -> tuple[str, object] | None:
        """("closure" or "global", value) of a name the kernel's function sees outside itself."""
        cell = self.function.closure.get(name)
        if cell is not None:
            try:
                return "closure", cell.cell_contents
            except ValueError:  # an empty cell: the name is not bound yet
                return None
        if name in self.function.globals:
            return "global", self.function.globals[name]
        return None

    def visit_Attribute(self, node):
        base = self.visit(node.value)
        if isinstance(base, Value):
            return dsl.value_attribute(base, node.attr)
        if not hasattr(base, node.attr):
            raise self.error(node, f"{base!r} has no attribute '{node.attr}'{did_you_mean(node.attr, dir(base))}")
        value = getattr(base, node.attr)
        if isinstance(base, types.ModuleType):
            self.reads.record("attribute", base, node.attr, value, self.function.loc(node))
        return python_scalar(value)

    def visit_List(self, node):
        return [self.visit(e) for e in node.elts]

    def visit_Tuple(self, node):
        return tuple(self.visit(e) for e in node.elts)

    def visit_Subscript(self, node):
        base = self.visit(node.value)
        if isinstance(base, Value) and isinstance(base.type, MemRefType):
            return self.sem.load_element(base, self.visit(node.slice))
        if isinstance(base, Value) and isinstance(base.type, VectorType):
            return shapes.subscript(base, self.visit(node.slice))
        if isinstance(base, Value):
            raise self.error(node, "indexing vectors or tiles is not supported; use tiles and tile ops")
        return base[self.visit(node.slice)]

    def visit_Slice(self, node):
        return slice(*(None if n is None else self.visit(n) for n in (node.lower, node.upper, node.step)))

    def visit_JoinedStr(self, node):
        return "".join(str(self.visit(v)) for v in node.values)

    def visit_FormattedValue(self, node):
        return self.visit(node.value)

    def binop(self, op: str, a, b):
        moved = pointers.offset(op, a, b)  # `array + offsets`
        if moved is not None:
            return moved
        if isinstance(a, Value) or isinstance(b, Value):
            return self.sem.binary(op, a, b)
        return PY_OPERATORS[op](a, b)

    def visit_BinOp(self, node):
        """A chain `a + b - c ...` parses as BinOps nested along their left operands, one level an operator: walked
        as a loop from its innermost, so that a chain of any length traces within Python's recursion limit."""
        chain = [node]
        while isinstance(chain[-1].left, ast.BinOp):
            chain.append(chain[-1].left)
        result = self.visit(chain[-1].left)
        for link in reversed(chain):
            if type(link.op) not in PY_BINOPS:
                raise self.error(link, f"unsupported operator {type(link.op).__name__}")
            right = self.visit(link.right)
            self.sem.builder.loc = self.function.loc(link)
            result = self.guarded(link, self.binop, PY_BINOPS[type(link.op)], result, right)
        return result

    def visit_UnaryOp(self, node):
        x = self.visit(node.operand)
        if not isinstance(x, Value):
            return {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert,
                    ast.Not: operator.not_}[type(node.op)](x)
        if isinstance(node.op, ast.USub):
            return self.sem.negate(x)
        if isinstance(node.op, ast.UAdd):
            return x
        if isinstance(node.op, ast.Not):
            return self.sem.invert(self.sem.cast(x, bool_))
        return self.sem.invert(x)

    def visit_Compare(self, node):
        result, left = True, self.visit(node.left)
        for op, right_node in zip(node.ops, node.comparators):
            right = self.visit(right_node)
            name = PY_CMPOPS.get(type(op)) or {ast.Is: "is", ast.IsNot: "is not", ast.In: "in",
                                              ast.NotIn: "not in"}[type(op)]
            if isinstance(left, Value) or isinstance(right, Value):
                if name not in PY_CMPOPS.values():
                    raise self.error(node, f"`{name}` does not apply to xetile values")
                this = self.sem.compare(name, left, right)
            else:
                this = PY_OPERATORS[name](left, right)
            result = this if result is True else self.logical("&", result, this)
            left = right
        return result

    def logical(self, op: str, a, b):
        if isinstance(a, Value) or isinstance(b, Value):
            return self.sem.binary(op, *(self.sem.cast(x, bool_) if isinstance(x, Value) else bool(x) for x in (a, b)))
        return (a and b) if op == "&" else (a or b)

    def visit_BoolOp(self, node):
        op = "&" if isinstance(node.op, ast.And) else "|"
        result = self.visit(node.values[0])
        for value_node in node.values[1:]:
            if not isinstance(result, Value) and (not result if op == "&" else result):
                return result  # short-circuit on a compile-time value
            result = self.logical(op, result, self.visit(value_node))
        return result

    def visit_IfExp(self, node):
        cond = self.visit(node.test)
        if not isinstance(cond, Value):
            return self.visit(node.body if cond else node.orelse)
        return self.sem.where(cond, self.visit(node.body), self.visit(node.orelse))

    def visit_Call(self, node):
        fn = self.visit(node.func)
        args = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                args.extend(self.visit(a.value))
            else:
                args.append(self.visit(a))
        kwargs = {k.arg: self.visit(k.value) for k in node.keywords}
        self.sem.builder.loc = self.function.loc(node)  # the arguments may sit on later lines
        return self.call(node, fn, args, kwargs)

    def call(self, node, fn, args, kwargs):
        if getattr(fn, "__xetile_builtin__", False):
            return fn(*[self.inlined(node, a) for a in args], **{k: self.inlined(node, v) for k, v in kwargs.items()})
        if getattr(fn, "__xetile_kernel__", False):
            return self.inline(node, fn, args, kwargs)
        traced = any(isinstance(a, Value) for a in list(args) + list(kwargs.values()))
        if fn in (min, max, builtins.abs) and traced:
            if fn is builtins.abs:
                return self.sem.abs(*args)
            op = "min" if fn is min else "max"
            result = args[0]
            for a in args[1:]:
                result = self.sem.binary(op, result, a)
            return result
        if fn in (int, float, bool) and traced:
            return dsl.cast(args[0], default_dtype(fn()))
        if fn is range:
            raise self.error(node, "range(...) is only allowed as the iterable of a for loop")
        if fn in PY_CALLABLES:
            return fn(*args, **kwargs)
        name = getattr(fn, "__name__", repr(fn))
        raise self.error(node, f"calls to arbitrary Python functions are not supported in a kernel: '{name}' "
                               "(call xetile functions or other @xetile.kernel functions)")

    def inlined(self, node, arg):
        """A @xetile.kernel function passed to a builtin (the combine of reduce and associative_scan) as a callable
        that traces it in place where the builtin calls it."""
        if not getattr(arg, "__xetile_kernel__", False):
            return arg
        return lambda *args, **kwargs: self.inline(node, arg, args, kwargs)

    def inline(self, node, kernel, args, kwargs):
        """A call to another @xetile.kernel function is traced in place, like a Triton @jit helper; since
        nothing is a call at run time, a kernel cannot call itself, directly or through others."""
        chain = self.chain + (self.function.fn,)
        if kernel.fn in chain:
            names = " -> ".join(f.__name__ for f in chain[chain.index(kernel.fn):] + (kernel.fn,))
            raise self.error(node, f"recursive kernel call {names}: kernels are inlined where they are called, "
                                   "so a kernel cannot call itself, directly or through other kernels")
        loc = self.function.loc(node)
        function = kernel.function
        tracer = Tracer(function, self.sem, bind_arguments(function, args, kwargs, loc), self.reads, chain)
        tracer.visit_body(function.node.body, tail=True)
        self.sem.builder.loc = loc
        return tracer.return_value


def bind_arguments(function: Function, args, kwargs, loc: Loc) -> dict:
    try:
        bound = inspect.signature(function.fn).bind(*args, **kwargs)
    except TypeError as e:
        raise CompilationError(f"calling {function.fn.__name__}: {e}", loc) from None
    bound.apply_defaults()
    return dict(bound.arguments)

