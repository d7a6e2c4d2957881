"""Trace: a kernel's Python AST -> XeTile IR at the workgroup level.

Python values (constexprs, literals) are computed at trace time; IR values build ops. `for ... in range`
becomes scf.for with loop-carried values, `while` on a runtime scalar scf.while, `if` on a runtime scalar
scf.if, `static_range`, `while` and branches on compile-time values unroll or resolve while tracing.

Early exits lower at trace time, so that every later level and the interpreter see only scf.if and loops: `break`,
`continue` and `return` set flags, hidden names of the scope (BREAK ...) that scf.if results merge and loops carry,
and the statements after one that may have run go under `if not flag`. The statements after an `if` with one branch
ending in an exit go into the other branch instead (no flag needed to skip them). A `for` loop with a `break` or
`return` becomes an scf.while on "in range and not left", so it stops at the exit; one whose exits sit under
compile-time conditions that are false stays an scf.for (`live_exits`).
"""
from __future__ import annotations

import ast
import builtins
import inspect
import operator
import sys
import textwrap
import types
from dataclasses import dataclass

from ..errors import CompilationError, Loc, did_you_mean
from ..ir import core_ops as C
from ..ir.core import Block, Value, walk
from ..ir.types import MemRefType, ScalarType, TileType, VectorType, bool_
from ..runtime.args import python_scalar
from ..language import dsl, pointers, shapes
from .dependencies import Reads
from ..language.semantic import Semantic, activate, default_dtype, is_py_scalar
from ..language.triton_spellings import triton_keyword, triton_spelling

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


def ours(base) -> bool:
    """Whether `base` is this package or one of its modules (`xetile.sum` meets Triton's names, `math.sum` not)."""
    return isinstance(base, types.ModuleType) and base.__name__.partition(".")[0] == __name__.partition(".")[0]


def offsets_of(value):
    """What a runtime `if` yields of a name's value: a pointer's offsets (its array stays), any other value itself."""
    return value.offsets if isinstance(value, pointers.Pointers) else value


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


# Hidden scope names (a space keeps them apart from Python names): the exit flags, and the value of a `return`.
BREAK, CONTINUE, RETURN, RETURNED = "break ", "continue ", "return ", "returned value "
EXITS = (BREAK, CONTINUE, RETURN)
MISSING = object()  # a name one branch does not define


def hidden(name: str) -> bool:
    return " " in name


def ir_name(name: str) -> str:
    """The name a value of `name` prints under in the IR."""
    return name.strip().replace(" ", "_")


def ends_with_exit(stmts) -> bool:
    return bool(stmts) and isinstance(stmts[-1], (ast.Return, ast.Break, ast.Continue))


def loop_exits(stmts) -> set[str]:
    """The flags a loop body may set that end the loop: BREAK for its own `break`s (not those of loops inside it),
    RETURN (and RETURNED for a value) for a `return` anywhere in it."""
    found = set()
    for node in (n for stmt in stmts for n in ast.walk(stmt)):
        if isinstance(node, ast.Return):
            found.update((RETURN, RETURNED) if node.value is not None else (RETURN,))
    pending = list(stmts)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Break):
            found.add(BREAK)
        elif not isinstance(node, (ast.For, ast.While)):
            pending.extend(n for n in ast.iter_child_nodes(node) if isinstance(n, ast.stmt))
    return found


def drop_unread_results(block: Block) -> None:
    """Drops the scf.if results nothing reads, and the constants only their yields read: the exit flags that reach
    the end of a function or of a loop iteration, where nothing is left for them to skip. Until none is left, since
    dropping one may leave another (that fed its yield) unread."""
    ifs = [op for op in walk(block) if isinstance(op, C.IfOp)]
    while sum(drop_unread(op) for op in ifs):
        pass


def drop_unread(op: C.IfOp) -> bool:
    keep = [i for i, v in enumerate(op.results) if v.uses]
    if len(keep) == len(op.results):
        return False
    op.results = [op.results[i] for i in keep]
    for region in op.regions:
        yield_op = region.block.terminator
        fed = yield_op.operands
        yield_op.set_operands([fed[i] for i in keep])
        for v in fed:
            if isinstance(v.owner, C.ConstantOp) and not v.uses:
                v.owner.erase()
    return True


