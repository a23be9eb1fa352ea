"""gpuplan's exceptions: the command line's exit code 2 (bad input) and 1 (a bug) as classes.

The message is the one `gpuplan` prints after ``error:``: where (file:line:col), the key, what
was found and how to fix it.
"""


class GpuplanError(Exception):
    """Base class of every error gpuplan raises."""


class InputError(GpuplanError, ValueError):
    """Bad input the user can fix (the CLI exits 2)."""


class ScenarioError(InputError):
    """A scenario, hwdb or spec file is wrong: ``file``, ``line``, ``column`` (1-based, 0 when
    unknown) and ``key`` (the YAML key path, e.g. ``workload.input_tokens``) say where; the
    message says what and how to fix it."""

    def __init__(self, message, file="", line=0, column=0, key=""):
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        self.key = key


class UsageError(InputError):
    """A keyword argument the command does not take, or a value it cannot use (the CLI's
    command-line errors)."""


class InternalError(GpuplanError, RuntimeError):
    """A bug in gpuplan (the CLI exits 1): please report it with the input."""


def raise_for(error):
    """Raises the exception for an error dict of gpuplan._core.run (no-op for None)."""
    if error is None:
        return
    kind = error["kind"]
    message = error["message"]
    if kind == "interrupted":
        raise KeyboardInterrupt("gpuplan: stopped; no result")
    if kind == "config":
        raise ScenarioError(message, error["file"], error["line"], error["column"], error["key"])
    if kind == "usage":
        raise UsageError(message)
    if kind == "input":
        raise InputError(message)
    raise InternalError(message)
