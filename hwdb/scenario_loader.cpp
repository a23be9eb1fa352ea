#include "hwdb/scenario_loader.hpp"
#include "hwdb/model_resolver.hpp"

#include "hwdb/detail/failures_reader.hpp"
#include "hwdb/detail/plan_reader.hpp"
#include "hwdb/detail/power_cost_reader.hpp"
#include "hwdb/detail/spec_readers.hpp"
#include "hwdb/detail/training_reader.hpp"
#include "hwdb/detail/workload_reader.hpp"
#include "hwdb/detail/yaml_reader.hpp"
#include "hwdb/file_io.hpp"
#include "model/kv_offload.hpp"
#include "model/lora_config.hpp"
#include "model/speculative_config.hpp"
#include "model/validity.hpp"

#include <algorithm>
#include <charconv>

namespace gpuplan::hwdb {
namespace {

using detail::MapReader;
using model::Dimension;

template <class Q> std::optional<Q> opt_q(MapReader& m, const std::string& key, Dimension dim) {
    if (auto v = m.opt_quantity(key, dim)) {
        return Q(*v);
    }
    return std::nullopt;
}

std::optional<bool> opt_bool(MapReader& m, const std::string& key) {
    if (!m.has(key)) {
        (void)m.opt_string(key); // marks the key as known
        return std::nullopt;
    }
    return m.boolean_or(key, false);
}

std::optional<model::Price> opt_price(MapReader& m, const std::string& key) {
    if (!m.has(key)) {
        (void)m.opt_string(key);
        return std::nullopt;
    }
    return m.price(key);
}

// Runs a lookup that may throw InputError ("unknown ... did you mean") and relocates the error
// to the key that named the entry.
template <class F> auto at_key(MapReader& m, const std::string& key, F&& lookup) {
    try {
        return lookup();
    } catch (const ConfigError&) {
        throw;
    } catch (const InputError& e) {
        m.fail_at(key, e.what());
    }
}

model::Precision read_precision(MapReader& m, const std::string& key,
                                const model::Precision& fallback) {
    const auto text = m.opt_string(key);
    if (!text) {
        return fallback;
    }
    return at_key(m, key, [&] { return model::parse_precision(*text); });
}

model::Precisions read_precisions(std::optional<MapReader> m, const model::ModelSpec& model) {
    model::Precisions p;
    // Without precision.weights the scenario runs the checkpoint as published (models.weights).
    p.weights = model::checkpoint_weights(model);
    p.kv_cache = model::checkpoint_kv_cache(model, p.kv_cache);
    if (!m) {
        return p;
    }
    p.weights = read_precision(*m, "weights", p.weights);
    p.activations = read_precision(*m, "activations", p.activations);
    p.kv_cache = read_precision(*m, "kv_cache", p.kv_cache);
    if (m->has("embeddings")) {
        p.embeddings = read_precision(*m, "embeddings", p.weights);
    } else {
        (void)m->opt_string("embeddings");
    }
    m->finish();
    return p;
}

// The `engine.speculative` block. Ranges and consistency are model::validate's (one rule); its
// message is placed at the key it names.
model::SpeculativeConfig read_speculative(MapReader m, const Database& db) {
    model::SpeculativeConfig c;
    const std::string method = m.string("method");
    const auto found = model::value_of<model::SpeculativeMethod>(method);
    if (!found) {
        m.fail_at("method", "unknown speculative method '" + method + "'; use one of " +
                                model::names_list<model::SpeculativeMethod>());
    }
    c.method = *found;
    c.num_speculative_tokens = m.opt_integer("num_speculative_tokens", -1000000, 1000000);
    c.acceptance_rate = m.opt_number("acceptance_rate", -1e9, 1e9);
    for (const std::string& text : m.string_list("acceptance")) {
        double v = 0;
        const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec != std::errc() || ptr != text.data() + text.size()) {
            m.fail_at("acceptance", "expected a list of probabilities such as [0.8, 0.6, 0.4], "
                                    "found '" +
                                        text + "'");
        }
        c.acceptance.push_back(v);
    }
    if (const auto draft = m.opt_string("draft_model")) {
        c.draft_model = *draft;
        if (c.method == model::SpeculativeMethod::DraftModel) {
            c.draft = at_key(m, "draft_model", [&] { return resolve_model(db, *draft).spec; });
        }
    }
    try {
        model::validate(c);
    } catch (const InvalidArgument& e) {
        std::string what = e.what();
        std::string key;
        for (const char* k :
             {"num_speculative_tokens", "acceptance_rate", "acceptance", "draft_model"}) {
            if (what.rfind("engine.speculative." + std::string(k), 0) == 0) {
                key = k;
                break;
            }
        }
        if (const auto colon = what.find(": ");
            what.rfind("engine.speculative", 0) == 0 && colon != std::string::npos) {
            what = what.substr(colon + 2);
        }
        if (key.empty()) {
            m.fail_here(what);
        }
        m.fail_at(key, what);
    }
    m.finish();
    return c;
}

// A model::validate message ("engine.<block>.<key>: what") placed at the key it names, or at
// the block when the key is absent from the file (a default the message is about).
[[noreturn]] void fail_at_named_key(const MapReader& m, std::string what,
                                    const std::string& prefix) {
    std::string key;
    if (what.rfind(prefix, 0) == 0) {
        key = what.substr(prefix.size(), what.find(':') - prefix.size());
    }
    if (const auto colon = what.find(": "); colon != std::string::npos) {
        what = what.substr(colon + 2);
    }
    if (!key.empty() && m.has(key)) {
        m.fail_at(key, what);
    }
    m.fail_here(what);
}

// The `engine.kv_offload` block (model/kv_offload.hpp). Ranges are model::validate's (one rule);
// its message is placed at the key it names.
model::KvOffloadConfig read_kv_offload(MapReader m) {
    model::KvOffloadConfig c;
    c.host = detail::opt_typed<Bytes>(m, "host", Dimension::Bytes, false); // 0: no host tier
    c.nvme = detail::opt_typed<Bytes>(m, "nvme", Dimension::Bytes, false);
    c.host_bandwidth = opt_q<BytesPerSecond>(m, "host_bandwidth", Dimension::BytesPerSecond);
    c.nvme_bandwidth = opt_q<BytesPerSecond>(m, "nvme_bandwidth", Dimension::BytesPerSecond);
    try {
        model::validate(c);
    } catch (const InvalidArgument& e) {
        fail_at_named_key(m, e.what(), "engine.kv_offload.");
    }
    m.finish();
    return c;
}

// The `engine.lora` block (multi-LoRA serving, model/lora_config.hpp). Ranges and consistency
// are model::validate's (one rule); its message is placed at the key it names.
model::LoraServingConfig read_lora(MapReader m) {
    model::LoraServingConfig c;
    constexpr long long kMaxCount = 1 << 24;
    c.adapters = m.integer("adapters", 1, kMaxCount);
    c.rank = m.opt_integer("rank", 1, 1 << 16).value_or(c.rank);
    if (m.has("target_modules")) {
        c.target_modules.clear();
        for (const std::string& name : m.string_list("target_modules")) {
            const auto mod = model::value_of<model::LoraModule>(name);
            if (!mod) {
                m.fail_at("target_modules", "unknown module '" + name + "'; use any of " +
                                                model::names_list<model::LoraModule>());
            }
            c.target_modules.push_back(*mod);
        }
    }
    c.max_loras = m.opt_integer("max_loras", 1, kMaxCount).value_or(c.max_loras);
    c.max_lora_rank = m.opt_integer("max_lora_rank", 1, 1 << 16);
    c.max_cpu_loras = m.opt_integer("max_cpu_loras", 1, kMaxCount);
    c.popularity = detail::opt_enum<model::LoraPopularity>(m, "popularity").value_or(c.popularity);
    c.zipf_s = m.opt_number("zipf_s", 1e-6, 100.0).value_or(c.zipf_s);
    if (m.has("zipf_s") && c.popularity != model::LoraPopularity::Zipf) {
        m.fail_at("zipf_s", "zipf_s needs popularity: zipf; set it or remove zipf_s");
    }
    c.load_bandwidth = opt_q<BytesPerSecond>(m, "load_bandwidth", Dimension::BytesPerSecond);
    c.disk_bandwidth = opt_q<BytesPerSecond>(m, "disk_bandwidth", Dimension::BytesPerSecond);
    try {
        model::validate(c);
    } catch (const InvalidArgument& e) {
        fail_at_named_key(m, e.what(), "engine.lora.");
    }
    m.finish();
    return c;
}

model::EngineConfig read_engine(std::optional<MapReader> m, model::SchedulerConfig& sched,
                                const Database& db) {
    model::EngineConfig e;
    if (!m) {
        return e;
    }
    if (const auto kind = m->opt_string("kind")) {
        const auto k = model::find_engine(*kind);
        if (!k) {
            m->fail_at("kind", "unknown engine '" + *kind +
                                   "'; use vllm, tensorrt-llm, sglang or llama.cpp");
        }
        e.kind = *k;
    }
    constexpr long long kMaxTokens = 1 << 28;
    e.max_model_len = m->opt_integer("max_model_len", 1, kMaxTokens);
    e.gpu_memory_utilization = m->opt_number("gpu_memory_utilization", 0.01, 1.0);
    e.max_num_seqs = m->opt_integer("max_num_seqs", 1, 1 << 20);
    e.max_num_batched_tokens = m->opt_integer("max_num_batched_tokens", 1, kMaxTokens);
    e.block_size = m->opt_integer("block_size", 1, 1 << 16);
    e.enable_prefix_caching = opt_bool(*m, "enable_prefix_caching");
    e.enable_chunked_prefill = opt_bool(*m, "enable_chunked_prefill");
    e.allow_long_context = opt_bool(*m, "allow_long_context").value_or(false);
    e.cuda_graphs = !m->boolean_or("enforce_eager", false);
    if (const auto ar = m->opt_string("all_reduce")) {
        if (const auto a = model::value_of<model::AllReduceAlgorithm>(*ar)) {
            e.all_reduce = *a;
        } else {
            m->fail_at("all_reduce", "unknown algorithm '" + *ar + "'; use auto, ring or tree");
        }
    }
    e.usable_memory = opt_q<Bytes>(*m, "usable_memory", Dimension::Bytes);
    e.non_torch_memory = opt_q<Bytes>(*m, "non_torch_memory", Dimension::Bytes);
    e.cuda_graph_memory = opt_q<Bytes>(*m, "cuda_graph_memory", Dimension::Bytes);
    e.cuda_context_memory = opt_q<Bytes>(*m, "cuda_context_memory", Dimension::Bytes);
    e.activation_memory = opt_q<Bytes>(*m, "activation_memory", Dimension::Bytes);
    e.activation_workspace_factor =
        m->opt_number("activation_workspace_factor", 0.0, 100.0).value_or(1.0);
    e.kv_cache_memory = opt_q<Bytes>(*m, "kv_cache_memory", Dimension::Bytes);
    e.moe_load_imbalance = m->opt_number("moe_load_imbalance", 1.0, 1e6);
    e.ep_overlap = m->opt_number("ep_overlap", 0.0, 1.0);
    if (auto spec = m->opt_map("speculative")) {
        e.speculative = read_speculative(std::move(*spec), db);
    }
    if (auto offload = m->opt_map("kv_offload")) {
        e.kv_offload = read_kv_offload(std::move(*offload));
        if (e.enable_prefix_caching == false || e.kind == model::EngineKind::LlamaCpp) {
            m->fail_at("kv_offload", "KV offload tiers hold prefix-cache blocks, and this engine "
                                     "runs without a prefix cache; set enable_prefix_caching: "
                                     "true (not llama.cpp) or remove kv_offload");
        }
    }
    if (auto lora = m->opt_map("lora")) {
        e.lora = read_lora(std::move(*lora));
    }
    detail::read_scheduler(*m, sched); // the simulator's scheduler keys
    if (sched.preemption_mode == model::PreemptionMode::Swap &&
        (e.kind == model::EngineKind::TensorRtLlm || e.kind == model::EngineKind::Sglang)) {
        m->fail_at("preemption_mode", "preemption_mode swap is vLLM's; " +
                                          std::string(model::to_string(e.kind)) +
                                          " recomputes a preempted request, so remove the key");
    }
    if (m->has("capacity_scheduler") && e.kind != model::EngineKind::TensorRtLlm) {
        m->fail_at("capacity_scheduler", "capacity_scheduler is TensorRT-LLM's; set kind: "
                                         "tensorrt-llm or remove the key");
    }
    for (const char* key : {"schedule_policy", "schedule_conservativeness"}) {
        if (m->has(key) && e.kind != model::EngineKind::Sglang) {
            m->fail_at(key, std::string(key) + " is SGLang's; set kind: sglang or remove the key");
        }
    }
    m->finish();
    return e;
}

void read_hardware(MapReader m, const Database& db, model::Scenario& s) {
    auto& d = s.deployment;
    const std::string accelerator = m.string("accelerator");
    const std::string node = m.string_or("node", "");
    (void)at_key(m, "accelerator", [&] { return &db.accelerator(accelerator); });
    at_key(m, node.empty() ? "accelerator" : "node", [&] {
        set_hardware(s, db, accelerator, node);
        return 0;
    });
    d.par.tp = m.opt_integer("tp", 1, 4096).value_or(1);
    d.par.pp = m.opt_integer("pp", 1, 4096).value_or(1);
    d.par.ep = m.opt_integer("ep", 1, 65536).value_or(1);
    const auto dp = m.opt_integer("dp", 1, 1 << 20);
    const auto count = m.opt_integer("count", 1, 1 << 24);
    // Products in 64 bits, checked against model::kMaxGpus, so no GPU count can wrap.
    const long long replica = static_cast<long long>(d.par.tp) * d.par.pp;
    if (replica * dp.value_or(1) > model::kMaxGpus) {
        m.fail_at(dp ? "dp" : "pp", "tp × pp × dp = " + std::to_string(replica * dp.value_or(1)) +
                                        " is more than " + std::to_string(model::kMaxGpus) +
                                        " GPUs; lower tp, pp or dp");
    }
    if (dp) {
        d.par.dp = *dp;
        if (count && *count != replica * *dp) {
            m.fail_at("count", "count " + std::to_string(*count) +
                                   " is not tp × pp × dp = " + std::to_string(replica * *dp) +
                                   "; fix one of them or leave count out");
        }
    } else if (count) {
        d.par.dp = at_key(m, "count", [&] {
            return model::replicas_of(*count, d.par, "count " + std::to_string(*count),
                                      "use a multiple or change tp/pp");
        });
    }
    d.gpus_per_node = m.opt_integer("gpus_per_node", 1, 1024).value_or(d.gpus_per_node);
    if (const auto intra = m.opt_string("intra_node_link")) {
        d.intra_node_link = at_key(m, "intra_node_link", [&] { return db.interconnect(*intra); });
    }
    if (const auto inter = m.opt_string("inter_node_link")) {
        d.inter_node_link = at_key(m, "inter_node_link", [&] { return db.interconnect(*inter); });
    }
    m.finish();
}

void read_workload(std::optional<MapReader> m, model::Workload& w,
                   const std::filesystem::path& base) {
    if (!m) {
        return;
    }
    w.input_tokens = m->opt_integer("input_tokens", 1, 1 << 28).value_or(w.input_tokens);
    w.output_tokens = m->opt_integer("output_tokens", 1, 1 << 28).value_or(w.output_tokens);
    if (const auto c = m->opt_integer("concurrency", 1, 1 << 24)) {
        w.concurrency = static_cast<int>(*c);
    }
    w.requests_per_s = m->opt_number("requests_per_s", 1e-9, 1e9);
    if (const auto n = m->opt_integer("batch_requests", 1, 1 << 30)) {
        w.batch_requests = static_cast<int>(*n);
    }
    detail::read_sim_workload(*m, w, base); // the simulator's keys
    m->finish();
}

void read_slo(std::optional<MapReader> m, model::Slo& slo) {
    if (!m) {
        return;
    }
    slo.ttft = opt_q<Seconds>(*m, "ttft", Dimension::Seconds);
    slo.tpot = opt_q<Seconds>(*m, "tpot", Dimension::Seconds);
    slo.e2e = opt_q<Seconds>(*m, "e2e", Dimension::Seconds);
    slo.percentile = m->opt_number("percentile", 1, 100).value_or(99);
    m->finish();
}

void read_power(std::optional<MapReader> m, model::PowerBudget& p, model::PowerModel& pm) {
    if (!m) {
        return;
    }
    p.gpu_cap = opt_q<Watts>(*m, "gpu_cap", Dimension::Watts);
    p.node_cap = opt_q<Watts>(*m, "node_cap", Dimension::Watts);
    p.rack_budget = opt_q<Watts>(*m, "rack_budget", Dimension::Watts);
    p.pue = m->opt_number("pue", 1.0, 5.0);
    detail::read_power_model(*m, pm); // the power model's overrides
    m->finish();
}

/// The prices block. Its accelerator and node prices are for the hardware it names, else for
/// the scenario's own (already read), so that a changed GPU gets its own hwdb prices.
void read_prices(std::optional<MapReader> m, const Database& db, const model::Scenario& s,
                 model::Prices& p) {
    if (!m) {
        return;
    }
    p.gpu_hour = opt_price(*m, "gpu_hour");
    p.gpu_purchase = opt_price(*m, "gpu_purchase");
    p.electricity = opt_price(*m, "electricity");
    p.node_purchase = opt_price(*m, "node_purchase");
    if (p.gpu_hour || p.gpu_purchase || p.node_purchase) {
        p.accelerator = s.deployment.gpu.name;
        p.node = p.node_purchase ? s.node_ref : "";
    }
    if (const auto acc = m->opt_string("accelerator")) {
        p.accelerator = at_key(*m, "accelerator", [&] { return db.accelerator(*acc).name; });
    }
    if (const auto node = m->opt_string("node")) {
        p.node = at_key(*m, "node", [&] { return db.server(*node).name; });
    }
    const auto expect_basis = [&](const std::optional<model::Price>& price, const char* key,
                                  model::PriceBasis basis, const char* example) {
        if (price && price->per != basis) {
            m->fail_at(key, std::string("wrong price unit; write e.g. '") + example + "'");
        }
    };
    expect_basis(p.gpu_hour, "gpu_hour", model::PriceBasis::Hour, "$2.10/h");
    expect_basis(p.gpu_purchase, "gpu_purchase", model::PriceBasis::Once, "$25000");
    expect_basis(p.electricity, "electricity", model::PriceBasis::KilowattHour, "0.6 CNY/kWh");
    expect_basis(p.node_purchase, "node_purchase", model::PriceBasis::Once, "$270000");
    m->finish();
}

} // namespace

