#include "cli/emit.hpp"

#include "model/engine_defaults.hpp"
#include "model/engine_rules.hpp"
#include "model/enum_names.hpp"
#include "model/error.hpp"
#include "model/memory.hpp"
#include "model/speculative.hpp"
#include "model/workload_mix.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>

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

std::string shell_quote(std::string_view word) {
    const auto safe = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
               std::string_view("@%+=:,./_-").find(c) != std::string_view::npos;
    };
    if (!word.empty() && std::all_of(word.begin(), word.end(), safe)) {
        return std::string(word);
    }
    // Inside single quotes every character is literal except ' itself, which is closed,
    // escaped and reopened (POSIX XCU 2.2.2).
    std::string out = "'";
    for (const char c : word) {
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return out + "'";
}

std::string shell_join(const std::vector<std::string>& words) {
    std::string out;
    for (const auto& w : words) {
        out += (out.empty() ? "" : " ") + shell_quote(w);
    }
    return out;
}

bool valid_hub_id(std::string_view id) {
    // huggingface_hub's REPO_ID_REGEX: (\b[\w\-.]+\b/)?\b[\w\-.]{1,96}\b, and validate_repo_id
    // refuses "--", ".." and a trailing ".git".
    const auto word = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
    };
    const auto part_ok = [&](std::string_view p, std::size_t max) {
        return !p.empty() && p.size() <= max && word(p.front()) && word(p.back()) &&
               std::all_of(p.begin(), p.end(),
                           [&](char c) { return word(c) || c == '-' || c == '.'; });
    };
    if (id.find("--") != std::string_view::npos || id.find("..") != std::string_view::npos ||
        id.ends_with(".git")) {
        return false;
    }
    const auto slash = id.find('/');
    if (slash == std::string_view::npos) {
        return part_ok(id, 96);
    }
    return part_ok(id.substr(0, slash), id.size()) && part_ok(id.substr(slash + 1), 96);
}

namespace {

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
    return d.prec.kv_cache.name.starts_with("fp8");
}

std::string num(double v) {
    return fmt::format("{:g}", v);
}

/// What the command is being built from, and what it has found it cannot say.
struct Build {
    EmitEngine engine;
    model::Deployment x;     ///< the deployment with the emitted engine's settings
    model::EngineSettings e; ///< resolve_engine(x)
    model::SchedulerConfig sched;
    std::vector<std::string> refused;
    std::vector<std::string> notes;
    std::string name() const { return to_string(engine); }
    void refuse(const std::string& key, const std::string& why) {
        refused.push_back(key + ": " + why);
    }
};

/// The checkpoint a command launches: the model's own Hub id when its format is the one
/// estimated, else the catalog's checkpoint of that format; an FP8 estimate of a 16-bit
/// checkpoint is quantized online (`--quantization fp8`) where the engine does that.
struct CheckpointChoice {
    std::string id;
    bool online_fp8 = false; ///< the engine quantizes a 16-bit checkpoint at load
    bool quantized = false;  ///< the checkpoint carries its quantization (no --quantization)
};

std::optional<CheckpointChoice> choose_checkpoint(Build& b) {
    const model::ModelSpec& m = b.x.model;
    const std::string want = model::checkpoint_format(b.x.prec.weights);
    const std::string own = model::checkpoint_format(model::checkpoint_weights(m));
    const std::string base = m.hf_id.empty() ? m.name : m.hf_id;
    if (want == own) {
        return CheckpointChoice{base, false, own != "bf16"};
    }
    for (const auto& c : m.checkpoints) {
        if (c.format == want) {
            return CheckpointChoice{c.hf_id, false, want != "bf16"};
        }
    }
    const bool online = b.engine == EmitEngine::Vllm || b.engine == EmitEngine::Sglang;
    if (want == "fp8" && own == "bf16" && online) {
        b.notes.push_back(base + " is quantized to fp8 at load (online quantization), as " +
                          "the estimate's fp8 weights; the catalog knows no fp8 checkpoint");
        return CheckpointChoice{base, true, false};
    }
    b.refuse("precision.weights", "no " + want + " checkpoint of " + m.name + " is known and " +
                                      b.name() +
                                      (online && want != "fp8" ? " cannot quantize to it at load"
                                                               : " does not quantize at load") +
                                      ": give its Hub id (estimate --model ORG/NAME) or plan the " +
                                      own + " weights of " + base);
    return std::nullopt;
}

