"""Tools the policy may call during a rollout: a small builtin registry and `python:module:function`.

A tool call is a JSON object `{"tool": NAME, "arguments": {...}}` anywhere in the policy's reply.
A tool never raises into the runtime: failures come back to the policy as `error: ...` text.
"""

from __future__ import annotations

import ast
import importlib
import operator
from collections.abc import Callable
from typing import Any

from evolve.harness.model import Tool
from evolve.jsontext import json_objects

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {ast.USub: operator.neg, ast.UAdd: operator.pos}
MAX_RESULT = 2000


def _eval_node(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval_node(node.left), _eval_node(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > 100:
            raise ValueError("exponent too large")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval_node(node.operand))
    raise ValueError(f"unsupported expression element {type(node).__name__}")


def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression (+ - * / // % ** and parentheses)."""
    value = _eval_node(ast.parse(str(expression), mode="eval").body)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def word_count(text: str) -> str:
    """Count the words of a text."""
    return str(len(str(text).split()))


BUILTIN_TOOLS: dict[str, Callable[..., Any]] = {"calculator": calculator, "word_count": word_count}


def resolve_tool(implementation: str) -> Callable[..., Any]:
    """The callable behind `builtin:<name>` or `python:<module>:<function>` (raises LookupError)."""
    kind, _, ref = implementation.partition(":")
    if kind == "builtin":
        if ref not in BUILTIN_TOOLS:
            raise LookupError(f"unknown builtin tool {ref!r}; valid: {', '.join(sorted(BUILTIN_TOOLS))}")
        return BUILTIN_TOOLS[ref]
    module_name, _, function = ref.partition(":")
    try:
        return getattr(importlib.import_module(module_name), function)
    except (ImportError, AttributeError) as exc:
        raise LookupError(f"cannot load tool {implementation!r}: {exc}") from None


def parse_tool_call(text: str) -> tuple[str, dict[str, Any]] | None:
    """The first JSON object with a string `tool` key in `text`, as (name, arguments), else None."""
    for obj in json_objects(text):
        if isinstance(obj.get("tool"), str):
            args = obj.get("arguments", {})
            return obj["tool"], args if isinstance(args, dict) else {"input": args}
    return None


def call_tool(tools: tuple[Tool, ...], name: str, arguments: dict[str, Any]) -> str:
    """Run the harness tool `name`; any failure is returned as `error: ...` text."""
    tool = next((t for t in tools if t.name == name), None)
    if tool is None:
        return f"error: unknown tool {name!r}; available: {', '.join(t.name for t in tools)}"
    try:
        result = resolve_tool(tool.implementation)(**arguments)
    except Exception as exc:  # a tool failure is information for the policy, not a crash
        return f"error: {type(exc).__name__}: {exc}"[:MAX_RESULT]
    return str(result)[:MAX_RESULT]
