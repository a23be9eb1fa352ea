#include "cli/emit.hpp"

#include "model/engine_defaults.hpp"
#include "model/enum_names.hpp"
#include "model/error.hpp"
#include "model/workload_mix.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace gpuplan::cli {

EmitEngine parse_emit_engine(const std::string& name) {
    // The engines' one spelling table (model::enum_names(EngineKind)), aliases included.
    if (const auto kind = model::find_engine(name)) {
        switch (*kind) {
        case model::EngineKind::Vllm: return EmitEngine::Vllm;
        case model::EngineKind::Sglang: return EmitEngine::Sglang;
        case model::EngineKind::TensorRtLlm: return EmitEngine::TensorRtLlm;
        case model::EngineKind::LlamaCpp: return EmitEngine::LlamaCpp;
        }
    }
    throw UsageError("--emit '" + name +
                     "': give an engine: vllm, sglang, tensorrt-llm or llama.cpp");
}

std::optional<EmitEngine> emit_option(const std::string& value) {
    if (value.empty())
        return std::nullopt;
    return parse_emit_engine(value);
}

const char* to_string(EmitEngine e) {
    switch (e) {
    case EmitEngine::Vllm: return "vllm";
    case EmitEngine::Sglang: return "sglang";
    case EmitEngine::TensorRtLlm: return "tensorrt-llm";
    case EmitEngine::LlamaCpp: return "llama.cpp";
    }
    return "vllm";
}

namespace {

std::string model_id(const model::Deployment& d) {
    return d.model.hf_id.empty() ? d.model.name : d.model.hf_id;
}

model::EngineKind kind_of(EmitEngine e) {
    switch (e) {
    case EmitEngine::Vllm: return model::EngineKind::Vllm;
    case EmitEngine::Sglang: return model::EngineKind::Sglang;
    case EmitEngine::TensorRtLlm: return model::EngineKind::TensorRtLlm;
    case EmitEngine::LlamaCpp: return model::EngineKind::LlamaCpp;
    }
    return model::EngineKind::Vllm;
}

bool fp8_kv(const model::Deployment& d) {
    return d.prec.kv_cache.bits_per_element <= 8.0 && d.prec.kv_cache.name.starts_with("fp8");
}

/// The flag of a weight precision: quantization method, else the dtype; "" when neither.
struct WeightFlag {
    std::string quantization; ///< fp8, awq, gptq
    std::string dtype;        ///< float16, bfloat16, float32
};

WeightFlag weight_flag(const model::Deployment& d) {
    const std::string& w = d.prec.weights.name;
    if (w == "fp8")
        return {"fp8", ""};
    if (w.starts_with("awq"))
        return {"awq", ""};
    if (w.starts_with("gptq"))
        return {"gptq", ""};
    if (w == "fp16")
        return {"", "float16"};
    if (w == "bf16")
        return {"", "bfloat16"};
    if (w == "fp32")
        return {"", "float32"};
    return {};
}

} // namespace

std::string vllm_serve_command(const model::Deployment& d) {
    const model::EngineSettings e = model::resolve_engine(d);
    std::string c = "vllm serve " + model_id(d);
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
    const WeightFlag w = weight_flag(d);
    if (!w.quantization.empty()) {
        c += " --quantization " + w.quantization;
    } else if (!w.dtype.empty()) {
        c += " --dtype " + w.dtype;
    }
    if (fp8_kv(d))
        c += " --kv-cache-dtype fp8";
    if (!e.cuda_graphs)
        c += " --enforce-eager";
    return c;
}

std::string sglang_serve_command(const model::Deployment& d, const model::SchedulerConfig& sched) {
    const model::EngineSettings e = model::resolve_engine(d);
    std::string c = "python -m sglang.launch_server --model-path " + model_id(d);
    c += fmt::format(" --tp-size {}", d.par.tp);
    if (d.par.pp > 1)
        c += fmt::format(" --pp-size {}", d.par.pp);
    if (d.par.dp > 1)
        c += fmt::format(" --dp-size {}", d.par.dp);
    if (d.par.ep > 1)
        c += fmt::format(" --ep-size {}", d.par.ep);
    c += fmt::format(" --context-length {}", e.max_model_len);
    c += fmt::format(" --mem-fraction-static {:g}", e.memory_fraction);
    c += fmt::format(" --max-running-requests {}", e.max_num_seqs);
    // SGLang turns chunked prefill off with a chunk size of -1.
    c += fmt::format(" --chunked-prefill-size {}",
                     e.chunked_prefill ? e.max_num_batched_tokens : -1);
    if (e.block_size > 1)
        c += fmt::format(" --page-size {}", e.block_size);
    if (!e.prefix_caching)
        c += " --disable-radix-cache";
    const WeightFlag w = weight_flag(d);
    if (!w.quantization.empty()) {
        c += " --quantization " + w.quantization;
    } else if (!w.dtype.empty()) {
        c += " --dtype " + w.dtype;
    }
    if (fp8_kv(d))
        c += d.prec.kv_cache.name == "fp8-e5m2" ? " --kv-cache-dtype fp8_e5m2"
                                                : " --kv-cache-dtype fp8_e4m3";
    if (!e.cuda_graphs)
        c += " --disable-cuda-graph";
    if (sched.schedule_policy != model::SglangSchedulePolicy::Fcfs)
        c += fmt::format(" --schedule-policy {}", model::name_of(sched.schedule_policy));
    if (sched.schedule_conservativeness != model::SchedulerConfig{}.schedule_conservativeness)
        c += fmt::format(" --schedule-conservativeness {:g}", sched.schedule_conservativeness);
    return c;
}