/// The model argument: a checkpoint id, checked against the Hub's grammar.
std::optional<CheckpointChoice> checked_checkpoint(Build& b) {
    auto c = choose_checkpoint(b);
    if (c && !valid_hub_id(c->id)) {
        b.refuse("model", "'" + c->id +
                              "' is not a Hugging Face repository id (ORG/NAME: letters, digits, "
                              "'-', '_' and '.', at most 96 characters in NAME)");
        return std::nullopt;
    }
    if (c && b.x.model.hf_id.empty()) {
        b.notes.push_back("the model has no Hugging Face id: " + c->id +
                          " must be a local checkpoint folder");
    }
    return c;
}

std::string dtype_of(const model::Precision& w) {
    if (w.name == "fp16") {
        return "float16";
    }
    return w.name == "fp32" ? "float32" : "bfloat16";
}

void add(std::vector<std::string>& argv, std::initializer_list<std::string> words) {
    argv.insert(argv.end(), words.begin(), words.end());
}

// ---- settings that only some engines take --------------------------------------------------

/// The scheduler knobs: each engine's own, and a refusal for a knob set away from its default
/// on an engine that has no such knob.
void scheduler_flags(Build& b, std::vector<std::string>& argv) {
    const model::SchedulerConfig& s = b.sched;
    const model::SchedulerConfig def;
    if (s.batching == model::BatchingMode::Static) {
        b.refuse("engine.batching", "static batching is not a mode of any of the engines");
    }
    if (s.preemption_mode == model::PreemptionMode::Swap) {
        b.refuse("engine.preemption_mode", "swap preemption was removed with vLLM's V0 engine; "
                                           "the engines recompute preempted requests");
    }
    if (s.policy == model::SchedulingPolicy::Priority) {
        if (b.engine == EmitEngine::Vllm) {
            add(argv, {"--scheduling-policy", "priority"});
        } else {
            b.refuse("engine.scheduling_policy",
                     "priority scheduling is written for vllm (--scheduling-policy) only");
        }
    }
    if (s.schedule_policy != def.schedule_policy ||
        s.schedule_conservativeness != def.schedule_conservativeness) {
        if (b.engine == EmitEngine::Sglang) {
            if (s.schedule_policy != def.schedule_policy) {
                add(argv, {"--schedule-policy", model::name_of(s.schedule_policy)});
            }
            if (s.schedule_conservativeness != def.schedule_conservativeness) {
                add(argv, {"--schedule-conservativeness", num(s.schedule_conservativeness)});
            }
        } else {
            b.refuse("engine.schedule_policy", "the schedule policy and conservativeness are "
                                               "sglang's knobs");
        }
    }
    if (s.capacity_scheduler != def.capacity_scheduler && b.engine != EmitEngine::TensorRtLlm) {
        b.refuse("engine.capacity_scheduler", "the capacity scheduler is tensorrt-llm's knob");
    }
}

/// The draft model's Hub id, checked against the Hub's grammar; nullopt (refused) otherwise.
std::optional<std::string> draft_id(Build& b) {
    const auto& sp = *b.x.engine.speculative;
    if (!sp.draft || sp.draft->hf_id.empty()) {
        b.refuse("engine.speculative.draft_model", "the draft model has no Hub id");
        return std::nullopt;
    }
    if (!valid_hub_id(sp.draft->hf_id)) {
        b.refuse("engine.speculative.draft_model",
                 "'" + sp.draft->hf_id + "' is not a Hugging Face repository id");
        return std::nullopt;
    }
    return sp.draft->hf_id;
}

