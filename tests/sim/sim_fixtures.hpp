#pragma once
/// Scenarios for the simulator tests, built in code: Llama-3-8B on one H100 under vLLM.

#include "model/scenario.hpp"
#include "tests/model/fixtures.hpp"

namespace gpuplan::sim::test {

/// Llama-3-8B bf16 on one H100 SXM, vLLM with max_model_len 8192; `requests` fixed-length
/// requests of `input` + `output` tokens arriving as Poisson at `rate` per second.
inline model::Scenario llama8b_scenario(int input = 512, int output = 128, double rate = 4.0,
                                        int requests = 200) {
    model::Scenario s;
    s.name = "test";
    s.deployment = model::test::deploy(model::test::llama3_8b(), model::test::h100());
    s.deployment.engine.max_model_len = 8192;
    s.workload.input_tokens = input;
    s.workload.output_tokens = output;
    s.workload.requests_per_s = rate;
    s.workload.requests = requests;
    s.seed = 7;
    return s;
}

/// A KV pool of `bytes` per GPU (vLLM kv_cache_memory_bytes): 128 KiB per token for Llama-3-8B
/// bf16, so 1 GiB holds 8192 tokens = 512 blocks of 16.
inline void set_kv_pool(model::Scenario& s, double gib) {
    s.deployment.engine.kv_cache_memory = Bytes(gib * kGiB);
}

} // namespace gpuplan::sim::test
