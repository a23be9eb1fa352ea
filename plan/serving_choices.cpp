#include "plan/serving_choices.hpp"

#include "model/kv_offload.hpp"
#include "model/lora.hpp"
#include "model/memory.hpp"
#include "model/speculative_config.hpp"
#include "model/unit_parser.hpp"
#include "plan/choice_run.hpp"
#include "plan/thread_pool.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace gpuplan::plan {
namespace {

/// The ranking: meets the SLO, then the higher SLO attainment, then the lower TTFT (or, for
/// speculation, TPOT) at the percentile; ties keep the list order (fewer resources first).
bool better(const ServingOption& a, const ServingOption& b, bool by_tpot) {
    if (a.meets_slo != b.meets_slo) {
        return a.meets_slo;
    }
    if (a.slo_attainment != b.slo_attainment) {
        return a.slo_attainment > b.slo_attainment;
    }
    return by_tpot ? a.tpot_at_p_s < b.tpot_at_p_s : a.ttft_at_p_s < b.ttft_at_p_s;
}

void take_run(ServingOption& o, const ChoiceRun& r) {
    o.simulated = r.ok;
    o.meets_slo = r.meets;
    o.slo_attainment = r.attainment;
    o.ttft_mean_s = r.ttft_mean;
    o.ttft_at_p_s = r.ttft_p;
    o.tpot_at_p_s = r.tpot_p;
    o.prefix_hit_rate = r.hit;
    o.gpu_hit_rate = r.hit;
    if (r.kv_offload) {
        const sim::KvOffloadResult& k = *r.kv_offload;
        o.gpu_hit_rate = k.rate(k.gpu_hit_tokens);
        o.host_hit_rate = k.rate(k.host_hit_tokens);
        o.nvme_hit_rate = k.rate(k.nvme_hit_tokens);
    }
    if (r.lora) {
        o.lora_hit_rate = r.lora->hit_rate;
        o.lora_loads = r.lora->loads;
    }
}

/// Simulates every option's scenario on `threads` workers, ranks them best first and names
/// the winner and the option it is judged against (`reference`, or the runner-up when the
/// reference wins). Returns the reason the winner wins ("" when nothing tells them apart).
std::string rank(ServingChoice& out, std::vector<ServingOption> opts,
                 const std::vector<model::Scenario>& scenarios, const sim::SimOptions& options,
                 int threads, const std::stop_token& stop, const std::string& reference,
                 double percentile, const ServingOption** win, const ServingOption** other,
                 bool by_tpot = false) {
    std::vector<ChoiceRun> runs(scenarios.size());
    parallel_for(scenarios.size(), threads,
                 [&](std::size_t i) { runs[i] = simulate_choice(scenarios[i], options, stop); });
    for (std::size_t i = 0; i < opts.size(); ++i) {
        take_run(opts[i], runs[i]);
    }
    std::stable_sort(opts.begin(), opts.end(), [&](const ServingOption& a, const ServingOption& b) {
        return better(a, b, by_tpot);
    });
    out.options = std::move(opts);
    const ServingOption& w = out.options.front();
    out.chosen = w.name;
    const auto it =
        std::find_if(out.options.begin() + 1, out.options.end(), [&](const ServingOption& o) {
            return w.name == reference || o.name == reference;
        });
    const ServingOption& o = it != out.options.end() ? *it : w;
    *win = &w;
    *other = &o;
    if (w.meets_slo && !o.meets_slo) {
        return "it meets the SLO and " + o.name + " does not";
    }
    if (w.slo_attainment != o.slo_attainment) {
        return "higher SLO attainment (" + choice_pct(w.slo_attainment) + " against " +
               choice_pct(o.slo_attainment) + ")";
    }
    if (by_tpot && w.tpot_at_p_s != o.tpot_at_p_s) {
        return "lower p" + model::format_fixed(percentile, 0) + " TPOT (" +
               choice_ms(w.tpot_at_p_s) + " against " + choice_ms(o.tpot_at_p_s) + ")";
    }
    if (!by_tpot && w.ttft_at_p_s != o.ttft_at_p_s) {
        return "lower p" + model::format_fixed(percentile, 0) + " TTFT (" +
               choice_ms(w.ttft_at_p_s) + " against " + choice_ms(o.ttft_at_p_s) + ")";
    }
    return "";
}

std::string tiers_of(const ServingOption& o) {
    return choice_pct(o.prefix_hit_rate) + " (GPU " + choice_pct(o.gpu_hit_rate) + ", host " +
           choice_pct(o.host_hit_rate) + ", NVMe " + choice_pct(o.nvme_hit_rate) + ")";
}

} // namespace