void set_hardware(model::Scenario& s, const Database& db, const std::string& accelerator,
                  const std::string& node) {
    auto& d = s.deployment;
    d.gpu = db.accelerator(accelerator);
    s.accelerator_ref = accelerator;
    s.node_ref = node;
    const model::ServerSpec* server = node.empty() ? nullptr : &db.server(node);
    if (server && !server->accelerator.empty() && server->accelerator != d.gpu.name) {
        throw InputError("node '" + server->name + "' holds " + server->accelerator + ", not " +
                         d.gpu.name + "; pick a matching node or leave the node out");
    }
    d.gpus_per_node = server ? server->accelerators : 8;
    const std::string intra =
        server ? server->intra_node_link
               : (!d.gpu.scale_up_link.empty() ? d.gpu.scale_up_link : d.gpu.host_link);
    d.intra_node_link = db.interconnect(intra);
    d.inter_node_link.reset();
    if (server && !server->inter_node_link.empty()) {
        d.inter_node_link = db.interconnect(server->inter_node_link);
    }
}

model::PlanCandidate plan_candidate(const Database& db, const std::string& accelerator,
                                    const std::string& node) {
    model::Scenario probe;
    set_hardware(probe, db, accelerator, node);
    model::PlanCandidate c;
    c.accelerator_ref = accelerator;
    c.node_ref = node;
    c.gpu = probe.deployment.gpu;
    if (!node.empty()) {
        c.node = db.server(node);
    }
    c.intra_node_link = probe.deployment.intra_node_link;
    c.inter_node_link = probe.deployment.inter_node_link;
    c.gpus_per_node = probe.deployment.gpus_per_node;
    return c;
}

