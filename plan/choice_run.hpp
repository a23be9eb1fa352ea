#pragma once
/// One simulation of a choice on the plan's answer (the router, KV offload tiers, LoRA slots),
/// judged as the sizing search judges a configuration (plan/sizing_search.cpp, simulate_row):
/// every class with an SLO meets it at its percentile and no request is rejected or times out.
/// Shared by plan/routing.cpp and plan/serving_choices.cpp.

#include "model/scenario.hpp"
#include "sim/result.hpp"
#include "sim/simulate.hpp"

#include <optional>
#include <stop_token>
#include <string>

namespace gpuplan::plan {

/// What one simulation of a choice says (all zero when it did not run: `ok` false).
struct ChoiceRun {
    bool ok = false;
    bool meets = false;
    double attainment = 0, hit = 0, ttft_mean = 0, ttft_p = 0, tpot_p = 0, imbalance = 0;
    std::optional<sim::KvOffloadResult> kv_offload; ///< with engine.kv_offload
    std::optional<sim::LoraResult> lora;            ///< with engine.lora
};

/// The search's verdict on a simulated run, one rule for every plan comparison: something
/// completed, every class with an SLO and arrivals meets it at its percentile, no request was
/// rejected or timed out, and the run was not stopped.
[[nodiscard]] bool meets_every_slo(const sim::SimResult& r);

/// Simulates `t` with `o`; a deployment that does not fit, an input error or a stop: not ok.
[[nodiscard]] ChoiceRun simulate_choice(const model::Scenario& t, const sim::SimOptions& o,
                                        const std::stop_token& stop);

/// "12.3 %" of a fraction.
[[nodiscard]] std::string choice_pct(double fraction);
/// "21.7 ms" (one decimal below 100 ms) of seconds.
[[nodiscard]] std::string choice_ms(double seconds);

} // namespace gpuplan::plan
