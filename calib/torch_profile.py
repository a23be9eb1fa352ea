#!/usr/bin/env python3
"""Time the kernels PyTorch dispatches for LLM layers and write them for `gpuplan calib import`.

Run on a GPU machine (it needs PyTorch with CUDA):

    python3 calib/torch_profile.py -o torch_profile.csv          # about 3 minutes on an H100
    python3 calib/torch_profile.py --quick -o torch_profile.csv  # under a minute
    gpuplan calib fit torch_profile.csv --gpu h200-sxm --kind microbenchmark -o hwdb/profiles/h200-sxm.yaml

Output: CSV with the header op,m,n,k,dtype,batch,seq,time_us and '# key: value' comment lines
(gpu, torch, cuda, date, command) before it. Ops:
  matmul        torch.matmul [m,k] x [k,n] (cuBLAS); fp8 through torch._scaled_mm (sm_89+)
  sdpa_prefill  F.scaled_dot_product_attention, causal, batch sequences of seq tokens, n heads of
                dimension k (FlashAttention on sm_80+)
  sdpa_decode   the same with one query token per sequence over seq cached tokens
  copy          dst.copy_(src) of m elements (streaming bandwidth)
Times are means over back-to-back calls between CUDA events, after warm-up, so they are GPU
time per call (launch gaps matter only for the tiniest kernels).
Exit codes: 0 done, 2 bad arguments, 3 no CUDA GPU.
"""

import argparse
import datetime
import sys

# Layer shapes (hidden, q heads, kv heads, head dim, ffn) of catalog models (hwdb/models/*.yaml).
MODELS = {
    "llama-3.1-8b": (4096, 32, 8, 128, 14336),
    "llama-3.1-70b": (8192, 64, 8, 128, 28672),
    "qwen2.5-7b": (3584, 28, 4, 128, 18944),
    "mistral-7b": (4096, 32, 8, 128, 14336),
}
TOKENS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]
QUICK_TOKENS = [1, 16, 128, 1024, 4096]


