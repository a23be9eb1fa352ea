#include "gui/analysis.hpp"

#include "hwdb/error_bands_io.hpp"
#include "hwdb/profile_loader.hpp"
#include "hwdb/scenario_loader.hpp"
#include "model/error.hpp"
#include "model/memory.hpp"
#include "model/precision.hpp"
#include "plan/analysis.hpp"
#include "plan/disaggregation.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

namespace gpuplan::gui {

Core::Core(const hwdb::Database& db, std::vector<std::filesystem::path> hwdb_folders)
    : db_(db), profile_folders_(hwdb::profile_folders(hwdb_folders)),
      bands_(hwdb::load_error_bands(hwdb_folders)) {}

model::EfficiencyProfile Core::profile_for(const model::AcceleratorSpec& gpu) const {
    const std::lock_guard lock(mutex_);
    if (const auto it = profiles_.find(gpu.name); it != profiles_.end()) {
        return it->second;
    }
    // The CLI's choose_profile() without --profile: the app must show the same numbers.
    model::EfficiencyProfile p =
        hwdb::find_profile_for_gpu(profile_folders_, gpu).value_or(model::default_profile());
    profiles_.emplace(gpu.name, p);
    return p;
}

const model::ServerSpec* Core::server_of(const model::Scenario& s) const {
    if (s.node_ref.empty()) {
        return nullptr;
    }
    try {
        return &db_.server(s.node_ref);
    } catch (const InputError&) {
        return nullptr;
    }
}

model::NodePower Core::node_of(const model::Scenario& s) const {
    return plan::scenario_node(s, server_of(s));
}

std::vector<model::AcceleratorSpec> what_if_candidates(const hwdb::Database& db,
                                                       const model::AcceleratorSpec& gpu) {
    return hwdb::similar_accelerators(db, gpu);
}

namespace {

std::optional<BytesPerSecond> host_link_bandwidth(const hwdb::Database& db,
                                                  const model::AcceleratorSpec& gpu) {
    if (gpu.host_link.empty()) {
        return std::nullopt;
    }
    try {
        return db.interconnect(gpu.host_link).bandwidth_per_direction;
    } catch (const InputError&) {
        return std::nullopt; // the loader keeps the simulator's default then, too
    }
}

/// Re-derives the swap bandwidth after the accelerator changed from `old_gpu`.
void follow_swap_bandwidth(model::Scenario& s, const hwdb::Database& db,
                           const model::AcceleratorSpec& old_gpu) {
    auto& swap = s.scheduler.swap_bandwidth;
    const auto old_host = host_link_bandwidth(db, old_gpu);
    if (!swap || (old_host && *swap == *old_host)) {
        swap = host_link_bandwidth(db, s.deployment.gpu);
    }
}

} // namespace

void change_hardware(model::Scenario& s, const hwdb::Database& db, const std::string& accelerator,
                     const std::string& node) {
    const model::AcceleratorSpec old = s.deployment.gpu;
    hwdb::set_hardware(s, db, accelerator, node);
    follow_swap_bandwidth(s, db, old);
}

Analysis analyze(const model::Scenario& s, const Core& core, const AnalysisParts& parts) {
    const auto start = std::chrono::steady_clock::now();
    Analysis a;
    a.scenario = s;
    const auto& d = s.deployment;
    const hwdb::Database& db = core.db();
    const model::EfficiencyProfile profile = core.profile_for(d.gpu);
    // The serving -> power -> rack -> cost chain the CLI's estimate, rack and cost commands run
    // (plan/analysis.hpp). It throws when the serving estimate fails; a failing later link is
    // shown in its tab instead of stopping the others.
    plan::AnalysisOptions links;
    links.parts = {.serving = true,
                   .power = parts.power_cost,
                   .racks = parts.power_cost,
                   .cost = parts.power_cost};
    links.on_error = plan::OnError::Record;
    plan::ServingAnalysis chain = plan::analyze_serving(s, core.server_of(s), profile, links);
    a.bottleneck = std::move(*chain.bottleneck);
    // Each figure's band as `estimate` prints it (docs/validation.md).
    const model::BandQuery q = model::band_query(d);
    for (const model::EstimateFigureBand& eb : model::kEstimateFigureBands) {
        a.bands.emplace_back(eb.key, model::band_for(core.error_bands(), eb.figure, eb.regime, q));
    }
    if (parts.what_ifs) {
        std::vector<model::GpuCandidate> candidates;
        for (const auto& g : what_if_candidates(db, d.gpu)) {
            candidates.push_back({g, core.profile_for(g)});
        }
        a.what_ifs = model::what_ifs(d, s.workload, profile, candidates);
    }
    if (parts.power_cost) {
        a.power = std::move(chain.power);
        a.power_error = std::move(chain.power_error);
        a.rack = std::move(chain.rack);
        a.rack_error = std::move(chain.rack_error);
        a.cost_inputs = std::move(chain.cost_inputs);
        a.cost = std::move(chain.cost);
        a.cost_error = std::move(chain.cost_error);
    }
    if (parts.training && s.training) {
        model::TrainingCostInputs prices;
        if (const auto rent = model::gpu_hour_price(s)) {
            prices.gpu_hour = rent->price;
        }
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
        a.training_error =
            "this scenario has no training job; tick \"Plan a training job\" to add one";
    }
    try {
        a.disaggregation = plan::scenario_disaggregation(
            s, [&](const model::AcceleratorSpec& gpu) { return core.profile_for(gpu); });
    } catch (const Error& e) {
        a.disaggregation_error = e.what();
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
        int n = 0;
        try {
            n = std::stoi(x.change.substr(arrow + 4));
        } catch (const std::exception&) {
            return false;
        }
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
        return true;
    }
    if (key == "replicas+1") {
        d.par.dp += 1;
        return true;
    }
    if (key.rfind("gpu:", 0) == 0) {
        // Same layout and links, another accelerator (as the what-if was estimated).
        const model::AcceleratorSpec* g = db.find_accelerator(key.substr(4));
        if (!g) {
            return false;
        }
        const model::AcceleratorSpec old = d.gpu;
        d.gpu = *g;
        s.accelerator_ref = g->name;
        s.node_ref.clear();
        follow_swap_bandwidth(s, db, old);
        return true;
    }
    return false;
}

} // namespace gpuplan::gui

