#include "calib/error_bands.hpp"

#include "calib/stats.hpp"

#include <algorithm>
#include <cmath>

namespace gpuplan::calib {
namespace {

bool same_group(const model::MeasuredBand& b, const BandSample& s) {
    return b.figure == s.figure && b.cls == s.cls && b.set == s.set && b.level == s.level &&
           b.fitted_on == s.fitted_on;
}

bool is_moe(const hwdb::Database& db, const std::string& model_name) {
    const model::ModelSpec* m = db.find_model(model_name);
    return m && m->moe.has_value();
}

/// The family (hwdb architecture) of accelerator `gpu`; empty when the hwdb does not know it.
std::string family_of(const hwdb::Database& db, const std::string& gpu) {
    const model::AcceleratorSpec* a = db.find_accelerator(gpu);
    return a ? a->architecture : std::string();
}

/// Adds `s` (its class as given) to the group it belongs to in `bands`/`errors`.
void add_to_group(std::vector<model::MeasuredBand>& bands, std::vector<std::vector<double>>& errors,
                  const BandSample& s, const std::string& gpu) {
    std::size_t i = 0;
    while (i < bands.size() && !same_group(bands[i], s)) {
        ++i;
    }
    if (i == bands.size()) {
        model::MeasuredBand b;
        b.figure = s.figure;
        b.cls = s.cls;
        b.set = s.set;
        b.level = s.level;
        b.fitted_on = s.fitted_on;
        bands.push_back(b);
        errors.emplace_back();
    }
    errors[i].push_back(s.error);
    auto& on = bands[i].measured_on;
    if (std::find(on.begin(), on.end(), gpu) == on.end()) {
        on.insert(std::upper_bound(on.begin(), on.end(), gpu), gpu);
    }
}

} // namespace

std::vector<model::MeasuredBand> measure_bands(const std::vector<BandSample>& samples) {
    std::vector<model::MeasuredBand> bands;
    std::vector<std::vector<double>> errors;
    for (const BandSample& s : samples) {
        add_to_group(bands, errors, s, s.cls.gpu);
    }
    // The family aggregates: every point of the family's measured GPUs in the same class pooled
    // (the GPU left out of the class), after the per-GPU bands.
    for (const BandSample& s : samples) {
        if (s.cls.family.empty() || s.cls.gpu.empty()) {
            continue;
        }
        BandSample f = s;
        f.cls.gpu.clear();
        add_to_group(bands, errors, f, s.cls.gpu);
    }
    for (std::size_t i = 0; i < bands.size(); ++i) {
        std::vector<double> abs_err;
        double sum = 0;
        for (const double e : errors[i]) {
            abs_err.push_back(std::fabs(e));
            sum += e;
        }
        bands[i].points = static_cast<int>(errors[i].size());
        bands[i].mean_signed = sum / static_cast<double>(errors[i].size());
        bands[i].p90 = nearest_rank(abs_err, 0.9);
    }
    return bands;
}

std::vector<BandSample> step_band_samples(const EndToEndReport& report,
                                          const std::string& model_name, const hwdb::Database& db,
                                          const std::string& set) {
    const bool moe = is_moe(db, model_name);
    const auto sample = [&](model::BandFigure f, model::BandRegime regime, const std::string& gpu,
                            double error) {
        return BandSample{f,
                          {gpu, "unstated", moe, "16-bit", regime, family_of(db, gpu)},
                          error,
                          set,
                          "whole-step"};
    };
    std::vector<BandSample> out;
    for (const auto& [gpu, e] : report.prompt_errors) {
        out.push_back(sample(model::BandFigure::Ttft, model::BandRegime::Prefill, gpu, e));
    }
    for (const auto& [gpu, e] : report.token_errors) {
        out.push_back(sample(model::BandFigure::Tpot, model::BandRegime::Decode, gpu, e));
    }
    // Decode throughput is batch / token time: predicted / measured = 1 / (1 + e).
    for (const auto& [gpu, e] : report.token_errors) {
        out.push_back(
            sample(model::BandFigure::Throughput, model::BandRegime::Decode, gpu, 1 / (1 + e) - 1));
    }
    return out;
}

std::vector<BandSample> serving_band_samples(const ServingComparison& c, const hwdb::Database& db,
                                             const std::string& set) {
    std::vector<BandSample> out;
    if (!c.replayed) {
        return out;
    }
    const model::ValidationClass cls{c.gpu,
                                     "vllm",
                                     is_moe(db, c.model),
                                     "16-bit",
                                     model::BandRegime::Serving,
                                     family_of(db, c.gpu)};
    const auto add = [&](model::BandFigure f, double simulated, double measured) {
        if (measured > 0) {
            out.push_back({f, cls, (simulated - measured) / measured, set, "serving-run"});
        }
    };
    add(model::BandFigure::Ttft, c.simulated.ttft.mean, c.measured.ttft.mean);
    add(model::BandFigure::Tpot, c.simulated.tpot.mean, c.measured.tpot.mean);
    add(model::BandFigure::E2e, c.simulated.e2e.mean, c.measured.e2e.mean);
    add(model::BandFigure::Throughput, c.simulated_output_tok_s, c.measured_output_tok_s);
    return out;
}

} // namespace gpuplan::calib
