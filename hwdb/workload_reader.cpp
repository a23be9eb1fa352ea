#include "hwdb/detail/workload_reader.hpp"

#include "hwdb/scenario_loader.hpp"
#include "hwdb/trace_loader.hpp"
#include "model/error.hpp"
#include "model/validity.hpp"

#include <algorithm>

#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace gpuplan::hwdb::detail {
namespace {

using model::Dimension;

std::optional<Seconds> opt_seconds(MapReader& m, const std::string& key, bool positive = true) {
    if (auto v = m.opt_quantity(key, Dimension::Seconds, positive)) {
        return Seconds(*v);
    }
    return std::nullopt;
}

std::optional<model::Price> opt_token_price(MapReader& m, const std::string& key) {
    if (!m.has(key)) {
        (void)m.opt_string(key);
        return std::nullopt;
    }
    model::Price p = m.price(key);
    if (p.per != model::PriceBasis::MillionTokens) {
        m.fail_at(key, "wrong price unit; write a price per million tokens, e.g. '$3/Mtok'");
    }
    return p;
}

std::vector<double> number_list(MapReader& m, const std::string& key) {
    std::vector<double> out;
    for (const auto& s : m.string_list(key)) {
        try {
            std::size_t used = 0;
            const double v = std::stod(s, &used);
            if (used != s.size()) {
                throw std::invalid_argument(s);
            }
            out.push_back(v);
        } catch (const std::exception&) {
            m.fail_at(key, "'" + s + "' is not a number; give a list of numbers");
        }
    }
    return out;
}

model::LengthDistribution read_length(MapReader& parent, const std::string& key,
                                      const model::LengthDistribution& fallback,
                                      const std::filesystem::path& base) {
    if (!parent.has(key)) {
        (void)parent.opt_string(key);
        return fallback;
    }
    if (parent.node()[key].IsScalar()) {
        // A bare number is a fixed length.
        return model::LengthDistribution::fixed(parent.integer(key, 0, 1 << 28));
    }
    MapReader m = parent.map(key);
    model::LengthDistribution d;
    d.kind = opt_enum<model::LengthKind>(m, "dist").value_or(model::LengthKind::Fixed);
    constexpr long long kMax = 1 << 28;
    if (const auto v = m.opt_integer("value", 0, kMax)) {
        d.mean = *v;
    }
    if (const auto v = m.opt_number("mean", 0, kMax)) {
        d.mean = *v;
    }
    d.stddev = m.opt_number("stddev", 0, kMax).value_or(0);
    d.min = m.opt_integer("min", 0, kMax).value_or(1);
    d.max = m.opt_integer("max", 0, kMax).value_or(d.max);
    if (d.kind == model::LengthKind::Uniform && (!m.has("min") || !m.has("max"))) {
        m.fail_here("a uniform length needs min and max");
    }
    if ((d.kind == model::LengthKind::Normal || d.kind == model::LengthKind::LogNormal) &&
        !m.has("mean")) {
        m.fail_here("a normal or lognormal length needs mean (and stddev)");
    }
    if (d.kind == model::LengthKind::Fixed && !m.has("value") && !m.has("mean")) {
        m.fail_here("a fixed length needs value");
    }
    if (d.min > d.max) {
        m.fail_at("min", "min " + std::to_string(d.min) + " is above max " + std::to_string(d.max));
    }
    for (const double v : number_list(m, "values")) {
        const auto n = token_count(v);
        if (!n) {
            std::ostringstream text;
            text << v;
            m.fail_at("values", "'" + text.str() +
                                    "' is not a token count; give whole numbers "
                                    "from 0 to " +
                                    std::to_string(kMaxTokenCount));
        }
        d.values.push_back(*n);
    }
    d.weights = number_list(m, "weights");
    if (const auto file = m.opt_string("file")) {
        const std::string column = m.string_or("column", "");
        try {
            d.values = load_length_column(base / *file, column);
        } catch (const ConfigError&) {
            throw;
        } catch (const InputError& e) {
            m.fail_at("file", e.what());
        }
    } else {
        (void)m.opt_string("column");
    }
    if (d.kind == model::LengthKind::Empirical && d.values.empty()) {
        m.fail_here("an empirical length needs values (a list) or file (a CSV column)");
    }
    if (!d.weights.empty() && d.weights.size() != d.values.size()) {
        m.fail_at("weights", "give one weight per value (" + std::to_string(d.values.size()) + ")");
    }
    m.finish();
    return d;
}

model::ArrivalProcess read_arrival(MapReader& m) {
    model::ArrivalProcess a;
    a.kind = opt_enum<model::ArrivalKind>(m, "process").value_or(model::ArrivalKind::Poisson);
    a.requests_per_s = m.opt_number("requests_per_s", 1e-9, 1e9);
    a.cv = m.opt_number("cv", 1e-3, 100).value_or(1.0);
    a.users = m.opt_integer("users", 1, 1 << 24).value_or(1);
    a.think_time = opt_seconds(m, "think_time", false).value_or(Seconds(0));
    a.trace_speedup = m.opt_number("trace_speedup", 1e-6, 1e6).value_or(1.0);
    if (auto c = m.opt_map("rate_curve")) {
        a.curve.kind =
            opt_enum<model::RateCurveKind>(*c, "kind").value_or(model::RateCurveKind::Flat);
        for (auto& s : c->map_list("steps")) {
            model::RatePoint p;
            p.at = Seconds(s.quantity("at", Dimension::Seconds, false));
            p.requests_per_s = s.number("requests_per_s", 0, 1e9);
            s.finish();
            if (!a.curve.steps.empty() && p.at < a.curve.steps.back().at) {
                c->fail_at("steps", "steps must be sorted by 'at'");
            }
            a.curve.steps.push_back(p);
        }
        a.curve.period = opt_seconds(*c, "period").value_or(a.curve.period);
        a.curve.amplitude = c->opt_number("amplitude", 0, 0.999).value_or(a.curve.amplitude);
        a.curve.peak_at = opt_seconds(*c, "peak_at", false).value_or(a.curve.peak_at);
        if (a.curve.kind == model::RateCurveKind::Step && a.curve.steps.empty()) {
            c->fail_here("a step rate curve needs steps: [{at: 60 s, requests_per_s: 20}, ...]");
        }
        c->finish();
    }
    m.finish();
    return a;
}

model::RequestClass read_class(MapReader& m, const model::Workload& w,
                               const std::filesystem::path& base) {
    model::RequestClass c;
    c.name = m.string("name");
    c.share = m.opt_number("share", 0, 1e9).value_or(1.0);
    c.input = read_length(m, "input", model::LengthDistribution::fixed(w.input_tokens), base);
    c.output = read_length(m, "output", model::LengthDistribution::fixed(w.output_tokens), base);
    c.shared_prefix = m.opt_integer("shared_prefix", 0, 1 << 28).value_or(0);
    c.prefix_groups = m.opt_integer("prefix_groups", 1, 1 << 24).value_or(1);
    c.priority = m.opt_integer("priority", -1000000, 1000000).value_or(0);
    if (auto slo = m.opt_map("slo")) {
        c.ttft = opt_seconds(*slo, "ttft");
        c.tpot = opt_seconds(*slo, "tpot");
        c.e2e = opt_seconds(*slo, "e2e");
        slo->finish();
    }
    c.route = opt_enum<model::RouteTarget>(m, "route").value_or(model::RouteTarget::Any);
    if (auto a = m.opt_map("agent")) {
        model::AgentSession s;
        s.steps = a->opt_integer("steps", 1, 1 << 20).value_or(s.steps);
        s.step_input = read_length(*a, "step_input", s.step_input, base);
        s.think_time = opt_seconds(*a, "think_time", false).value_or(Seconds(0));
        a->finish();
        c.agent = s;
    }
    m.finish();
    return c;
}

} // namespace