/// vLLM's --speculative-config (vllm/config/speculative.py: `method`, `model`,
/// `num_speculative_tokens`; a draft model's method is inferred from `model`).
void vllm_speculative(Build& b, std::vector<std::string>& argv) {
    const auto& sp = *b.x.engine.speculative;
    const int k = model::speculative_tokens(sp);
    nlohmann::json j;
    switch (sp.method) {
    case model::SpeculativeMethod::DraftModel:
        if (const auto id = draft_id(b)) {
            j["model"] = *id;
            break;
        }
        return;
    case model::SpeculativeMethod::Ngram: j["method"] = "ngram"; break;
    case model::SpeculativeMethod::Mtp: j["method"] = "mtp"; break;
    case model::SpeculativeMethod::Eagle:
        b.refuse("engine.speculative.method",
                 "eagle needs the EAGLE head's Hub id, which the scenario does not name");
        return;
    }
    j["num_speculative_tokens"] = k;
    add(argv, {"--speculative-config", j.dump()});
}

/// SGLang's --speculative-algorithm NEXTN / NGRAM / STANDALONE with k steps of one draft token
/// each (--speculative-eagle-topk 1, k + 1 verified tokens).
void sglang_speculative(Build& b, std::vector<std::string>& argv) {
    const auto& sp = *b.x.engine.speculative;
    const int k = model::speculative_tokens(sp);
    switch (sp.method) {
    case model::SpeculativeMethod::DraftModel:
        if (const auto id = draft_id(b)) {
            add(argv,
                {"--speculative-algorithm", "STANDALONE", "--speculative-draft-model-path", *id});
            break;
        }
        return;
    case model::SpeculativeMethod::Ngram: add(argv, {"--speculative-algorithm", "NGRAM"}); break;
    case model::SpeculativeMethod::Mtp: add(argv, {"--speculative-algorithm", "NEXTN"}); break;
    case model::SpeculativeMethod::Eagle:
        b.refuse("engine.speculative.method",
                 "eagle needs the EAGLE head's Hub id, which the scenario does not name");
        return;
    }
    add(argv, {"--speculative-num-steps", std::to_string(k), "--speculative-eagle-topk", "1",
               "--speculative-num-draft-tokens", std::to_string(k + 1)});
}

/// Speculative decoding, LoRA, the KV memory cap, KV offload and two-batch overlap: the flags
/// of vLLM and SGLang, a refusal naming the setting elsewhere.
void feature_flags(Build& b, std::vector<std::string>& argv) {
    const model::EngineConfig& c = b.x.engine;
    const bool vllm = b.engine == EmitEngine::Vllm;
    const bool sglang = b.engine == EmitEngine::Sglang;
    if (c.speculative) {
        if (vllm) {
            vllm_speculative(b, argv);
        } else if (sglang) {
            sglang_speculative(b, argv);
        } else {
            b.refuse("engine.speculative", b.name() + "'s speculative decoding is not written");
        }
    }
    if (c.lora) {
        const auto& l = *c.lora;
        if (vllm) {
            add(argv, {"--enable-lora", "--max-loras", std::to_string(l.max_loras),
                       "--max-lora-rank", std::to_string(model::max_lora_rank(l)),
                       "--max-cpu-loras", std::to_string(model::max_cpu_loras(l))});
        } else if (sglang) {
            add(argv, {"--enable-lora", "--max-loras-per-batch", std::to_string(l.max_loras),
                       "--max-lora-rank", std::to_string(model::max_lora_rank(l))});
        } else {
            b.refuse("engine.lora", b.name() + "'s multi-lora serving is not written");
        }
        if (vllm || sglang) {
            b.notes.push_back(fmt::format("add the {} adapters with --lora-modules NAME=PATH "
                                          "(--lora-paths for sglang)",
                                          l.adapters));
        }
    }
    if (c.kv_cache_memory) {
        if (vllm) {
            add(argv, {"--kv-cache-memory-bytes",
                       fmt::format("{:.0f}", std::floor(c.kv_cache_memory->si()))});
        } else {
            b.refuse("engine.kv_cache_memory", "a fixed kv pool in bytes is vllm's "
                                               "--kv-cache-memory-bytes only");
        }
    }
    if (c.kv_offload) {
        const auto& o = *c.kv_offload;
        const bool nvme = o.nvme && o.nvme->si() > 0;
        if (sglang && !nvme) {
            add(argv, {"--enable-hierarchical-cache"});
            if (o.host) {
                add(argv, {"--hicache-size", fmt::format("{:.0f}", std::ceil(o.host->si() / 1e9))});
            } else {
                add(argv, {"--hicache-ratio", "2"});
            }
        } else {
            b.refuse("engine.kv_offload",
                     nvme ? "an nvme tier needs a storage back end gpuplan does not write"
                          : b.name() + "'s kv offload is not written (sglang: "
                                       "--enable-hierarchical-cache)");
        }
    }
    if (c.ep_overlap && *c.ep_overlap > 0) {
        if (vllm) {
            add(argv, {"--enable-dbo"});
        } else if (sglang) {
            add(argv, {"--enable-two-batch-overlap"});
        } else {
            b.refuse("engine.ep_overlap", "two-batch overlap is vllm's --enable-dbo and sglang's "
                                          "--enable-two-batch-overlap");
        }
    }
}

