#include "calib/predict.hpp"

#include "hwdb/database.hpp"
#include "model/comm.hpp"
#include "model/deployment.hpp"
#include "model/kernel_time.hpp"
#include "model/step_cost.hpp"

#include <algorithm>
#include <cmath>

namespace gpuplan::calib {

namespace {

// The fused-MoE benchmarks' block (vLLM benchmark_moe.py: fused_topk + fused_experts): topk
// softmax, then the step cost's kExpertKernels (alignment, two grouped GEMMs, activation,
// combine; step_cost.cpp), six kernels; topk softmax reads fp32 router logits, 4 bytes each
// (step_cost.cpp kLogitBytes).
constexpr double kFusedMoeKernels = 6.0;
constexpr double kLogitBytes = 4.0;

} // namespace

const model::InterconnectSpec* Hardware::find_link(std::string_view name) const {
    const std::string key = hwdb::normalize_name(name);
    for (const auto& l : links) {
        if (hwdb::normalize_name(l.name) == key) {
            return &l;
        }
        for (const auto& a : l.aliases) {
            if (hwdb::normalize_name(a) == key) {
                return &l;
            }
        }
    }
    return nullptr;
}

std::optional<DtypeInfo> dtype_info(std::string_view name) {
    const auto p = model::find_precision(name);
    if (!p) {
        return std::nullopt;
    }
    return DtypeInfo{p->bytes_per_element(), p->compute, p->weight_only, model::gemm_class_of(*p)};
}

std::optional<PreparedPoint> prepare(const Measurement& m, const Hardware& hw, std::string* why) {
    auto fail = [why](std::string reason) -> std::optional<PreparedPoint> {
        if (why) {
            *why = std::move(reason);
        }
        return std::nullopt;
    };
    PreparedPoint p;
    p.op_class = m.op_class;
    p.time_s = m.time_s;
    p.host = m.timing == model::Timing::Host;
    p.bandwidth = hw.gpu.memory_bandwidth.si();
    const auto dt = dtype_info(m.dtype);
    if (!dt) {
        return fail("unknown data type '" + m.dtype + "'");
    }
    p.type = dt->type;
    p.cls = dt->cls;
    // Activations are at least 16 bit (step_cost.cpp: ab = max(2, activation bytes)); KV cache
    // and attention run in the measured type.
    p.act_bytes = std::max(2.0, dt->bytes);
    p.weight_bytes = dt->bytes;
    if (m.time_s <= 0) {
        return fail("no positive time");
    }
    switch (m.op_class) {
    case OpClass::Gemm: {
        if (m.m <= 0 || m.k <= 0 || m.n <= 0) {
            return fail("a GEMM needs m, k and n");
        }
        // The step-cost model's rule (step_cost.cpp): weight-only formats, and narrow formats
        // the GPU has no tensor cores for (FP8 on Ampere), run a mixed-input kernel with 16-bit
        // activations on the bf16 path.
        const auto native = hw.gpu.dense.for_type(dt->type);
        if (dt->weight_only || (dt->bytes < 2.0 && !(native && native->si() > 0))) {
            p.path = model::GemmPath::WeightOnly;
            p.type = dt->weight_only ? dt->type : model::ComputeType::Bf16;
            p.cls = model::gemm_class(p.type);
            p.act_bytes = 2.0;
        }
        const auto peak = model::kernel_peak(hw.gpu, p.type);
        if (!peak) {
            return fail("'" + hw.gpu.name + "' has no dense peak for " + m.dtype);
        }
        p.peak = peak->si();
        p.m = m.m;
        p.k = m.k;
        p.n = m.n;
        return p;
    }
    case OpClass::GroupedGemm: {
        if (m.m <= 0 || m.k <= 0 || m.n <= 0 || m.experts <= 0 || m.top_k <= 0 ||
            m.top_k > m.experts || m.matrices < 1 || m.matrices > 3) {
            return fail("a grouped GEMM needs tokens, hidden, ffn, experts, top_k <= experts and "
                        "1-3 matrices");
        }
        // The step cost's rule (step_cost.cpp moe()): a grouped kernel, or a weight-only MoE
        // kernel for integer weight-only formats and narrow formats without tensor cores.
        const auto native = hw.gpu.dense.for_type(dt->type);
        p.path = model::GemmPath::Grouped;
        if (dt->weight_only || (dt->bytes < 2.0 && !(native && native->si() > 0))) {
            p.path = model::GemmPath::WeightOnly;
            p.type = dt->weight_only ? dt->type : model::ComputeType::Bf16;
            p.cls = model::gemm_class(p.type);
            p.act_bytes = 2.0;
        }
        const auto peak = model::kernel_peak(hw.gpu, p.type);
        if (!peak) {
            return fail("'" + hw.gpu.name + "' has no dense peak for " + m.dtype);
        }
        p.peak = peak->si();
        p.m = m.m * m.top_k;
        p.k = m.k;
        p.n = m.n;
        p.groups = model::expected_experts_touched(m.experts, m.top_k, m.m);
        p.mats = m.matrices;
        p.triton_moe =
            p.path == model::GemmPath::Grouped &&
            (m.op.rfind("vllm_fused_moe", 0) == 0 || m.op.rfind("sglang_fused_moe", 0) == 0);
        p.tokens = m.m;
        p.experts = m.experts;
        p.top_k = m.top_k;
        return p;
    }
    case OpClass::MemoryBound:
        if (m.bytes <= 0) {
            return fail("a memory-bound kernel needs its bytes");
        }
        p.bytes = m.bytes;
        return p;
    case OpClass::AttentionPrefill:
    case OpClass::AttentionDecode: {
        if (m.batch <= 0 || m.heads <= 0 || m.head_dim <= 0) {
            return fail("attention needs batch, heads and head_dim");
        }
        const auto peak = model::kernel_peak(hw.gpu, dt->type);
        if (!peak) {
            return fail("'" + hw.gpu.name + "' has no dense peak for " + m.dtype);
        }
        p.peak = peak->si();
        const double b = m.batch;
        const double hd = m.head_dim;
        const double kv_heads = m.kv_heads > 0 ? m.kv_heads : m.heads;
        const double q_width = m.heads * hd;         // Q (and the output O) per token
        const double kv_elems = 2.0 * kv_heads * hd; // K and V per token
        const double kvb = dt->bytes;
        const double ab = p.act_bytes;
        // FLOPs: 2 × heads × (d_qk + d_v) per query-key pair (step_cost.cpp).
        const double per_pair = 2.0 * m.heads * (hd + hd);
        if (m.op_class == OpClass::AttentionPrefill) {
            if (m.tokens <= 0) {
                return fail("prefill attention needs tokens");
            }
            const double pairs = b * model::causal_query_key_pairs(m.context, m.tokens);
            const double tokens = b * m.tokens;
            const double kv_read = b * (m.context + m.tokens);
            p.flops = per_pair * pairs;
            p.bytes = tokens * 2.0 * q_width * ab + (kv_read + tokens) * kv_elems * kvb;
            p.x = std::sqrt(2.0 * pairs / b);
        } else {
            if (m.context <= 0) {
                return fail("decode attention needs a context");
            }
            p.flops = per_pair * b * m.context;
            p.bytes = (b * m.context + b) * kv_elems * kvb + b * 2.0 * q_width * ab;
        }
        return p;
    }
    case OpClass::AllReduce:
    case OpClass::SendRecv: {
        if (m.bytes <= 0 || m.tp < 1) {
            return fail("a collective needs its message size and group");
        }
        if (m.link.empty()) {
            return fail("the link is unknown");
        }
        const model::InterconnectSpec* link = hw.find_link(m.link);
        if (!link) {
            return fail("unknown link '" + m.link + "'");
        }
        p.bytes = m.bytes;
        p.group = m.op_class == OpClass::SendRecv ? 2 : m.tp;
        p.link_bandwidth = link->bandwidth_per_direction.si();
        p.link_latency = link->latency.si();
        return p;
    }
    }
    return fail("unknown operator class");
}

double predict_kernel(const PreparedPoint& p, const model::EfficiencyProfile& prof) {
    const BytesPerSecond bw(p.bandwidth);
    switch (p.op_class) {
    case OpClass::Gemm:
        return model::gemm_kernel_time(p.m, p.k, p.n, p.weight_bytes, p.act_bytes, p.cls,
                                       FlopsPerSecond(p.peak), bw, prof, p.path)
            .time.si();
    case OpClass::GroupedGemm: {
        if (!p.triton_moe) {
            return model::routed_experts_kernel_time(p.m, p.groups, p.k, p.n, p.mats,
                                                     p.weight_bytes, p.act_bytes, p.cls, p.path,
                                                     FlopsPerSecond(p.peak), bw, prof)
                .time.si();
        }
        // The Triton fused_moe block as the step cost prices it (step_cost.cpp moe()): the
        // grouped GEMMs over rows padded to BLOCK_SIZE_M, the alignment and combine kernels,
        // the router's topk softmax over fp32 logits, and the graph-replayed launches of
        // kFusedMoeKernels kernels (the benchmarks replay CUDA graphs).
        const double block = model::fused_moe_block_m(p.m / p.groups);
        const double padded = model::moe_padded_rows(p.m, p.groups, block);
        const double gemms = model::routed_experts_kernel_time(
                                 p.m, p.groups, p.k, p.n, p.mats, p.weight_bytes, p.act_bytes,
                                 p.cls, p.path, FlopsPerSecond(p.peak), bw, prof, block)
                                 .time.si();
        const double aux = model::fused_moe_aux_kernel_time(p.m, p.top_k, padded, block, p.k,
                                                            p.act_bytes, bw, prof)
                               .time.si();
        const double topk =
            model::stream_kernel_time(p.tokens * p.experts * kLogitBytes, bw, prof).time.si();
        return gemms + aux + topk + kFusedMoeKernels * prof.graph_launch_overhead.si();
    }
    case OpClass::MemoryBound: return model::stream_kernel_time(p.bytes, bw, prof).time.si();
    case OpClass::AttentionPrefill:
        return model::attention_prefill_kernel_time(p.flops, p.bytes, p.x, FlopsPerSecond(p.peak),
                                                    bw, prof)
            .time.si();
    case OpClass::AttentionDecode:
        return model::attention_decode_kernel_time(p.flops, p.bytes, FlopsPerSecond(p.peak), bw,
                                                   prof)
            .time.si();
    case OpClass::AllReduce:
    case OpClass::SendRecv: {
        const model::Link link{BytesPerSecond(p.link_bandwidth), Seconds(p.link_latency), false};
        const Bytes msg(p.bytes);
        const model::Link eff = model::effective_link(link, msg, prof.comm);
        const Seconds t =
            p.op_class == OpClass::SendRecv
                ? model::p2p_time(msg, eff)
                : model::all_reduce_time(msg, p.group, eff, model::AllReduceAlgorithm::Auto);
        return (t + prof.comm.collective_overhead).si();
    }
    }
    return 0.0;
}

double host_offset_for(const std::string& source, const std::vector<hwdb::TimingOffset>& offsets,
                       const model::EfficiencyProfile& prof) {
    for (const auto& o : offsets) {
        if (o.source == source) {
            return o.offset.si();
        }
    }
    return prof.launch_overhead.si();
}

std::optional<double> predict_time(const Measurement& m, const Hardware& hw,
                                   const model::EfficiencyProfile& prof,
                                   const std::vector<hwdb::TimingOffset>& offsets) {
    const auto p = prepare(m, hw);
    if (!p) {
        return std::nullopt;
    }
    return predict(*p, prof, host_offset_for(m.source, offsets, prof));
}

} // namespace gpuplan::calib
