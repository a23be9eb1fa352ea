"""The results of the commands: the command's ``--json`` object, read back unchanged.

``to_dict()`` is exactly what ``gpuplan COMMAND ... --json`` prints (parsed by ``json.loads``);
the top-level keys are also attributes (``estimate().throughput_tok_s``). Keys carry their unit
as the CLI's do: ``_s`` seconds, ``_bytes``, ``_w`` watts, ``_tok_s`` tokens per second, ``_rps``
requests per second; plain fractions have none (docs/cli-json.md). ``to_frame()`` turns a table
of the result into a pandas DataFrame (pandas is imported only then); ``plot()`` draws it with
matplotlib (gpuplan/plot.py).
"""

import copy
import csv
import io
import json
import os


def _pandas():
    try:
        import pandas
    except ImportError as e:  # pragma: no cover - depends on the machine
        raise ImportError("to_frame() needs pandas (Debian: apt-get install python3-pandas)") from e
    return pandas


def _frame(rows):
    """A DataFrame of a list of dicts, nested dicts flattened to dotted columns."""
    return _pandas().json_normalize(rows, sep=".")


class Result:
    """One command's answer. ``command`` and ``args`` say what ran (``gpuplan COMMAND ARGS``),
    ``notes`` is what the command wrote to standard error (notes and warnings)."""

    default_table = None  # the key of the list to_frame() uses when none is named

    def __init__(self, command, args, data, notes=""):
        self.command = command
        self.args = list(args)
        self._data = data
        self.notes = notes
        self._tables = {}

    def to_dict(self):
        """A deep copy of the command's JSON (a dict, or a list for compare and the catalogs)."""
        return copy.deepcopy(self._data)

    def to_json(self, indent=2):
        return json.dumps(self._data, indent=indent)

    def __getattr__(self, name):
        data = self.__dict__.get("_data")
        if isinstance(data, dict) and name in data:
            return data[name]
        raise AttributeError(f"{type(self).__name__} of 'gpuplan {self.__dict__.get('command')}' "
                             f"has no key '{name}'; its keys: {', '.join(self.keys())}")

    def __getitem__(self, key):
        return self._data[key]

    def __contains__(self, key):
        return key in self._data

    def keys(self):
        return list(self._data) if isinstance(self._data, dict) else []

    def tables(self):
        """The names to_frame() accepts: the CSV tables kept with the result, then every key
        whose value is a list of objects."""
        names = list(self._tables)
        if isinstance(self._data, dict):
            names += [k for k, v in self._data.items()
                      if isinstance(v, list) and v and isinstance(v[0], dict)]
        return names

    def to_frame(self, table=None):
        """The table ``table`` (see tables()) as a DataFrame; by default the command's main one.
        A result that is a list (compare, the catalogs) is one row per element."""
        table = table or self.default_table
        if table is None and isinstance(self._data, list):
            return _frame(self._data)
        if table is None:
            return _frame([self._data])
        if table in self._tables:
            return _pandas().read_csv(io.StringIO(self._tables[table]))
        value = self._data.get(table) if isinstance(self._data, dict) else None
        if isinstance(value, list):
            return _frame(value)
        if isinstance(value, dict):
            return _frame([value])
        raise KeyError(f"no table '{table}' in this result; it has: {', '.join(self.tables())}")

    def plot(self, kind=None, ax=None):
        """Draws the result with matplotlib (see gpuplan.plot); returns the Axes."""
        from . import plot

        return plot.draw(self, kind, ax)

    def __repr__(self):
        return f"<gpuplan {self.command} result: {', '.join(self.keys()[:8])}...>"


class SimulateResult(Result):
    """``simulate``: summary percentiles in the JSON; ``to_frame("requests")`` one row per
    request (``arrival_s``, ``queue_s``, ``ttft_s``, ``tpot_s``, ``e2e_s``, tokens, outcome),
    ``to_frame("timeseries")`` the run over time (kept when simulate(records=True))."""

    default_table = "requests"

    @staticmethod
    def read_tables(folder):
        tables = {}
        for name in ("requests", "timeseries", "power"):
            path = os.path.join(folder, name + ".csv")
            if os.path.exists(path):
                with open(path, encoding="utf-8") as f:
                    tables[name] = f.read()
        return tables

    def to_frame(self, table=None):
        if table is None and "requests" not in self._tables:
            raise KeyError("simulate(records=False) kept no per-request table")
        return super().to_frame(table)


class PlanResult(Result):
    """``plan``: the ranked configurations are ``to_frame()`` (monthly cost, GPUs, TP, ...)."""

    default_table = "ranked"


class CurveResult(Result):
    """``curve``: ``to_frame()`` has one row per candidate GPU and load (``gpu``, ``load``,
    ``throughput_tok_s``, ``ttft_s``, ``tpot_s``, ``e2e_s``, ``meets_slo``, ...)."""

    def to_frame(self, table=None):
        if table not in (None, "points"):
            return super().to_frame(table)
        rows = []
        for c in self._data.get("candidates", []):
            for p in c.get("points", []):
                rows.append({"gpu": c.get("gpu"), "max_load": c.get("max_load"), **p})
        return _frame(rows)


class CatalogResult(Result):
    """``model list`` / ``hw list``: one row per entry."""


class SweepResult(Result):
    """``sweep``: ``to_frame()`` is the CSV table (one row per point, the columns the spec's
    command reports), ``to_dict()`` the JSON Lines written beside it (one dict per point)."""

    @classmethod
    def read(cls, spec, csv_path, notes):
        root, ext = os.path.splitext(csv_path)
        jsonl = root + ".jsonl" if ext == ".csv" else csv_path + ".jsonl"
        rows = []
        if os.path.exists(jsonl):
            with open(jsonl, encoding="utf-8") as f:
                rows = [json.loads(line) for line in f if line.strip()]
        with open(csv_path, encoding="utf-8") as f:
            text = f.read()
        result = cls("sweep", [spec], rows, notes)
        result._tables = {"rows": text}
        return result

    def to_frame(self, table=None):
        return super().to_frame(table or "rows")

    def rows(self):
        """The table as a list of dicts of strings (without pandas)."""
        return list(csv.DictReader(io.StringIO(self._tables["rows"])))