@dataclass
class Branch:
    """A traced branch of an scf.if: its block, the scope at its end, and whether it ended in an exit."""
    block: Block
    scope: dict
    exited: bool


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
        self.exited = False  # the statements being traced end here (an exit ran at trace time)
        # names a loop carries as pointers (`a_ptrs += BK`): the array each keeps, the loop carrying its offsets
        self.pointer_arrays: dict[str, Value] = {}

    # ---- driver --------------------------------------------------------------------------
    def trace(self):
        with activate(self.sem):
            value = self.trace_function()
        drop_unread_results(self.sem.builder.block)
        return value

    def trace_function(self):
        """The function's body; its returned value (None if it returns none)."""
        self.visit_body(self.function.node.body)
        value = self.scope.get(RETURNED)
        if value is not None and not self.exited:  # a path reached the end
            raise self.error(self.function.node, f"{self.function.fn.__name__} returns a value on some paths and "
                                                 "reaches its end without a return on others; end it with "
                                                 "`return ...`")
        return value

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
            raise self.error(node, f"{type(e).__name__}: {e}{triton_keyword(str(e))}") from e
        except RecursionError:
            raise self.error(node, f"an expression nests too deeply to trace (Python's recursion limit is "
                                   f"{sys.getrecursionlimit()}); split it into statements") from None

    def generic_visit(self, node):
        if type(node) in COMPREHENSIONS:
            raise self.error(node, f"{COMPREHENSIONS[type(node)]} is not supported in a kernel; write the values "
                                   "out ([a, b, c]), or unroll with `for i in xetile.static_range(n):` and keep one "
                                   "variable per tile or vector")
        raise self.error(node, f"unsupported Python syntax in a kernel: {type(node).__name__}")

    def visit_body(self, stmts) -> None:
        """Trace statements up to an exit; once one may have run at run time, the rest under `if not` it."""
        for i, stmt in enumerate(stmts):
            if self.exited:
                return
            flag = self.pending_exit()
            if flag is not None:
                self.guard(stmt, flag, lambda: self.visit_body(stmts[i:]))
                return
            if isinstance(stmt, ast.If):
                self.sem.builder.loc = self.function.loc(stmt)
                if self.guarded(stmt, self.visit_if, stmt, stmts[i + 1:]):
                    return
                continue
            self.visit(stmt)

    # ---- statements ----------------------------------------------------------------------
    def visit_Expr(self, node):
        if isinstance(node.value, ast.Constant):
            return  # docstring or bare literal
        self.visit(node.value)

    def visit_Pass(self, node):
        pass

    def visit_Return(self, node):
        if node.value is not None:
            self.scope[RETURNED] = self.visit(node.value)
        self.exit(RETURN)

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
        """A condition that is a runtime value on entry, or a body that may `break` or `return`, makes an
        scf.while; a compile-time condition otherwise unrolls."""
        if node.orelse:
            raise self.error(node, "while ... else is not supported in a kernel")
        exits = loop_exits(node.body)
        entry = self.throwaway(lambda: self.visit(node.test))
        if isinstance(entry, Value) or (exits and entry):
            return self.scf_while(node, lambda: self.visit(node.test), lambda: self.loop_body(node.body), exits)
        for _ in range(MAX_UNROLL):
            cond = self.visit(node.test)
            if isinstance(cond, Value):
                raise self.error(node, "this while condition is a compile-time value on entry but a runtime value "
                                       "after an iteration: give its variables runtime values before the loop "
                                       "(e.g. `done = x < 0` rather than `done = False`)")
            if not cond:
                return
            self.loop_body(node.body)
        raise self.error(node, f"compile-time while loop ran more than {MAX_UNROLL} iterations")

    def throwaway(self, trace):
        """trace() with the ops it makes in a block that is dropped, and the scope left as it was."""
        saved_scope, saved_locals, saved_exited = dict(self.scope), dict(self.loop_locals), self.exited
        try:
            with self.sem.builder.at_end_of(Block()):
                return trace()
        finally:
            self.scope, self.loop_locals, self.exited = saved_scope, saved_locals, saved_exited

    def scf_while(self, node, test, body, exits: set):
        """scf.while: `test()` in the before region (skipped once an exit flag is set), `body()` in the after
        region. `exits`: hidden names carried besides those the body assigns: the flags the body may set that end
        the loop (from loop_exits), a `for` loop's counter."""
        flags = {f: self.scope.get(f, None if f == RETURNED else False) for f in sorted(exits)}  # set order varies
        carried = self.carried_values(node, {}, flags, body)
        names = list(carried)
        op = self.sem.builder.create(C.WhileOp, list(carried.values()), [ir_name(n) for n in names])
        before = dict(self.scope)
        self.bind_carried(names, op.before.args)
        with self.sem.builder.at_end_of(op.before):
            cond = self.while_test(node, test, [self.scope[f] for f in (BREAK, RETURN) if f in exits])
            self.sem.builder.create(C.ConditionOp, cond, op.before.args)
        self.scope = dict(before)
        self.bind_carried(names, op.after.args)
        self.scope.update((f, False) for f in (BREAK, RETURN) if f in exits)  # the before region checked them
        with self.sem.builder.at_end_of(op.after):
            body()
            yields = [self.carry_checked(node, n, self.scope[n], v.type) for n, v in zip(names, op.after.args)]
            self.sem.builder.create(C.YieldOp, yields)
        self.sem.builder.loc = self.function.loc(node)
        op.verify()
        self.close_loop(node, before, names, op.results)

    def while_test(self, node, test, flags) -> Value:
        """The loop's condition; with exit flags, `not left and test`, the test evaluated only while not left
        (it may read memory that is valid only until the exit)."""
        test_node = getattr(node, "test", node)
        if not flags:
            return self.while_condition(test_node, test())
        left = self.any_of(flags)
        go, stop = Block(), Block()
        with self.sem.builder.at_end_of(go):
            value = test()
        if not isinstance(value, Value) and not go.ops:  # `while True:`: the flags alone decide
            return self.sem.invert(left) if value else self.sem.to_value(False)
        with self.sem.builder.at_end_of(go):
            self.sem.builder.create(C.YieldOp, [self.while_condition(test_node, value)])
        with self.sem.builder.at_end_of(stop):
            self.sem.builder.create(C.YieldOp, [self.sem.to_value(False)])
        self.sem.builder.loc = self.function.loc(node)
        return self.sem.builder.create(C.IfOp, left, [ScalarType(bool_)], stop, go).results[0]

    def while_condition(self, node, test) -> Value:
        """A scalar, or the element of a one-element vector (Semantic.condition): one value for the workgroup."""
        self.sem.builder.loc = self.function.loc(node)
        return self.sem.condition(test)

    def close_loop(self, node, before: dict, names, results) -> None:
        """After a loop: names it defined are loop locals, carried names take its results (its own `break`
        flag ends with it). What follows runs: the loop may have run no iteration."""
        self.exited = False
        for name in set(self.scope) - set(before):
            if not hidden(name):
                self.loop_locals[name] = node.lineno + self.function.line_offset
        self.scope = before
        for name, value in zip(names, results):
            value.name_hint = ir_name(name)
        self.bind_carried([n for n in names if n != BREAK], [v for n, v in zip(names, results) if n != BREAK])

    def bind_carried(self, names, values) -> None:
        """Carried names take `values` (a region's arguments, a loop's results): a pointer's the offsets, with the
        array it keeps (`pointer_arrays`)."""
        for name, value in zip(names, values):
            array = self.pointer_arrays.get(name)
            self.scope[name] = value if array is None else pointers.Pointers(array, value)

    def pointer_offsets(self, node, name: str, value):
        """What a loop carries of `value`, the value of carried `name`: a pointer's offsets, from the array it
        entered the loop with; any other value as it is."""
        array = self.pointer_arrays.get(name)
        if array is None:
            return value
        if not isinstance(value, pointers.Pointers) or value.array is not array:
            raise self.error(node, f"'{name}' enters this loop as a pointer into one array, and an iteration must "
                                   f"leave it a pointer into that array (it adds offsets: `{name} += step`)")
        return value.offsets

    def loop_body(self, stmts) -> None:
        """One iteration: a `continue` or `break` in it ends the iteration, a `return` the function too."""
        self.scope[BREAK] = self.scope[CONTINUE] = False
        self.visit_body(stmts)
        self.scope.pop(CONTINUE)
        self.exited = self.scope.get(RETURN) is True

    def visit_Break(self, node):
        self.exit(BREAK)

    def visit_Continue(self, node):
        self.exit(CONTINUE)

    def exit(self, flag: str) -> None:
        self.scope[flag] = True
        self.exited = True

    def pending_exit(self) -> Value | None:
        """Whether an exit flag may be set at run time here (then what follows runs under `if not` it)."""
        flags = [self.scope[f] for f in EXITS if isinstance(self.scope.get(f), Value)]
        return self.any_of(flags) if flags else None

    def any_of(self, flags) -> Value:
        result = flags[0]
        for flag in flags[1:]:
            result = self.sem.binary("|", result, flag)
        return result

    def guard(self, node, flag: Value, trace) -> None:
        """trace() under `if not flag`; the else branch is the path that has left, defining nothing new."""
        self.sem.builder.loc = self.function.loc(node)
        before = dict(self.scope)
        live = self.trace_branch(trace, before, {f: False for f in EXITS if isinstance(before.get(f), Value)})
        left = self.trace_branch(lambda: None, before)
        self.scope = before
        self.merge_branches(node, self.sem.invert(flag), live, Branch(left.block, left.scope, True))
        self.exited = live.exited

    # ---- if ------------------------------------------------------------------------------
    def visit_If(self, node):
        self.visit_if(node, rest=[])

    def visit_if(self, node, rest) -> bool:
        """Traces the `if`; True if it took `rest`, the statements after it, into the branch that does not end
        in an exit (`if cond: return` makes the rest of a function the else branch)."""
        cond = self.visit(node.test)
        if not isinstance(cond, Value):
            self.visit_body(node.body if cond else node.orelse)
            return False
        body, orelse = node.body, node.orelse
        takes_rest = bool(rest) and ends_with_exit(body) != ends_with_exit(orelse)
        if takes_rest:
            body, orelse = (body, orelse + rest) if ends_with_exit(body) else (body + rest, orelse)
        cond = self.sem.condition(cond)
        before = dict(self.scope)
        then = self.trace_branch(lambda: self.visit_body(body), before)
        other = self.trace_branch(lambda: self.visit_body(orelse), before)
        self.scope = before
        self.merge_branches(node, cond, then, other)
        self.exited = then.exited and other.exited
        return takes_rest

    def trace_branch(self, trace, before: dict, entry: dict | None = None) -> Branch:
        block = Block()
        self.scope = {**before, **(entry or {})}
        self.exited = False
        with self.sem.builder.at_end_of(block):
            trace()
        branch = Branch(block, self.scope, self.exited)
        self.exited = False
        return branch

    def merge_branches(self, node, cond, then: Branch, other: Branch):
        """The scf.if: names the branches give different values become its results. A name only one branch
        defines is visible after it when the other branch has left (an exit: nothing after it reads the name
        there), and a returned value always (read only where the return flag is set): the other yields zero."""
        results, arrays = {}, {}
        for name in dict.fromkeys([*then.scope, *other.scope]):
            unset = False if name in EXITS else MISSING  # an exit flag a branch does not set is clear there
            a, b = then.scope.get(name, unset), other.scope.get(name, unset)
            if a is b or not any(isinstance(v, Value) or v is MISSING for v in (a, b)) and a == b:
                self.scope[name] = a
                continue
            if isinstance(a, pointers.Pointers) or isinstance(b, pointers.Pointers):
                arrays[name] = self.branch_pointer_array(node, name, a, b)
                a, b = offsets_of(a), offsets_of(b)
            if (a is MISSING or b is MISSING) and not (name == RETURNED or (then if a is MISSING else other).exited):
                continue
            t = self.merged_type(node, name, a, b)
            if t is not None:
                results[name] = t
        result_types = list(results.values())
        for branch in (then, other):
            with self.sem.builder.at_end_of(branch.block):
                yields = [self.carry(offsets_of(branch.scope.get(n, 0)), t) for n, t in zip(results, result_types)]
                self.sem.builder.create(C.YieldOp, yields)
        self.sem.builder.loc = self.function.loc(node)
        op = self.sem.builder.create(C.IfOp, cond, result_types, then.block, other.block)
        for name, value in zip(results, op.results):
            value.name_hint = ir_name(name)
            self.scope[name] = value if name not in arrays else pointers.Pointers(arrays[name], value)

    def branch_pointer_array(self, node, name: str, a, b) -> Value:
        """The array pointer `name` points into after a runtime `if`: each branch must leave it a pointer into the
        same array (a branch that did not define it, MISSING, has left the function or loop)."""
        present = [v for v in (a, b) if v is not MISSING]
        if not all(isinstance(v, pointers.Pointers) for v in present) or \
                len({id(v.array) for v in present}) != 1:
            raise self.error(node, f"'{name}' is a pointer on one path through this runtime `if` and not a pointer "
                                   "into the same array on the other; a pointer may only move by offsets there")
        return present[0].array

    def merged_type(self, node, name: str, a, b):
        """The type of the scf.if result for `name` (a or b MISSING: the one branch's), None when it has none:
        an object that is no number, vector or tile, defined in one branch only, is not visible after the `if`."""
        present = [v for v in (a, b) if v is not MISSING]
        values = [v for v in present if isinstance(v, Value)]
        if not values:
            if all(is_py_scalar(v) for v in present):
                return ScalarType(default_dtype(next((v for v in present if isinstance(v, float)), present[-1])))
            if len(present) == 2 or name == RETURNED:
                what = "the returned value" if name == RETURNED else f"'{name}'"
                raise self.error(node, f"{what} is a different Python object on each path through this runtime "
                                       "`if`; only numbers, vectors and tiles can differ (return a tuple only at "
                                       "the end of a function)")
            return None
        types = {v.type for v in values}
        if len(types) != 1:
            raise self.error(node, f"'{name.strip()}' has type {' in one branch and '.join(map(str, types))} "
                                   "in the other; branches must agree")
        t = types.pop()
        if len(present) == 2 or isinstance(t, (ScalarType, VectorType)):
            return t
        if name == RETURNED:
            raise self.error(node, f"returning a {t} from inside a runtime `if` or loop is not supported (no "
                                   "placeholder exists for the paths that do not return); assign it to a name and "
                                   "return it at the end of the function")
        return None

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
        """Each iteration traced in turn; once a runtime `break` or `return` may have run, under `if not` it."""
        if any(isinstance(a, Value) for a in args):
            raise self.error(node, "static_range bounds must be compile-time ints")
        iterations = range(*args)
        if len(iterations) > MAX_UNROLL:
            raise self.error(node, f"static_range unrolls {len(iterations)} iterations, more than the cap of "
                                   f"{MAX_UNROLL}; use `for ... in range(...)` for a runtime loop")
        outer = {f: self.scope.pop(f) for f in (BREAK, CONTINUE) if f in self.scope}  # an enclosing loop's
        self.scope[BREAK] = False
        for i in iterations:
            if self.scope[BREAK] is True or self.exited:
                break
            self.assign(node.target, i)
            flags = [self.scope[f] for f in (BREAK, RETURN) if isinstance(self.scope.get(f), Value)]
            if flags:
                self.guard(node, self.any_of(flags), lambda: self.loop_body(node.body))
            else:
                self.loop_body(node.body)
        self.scope.pop(BREAK)
        self.scope.update(outer)

    def scf_for(self, node, args):
        if not 1 <= len(args) <= 3:
            raise self.error(node, "range takes 1 to 3 arguments")
        if len(args) == 1:
            lower, upper, step = 0, args[0], 1
        else:
            lower, upper, step = args[0], args[1], args[2] if len(args) == 3 else 1
        if is_py_scalar(step) and step == 0:
            raise self.error(node, "range step must not be zero (a runtime step of 0 runs the loop zero times)")
        constant_step = step
        lower, upper, step = self.sem.unify(lower, upper, step)
        if not isinstance(lower.type, ScalarType) or not lower.type.dtype.is_int:
            raise self.error(node, f"range bounds must be integer scalars, got {lower.type}")
        target = node.target.id
        exits = self.live_exits(node, {target: Value(lower.type)})
        if exits & {BREAK, RETURN}:
            return self.for_as_while(node, lower, upper, step, constant_step, exits)
        carried = self.carried_values(node, {target: Value(lower.type)}, {}, lambda: self.loop_body(node.body))
        names = list(carried)
        op = self.sem.builder.create(C.ForOp, lower, upper, step, list(carried.values()), target, names)
        before = dict(self.scope)
        self.scope[target] = op.body.args[0]
        self.bind_carried(names, op.body.args[1:])
        with self.sem.builder.at_end_of(op.body):
            self.loop_body(node.body)
            yields = [self.carry_checked(node, n, self.scope[n], v.type) for n, v in zip(names, op.body.args[1:])]
            self.sem.builder.create(C.YieldOp, yields)
        self.sem.builder.loc = self.function.loc(node)
        op.verify()
        self.close_loop(node, before, names, op.results)

    def live_exits(self, node, bound: dict) -> set[str]:
        """The exits of loop_exits(node.body) that an iteration may take: a `break` or `return` under a
        compile-time condition that is false (`if DEBUG: break`, DEBUG a constexpr) is dead, and leaves an scf.for.
        One iteration is traced into a throwaway block, with `bound` (the loop variable) and the Python numbers the
        body reassigns as runtime values, since later iterations see other values. Where that trace fails (such a
        number is a shape there), every exit counts and the loop's own trace reports what is wrong."""
        exits = loop_exits(node.body)
        if not exits & {BREAK, RETURN}:
            return exits

        def taken() -> set[str]:
            self.scope.update(bound)
            self.scope.update((name, Value(ScalarType(default_dtype(self.scope[name]))))
                              for name in assigned_names(node.body) if is_py_scalar(self.scope.get(name)))
            self.scope.update((f, False) for f in (BREAK, RETURN))
            self.loop_body(node.body)
            return {f for f in (BREAK, RETURN) if self.scope[f] is not False}
        try:
            live = self.throwaway(taken)
        except CompilationError:
            return exits
        dead = set() if BREAK in live else {BREAK}
        if RETURN not in live:
            dead |= {RETURN, RETURNED}
        return exits - dead

    def for_as_while(self, node, lower, upper, step, constant_step, exits: set):
        """`for i in range(...)` that may `break` or `return`: an scf.while carrying the induction variable (a
        hidden name; assigning `i` in the body does not change the iteration, as in Python)."""
        counter = f"{node.target.id} "

        def in_range():
            i = self.scope[counter]
            if is_py_scalar(constant_step):
                return self.sem.compare("<" if constant_step > 0 else ">", i, upper)
            up = self.sem.binary("&", self.sem.compare(">", step, 0), self.sem.compare("<", i, upper))
            down = self.sem.binary("&", self.sem.compare("<", step, 0), self.sem.compare(">", i, upper))
            return self.sem.binary("|", up, down)

        def body():
            i = self.scope[counter]
            self.assign(node.target, i)
            self.loop_body(node.body)
            self.scope[counter] = self.sem.binary("+", i, step)

        self.scope[counter] = lower
        self.scf_while(node, in_range, body, exits | {counter})
        self.scope.pop(counter)

    def carried_values(self, node, bound: dict, flags: dict, body) -> dict:
        """Values of the names the loop body reassigns that exist before it: the scf.for iter_args, the scf.while
        carried values. `bound`: the names the loop itself binds (a for loop's variable) and their values;
        `flags`: hidden names the loop carries and their values on entry (None: a returned value not yet set);
        `body()` traces one iteration."""
        names = sorted(n for n in assigned_names(node.body) if n in self.scope and n not in bound)
        inits = {}
        for name in names:
            value = self.scope[name]
            if isinstance(value, pointers.Pointers):
                self.pointer_arrays[name] = value.array
                value = value.offsets
            else:
                self.pointer_arrays.pop(name, None)
            if not isinstance(value, Value) and not is_py_scalar(value):
                raise self.error(node, f"'{name}' ({type(value).__name__}) cannot be carried through a loop: "
                                       "only numbers, vectors, tiles and pointers can")
            inits[name] = value
        inits.update(flags)
        self.materialize_python_inits(node, inits, bound, body)
        return inits

    def materialize_python_inits(self, node, inits: dict, bound: dict, body) -> None:
        """A Python number the loop reassigns becomes a value of the type the body gives it (a returned value not
        yet set, a zero of the type the body returns; not carried where the body returns none)."""
        pending = [n for n, v in inits.items() if not isinstance(v, Value)]
        if not pending:
            return
        types = self.dry_run_types(node, inits, bound, body)
        for name in pending:
            t = types.get(name)
            value = inits[name]
            if value is None:
                if t is None:
                    del inits[name]
                    continue
                value = 0
            if t is None:
                t = ScalarType(default_dtype(value))
            inits[name] = self.carry(value, t)

    def dry_run_types(self, node, inits: dict, bound: dict, body) -> dict:
        """Trace the body once into a throwaway block to see what type each carried name ends with (a number
        returned under a compile-time condition, its default type)."""
        def trace():
            self.scope.update(bound)
            values = {n: v for n, v in inits.items() if isinstance(v, Value)}
            self.bind_carried(values, [Value(v.type) for v in values.values()])
            self.scope.update((f, False) for f in (BREAK, RETURN) if f in inits)
            body()
            carried = {n: self.pointer_offsets(node, n, self.scope.get(n)) for n in inits}
            types = {n: v.type for n, v in carried.items() if isinstance(v, Value)}
            returned = self.scope.get(RETURNED)
            if RETURNED in inits and returned is not None and not isinstance(returned, Value):
                if not is_py_scalar(returned):
                    raise self.error(node, f"a `return` in this loop returns a {type(returned).__name__}; only "
                                           "numbers, vectors and tiles can be returned from inside a loop: set "
                                           "names in the loop, `break`, and return them after it")
                types[RETURNED] = ScalarType(default_dtype(returned))
            return types
        return self.throwaway(trace)

    def carry_checked(self, node, name: str, value, t) -> Value:
        v = self.carry(self.pointer_offsets(node, name, value), t)
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
        known = [*(n for n in self.scope if not hidden(n)), *self.function.closure, *self.function.globals,
                 *PY_BUILTINS]
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
            hint = triton_spelling(node.attr) if ours(base) else ""
            raise self.error(node, f"{base!r} has no attribute '{node.attr}'"
                                   f"{hint or did_you_mean(node.attr, dir(base))}")
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
                if name in ("is", "is not") and None in (left, right):  # an array or vector is never None
                    this = PY_OPERATORS[name](left, right)
                elif name not in PY_CMPOPS.values():
                    raise self.error(node, f"`{name}` does not apply to xetile values")
                else:
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
            if not isinstance(result, Value):
                if not result if op == "&" else result:
                    return result  # short-circuit on a compile-time value
                result = self.visit(value_node)  # `True and x`, `False or x`: x, as a condition
                result = self.sem.cast(result, bool_) if isinstance(result, Value) else result
                continue
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
        value = tracer.trace_function()
        self.sem.builder.loc = loc
        return value


def bind_arguments(function: Function, args, kwargs, loc: Loc) -> dict:
    try:
        bound = inspect.signature(function.fn).bind(*args, **kwargs)
    except TypeError as e:
        raise CompilationError(f"calling {function.fn.__name__}: {e}", loc) from None
    bound.apply_defaults()
    return dict(bound.arguments)

