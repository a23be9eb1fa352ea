#pragma once
/// The serving features' figures as rows of the results views (docs/simulator.md): speculative
/// decoding (method, k, tokens per step and acceptance; the estimate's speed-up and draft
/// time), prefill/decode disaggregation (transfers, KV moved, transfer time, exposed part, link
/// utilisation, the prefill and decode queues, and a row per pool) and prefix routing (the
/// prefix hit rate of each replica and the load imbalance). Each appends nothing when its
/// feature is off, so other results read as before.

#include "gui/analysis.hpp"
#include "gui/table_models.hpp"
#include "model/serving.hpp"
#include "sim/result.hpp"

namespace gpuplan::gui {

/// Appends the simulated features' rows of `s` to `r` (simulationRows calls it last).
void appendSimulationFeatureRows(FiguresModel::Rows& r, const sim::SimResult& s);

/// Appends the estimate's speculative decoding rows and the disaggregated pools' analytic rows
/// (servingRows calls it).
void appendServingFeatureRows(FiguresModel::Rows& r, const Analysis& a);

} // namespace gpuplan::gui
