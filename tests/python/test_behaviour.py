"""Errors as exceptions, the GIL released, Ctrl-C, progress, determinism, DataFrames, plots."""

import _thread
import glob
import os
import re
import shutil
import threading
import time

import pytest

import gpuplan
from conftest import cli_json, src

CHAT = "examples/simulate-chat.yaml"
# simulate-chat sends requests for 60 s; a long run lifts that bound (12 requests/s, so
# 200 000 requests are about 0.8 s of CPU and 5 000 000 about 20 s).
LONG = 1_000_000


def expectation(path):
    with open(path, "rb") as f:
        first = f.readline().decode("utf-8", "replace")
    assert first.startswith("# expect: "), path
    return first[len("# expect: "):].rstrip("\n")


@pytest.mark.parametrize("path", sorted(glob.glob(src("tests", "fixtures", "malformed", "*.yaml"))),
                         ids=os.path.basename)
def test_malformed_hwdb_files_raise_with_file_line_and_key(path, tmp_path):
    # Each fixture's first line says what the loader reports: "# expect: 9:13: key: text".
    # The expectations name the file case.yaml (tests/hwdb/malformed_input_test.cpp).
    shutil.copy(path, tmp_path / "case.yaml")
    expected = expectation(path)
    with pytest.raises(gpuplan.InputError) as info:
        gpuplan.gpus(hwdb=[tmp_path])
    message = str(info.value).replace(str(tmp_path) + os.sep, "")
    assert expected in message
    assert message.startswith("case.yaml")
    where = re.match(r"(\d+):(\d+): ([^:]+): ", expected)
    if where:
        e = info.value
        assert isinstance(e, gpuplan.ScenarioError)
        assert e.file == str(tmp_path / "case.yaml")
        assert (e.line, e.column, e.key) == (int(where[1]), int(where[2]), where[3])


def test_a_scenario_typo_names_the_file_line_and_key(tmp_path):
    path = tmp_path / "typo.yaml"
    text = open(src("examples", "quickstart.yaml"), encoding="utf-8").read()
    text = text.replace("workload:", "workload:\n  concurency: 4", 1)
    path.write_text(text, encoding="utf-8")
    line = text.splitlines().index("  concurency: 4") + 1
    with pytest.raises(gpuplan.ScenarioError) as info:
        gpuplan.Scenario.load(path).estimate()
    e = info.value
    assert (e.file, e.line, e.key) == (str(path), line, "workload.concurency")
    assert str(e).startswith(f"{path}:{line}:")


def test_an_unknown_keyword_is_the_commands_usage_error():
    with pytest.raises(gpuplan.UsageError, match="bogus"):
        gpuplan.Scenario.load("examples/quickstart.yaml").estimate(bogus=1)


def test_a_missing_file_is_an_input_error():
    with pytest.raises(gpuplan.InputError):
        gpuplan.Scenario.load("examples/no-such-file.yaml").estimate()


def test_same_seed_same_bits_other_seed_other_answer():
    s = gpuplan.Scenario.load(CHAT)
    a = s.simulate(seed=7, requests=400, records=False).to_dict()
    b = s.simulate(seed=7, requests=400, records=False).to_dict()
    c = s.simulate(seed=8, requests=400, records=False).to_dict()
    assert a == b
    assert a != c
    assert a == cli_json("simulate", CHAT, "--seed", "7", "--requests", "400")


def test_the_gil_is_released_while_a_simulation_runs():
    s = gpuplan.Scenario.load(CHAT)
    done = threading.Event()
    outcome = {}

    def work():
        t0 = time.perf_counter()
        outcome["result"] = s.simulate(requests=200_000, duration=LONG, records=False)
        outcome["seconds"] = time.perf_counter() - t0
        done.set()

    worker = threading.Thread(target=work)
    worker.start()
    ticks = 0
    while not done.is_set():
        ticks += 1  # pure Python: runs only while the simulating thread does not hold the GIL
    worker.join()
    assert outcome["result"].completed > 0
    # A Python loop turns hundreds of thousands of times a second; with the GIL held by the
    # simulation it would have turned only between switch intervals.
    assert outcome["seconds"] > 0.2
    assert ticks > 10_000 * outcome["seconds"]


