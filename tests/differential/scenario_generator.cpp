#include "tests/differential/scenario_generator.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>

namespace gpuplan::test {
namespace {

struct ModelChoice {
    const char* name;
    double weight_gb; ///< bf16 weights, GB (the catalog's parameters × 2)
    bool moe;
};

// Dense and MoE models of the catalog, 1B to 70B.
constexpr std::array kModels{
    ModelChoice{"llama-3.2-1b", 2.5, false}, ModelChoice{"llama-3.1-8b", 16.1, false},
    ModelChoice{"qwen2.5-7b", 15.2, false},  ModelChoice{"mistral-7b", 14.5, false},
    ModelChoice{"qwen3-8b", 16.4, false},    ModelChoice{"qwen2.5-14b", 29.5, false},
    ModelChoice{"qwen2.5-32b", 65.5, false}, ModelChoice{"llama-3.1-70b", 141.1, false},
    ModelChoice{"mixtral-8x7b", 93.4, true}, ModelChoice{"qwen3-30b-a3b", 61.1, true},
};

struct GpuChoice {
    const char* name;
    double memory_gb;
    bool nvidia;
};

constexpr std::array kGpus{
    GpuChoice{"h100-sxm", 80, true},  GpuChoice{"a100-sxm-80gb", 80, true},
    GpuChoice{"h200-sxm", 141, true}, GpuChoice{"l40s", 48, true},
    GpuChoice{"rtx-4090", 24, true},  GpuChoice{"mi300x", 192, false},
};

constexpr std::array kInputs{128, 512, 1024, 2048};
constexpr std::array kOutputs{64, 128, 256};
constexpr std::array kConcurrency{1, 4, 16, 64};
constexpr std::array kBatches{16, 64, 256};

template <class T, std::size_t N> const T& pick(std::mt19937_64& rng, const std::array<T, N>& a) {
    return a[std::uniform_int_distribution<std::size_t>(0, N - 1)(rng)];
}

// The smallest power-of-two tp whose weight shard leaves a quarter of the GPU for the KV cache
// and activations; 0 when even 8 GPUs are too few.
int fitting_tp(const ModelChoice& m, const GpuChoice& g) {
    for (int tp = 1; tp <= 8; tp *= 2) {
        if (m.weight_gb / tp < 0.7 * g.memory_gb) {
            return tp;
        }
    }
    return 0;
}

std::string length(int mean, bool jitter) {
    if (!jitter) {
        return std::to_string(mean);
    }
    return fmt::format("{{dist: uniform, min: {}, max: {}}}", mean - mean / 10, mean + mean / 10);
}

std::string engine_block(const std::string& engine, Feature f, const ModelChoice& m) {
    std::string e = fmt::format("engine:\n  kind: {}\n  max_model_len: 4096\n", engine);
    switch (f) {
    case Feature::Prefix: e += "  enable_prefix_caching: true\n"; break;
    case Feature::KvOffload:
        e += "  enable_prefix_caching: true\n  kv_offload:\n    host: 32 GiB\n";
        break;
    case Feature::Lora:
        e += "  lora:\n    adapters: 8\n    rank: 16\n    max_loras: 4\n"
             "    popularity: uniform\n";
        break;
    case Feature::Speculative:
        e += m.moe ? "  speculative:\n    method: ngram\n"
                   : "  speculative:\n    method: eagle\n    acceptance_rate: 0.7\n";
        break;
    default: break;
    }
    return e;
}

std::string workload_block(const Case& c) {
    std::string w = "workload:\n";
    switch (c.load) {
    case Load::Closed: w += fmt::format("  concurrency: {}\n", c.concurrency); break;
    case Load::Open: w += "  requests_per_s: 1\n"; break; // the suite sets the rate
    case Load::Batch: w += fmt::format("  batch_requests: {}\n", c.batch); break;
    case Load::Trace: break; // the suite sets the trace rows
    }
    const bool prefix = c.feature == Feature::Prefix || c.feature == Feature::KvOffload;
    w += fmt::format("  classes:\n    - name: main\n      input: {}\n      output: {}\n",
                     length(prefix ? c.input / 2 : c.input, c.jitter), length(c.output, c.jitter));
    if (prefix) {
        w += fmt::format("      shared_prefix: {}\n      prefix_groups: 4\n", c.input / 2);
    }
    return w;
}

} // namespace

const char* to_string(Feature f) {
    switch (f) {
    case Feature::None: return "none";
    case Feature::Prefix: return "prefix";
    case Feature::Lora: return "lora";
    case Feature::Speculative: return "speculative";
    case Feature::KvOffload: return "kv_offload";
    case Feature::Disaggregation: return "disaggregation";
    }
    return "?";
}

const char* to_string(Load l) {
    switch (l) {
    case Load::Closed: return "closed";
    case Load::Open: return "open";
    case Load::Batch: return "batch";
    case Load::Trace: return "trace";
    }
    return "?";
}

std::vector<Case> generate_cases(int count, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<Case> cases;
    constexpr std::array kFeatures{Feature::None,      Feature::Prefix,
                                   Feature::Lora,      Feature::Speculative,
                                   Feature::KvOffload, Feature::Disaggregation};
    constexpr std::array kLoads{Load::Closed, Load::Open, Load::Batch, Load::Trace};
    while (static_cast<int>(cases.size()) < count) {
        const ModelChoice& m = pick(rng, kModels);
        const GpuChoice& g = pick(rng, kGpus);
        const int tp = fitting_tp(m, g);
        Case c;
        c.feature = kFeatures[cases.size() % kFeatures.size()];
        c.load = pick(rng, kLoads);
        c.input = pick(rng, kInputs);
        c.output = pick(rng, kOutputs);
        c.concurrency = pick(rng, kConcurrency);
        c.batch = pick(rng, kBatches);
        c.jitter = std::uniform_int_distribution<int>(0, 1)(rng) == 1;
        if (tp == 0) {
            continue;
        }
        // vLLM everywhere; SGLang on any GPU, TensorRT-LLM on NVIDIA, for the plain features
        // (the features' engine support is the engines' own, checked by the loader elsewhere).
        std::string engine = "vllm";
        if (c.feature == Feature::None || c.feature == Feature::Prefix) {
            const int e = std::uniform_int_distribution<int>(0, 2)(rng);
            engine = e == 1 ? "sglang" : e == 2 && g.nvidia ? "tensorrt-llm" : "vllm";
        }
        if (c.feature == Feature::Disaggregation && !g.nvidia) {
            continue;
        }
        c.moe = m.moe;
        c.index = static_cast<int>(cases.size());
        c.label = fmt::format("#{} {} on {} x{} {} {} {} {}+{}{}", c.index, m.name, g.name, tp,
                              engine, to_string(c.load), to_string(c.feature), c.input, c.output,
                              c.jitter ? "±10%" : "");
        c.yaml = fmt::format("schema: 1\nname: diff-{}\nmodel: {}\nhardware:\n  accelerator: {}\n"
                             "  tp: {}\n",
                             c.index, m.name, g.name, tp);
        c.yaml += engine_block(engine, c.feature, m);
        c.yaml += workload_block(c);
        c.yaml += "slo:\n  ttft: 2 s\n  tpot: 200 ms\n";
        if (c.feature == Feature::Disaggregation) {
            c.yaml += fmt::format("cluster:\n  disaggregation:\n"
                                  "    prefill: {{accelerator: {0}, tp: {1}, replicas: 1}}\n"
                                  "    decode: {{accelerator: {0}, tp: {1}, replicas: 1}}\n"
                                  "    link: ib-ndr\n",
                                  g.name, tp);
        }
        c.yaml += "seed: 11\n";
        cases.push_back(std::move(c));
    }
    return cases;
}

} // namespace gpuplan::test
