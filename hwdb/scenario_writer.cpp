// Scenario YAML writer: plain string building, key order as in docs/scenario-schema.md. Every
// value is written in a form the loader reads back to the same double (checked here for
// quantities and prices by parsing the candidate text), so load → save → load is lossless.
#include "hwdb/scenario_writer.hpp"

#include "hwdb/detail/yaml_emit.hpp"
#include "hwdb/file_io.hpp"
#include "hwdb/model_yaml_writer.hpp"
#include "model/error.hpp"
#include "model/unit_parser.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <utility>

namespace gpuplan::hwdb {
namespace {

using model::Dimension;

std::string num(double v) {
    return detail::yaml_number(v);
}
std::string quoted(const std::string& s) {
    return detail::yaml_quoted(s);
}

/// A string as a plain scalar when that is unambiguous (names such as "llama-3.1-70b"), else
/// double-quoted.
std::string str(const std::string& s) {
    if (s.empty() || !std::isalpha(static_cast<unsigned char>(s.front()))) {
        return quoted(s);
    }
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (!std::isalnum(c) && ch != '-' && ch != '_' && ch != '.' && ch != '/') {
            return quoted(s);
        }
    }
    for (const char* reserved :
         {"true", "false", "null", "yes",  "no",   "on",    "off", "y",  "n",
          "True", "False", "Null", "NULL", "TRUE", "FALSE", "Yes", "No", "On",
          "Off",  "YES",   "NO",   "ON",   "OFF",  "Y",     "N"}) {
        if (s == reserved) {
            return quoted(s);
        }
    }
    return s;
}

const char* boolean(bool b) {
    return b ? "true" : "false";
}

struct Unit {
    const char* symbol;
    double to_si;
};

/// The shortest "<number> <unit>" among `units` that parse_quantity reads back to exactly `si`
/// (the first of equally short ones); the SI base unit, which is among them, always does.
std::string quantity(double si, Dimension dim, std::initializer_list<Unit> units) {
    std::string best;
    for (const Unit& u : units) {
        const double v = si / u.to_si;
        if (!std::isfinite(v)) {
            continue;
        }
        std::string text = num(v) + " " + u.symbol;
        const auto back = model::parse_quantity(text, dim);
        if (back.si && *back.si == si && (best.empty() || text.size() < best.size())) {
            best = std::move(text);
        }
    }
    GPUPLAN_CHECK(!best.empty(), "scenario_to_yaml: no unit reads back a quantity");
    return best;
}

std::string bytes(Bytes b) {
    return quantity(b.si(), Dimension::Bytes,
                    {{"TiB", kTiB},
                     {"GiB", kGiB},
                     {"MiB", kMiB},
                     {"KiB", kKiB},
                     {"TB", 1e12},
                     {"GB", 1e9},
                     {"MB", 1e6},
                     {"B", 1}});
}

std::string seconds(Seconds s) {
    return quantity(s.si(), Dimension::Seconds,
                    {{"s", 1},
                     {"ms", 1e-3},
                     {"us", 1e-6},
                     {"ns", 1e-9},
                     {"min", 60},
                     {"h", 3600},
                     {"d", 86400}});
}

std::string bandwidth(BytesPerSecond r) {
    return quantity(r.si(), Dimension::BytesPerSecond,
                    {{"TB/s", 1e12},
                     {"GB/s", 1e9},
                     {"MB/s", 1e6},
                     {"GiB/s", kGiB},
                     {"MiB/s", kMiB},
                     {"B/s", 1}});
}

std::string watts(Watts w) {
    return quantity(w.si(), Dimension::Watts, {{"MW", 1e6}, {"kW", 1e3}, {"W", 1}});
}

std::string price(const model::Price& p) {
    std::string text = model::to_string(p);
    const auto back = model::parse_price(text);
    if (back.price && *back.price == p) {
        return text;
    }
    text = num(p.money.amount) + " " + p.money.currency + model::to_string(p.per);
    const auto again = model::parse_price(text);
    GPUPLAN_CHECK(again.price && *again.price == p, "scenario_to_yaml: a price does not read back");
    return text;
}

const char* engine_name(model::EngineKind k) {
    return model::to_string(k);
}

/// Text of a block with its indentation.
class Out {
  public:
    void line(int indent, const std::string& key, const std::string& value) {
        text_ += std::string(static_cast<std::size_t>(indent), ' ') + key + ": " + value + "\n";
    }
    void open(int indent, const std::string& key) {
        text_ += std::string(static_cast<std::size_t>(indent), ' ') + key + ":\n";
    }
    void raw(const std::string& s) { text_ += s; }
    [[nodiscard]] const std::string& text() const { return text_; }

