// The paged-KV decode attention proxy over batch × context.
#include "calib/cuda/kernels.hpp"
#include "calib/cuda/sections.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <random>

namespace gpuplan::calib::bench {
namespace {

// Per-GPU head layouts of catalog models at a TP degree (hwdb/models/llama-3.1-*.yaml).
struct HeadLayout {
    const char* model;
    int tp;
    int heads;    // query heads per GPU
    int kv_heads; // KV heads per GPU
};

} // namespace

void measure_attention(Session& s) {
    const cudaStream_t stream = s.stream();
    const auto& dev = s.device();
    std::vector<HeadLayout> layouts{{"llama-3.1-8b", 1, 32, 8}};
    std::vector<int> batches;
    std::vector<int> contexts;
    if (s.quick()) {
        layouts.push_back({"llama-3.1-70b", 8, 8, 1});
        batches = {1, 16, 64};
        contexts = {1024, 8192};
    } else {
        layouts.push_back({"llama-3.1-70b", 4, 16, 2});
        layouts.push_back({"llama-3.1-70b", 8, 8, 1});
        batches = {1, 4, 16, 64, 256};
        contexts = {256, 1024, 4096, 16384, 65536};
    }
    s.note("attention: prefill attention is not measured (no FlashAttention-class kernel here); "
           "import calib/torch_profile.py's scaled_dot_product_attention times for it");

    constexpr std::size_t kElemBytes = 2; // bf16
    constexpr std::size_t kPageElems = static_cast<std::size_t>(kDecodePageTokens) * kDecodeHeadDim;
    // The KV pool may use 30 % of free memory; a problem whose K and V do not fit is skipped.
    const std::size_t cap = s.free_memory() / 10 * 3;
    int too_big = 0;
    std::mt19937 rng(20240611);

    for (const auto& lay : layouts) {
        for (const int batch : batches) {
            std::string line = std::string("decode proxy ") + lay.model + " tp" +
                               std::to_string(lay.tp) + " batch " + std::to_string(batch) + ":";
            for (const int context : contexts) {
                if (s.out_of_time()) {
                    s.note("attention: stopped, time limit reached");
                    return;
                }
                const int pages = (context + kDecodePageTokens - 1) / kDecodePageTokens;
                const std::size_t seq_pages =
                    static_cast<std::size_t>(batch) * static_cast<std::size_t>(pages);
                const std::size_t page_bytes =
                    kPageElems * kElemBytes * static_cast<std::size_t>(lay.kv_heads);
                const std::size_t kv_bytes = 2 * seq_pages * page_bytes; // K and V
                if (kv_bytes > cap) {
                    ++too_big;
                    continue;
                }
                // Copies of the whole cache, rotated per call, so small caches are read from HBM.
                const std::size_t want = (16 * dev.l2_bytes + kv_bytes - 1) / kv_bytes;
                const std::size_t copies =
                    std::clamp<std::size_t>(std::min<std::size_t>(want, cap / kv_bytes), 1, 64);
                const std::size_t pool_pages = copies * seq_pages;
                DeviceBuffer k_cache(pool_pages * page_bytes);
                DeviceBuffer v_cache(pool_pages * page_bytes);
                const std::size_t q_elems =
                    static_cast<std::size_t>(batch) * lay.heads * kDecodeHeadDim;
                DeviceBuffer q(q_elems * kElemBytes);
                DeviceBuffer out(static_cast<std::size_t>(batch) * lay.kv_heads * kDecodeHeadDim *
                                 kElemBytes);
                const int splits = decode_splits(batch, lay.kv_heads, pages, dev.sm_count);
                DeviceBuffer partial(static_cast<std::size_t>(batch) * lay.kv_heads * splits *
                                     kDecodeWarps * kDecodePartialStride * sizeof(float));
                check_cuda(launch_fill(k_cache.get(), k_cache.size() / kElemBytes, FillType::Bf16,
                                       21, 1.0F, stream),
                           "fill");
                check_cuda(launch_fill(v_cache.get(), v_cache.size() / kElemBytes, FillType::Bf16,
                                       22, 1.0F, stream),
                           "fill");
                check_cuda(launch_fill(q.get(), q_elems, FillType::Bf16, 23, 1.0F, stream), "fill");

                // Block tables: a random permutation of the pool, so logical pages are scattered
                // as they are after a serving engine has run for a while.
                std::vector<int> table(pool_pages);
                std::iota(table.begin(), table.end(), 0);
                std::shuffle(table.begin(), table.end(), rng);
                DeviceBuffer tables(table.size() * sizeof(int));
                check_cuda(cudaMemcpyAsync(tables.get(), table.data(), tables.size(),
                                           cudaMemcpyHostToDevice, stream),
                           "copy block tables");
                check_cuda(cudaStreamSynchronize(stream), "prepare decode proxy");

                DecodeProblem pr;
                pr.q = q.get();
                pr.k_cache = k_cache.get();
                pr.v_cache = v_cache.get();
                pr.partial = partial.as<float>();
                pr.out = out.get();
                pr.batch = batch;
                pr.heads = lay.heads;
                pr.kv_heads = lay.kv_heads;
                pr.context = context;
                pr.pages_per_seq = pages;
                pr.splits = splits;
                const TimedRun run = s.measure([&](long i) {
                    DecodeProblem p = pr;
                    p.block_table =
                        tables.as<const int>() +
                        static_cast<std::size_t>(i % static_cast<long>(copies)) * seq_pages;
                    check_cuda(launch_paged_decode(p, stream), "decode proxy kernels");
                });
                Record r;
                r.op_class = "attention_decode";
                r.op = "paged_decode_proxy";
                r.model = lay.model;
                r.batch = batch;
                r.tokens = 1;
                r.context = context;
                r.heads = lay.heads;
                r.kv_heads = lay.kv_heads;
                r.head_dim = kDecodeHeadDim;
                r.dtype = "bf16";
                r.tp = lay.tp;
                // KV bytes actually holding context tokens (the last page may be partly used).
                const double kv_read = 2.0 * batch * static_cast<double>(context) * lay.kv_heads *
                                       kDecodeHeadDim * kElemBytes;
                r.rate = kv_read / run.median_s / 1e9;
                r.rate_unit = "GB/s";
                s.add(r, run);
                char buf[64];
                std::snprintf(buf, sizeof buf, " ctx %d %.0f GB/s", context, r.rate);
                line += buf;
            }
            s.progress(line);
        }
    }
    if (too_big > 0) {
        s.note("attention: " + std::to_string(too_big) +
               " batch x context points skipped, their KV cache exceeds 30 % of free memory");
    }
}

} // namespace gpuplan::calib::bench