std::string trtllm_serve_command(const model::Deployment& d, const model::SchedulerConfig& sched) {
    const model::EngineSettings e = model::resolve_engine(d);
    // The capacity scheduler is an LLM API option (SchedulerConfig.capacity_scheduler_policy),
    // read from the YAML of --extra_llm_api_options.
    const bool options = sched.capacity_scheduler == model::CapacityScheduler::MaxUtilization;
    std::string c = options ? "printf 'scheduler_config:\\n  capacity_scheduler_policy: "
                              "MAX_UTILIZATION\\n' > trtllm-extra-options.yaml && "
                            : "";
    c += "trtllm-serve " + model_id(d) + " --backend pytorch";
    c += fmt::format(" --tp_size {}", d.par.tp);
    c += fmt::format(" --pp_size {}", d.par.pp);
    if (d.par.ep > 1)
        c += fmt::format(" --ep_size {}", d.par.ep);
    c += fmt::format(" --max_batch_size {}", e.max_num_seqs);
    c += fmt::format(" --max_num_tokens {}", e.max_num_batched_tokens);
    c += fmt::format(" --max_seq_len {}", e.max_model_len);
    c += fmt::format(" --kv_cache_free_gpu_memory_fraction {:g}", e.memory_fraction);
    if (e.chunked_prefill)
        c += " --enable_chunked_prefill";
    if (options)
        c += " --extra_llm_api_options trtllm-extra-options.yaml";
    return c;
}

namespace {

/// The GGUF type of a weight precision: its own name for llama.cpp's types and 16/32-bit floats,
/// else the nearest by bits (q8_0 for 8-bit, q4_k_m for 4-bit).
std::string gguf_type(const model::Precision& p) {
    const std::string& n = p.name;
    if (n.starts_with("q") || n == "fp16" || n == "bf16" || n == "fp32")
        return n == "fp16" ? "f16" : n == "fp32" ? "f32" : n;
    return p.bits_per_element > 6 ? "q8_0" : "q4_k_m";
}

} // namespace

std::string llamacpp_serve_command(const model::Deployment& d) {
    const model::EngineSettings e = model::resolve_engine(d);
    const int slots = std::max(1, e.max_num_seqs);
    std::string c =
        fmt::format("llama-server -m {}-{}.gguf", d.model.name, gguf_type(d.prec.weights));
    // -c is the context of all slots together; each slot gets -c / -np.
    c += fmt::format(" -c {}", static_cast<long long>(e.max_model_len) * slots);
    c += " -ngl 999"; // every layer on the GPU, as the model assumes
    c += fmt::format(" -np {}", slots);
    c += fmt::format(" -b {} -ub {}", std::max(2048, e.max_num_batched_tokens),
                     e.max_num_batched_tokens);
    if (d.par.tp > 1)
        c += " -sm row";
    if (d.prec.kv_cache.bits_per_element <= 8.5)
        c += " -ctk q8_0 -ctv q8_0";
    return c;
}

BenchLoad bench_load(const model::Workload& w, const model::OperatingPoint& op) {
    const model::Workload r = model::analytic_request(w);
    BenchLoad b;
    b.input_tokens = r.input_tokens;
    b.output_tokens = r.output_tokens;
    b.concurrency = std::max(1, op.concurrency);
    if (op.kind == model::LoadKind::OfferedRate) {
        b.request_rate = op.requests_per_s;
    }
    return b;
}