void read_sim_workload(MapReader& m, model::Workload& w, const std::filesystem::path& base_dir) {
    w.requests = m.opt_integer("requests", 1, 1 << 30);
    if (auto d = m.opt_quantity("duration", Dimension::Seconds)) {
        w.duration = Seconds(*d);
    }
    bool arrival_given = false;
    if (auto a = m.opt_map("arrival")) {
        arrival_given = a->has("process");
        w.arrival = read_arrival(*a);
    }
    if (auto t = m.opt_map("trace")) {
        const std::string file = t->string("file");
        const std::string fmt = t->string_or("format", "auto");
        const auto format = find_trace_format(fmt);
        if (!format) {
            t->fail_at("format",
                       "unknown trace format '" + fmt + "'; use auto, azure, vidur or plain");
        }
        try {
            w.trace = load_trace(base_dir / file, *format);
        } catch (const ConfigError&) {
            throw;
        } catch (const InputError& e) {
            t->fail_at("file", e.what());
        }
        t->finish();
        if (!arrival_given) {
            w.arrival.kind = model::ArrivalKind::Trace;
        }
    }
    for (auto& c : m.map_list("classes")) {
        w.classes.push_back(read_class(c, w, base_dir));
    }
}

void read_scheduler(MapReader& m, model::SchedulerConfig& s) {
    s.batching = opt_enum<model::BatchingMode>(m, "batching").value_or(s.batching);
    s.static_batch_size =
        m.opt_integer("static_batch_size", 1, 1 << 20).value_or(s.static_batch_size);
    s.static_max_wait = opt_seconds(m, "static_max_wait", false).value_or(s.static_max_wait);
    s.policy = opt_enum<model::SchedulingPolicy>(m, "scheduling_policy").value_or(s.policy);
    s.preemption_mode =
        opt_enum<model::PreemptionMode>(m, "preemption_mode").value_or(s.preemption_mode);
    if (auto v = m.opt_quantity("swap_space", Dimension::Bytes, false)) {
        s.swap_space = Bytes(*v);
    }
    if (auto v = m.opt_quantity("swap_bandwidth", Dimension::BytesPerSecond)) {
        s.swap_bandwidth = BytesPerSecond(*v);
    }
    s.watermark = m.opt_number("watermark", 0.0, 0.99).value_or(s.watermark);
    s.capacity_scheduler =
        opt_enum<model::CapacityScheduler>(m, "capacity_scheduler").value_or(s.capacity_scheduler);
    s.schedule_policy =
        opt_enum<model::SglangSchedulePolicy>(m, "schedule_policy").value_or(s.schedule_policy);
    s.schedule_conservativeness =
        m.opt_number("schedule_conservativeness", 0.0, 100.0).value_or(s.schedule_conservativeness);
}

