// Kernels of gpuplan-calib. Kept small and obviously memory-bound: what they measure is the
// memory system and the launch path, not clever code.
#include "calib/cuda/kernels.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cmath>

namespace gpuplan::calib::bench {
namespace {

constexpr int kStreamThreads = 256;
constexpr int kDecodeThreads = kDecodeWarps * 32;

// splitmix64's finaliser (Steele, Lea and Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014): a cheap, well-mixed hash of the element index.
__device__ __forceinline__ std::uint32_t mix(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return static_cast<std::uint32_t>(x ^ (x >> 31));
}

// Uniform in [-1, 1) from the top 24 bits of the hash.
__device__ __forceinline__ float uniform(std::uint64_t i, std::uint32_t seed) {
    const std::uint32_t h = mix(i ^ (static_cast<std::uint64_t>(seed) << 40));
    return static_cast<float>(h >> 8) * (2.0f / 16777216.0f) - 1.0f;
}

template <class T> struct Convert;
template <> struct Convert<__nv_bfloat16> {
    __device__ static __nv_bfloat16 from(float v) { return __float2bfloat16(v); }
};
template <> struct Convert<__half> {
    __device__ static __half from(float v) { return __float2half(v); }
};
template <> struct Convert<__nv_fp8_e4m3> {
    __device__ static __nv_fp8_e4m3 from(float v) { return __nv_fp8_e4m3(v); }
};
template <> struct Convert<std::int8_t> {
    __device__ static std::int8_t from(float v) {
        return static_cast<std::int8_t>(__float2int_rn(v * 63.0f));
    }
};

template <class T>
__global__ void fill_kernel(T* data, std::size_t count, std::uint32_t seed, float scale) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
         i += stride) {
        data[i] = Convert<T>::from(scale * uniform(i, seed));
    }
}

template <class T>
cudaError_t fill(void* data, std::size_t count, std::uint32_t seed, float scale,
                 cudaStream_t stream) {
    if (count == 0) {
        return cudaSuccess;
    }
    const std::size_t want = (count + kStreamThreads - 1) / kStreamThreads;
    const int blocks = static_cast<int>(want < 65536 ? want : 65536);
    fill_kernel<T>
        <<<blocks, kStreamThreads, 0, stream>>>(static_cast<T*>(data), count, seed, scale);
    return cudaGetLastError();
}

__device__ __forceinline__ unsigned fold(uint4 v) {
    return v.x ^ v.y ^ v.z ^ v.w;
}

// Grid-stride loops unrolled by four so that each thread has four independent 16-byte loads in
// flight; with a full grid that is enough bytes in flight to cover HBM latency.
__global__ void __launch_bounds__(kStreamThreads)
    read_kernel(const uint4* __restrict__ src, std::size_t n, unsigned* sink) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    unsigned acc = 0;
    for (; i + 3 * stride < n; i += 4 * stride) {
        const uint4 a = src[i];
        const uint4 b = src[i + stride];
        const uint4 c = src[i + 2 * stride];
        const uint4 d = src[i + 3 * stride];
        acc ^= fold(a) ^ fold(b) ^ fold(c) ^ fold(d);
    }
    for (; i < n; i += stride) {
        acc ^= fold(src[i]);
    }
    // Rarely true, but the compiler cannot prove it false, so every load must happen.
    if (acc == 0x9E3779B9u) {
        *sink = acc;
    }
}

__global__ void __launch_bounds__(kStreamThreads)
    write_kernel(uint4* __restrict__ dst, std::size_t n, unsigned value) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const uint4 v = make_uint4(value, value + 1u, value + 2u, value + 3u);
    for (; i + 3 * stride < n; i += 4 * stride) {
        dst[i] = v;
        dst[i + stride] = v;
        dst[i + 2 * stride] = v;
        dst[i + 3 * stride] = v;
    }
    for (; i < n; i += stride) {
        dst[i] = v;
    }
}

__global__ void __launch_bounds__(kStreamThreads)
    copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, std::size_t n) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {
        const uint4 a = src[i];
        const uint4 b = src[i + stride];
        const uint4 c = src[i + 2 * stride];
        const uint4 d = src[i + 3 * stride];
        dst[i] = a;
        dst[i + stride] = b;
        dst[i + 2 * stride] = c;
        dst[i + 3 * stride] = d;
    }
    for (; i < n; i += stride) {
        dst[i] = src[i];
    }
}

__global__ void empty_kernel() {}