// ---- one function per engine ---------------------------------------------------------------

std::string vllm_serve(Build& b, const CheckpointChoice& ck) {
    const model::Parallelism& p = b.x.par;
    const model::EngineSettings& e = b.e;
    std::vector<std::string> a{"vllm", "serve", ck.id};
    add(a, {"--tensor-parallel-size", std::to_string(p.tp)});
    if (p.pp > 1) {
        add(a, {"--pipeline-parallel-size", std::to_string(p.pp)});
    }
    if (p.dp > 1) {
        add(a, {"--data-parallel-size", std::to_string(p.dp)});
    }
    if (p.ep > 1) {
        add(a, {"--enable-expert-parallel"});
    }
    add(a, {"--max-model-len", std::to_string(e.max_model_len), "--gpu-memory-utilization",
            num(e.memory_fraction), "--max-num-seqs", std::to_string(e.max_num_seqs),
            "--max-num-batched-tokens", std::to_string(e.max_num_batched_tokens)});
    add(a, {e.chunked_prefill ? "--enable-chunked-prefill" : "--no-enable-chunked-prefill"});
    add(a, {e.prefix_caching ? "--enable-prefix-caching" : "--no-enable-prefix-caching"});
    // A quantized checkpoint names its method in config.json and vLLM picks the kernel (Marlin
    // where it can): --quantization would force the named, slower one.
    if (ck.online_fp8) {
        add(a, {"--quantization", "fp8"});
    } else if (!ck.quantized) {
        add(a, {"--dtype", dtype_of(b.x.prec.weights)});
    }
    if (fp8_kv(b.x)) {
        add(a, {"--kv-cache-dtype", b.x.prec.kv_cache.name == "fp8-e5m2" ? "fp8_e5m2" : "fp8"});
    }
    if (!e.cuda_graphs) {
        add(a, {"--enforce-eager"});
    }
    feature_flags(b, a);
    scheduler_flags(b, a);
    return shell_join(a);
}

std::string sglang_serve(Build& b, const CheckpointChoice& ck) {
    const model::Parallelism& p = b.x.par;
    const model::EngineSettings& e = b.e;
    std::vector<std::string> a{"python", "-m", "sglang.launch_server", "--model-path", ck.id};
    add(a, {"--tp-size", std::to_string(model::launcher_tp(model::EngineKind::Sglang, p))});
    if (p.pp > 1) {
        add(a, {"--pp-size", std::to_string(p.pp)});
    }
    if (p.dp > 1) {
        add(a, {"--dp-size", std::to_string(p.dp)});
    }
    if (p.dp > 1 && p.ep > 1) {
        add(a, {"--enable-dp-attention"}); // attention data parallel inside one tp group
    }
    if (p.ep > 1) {
        add(a, {"--ep-size", std::to_string(p.ep)});
    }
    add(a, {"--context-length", std::to_string(e.max_model_len), "--mem-fraction-static",
            num(e.memory_fraction), "--max-running-requests", std::to_string(e.max_num_seqs)});
    // SGLang turns chunked prefill off with a chunk size of -1.
    add(a, {"--chunked-prefill-size",
            std::to_string(e.chunked_prefill ? e.max_num_batched_tokens : -1)});
    if (e.block_size > 1) {
        add(a, {"--page-size", std::to_string(e.block_size)});
    }
    if (!e.prefix_caching) {
        add(a, {"--disable-radix-cache"});
    }
    if (ck.online_fp8) {
        add(a, {"--quantization", "fp8"});
    } else if (!ck.quantized) {
        add(a, {"--dtype", dtype_of(b.x.prec.weights)});
    }
    if (fp8_kv(b.x)) {
        add(a,
            {"--kv-cache-dtype", b.x.prec.kv_cache.name == "fp8-e5m2" ? "fp8_e5m2" : "fp8_e4m3"});
    }
    if (!e.cuda_graphs) {
        // disable_cuda_graph has no flag of its own (no_cli); one per phase does it.
        add(a, {"--disable-prefill-cuda-graph", "--disable-decode-cuda-graph"});
    }
    feature_flags(b, a);
    scheduler_flags(b, a);
    return shell_join(a);
}