  private:
    std::string text_;
};

/// A length distribution: a bare integer for the plain fixed case, else a flow mapping.
std::string length(const model::LengthDistribution& d) {
    const model::LengthDistribution plain;
    const bool whole = d.mean >= 0 && d.mean == std::floor(d.mean) && d.mean <= (1 << 28);
    if (d.kind == model::LengthKind::Fixed && whole && d.stddev == 0 && d.min == plain.min &&
        d.max == plain.max && d.values.empty() && d.weights.empty()) {
        return std::to_string(static_cast<long long>(d.mean));
    }
    std::string s = std::string("{dist: ") + model::name_of(d.kind);
    const bool needs_mean = d.kind == model::LengthKind::Fixed ||
                            d.kind == model::LengthKind::Normal ||
                            d.kind == model::LengthKind::LogNormal;
    if (needs_mean || d.mean != plain.mean) {
        s += ", mean: " + num(d.mean);
    }
    if (d.stddev != 0) {
        s += ", stddev: " + num(d.stddev);
    }
    const bool uniform = d.kind == model::LengthKind::Uniform;
    if (uniform || d.min != plain.min) {
        s += ", min: " + std::to_string(d.min);
    }
    if (uniform || d.max != plain.max) {
        s += ", max: " + std::to_string(d.max);
    }
    const auto list = [&s](const char* key, const auto& values) {
        s += std::string(", ") + key + ": [";
        for (std::size_t i = 0; i < values.size(); ++i) {
            s += (i > 0 ? ", " : "") + num(static_cast<double>(values[i]));
        }
        s += "]";
    };
    if (!d.values.empty()) {
        list("values", d.values);
    }
    if (!d.weights.empty()) {
        list("weights", d.weights);
    }
    return s + "}";
}

void write_hardware(Out& o, const model::Scenario& s) {
    const auto& d = s.deployment;
    o.open(0, "hardware");
    o.line(2, "accelerator", str(s.accelerator_ref.empty() ? d.gpu.name : s.accelerator_ref));
    if (!s.node_ref.empty()) {
        o.line(2, "node", str(s.node_ref));
    }
    o.line(2, "count", std::to_string(d.gpus()));
    o.line(2, "tp", std::to_string(d.par.tp));
    o.line(2, "pp", std::to_string(d.par.pp));
    o.line(2, "dp", std::to_string(d.par.dp));
    o.line(2, "ep", std::to_string(d.par.ep));
    o.line(2, "gpus_per_node", std::to_string(d.gpus_per_node));
    if (!d.intra_node_link.name.empty()) {
        o.line(2, "intra_node_link", str(d.intra_node_link.name));
    }
    if (d.inter_node_link) {
        o.line(2, "inter_node_link", str(d.inter_node_link->name));
    }
}

void write_precision(Out& o, const model::Precisions& p) {
    o.open(0, "precision");
    o.line(2, "weights", str(p.weights.name));
    o.line(2, "activations", str(p.activations.name));
    o.line(2, "kv_cache", str(p.kv_cache.name));
    if (p.embeddings) {
        o.line(2, "embeddings", str(p.embeddings->name));
    }
}

void write_engine(Out& o, const model::EngineConfig& e, const model::SchedulerConfig& sc) {
    const model::SchedulerConfig dflt;
    o.open(0, "engine");
    o.line(2, "kind", engine_name(e.kind));
    const auto opt_int = [&o](const char* key, const std::optional<int>& v) {
        if (v) {
            o.line(2, key, std::to_string(*v));
        }
    };
    const auto opt_bool = [&o](const char* key, const std::optional<bool>& v) {
        if (v) {
            o.line(2, key, boolean(*v));
        }
    };
    const auto opt_bytes = [&o](const char* key, const std::optional<Bytes>& v) {
        if (v) {
            o.line(2, key, bytes(*v));
        }
    };
    opt_int("max_model_len", e.max_model_len);
    if (e.allow_long_context) {
        o.line(2, "allow_long_context", boolean(true));
    }
    if (e.gpu_memory_utilization) {
        o.line(2, "gpu_memory_utilization", num(*e.gpu_memory_utilization));
    }
    opt_int("max_num_seqs", e.max_num_seqs);
    opt_int("max_num_batched_tokens", e.max_num_batched_tokens);
    opt_int("block_size", e.block_size);
    opt_bool("enable_prefix_caching", e.enable_prefix_caching);
    opt_bool("enable_chunked_prefill", e.enable_chunked_prefill);
    if (!e.cuda_graphs) {
        o.line(2, "enforce_eager", "true");
    }
    if (e.all_reduce != model::AllReduceAlgorithm::Auto) {
        o.line(2, "all_reduce", model::name_of(e.all_reduce));
    }
    opt_bytes("usable_memory", e.usable_memory);
    opt_bytes("non_torch_memory", e.non_torch_memory);
    opt_bytes("cuda_graph_memory", e.cuda_graph_memory);
    opt_bytes("cuda_context_memory", e.cuda_context_memory);
    opt_bytes("activation_memory", e.activation_memory);
    if (e.activation_workspace_factor != 1.0) {
        o.line(2, "activation_workspace_factor", num(e.activation_workspace_factor));
    }
    opt_bytes("kv_cache_memory", e.kv_cache_memory);
    if (e.moe_load_imbalance) {
        o.line(2, "moe_load_imbalance", num(*e.moe_load_imbalance));
    }
    if (e.ep_overlap) {
        o.line(2, "ep_overlap", num(*e.ep_overlap));
    }
    if (e.speculative) {
        const model::SpeculativeConfig& c = *e.speculative;
        o.open(2, "speculative");
        o.line(4, "method", model::to_string(c.method));
        if (c.num_speculative_tokens) {
            o.line(4, "num_speculative_tokens", std::to_string(*c.num_speculative_tokens));
        }
        if (c.acceptance_rate) {
            o.line(4, "acceptance_rate", num(*c.acceptance_rate));
        }
        if (!c.acceptance.empty()) {
            std::string list = "[";
            for (std::size_t i = 0; i < c.acceptance.size(); ++i) {
                list += (i > 0 ? ", " : "") + num(c.acceptance[i]);
            }
            o.line(4, "acceptance", list + "]");
        }
        if (!c.draft_model.empty()) {
            o.line(4, "draft_model", str(c.draft_model));
        }
    }
    if (e.kv_offload) {
        const model::KvOffloadConfig& c = *e.kv_offload;
        if (!c.host && !c.nvme && !c.host_bandwidth && !c.nvme_bandwidth) {
            o.line(2, "kv_offload", "{}"); // every default
        } else {
            o.open(2, "kv_offload");
        }
        const auto opt_size = [&o](const char* key, const std::optional<Bytes>& v) {
            if (v) {
                o.line(4, key, bytes(*v));
            }
        };
        const auto opt_rate = [&o](const char* key, const std::optional<BytesPerSecond>& v) {
            if (v) {
                o.line(4, key, bandwidth(*v));
            }
        };
        opt_size("host", c.host);
        opt_size("nvme", c.nvme);
        opt_rate("host_bandwidth", c.host_bandwidth);
        opt_rate("nvme_bandwidth", c.nvme_bandwidth);
    }
    if (e.lora) {
        const model::LoraServingConfig& c = *e.lora;
        o.open(2, "lora");
        o.line(4, "adapters", std::to_string(c.adapters));
        o.line(4, "rank", std::to_string(c.rank));
        std::string list = "[";
        for (std::size_t i = 0; i < c.target_modules.size(); ++i) {
            list += std::string(i > 0 ? ", " : "") + model::name_of(c.target_modules[i]);
        }
        o.line(4, "target_modules", list + "]");
        o.line(4, "max_loras", std::to_string(c.max_loras));
        if (c.max_lora_rank) {
            o.line(4, "max_lora_rank", std::to_string(*c.max_lora_rank));
        }
        if (c.max_cpu_loras) {
            o.line(4, "max_cpu_loras", std::to_string(*c.max_cpu_loras));
        }
        o.line(4, "popularity", model::name_of(c.popularity));
        if (c.popularity == model::LoraPopularity::Zipf) {
            o.line(4, "zipf_s", num(c.zipf_s));
        }
        if (c.load_bandwidth) {
            o.line(4, "load_bandwidth", bandwidth(*c.load_bandwidth));
        }
        if (c.disk_bandwidth) {
            o.line(4, "disk_bandwidth", bandwidth(*c.disk_bandwidth));
        }
    }
    // The simulator's scheduler keys.
    if (sc.batching != dflt.batching) {
        o.line(2, "batching", model::name_of(sc.batching));
    }
    if (sc.static_batch_size != dflt.static_batch_size) {
        o.line(2, "static_batch_size", std::to_string(sc.static_batch_size));
    }
    if (sc.static_max_wait != dflt.static_max_wait) {
        o.line(2, "static_max_wait", seconds(sc.static_max_wait));
    }
    if (sc.policy != dflt.policy) {
        o.line(2, "scheduling_policy", model::name_of(sc.policy));
    }
    if (sc.preemption_mode != dflt.preemption_mode) {
        o.line(2, "preemption_mode", model::name_of(sc.preemption_mode));
    }
    if (sc.swap_space != dflt.swap_space) {
        o.line(2, "swap_space", bytes(sc.swap_space));
    }
    if (sc.swap_bandwidth) {
        o.line(2, "swap_bandwidth", bandwidth(*sc.swap_bandwidth));
    }
    if (sc.watermark != dflt.watermark) {
        o.line(2, "watermark", num(sc.watermark));
    }
    if (sc.capacity_scheduler != dflt.capacity_scheduler) {
        o.line(2, "capacity_scheduler", model::name_of(sc.capacity_scheduler));
    }
    if (sc.schedule_policy != dflt.schedule_policy) {
        o.line(2, "schedule_policy", model::name_of(sc.schedule_policy));
    }
    if (sc.schedule_conservativeness != dflt.schedule_conservativeness) {
        o.line(2, "schedule_conservativeness", num(sc.schedule_conservativeness));
    }
}

void write_class(Out& o, const model::RequestClass& c) {
    const model::RequestClass dflt;
    o.raw("    - name: " + str(c.name) + "\n");
    const int in = 6;
    if (c.share != dflt.share) {
        o.line(in, "share", num(c.share));
    }
    o.line(in, "input", length(c.input));
    o.line(in, "output", length(c.output));
    if (c.shared_prefix != dflt.shared_prefix) {
        o.line(in, "shared_prefix", std::to_string(c.shared_prefix));
    }
    if (c.prefix_groups != dflt.prefix_groups) {
        o.line(in, "prefix_groups", std::to_string(c.prefix_groups));
    }
    if (c.priority != dflt.priority) {
        o.line(in, "priority", std::to_string(c.priority));
    }
    if (c.ttft || c.tpot || c.e2e) {
        std::string slo;
        const auto add = [&slo](const char* key, const std::optional<Seconds>& v) {
            if (v) {
                slo += (slo.empty() ? "" : ", ") + std::string(key) + ": " + seconds(*v);
            }
        };
        add("ttft", c.ttft);
        add("tpot", c.tpot);
        add("e2e", c.e2e);
        o.line(in, "slo", "{" + slo + "}");
    }
    if (c.route != dflt.route) {
        o.line(in, "route", model::name_of(c.route));
    }
    if (c.agent) {
        o.open(in, "agent");
        o.line(in + 2, "steps", std::to_string(c.agent->steps));
        o.line(in + 2, "step_input", length(c.agent->step_input));
        o.line(in + 2, "think_time", seconds(c.agent->think_time));
    }
}

void write_workload(Out& o, const model::Scenario& s, const ScenarioYamlOptions& opt) {
    const auto& w = s.workload;
    o.open(0, "workload");
    o.line(2, "input_tokens", std::to_string(w.input_tokens));
    o.line(2, "output_tokens", std::to_string(w.output_tokens));
    if (w.concurrency) {
        o.line(2, "concurrency", std::to_string(*w.concurrency));
    }
    if (w.requests_per_s) {
        o.line(2, "requests_per_s", num(*w.requests_per_s));
    }
    if (w.requests) {
        o.line(2, "requests", std::to_string(*w.requests));
    }
    if (w.batch_requests) {
        o.line(2, "batch_requests", std::to_string(*w.batch_requests));
    }
    if (w.duration) {
        o.line(2, "duration", seconds(*w.duration));
    }
    const model::ArrivalProcess& a = w.arrival;
    const model::ArrivalProcess dflt;
    o.open(2, "arrival");
    o.line(4, "process", model::name_of(a.kind));
    if (a.requests_per_s) {
        o.line(4, "requests_per_s", num(*a.requests_per_s));
    }
    if (a.cv != dflt.cv) {
        o.line(4, "cv", num(a.cv));
    }
    if (a.users != dflt.users) {
        o.line(4, "users", std::to_string(a.users));
    }
    if (a.think_time != dflt.think_time) {
        o.line(4, "think_time", seconds(a.think_time));
    }
    if (a.trace_speedup != dflt.trace_speedup) {
        o.line(4, "trace_speedup", num(a.trace_speedup));
    }
    if (a.curve != dflt.curve) {
        const model::RateCurve& c = a.curve;
        o.open(4, "rate_curve");
        o.line(6, "kind", model::name_of(c.kind));
        if (!c.steps.empty()) {
            o.open(6, "steps");
            for (const auto& p : c.steps) {
                o.raw("        - {at: " + seconds(p.at) +
                      ", requests_per_s: " + num(p.requests_per_s) + "}\n");
            }
        }
        o.line(6, "period", seconds(c.period));
        o.line(6, "amplitude", num(c.amplitude));
        o.line(6, "peak_at", seconds(c.peak_at));
    }
    if (!w.trace.empty()) {
        o.open(2, "trace");
        o.line(4, "file", str(opt.trace_file.empty() ? s.name + ".trace.csv" : opt.trace_file));
        o.line(4, "format", "plain");
    }
    if (!w.classes.empty()) {
        o.open(2, "classes");
        for (const auto& c : w.classes) {
            write_class(o, c);
        }
    }
}

void write_slo(Out& o, const model::Slo& slo) {
    o.open(0, "slo");
    if (slo.ttft) {
        o.line(2, "ttft", seconds(*slo.ttft));
    }
    if (slo.tpot) {
        o.line(2, "tpot", seconds(*slo.tpot));
    }
    if (slo.e2e) {
        o.line(2, "e2e", seconds(*slo.e2e));
    }
    o.line(2, "percentile", num(slo.percentile));
}

void write_power(Out& o, const model::PowerBudget& b, const model::PowerModel& m) {
    const model::PowerModel dflt;
    Out p;
    const auto opt_w = [&p](const char* key, const std::optional<Watts>& v) {
        if (v) {
            p.line(2, key, watts(*v));
        }
    };
    opt_w("gpu_cap", b.gpu_cap);
    opt_w("node_cap", b.node_cap);
    opt_w("rack_budget", b.rack_budget);
    if (b.pue) {
        p.line(2, "pue", num(*b.pue));
    }
    opt_w("board_power", m.board_power);
    opt_w("idle_power", m.idle_power);
    opt_w("resident_power", m.resident_power);
    opt_w("host_power", m.host_power);
    const auto coef = [&p](const char* key, double v, double d) {
        if (v != d) {
            p.line(2, key, num(v));
        }
    };
    coef("psu_efficiency", m.psu_efficiency, dflt.psu_efficiency);
    coef("idle_fraction", m.idle_fraction, dflt.idle_fraction);
    coef("resident_fraction", m.resident_fraction, dflt.resident_fraction);
    coef("compute_weight", m.compute_weight, dflt.compute_weight);
    coef("memory_weight", m.memory_weight, dflt.memory_weight);
    coef("dynamic_exponent", m.dynamic_exponent, dflt.dynamic_exponent);
    coef("memory_core_share", m.memory_core_share, dflt.memory_core_share);
    coef("memory_clock_sensitivity", m.memory_clock_sensitivity, dflt.memory_clock_sensitivity);
    coef("min_clock", m.min_clock, dflt.min_clock);
    if (!p.text().empty()) {
        o.open(0, "power");
        o.raw(p.text());
    }
}

void write_prices(Out& o, const model::Scenario& s) {
    const model::Prices& pr = s.prices;
    Out p;
    // The hardware the prices are for, when it is not the scenario's own (the loader's default).
    if (!pr.accelerator.empty() && pr.accelerator != s.deployment.gpu.name) {
        p.line(2, "accelerator", pr.accelerator);
    }
    if (!pr.node.empty() && pr.node != s.node_ref && pr.node_purchase) {
        p.line(2, "node", pr.node);
    }
    const auto opt_p = [&p](const char* key, const std::optional<model::Price>& v) {
        if (v) {
            p.line(2, key, price(*v));
        }
    };
    opt_p("gpu_hour", pr.gpu_hour);
    opt_p("gpu_purchase", pr.gpu_purchase);
    opt_p("electricity", pr.electricity);
    opt_p("node_purchase", pr.node_purchase);
    if (!p.text().empty()) {
        o.open(0, "prices");
        o.raw(p.text());
    }
}

void write_rack(Out& o, const model::RackConfig& r) {
    const model::RackConfig dflt;
    if (r == dflt) {
        return;
    }
    o.open(0, "rack");
    if (r.pdu != dflt.pdu) {
        o.open(2, "pdu");
        o.line(4, "amps", num(r.pdu.current_a) + " A");
        o.line(4, "volts", num(r.pdu.voltage_v) + " V");
        o.line(4, "phases", std::to_string(r.pdu.phases));
        o.line(4, "derating", num(r.pdu.derating));
        o.line(4, "count", std::to_string(r.pdu.count));
        o.line(4, "redundant", boolean(r.pdu.redundant));
    }
    if (r.cooling != dflt.cooling) {
        o.open(2, "cooling");
        o.line(4, "kind", model::to_string(r.cooling.kind));
        if (r.cooling.limit) {
            o.line(4, "limit", watts(*r.cooling.limit));
        }
    }
    if (r.rack_units != dflt.rack_units) {
        o.line(2, "rack_units", std::to_string(r.rack_units));
    }
    if (r.nodes) {
        o.line(2, "nodes", std::to_string(*r.nodes));
    }
    if (r.nodes_per_rack) {
        o.line(2, "nodes_per_rack", std::to_string(*r.nodes_per_rack));
    }
}

void write_cost(Out& o, const model::CostConfig& c) {
    const model::CostConfig dflt;
    if (c == dflt) {
        return;
    }
    o.open(0, "cost");
    o.line(2, "amortization_years", num(c.amortization_years));
    o.line(2, "residual_fraction", num(c.residual_fraction));
    o.line(2, "maintenance_fraction", num(c.maintenance_fraction));
    if (c.colocation) {
        o.line(2, "colocation", price(*c.colocation));
    }
    if (c.utilization == dflt.utilization) {
        o.line(2, "utilization", "steady");
    } else {
        o.line(2, "utilization",
               "{hours_per_day: " + num(c.utilization.hours_per_day) +
                   ", days_per_month: " + num(c.utilization.days_per_month) + "}");
    }
    o.line(2, "off_hours", model::to_string(c.off_hours));
}

void write_cluster(Out& o, const model::Cluster& c) {
    const model::Cluster dflt;
    if (c == dflt) {
        return;
    }
    o.open(0, "cluster");
    if (c.replicas) {
        o.line(2, "replicas", std::to_string(*c.replicas));
    }
    o.line(2, "router", model::to_string(c.router));
    if (!c.pools.empty()) {
        o.open(2, "pools");
        for (const auto& p : c.pools) {
            o.raw("    - name: " + str(p.name) + "\n");
            const auto& h = p.hardware;
            o.line(6, "accelerator",
                   str(h.accelerator_ref.empty() ? h.gpu.name : h.accelerator_ref));
            if (!h.node_ref.empty()) {
                o.line(6, "node", str(h.node_ref));
            }
            o.line(6, "replicas", std::to_string(p.replicas));
            o.line(6, "tp", std::to_string(p.tp));
            if (!p.classes.empty()) {
                std::string list = "[";
                for (std::size_t i = 0; i < p.classes.size(); ++i) {
                    list += (i > 0 ? ", " : "") + str(p.classes[i]);
                }
                o.line(6, "classes", list + "]");
            }
            if (p.max_prompt_tokens) {
                o.line(6, "max_prompt_tokens", std::to_string(*p.max_prompt_tokens));
            }
            if (h.gpu_hour) {
                o.line(6, "gpu_hour", price(*h.gpu_hour));
            }
            if (p.min_replicas) {
                o.line(6, "min_replicas", std::to_string(*p.min_replicas));
            }
            if (p.max_replicas) {
                o.line(6, "max_replicas", std::to_string(*p.max_replicas));
            }
            if (p.owned) {
                o.line(6, "owned", "true");
            }
        }
    }
    if (const auto& g = c.disaggregation) {
        o.open(2, "disaggregation");
        for (const model::ReplicaPool* p : {&g->prefill, &g->decode}) {
            o.open(4, p == &g->prefill ? "prefill" : "decode");
            const auto& h = p->hardware;
            o.line(6, "accelerator",
                   str(h.accelerator_ref.empty() ? h.gpu.name : h.accelerator_ref));
            if (!h.node_ref.empty()) {
                o.line(6, "node", str(h.node_ref));
            }
            o.line(6, "replicas", std::to_string(p->replicas));
            o.line(6, "tp", std::to_string(p->tp));
            if (h.gpu_hour) {
                o.line(6, "gpu_hour", price(*h.gpu_hour));
            }
        }
        if (!g->link.name.empty()) {
            o.line(4, "link", str(g->link.name));
        } else {
            o.line(4, "link_bandwidth", bandwidth(g->link.bandwidth_per_direction));
            o.line(4, "link_latency", seconds(g->link.latency));
        }
        o.line(4, "transfer", model::to_string(g->transfer));
    }
    if (const model::PrefixRouting& p = c.prefix_routing; p != dflt.prefix_routing) {
        o.open(2, "prefix_routing");
        o.line(4, "weight", num(p.weight));
        o.line(4, "balance_abs_threshold", std::to_string(p.balance_abs_threshold));
        o.line(4, "balance_rel_threshold", num(p.balance_rel_threshold));
    }
    const model::Admission& a = c.admission;
    if (a != dflt.admission) {
        o.open(2, "admission");
        if (a.max_queue) {
            o.line(4, "max_queue", std::to_string(*a.max_queue));
        }
        if (a.max_concurrency) {
            o.line(4, "max_concurrency", std::to_string(*a.max_concurrency));
        }
        if (a.timeout) {
            o.line(4, "timeout", seconds(*a.timeout));
        }
        o.line(4, "max_retries", std::to_string(a.max_retries));
        o.line(4, "retry_backoff", seconds(a.retry_backoff));
    }
    if (c.cold_start != dflt.cold_start) {
        o.open(2, "cold_start");
        if (c.cold_start.load_bandwidth) {
            o.line(4, "load_bandwidth", bandwidth(*c.cold_start.load_bandwidth));
        }
        o.line(4, "startup", seconds(c.cold_start.startup));
        o.line(4, "at_start", boolean(c.cold_start.at_start));
    }
    if (!c.scale.empty()) {
        o.open(2, "scale");
        for (const auto& e : c.scale) {
            o.raw("    - {at: " + seconds(e.at) + ", replicas: " + std::to_string(e.replicas) +
                  "}\n");
        }
    }
    if (const auto& as = c.autoscaler) {
        o.open(2, "autoscaler");
        o.line(4, "metric", model::to_string(as->metric));
        o.line(4, "target", num(as->target));
        o.line(4, "interval", seconds(as->interval));
        o.line(4, "provisioning", seconds(as->provisioning));
        o.line(4, "cooldown", seconds(as->cooldown));
        o.line(4, "tolerance", num(as->tolerance));
        if (c.pools.empty()) { // with pools, each pool has its own bounds
            o.line(4, "min_replicas", std::to_string(as->min_replicas));
            o.line(4, "max_replicas", std::to_string(as->max_replicas));
        }
    }
    if (const auto& f = c.failures) {
        o.open(2, "failures");
        if (f->mtbf) {
            o.line(4, "mtbf", seconds(*f->mtbf));
        }
        if (f->mttr) {
            o.line(4, "mttr", seconds(*f->mttr));
        }
        o.line(4, "spares", std::to_string(f->spares));
        o.line(4, "in_flight", model::name_of(f->in_flight));
        if (const auto& l = f->degraded_link) {
            o.open(4, "degraded_link");
            o.line(6, "mtbf", seconds(l->mtbf));
            if (l->mttr) {
                o.line(6, "mttr", seconds(*l->mttr));
            }
            o.line(6, "bandwidth_factor", num(l->bandwidth_factor));
        }
    }
    if (c.cloud) {
        const model::CloudEndpoint& e = *c.cloud;
        o.open(2, "cloud");
        o.line(4, "name", str(e.name));
        o.line(4, "ttft_median", seconds(e.ttft_median));
        o.line(4, "ttft_sigma", num(e.ttft_sigma));
        o.line(4, "output_tokens_per_s", num(e.output_tokens_per_s));
        if (e.rate_limit_rps) {
            o.line(4, "rate_limit_rps", num(*e.rate_limit_rps));
        }
        if (e.input_price) {
            o.line(4, "input_price", price(*e.input_price));
        }
        if (e.output_price) {
            o.line(4, "output_price", price(*e.output_price));
        }
    }
    o.line(2, "cloud_fallback", boolean(c.cloud_fallback));
}

void write_training(Out& o, const model::TrainingConfig& t) {
    const model::TrainingConfig dflt;
    const model::TrainingLayout& l = t.layout;
    o.open(0, "training");
    o.line(2, "tokens", num(t.tokens));
    o.line(2, "global_batch", std::to_string(t.global_batch));
    o.line(2, "seq_len", std::to_string(t.seq_len));
    o.line(2, "tp", std::to_string(l.tp));
    o.line(2, "pp", std::to_string(l.pp));
    o.line(2, "cp", std::to_string(l.cp));
    o.line(2, "ep", std::to_string(l.ep));
    o.line(2, "zero", std::to_string(l.zero));
    o.line(2, "micro_batch", std::to_string(l.micro_batch));
    o.line(2, "virtual_stages", std::to_string(l.virtual_stages));
    o.line(2, "recompute", model::to_string(l.recompute));
    o.line(2, "sequence_parallel", boolean(l.sequence_parallel));
    o.line(2, "compute", std::string(model::to_string(t.compute)));
    o.line(2, "master_weights_fp32", boolean(t.master_weights_fp32));
    o.line(2, "optimizer", model::to_string(t.optimizer));
    o.line(2, "method", model::to_string(t.method));
    if (t.method != model::FinetuneMethod::Full) {
        o.open(2, "lora");
        o.line(4, "rank", std::to_string(t.lora.rank));
        std::string list = "[";
        for (std::size_t i = 0; i < t.lora.target_modules.size(); ++i) {
            list += (i > 0 ? ", " : "") + str(t.lora.target_modules[i]);
        }
        o.line(4, "target_modules", list + "]");
        o.line(4, "qlora_base_bits", num(t.lora.qlora_base_bits));
    }
    o.line(2, "flash_attention", boolean(t.flash_attention));
    o.line(2, "dropout", boolean(t.dropout));
    if (t.grad_reduce_overlap) {
        o.line(2, "grad_reduce_overlap", num(*t.grad_reduce_overlap));
    }
    if (t.grad_bucket) {
        o.line(2, "grad_bucket", bytes(*t.grad_bucket));
    }
    if (!t.fsdp_prefetch) {
        o.line(2, "fsdp_prefetch", boolean(false));
    }
    if (t.moe_load_imbalance) {
        o.line(2, "moe_load_imbalance", num(*t.moe_load_imbalance));
    }
    if (t.ep_overlap) {
        o.line(2, "ep_overlap", num(*t.ep_overlap));
    }
    if (t.data_loader_tokens_per_s) {
        o.line(2, "data_loader_tokens_per_s", num(*t.data_loader_tokens_per_s));
    }
    if (t.fragmentation) {
        o.line(2, "fragmentation", num(*t.fragmentation));
    }
    if (t.runtime_overhead) {
        o.line(2, "runtime_overhead", bytes(*t.runtime_overhead));
    }
    if (t.average_gpu_power) {
        o.line(2, "average_gpu_power", watts(*t.average_gpu_power));
    }
    if (t.failures) {
        const model::FailureConfig& f = *t.failures;
        o.open(2, "failures");
        if (f.gpu_mtbf) {
            o.line(4, "gpu_mtbf", seconds(*f.gpu_mtbf));
        }
        if (f.write_bandwidth) {
            o.line(4, "checkpoint_write_bandwidth", bandwidth(*f.write_bandwidth));
        }
        if (f.read_bandwidth) {
            o.line(4, "checkpoint_read_bandwidth", bandwidth(*f.read_bandwidth));
        }
        if (f.restart_overhead) {
            o.line(4, "restart_overhead", seconds(*f.restart_overhead));
        }
        if (f.repair_time) {
            o.line(4, "repair_time", seconds(*f.repair_time));
        }
        if (f.checkpoint_interval) {
            o.line(4, "checkpoint_interval", seconds(*f.checkpoint_interval));
        }
        if (f.spares_target) {
            o.line(4, "spares_target", num(*f.spares_target));
        }
    }
}

void write_availability(Out& o, const model::AvailabilityConfig& a) {
    o.open(0, "availability");
    if (a.replicas) {
        o.line(2, "replicas", std::to_string(*a.replicas));
    }
    if (a.mtbf) {
        o.line(2, "mtbf", seconds(*a.mtbf));
    }
    if (a.mttr) {
        o.line(2, "mttr", seconds(*a.mttr));
    }
    o.line(2, "target", num(a.target));
}

void write_fleet(Out& o, const model::FleetConfig& f) {
    o.open(0, "fleet");
    o.line(2, "span", model::to_string(f.span));
    o.line(2, "step", seconds(f.step));
    o.line(2, "diurnal_amplitude", num(f.diurnal_amplitude));
    o.line(2, "peak_hour", num(f.peak_hour));
    o.line(2, "weekend_factor", num(f.weekend_factor));
    o.line(2, "annual_growth", num(f.annual_growth));
    if (f.rented_cap) {
        o.line(2, "rented_cap", std::to_string(*f.rented_cap));
    }
    if (f.owned) {
        o.line(2, "owned", std::to_string(*f.owned));
    }
    if (f.electricity) {
        o.open(2, "electricity");
        o.line(4, "peak", price(f.electricity->peak));
        o.line(4, "off_peak", price(f.electricity->off_peak));
        o.line(4, "peak_start", std::to_string(f.electricity->peak_start));
        o.line(4, "peak_end", std::to_string(f.electricity->peak_end));
    }
}

void write_plan(Out& o, const model::PlanConfig& p) {
    const model::PlanConfig dflt;
    o.open(0, "plan");
    if (!p.candidates.empty()) {
        o.open(2, "candidates");
        for (const auto& c : p.candidates) {
            o.raw("    - accelerator: " +
                  str(c.accelerator_ref.empty() ? c.gpu.name : c.accelerator_ref) + "\n");
            if (!c.node_ref.empty()) {
                o.line(6, "node", str(c.node_ref));
            }
            if (c.gpu_hour) {
                o.line(6, "gpu_hour", price(*c.gpu_hour));
            }
            if (c.gpu_purchase) {
                o.line(6, "gpu_purchase", price(*c.gpu_purchase));
            }
            if (c.node_purchase) {
                o.line(6, "node_purchase", price(*c.node_purchase));
            }
        }
    }
    o.line(2, "max_gpus", std::to_string(p.max_gpus));
    const auto ints = [&o](const char* key, const std::vector<int>& v) {
        if (v.empty()) {
            return;
        }
        std::string list = "[";
        for (std::size_t i = 0; i < v.size(); ++i) {
            list += (i > 0 ? ", " : "") + std::to_string(v[i]);
        }
        o.line(2, key, list + "]");
    };
    const auto precisions = [&o](const char* key, const std::vector<model::Precision>& v) {
        if (v.empty()) {
            return;
        }
        std::string list = "[";
        for (std::size_t i = 0; i < v.size(); ++i) {
            list += (i > 0 ? ", " : "") + str(v[i].name);
        }
        o.line(2, key, list + "]");
    };
    ints("tp", p.tp);
    ints("pp", p.pp);
    precisions("weights", p.weights);
    precisions("kv_cache", p.kv_cache);
    ints("max_num_seqs", p.max_num_seqs);
    if (!p.speculative.empty()) {
        std::string list = "[";
        for (std::size_t i = 0; i < p.speculative.size(); ++i) {
            list += std::string(i > 0 ? ", " : "") + (p.speculative[i] ? "on" : "off");
        }
        o.line(2, "speculative", list + "]");
    }
    if (p.budget) {
        o.line(2, "budget", price(*p.budget));
    }
    if (p.power_budget) {
        o.line(2, "power_budget", watts(*p.power_budget));
    }
    if (p.max_racks) {
        o.line(2, "max_racks", std::to_string(*p.max_racks));
    }
    o.line(2, "pricing", model::to_string(p.pricing));
    o.line(2, "top", std::to_string(p.top));
    o.line(2, "requests", std::to_string(p.requests));
    o.line(2, "max_simulations", std::to_string(p.max_simulations));
    o.line(2, "prune_margin", num(p.prune_margin));
}

/// The model as an inline mapping: the catalog entry of model_to_yaml, re-indented under
/// `model:`.
std::string inline_model(const model::ModelSpec& m) {
    const std::string file = model_to_yaml(m);
    const std::string head = "schema: 1\nmodels:\n  - ";
    GPUPLAN_CHECK(file.rfind(head, 0) == 0, "scenario_to_yaml: unexpected model_to_yaml layout");
    return "model:\n    " + file.substr(head.size());
}

} // namespace