__device__ __forceinline__ unsigned long long global_time_ns() {
    unsigned long long t = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void wait_for_flag_kernel(const volatile int* flag, unsigned long long timeout_ns) {
    const unsigned long long start = global_time_ns();
    while (*flag == 0 && global_time_ns() - start < timeout_ns) {
        __nanosleep(1000);
    }
}

int grid_for(std::size_t n16, int blocks) {
    const std::size_t need = (n16 + kStreamThreads - 1) / kStreamThreads;
    const std::size_t b =
        need < static_cast<std::size_t>(blocks) ? need : static_cast<std::size_t>(blocks);
    return b > 0 ? static_cast<int>(b) : 1;
}

// Four bf16 (one 8-byte load) to floats: a bf16 is the top half of a float.
__device__ __forceinline__ float4 bf16x4(uint2 raw) {
    return make_float4(__uint_as_float(raw.x << 16), __uint_as_float(raw.x & 0xFFFF0000u),
                       __uint_as_float(raw.y << 16), __uint_as_float(raw.y & 0xFFFF0000u));
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        v += __shfl_xor_sync(0xFFFFFFFFu, v, offset);
    }
    return v;
}

// Partial decode attention over one split of the context of one (sequence, KV head). Lane l
// owns dimensions 4l..4l+3 of a 128-wide row, so a row is one coalesced 256-byte access. A warp
// loads a whole page (16 rows of K and of V) before using it, keeping 8 KiB in flight per warp.
// Online softmax (Milakov and Gimelshein 2018; FlashAttention, Dao et al. 2022) keeps the
// running max m, sum l and weighted V sum per warp.
__global__ void __launch_bounds__(kDecodeThreads) decode_partial_kernel(DecodeProblem pr) {
    const int split = static_cast<int>(blockIdx.x);
    const int h = static_cast<int>(blockIdx.y);
    const int b = static_cast<int>(blockIdx.z);
    const int warp = static_cast<int>(threadIdx.x) / 32;
    const int lane = static_cast<int>(threadIdx.x) % 32;
    const int group = pr.heads / pr.kv_heads;
    const int qh = h * group;                      // the first query head of this KV head's group
    constexpr int kRowWords = kDecodeHeadDim / 4;  // uint2 words per 128-element row
    constexpr float kScale = 0.08838834764831845f; // 1 / sqrt(128), the softmax scale

    const uint2* q =
        static_cast<const uint2*>(pr.q) + (static_cast<std::size_t>(b) * pr.heads + qh) * kRowWords;
    const float4 qv = bf16x4(q[lane]);
    const float q0 = qv.x * kScale, q1 = qv.y * kScale, q2 = qv.z * kScale, q3 = qv.w * kScale;

    const int per_split = (pr.pages_per_seq + pr.splits - 1) / pr.splits;
    const int begin = split * per_split;
    const int end = min(begin + per_split, pr.pages_per_seq);
    const int* table = pr.block_table + static_cast<std::size_t>(b) * pr.pages_per_seq;

    float m = -INFINITY;
    float l = 0.0f;
    float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
    for (int p = begin + warp; p < end; p += kDecodeWarps) {
        const int page = __ldg(table + p);
        const std::size_t row0 =
            (static_cast<std::size_t>(page) * pr.kv_heads + h) * kDecodePageTokens;
        const uint2* kp = static_cast<const uint2*>(pr.k_cache) + row0 * kRowWords + lane;
        const uint2* vp = static_cast<const uint2*>(pr.v_cache) + row0 * kRowWords + lane;
        uint2 kr[kDecodePageTokens];
        uint2 vr[kDecodePageTokens];
#pragma unroll
        for (int t = 0; t < kDecodePageTokens; ++t) {
            kr[t] = kp[t * kRowWords];
            vr[t] = vp[t * kRowWords];
        }
        // p < pages_per_seq = ceil(context / 16), so at least one token of the page is valid.
        const int valid = min(kDecodePageTokens, pr.context - p * kDecodePageTokens);
        float s[kDecodePageTokens];
        float page_max = -INFINITY;
#pragma unroll
        for (int t = 0; t < kDecodePageTokens; ++t) {
            const float4 kf = bf16x4(kr[t]);
            const float d = warp_sum(q0 * kf.x + q1 * kf.y + q2 * kf.z + q3 * kf.w);
            s[t] = t < valid ? d : -INFINITY;
            page_max = fmaxf(page_max, s[t]);
        }
        const float m_new = fmaxf(m, page_max);
        const float correction = __expf(m - m_new); // exp(-inf) = 0 on the first page
        l *= correction;
        a0 *= correction;
        a1 *= correction;
        a2 *= correction;
        a3 *= correction;
#pragma unroll
        for (int t = 0; t < kDecodePageTokens; ++t) {
            const float w = __expf(s[t] - m_new); // 0 for tokens past the context
            const float4 vf = bf16x4(vr[t]);
            l += w;
            a0 += w * vf.x;
            a1 += w * vf.y;
            a2 += w * vf.z;
            a3 += w * vf.w;
        }
        m = m_new;
    }
    // A warp without pages writes m = -inf, l = 0; the combine step skips it.
    float* out = pr.partial + ((static_cast<std::size_t>(b) * pr.kv_heads + h) *
                                   (static_cast<std::size_t>(pr.splits) * kDecodeWarps) +
                               static_cast<std::size_t>(split) * kDecodeWarps + warp) *
                                  kDecodePartialStride;
    reinterpret_cast<float4*>(out)[lane] = make_float4(a0, a1, a2, a3);
    if (lane == 0) {
        out[kDecodeHeadDim] = m;
        out[kDecodeHeadDim + 1] = l;
    }
}