namespace {

// Applies `--set key.path=value` overrides to the parsed document: maps are created as needed,
// a numeric segment indexes a list, and the value is parsed as YAML (so "64", "1 GiB" and
// "[1, 2]" all work).
// Tags a command-line value and everything in it, so messages about it name the flag
// (detail::fail) instead of line 1, column 1 of a one-line document.
void tag_command_line(YAML::Node n, const std::string& tag) {
    n.SetTag(tag);
    if (n.IsSequence()) {
        for (std::size_t i = 0; i < n.size(); ++i) {
            tag_command_line(n[i], tag);
        }
    } else if (n.IsMap()) {
        for (auto it = n.begin(); it != n.end(); ++it) {
            tag_command_line(it->second, tag);
        }
    }
}

// The value goes through the scenario file's parser rules (issue 33): an anchor and its alias
// ('&a [*a]') would make a node that contains itself, which tag_command_line cannot walk.
YAML::Node load_value(const ScenarioOverride& o) {
    const std::string origin = o.origin.empty() ? "--set " + o.path + "=" + o.value : o.origin;
    YAML::Node v = detail::parse_strict_value(o.value, origin);
    tag_command_line(v, detail::kCommandLineTag + origin);
    return v;
}

// `root` by value although clang-tidy sees only const use: a YAML::Node is a handle, and the
// overrides are written into the document it refers to (through copies of the handle).
// NOLINTNEXTLINE(performance-unnecessary-value-param)
void apply_overrides(YAML::Node root, const std::vector<ScenarioOverride>& overrides,
                     const std::string& file) {
    for (const auto& o : overrides) {
        std::vector<std::string> parts;
        std::size_t start = 0;
        for (std::size_t i = 0; i <= o.path.size(); ++i) {
            if (i == o.path.size() || o.path[i] == '.') {
                parts.push_back(o.path.substr(start, i - start));
                start = i + 1;
            }
        }
        YAML::Node node = root;
        for (std::size_t i = 0; i < parts.size(); ++i) {
            const std::string& key = parts[i];
            if (key.empty()) {
                throw InputError("--set " + o.path +
                                 ": empty key; write e.g. 'workload.requests_per_s=8'");
            }
            const bool last = i + 1 == parts.size();
            if (node.IsSequence()) {
                std::size_t idx = 0;
                try {
                    idx = std::stoul(key);
                } catch (const std::exception&) {
                    throw InputError("--set " + o.path + ": '" + key +
                                     "' indexes a list; use a number");
                }
                if (idx >= node.size()) {
                    throw InputError("--set " + o.path + ": index " + key +
                                     " is past the end of the list in " + file);
                }
                if (last) {
                    node[idx] = load_value(o);
                } else {
                    node.reset(node[idx]);
                }
                continue;
            }
            if (!node.IsMap() && !node.IsNull()) {
                throw InputError("--set " + o.path + ": '" +
                                 (i == 0 ? std::string("the document") : parts[i - 1]) +
                                 "' is not a mapping in " + file);
            }
            if (last) {
                node[key] = load_value(o);
            } else {
                if (!node[key].IsDefined() || node[key].IsNull()) {
                    node[key] = YAML::Node(YAML::NodeType::Map);
                }
                YAML::Node child = node[key];
                node.reset(child);
            }
        }
    }
}

} // namespace

