"""The engine's errors, with cel-go's texts (what kube-apiserver prints) in place of cel-cpp's."""

from __future__ import annotations

import re


class CompileError(ValueError):
    """An expression that does not parse or type-check. ``message`` is cel-go's report, e.g.
    ``ERROR: <input>:1:6: undeclared reference to 'x' (in container '')`` followed by the source
    line and a caret, as kube-apiserver prints it after ``compilation failed: ``."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class EvaluationError(Exception):
    """An expression that failed at run time (``no such key: x``, ``integer overflow``, ...)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class CostLimitExceeded(EvaluationError):
    """The evaluation's actual cost went over the limit it was given (cel-go's text)."""

    def __init__(self) -> None:
        super().__init__("operation cancelled: actual cost limit exceeded")


_STATUS_PREFIX = re.compile(r"^[A-Z_]+: ")
_STATUS_SUFFIX = re.compile(r" \[[A-Z_]+\]$")


def strip_status(text: str) -> str:
    """cel-cpp wraps its messages in an absl status (``INVALID_ARGUMENT: ... [INVALID_ARGUMENT]``)."""
    return _STATUS_SUFFIX.sub("", _STATUS_PREFIX.sub("", text.strip()))


def compile_message(text: str, line_offset: int = 0, *, status: bool = True) -> str:
    """cel-cpp's report as cel-go's, its line numbers moved up by ``line_offset`` (the lines the
    engine put before the expression); ``status``: wrapped in an absl status."""
    msg = strip_status(text) if status else text
    if line_offset:
        msg = re.sub(r"<input>:(\d+):", lambda m: f"<input>:{int(m.group(1)) - line_offset}:", msg)
    return msg


_GO_TYPE = {"int64": "int", "uint64": "uint"}


def runtime_message(text: str) -> str:
    """cel-go's wording for the run-time errors a rule can meet."""
    msg = strip_status(text)
    m = re.fullmatch(r'Key not found in map : "?(.*?)"?', msg)
    if m:
        return f"no such key: {m.group(1)}"
    if msg == "divide by zero":
        return "division by zero"
    if msg == "modulus by zero":
        return "modulus by zero"
    m = re.fullmatch(r"No matching overloads found : (.*)", msg)
    if m:
        sig = re.sub(r"\b(int64|uint64)\b", lambda t: _GO_TYPE[t.group(1)], m.group(1))
        return f"no such overload: {sig}"
    m = re.fullmatch(r"Index error: index=(-?\d+) size=\d+", msg)
    if m:
        return f"index out of bounds: {m.group(1)}"
    return msg