/// The LLM API options trtllm-serve has no flags for, as YAML lines for --extra_llm_api_options
/// (tensorrt_llm/llmapi/llm_args.py: enable_attention_dp, KvCacheConfig dtype and
/// enable_block_reuse, cuda_graph_config, SchedulerConfig capacity_scheduler_policy).
std::vector<std::string> trtllm_options(const Build& b) {
    std::vector<std::string> y;
    if (b.x.par.dp > 1 && b.x.par.ep > 1) {
        y.emplace_back("enable_attention_dp: true");
    }
    if (fp8_kv(b.x) || !b.e.prefix_caching) {
        y.emplace_back("kv_cache_config:");
        if (fp8_kv(b.x)) {
            y.emplace_back("  dtype: fp8");
        }
        if (!b.e.prefix_caching) {
            y.emplace_back("  enable_block_reuse: false");
        }
    }
    if (!b.e.cuda_graphs) {
        y.emplace_back("cuda_graph_config: null");
    }
    if (b.sched.capacity_scheduler == model::CapacityScheduler::MaxUtilization) {
        y.emplace_back("scheduler_config:");
        y.emplace_back("  capacity_scheduler_policy: MAX_UTILIZATION");
    }
    return y;
}

std::string trtllm_serve(Build& b, const CheckpointChoice& ck) {
    const model::Parallelism& p = b.x.par;
    const model::EngineSettings& e = b.e;
    const std::vector<std::string> yaml = trtllm_options(b);
    std::vector<std::string> a{"trtllm-serve", ck.id, "--backend", "pytorch"};
    add(a, {"--tp_size", std::to_string(model::launcher_tp(model::EngineKind::TensorRtLlm, p)),
            "--pp_size", std::to_string(p.pp)});
    if (p.ep > 1) {
        add(a, {"--ep_size", std::to_string(p.ep)});
    }
    add(a,
        {"--max_batch_size", std::to_string(e.max_num_seqs), "--max_num_tokens",
         std::to_string(e.max_num_batched_tokens), "--max_seq_len", std::to_string(e.max_model_len),
         "--kv_cache_free_gpu_memory_fraction", num(e.memory_fraction)});
    if (e.chunked_prefill) {
        add(a, {"--enable_chunked_prefill"});
    }
    feature_flags(b, a);
    scheduler_flags(b, a);
    if (yaml.empty()) {
        return shell_join(a);
    }
    add(a, {"--extra_llm_api_options", "trtllm-extra-options.yaml"});
    std::vector<std::string> printf_words{"printf", "%s\\n"};
    printf_words.insert(printf_words.end(), yaml.begin(), yaml.end());
    return shell_join(printf_words) + " > trtllm-extra-options.yaml && " + shell_join(a);
}

/// The GGUF type of a weight precision: llama.cpp's own types as named, 16/32-bit floats as
/// f16, bf16, f32.
std::string gguf_type(const model::Precision& p) {
    if (p.name == "fp16") {
        return "f16";
    }
    return p.name == "fp32" ? "f32" : p.name;
}