// Merges the partial results of one (sequence, KV head): each warp folds a quarter of them,
// then warp 0 folds the four and writes the normalised row.
__global__ void __launch_bounds__(kDecodeThreads) decode_combine_kernel(DecodeProblem pr) {
    const int h = static_cast<int>(blockIdx.x);
    const int b = static_cast<int>(blockIdx.y);
    const int warp = static_cast<int>(threadIdx.x) / 32;
    const int lane = static_cast<int>(threadIdx.x) % 32;
    const int n = pr.splits * kDecodeWarps;
    const float* base = pr.partial + (static_cast<std::size_t>(b) * pr.kv_heads + h) *
                                         static_cast<std::size_t>(n) * kDecodePartialStride;
    float m = -INFINITY;
    float l = 0.0f;
    float4 o = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int i = warp; i < n; i += kDecodeWarps) {
        const float* part = base + static_cast<std::size_t>(i) * kDecodePartialStride;
        const float mi = part[kDecodeHeadDim];
        if (mi == -INFINITY) {
            continue;
        }
        const float li = part[kDecodeHeadDim + 1];
        const float4 ai = reinterpret_cast<const float4*>(part)[lane];
        const float mn = fmaxf(m, mi);
        const float c_old = __expf(m - mn);
        const float c_new = __expf(mi - mn);
        l = l * c_old + li * c_new;
        o.x = o.x * c_old + ai.x * c_new;
        o.y = o.y * c_old + ai.y * c_new;
        o.z = o.z * c_old + ai.z * c_new;
        o.w = o.w * c_old + ai.w * c_new;
        m = mn;
    }
    __shared__ float warp_m[kDecodeWarps];
    __shared__ float warp_l[kDecodeWarps];
    __shared__ float4 warp_o[kDecodeWarps][32];
    if (lane == 0) {
        warp_m[warp] = m;
        warp_l[warp] = l;
    }
    warp_o[warp][lane] = o;
    __syncthreads();
    if (warp != 0) {
        return;
    }
    float mt = -INFINITY;
    for (int w = 0; w < kDecodeWarps; ++w) {
        mt = fmaxf(mt, warp_m[w]);
    }
    float lt = 0.0f;
    float4 ot = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int w = 0; w < kDecodeWarps; ++w) {
        if (warp_m[w] == -INFINITY) {
            continue;
        }
        const float c = __expf(warp_m[w] - mt);
        lt += warp_l[w] * c;
        ot.x += warp_o[w][lane].x * c;
        ot.y += warp_o[w][lane].y * c;
        ot.z += warp_o[w][lane].z * c;
        ot.w += warp_o[w][lane].w * c;
    }
    const float inv = lt > 0.0f ? 1.0f / lt : 0.0f;
    __nv_bfloat16* dst = static_cast<__nv_bfloat16*>(pr.out) +
                         (static_cast<std::size_t>(b) * pr.kv_heads + h) * kDecodeHeadDim +
                         4 * lane;
    dst[0] = __float2bfloat16(ot.x * inv);
    dst[1] = __float2bfloat16(ot.y * inv);
    dst[2] = __float2bfloat16(ot.z * inv);
    dst[3] = __float2bfloat16(ot.w * inv);
}

} // namespace