def test_ctrl_c_stops_a_long_simulation_and_the_next_call_runs():
    s = gpuplan.Scenario.load(CHAT)
    timer = threading.Timer(0.3, _thread.interrupt_main)
    t0 = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            s.simulate(requests=5_000_000, duration=LONG, records=False)  # ~20 s unless stopped
    finally:
        timer.cancel()  # a run that ended first must not leave an interrupt for the next test
    elapsed = time.perf_counter() - t0
    assert elapsed < 5
    # The interrupt is forgotten once no call is running: the next call runs to its end.
    assert s.simulate(seed=7, requests=400, records=False).completed > 0


def test_an_exception_in_the_progress_callback_stops_the_run():
    class Stop(Exception):
        pass

    def stop(fraction, detail):
        raise Stop

    with pytest.raises(Stop):
        gpuplan.Scenario.load(CHAT).simulate(requests=5_000_000, duration=LONG, records=False,
                                                 progress=stop)


def test_progress_reaches_the_callback_and_a_tqdm_like_bar():
    seen = []
    gpuplan.Scenario.load(CHAT).simulate(requests=200_000, duration=LONG, records=False,
                                         progress=lambda f, d: seen.append(f))
    assert seen and all(0 <= f <= 1 for f in seen)
    assert seen == sorted(seen)

    class Bar:  # what gpuplan uses of tqdm: n, total, update()
        def __init__(self):
            self.n, self.total = 0, None

        def update(self, k):
            self.n += k

    bar = Bar()
    gpuplan.Scenario.load(CHAT).simulate(requests=200_000, duration=LONG, records=False,
                                         progress=bar)
    assert bar.total == 100 and 0 < bar.n <= 100


def test_frames_of_a_simulation_hold_every_request_and_the_series():
    r = gpuplan.Scenario.load(CHAT).simulate(seed=7, requests=400)
    requests = r.to_frame("requests")
    assert len(requests) == r.arrived
    done = requests[requests["outcome"] == "completed"]
    assert len(done) == r.completed
    # The summary's mean TTFT is the mean of the per-request TTFTs (the same run).
    assert done["ttft_s"].mean() == pytest.approx(r.ttft_s["mean"], rel=1e-6)
    series = r.to_frame("timeseries")
    assert series["arrivals"].sum() == r.arrived
    # records=True changes nothing in the summary.
    assert r.to_dict() == cli_json("simulate", CHAT, "--seed", "7", "--requests", "400")


def test_plan_and_curve_frames():
    p = gpuplan.Scenario.load("examples/plan-search.yaml").plan()
    frame = p.to_frame()
    assert len(frame) == len(p.ranked)
    assert list(frame["monthly"]) == [r["monthly"] for r in p.ranked]
    c = gpuplan.Scenario.load("examples/quickstart.yaml").curve(loads="1,8,32")
    cf = c.to_frame()
    assert len(cf) == 3 * len(c.candidates)
    assert list(cf["load"][:3]) == [1, 8, 32]


def test_plots_draw(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    quick = gpuplan.Scenario.load("examples/quickstart.yaml")
    charts = [
        gpuplan.Scenario.load(CHAT).simulate(requests=300).plot(),
        quick.curve(loads="1,8,32").plot(),
        quick.estimate().plot(),
        gpuplan.Scenario.load("examples/plan-search.yaml").plan().plot(),
    ]
    assert all(c is not None for c in charts)
    plt.savefig(tmp_path / "last.png")
    plt.close("all")
    assert (tmp_path / "last.png").stat().st_size > 0