std::string llamacpp_serve(Build& b) {
    const model::EngineSettings& e = b.e;
    const int slots = std::max(1, e.max_num_seqs);
    const std::string type = gguf_type(b.x.prec.weights);
    const std::string file = b.x.model.name + "-" + type + ".gguf";
    std::vector<std::string> a{"llama-server", "-m", file};
    // -c is the context of all slots together; each slot gets -c / -np.
    add(a, {"-c", std::to_string(static_cast<long long>(e.max_model_len) * slots), "-ngl", "999",
            "-np", std::to_string(slots), "-b",
            std::to_string(std::max(2048, e.max_num_batched_tokens)), "-ub",
            std::to_string(e.max_num_batched_tokens)});
    if (b.x.par.tp > 1) {
        add(a, {"-sm", "row"});
    }
    if (b.x.prec.kv_cache.bits_per_element <= 8.5) {
        add(a, {"-ctk", "q8_0", "-ctv", "q8_0"});
    }
    std::string repo;
    for (const auto& c : b.x.model.checkpoints) {
        repo = c.format == "gguf" ? c.hf_id : repo;
    }
    const std::string id = b.x.model.hf_id.empty() ? b.x.model.name : b.x.model.hf_id;
    const std::string format = model::checkpoint_format(b.x.prec.weights);
    if (format == "gguf" || format == "bf16") { // else refused by the engine rules
        b.notes.push_back(repo.empty() || format == "bf16"
                              ? "llama-server loads GGUF files: convert " + id + " to " + file +
                                    " (llama.cpp's convert_hf_to_gguf.py, then llama-quantize)"
                              : "llama-server loads GGUF files: download the " + type +
                                    " file of " + repo + " as " + file);
    }
    feature_flags(b, a);
    scheduler_flags(b, a);
    return shell_join(a);
}

/// A deployment estimated for another engine, with the emitted engine's settings: the limits
/// stay the estimate's; the memory fraction and page size, which mean different things per
/// engine, become the emitted engine's defaults.
model::Deployment for_engine(const model::Deployment& d, EmitEngine engine, const BenchLoad& load,
                             std::vector<std::string>& notes) {
    const model::EngineKind kind = kind_of(engine);
    if (d.engine.kind == kind) {
        return d;
    }
    const model::EngineSettings e0 = model::resolve_engine(d);
    model::Deployment x = d;
    x.engine.kind = kind;
    x.engine.gpu_memory_utilization.reset();
    x.engine.block_size.reset();
    x.engine.max_model_len = e0.max_model_len;
    x.engine.max_num_seqs = e0.max_num_seqs;
    x.engine.max_num_batched_tokens = e0.max_num_batched_tokens;
    x.engine.enable_chunked_prefill = e0.chunked_prefill;
    x.engine.enable_prefix_caching = e0.prefix_caching;
    std::string limits = "the limits are the estimate's";
    if (engine == EmitEngine::Sglang && d.engine.gpu_memory_utilization) {
        // A fraction the scenario (or a diagnose fix) set: SGLang's static fraction is weights
        // plus the KV pool over the memory, so the one that holds the pool the estimate sized.
        try {
            const model::MemoryEstimate m = model::estimate_memory(d);
            if (m.fits && m.capacity.si() > 0) {
                const double f = (m.weights + m.draft_weights + m.kv_budget) / m.capacity;
                x.engine.gpu_memory_utilization = std::round(f * 1000.0) / 1000.0;
                limits += fmt::format(", --mem-fraction-static {:g} holds the weights and the "
                                      "kv pool the estimate sized",
                                      *x.engine.gpu_memory_utilization);
            }
        } catch (const InvalidArgument&) {
            // check_launchable reports a deployment that does not validate.
        }
    }
    if (engine == EmitEngine::LlamaCpp) {
        // llama.cpp has no prefix cache across slots and prompts in n_batch pieces; a slot per
        // benchmark client unless the scenario set the sequences.
        x.engine.enable_prefix_caching.reset();
        x.engine.enable_chunked_prefill.reset();
        if (!d.engine.max_num_seqs) {
            x.engine.max_num_seqs = std::max(1, load.concurrency);
            limits = "one slot per benchmark client";
        }
    }
    notes.push_back(fmt::format("the scenario models {}; {}, the other engine settings are {}'s "
                                "defaults (gpuplan estimate with --engine {} shows its figures)",
                                model::to_string(d.engine.kind), limits, to_string(engine),
                                to_string(engine)));
    return x;
}