def gemm_shapes(quick):
    """(k, n) weight shapes of the linear layers, whole and split for tensor parallelism."""
    shapes = set()
    for name, (h, q, kv, d, ffn) in MODELS.items():
        for tp in ([1] if quick else [1, 2, 4, 8]):
            if q % tp:
                continue
            kv_rank = max(1, kv // tp)  # KV heads are replicated to one per GPU when kv < tp
            shapes.add((h, (q // tp + 2 * kv_rank) * d))  # fused QKV
            shapes.add((q * d // tp, h))      # output projection
            shapes.add((h, 2 * ffn // tp))    # fused gate and up
            shapes.add((ffn // tp, h))        # down
        if quick:
            break
    return sorted(shapes)


def timed(fn, warmup, iters, torch):
    for _ in range(warmup):
        fn()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1000.0 / iters  # microseconds


def iterations(expected_us):
    """Enough calls for ~20 ms of work, at least 5."""
    return max(5, min(200, int(20000 / max(expected_us, 1.0))))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--output", default="torch_profile.csv", help="CSV to write ('-': stdout)")
    ap.add_argument("--quick", action="store_true", help="fewer shapes (under a minute)")
    ap.add_argument("--no-fp8", action="store_true", help="skip FP8 GEMMs")
    args = ap.parse_args()
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        print("torch_profile.py: PyTorch is not installed; install it with CUDA support", file=sys.stderr)
        return 3
    if not torch.cuda.is_available():
        print("torch_profile.py: no CUDA GPU is visible; run this on a GPU machine", file=sys.stderr)
        return 3
    dev = torch.device("cuda")
    cap = torch.cuda.get_device_capability()
    rows = []
    tokens = QUICK_TOKENS if args.quick else TOKENS

    def est_us(flops, nbytes):
        return max(flops / 500e12, nbytes / 2e12) * 1e6

    # GEMMs.
    dtypes = [("bf16", torch.bfloat16), ("fp16", torch.float16)]
    fp8 = not args.no_fp8 and cap >= (8, 9) and hasattr(torch, "_scaled_mm")
    for k, n in gemm_shapes(args.quick):
        for m in tokens:
            for name, dt in dtypes:
                a = torch.randn(m, k, device=dev, dtype=dt)
                b = torch.randn(k, n, device=dev, dtype=dt)
                us = timed(lambda: torch.matmul(a, b), 3, iterations(est_us(2 * m * n * k, 2 * k * n)), torch)
                rows.append(("matmul", m, n, k, name, 1, 0, us))
            if fp8 and m % 16 == 0 and k % 16 == 0 and n % 16 == 0:
                a = torch.randn(m, k, device=dev).to(torch.float8_e4m3fn)
                b = torch.randn(n, k, device=dev).to(torch.float8_e4m3fn).t()  # column-major B
                one = torch.ones((), device=dev)
                fn = lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
                us = timed(fn, 3, iterations(est_us(2 * m * n * k, k * n)), torch)
                rows.append(("matmul", m, n, k, "fp8", 1, 0, us))
            del a, b
    # Attention: MHA-shaped SDPA (PyTorch picks FlashAttention for bf16 on sm_80+).
    heads, d = 32, 128
    seqs = [512, 2048, 8192] if args.quick else [256, 512, 1024, 2048, 4096, 8192, 16384]
    for seq in seqs:
        for batch in ([1] if seq > 4096 else [1, 4]):
            q = torch.randn(batch, heads, seq, d, device=dev, dtype=torch.bfloat16)
            fn = lambda: F.scaled_dot_product_attention(q, q, q, is_causal=True)
            us = timed(fn, 3, iterations(est_us(2 * batch * heads * d * seq * seq, 0)), torch)
            rows.append(("sdpa_prefill", 0, heads, d, "bf16", batch, seq, us))
            del q
    for seq in ([1024, 8192, 32768] if args.quick else [256, 1024, 4096, 8192, 16384, 32768]):
        for batch in [1, 8, 32, 128]:
            if batch * seq > 1 << 21:
                continue
            q = torch.randn(batch, heads, 1, d, device=dev, dtype=torch.bfloat16)
            kv = torch.randn(batch, heads, seq, d, device=dev, dtype=torch.bfloat16)
            fn = lambda: F.scaled_dot_product_attention(q, kv, kv)
            us = timed(fn, 3, iterations(est_us(0, 4 * batch * heads * seq * d)), torch)
            rows.append(("sdpa_decode", 0, heads, d, "bf16", batch, seq, us))
            del q, kv
    # Streaming copies from L2-resident to 1 GiB.
    for e in range(14, 31, 2 if args.quick else 1):
        elems = 1 << e
        src = torch.empty(elems, device=dev, dtype=torch.bfloat16)
        dst = torch.empty_like(src)
        us = timed(lambda: dst.copy_(src), 3, iterations(est_us(0, 4 * elems)), torch)
        rows.append(("copy", elems, 0, 0, "bf16", 1, 0, us))
        del src, dst

    out = sys.stdout if args.output == "-" else open(args.output, "w")
    out.write("# gpu: %s\n" % torch.cuda.get_device_name())
    out.write("# torch: %s, cuda: %s, capability: %d.%d\n" % (torch.__version__, torch.version.cuda, cap[0], cap[1]))
    out.write("# date: %s\n" % datetime.datetime.utcnow().strftime("%Y-%m-%d"))
    out.write("# command: %s\n" % " ".join(sys.argv))
    out.write("op,m,n,k,dtype,batch,seq,time_us\n")
    for r in rows:
        out.write("%s,%d,%d,%d,%s,%d,%d,%.3f\n" % r)
    if out is not sys.stdout:
        out.close()
        print("wrote %s (%d timings)" % (args.output, len(rows)), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
