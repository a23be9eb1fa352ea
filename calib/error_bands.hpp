#pragma once
/// Error bands per printed figure, measured on whole steps and whole serving runs
/// (model/error_bands.hpp): each validation point's signed relative error, grouped by figure,
/// class and set, summarised by its mean and its nearest-rank P90 of the absolute error
/// (calib/stats.hpp).

#include "calib/end_to_end.hpp"
#include "calib/serving_runs.hpp"
#include "model/error_bands.hpp"

#include <string>
#include <vector>

namespace gpuplan::calib {

/// One validation point of one figure.
struct BandSample {
    model::BandFigure figure = model::BandFigure::Tpot;
    model::ValidationClass cls;
    double error = 0.0; ///< (predicted - measured) / measured
    std::string set;
    std::string level;
    bool fitted_on = false;
};

/// The bands of `samples`: one per (figure, class, set, level, fitted_on), in the order the
/// groups first appear; points = the group's size, mean_signed = its mean error, p90 =
/// nearest_rank(|error|, 0.9). Then the family aggregates, in the same order: one per
/// (figure, class without its GPU, set, level, fitted_on) over the samples with a family, all
/// points of the family's GPUs pooled (cls.gpu empty, measured_on the GPUs, sorted).
[[nodiscard]] std::vector<model::MeasuredBand>
measure_bands(const std::vector<BandSample>& samples);

/// The points of a whole-step validation (SplitwiseSim's perf_model.csv, validate_step_runs):
/// prompt times as TTFT in the prefill regime, token times as TPOT and as throughput
/// (batch / token time: error 1 / (1 + e) - 1) in the decode regime; `set` names the set.
/// `db` gives the models' MoE flag; the class is 16-bit (the runs are FP16), engine "unstated".
[[nodiscard]] std::vector<BandSample> step_band_samples(const EndToEndReport& report,
                                                        const std::string& model_name,
                                                        const hwdb::Database& db,
                                                        const std::string& set);

/// The points of one replayed serving run: the error of its mean TTFT, mean TPOT, mean E2E and
/// output throughput (output tokens over the span from the first arrival to the last token) in
/// the serving regime, engine "vllm", 16-bit (only bf16/fp16 runs are replayed). None for a
/// skipped run.
[[nodiscard]] std::vector<BandSample>
serving_band_samples(const ServingComparison& c, const hwdb::Database& db, const std::string& set);

} // namespace gpuplan::calib
