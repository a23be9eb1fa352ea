#include "gui/analysis.hpp"

#include "model/error.hpp"
#include "model/memory.hpp"
#include "model/precision.hpp"

#include <algorithm>
#include <chrono>
#include <string>

namespace gpuplan::gui {

model::EfficiencyProfile profile_for(const model::AcceleratorSpec&) {
    // The CLI's choose_profile() uses the built-in profile; the app must show the same numbers.
    return model::default_profile();
}

std::optional<model::Price> hourly_rent(const model::Scenario& s) {
    if (s.prices.gpu_hour) {
        return s.prices.gpu_hour;
    }
    const model::PriceEstimate* newest = nullptr;
    for (const auto& p : s.deployment.gpu.prices) {
        if (p.price.per == model::PriceBasis::Hour && p.price.money.currency == "USD" &&
            (!newest || p.date > newest->date)) {
            newest = &p;
        }
    }
    return newest ? std::optional<model::Price>(newest->price) : std::nullopt;
}

std::vector<model::AcceleratorSpec> what_if_candidates(const hwdb::Database& db,
                                                       const model::AcceleratorSpec& gpu) {
    std::vector<model::AcceleratorSpec> out;
    for (const auto& a : db.accelerators()) {
        if (a.vendor == gpu.vendor && a.launch_year >= gpu.launch_year &&
            a.form_factor == gpu.form_factor) {
            out.push_back(a);
        }
    }
    return out;
}

namespace {

const model::ServerSpec* server_of(const model::Scenario& s, const hwdb::Database& db) {
    if (s.node_ref.empty()) {
        return nullptr;
    }
    try {
        return &db.server(s.node_ref);
    } catch (const InputError&) {
        return nullptr;
    }
}

model::NodePower node_of(const model::Scenario& s, const model::ServerSpec* server) {
    return server ? model::node_power_of(*server, s.power_model)
                  : model::unknown_node(s.deployment.gpus_per_node, s.power_model);
}

} // namespace

Analysis analyze(const model::Scenario& s, const hwdb::Database& db, const AnalysisParts& parts) {
    const auto start = std::chrono::steady_clock::now();
    Analysis a;
    a.scenario = s;
    const auto& d = s.deployment;
    const model::EfficiencyProfile profile = profile_for(d.gpu);
    a.bottleneck = model::find_bottleneck(d, s.workload, profile);
    if (parts.what_ifs) {
        const auto candidates = what_if_candidates(db, d.gpu);
        a.what_ifs = model::what_ifs(d, s.workload, profile, candidates);
    }
    if (parts.power_cost) {
        const model::ServerSpec* server = server_of(s, db);
        const model::NodePower node = node_of(s, server);
        try {
            a.power = model::estimate_power(d, s.workload, profile, s.power_model, s.power, node,
                                            s.slo, s.rack.nodes_per_rack);
        } catch (const Error& e) {
            a.power_error = e.what();
        }
        if (a.power) {
            try {
                // The CLI's default basis: every GPU at its limit, plus the host.
                const int nodes = s.rack.nodes.value_or(a.power->nodes);
                a.rack = model::plan_racks(a.power->node_peak, node.rack_units, nodes, s.rack,
                                           s.power.rack_budget);
            } catch (const Error& e) {
                a.rack_error = e.what();
            }
            try {
                a.cost_inputs = model::cost_inputs(s, server, *a.power);
                a.cost = model::estimate_cost(*a.cost_inputs);
            } catch (const Error& e) {
                a.cost_error = e.what();
            }
        } else {
            a.rack_error = a.cost_error = "needs the power estimate: " + a.power_error;
        }
    }
    if (parts.training && s.training) {
        model::TrainingCostInputs prices;
        prices.gpu_hour = hourly_rent(s);
        prices.electricity = s.prices.electricity;
        prices.pue = s.power.pue;
        prices.power_model = s.power_model;
        try {
            a.training = model::estimate_training(d, *s.training, profile, prices);
        } catch (const Error& e) {
            a.training_error = e.what();
        }
        if (parts.layout_search) {
            try {
                model::SearchOptions o;
                o.top = 8;
                a.layouts = model::search_layouts(d, *s.training, profile, o, prices);
            } catch (const Error& e) {
                a.training_error += (a.training_error.empty() ? "" : "; ") + std::string(e.what());
            }
        }
    } else if (parts.training) {
        a.training_error = "this scenario has no training job; tick \"Plan a training job\" to add one";
    }
    a.compute_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return a;
}

bool apply_what_if(model::Scenario& s, const model::WhatIf& x, const hwdb::Database& db,
                   const model::MemoryEstimate& baseline) {
    if (!x.applicable) {
        return false;
    }
    auto& d = s.deployment;
    const std::string& key = x.name;
    const auto set_precision = [](model::Precision& p, const char* name) {
        if (const auto found = model::find_precision(name)) {
            p = *found;
            return true;
        }
        return false;
    };
    // The changes model::what_ifs makes (model/bottleneck.cpp), keyed by WhatIf::name.
    if (key == "weights-fp8") {
        return set_precision(d.prec.weights, "fp8");
    }
    if (key == "weights-int8") {
        return set_precision(d.prec.weights, d.gpu.dense.int8 ? "int8" : "int8-weight-only");
    }
    if (key == "weights-int4") {
        return set_precision(d.prec.weights, "awq-int4");
    }
    if (key == "kv-fp8") {
        return set_precision(d.prec.kv_cache, "fp8");
    }
    if (key == "max-model-len-half") {
        d.engine.max_model_len = baseline.engine.max_model_len / 2;
        return true;
    }
    if (key == "max-num-seqs") {
        // "max_num_seqs 256 → 1234 (...)": the new value follows the arrow.
        const auto arrow = x.change.find("\xE2\x86\x92 ");
        if (arrow == std::string::npos) {
            return false;
        }
        const int n = std::stoi(x.change.substr(arrow + 4));
        d.engine.max_num_seqs = n;
        if (d.engine.max_num_batched_tokens.value_or(baseline.engine.max_num_batched_tokens) < n) {
            d.engine.max_num_batched_tokens = n;
        }
        return true;
    }
    if (key == "tp-x2" || key == "tp-half") {
        d.par.tp = key == "tp-x2" ? d.par.tp * 2 : d.par.tp / 2;
        if (d.par.ep > 1) {
            d.par.ep = std::max(1, d.par.tp);
        }
        d.gpus = d.par.tp * d.par.pp * d.par.dp;
        return true;
    }
    if (key == "replicas+1") {
        d.par.dp += 1;
        d.gpus = d.par.tp * d.par.pp * d.par.dp;
        return true;
    }
    if (key.rfind("gpu:", 0) == 0) {
        // Same layout and links, another accelerator (as the what-if was estimated).
        const model::AcceleratorSpec* g = db.find_accelerator(key.substr(4));
        if (!g) {
            return false;
        }
        d.gpu = *g;
        s.accelerator_ref = g->name;
        s.node_ref.clear();
        return true;
    }
    return false;
}

} // namespace gpuplan::gui