// NOLINTBEGIN(performance-unnecessary-value-param): stop_token by value, as compare_routers
ServingChoice compare_kv_offload(const model::Scenario& configured, const sim::SimOptions& options,
                                 int threads, std::stop_token stop) {
    // NOLINTEND(performance-unnecessary-value-param)
    ServingChoice out;
    out.dimension = "kv_offload";
    const model::Scenario& t = configured;
    const auto& given = t.deployment.engine.kv_offload;
    const double working_set = model::kv_working_set_tokens(t.workload);
    const model::MemoryEstimate mem = model::estimate_memory(t.deployment);
    if (!t.deployment.engine.enable_prefix_caching.value_or(true)) {
        out.chosen = given ? "scenario's" : "off";
        out.verdict = "prefix caching is off, so no tier serves a prompt";
        return out;
    }
    if (!given && working_set <= 0) {
        out.chosen = "off";
        out.verdict = "off: no class shares a prefix, so every prompt is unique and no tier "
                      "could serve one";
        return out;
    }
    out.choice = true;
    model::KvOffloadConfig base = given ? *given : model::KvOffloadConfig{};
    if (!base.host_link) {
        base.host_link = t.scheduler.swap_bandwidth;
    }
    const double pool = mem.kv_budget.si();
    const double scenario_host =
        given ? given->host.value_or(Bytes(model::kDefaultHostRatio * pool)).si() : -1.0;
    std::vector<ServingOption> opts;
    std::vector<model::Scenario> scenarios;
    const auto add = [&](std::string name, double host, bool off) {
        ServingOption o;
        o.name = std::move(name);
        o.value = off ? 0.0 : host;
        o.scenario = off ? !given : host == scenario_host;
        o.kv_tokens = mem.kv_tokens;
        model::Scenario v = t;
        if (off) {
            v.deployment.engine.kv_offload.reset();
        } else {
            model::KvOffloadConfig c = base;
            c.host = Bytes(host);
            v.deployment.engine.kv_offload = c;
        }
        opts.push_back(std::move(o));
        scenarios.push_back(std::move(v));
    };
    add("off", 0, true);
    bool scenario_listed = !given;
    for (const int ratio : std::array<int, 3>{1, 2, 4}) {
        const double host = std::round(ratio * pool); // whole bytes
        scenario_listed = scenario_listed || host == scenario_host;
        add("host " + std::to_string(ratio) + "x", host, false);
    }
    if (!scenario_listed) {
        add("scenario's", scenario_host, false);
        // Keep the list in order of host memory, so a tie keeps the least.
        std::vector<std::size_t> order(opts.size());
        for (std::size_t i = 0; i < order.size(); ++i) {
            order[i] = i;
        }
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            return opts[a].value < opts[b].value;
        });
        std::vector<ServingOption> o2;
        std::vector<model::Scenario> s2;
        for (const std::size_t i : order) {
            o2.push_back(opts[i]);
            s2.push_back(scenarios[i]);
        }
        opts = std::move(o2);
        scenarios = std::move(s2);
    }
    const ServingOption* win = nullptr;
    const ServingOption* other = nullptr;
    const std::string why = rank(out, std::move(opts), scenarios, options, threads, stop, "off",
                                 t.slo.percentile, &win, &other);
    const std::string fit = model::format_fixed(working_set, 0) +
                            " shared-prefix tokens against a GPU KV pool of " +
                            std::to_string(mem.kv_tokens) + " tokens per replica";
    if (why.empty()) {
        out.verdict = win->name + ": no difference" +
                      (win != other ? " from " + other->name : std::string()) +
                      " (SLO attainment " + choice_pct(win->slo_attainment) + ", p" +
                      model::format_fixed(t.slo.percentile, 0) + " TTFT " +
                      choice_ms(win->ttft_at_p_s) + "); prefix hit rate " + tiers_of(*win) + ": " +
                      fit +
                      (working_set <= static_cast<double>(mem.kv_tokens)
                           ? ", so the GPU holds them and the tiers serve nothing; off keeps the "
                             "host memory"
                           : "");
    } else {
        out.verdict = win->name + " wins over " + other->name + ": " + why + "; prefix hit rate " +
                      tiers_of(*win) + " against " + tiers_of(*other) + " (" + fit +
                      "), TTFT mean " + choice_ms(win->ttft_mean_s) + " against " +
                      choice_ms(other->ttft_mean_s);
    }
    if (!win->scenario) {
        out.verdict += win->value == 0 ? "; set engine.kv_offload: null"
                                       : "; set engine.kv_offload.host: " +
                                             model::format_gib(Bytes(win->value), 1);
    }
    return out;
}