namespace {

// The document of `text` with the --set overrides applied (a scenario and its fleet block read
// the same document).
YAML::Node parse_with_overrides(std::string_view text, const std::string& file,
                                const std::vector<ScenarioOverride>& overrides) {
    YAML::Node doc = detail::parse_strict(text, file);
    try {
        apply_overrides(doc, overrides, file);
    } catch (const YAML::Exception& e) {
        throw InputError("--set: " + std::string(e.what()));
    }
    return doc;
}

} // namespace

namespace {

// A class routed to the cloud needs the cloud endpoint it goes to: without cluster.cloud the
// simulator would reject every request of the class without a word (issue 33).
void check_cloud_routes(const YAML::Node& root, const std::string& file, const model::Scenario& s) {
    if (s.cluster.cloud) {
        return;
    }
    for (std::size_t i = 0; i < s.workload.classes.size(); ++i) {
        if (s.workload.classes[i].route == model::RouteTarget::Cloud) {
            const std::string path = "workload.classes[" + std::to_string(i) + "].route";
            detail::fail(root["workload"]["classes"][i]["route"], file, path,
                         "'cloud' sends the class to the cloud endpoint and the scenario has no "
                         "cluster.cloud block; add one (ttft_median, output_tokens_per_s) or "
                         "route the class to 'any' or 'local'");
        }
    }
}

} // namespace

