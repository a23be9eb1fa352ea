#pragma once
/// Models, GPUs and links for the analytic-model tests, built in code (never from YAML).
/// Architectures are the publishers' config.json values; GPU figures are the datasheet values of
/// the vendor datasheets cited in hwdb/sources.yaml (dense peaks, vendor "80 GB" stored as 80 GiB).

#include "model/deployment.hpp"
#include "model/precision.hpp"

namespace gpuplan::model::test {

inline ModelSpec llama_like(const char* name, int layers, int hidden, int heads, int kv_heads,
                            int ffn, int vocab, int max_context) {
    ModelSpec m;
    m.name = name;
    m.family = "llama";
    m.layers = layers;
    m.hidden_size = hidden;
    m.heads = heads;
    m.kv_heads = kv_heads;
    m.head_dim = hidden / heads;
    m.ffn_size = ffn;
    m.vocab_size = vocab;
    m.max_context = max_context;
    m.attention = kv_heads == heads ? AttentionKind::Mha : AttentionKind::Gqa;
    return m;
}

/// meta-llama/Llama-2-7b-hf: 6,738,415,616 parameters, MHA.
inline ModelSpec llama2_7b() {
    return llama_like("llama-2-7b", 32, 4096, 32, 32, 11008, 32000, 4096);
}

/// meta-llama/Meta-Llama-3-8B: GQA with 8 KV heads.
inline ModelSpec llama3_8b() {
    return llama_like("llama-3-8b", 32, 4096, 32, 8, 14336, 128256, 8192);
}

/// meta-llama/Llama-3.1-70B.
inline ModelSpec llama31_70b() {
    return llama_like("llama-3.1-70b", 80, 8192, 64, 8, 28672, 128256, 131072);
}

/// Qwen/Qwen2.5-7B-Instruct: 28 layers, 4 KV heads, Q/K/V biases, untied LM head.
inline ModelSpec qwen25_7b() {
    ModelSpec m = llama_like("qwen2.5-7b", 28, 3584, 28, 4, 18944, 152064, 32768);
    m.family = "qwen2";
    m.qkv_bias = true;
    return m;
}

/// mistralai/Mixtral-8x7B-v0.1: 8 experts, top-2, no dense layers.
inline ModelSpec mixtral_8x7b() {
    ModelSpec m = llama_like("mixtral-8x7b", 32, 4096, 32, 8, 14336, 32000, 32768);
    m.moe = MoeSpec{8, 2, 0, 14336, 0};
    return m;
}

/// deepseek-ai/DeepSeek-V3: MLA, 256 routed experts (top-8) plus one shared, 3 dense layers.
inline ModelSpec deepseek_v3() {
    ModelSpec m = llama_like("deepseek-v3", 61, 7168, 128, 128, 18432, 129280, 163840);
    m.head_dim = 192;
    m.attention = AttentionKind::Mla;
    m.mla = MlaSpec{1536, 512, 128, 64, 128};
    m.moe = MoeSpec{256, 8, 1, 2048, 3};
    return m;
}

/// A Gemma-2-like model: half of 42 layers use a 4096-token window.
inline ModelSpec windowed_model() {
    ModelSpec m = llama_like("windowed", 42, 3584, 16, 8, 14336, 256000, 8192);
    m.head_dim = 256;
    m.sliding_window = SlidingWindowSpec{4096, 21};
    return m;
}

/// H100 SXM5: 80 GiB HBM3, 3.35 TB/s, 989.4 TFLOPS BF16 dense, 1978.9 FP8/INT8.
inline AcceleratorSpec h100() {
    AcceleratorSpec g;
    g.name = "h100-sxm";
    g.vendor = "nvidia";
    g.memory = Bytes(80.0 * kGiB);
    g.memory_bandwidth = BytesPerSecond(3.35e12);
    g.dense.bf16 = FlopsPerSecond(989.4e12);
    g.dense.fp16 = FlopsPerSecond(989.4e12);
    g.dense.fp8 = FlopsPerSecond(1978.9e12);
    g.dense.int8 = FlopsPerSecond(1978.9e12);
    g.board_power = Watts(700);
    return g;
}

/// A100 SXM4 80GB: 2.039 TB/s HBM2e, 312 TFLOPS BF16/FP16 dense, 624 INT8, no FP8 tensor cores.
inline AcceleratorSpec a100_80gb() {
    AcceleratorSpec g;
    g.name = "a100-sxm-80gb";
    g.vendor = "nvidia";
    g.memory = Bytes(80.0 * kGiB);
    g.memory_bandwidth = BytesPerSecond(2.039e12);
    g.dense.bf16 = FlopsPerSecond(312e12);
    g.dense.fp16 = FlopsPerSecond(312e12);
    g.dense.int8 = FlopsPerSecond(624e12);
    g.board_power = Watts(400);
    return g;
}

/// H200 SXM: 141 GB HBM3e at 4.8 TB/s, H100 compute.
inline AcceleratorSpec h200() {
    AcceleratorSpec g = h100();
    g.name = "h200-sxm";
    g.memory = Bytes(141.0 * kGiB);
    g.memory_bandwidth = BytesPerSecond(4.8e12);
    return g;
}

/// RTX 4090: 24 GiB GDDR6X, 1.008 TB/s, 165.2 TFLOPS FP16/BF16 with FP32 accumulate.
inline AcceleratorSpec rtx4090() {
    AcceleratorSpec g;
    g.name = "rtx-4090";
    g.vendor = "nvidia";
    g.memory = Bytes(24.0 * kGiB);
    g.memory_bandwidth = BytesPerSecond(1.008e12);
    g.dense.bf16 = FlopsPerSecond(165.2e12);
    g.dense.fp16 = FlopsPerSecond(165.2e12);
    g.dense.fp8 = FlopsPerSecond(330.3e12);
    g.dense.int8 = FlopsPerSecond(660.6e12);
    g.board_power = Watts(450);
    return g;
}

/// A round GPU for hand arithmetic: 1 TB/s, 100 TFLOPS BF16, 80 GiB.
inline AcceleratorSpec round_gpu() {
    AcceleratorSpec g;
    g.name = "round";
    g.memory = Bytes(80.0 * kGiB);
    g.memory_bandwidth = BytesPerSecond(1e12);
    g.dense.bf16 = FlopsPerSecond(100e12);
    return g;
}

/// NVLink 4: 450 GB/s per direction, ~1 µs per hop [U].
inline InterconnectSpec nvlink4() {
    InterconnectSpec l;
    l.name = "nvlink4";
    l.kind = LinkKind::NvLink;
    l.bandwidth_per_direction = BytesPerSecond(450e9);
    l.latency = Seconds(1e-6);
    return l;
}

/// PCIe 4.0 x16: ~32 GB/s per direction.
inline InterconnectSpec pcie4() {
    InterconnectSpec l;
    l.name = "pcie4-x16";
    l.kind = LinkKind::Pcie;
    l.bandwidth_per_direction = BytesPerSecond(32e9);
    l.latency = Seconds(2e-6);
    return l;
}

/// InfiniBand NDR 400 Gb/s: 50 GB/s per direction.
inline InterconnectSpec ib_ndr() {
    InterconnectSpec l;
    l.name = "ib-ndr";
    l.kind = LinkKind::InfiniBand;
    l.bandwidth_per_direction = BytesPerSecond(50e9);
    l.latency = Seconds(5e-6);
    return l;
}

/// A deployment of `m` on `gpus` × `g` with tensor parallelism over all of them, bf16, vLLM.
inline Deployment deploy(const ModelSpec& m, const AcceleratorSpec& g, int tp = 1, int pp = 1) {
    Deployment d;
    d.model = m;
    d.gpu = g;
    d.par.tp = tp;
    d.par.pp = pp;
    d.intra_node_link = nvlink4();
    d.gpus_per_node = 8;
    return d;
}

inline Precision precision(const char* name) {
    return parse_precision(name);
}

} // namespace gpuplan::model::test