namespace {

/// A pool's layout checked against the model (tp and memory), then its keys: the pool.
model::ReplicaPool checked_pool(MapReader& m, const model::Deployment& base, model::ReplicaPool p) {
    try {
        model::validate(model::pool_deployment(base, p));
    } catch (const InvalidArgument& e) {
        m.fail_at(m.has("tp") ? "tp" : "accelerator", e.what());
    }
    m.finish();
    return p;
}

/// A pool's accelerator, node, rent, replicas and tp (cluster.pools and
/// cluster.disaggregation).
void read_pool_hardware(MapReader& m, const Database& db, model::ReplicaPool& p) {
    const std::string accelerator = m.string("accelerator");
    const std::string node = m.string_or("node", "");
    try {
        p.hardware = plan_candidate(db, accelerator, node);
    } catch (const ConfigError&) {
        throw;
    } catch (const InputError& e) {
        m.fail_at(node.empty() ? "accelerator" : "node", e.what());
    }
    if (m.has("gpu_hour")) {
        const model::Price price = m.price("gpu_hour");
        if (price.per != model::PriceBasis::Hour) {
            m.fail_at("gpu_hour", "wrong price unit; write a rent per GPU-hour, e.g. '$2.10/h'");
        }
        p.hardware.gpu_hour = price;
    }
    p.replicas = m.integer("replicas", 1, 1 << 16);
    p.tp = m.opt_integer("tp", 1, 4096).value_or(1);
}

model::ReplicaPool read_pool(MapReader m, const Database& db,
                             const std::vector<std::string>& classes,
                             const model::Deployment& base) {
    model::ReplicaPool p;
    p.name = m.string("name");
    read_pool_hardware(m, db, p);
    if (m.has("classes")) {
        p.classes = m.string_list("classes");
        for (const auto& name : p.classes) {
            if (std::find(classes.begin(), classes.end(), name) == classes.end()) {
                std::string known;
                for (const auto& k : classes) {
                    known += (known.empty() ? "" : ", ") + k;
                }
                m.fail_at("classes",
                          "no request class is named '" + name + "'; use one of " + known);
            }
        }
    }
    p.max_prompt_tokens = m.opt_integer("max_prompt_tokens", 1, 1 << 30);
    p.min_replicas = m.opt_integer("min_replicas", 1, 1 << 16);
    p.max_replicas = m.opt_integer("max_replicas", 1, 1 << 16);
    p.owned = m.boolean_or("owned", false);
    if (p.min_replicas.value_or(p.replicas) > p.replicas) {
        m.fail_at("min_replicas", "min_replicas " + std::to_string(*p.min_replicas) +
                                      " is above the pool's replicas " +
                                      std::to_string(p.replicas) +
                                      "; give 1 <= min_replicas <= replicas <= max_replicas");
    }
    if (p.max_replicas.value_or(p.replicas) < p.replicas) {
        m.fail_at("max_replicas", "max_replicas " + std::to_string(*p.max_replicas) +
                                      " is below the pool's replicas " +
                                      std::to_string(p.replicas) +
                                      "; give 1 <= min_replicas <= replicas <= max_replicas");
    }
    return checked_pool(m, base, std::move(p));
}

/// One pool of cluster.disaggregation (`role`: prefill or decode).
model::ReplicaPool read_disaggregated_pool(MapReader m, const Database& db, const char* role,
                                           const model::Deployment& base) {
    model::ReplicaPool p;
    p.name = role;
    read_pool_hardware(m, db, p);
    return checked_pool(m, base, std::move(p));
}

/// cluster.disaggregation (docs/simulator.md, "Prefill/decode disaggregation").
model::Disaggregation read_disaggregation(MapReader& g, const Database& db,
                                          const model::Deployment& base) {
    model::Disaggregation out;
    out.prefill = read_disaggregated_pool(g.map("prefill"), db, "prefill", base);
    out.decode = read_disaggregated_pool(g.map("decode"), db, "decode", base);
    if (g.has("link")) {
        if (g.has("link_bandwidth") || g.has("link_latency")) {
            g.fail_at("link", "give either link (an hwdb interconnect) or link_bandwidth and "
                              "link_latency, not both");
        }
        // A null link_bandwidth/link_latency (`--set ...=null`, an emptied field) is absent.
        (void)g.opt_string("link_bandwidth");
        (void)g.opt_string("link_latency");
        const std::string name = g.string("link");
        try {
            out.link = db.interconnect(name);
        } catch (const ConfigError&) {
            throw;
        } catch (const InputError& e) {
            g.fail_at("link", e.what());
        }
    } else if (g.has("link_bandwidth")) {
        (void)g.opt_string("link"); // null: absent
        out.link = model::InterconnectSpec{};
        out.link.bandwidth_per_direction =
            BytesPerSecond(g.quantity("link_bandwidth", Dimension::BytesPerSecond));
        out.link.latency = opt_seconds(g, "link_latency", false).value_or(Seconds(0));
    } else {
        g.fail_here("cluster.disaggregation needs the link between the pools: link (an hwdb "
                    "interconnect such as ib-ndr) or link_bandwidth (per GPU, per direction)");
    }
    out.transfer = opt_enum<model::KvTransferMode>(g, "transfer").value_or(out.transfer);
    g.finish();
    return out;
}

} // namespace

