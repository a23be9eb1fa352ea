// Speed of the analytic model: one full estimate, and a sweep of 10,000 configurations
// (issue 3 target: >= 100,000 estimates per second on one core). Hardware and models are built
// in code so that the benchmark measures the model, not YAML loading.
#include "model/deployment.hpp"
#include "model/memory.hpp"
#include "model/serving.hpp"
#include "model/step_cost.hpp"

#include <benchmark/benchmark.h>

#include <vector>

namespace {

using namespace gpuplan;
using namespace gpuplan::model;

ModelSpec llama70b() {
    ModelSpec m;
    m.name = "llama-3.1-70b";
    m.family = "llama";
    m.layers = 80;
    m.hidden_size = 8192;
    m.heads = 64;
    m.kv_heads = 8;
    m.head_dim = 128;
    m.ffn_size = 28672;
    m.vocab_size = 128256;
    m.max_context = 131072;
    m.attention = AttentionKind::Gqa;
    m.published_params = 70.6e9;
    return m;
}

AcceleratorSpec gpu(const char* name, double mem_gib, double tbps, double bf16_tflops) {
    AcceleratorSpec a;
    a.name = name;
    a.vendor = "nvidia";
    a.memory = Bytes(mem_gib * kGiB);
    a.memory_bandwidth = BytesPerSecond(tbps * 1e12);
    a.dense.bf16 = FlopsPerSecond(bf16_tflops * 1e12);
    a.dense.fp8 = FlopsPerSecond(2 * bf16_tflops * 1e12);
    a.board_power = Watts(700);
    a.compute_units = 132;
    return a;
}

Deployment base(const AcceleratorSpec& g, int tp) {
    Deployment d;
    d.model = llama70b();
    d.gpu = g;
    d.par.tp = tp;
    d.intra_node_link.name = "nvlink4";
    d.intra_node_link.bandwidth_per_direction = BytesPerSecond(450e9);
    d.intra_node_link.latency = Seconds(2e-6);
    d.engine.max_model_len = 8192;
    return d;
}

// A workload of the analytic fields only (Workload also carries the simulator's fields).
Workload workload(int input, int output, int concurrency) {
    Workload w;
    w.input_tokens = input;
    w.output_tokens = output;
    w.concurrency = concurrency;
    return w;
}

void BM_EstimateServing(benchmark::State& state) {
    const Deployment d = base(gpu("h100-sxm", 80, 3.35, 989.4), 4);
    const Workload w = workload(2048, 512, 64);
    const EfficiencyProfile p = default_profile();
    for (auto _ : state) {
        benchmark::DoNotOptimize(estimate_serving(d, w, p));
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EstimateServing);

void BM_StepCostDecode64(benchmark::State& state) {
    const Deployment d = base(gpu("h100-sxm", 80, 3.35, 989.4), 4);
    const StepCostModel m(d, default_profile());
    BatchStats s;
    m.add_decodes(s, 64, 2304);
    for (auto _ : state) {
        benchmark::DoNotOptimize(m.cost(s));
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_StepCostDecode64);

// 10,000 configurations: 5 GPUs × 4 TP sizes × 5 weight precisions × 4 KV/context settings ×
// 25 concurrencies. Each is a full estimate_serving (memory, TTFT, TPOT, throughputs, MFU/MBU).
void BM_Sweep10k(benchmark::State& state) {
    const std::vector<AcceleratorSpec> gpus = {
        gpu("a100-sxm-80gb", 80, 2.039, 312), gpu("h100-sxm", 80, 3.35, 989.4),
        gpu("h200-sxm", 141, 4.8, 989.4), gpu("b200", 180, 8.0, 2250), gpu("l40s", 48, 0.864, 362)};
    const char* weights[] = {"bf16", "fp8", "int8", "awq-int4", "gptq-int4"};
    const EfficiencyProfile p = default_profile();
    std::vector<Deployment> configs;
    std::vector<Workload> loads;
    for (const auto& g : gpus) {
        for (int tp : {1, 2, 4, 8}) {
            for (const char* wname : weights) {
                for (int ctx : {4096, 8192, 16384, 32768}) {
                    Deployment d = base(g, tp);
                    d.prec.weights = parse_precision(wname);
                    d.prec.kv_cache = parse_precision(ctx >= 16384 ? "fp8" : "bf16");
                    d.engine.max_model_len = ctx;
                    for (int c = 1; c <= 25; ++c) {
                        configs.push_back(d);
                        loads.push_back(workload(ctx / 4, 256, c * 8));
                    }
                }
            }
        }
    }
    for (auto _ : state) {
        double sum = 0;
        for (std::size_t i = 0; i < configs.size(); ++i) {
            sum += estimate_serving(configs[i], loads[i], p).throughput;
        }
        benchmark::DoNotOptimize(sum);
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(configs.size()));
    state.counters["configs"] = static_cast<double>(configs.size());
}
BENCHMARK(BM_Sweep10k)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