std::string scenario_to_yaml(const model::Scenario& s, const ScenarioYamlOptions& options) {
    Out o;
    o.raw("schema: 1\n");
    if (!s.name.empty()) {
        o.line(0, "name", str(s.name));
    }
    if (!s.description.empty()) {
        o.line(0, "description", quoted(s.description));
    }
    if (s.model_ref.empty()) {
        o.raw(inline_model(s.deployment.model));
    } else {
        o.line(0, "model", str(s.model_ref));
    }
    write_hardware(o, s);
    write_precision(o, s.deployment.prec);
    write_engine(o, s.deployment.engine, s.scheduler);
    write_workload(o, s, options);
    write_slo(o, s.slo);
    write_power(o, s.power, s.power_model);
    write_prices(o, s);
    write_rack(o, s.rack);
    write_cost(o, s.cost);
    write_cluster(o, s.cluster);
    if (s.training) {
        write_training(o, *s.training);
    }
    if (s.plan) {
        write_plan(o, *s.plan);
    }
    if (s.availability) {
        write_availability(o, *s.availability);
    }
    if (s.fleet) {
        write_fleet(o, *s.fleet);
    }
    o.line(0, "seed", std::to_string(s.seed));
    return o.text();
}

std::string trace_to_csv(const std::vector<model::TraceRecord>& trace) {
    std::string out = "arrival_s,input_tokens,output_tokens\n";
    for (const auto& r : trace) {
        out += num(r.arrival.si()) + "," + std::to_string(r.input_tokens) + "," +
               std::to_string(r.output_tokens) + "\n";
    }
    return out;
}

void save_scenario(const std::filesystem::path& path, const model::Scenario& s) {
    ScenarioYamlOptions options;
    if (!s.workload.trace.empty()) {
        options.trace_file = path.stem().string() + ".trace.csv";
        write_text_file(path.parent_path() / options.trace_file, trace_to_csv(s.workload.trace));
    }
    write_text_file(path, scenario_to_yaml(s, options));
}

} // namespace gpuplan::hwdb