namespace gpuplan::gui {

plan::SizingResult search_sizing(const model::Scenario& s, const Core& core, std::stop_token stop,
                                 const sim::ProgressFn& progress) {
    std::optional<model::ServerSpec> node;
    if (const model::ServerSpec* server = core.server_of(s)) {
        node = *server;
    }
    const plan::SizingOptions o = plan::sizing_options(
        s, node, [&core](const model::AcceleratorSpec& gpu) { return core.profile_for(gpu); });
    return plan::size_deployment(s, node, o, std::move(stop), progress);
}

bool adopt_configuration(model::Scenario& s, const hwdb::Database& db,
                         const model::PlanConfig& plan, const plan::SizingConfig& config) {
    if (config.candidate < 0 ||
        static_cast<std::size_t>(config.candidate) >= plan.candidates.size()) {
        return false;
    }
    const model::AcceleratorSpec old = s.deployment.gpu;
    model::Scenario t = plan::configured_scenario(
        s, plan.candidates[static_cast<std::size_t>(config.candidate)], config);
    t.plan = s.plan;
    follow_swap_bandwidth(t, db, old);
    s = std::move(t);
    return true;
}

std::vector<std::string> plan_candidate_names(const model::Scenario& s) {
    std::vector<std::string> out;
    if (s.plan) {
        for (const auto& c : s.plan->candidates) {
            out.push_back(c.accelerator_ref.empty() ? c.gpu.name : c.accelerator_ref);
        }
    }
    return out;
}

void set_plan_candidates(model::Scenario& s, const hwdb::Database& db,
                         const std::vector<std::string>& accelerators) {
    model::PlanConfig p = s.plan.value_or(model::PlanConfig{});
    std::vector<model::PlanCandidate> next;
    for (const auto& name : accelerators) {
        const auto same = std::find_if(
            p.candidates.begin(), p.candidates.end(), [&](const model::PlanCandidate& c) {
                return (c.accelerator_ref.empty() ? c.gpu.name : c.accelerator_ref) == name;
            });
        next.push_back(same != p.candidates.end() ? *same : hwdb::plan_candidate(db, name));
    }
    p.candidates = std::move(next);
    s.plan = std::move(p);
}

} // namespace gpuplan::gui
