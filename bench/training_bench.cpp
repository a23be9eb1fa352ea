// Speed of the training planner (issue 7 target: the layout search ranks >= 10,000 layouts per
// second on one core). Hardware and models are built in code so that the benchmark measures
// the model, not YAML loading. items_per_second of BM_TrainingSearch* is layouts per second.
#include "model/deployment.hpp"
#include "model/training.hpp"

#include <benchmark/benchmark.h>

namespace {

using namespace gpuplan;
using namespace gpuplan::model;

ModelSpec gpt3() {
    ModelSpec m;
    m.name = "gpt-3-175b";
    m.layers = 96;
    m.hidden_size = 12288;
    m.heads = 96;
    m.kv_heads = 96;
    m.head_dim = 128;
    m.ffn_size = 49152;
    m.mlp = MlpKind::Plain;
    m.vocab_size = 50257;
    m.tied_embeddings = true;
    m.max_context = 2048;
    m.attention = AttentionKind::Mha;
    m.norm = NormKind::LayerNorm;
    m.position = PositionKind::Learned;
    m.linear_bias = true;
    return m;
}

ModelSpec llama70b() {
    ModelSpec m;
    m.name = "llama-3.1-70b";
    m.layers = 80;
    m.hidden_size = 8192;
    m.heads = 64;
    m.kv_heads = 8;
    m.head_dim = 128;
    m.ffn_size = 28672;
    m.vocab_size = 128256;
    m.max_context = 131072;
    m.attention = AttentionKind::Gqa;
    return m;
}

Deployment cluster(const ModelSpec& m, double tflops, double mem_gib, int gpus) {
    Deployment d;
    d.model = m;
    d.gpu.name = "gpu";
    d.gpu.memory = Bytes(mem_gib * kGiB);
    d.gpu.memory_bandwidth = BytesPerSecond(2.0e12);
    d.gpu.dense.bf16 = FlopsPerSecond(tflops * 1e12);
    d.gpu.board_power = Watts(400);
    d.par.dp = gpus;
    d.intra_node_link.bandwidth_per_direction = BytesPerSecond(300e9);
    d.intra_node_link.latency = Seconds(2e-6);
    InterconnectSpec ib;
    ib.bandwidth_per_direction = BytesPerSecond(25e9);
    ib.latency = Seconds(5e-6);
    d.inter_node_link = ib;
    return d;
}

TrainingConfig job(double tokens, int batch, int seq) {
    TrainingConfig c;
    c.tokens = tokens;
    c.global_batch = batch;
    c.seq_len = seq;
    return c;
}

// GPT-3 175B on 1,024 GPUs, batch 1536: ~13,600 layouts per search.
void BM_TrainingSearchGpt3On1024(benchmark::State& state) {
    const Deployment d = cluster(gpt3(), 312, 80, 1024);
    const TrainingConfig c = job(300e9, 1536, 2048);
    const EfficiencyProfile p = default_profile();
    long long layouts = 0;
    for (auto _ : state) {
        const SearchResult r = search_layouts(d, c, p, SearchOptions{});
        layouts += r.enumerated;
        benchmark::DoNotOptimize(r.top.data());
    }
    state.SetItemsProcessed(layouts);
}
BENCHMARK(BM_TrainingSearchGpt3On1024)->Unit(benchmark::kMillisecond);

// Llama-3.1-70B on 16 GPUs, batch 64: a small search (~1,800 layouts).
void BM_TrainingSearchLlama70bOn16(benchmark::State& state) {
    const Deployment d = cluster(llama70b(), 989, 80, 16);
    const TrainingConfig c = job(2e9, 64, 4096);
    const EfficiencyProfile p = default_profile();
    long long layouts = 0;
    for (auto _ : state) {
        const SearchResult r = search_layouts(d, c, p, SearchOptions{});
        layouts += r.enumerated;
        benchmark::DoNotOptimize(r.top.data());
    }
    state.SetItemsProcessed(layouts);
}
BENCHMARK(BM_TrainingSearchLlama70bOn16)->Unit(benchmark::kMillisecond);

// One layout evaluation (the search's loop body).
void BM_TrainingEvaluateOneLayout(benchmark::State& state) {
    const Deployment d = cluster(gpt3(), 312, 80, 1024);
    TrainingConfig c = job(300e9, 1536, 2048);
    c.layout.tp = 8;
    c.layout.pp = 16;
    c.layout.dp = 8;
    c.layout.recompute = Recompute::Full;
    const TrainingModel m(d, c, default_profile());
    for (auto _ : state) {
        benchmark::DoNotOptimize(m.evaluate(c.layout));
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TrainingEvaluateOneLayout);

} // namespace
