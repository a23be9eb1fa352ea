"""One answer: every call's to_dict() equals what the executable prints with --json, for every
example (tests/golden holds the executable's --json, checked by ctest's golden_outputs) and,
run side by side, for the calls that have no golden file."""

import glob
import json
import os

import pytest

import gpuplan
from conftest import ROOT, cli_json, src


def commands_for(name):
    """The commands scripts/golden.sh runs for an example (its commands_for, kept in step)."""
    if name.startswith(("train-", "failures-training-")):
        return ["train"]
    if name.startswith(("simulate-", "prefix-routing-", "heterogeneous-", "autoscaling-",
                        "failures-serving-sim-", "disaggregated-", "kv-offload-", "lora-")):
        return ["simulate", "estimate"]
    if name == "plan-search":
        return ["plan", "estimate", "fit", "cost"]
    if name.startswith("fleet-"):
        return ["fleet", "estimate", "cost"]
    return ["estimate", "fit", "cost", "rack"]


CASES = [
    (os.path.basename(f)[:-5], cmd)
    for f in sorted(glob.glob(src("examples", "*.yaml")))
    if not os.path.basename(f).startswith("sweep-")
    for cmd in commands_for(os.path.basename(f)[:-5])
]


def call(name, cmd):
    s = gpuplan.Scenario.load(f"examples/{name}.yaml")
    if cmd == "simulate":
        return s.simulate(requests=300, records=False)
    if cmd == "fleet":
        return s.plan(fleet=True)
    return getattr(s, cmd)()


def as_golden(data):
    # scripts/golden.sh writes the repository's path as <root>.
    return json.loads(json.dumps(data).replace(ROOT + "/", "<root>/"))


def test_every_example_is_covered():
    assert len(CASES) == len(glob.glob(src("tests", "golden", "*.json")))


@pytest.mark.parametrize("name,cmd", CASES, ids=[f"{n}.{c}" for n, c in CASES])
def test_to_dict_equals_the_cli_json(name, cmd):
    with open(src("tests", "golden", f"{name}.{cmd}.json"), encoding="utf-8") as f:
        golden = json.load(f)
    assert as_golden(call(name, cmd).to_dict()) == golden


def test_quickstart_throughput_is_the_clis():
    # The check: the attribute is the number `gpuplan estimate --json` prints.
    expected = cli_json("estimate", "examples/quickstart.yaml")["throughput_tok_s"]
    assert gpuplan.Scenario.load("examples/quickstart.yaml").estimate().throughput_tok_s == expected


def test_flags_and_set_paths_are_the_clis():
    s = gpuplan.Scenario.load("examples/quickstart.yaml")
    assert s.with_(tp=2).estimate().to_dict() == cli_json("estimate", "examples/quickstart.yaml",
                                                          "--tp", "2")
    changed = s.with_({"engine.max_num_seqs": 8})
    assert changed.estimate().to_dict() == cli_json("estimate", "examples/quickstart.yaml",
                                                    "--set", "engine.max_num_seqs=8")
    # with_ leaves the original alone.
    assert s.estimate().to_dict() == cli_json("estimate", "examples/quickstart.yaml")


def test_a_scenario_from_flags_alone():
    s = gpuplan.Scenario(model="llama-3.1-8b", gpu="h100-sxm", concurrency=16)
    assert s.estimate().to_dict() == cli_json("estimate", "--model", "llama-3.1-8b", "--gpu",
                                              "h100-sxm", "--concurrency", "16")


def test_compare_curve_train_diagnose_are_the_clis():
    s = gpuplan.Scenario.load("examples/quickstart.yaml")
    assert s.compare(with_=["h200-sxm"]).to_dict() == cli_json(
        "compare", "examples/quickstart.yaml", "--with", "h200-sxm")
    h100 = gpuplan.Scenario.load("examples/llama70b-4xh100.yaml")
    assert h100.compare("examples/llama70b-2xh200.yaml").to_dict() == cli_json(
        "compare", "examples/llama70b-4xh100.yaml", "examples/llama70b-2xh200.yaml")
    assert s.curve(loads="1,8,32").to_dict() == cli_json("curve", "examples/quickstart.yaml",
                                                          "--loads", "1,8,32")
    t = gpuplan.Scenario.load("examples/train-llama70b-2x8xh100.yaml")
    assert t.train().to_dict() == cli_json("train", "examples/train-llama70b-2x8xh100.yaml")
    fx = "tests/fixtures/diagnose/"
    d = gpuplan.Scenario.load(fx + "kv-full-8b-h100.yaml").diagnose(
        metrics=[fx + "kv-full-scrape-1.prom", fx + "kv-full-scrape-2.prom"], interval=60)
    assert d.to_dict() == cli_json("diagnose", fx + "kv-full-8b-h100.yaml", "--metrics",
                                   fx + "kv-full-scrape-1.prom", "--metrics",
                                   fx + "kv-full-scrape-2.prom", "--interval", "60")


def test_catalogs_are_the_clis():
    models = gpuplan.models()
    listed = cli_json("model", "list")
    assert list(models["name"]) == [m["name"] for m in listed]
    gpus = gpuplan.gpus()
    hw = cli_json("hw", "list")
    assert list(gpus["name"]) == [g["name"] for g in hw]
    assert list(gpus["memory_bytes"]) == [g["memory_bytes"] for g in hw]


def test_sweep_rows_are_the_clis(tmp_path):
    import subprocess

    from conftest import CLI

    spec = "examples/sweep-llama70b-gpus.yaml"
    out = tmp_path / "cli.csv"
    subprocess.run([CLI, "sweep", spec, "-o", str(out)], cwd=ROOT, check=True,
                   capture_output=True)
    result = gpuplan.sweep(spec)
    with open(out, encoding="utf-8") as f:
        assert result._tables["rows"] == f.read()
    with open(tmp_path / "cli.jsonl", encoding="utf-8") as f:
        assert result.to_dict() == [json.loads(line) for line in f if line.strip()]
    frame = result.to_frame()
    assert len(frame) == 2 * 3 * 4  # the spec's 2 GPUs x 3 tp x 4 concurrencies