// NOLINTBEGIN(performance-unnecessary-value-param): stop_token by value, as compare_routers
ServingChoice compare_max_loras(const model::Scenario& configured, const sim::SimOptions& options,
                                int threads, std::stop_token stop) {
    // NOLINTEND(performance-unnecessary-value-param)
    ServingChoice out;
    out.dimension = "max_loras";
    const model::Scenario& t = configured;
    const auto& given = t.deployment.engine.lora;
    if (!given) {
        out.verdict = "no engine.lora: no adapters to hold";
        return out;
    }
    const int m = given->max_loras;
    out.chosen = "max_loras " + std::to_string(m);
    if (m >= given->adapters) {
        out.verdict =
            out.chosen + ": its slots hold all " + std::to_string(given->adapters) + " adapters";
        return out;
    }
    out.choice = true;
    const model::MemoryEstimate base = model::estimate_memory(t.deployment);
    std::vector<ServingOption> opts;
    std::vector<model::Scenario> scenarios;
    for (const int factor : std::array<int, 3>{1, 2, 4}) {
        const int slots = std::min(factor * m, given->adapters);
        if (!opts.empty() && opts.back().value == slots) {
            continue;
        }
        model::Scenario v = t;
        model::LoraServingConfig& c = *v.deployment.engine.lora;
        c.max_loras = slots;
        if (c.max_cpu_loras && *c.max_cpu_loras < slots) {
            c.max_cpu_loras = slots;
        }
        ServingOption o;
        o.name = "max_loras " + std::to_string(slots);
        o.value = slots;
        o.scenario = slots == m;
        const model::MemoryEstimate mem = model::estimate_memory(v.deployment);
        o.kv_tokens = mem.kv_tokens;
        o.kv_tokens_lost = base.kv_tokens - mem.kv_tokens;
        opts.push_back(std::move(o));
        scenarios.push_back(std::move(v));
    }
    const ServingOption* win = nullptr;
    const ServingOption* other = nullptr;
    const std::string p = "p" + model::format_fixed(t.slo.percentile, 0);
    const std::string scenario_name = out.chosen; // rank() sets out.chosen to the winner
    const std::string why = rank(out, std::move(opts), scenarios, options, threads, stop,
                                 scenario_name, t.slo.percentile, &win, &other);
    const auto figures = [&](const ServingOption& o) {
        return "GPU adapter hit rate " + choice_pct(o.lora_hit_rate) + ", " +
               std::to_string(o.lora_loads) + " loads, " + p + " TTFT " + choice_ms(o.ttft_at_p_s) +
               ", KV pool " + std::to_string(o.kv_tokens) + " tokens";
    };
    out.verdict = win->name + (why.empty() ? ": no difference from " : " wins over ") +
                  other->name + (why.empty() ? "" : ": " + why) + "; " + figures(*win) +
                  " against " + figures(*other);
    const ServingOption& more = win->value > other->value ? *win : *other;
    const ServingOption& fewer = win->value > other->value ? *other : *win;
    if (more.kv_tokens_lost != fewer.kv_tokens_lost) {
        out.verdict +=
            " (the " + model::format_fixed(more.value - fewer.value, 0) + " extra slots take " +
            std::to_string(more.kv_tokens_lost - fewer.kv_tokens_lost) + " KV tokens per replica)";
    }
    if (!win->scenario) {
        out.verdict += "; set engine.lora.max_loras: " + model::format_fixed(win->value, 0);
    }
    return out;
}

