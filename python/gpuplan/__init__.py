"""gpuplan from Python: the commands of the ``gpuplan`` executable, in-process.

Every call runs the same C++ command as the executable (gpuplan._core over the command
library), so ``Scenario.load(f).estimate().to_dict()`` is what ``gpuplan estimate f --json``
prints, number for number. Keyword arguments are the commands' flags with ``_`` for ``-``
(``max_num_seqs=64`` is ``--max-num-seqs 64``); ``Scenario.with_`` takes the scenario's own
keys, the ``--set`` paths. See docs/python.md.
"""

import os
import tempfile

from . import _core
from ._args import flags as _flags
from ._args import set_flags as _set_flags
from ._errors import GpuplanError, InputError, InternalError, ScenarioError, UsageError
from ._errors import raise_for as _raise_for
from .results import CatalogResult, CurveResult, PlanResult, Result, SimulateResult, SweepResult

__all__ = [
    "Scenario", "sweep", "models", "gpus", "hw_list", "run", "commands",
    "Result", "SimulateResult", "PlanResult", "CurveResult", "SweepResult",
    "GpuplanError", "InputError", "ScenarioError", "UsageError", "InternalError",
]
__version__ = _core.version


def _progress_callback(progress):
    """A callable(label, fraction, detail) for _core.run from what the user gave: None, a
    callable(fraction, detail) or a tqdm-like object (update() and n; its total is set to 100)."""
    if progress is None:
        return None
    if hasattr(progress, "update") and hasattr(progress, "n"):
        bar = progress
        if getattr(bar, "total", None) != 100:
            bar.total = 100
        def tqdm_hook(label, fraction, detail):
            step = int(round(fraction * 100)) - bar.n
            if step > 0:
                bar.update(step)
        return tqdm_hook
    if callable(progress):
        return lambda label, fraction, detail: progress(fraction, detail)
    raise TypeError("progress: give a callable(fraction, detail) or a tqdm bar")


def run(words, args=(), hwdb=(), progress=None):
    """Runs ``gpuplan WORDS ARGS...`` in-process; returns (stdout text, stderr text). Raises the
    command's error as ScenarioError, UsageError, InputError or InternalError, and
    KeyboardInterrupt when Ctrl-C (or an exception from ``progress``) stopped it."""
    outcome = _core.run(words, [os.fspath(a) for a in args], [os.fspath(h) for h in hwdb],
                        _progress_callback(progress))
    _raise_for(outcome["error"])
    if outcome["code"] != 0:
        raise GpuplanError(f"gpuplan {words} exited {outcome['code']}: {outcome['err'].strip()}")
    return outcome["out"], outcome["err"]


def commands():
    """The gpuplan commands as (words, summary) pairs."""
    return _core.commands()


def _json_call(cls, command, args, hwdb=(), progress=None, **extra):
    import json

    args = list(args) + ["--json"]
    out, err = run(command, args, hwdb, progress)
    return cls(command, args, json.loads(out), err, **extra)