model::Cluster read_cluster(std::optional<MapReader> m, const Database& db,
                            const std::vector<std::string>& classes,
                            const model::Deployment& base) {
    model::Cluster c;
    if (!m) {
        return c;
    }
    for (auto& p : m->map_list("pools")) {
        c.pools.push_back(read_pool(std::move(p), db, classes, base));
    }
    if (!c.pools.empty()) {
        if (m->has("replicas")) {
            m->fail_at("replicas", "cluster.pools give the replicas; leave cluster.replicas out");
        }
        if (m->has("scale")) {
            m->fail_at("scale", "scale-ups are not modelled with cluster.pools; leave one out");
        }
        for (const auto& cls : classes) {
            const bool served = std::any_of(c.pools.begin(), c.pools.end(), [&](const auto& p) {
                return p.classes.empty() ||
                       std::find(p.classes.begin(), p.classes.end(), cls) != p.classes.end();
            });
            if (!served) {
                m->fail_at("pools", "no pool serves class '" + cls +
                                        "'; add it to a pool's classes or leave a pool's "
                                        "classes out (every class)");
            }
        }
        for (std::size_t i = 0; i < c.pools.size(); ++i) {
            for (std::size_t j = 0; j < i; ++j) {
                if (c.pools[i].name == c.pools[j].name) {
                    m->fail_at("pools", "two pools are named '" + c.pools[i].name +
                                            "'; give each pool its own name");
                }
            }
        }
    }
    c.replicas = m->opt_integer("replicas", 1, 1 << 20);
    c.router = opt_enum<model::RouterPolicy>(*m, "router").value_or(c.router);
    if (c.router == model::RouterPolicy::AdapterAffinity && !base.engine.lora) {
        m->fail_at("router", "adapter_affinity routes by LoRA adapter and the scenario has no "
                             "engine.lora block; add one (adapters, rank, max_loras) or pick "
                             "another router");
    }
    if (auto p = m->opt_map("prefix_routing")) {
        model::PrefixRouting& pr = c.prefix_routing;
        pr.weight = p->opt_number("weight", 0.0, 1.0).value_or(pr.weight);
        pr.balance_abs_threshold =
            p->opt_integer("balance_abs_threshold", 0, 1 << 30).value_or(pr.balance_abs_threshold);
        pr.balance_rel_threshold =
            p->opt_number("balance_rel_threshold", 1.0, 1e9).value_or(pr.balance_rel_threshold);
        p->finish();
    }
    if (auto a = m->opt_map("admission")) {
        c.admission.max_queue = a->opt_integer("max_queue", 0, 1 << 30);
        c.admission.max_concurrency = a->opt_integer("max_concurrency", 1, 1 << 30);
        c.admission.timeout = opt_seconds(*a, "timeout");
        c.admission.max_retries = a->opt_integer("max_retries", 0, 1000).value_or(0);
        c.admission.retry_backoff =
            opt_seconds(*a, "retry_backoff", false).value_or(c.admission.retry_backoff);
        a->finish();
    }
    if (auto s = m->opt_map("cold_start")) {
        if (auto v = s->opt_quantity("load_bandwidth", Dimension::BytesPerSecond)) {
            c.cold_start.load_bandwidth = BytesPerSecond(*v);
        }
        c.cold_start.startup = opt_seconds(*s, "startup", false).value_or(Seconds(0));
        c.cold_start.at_start = s->boolean_or("at_start", false);
        s->finish();
    }
    for (auto& e : m->map_list("scale")) {
        model::ScaleEvent ev;
        ev.at = Seconds(e.quantity("at", Dimension::Seconds, false));
        ev.replicas = e.integer("replicas", 1, 1 << 20);
        e.finish();
        c.scale.push_back(ev);
    }
    if (auto a = m->opt_map("autoscaler")) {
        if (!c.scale.empty()) {
            m->fail_at("autoscaler",
                       "the autoscaler is not modelled with cluster.scale (both set the replica "
                       "count over time); leave cluster.scale out and bound the autoscaler with "
                       "min_replicas and max_replicas, or leave the autoscaler out");
        }
        const bool pooled = !c.pools.empty();
        if (pooled && (a->has("min_replicas") || a->has("max_replicas"))) {
            a->fail_at(a->has("min_replicas") ? "min_replicas" : "max_replicas",
                       "with cluster.pools each pool scales within its own bounds; give "
                       "min_replicas and max_replicas in the pools instead");
        }
        model::Autoscaler as;
        as.metric = opt_enum<model::ScaleMetric>(*a, "metric").value_or(as.metric);
        as.target = a->opt_number("target", 0.0, 1e9).value_or(as.target);
        as.interval = opt_seconds(*a, "interval").value_or(as.interval);
        as.provisioning = opt_seconds(*a, "provisioning", false).value_or(as.provisioning);
        as.cooldown = opt_seconds(*a, "cooldown", false).value_or(as.cooldown);
        as.tolerance = a->opt_number("tolerance", 0.0, 1e9).value_or(as.tolerance);
        as.min_replicas = a->opt_integer("min_replicas", 1, 1 << 20).value_or(as.min_replicas);
        as.max_replicas = pooled ? as.min_replicas : a->integer("max_replicas", 1, 1 << 20);
        try {
            model::check_autoscaler(as,
                                    pooled ? as.min_replicas : c.replicas.value_or(base.par.dp));
        } catch (const InvalidArgument& e) {
            const std::string why = e.what();
            std::string key = a->has("min_replicas") ? "min_replicas" : "max_replicas";
            for (const char* k : {"target", "interval"}) {
                if (why.find(k) != std::string::npos && a->has(k)) {
                    key = k;
                }
            }
            a->fail_at(key, why);
        }
        a->finish();
        c.autoscaler = as;
    }
    if (auto f = m->opt_map("failures")) {
        if (!c.pools.empty()) {
            m->fail_at("failures",
                       "replica failures are not modelled with cluster.pools (a spare would "
                       "belong to one pool's hardware); simulate each pool as its own scenario "
                       "with cluster.failures, or leave the pools out");
        }
        if (!c.scale.empty()) {
            m->fail_at("failures",
                       "replica failures are not modelled with cluster.scale (the scripted count "
                       "does not replace a failed replica); use cluster.autoscaler, which "
                       "replaces it, or leave cluster.scale out");
        }
        model::ReplicaFailures rf;
        rf.mtbf = opt_seconds(*f, "mtbf");
        rf.mttr = opt_seconds(*f, "mttr", false);
        rf.spares = f->opt_integer("spares", 0, 1 << 20).value_or(0);
        rf.in_flight = opt_enum<model::FailedRequests>(*f, "in_flight").value_or(rf.in_flight);
        if (auto l = f->opt_map("degraded_link")) {
            model::LinkDegradation ld;
            ld.mtbf = Seconds(l->quantity("mtbf", Dimension::Seconds));
            ld.mttr = opt_seconds(*l, "mttr", false);
            ld.bandwidth_factor =
                l->opt_number("bandwidth_factor", 1e-9, 1.0).value_or(ld.bandwidth_factor);
            l->finish();
            rf.degraded_link = ld;
        }
        try {
            model::check_replica_failures(rf);
        } catch (const InvalidArgument& e) {
            f->fail_here(e.what());
        }
        f->finish();
        c.failures = rf;
    }
    if (auto g = m->opt_map("disaggregation")) {
        if (!c.pools.empty() || c.replicas || !c.scale.empty() || c.autoscaler || c.failures) {
            m->fail_at("disaggregation",
                       "disaggregation gives its own pools; leave cluster.pools, replicas, "
                       "scale, autoscaler and failures out");
        }
        c.disaggregation = read_disaggregation(*g, db, base);
    }
    if (auto cl = m->opt_map("cloud")) {
        model::CloudEndpoint ep;
        ep.name = cl->string_or("name", ep.name);
        ep.ttft_median = opt_seconds(*cl, "ttft_median").value_or(ep.ttft_median);
        ep.ttft_sigma = cl->opt_number("ttft_sigma", 0, 5).value_or(ep.ttft_sigma);
        ep.output_tokens_per_s =
            cl->opt_number("output_tokens_per_s", 1e-3, 1e9).value_or(ep.output_tokens_per_s);
        ep.rate_limit_rps = cl->opt_number("rate_limit_rps", 1e-6, 1e9);
        ep.input_price = opt_token_price(*cl, "input_price");
        ep.output_price = opt_token_price(*cl, "output_price");
        cl->finish();
        c.cloud = ep;
    }
    c.cloud_fallback = m->boolean_or("cloud_fallback", true);
    m->finish();
    return c;
}

} // namespace gpuplan::hwdb::detail