// NOLINTBEGIN(performance-unnecessary-value-param): stop_token by value, as compare_routers
ServingChoice compare_speculative_tokens(const model::Scenario& configured,
                                         const sim::SimOptions& options, int threads,
                                         std::stop_token stop) {
    // NOLINTEND(performance-unnecessary-value-param)
    ServingChoice out;
    out.dimension = "num_speculative_tokens";
    const model::Scenario& t = configured;
    const auto& given = t.deployment.engine.speculative;
    if (!given) {
        out.verdict = "no engine.speculative: nothing drafts";
        return out;
    }
    const int k = given->num_speculative_tokens.value_or(
        model::default_num_speculative_tokens(given->method));
    out.chosen = "k " + std::to_string(k);
    // Per-position acceptance is measured for its k positions: fewer drafts only.
    const int most = given->acceptance.empty() ? 2 * k : k;
    std::vector<int> ks;
    for (const int v : std::array<int, 3>{std::max(1, k / 2), k, most}) {
        if (ks.empty() || ks.back() != v) {
            ks.push_back(v);
        }
    }
    if (ks.size() < 2) {
        out.verdict = out.chosen + ": one draft token measured, nothing to compare";
        return out;
    }
    out.choice = true;
    std::vector<ServingOption> opts;
    std::vector<model::Scenario> scenarios;
    for (const int v : ks) {
        model::Scenario sv = t;
        model::SpeculativeConfig& c = *sv.deployment.engine.speculative;
        c.num_speculative_tokens = v;
        if (!c.acceptance.empty()) {
            c.acceptance.resize(static_cast<std::size_t>(v));
        }
        ServingOption o;
        o.name = "k " + std::to_string(v);
        o.value = v;
        o.scenario = v == k;
        o.kv_tokens = model::estimate_memory(sv.deployment).kv_tokens;
        opts.push_back(std::move(o));
        scenarios.push_back(std::move(sv));
    }
    const ServingOption* win = nullptr;
    const ServingOption* other = nullptr;
    const std::string p = "p" + model::format_fixed(t.slo.percentile, 0);
    const std::string scenario_name = out.chosen; // rank() sets out.chosen to the winner
    const std::string why = rank(out, std::move(opts), scenarios, options, threads, stop,
                                 scenario_name, t.slo.percentile, &win, &other, true);
    const auto figures = [&](const ServingOption& o) {
        return p + " TPOT " + choice_ms(o.tpot_at_p_s) + ", " + p + " TTFT " +
               choice_ms(o.ttft_at_p_s) + ", SLO attainment " + choice_pct(o.slo_attainment);
    };
    out.verdict = win->name + (why.empty() ? ": no difference from " : " wins over ") +
                  other->name + (why.empty() ? "" : ": " + why) + "; " + figures(*win) +
                  " against " + figures(*other) + " (acceptance kept: the scenario's " +
                  (given->acceptance.empty() ? "mean rate at every position"
                                             : "per-position rates, truncated") +
                  ")";
    if (!win->scenario) {
        out.verdict += "; set engine.speculative.num_speculative_tokens: " +
                       model::format_fixed(win->value, 0);
    }
    return out;
}

} // namespace gpuplan::plan