model::Scenario parse_scenario(std::string_view text, const std::string& file, const Database& db) {
    return parse_scenario(text, file, db, {});
}

model::Scenario parse_scenario(std::string_view text, const std::string& file, const Database& db,
                               const std::vector<ScenarioOverride>& overrides) {
    YAML::Node doc = parse_with_overrides(text, file, overrides);
    MapReader root(doc, file, "");
    const int schema = root.integer("schema", 1, 1000);
    if (schema != 1) {
        root.fail_at("schema", "unsupported schema version " + std::to_string(schema) +
                                   "; this gpuplan reads schema 1");
    }
    model::Scenario s;
    s.name = root.string_or("name", std::filesystem::path(file).stem().string());
    s.description = root.string_or("description", "");
    if (!root.has("model")) {
        root.fail_here("missing required key 'model' (a catalog name such as 'llama-3.1-8b', or an "
                       "inline architecture)");
    }
    if (root.node()["model"].IsMap()) {
        MapReader inline_model = root.map("model");
        s.deployment.model = detail::read_model(inline_model);
    } else {
        s.model_ref = root.string("model");
        // A catalog name, or a Hugging Face id resolved to the catalog or the local HF cache.
        s.deployment.model =
            at_key(root, "model", [&] { return resolve_model(db, s.model_ref).spec; });
    }
    read_hardware(root.map("hardware"), db, s);
    s.deployment.prec = read_precisions(root.opt_map("precision"), s.deployment.model);
    s.deployment.engine = read_engine(root.opt_map("engine"), s.scheduler, db);
    read_workload(root.opt_map("workload"), s.workload, std::filesystem::path(file).parent_path());
    read_slo(root.opt_map("slo"), s.slo);
    read_power(root.opt_map("power"), s.power, s.power_model);
    read_prices(root.opt_map("prices"), db, s, s.prices);
    s.rack = detail::read_rack(root.opt_map("rack"));
    s.cost = detail::read_cost(root.opt_map("cost"));
    {
        std::vector<std::string> class_names;
        for (const auto& c : s.workload.classes) {
            class_names.push_back(c.name);
        }
        if (class_names.empty()) {
            class_names.emplace_back("default"); // sim::effective_classes' one class
        }
        s.cluster = detail::read_cluster(root.opt_map("cluster"), db, class_names, s.deployment);
        check_cloud_routes(root.node(), file, s);
    }
    if (auto plan = root.opt_map("plan")) {
        s.plan = detail::read_plan(std::move(*plan), db);
        const auto& on = s.plan->speculative;
        if (std::find(on.begin(), on.end(), true) != on.end() && !s.deployment.engine.speculative) {
            detail::fail(root.node()["plan"]["speculative"], file, "plan.speculative",
                         "lists 'on' but the scenario has no engine.speculative block; add one "
                         "(method, num_speculative_tokens, acceptance) or list only 'off'");
        }
    }
    s.availability = detail::read_availability(root.opt_map("availability"));
    s.fleet = detail::read_fleet(root.opt_map("fleet"));
    auto training = root.opt_map("training"); // read after the hardware validates
    if (!s.scheduler.swap_bandwidth && !s.deployment.gpu.host_link.empty()) {
        // Swapped KV blocks cross the accelerator's host link.
        try {
            s.scheduler.swap_bandwidth =
                db.interconnect(s.deployment.gpu.host_link).bandwidth_per_direction;
        } catch (const InputError&) {
            // an unknown host link keeps the simulator's default
        }
    }
    if (auto& off = s.deployment.engine.kv_offload; off && !s.deployment.gpu.host_link.empty()) {
        // Offloaded KV is loaded over the accelerator's host link (its default bandwidth).
        try {
            off->host_link = db.interconnect(s.deployment.gpu.host_link).bandwidth_per_direction;
        } catch (const InputError&) {
            // an unknown host link keeps model::kDefaultHostBandwidth
        }
    }
    if (auto& lora = s.deployment.engine.lora;
        lora && !lora->load_bandwidth && !s.deployment.gpu.host_link.empty()) {
        // Adapters are copied from host memory over the accelerator's host link.
        try {
            lora->load_bandwidth =
                db.interconnect(s.deployment.gpu.host_link).bandwidth_per_direction;
        } catch (const InputError&) {
            // an unknown host link keeps the model's default
        }
    }
    s.seed = static_cast<std::uint64_t>(root.opt_integer("seed", 0, 2147483647).value_or(1));
    root.finish();
    try {
        model::validate(s.deployment);
    } catch (const InvalidArgument& e) {
        // A context or format rule is about the engine block; the rest about the hardware.
        const std::string what = e.what();
        const bool engine = what.find("max_model_len") != std::string::npos ||
                            what.find("llama.cpp") != std::string::npos ||
                            what.find("tensorrt-llm") != std::string::npos;
        if (engine && root.node()["engine"]) {
            detail::fail(root.node()["engine"], file, "engine", what);
        }
        detail::fail(root.node()["hardware"], file, "hardware", what);
    }
    if (s.power.gpu_cap) {
        try {
            model::check_gpu_cap(s.deployment.gpu, *s.power.gpu_cap, "power.gpu_cap");
        } catch (const InvalidArgument& e) {
            detail::fail(root.node()["power"]["gpu_cap"], file, "power.gpu_cap", e.what());
        }
    }
    s.training = detail::read_training(std::move(training), s.deployment);
    return s;
}

model::Scenario load_scenario(const std::filesystem::path& path, const Database& db) {
    return load_scenario(path, db, {});
}

model::Scenario load_scenario(const std::filesystem::path& path, const Database& db,
                              const std::vector<ScenarioOverride>& overrides) {
    return parse_scenario(read_text_file(path, "scenario file"), path.string(), db, overrides);
}

} // namespace gpuplan::hwdb