LaunchCommands launch_commands(EmitEngine engine, const model::Deployment& d, const BenchLoad& load,
                               const model::SchedulerConfig& sched) {
    LaunchCommands out;
    out.engine = to_string(engine);
    model::Deployment x = d;
    const model::EngineKind kind = kind_of(engine);
    if (d.engine.kind != kind) {
        // Settings that mean different things per engine take the target engine's defaults.
        x.engine.kind = kind;
        x.engine.gpu_memory_utilization.reset();
        x.engine.block_size.reset();
        if (engine == EmitEngine::LlamaCpp && !d.engine.max_num_seqs) {
            // llama.cpp serves one slot by default: give each benchmark client its own.
            x.engine.max_num_seqs = std::max(1, load.concurrency);
        }
        if (load.input_tokens > 0 && load.output_tokens > 0) {
            // TensorRT-LLM: trtllm-bench's max batch size and max num tokens for this load.
            model::Workload w;
            w.input_tokens = load.input_tokens;
            w.output_tokens = load.output_tokens;
            x = model::with_load_engine_defaults(x, w);
        }
        out.notes.push_back(fmt::format(
            "the scenario models {}; the memory fraction and page size are {}'s defaults "
            "(gpuplan estimate with --engine {} shows its figures)",
            model::to_string(d.engine.kind), out.engine, out.engine));
    }
    int port = 8000;
    switch (engine) {
    case EmitEngine::Vllm: out.serve = vllm_serve_command(x); break;
    case EmitEngine::Sglang:
        out.serve = sglang_serve_command(x, sched);
        port = 30000;
        break;
    case EmitEngine::TensorRtLlm:
        out.serve = trtllm_serve_command(x, sched);
        if (x.par.dp > 1) {
            out.notes.push_back(fmt::format(
                "trtllm-serve runs one replica: start {} of them (one per {} GPUs) behind a load "
                "balancer for dp {}",
                x.par.dp, x.par.tp * x.par.pp, x.par.dp));
        }
        if (fp8_kv(x) || !model::resolve_engine(x).prefix_caching ||
            !model::resolve_engine(x).cuda_graphs) {
            out.notes.push_back(
                "trtllm-serve has no flags for the KV cache dtype, block reuse or CUDA graphs: "
                "set kv_cache_config (dtype, enable_block_reuse) and cuda_graph_config in the "
                "YAML given to --config");
        }
        if (!weight_flag(x).quantization.empty()) {
            out.notes.push_back("TensorRT-LLM reads the quantization from the checkpoint: give "
                                "a " +
                                x.prec.weights.name + " checkpoint as MODEL");
        }
        break;
    case EmitEngine::LlamaCpp:
        out.serve = llamacpp_serve_command(x);
        port = 8080;
        out.notes.push_back(fmt::format("llama-server loads GGUF files: convert or download {} as "
                                        "{}-{}.gguf",
                                        model_id(x), x.model.name, gguf_type(x.prec.weights)));
        if (gguf_type(x.prec.weights) != x.prec.weights.name &&
            !(x.prec.weights.name == "fp16" || x.prec.weights.name == "fp32")) {
            out.notes.push_back(fmt::format(
                "GGUF has no {} weights: {} is the nearest type, and the estimate is for {}",
                x.prec.weights.name, gguf_type(x.prec.weights), x.prec.weights.name));
        }
        if (x.par.dp > 1) {
            out.notes.push_back(fmt::format(
                "llama-server runs one replica: start {} of them behind a load balancer",
                x.par.dp));
        }
        break;
    }
    const int c = std::max(1, load.concurrency);
    std::string bench =
        engine == EmitEngine::Vllm
            ? "vllm bench serve --backend vllm"
            : fmt::format("vllm bench serve --backend openai --base-url http://localhost:{}", port);
    bench += fmt::format(" --model {} --dataset-name random --random-input-len {} "
                         "--random-output-len {}",
                         model_id(x), load.input_tokens, load.output_tokens);
    if (load.request_rate && *load.request_rate > 0) {
        // An open loop: ten minutes of arrivals at the offered rate, at least 50 requests.
        const double n = std::clamp(*load.request_rate * 600.0, 50.0, 1e6);
        bench += fmt::format(" --request-rate {:g} --num-prompts {:.0f}", *load.request_rate, n);
    } else {
        bench += fmt::format(" --max-concurrency {} --num-prompts {}", c,
                             std::max(50, 10 * std::min(c, 100000)));
    }
    bench += " --ignore-eos --save-result";
    out.benchmark = std::move(bench);
    return out;
}

nlohmann::json launch_json(const LaunchCommands& c) {
    return {
        {"engine", c.engine}, {"command", c.serve}, {"benchmark", c.benchmark}, {"notes", c.notes}};
}

void print_launch(std::ostream& out, const LaunchCommands& c, const std::string& indent) {
    out << indent << "launch (" << c.engine << "):\n"
        << indent << "  " << c.serve << '\n'
        << indent
        << "measure (gpuplan diagnose --bench or calib validate --scenario read the "
           "result):\n"
        << indent << "  " << c.benchmark << '\n';
    for (const auto& n : c.notes) {
        out << indent << "note: " << n << '\n';
    }
}

} // namespace gpuplan::cli