class Scenario:
    """A scenario: a YAML file and/or the scenario flags of the commands (``model``, ``gpu``,
    ``tp``, ``pp``, ``ep``, ``gpus``, ``node``, ``weights``, ``kv``, ``concurrency``, ``rate``,
    ``input_len``, ``output_len``, ``max_model_len``, the engine knobs, ...), plus ``--set``
    changes of the file's keys. Immutable: ``with_`` returns a new one. Nothing is read until a
    command runs, and each command reads the file again, as the executable does."""

    def __init__(self, file=None, *, hwdb=(), sets=None, **flags):
        self.file = None if file is None else os.fspath(file)
        self.hwdb = tuple(os.fspath(h) for h in hwdb)
        self.sets = dict(sets or {})
        self.flags = dict(flags)

    @classmethod
    def load(cls, path, **flags):
        """The scenario in the YAML file ``path`` (checked by ``check()`` or the first command)."""
        return cls(path, **flags)

    def with_(self, changes=None, /, **flags):
        """A copy with scenario keys changed (``{"engine.max_num_seqs": 64}``, the ``--set``
        paths of the file; needs a file) and/or flags changed (``tp=8``; None removes one)."""
        sets = dict(self.sets)
        sets.update(changes or {})
        merged = dict(self.flags)
        merged.update(flags)
        merged = {k: v for k, v in merged.items() if v is not None}
        return Scenario(self.file, hwdb=self.hwdb, sets=sets, **merged)

    def __repr__(self):
        parts = [repr(self.file)] if self.file else []
        parts += [f"{k}={v!r}" for k, v in self.flags.items()]
        if self.sets:
            parts.append(f"sets={self.sets!r}")
        return f"gpuplan.Scenario({', '.join(parts)})"

    def args(self, **options):
        """The command-line words for this scenario and ``options`` (a command's own flags)."""
        words = [self.file] if self.file else []
        return words + _flags(self.flags) + _set_flags(self.sets) + _flags(options)

    def _call(self, command, cls=Result, progress=None, **options):
        return _json_call(cls, command, self.args(**options), self.hwdb, progress)

    def check(self):
        """Loads the scenario as every command does; raises ScenarioError when it is wrong."""
        self.fit()
        return self

    def fit(self, **options):
        """``gpuplan fit``: memory per GPU, whether it fits, KV blocks, fewest GPUs."""
        return self._call("fit", **options)

    def estimate(self, **options):
        """``gpuplan estimate``: TTFT, TPOT, throughput, MFU/MBU, the binding resource,
        what-ifs, capacity at the SLO (keys: docs/cli-json.md)."""
        return self._call("estimate", **options)

    def simulate(self, seed=None, requests=None, *, progress=None, records=True, **options):
        """``gpuplan simulate``: the discrete-event simulation. ``records`` also keeps the
        per-request rows and the time series (``--out``'s requests.csv and timeseries.csv) for
        ``to_frame("requests")`` / ``to_frame("timeseries")``. ``progress``: a callable(fraction,
        detail) or a tqdm bar. Same scenario and seed give the same numbers."""
        if not records or options.get("sweep"):
            return self._call("simulate", SimulateResult, progress, seed=seed, requests=requests,
                              **options)
        with tempfile.TemporaryDirectory(prefix="gpuplan-") as tmp:
            out = os.path.join(tmp, "run")
            result = self._call("simulate", SimulateResult, progress, seed=seed,
                                requests=requests, out=out, trace_limit=1, **options)
            result._tables = SimulateResult.read_tables(out)
        # The trace.json that --out also writes is not kept, so its --trace-limit note is noise.
        result.notes = "".join(line for line in result.notes.splitlines(True)
                               if "(--trace-limit)" not in line)
        return result

    def plan(self, *, progress=None, **options):
        """``gpuplan plan``: the sizing search; ``to_frame()`` is the ranking."""
        return self._call("plan", PlanResult, progress, **options)

    def compare(self, *others, with_=None, **options):
        """``gpuplan compare``: this scenario beside other scenario files (``others``) or
        configurations ``with_=["h200-sxm:2", ...]`` (GPU[:COUNT[:TP]]) on its workload."""
        extra = [os.fspath(o.file if isinstance(o, Scenario) else o) for o in others]
        args = self.args(with_=with_, **options)
        args = [self.file] + extra + args[1:] if self.file else extra + args
        return _json_call(Result, "compare", args, self.hwdb)

    def curve(self, **options):
        """``gpuplan curve``: throughput, TTFT, TPOT against load (``axis``, ``loads``,
        ``candidate``, ``simulate``)."""
        return self._call("curve", CurveResult, **options)

    def rack(self, **options):
        """``gpuplan rack``: nodes per rack, racks, the binding limit."""
        return self._call("rack", **options)

    def cost(self, **options):
        """``gpuplan cost``: monthly cost owning against renting, cost per million tokens."""
        return self._call("cost", **options)

    def train(self, **options):
        """``gpuplan train``: training memory, step time, MFU, time and cost (``search=True``
        ranks layouts)."""
        return self._call("train", **options)

    def diagnose(self, metrics=None, bench=None, **options):
        """``gpuplan diagnose``: observed figures (``metrics``: one or two vLLM /metrics scrapes,
        ``bench``: a vllm bench serve JSON, ``guidellm``, ``aiperf``, ``smi``, ...) beside the
        model, with causes and re-estimated fixes."""
        if isinstance(metrics, (str, os.PathLike)):
            metrics = [metrics]
        return self._call("diagnose", metrics=metrics, bench=bench, **options)


def sweep(spec, *, progress=None, hwdb=()):
    """``gpuplan sweep SPEC -o FILE.csv``: the grid of a sweep spec (docs/sweep.md); the rows are
    ``to_frame()`` and ``to_dict()`` is the JSON Lines beside the table, one dict per point."""
    with tempfile.TemporaryDirectory(prefix="gpuplan-sweep-") as tmp:
        csv_path = os.path.join(tmp, "sweep.csv")
        out, err = run("sweep", [os.fspath(spec), "-o", csv_path], hwdb, progress)
        return SweepResult.read(os.fspath(spec), csv_path, err)


def _catalog(words, args=(), hwdb=()):
    return _json_call(CatalogResult, words, list(args), hwdb)


def models(hwdb=()):
    """The model catalog (``gpuplan model list --json``) as a DataFrame, one row per model."""
    return _catalog("model list", (), hwdb).to_frame()


def gpus(vendor=None, hwdb=()):
    """The accelerators of the hardware database (``gpuplan hw list --json``) as a DataFrame."""
    return _catalog("hw list", _flags({"vendor": vendor}), hwdb).to_frame()


def hw_list(kind="gpus", vendor=None, hwdb=()):
    """``gpuplan hw list``: ``kind`` gpus, links, servers or racks, as a CatalogResult."""
    options = {"vendor": vendor, "links": kind == "links", "servers": kind == "servers",
               "racks": kind == "racks"}
    return _catalog("hw list", _flags(options), hwdb)