cudaError_t launch_fill(void* data, std::size_t count, FillType type, std::uint32_t seed,
                        float scale, cudaStream_t stream) {
    switch (type) {
    case FillType::Bf16: return fill<__nv_bfloat16>(data, count, seed, scale, stream);
    case FillType::Fp16: return fill<__half>(data, count, seed, scale, stream);
    case FillType::Fp8E4m3: return fill<__nv_fp8_e4m3>(data, count, seed, scale, stream);
    case FillType::Int8: return fill<std::int8_t>(data, count, seed, scale, stream);
    }
    return cudaErrorInvalidValue;
}

int streaming_blocks(int sm_count) {
    int per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, read_kernel, kStreamThreads, 0) !=
            cudaSuccess ||
        per_sm <= 0) {
        per_sm = 8; // 2048 resident threads per SM on sm_80/sm_90 at 256 threads per block
    }
    return per_sm * (sm_count > 0 ? sm_count : 1);
}

cudaError_t launch_read(const void* src, std::size_t bytes, unsigned* sink, int blocks,
                        cudaStream_t stream) {
    const std::size_t n = bytes / sizeof(uint4);
    read_kernel<<<grid_for(n, blocks), kStreamThreads, 0, stream>>>(static_cast<const uint4*>(src),
                                                                    n, sink);
    return cudaGetLastError();
}

cudaError_t launch_write(void* dst, std::size_t bytes, unsigned value, int blocks,
                         cudaStream_t stream) {
    const std::size_t n = bytes / sizeof(uint4);
    write_kernel<<<grid_for(n, blocks), kStreamThreads, 0, stream>>>(static_cast<uint4*>(dst), n,
                                                                     value);
    return cudaGetLastError();
}

cudaError_t launch_copy(const void* src, void* dst, std::size_t bytes, int blocks,
                        cudaStream_t stream) {
    const std::size_t n = bytes / sizeof(uint4);
    copy_kernel<<<grid_for(n, blocks), kStreamThreads, 0, stream>>>(static_cast<const uint4*>(src),
                                                                    static_cast<uint4*>(dst), n);
    return cudaGetLastError();
}

cudaError_t launch_empty(cudaStream_t stream) {
    empty_kernel<<<1, 1, 0, stream>>>();
    return cudaGetLastError();
}

cudaError_t launch_wait_for_flag(const volatile int* flag, unsigned long long timeout_ns,
                                 cudaStream_t stream) {
    wait_for_flag_kernel<<<1, 1, 0, stream>>>(flag, timeout_ns);
    return cudaGetLastError();
}

int decode_splits(int batch, int kv_heads, int pages_per_seq, int sm_count) {
    const long long base =
        static_cast<long long>(batch > 0 ? batch : 1) * (kv_heads > 0 ? kv_heads : 1);
    const long long want = (2LL * (sm_count > 0 ? sm_count : 1) + base - 1) / base;
    constexpr int kMinPagesPerWarp = 4;
    const long long most = pages_per_seq / (kDecodeWarps * kMinPagesPerWarp) > 1
                               ? pages_per_seq / (kDecodeWarps * kMinPagesPerWarp)
                               : 1;
    const long long s = want < most ? want : most;
    return static_cast<int>(s > 1 ? s : 1);
}

cudaError_t launch_paged_decode(const DecodeProblem& pr, cudaStream_t stream) {
    if (pr.batch <= 0 || pr.kv_heads <= 0 || pr.heads <= 0 || pr.heads % pr.kv_heads != 0 ||
        pr.splits <= 0 || pr.context <= 0 ||
        pr.pages_per_seq != (pr.context + kDecodePageTokens - 1) / kDecodePageTokens ||
        pr.batch > 65535 || pr.kv_heads > 65535) {
        return cudaErrorInvalidValue;
    }
    const dim3 partial_grid(static_cast<unsigned>(pr.splits), static_cast<unsigned>(pr.kv_heads),
                            static_cast<unsigned>(pr.batch));
    decode_partial_kernel<<<partial_grid, kDecodeThreads, 0, stream>>>(pr);
    if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) {
        return e;
    }
    const dim3 combine_grid(static_cast<unsigned>(pr.kv_heads), static_cast<unsigned>(pr.batch));
    decode_combine_kernel<<<combine_grid, kDecodeThreads, 0, stream>>>(pr);
    return cudaGetLastError();
}

} // namespace gpuplan::calib::bench