/// Refusals for a deployment the emitted engine cannot start: its rules (model/engine_rules)
/// and, for a deployment estimated for another engine, the memory arithmetic of this one.
void check_launchable(Build& b, const model::Deployment& d) {
    for (const auto& p : model::launch_problems(kind_of(b.engine), b.x)) {
        b.refuse(p.key, p.reason);
    }
    if (d.engine.kind == b.x.engine.kind || !b.refused.empty()) {
        return;
    }
    try {
        const model::MemoryEstimate m = model::estimate_memory(b.x);
        if (!m.fits) {
            b.refuse("engine", "under " + b.name() + "'s own memory arithmetic it does not fit" +
                                   (m.reasons.empty() ? std::string() : ": " + m.reasons.front()));
        }
    } catch (const InvalidArgument& e) {
        b.refuse("engine", e.what());
    }
}

std::string benchmark_command(EmitEngine engine, const std::string& model, const BenchLoad& load) {
    std::vector<std::string> a{"vllm", "bench", "serve", "--backend"};
    if (engine == EmitEngine::Vllm) {
        a.emplace_back("vllm");
    } else {
        const int port = engine == EmitEngine::Sglang     ? 30000
                         : engine == EmitEngine::LlamaCpp ? 8080
                                                          : 8000;
        add(a, {"openai", "--base-url", fmt::format("http://localhost:{}", port)});
    }
    // A prompt of the random dataset is --random-prefix-len shared tokens, then
    // --random-input-len of its own.
    add(a, {"--model", model, "--dataset-name", "random", "--random-input-len",
            std::to_string(load.input_tokens - load.prefix_tokens), "--random-output-len",
            std::to_string(load.output_tokens)});
    if (load.prefix_tokens > 0) {
        add(a, {"--random-prefix-len", std::to_string(load.prefix_tokens)});
    }
    if (load.range_ratio > 0) {
        add(a, {"--random-range-ratio", fmt::format("{:.3g}", load.range_ratio)});
    }
    const int c = std::max(1, load.concurrency);
    if (load.request_rate && *load.request_rate > 0) {
        // An open loop: ten minutes of arrivals at the offered rate, at least 50 requests.
        const double n = std::clamp(*load.request_rate * 600.0, 50.0, 1e6);
        add(a,
            {"--request-rate", num(*load.request_rate), "--num-prompts", fmt::format("{:.0f}", n)});
        if (load.burstiness != 1) {
            add(a, {"--burstiness", fmt::format("{:.3g}", load.burstiness)});
        }
    } else {
        add(a, {"--max-concurrency", std::to_string(c), "--num-prompts",
                std::to_string(std::max(50, 10 * std::min(c, 100000)))});
    }
    add(a, {"--ignore-eos", "--save-result"});
    return shell_join(a);
}

} // namespace

namespace {

/// vLLM's random dataset draws lengths uniformly in [L(1 − r), L(1 + r)], whose standard
/// deviation is L r / √3: the r of a distribution with the same mean and deviation.
double range_ratio(const model::LengthDistribution& d) {
    const double mean = model::mean_length(d);
    double sd = 0;
    switch (d.kind) {
    case model::LengthKind::Fixed: break;
    case model::LengthKind::Uniform: sd = (d.max - d.min) / std::sqrt(12.0); break;
    default: sd = d.stddev; break;
    }
    return mean > 0 ? std::min(1.0, std::sqrt(3.0) * sd / mean) : 0.0;
}

} // namespace

