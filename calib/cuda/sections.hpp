#pragma once
/// The measurement sections of gpuplan-calib. Each adds its records to the session, checks the
/// deadline before every point, prints progress to stderr and throws CudaError when the GPU
/// fails (the driver catches it, notes it and goes on with the next section).

#include "calib/cuda/session.hpp"

namespace gpuplan::calib::bench {

/// Empty-kernel launch cost: eager back-to-back launches (host time per launch), one launch
/// plus stream synchronise (round trip), and CUDA-graph replay of 100 empty kernels.
void measure_launch(Session& s);

/// HBM bandwidth with read, write and copy kernels from 4 MiB up to 8 GiB (2 GiB in quick
/// mode), capped at 40 % of free memory; each call works on a fresh region (the region
/// rotates over at least 16 × L2) so small sizes measure cold HBM, not L2. Also L2-resident
/// reads (one region re-read) for sizes up to half the L2, as extras.
void measure_memory(Session& s);

/// cuBLASLt GEMM throughput for bf16, fp16, fp8 e4m3 (compute capability 8.9 and up) and
/// int8 over M = 1 … 16384 tokens and the N × K of the Llama-3.1 8B and 70B linear layers
/// (QKV, O, gate+up, down) at TP 1, 2, 4 and 8. Weights rotate over copies larger than L2.
void measure_gemm(Session& s);

/// The paged-KV decode attention proxy (kernels.hpp) over batch × context for Llama-3.1 8B
/// TP1, 70B TP4 and 70B TP8 head layouts. Prefill attention is not measured (see README).
void measure_attention(Session& s);

/// Pinned host-to-device and device-to-host cudaMemcpyAsync bandwidth from 4 KiB to 1 GiB.
void measure_host_copies(Session& s);

/// NCCL all-reduce, send/recv and all-to-all over groups of 2, 4, 8 … of the visible GPUs,
/// with libnccl loaded by dlopen; skipped with a note on one GPU or without NCCL.
void measure_collectives(Session& s);

} // namespace gpuplan::calib::bench
