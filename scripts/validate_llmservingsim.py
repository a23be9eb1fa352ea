#!/usr/bin/env python3
"""Replays the measured vLLM runs of LLMServingSim's bench/examples
(casys-kaist/LLMServingSim@5daddb21a545658d5150b535712d0494584b5278, folder `llmservingsim` of the
data sets in docs/calibration.md, "Measurement data") through `gpuplan simulate` and
prints the error of mean, P50 and P99 TTFT, TPOT and E2E (issue 4, item 8).

Only the runs whose GPU and model are in the hwdb are replayed (Llama-3.1-8B on an RTX 4090).
Per the data set's documentation: arrival = queued_ts (vLLM's engine clock), TTFT = first_token_ts -
queued_ts, TPOT = (last_token_ts - first_token_ts) / (output_toks - 1), E2E = last_token_ts -
queued_ts; percentiles interpolate linearly (numpy's default). The engine settings are the run's
(meta.json): max_num_seqs, max_num_batched_tokens, block_size 16, max_model_len, and its KV pool
of num_gpu_blocks × 16 tokens.

`gpuplan calib validate $DATA` now does the same replay in C++ (calib/serving_runs.*,
docs/calibration.md §5b, "Serving runs"); this script remains as an independent cross-check
through `gpuplan simulate`.

usage: scripts/validate_llmservingsim.py [--gpuplan build/cli/gpuplan] [--data DATA]
(DATA defaults to shared/data beside the checkout)
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

RUNS = [
    # (example folder, hwdb accelerator, catalog model, KV bytes per token at bf16)
    ("RTX4090/Llama-3.1-8B", "rtx-4090", "llama-3.1-8b", 131072),
]


def percentile(values, p):
    v = sorted(values)
    pos = (len(v) - 1) * p
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (pos - lo) * (v[hi] - v[lo])


def stats(values):
    return {"mean": sum(values) / len(values), "p50": percentile(values, 0.5), "p99": percentile(values, 0.99)}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuplan", default=os.path.join(here, "..", "build", "cli", "gpuplan"))
    ap.add_argument("--data", default=os.path.join(here, "..", "..", "shared", "data"))
    args = ap.parse_args()
    base = os.path.join(args.data, "llmservingsim", "bench", "examples")
    if not os.path.isdir(base):
        print(f"{base} is absent; nothing to validate")
        return 0
    for folder, gpu, model, kv_per_token in RUNS:
        run_dir = os.path.join(base, folder, "vllm")
        meta = json.load(open(os.path.join(run_dir, "meta.json")))
        reqs = [json.loads(line) for line in open(os.path.join(run_dir, "requests.jsonl")) if line.strip()]
        t0 = min(r["queued_ts"] for r in reqs)
        measured = {"ttft": [], "tpot": [], "e2e": []}
        for r in reqs:
            measured["ttft"].append(r["first_token_ts"] - r["queued_ts"])
            measured["e2e"].append(r["last_token_ts"] - r["queued_ts"])
            if r["output_toks"] > 1:
                measured["tpot"].append((r["last_token_ts"] - r["first_token_ts"]) / (r["output_toks"] - 1))
        kw = meta["engine_kwargs"]
        kv = meta["kv_cache"]
        with tempfile.TemporaryDirectory() as tmp:
            trace = os.path.join(tmp, "trace.csv")
            with open(trace, "w") as f:
                f.write("arrival_s,input_tokens,output_tokens\n")
                for r in sorted(reqs, key=lambda r: r["queued_ts"]):
                    f.write(f"{r['queued_ts'] - t0:.6f},{r['input_toks']},{r['output_toks']}\n")
            scenario = os.path.join(tmp, "run.yaml")
            with open(scenario, "w") as f:
                f.write(f"""schema: 1
name: llmservingsim-{folder.replace('/', '-')}
model: {model}
hardware:
  accelerator: {gpu}
  count: {kw.get('tensor_parallel_size', 1)}
  tp: {kw.get('tensor_parallel_size', 1)}
engine:
  kind: vllm
  max_model_len: {kw['max_model_len']}
  max_num_seqs: {kw['max_num_seqs']}
  max_num_batched_tokens: {kw['max_num_batched_tokens']}
  block_size: {kv['block_size']}
  enable_prefix_caching: {str(kv['enable_prefix_caching']).lower()}
  kv_cache_memory: {kv['num_gpu_blocks'] * kv['block_size'] * kv_per_token} B
workload:
  trace: {{file: trace.csv, format: plain}}
""")
            out = subprocess.run([args.gpuplan, "simulate", scenario, "--json"], check=True,
                                 capture_output=True, text=True).stdout
        sim = json.loads(out)
        print(f"{folder} ({len(reqs)} requests, vLLM {meta.get('vllm_version', '?')}) vs gpuplan simulate")
        print(f"{'metric':<12}{'measured':>12}{'simulated':>12}{'error':>9}")
        for metric, key in (("TTFT", "ttft_s"), ("TPOT", "tpot_s"), ("E2E", "e2e_s")):
            m = stats(measured[metric.lower()])
            for s in ("mean", "p50", "p99"):
                got = sim[key][s]
                err = 100.0 * (got - m[s]) / m[s]
                unit = 1e3 if metric == "TPOT" else 1.0
                print(f"{metric + ' ' + s:<12}{m[s] * unit:>12.3f}{got * unit:>12.3f}{err:>8.1f}%")
        print("(TTFT and E2E in s, TPOT in ms)\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
