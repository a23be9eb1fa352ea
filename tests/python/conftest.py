"""Shared set-up of the Python tests (run by ctest: tests/python/CMakeLists.txt sets
PYTHONPATH to the built package, GPUPLAN_CLI to the executable and GPUPLAN_SOURCE_DIR)."""

import json
import os
import subprocess

import pytest

ROOT = os.environ.get("GPUPLAN_SOURCE_DIR",
                      os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
CLI = os.environ.get("GPUPLAN_CLI", os.path.join(ROOT, "build", "cli", "gpuplan"))


def src(*parts):
    return os.path.join(ROOT, *parts)


def cli_json(*args):
    """What `gpuplan ARGS --json` prints, parsed: the answer the module must give."""
    done = subprocess.run([CLI, *args, "--json"], cwd=ROOT, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(autouse=True)
def _at_root(monkeypatch):
    # The examples name their files relative to the repository root, as the CLI tests run them.
    monkeypatch.chdir(ROOT)