BenchLoad bench_load(const model::Workload& w, const model::OperatingPoint& op) {
    const model::Workload r = model::analytic_request(w);
    BenchLoad b;
    b.input_tokens = r.input_tokens;
    b.output_tokens = r.output_tokens;
    b.concurrency = std::max(1, op.concurrency);
    if (op.kind == model::LoadKind::OfferedRate) {
        b.request_rate = op.requests_per_s;
    }
    if (const auto m = model::mean_request(w)) {
        b.prefix_tokens = std::clamp(m->cached_prefix, 0, std::max(0, b.input_tokens - 1));
    }
    if (w.classes.size() == 1) {
        b.range_ratio = range_ratio(w.classes.front().input);
        if (w.classes.front().prefix_groups > 1 && b.prefix_tokens > 0) {
            b.notes.push_back(fmt::format("vllm bench serve's random prompts share one prefix; "
                                          "the workload has {} prefix groups",
                                          w.classes.front().prefix_groups));
        }
    } else if (w.classes.size() > 1) {
        b.notes.push_back(fmt::format("the benchmark sends the mean request of the workload's "
                                      "{} classes",
                                      w.classes.size()));
    }
    if (w.arrival.kind == model::ArrivalKind::Gamma && w.arrival.cv > 0) {
        b.burstiness = 1.0 / (w.arrival.cv * w.arrival.cv);
    }
    if (w.arrival.kind == model::ArrivalKind::Trace) {
        b.notes.push_back("the scenario replays a trace; the benchmark sends random prompts of "
                          "the trace's mean lengths at its rate");
    }
    return b;
}

LaunchCommands launch_commands(EmitEngine engine, const model::Deployment& d, const BenchLoad& load,
                               const model::SchedulerConfig& sched) {
    LaunchCommands out;
    out.engine = to_string(engine);
    Build b{engine, for_engine(d, engine, load, out.notes), {}, sched, {}, {}};
    b.e = model::resolve_engine(b.x);
    check_launchable(b, d);
    std::string model_arg;
    if (engine == EmitEngine::LlamaCpp) {
        out.serve = llamacpp_serve(b);
        model_arg = b.x.model.hf_id.empty() ? b.x.model.name : b.x.model.hf_id;
        if (!valid_hub_id(model_arg)) {
            b.refuse("model", "'" + model_arg + "' is not a Hugging Face repository id");
        }
    } else if (const auto ck = checked_checkpoint(b)) {
        model_arg = ck->id;
        switch (engine) {
        case EmitEngine::Vllm: out.serve = vllm_serve(b, *ck); break;
        case EmitEngine::Sglang: out.serve = sglang_serve(b, *ck); break;
        case EmitEngine::TensorRtLlm: out.serve = trtllm_serve(b, *ck); break;
        case EmitEngine::LlamaCpp: break;
        }
    }
    if ((engine == EmitEngine::TensorRtLlm || engine == EmitEngine::LlamaCpp) && b.x.par.dp > 1 &&
        b.x.par.ep <= 1) {
        b.notes.push_back(fmt::format("{} runs one replica: start {} of them (one per {} GPUs) "
                                      "behind a load balancer for dp {}",
                                      out.engine, b.x.par.dp, b.x.par.tp * b.x.par.pp, b.x.par.dp));
    }
    out.notes.insert(out.notes.end(), b.notes.begin(), b.notes.end());
    out.notes.insert(out.notes.end(), load.notes.begin(), load.notes.end());
    if (!b.refused.empty()) {
        out.refused = std::move(b.refused);
        out.serve.clear();
        return out;
    }
    out.benchmark = benchmark_command(engine, model_arg, load);
    return out;
}

nlohmann::json launch_json(const LaunchCommands& c) {
    const bool refused = !c.refused.empty();
    return {{"engine", c.engine},
            {"command", refused ? nlohmann::json(nullptr) : nlohmann::json(c.serve)},
            {"benchmark", refused ? nlohmann::json(nullptr) : nlohmann::json(c.benchmark)},
            {"notes", c.notes},
            {"refused", c.refused}};
}

void print_launch(std::ostream& out, const LaunchCommands& c, const std::string& indent) {
    if (!c.refused.empty()) {
        out << indent << "launch (" << c.engine << "): not emitted, it would not run what was "
            << "estimated:\n";
        for (const auto& r : c.refused) {
            out << indent << "  refused: " << r << '\n';
        }
        for (const auto& n : c.notes) {
            out << indent << "note: " << n << '\n';
        }
        return;
    }
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
