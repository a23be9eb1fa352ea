#include "cli/scenario_options.hpp"

#include "hwdb/model_resolver.hpp"
#include "hwdb/profile_loader.hpp"
#include "hwdb/scenario_loader.hpp"
#include "model/engine_defaults.hpp"
#include "model/error.hpp"
#include "model/operating_point.hpp"

#include <cmath>
#include <exception>
#include <string>
#include <tuple>

namespace gpuplan::cli {

int parse_token_count(const std::string& text, const char* flag) {
    // vLLM's human_readable_int (vllm/engine/arg_utils.py): a lowercase suffix is decimal
    // ("8k" = 8000, "25.6k" = 25600), an uppercase one binary ("8K" = 8192, whole numbers only).
    const std::string hint =
        std::string("--") + flag +
        " takes a whole number of tokens such as 8192, 8k (8000) or 8K (8192), got '" + text + "'";
    std::size_t used = 0;
    double number = 0;
    try {
        number = std::stod(text, &used);
    } catch (const std::exception&) {
        throw UsageError(hint);
    }
    const std::string suffix = text.substr(used);
    double scale = 1;
    if (suffix == "k" || suffix == "m") {
        scale = suffix == "k" ? 1e3 : 1e6;
    } else if (suffix == "K" || suffix == "M") {
        if (number != std::floor(number)) {
            throw UsageError(hint + "; a binary suffix (K, M) takes a whole number, as in vLLM");
        }
        scale = suffix == "K" ? 1024 : 1024 * 1024;
    } else if (!suffix.empty() || number != std::floor(number)) {
        throw UsageError(hint);
    }
    const double tokens = std::floor(number * scale);
    if (!(tokens >= 1) || tokens > static_cast<double>(1 << 28)) {
        throw UsageError(std::string("--") + flag + " must be from 1 to " +
                         std::to_string(1 << 28) + " tokens, got '" + text + "'");
    }
    return static_cast<int>(tokens);
}

void add_scenario_options(po::options_description& desc, ScenarioFlags& f) {
    // clang-format off
    desc.add_options()
        ("file", po::value(&f.file), "scenario YAML (flags override it)")
        ("model", po::value(&f.model), "catalog model or Hugging Face id, e.g. llama-3.1-70b, Qwen/Qwen2.5-72B-Instruct-AWQ (default weights: the checkpoint's)")
        ("gpu", po::value(&f.gpu), "hwdb accelerator, e.g. h100-sxm")
        ("node", po::value(&f.node), "hwdb server, e.g. dgx-h100 (sets links and GPUs per node)")
        ("gpus", po::value<int>()->notifier([&f](int v) { f.gpus = v; }), "all GPUs (default tp x pp)")
        ("tp", po::value<int>()->notifier([&f](int v) { f.tp = v; }), "tensor parallel size")
        ("pp", po::value<int>()->notifier([&f](int v) { f.pp = v; }), "pipeline parallel size")
        ("ep", po::value<int>()->notifier([&f](int v) { f.ep = v; }), "expert parallel size")
        ("weights", po::value(&f.weights), "weight precision: bf16, fp8, int8, awq-int4, gptq-int4, q4_k_m, ...")
        ("kv", po::value(&f.kv), "KV cache precision: bf16, fp8, ...")
        ("activations", po::value(&f.activations), "activation precision")
        ("max-model-len", po::value<std::string>()->notifier([&f](const std::string& v) { f.max_model_len = parse_token_count(v, "max-model-len"); }), "longest sequence, tokens: 8192, 8k (8000) or 8K (8192), as vLLM reads it")
        ("concurrency", po::value<int>()->notifier([&f](int v) { f.concurrency = v; }), "sequences in flight: a closed loop (default: the most the engine runs at once)")
        ("rate", po::value<double>()->notifier([&f](double v) { f.rate = v; }), "offered requests/s: an open loop (instead of --concurrency)")
        ("batch", po::value<int>()->notifier([&f](int v) { f.batch = v; }), "same as --concurrency")
        ("batch-requests", po::value<int>()->notifier([&f](int v) { f.batch_requests = v; }), "an offline batch: N requests all arriving at t = 0 (vllm bench throughput, trtllm-bench, MLPerf Offline)")
        ("input-len", po::value<int>()->notifier([&f](int v) { f.input_len = v; }), "prompt tokens per request")
        ("output-len", po::value<int>()->notifier([&f](int v) { f.output_len = v; }), "output tokens per request")
        ("engine", po::value(&f.engine), "vllm, tensorrt-llm, sglang or llama.cpp")
        ("gpu-memory-utilization", po::value<double>()->notifier([&f](double v) { f.gpu_memory_utilization = v; }), "vLLM memory fraction")
        ("max-num-seqs", po::value<int>()->notifier([&f](int v) { f.max_num_seqs = v; }), "sequences per step")
        ("max-num-batched-tokens", po::value<int>()->notifier([&f](int v) { f.max_num_batched_tokens = v; }), "token budget per step")
        ("block-size", po::value<int>()->notifier([&f](int v) { f.block_size = v; }), "tokens per KV block")
        ("enable-prefix-caching", po::value<std::string>()->notifier([&f](const std::string& v) { f.prefix_caching = v; }), "on or off")
        ("enable-chunked-prefill", po::value<std::string>()->notifier([&f](const std::string& v) { f.chunked_prefill = v; }), "on or off")
        ("enforce-eager", po::bool_switch(&f.enforce_eager), "no CUDA graphs")
        ("allow-long-context", po::bool_switch(&f.allow_long_context), "allow --max-model-len above the model's context (rope scaling; vLLM's VLLM_ALLOW_LONG_MAX_MODEL_LEN=1)")
        ("profile", po::value(&f.profile), "efficiency profile YAML (default: hwdb/profiles for the GPU)")
        ("set", po::value(&f.sets)->composing(), "override a key of the scenario FILE: --set engine.max_num_seqs=64 (repeatable)");
    // clang-format on
}

std::vector<hwdb::ScenarioOverride> parse_set_flags(const std::vector<std::string>& sets) {
    std::vector<hwdb::ScenarioOverride> out;
    for (const auto& s : sets) {
        const auto eq = s.find('=');
        if (eq == std::string::npos || eq == 0) {
            throw UsageError("--set '" + s +
                             "': write key.path=value, e.g. --set engine.max_num_seqs=64");
        }
        out.push_back({s.substr(0, eq), s.substr(eq + 1), "--set " + s});
    }
    return out;
}

namespace {

// The flags take the same ranges as the scenario file's keys (docs/scenario-schema.md), so no
// count can overflow later arithmetic (two token counts of at most 2^28 sum within an int).
void require_range(const std::optional<int>& v, const char* flag, long long max) {
    if (v && (*v <= 0 || *v > max)) {
        throw UsageError(std::string("--") + flag + " must be a whole number from 1 to " +
                         std::to_string(max) + ", got " + std::to_string(*v));
    }
}

bool on_off(const std::string& v, const char* flag) {
    if (v == "on" || v == "true" || v == "1") {
        return true;
    }
    if (v == "off" || v == "false" || v == "0") {
        return false;
    }
    throw UsageError(std::string("--") + flag + " takes 'on' or 'off', got '" + v + "'");
}

// `--gpu a100` is an alias of one part among several: say which one it picked and name the
// others that share the typed name, so the choice is not silent.
void note_alias_choice(CliContext& ctx, const std::string& typed, const std::string& chosen) {
    const std::string key = hwdb::normalize_name(typed);
    if (key == hwdb::normalize_name(chosen)) {
        return;
    }
    std::string others;
    for (const auto& a : ctx.db().accelerators()) {
        if (a.name != chosen && hwdb::normalize_name(a.name).starts_with(key)) {
            others += (others.empty() ? "" : ", ") + a.name;
        }
    }
    *ctx.err << "note: --gpu '" << typed << "' is " << chosen;
    if (!others.empty()) {
        *ctx.err << "; also named so: " << others << " (give the full name to pick one)";
    }
    *ctx.err << '\n';
}

} // namespace

model::Scenario build_scenario(CliContext& ctx, const ScenarioFlags& f) {
    constexpr long long kTokens = 1 << 28;
    for (const auto& [v, name, max] :
         {std::tuple{f.gpus, "gpus", model::kMaxGpus},
          {f.tp, "tp", model::kMaxGpus},
          {f.pp, "pp", model::kMaxGpus},
          {f.ep, "ep", model::kMaxGpus},
          {f.max_model_len, "max-model-len", kTokens},
          {f.concurrency, "concurrency", 1LL << 24},
          {f.batch, "batch", 1LL << 24},
          {f.batch_requests, "batch-requests", 1LL << 30},
          {f.input_len, "input-len", kTokens},
          {f.output_len, "output-len", kTokens},
          {f.max_num_seqs, "max-num-seqs", 1LL << 24},
          {f.max_num_batched_tokens, "max-num-batched-tokens", kTokens},
          {f.block_size, "block-size", 1LL << 16}}) {
        require_range(v, name, max);
    }
    const auto& db = ctx.db();
    model::Scenario s;
    if (!f.file.empty()) {
        s = hwdb::load_scenario(f.file, db, parse_set_flags(f.sets));
    } else if (!f.sets.empty()) {
        (void)parse_set_flags(f.sets); // a malformed --set is named first
        throw UsageError("--set changes a key of a scenario FILE; give the file, or use the "
                         "matching flag (--max-num-seqs, --concurrency, ...)");
    } else if (f.model.empty() || f.gpu.empty()) {
        throw UsageError("give a scenario FILE, or at least --model and --gpu (e.g. --model "
                         "llama-3.1-8b --gpu h100-sxm)");
    }
    auto& d = s.deployment;
    if (!f.model.empty()) {
        // Weights that followed the previous model's checkpoint follow the new one.
        const bool default_weights = d.prec.weights == model::checkpoint_weights(d.model);
        const hwdb::ResolvedModel resolved = hwdb::resolve_model(db, f.model);
        if (!resolved.note.empty()) {
            *ctx.err << "note: " << resolved.note << '\n';
        }
        d.model = resolved.spec;
        s.model_ref = f.model;
        if (f.file.empty() || default_weights) {
            d.prec.weights = model::checkpoint_weights(d.model);
        }
    }
    if (!f.gpu.empty() || !f.node.empty()) {
        hwdb::set_hardware(s, db, f.gpu.empty() ? d.gpu.name : f.gpu, f.node);
    }
    if (!f.gpu.empty()) {
        note_alias_choice(ctx, f.gpu, d.gpu.name);
    }
    if (f.tp)
        d.par.tp = *f.tp;
    if (f.pp)
        d.par.pp = *f.pp;
    if (f.ep)
        d.par.ep = *f.ep;
    // Products in 64 bits; model::validate refuses more than model::kMaxGpus below.
    const long long replica = static_cast<long long>(d.par.tp) * d.par.pp;
    if (replica > model::kMaxGpus) {
        throw UsageError("tp x pp = " + std::to_string(replica) + " is more than " +
                         std::to_string(model::kMaxGpus) + " GPUs; lower --tp or --pp");
    }
    if (f.gpus) {
        d.par.dp = model::replicas_of(*f.gpus, d.par, "--gpus " + std::to_string(*f.gpus),
                                      "change --gpus, --tp or --pp");
    } else if (f.tp || f.pp) {
        d.par.dp = f.file.empty() ? 1 : d.par.dp;
    }
    // Checked here, with the flags to change, before anything calls d.gpus().
    const long long gpus = replica * d.par.dp;
    if (gpus > model::kMaxGpus) {
        throw UsageError("tp x pp x dp = " + std::to_string(gpus) + " is more than " +
                         std::to_string(model::kMaxGpus) + " GPUs; lower --gpus, --tp or --pp");
    }
    if (!f.weights.empty())
        d.prec.weights = model::parse_precision(f.weights);
    if (!f.kv.empty())
        d.prec.kv_cache = model::parse_precision(f.kv);
    if (!f.activations.empty())
        d.prec.activations = model::parse_precision(f.activations);
    auto& e = d.engine;
    if (!f.engine.empty()) {
        const auto k = model::find_engine(f.engine);
        if (!k) {
            throw UsageError("--engine '" + f.engine +
                             "' is unknown; use vllm, tensorrt-llm, sglang or llama.cpp");
        }
        e.kind = *k;
    }
    if (f.max_model_len)
        e.max_model_len = *f.max_model_len;
    if (f.gpu_memory_utilization) {
        if (*f.gpu_memory_utilization <= 0 || *f.gpu_memory_utilization > 1) {
            throw UsageError("--gpu-memory-utilization must be in (0, 1], e.g. 0.9");
        }
        e.gpu_memory_utilization = *f.gpu_memory_utilization;
    }
    if (f.max_num_seqs)
        e.max_num_seqs = *f.max_num_seqs;
    if (f.max_num_batched_tokens)
        e.max_num_batched_tokens = *f.max_num_batched_tokens;
    if (f.block_size)
        e.block_size = *f.block_size;
    if (f.prefix_caching)
        e.enable_prefix_caching = on_off(*f.prefix_caching, "enable-prefix-caching");
    if (f.chunked_prefill)
        e.enable_chunked_prefill = on_off(*f.chunked_prefill, "enable-chunked-prefill");
    if (f.enforce_eager)
        e.cuda_graphs = false;
    if (f.allow_long_context)
        e.allow_long_context = true;
    if (static_cast<int>(f.concurrency.has_value()) + static_cast<int>(f.rate.has_value()) +
            static_cast<int>(f.batch_requests.has_value()) >
        1) {
        throw UsageError("--concurrency, --rate and --batch-requests each give the load; keep one");
    }
    if (f.batch_requests) {
        try {
            model::set_offline_batch(s.workload, *f.batch_requests);
        } catch (const InvalidArgument& err) {
            throw UsageError(std::string("--batch-requests: ") + err.what());
        }
    }
    if (f.concurrency)
        model::set_closed_loop(s.workload, *f.concurrency);
    if (f.batch)
        model::set_closed_loop(s.workload, *f.batch);
    if (f.rate) {
        if (!(*f.rate > 0) || !(*f.rate < 1e9)) {
            throw UsageError("--rate must be a number of requests/s above 0, e.g. --rate 4");
        }
        model::set_offered_rate(s.workload, *f.rate);
    }
    if (f.input_len)
        s.workload.input_tokens = *f.input_len;
    if (f.output_len)
        s.workload.output_tokens = *f.output_len;
    if (s.name.empty()) {
        s.name = d.model.name + "-on-" + std::to_string(d.gpus()) + "x-" + d.gpu.name;
    }
    model::validate(d); // InvalidArgument (an InputError) names the field and the fix
    // Engine defaults that depend on the load (TensorRT-LLM: trtllm-bench's max batch size and
    // max num tokens), resolved once here so that every command runs the same values.
    d = model::with_load_engine_defaults(d, s.workload);
    return s;
}

model::EfficiencyProfile choose_profile(CliContext& ctx, const ScenarioFlags& flags,
                                        const model::AcceleratorSpec& gpu) {
    if (!flags.profile.empty()) {
        return hwdb::load_profile(flags.profile);
    }
    if (const auto it = ctx.gpu_profiles.find(gpu.name); it != ctx.gpu_profiles.end()) {
        return it->second;
    }
    // A user's measured profile for the same GPU (a later hwdb folder) wins over the shipped one.
    const auto folders = hwdb::profile_folders(hwdb::default_folders(ctx.extra_hwdb));
    const auto found = hwdb::find_profile_for_gpu(folders, gpu);
    return ctx.gpu_profiles.emplace(gpu.name, found ? *found : model::default_profile())
        .first->second;
}

} // namespace gpuplan::cli
