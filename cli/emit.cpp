#include "cli/emit.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpuplan::cli {

std::string vllm_serve_command(const model::Deployment& d) {
    const model::EngineSettings e = model::resolve_engine(d);
    std::string c = "vllm serve " + (d.model.hf_id.empty() ? d.model.name : d.model.hf_id);
    c += fmt::format(" --tensor-parallel-size {}", d.par.tp);
    if (d.par.pp > 1)
        c += fmt::format(" --pipeline-parallel-size {}", d.par.pp);
    if (d.par.dp > 1)
        c += fmt::format(" --data-parallel-size {}", d.par.dp);
    if (d.par.ep > 1)
        c += " --enable-expert-parallel";
    c += fmt::format(" --max-model-len {}", e.max_model_len);
    c += fmt::format(" --gpu-memory-utilization {:g}", e.memory_fraction);
    c += fmt::format(" --max-num-seqs {}", e.max_num_seqs);
    c += fmt::format(" --max-num-batched-tokens {}", e.max_num_batched_tokens);
    c += e.chunked_prefill ? " --enable-chunked-prefill" : " --no-enable-chunked-prefill";
    c += e.prefix_caching ? " --enable-prefix-caching" : " --no-enable-prefix-caching";
    const std::string& w = d.prec.weights.name;
    if (w == "fp8") {
        c += " --quantization fp8";
    } else if (w.starts_with("awq")) {
        c += " --quantization awq";
    } else if (w.starts_with("gptq")) {
        c += " --quantization gptq";
    } else if (w == "fp16") {
        c += " --dtype float16";
    } else if (w == "bf16") {
        c += " --dtype bfloat16";
    } else if (w == "fp32") {
        c += " --dtype float32";
    }
    if (d.prec.kv_cache.bits_per_element <= 8.0 && d.prec.kv_cache.name.starts_with("fp8")) {
        c += " --kv-cache-dtype fp8";
    }
    if (!e.cuda_graphs)
        c += " --enforce-eager";
    return c;
}

std::string vllm_bench_command(const model::Deployment& d, int input_tokens, int output_tokens,
                               int concurrency) {
    const int c = std::max(1, concurrency);
    return fmt::format("vllm bench serve --backend vllm --model {} --dataset-name random "
                       "--random-input-len {} --random-output-len {} --max-concurrency {} "
                       "--num-prompts {} --ignore-eos --save-result",
                       d.model.hf_id.empty() ? d.model.name : d.model.hf_id, input_tokens,
                       output_tokens, c, std::max(50, 10 * std::min(c, 100000)));
}

} // namespace gpuplan::cli
