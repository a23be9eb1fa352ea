#pragma once
/// The hand-written kernels of gpuplan-calib (kernels.cu), behind plain launch functions so
/// that the host code is ordinary C++: buffer fills, streaming read/write/copy, an empty kernel,
/// and the paged-KV decode attention proxy. Every launcher enqueues on `stream` and returns
/// cudaGetLastError() (the launch status), never synchronising.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace gpuplan::calib::bench {

/// Element types a buffer can be filled with.
enum class FillType { Bf16, Fp16, Fp8E4m3, Int8 };

/// Fills `count` elements of `type` at `data` with pseudo-random values in [-scale, scale]
/// (int8: [-63, 63] × scale), a hash of the index and `seed`. Real-looking data keeps the tensor
/// cores' power (and thus clocks) near what real weights cause; zeros would not.
cudaError_t launch_fill(void* data, std::size_t count, FillType type, std::uint32_t seed,
                        float scale, cudaStream_t stream);

/// Blocks for the streaming kernels: enough resident blocks of 256 threads to fill every SM
/// (occupancy × SM count), so that bandwidth is not limited by parallelism.
[[nodiscard]] int streaming_blocks(int sm_count);

/// Reads `bytes` (a multiple of 16) at `src` with 16-byte loads; folds them into a value
/// written to `sink` only in an impossible case, so the loads cannot be optimised away.
cudaError_t launch_read(const void* src, std::size_t bytes, unsigned* sink, int blocks,
                        cudaStream_t stream);

/// Writes `bytes` (a multiple of 16) at `dst` with 16-byte stores.
cudaError_t launch_write(void* dst, std::size_t bytes, unsigned value, int blocks,
                         cudaStream_t stream);

/// Copies `bytes` (a multiple of 16) from `src` to `dst` with 16-byte loads and stores.
cudaError_t launch_copy(const void* src, void* dst, std::size_t bytes, int blocks,
                        cudaStream_t stream);

/// An empty kernel, one block of one thread: the unit of launch overhead.
cudaError_t launch_empty(cudaStream_t stream);

/// A one-thread kernel that holds `stream` until `*flag` (host memory mapped into the device)
/// becomes non-zero or `timeout_ns` nanoseconds of GPU global time have passed, polling about
/// every microsecond. The timeout means a host that never sets the flag cannot hang the GPU.
cudaError_t launch_wait_for_flag(const volatile int* flag, unsigned long long timeout_ns,
                                 cudaStream_t stream);

/// Head dimension and page size of the decode proxy (Llama 3: 128; vLLM's default block 16).
inline constexpr int kDecodeHeadDim = 128;
inline constexpr int kDecodePageTokens = 16;
/// Warps per block of the partial kernel; each warp walks its own pages.
inline constexpr int kDecodeWarps = 4;
/// Floats per partial result: 128 accumulators, running max, running sum, 2 pad (16-byte rows).
inline constexpr int kDecodePartialStride = kDecodeHeadDim + 4;

/// One paged decode attention problem. Layouts (bf16 unless said):
///   q            [batch][heads][128]
///   k_cache, v   [pages][kv_heads][16][128]  (one page of one KV head is 4 KiB, contiguous)
///   block_table  int32 [batch][pages_per_seq], physical page of each logical page
///   partial      float [batch][kv_heads][splits × 4][kDecodePartialStride]
///   out          [batch][kv_heads][128]
struct DecodeProblem {
    const void* q = nullptr;
    const void* k_cache = nullptr;
    const void* v_cache = nullptr;
    const int* block_table = nullptr;
    float* partial = nullptr;
    void* out = nullptr;
    int batch = 0;
    int heads = 0; ///< query heads (a multiple of kv_heads)
    int kv_heads = 0;
    int context = 0;       ///< tokens per sequence in the cache
    int pages_per_seq = 0; ///< ceil(context / 16)
    int splits = 1;        ///< blocks per (sequence, KV head) along the context
};

/// Splits along the context so that batch × kv_heads × splits blocks cover the GPU about twice,
/// with at least 4 pages per warp (so the combine step stays small next to the KV read).
[[nodiscard]] int decode_splits(int batch, int kv_heads, int pages_per_seq, int sm_count);

/// Runs the proxy: a split-context partial kernel (each warp gathers its pages of K and V
/// through the block table and keeps an online softmax for the first query head of the KV
/// head's group) and a combine kernel. It moves exactly the bytes of a decode attention step
/// (all of K and V once) but does the math of one query head per KV head, so for grouped-query
/// models it is the bandwidth side of decode attention, not its CUDA-core compute.
cudaError_t launch_paged_decode(const DecodeProblem& problem, cudaStream_t stream);

} // namespace gpuplan::calib::bench
