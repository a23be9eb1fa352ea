#include "hwdb/detail/plan_reader.hpp"

#include "hwdb/scenario_loader.hpp"
#include "model/error.hpp"

#include <charconv>
#include <string>
#include <vector>

namespace gpuplan::hwdb::detail {
namespace {

std::vector<int> int_list(MapReader& m, const std::string& key, int min, int max) {
    std::vector<int> out;
    for (const auto& s : m.string_list(key)) {
        int v = 0;
        const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
        if (r.ec != std::errc() || r.ptr != s.data() + s.size() || v < min || v > max) {
            m.fail_at(key, "'" + s + "' is not a whole number from " + std::to_string(min) +
                               " to " + std::to_string(max) + "; give a list such as [1, 2, 4]");
        }
        out.push_back(v);
    }
    if (m.has(key) && out.empty()) {
        m.fail_at(key, "the list is empty; leave the key out for the default");
    }
    return out;
}

std::vector<model::Precision> precision_list(MapReader& m, const std::string& key) {
    std::vector<model::Precision> out;
    for (const auto& s : m.string_list(key)) {
        try {
            out.push_back(model::parse_precision(s));
        } catch (const InputError& e) {
            m.fail_at(key, e.what());
        }
    }
    if (m.has(key) && out.empty()) {
        m.fail_at(key, "the list is empty; leave the key out for the scenario's precision");
    }
    return out;
}

std::optional<model::Price> price_of(MapReader& m, const std::string& key, model::PriceBasis basis,
                                     const char* example) {
    if (!m.has(key)) {
        (void)m.opt_string(key); // marks the key as known
        return std::nullopt;
    }
    const model::Price p = m.price(key);
    if (p.per != basis) {
        m.fail_at(key, std::string("wrong price unit; write e.g. '") + example + "'");
    }
    return p;
}

model::PlanCandidate read_candidate(MapReader m, const Database& db) {
    model::PlanCandidate c;
    const std::string accelerator = m.string("accelerator");
    const std::string node = m.string_or("node", "");
    try {
        c = plan_candidate(db, accelerator, node);
    } catch (const ConfigError&) {
        throw;
    } catch (const InputError& e) {
        m.fail_at(node.empty() ? "accelerator" : "node", e.what());
    }
    c.gpu_hour = price_of(m, "gpu_hour", model::PriceBasis::Hour, "$2.10/h");
    c.gpu_purchase = price_of(m, "gpu_purchase", model::PriceBasis::Once, "$25000");
    c.node_purchase = price_of(m, "node_purchase", model::PriceBasis::Once, "$270000");
    m.finish();
    return c;
}

} // namespace

model::PlanConfig read_plan(MapReader m, const Database& db) {
    model::PlanConfig p;
    for (auto& c : m.map_list("candidates")) {
        p.candidates.push_back(read_candidate(std::move(c), db));
    }
    p.max_gpus = m.opt_integer("max_gpus", 1, 1 << 16).value_or(p.max_gpus);
    p.tp = int_list(m, "tp", 1, 1024);
    p.pp = int_list(m, "pp", 1, 1024);
    p.weights = precision_list(m, "weights");
    p.kv_cache = precision_list(m, "kv_cache");
    p.max_num_seqs = int_list(m, "max_num_seqs", 1, 1 << 20);
    for (const std::string& v : m.string_list("speculative")) {
        if (v != "on" && v != "off") {
            m.fail_at("speculative", "unknown value '" + v + "'; list on, off or both");
        }
        p.speculative.push_back(v == "on");
    }
    p.budget = price_of(m, "budget", model::PriceBasis::Month, "$50000/month");
    if (const auto w = m.opt_quantity("power_budget", model::Dimension::Watts)) {
        p.power_budget = Watts(*w);
    }
    p.max_racks = m.opt_integer("max_racks", 1, 1 << 20);
    p.pricing = opt_enum<model::PlanPricing>(m, "pricing").value_or(p.pricing);
    p.top = m.opt_integer("top", 1, 1000).value_or(p.top);
    p.requests = m.opt_integer("requests", 10, 1 << 24).value_or(p.requests);
    p.max_simulations = m.opt_integer("max_simulations", 1, 100000).value_or(p.max_simulations);
    p.prune_margin = m.opt_number("prune_margin", 0.0, 10.0).value_or(p.prune_margin);
    m.finish();
    return p;
}

} // namespace gpuplan::hwdb::detail
