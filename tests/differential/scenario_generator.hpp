#pragma once
/// A seeded generator of the scenarios users write, as YAML text for the scenario loader: models
/// (dense and MoE, 1B to 70B), GPUs (NVIDIA and AMD, 24 to 192 GB), engines, tensor-parallel
/// layouts, loads (closed loop, open loop, offline batch, trace) and features (prefix caching,
/// LoRA, speculative decoding, KV offload, disaggregation). The differential suite runs each
/// through the analytic model and the simulator (docs/operating-point.md, "Differential suite").

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace gpuplan::test {

/// The optional feature a case switches on.
enum class Feature { None, Prefix, Lora, Speculative, KvOffload, Disaggregation };

/// How a case's load is given.
enum class Load { Closed, Open, Batch, Trace };

[[nodiscard]] const char* to_string(Feature f);
[[nodiscard]] const char* to_string(Load l);

/// One generated scenario.
struct Case {
    int index = 0;
    std::string label; ///< model/gpu/engine/tp/load/feature, for messages
    Feature feature = Feature::None;
    Load load = Load::Closed;
    bool moe = false;
    bool jitter = false; ///< lengths uniform within ±10 % (else fixed)
    int input = 0, output = 0;
    int concurrency = 0; ///< Closed: sequences in flight
    int batch = 0;       ///< Batch and Trace: requests
    std::string yaml;    ///< the scenario file's text
    std::string trace;   ///< Trace: the trace CSV's text (written beside the scenario)
};

/// `count` cases from `seed`; the same seed gives the same cases.
[[nodiscard]] std::vector<Case> generate_cases(int count, std::uint64_t seed);

} // namespace gpuplan::test
