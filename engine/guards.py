"""Safe guard expressions: an AST allow-list compiled to closures, never eval/exec.

Flow authors write Python-like conditions (`not telemetry.on_ground and telemetry.altitude_ft > 400`).
Running them with `eval` would hand every YAML file the whole interpreter, so instead the source is
parsed with `ast.parse(mode="eval")`, every node is checked against a short allow-list, and the tree
is turned into nested closures once (cached per expression string). Evaluating a guard is then a few
plain function calls per node, cheap enough for thousands of transmissions per second.

Allowed: `and`/`or`/`not`, unary `-`, comparisons (`== != < <= > >= in`, `not in`, `is None`,
`is not None`, chains such as `0 < x < 5`), `+ - * /`, constants (str, int, float, bool, None), bare
names, `flags.x`, `telemetry.x`, `vars.x`, and list/tuple literals on the right of `in`/`not in`.

Evaluation semantics (total: a guard never raises on data, it answers True or False):

- A bare name resolves in the session variables first, then in the flags. `vars.x` reads only the
  variables, `flags.x` only the flags, `telemetry.x` only the telemetry.
- An unknown name, a missing flag and missing telemetry evaluate to None.
- Every comparison with a None operand is False (`missing == 1`, `missing != 1` and `missing < 1`
  alike), except `is None` / `is not None`, which is how to test for absence.
- Comparisons between incompatible types (`"25R" < 3`) and `in` on a non-container are False.
- Arithmetic works on numbers (and `+` on two strings); anything else, including None operands,
  division by zero and integers past 64 bits (a chain of products of a huge scenario number would
  spend the CPU), yields None, which then compares False.
- A guard outside the allow-list never runs: `compile_guard` raises `GuardError` (lint reports
  it as an error) and `holds`, what the engine calls, answers False for it.
- The final value is read with Python truthiness (None is False, so `not flags.x` holds when the flag
  was never set).
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from engine.models import Session

__all__ = [
    "Guard",
    "GuardError",
    "compile_guard",
    "guard_names",
    "holds",
    "session_holds",
    "NAMESPACES",
    "MAX_GUARD_LENGTH",
]

NAMESPACES = frozenset({"flags", "telemetry", "vars"})
MAX_GUARD_LENGTH = 2000  # guards are one-liners; the cap keeps the parser away from pathological input
MAX_INT_BITS = 64  # arithmetic on larger integers yields None

_EMPTY: Mapping[str, Any] = {}
_MISSING = object()

# An evaluator receives (variables, flags, telemetry) and returns a value.
_Eval = Callable[[Mapping[str, Any], Mapping[str, Any], Mapping[str, Any]], Any]


class GuardError(ValueError):
    """A guard expression that is not valid or not allowed; `column` is 1-based when known."""

    def __init__(self, message: str, expr: str, column: int | None = None) -> None:
        self.reason = message
        self.expr = expr
        self.column = column
        where = f" at column {column}" if column is not None else ""
        super().__init__(f"{message}{where} in guard {expr!r}")


class Guard:
    """A compiled guard. Build with `compile_guard`; evaluate as often as needed."""

    __slots__ = ("expr", "names", "var_names", "flag_names", "telemetry_names", "_fn")

    def __init__(
        self,
        expr: str,
        fn: _Eval,
        names: frozenset[str],
        var_names: frozenset[str],
        flag_names: frozenset[str],
        telemetry_names: frozenset[str],
    ) -> None:
        self.expr = expr
        self.names = names  # bare names (variables, else flags)
        self.var_names = var_names  # vars.x
        self.flag_names = flag_names  # flags.x
        self.telemetry_names = telemetry_names  # telemetry.x
        self._fn = fn

    def evaluate(
        self,
        variables: Mapping[str, Any] | None = None,
        flags: Mapping[str, Any] | None = None,
        telemetry: Mapping[str, Any] | None = None,
    ) -> bool:
        """True when the guard holds for these values (see the module docstring for None rules)."""
        return bool(self._fn(variables or _EMPTY, flags or _EMPTY, telemetry or _EMPTY))

    def __repr__(self) -> str:
        return f"Guard({self.expr!r})"


_PARSE_TRIES = 3


def parse_retrying(source: str, mode: str = "exec", filename: str = "<unknown>") -> ast.AST:
    """`ast.parse`, tried again on CPython 3.11's spurious "AST constructor recursion depth
    mismatch" SystemError (cpython#106905: a parse in another thread at the same moment upsets
    the interpreter's shared depth count; the source itself is fine). Guards are parsed in the
    gateway's threads; the tests that read the project's source parse beside them."""
    for _ in range(_PARSE_TRIES - 1):
        try:
            return ast.parse(source, filename, mode)
        except SystemError:
            continue
    return ast.parse(source, filename, mode)


def _parse(text: str) -> ast.Expression:
    """A guard expression (`parse_retrying` in eval mode)."""
    return cast(ast.Expression, parse_retrying(text, "eval"))


@lru_cache(maxsize=4096)
def compile_guard(expr: str) -> Guard:
    """Parse, check and compile `expr`; raises `GuardError` for anything outside the allow-list."""
    if not isinstance(expr, str):
        raise GuardError(f"a guard must be a string, not {type(expr).__name__}", repr(expr))
    if not expr.strip():
        raise GuardError("empty guard expression", expr)
    if len(expr) > MAX_GUARD_LENGTH:
        raise GuardError(f"guard longer than {MAX_GUARD_LENGTH} characters", expr[:40] + "...")
    indent = len(expr) - len(expr.lstrip())  # ast rejects leading blanks; keep columns true
    try:
        tree = _parse(expr.strip())
    except SyntaxError as exc:
        stripped = expr.strip()
        if not exc.offset or exc.offset > len(stripped):  # CPython reports offset 0 at end of input
            raise GuardError("syntax error: unexpected end of expression", expr, len(stripped) + 1 + indent) from None
        raise GuardError(f"syntax error: {exc.msg}", expr, exc.offset + indent) from None
    except (RecursionError, MemoryError, ValueError):
        raise GuardError("expression too deeply nested or malformed", expr) from None
    compiler = _Compiler(expr, indent)
    try:
        fn = compiler.compile(tree.body)
    except RecursionError:
        raise GuardError("expression too deeply nested", expr) from None
    return Guard(
        expr,
        fn,
        frozenset(compiler.names),
        frozenset(compiler.var_names),
        frozenset(compiler.flag_names),
        frozenset(compiler.telemetry_names),
    )


def holds(
    expr: str,
    variables: Mapping[str, Any] | None = None,
    flags: Mapping[str, Any] | None = None,
    telemetry: Mapping[str, Any] | None = None,
) -> bool:
    """`expr` evaluated on these values; False for an expression the allow-list refuses (a flow
    file that was not linted must not turn a transmission into an error, and nothing else runs)."""
    try:
        guard = compile_guard(expr)
    except GuardError:
        return False
    return guard.evaluate(variables, flags, telemetry)


def guard_names(expr: str) -> set[str]:
    """Variable names a guard reads (bare names and `vars.x`), for lint; raises `GuardError`."""
    guard = compile_guard(expr)
    return set(guard.names | guard.var_names)


# --------------------------------------------------------------------------- safe operations


def _arith(op: Callable[[Any, Any], Any], allow_str: bool) -> Callable[[Any, Any], Any]:
    """Wrap an arithmetic operator: numbers only (and str + str), None on anything else."""

    def apply(left: Any, right: Any) -> Any:
        if left is None or right is None:
            return None
        if isinstance(left, (int, float)) and isinstance(right, (int, float)):
            if _huge(left) or _huge(right):
                return None
            try:
                return op(left, right)
            except (ZeroDivisionError, OverflowError):
                return None
        if allow_str and isinstance(left, str) and isinstance(right, str):
            return left + right
        return None

    return apply


def _huge(number: int | float) -> bool:
    return isinstance(number, int) and number.bit_length() > MAX_INT_BITS


_BINOPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: _arith(operator.add, allow_str=True),
    ast.Sub: _arith(operator.sub, allow_str=False),
    ast.Mult: _arith(operator.mul, allow_str=False),
    ast.Div: _arith(operator.truediv, allow_str=False),
}


def _ordered(op: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    def compare(left: Any, right: Any) -> bool:
        if left is None or right is None:
            return False
        try:
            return bool(op(left, right))
        except TypeError:
            return False

    return compare


def _contains(left: Any, right: Any) -> bool:
    if left is None or right is None:
        return False
    try:
        return left in right
    except TypeError:
        return False


def _not_contains(left: Any, right: Any) -> bool:
    if left is None or right is None:
        return False
    try:
        return left not in right
    except TypeError:
        return False


_CMPOPS: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Eq: _ordered(operator.eq),
    ast.NotEq: _ordered(operator.ne),
    ast.Lt: _ordered(operator.lt),
    ast.LtE: _ordered(operator.le),
    ast.Gt: _ordered(operator.gt),
    ast.GtE: _ordered(operator.ge),
    ast.In: _contains,
    ast.NotIn: _not_contains,
    ast.Is: lambda left, right: left is None,  # only `is None` passes the checker
    ast.IsNot: lambda left, right: left is not None,
}


def _negate(value: Any) -> Any:
    if isinstance(value, (int, float)):
        return -value
    return None


# --------------------------------------------------------------------------- compiler


class _Compiler:
    """Checks one parsed expression against the allow-list and builds its closure tree."""

    def __init__(self, expr: str, indent: int = 0) -> None:
        self.expr = expr
        self.indent = indent
        self.names: set[str] = set()
        self.var_names: set[str] = set()
        self.flag_names: set[str] = set()
        self.telemetry_names: set[str] = set()

    def fail(self, node: ast.AST, message: str) -> GuardError:
        col = getattr(node, "col_offset", None)
        return GuardError(message, self.expr, None if col is None else col + 1 + self.indent)

    def compile(self, node: ast.AST) -> _Eval:
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            raise self.fail(node, f"{_describe(node)} is not allowed in a guard")
        return method(node)

    # literals and names ------------------------------------------------------------------

    def _Constant(self, node: ast.Constant) -> _Eval:
        value = node.value
        if value is not None and not isinstance(value, (str, int, float, bool)):
            raise self.fail(node, f"constant of type {type(value).__name__} is not allowed")
        return lambda v, f, t: value

    def _Name(self, node: ast.Name) -> _Eval:
        name = node.id
        if name.startswith("_"):
            raise self.fail(node, f"name {name!r} is not allowed (names may not start with '_')")
        if name in NAMESPACES:
            raise self.fail(node, f"{name!r} is a namespace: write {name}.<name>")
        self.names.add(name)

        def lookup(v: Mapping[str, Any], f: Mapping[str, Any], t: Mapping[str, Any]) -> Any:
            value = v.get(name, _MISSING)
            if value is _MISSING:
                return f.get(name)
            return value

        return lookup

    def _Attribute(self, node: ast.Attribute) -> _Eval:
        base = node.value
        if not isinstance(base, ast.Name) or base.id not in NAMESPACES:
            raise self.fail(node, "attribute access is only allowed as flags.<name>, telemetry.<name> or vars.<name>")
        attr = node.attr
        if attr.startswith("_"):
            raise self.fail(node, f"attribute {attr!r} is not allowed (names may not start with '_')")
        if base.id == "flags":
            self.flag_names.add(attr)
            return lambda v, f, t: f.get(attr)
        if base.id == "telemetry":
            self.telemetry_names.add(attr)
            return lambda v, f, t: t.get(attr)
        self.var_names.add(attr)
        return lambda v, f, t: v.get(attr)

    # operators ----------------------------------------------------------------------------

    def _BoolOp(self, node: ast.BoolOp) -> _Eval:
        parts = tuple(self.compile(value) for value in node.values)
        if isinstance(node.op, ast.And):

            def all_of(v: Mapping[str, Any], f: Mapping[str, Any], t: Mapping[str, Any]) -> Any:
                result: Any = True
                for part in parts:
                    result = part(v, f, t)
                    if not result:
                        return result
                return result

            return all_of

        def any_of(v: Mapping[str, Any], f: Mapping[str, Any], t: Mapping[str, Any]) -> Any:
            result: Any = False
            for part in parts:
                result = part(v, f, t)
                if result:
                    return result
            return result

        return any_of

    def _UnaryOp(self, node: ast.UnaryOp) -> _Eval:
        operand = self.compile(node.operand)
        if isinstance(node.op, ast.Not):
            return lambda v, f, t: not operand(v, f, t)
        if isinstance(node.op, ast.USub):
            return lambda v, f, t: _negate(operand(v, f, t))
        raise self.fail(node, f"unary operator {type(node.op).__name__} is not allowed")

    def _BinOp(self, node: ast.BinOp) -> _Eval:
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise self.fail(node, f"operator {type(node.op).__name__} is not allowed (only + - * /)")
        left, right = self.compile(node.left), self.compile(node.right)
        return lambda v, f, t: op(left(v, f, t), right(v, f, t))

    def _Compare(self, node: ast.Compare) -> _Eval:
        left = self.compile(node.left)
        steps: list[tuple[Callable[[Any, Any], bool], _Eval]] = []
        for op, comparator in zip(node.ops, node.comparators, strict=False):
            if isinstance(op, (ast.Is, ast.IsNot)):
                if not (isinstance(comparator, ast.Constant) and comparator.value is None):
                    raise self.fail(comparator, "'is' and 'is not' may only compare with None")
                right = self.compile(comparator)
            elif isinstance(op, (ast.In, ast.NotIn)) and isinstance(comparator, (ast.List, ast.Tuple)):
                right = self._sequence(comparator)
            else:
                right = self.compile(comparator)
            steps.append((_CMPOPS[type(op)], right))
        if len(steps) == 1:
            cmp, right = steps[0]
            return lambda v, f, t: cmp(left(v, f, t), right(v, f, t))
        chain = tuple(steps)

        def chained(v: Mapping[str, Any], f: Mapping[str, Any], t: Mapping[str, Any]) -> bool:
            current = left(v, f, t)
            for cmp, right in chain:
                nxt = right(v, f, t)
                if not cmp(current, nxt):
                    return False
                current = nxt
            return True

        return chained

    def _sequence(self, node: ast.List | ast.Tuple) -> _Eval:
        items = tuple(self.compile(elt) for elt in node.elts)
        if all(isinstance(elt, ast.Constant) for elt in node.elts):
            frozen = tuple(elt.value for elt in node.elts)  # type: ignore[attr-defined]
            return lambda v, f, t: frozen
        return lambda v, f, t: tuple(item(v, f, t) for item in items)

    def _List(self, node: ast.List) -> _Eval:
        raise self.fail(node, "list literals are only allowed on the right of 'in' / 'not in'")

    def _Tuple(self, node: ast.Tuple) -> _Eval:
        raise self.fail(node, "tuple literals are only allowed on the right of 'in' / 'not in'")


_DESCRIPTIONS: dict[type[ast.AST], str] = {
    ast.Call: "a function call",
    ast.Subscript: "subscripting ([...])",
    ast.Lambda: "lambda",
    ast.ListComp: "a comprehension",
    ast.SetComp: "a comprehension",
    ast.DictComp: "a comprehension",
    ast.GeneratorExp: "a generator expression",
    ast.IfExp: "a conditional expression (x if c else y)",
    ast.NamedExpr: "assignment (:=)",
    ast.JoinedStr: "an f-string",
    ast.Dict: "a dict literal",
    ast.Set: "a set literal",
    ast.Starred: "unpacking (*)",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield",
    ast.Slice: "slicing",
}


def _describe(node: ast.AST) -> str:
    return _DESCRIPTIONS.get(type(node), type(node).__name__)


def session_holds(session: Session, guard: str | None) -> bool:
    """A transition's guard on a session's variables, flags and telemetry; no guard always holds."""
    if not guard:
        return True
    return holds(guard, session.variables, session.flags, session.telemetry)
