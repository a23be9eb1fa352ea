#include "model/error_bands.hpp"
#include "model/checked_format.hpp"

#include <fmt/format.h>

#include <cmath>

namespace gpuplan::model {

std::string precision_class(double bits_per_element) {
    if (bits_per_element >= 12) {
        return "16-bit";
    }
    return bits_per_element >= 6 ? "8-bit" : "4-bit";
}

BandQuery band_query(const Deployment& d) {
    return {d.gpu.name, to_string(d.engine.kind), d.model.moe.has_value(),
            precision_class(d.prec.weights.bits_per_element), d.gpu.architecture};
}

BandQuery training_band_query(const Deployment& d, ComputeType compute) {
    const bool eight = compute == ComputeType::Fp8 || compute == ComputeType::Int8;
    const bool four = compute == ComputeType::Fp4;
    return {d.gpu.name, "training", d.model.moe.has_value(),
            four ? "4-bit" : (eight ? "8-bit" : "16-bit"), d.gpu.architecture};
}

namespace {

/// The fallback step (1 = most specific) at which `b` answers `q`, 0 when it may not: see
/// band_for's comment.
int fallback_step(const MeasuredBand& b, const BandQuery& q, bool whole_step) {
    const bool same_engine = b.cls.engine == q.engine;
    if (!b.cls.gpu.empty()) {
        if (b.cls.gpu != q.gpu) {
            return 0;
        }
        return same_engine ? 1 : (whole_step ? 2 : 0);
    }
    if (q.family.empty() || b.cls.family != q.family) {
        return 0;
    }
    return same_engine ? 3 : (whole_step ? 4 : 0);
}

std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const std::string& n : names) {
        out += (out.empty() ? "" : ", ") + n;
    }
    return out;
}

/// What `b` was measured on, as seen from `q`.
std::string measured_on_text(const MeasuredBand& b, const BandQuery& q) {
    std::string out =
        "measured on " + joined(b.measured_on.empty() ? std::vector{b.cls.gpu} : b.measured_on);
    if (b.cls.gpu.empty()) {
        out += ", same family (" + b.cls.family + ")";
    }
    if (b.cls.engine != "training" || q.engine != "training") {
        out += ", engine " + b.cls.engine;
        if (b.cls.engine != q.engine) {
            out += " (not " + q.engine + ")";
        }
    }
    return out + ", " + (b.cls.moe ? "MoE " : "dense ") + b.cls.precision;
}

} // namespace

FigureBand band_for(const ErrorBands& bands, BandFigure figure, BandRegime regime,
                    const BandQuery& q) {
    const bool whole_step = regime == BandRegime::Prefill || regime == BandRegime::Decode;
    const MeasuredBand* best = nullptr;
    int best_step = 0;
    const MeasuredBand* refused = nullptr; // a serving band of this GPU or family, other engine
    for (const MeasuredBand& b : bands.bands) {
        if (b.fitted_on || b.points <= 0 || b.figure != figure || b.cls.regime != regime ||
            b.cls.moe != q.moe || b.cls.precision != q.precision) {
            continue;
        }
        const int step = fallback_step(b, q, whole_step);
        if (step == 0) {
            if (!refused && (b.cls.gpu == q.gpu || (b.cls.gpu.empty() && !q.family.empty() &&
                                                    b.cls.family == q.family))) {
                refused = &b;
            }
            continue;
        }
        if (!best || step < best_step || (step == best_step && b.points > best->points)) {
            best = &b;
            best_step = step;
        }
    }
    FigureBand out;
    if (!best) {
        out.source = "default: no validation for this class";
        if (refused) {
            out.source += std::string(" (") + name_of(regime) + " runs were measured with " +
                          refused->cls.engine + ", not " + q.engine +
                          "; a scheduler's error is not borrowed)";
        }
        return out;
    }
    out.p90 = best->p90;
    out.mean_signed = best->mean_signed;
    out.points = best->points;
    out.validated = true;
    out.source = gpuplan::checked_format("P90 of {} {} validation point{} {}; {}", best->points,
                                         best->level, best->points == 1 ? "" : "s",
                                         measured_on_text(*best, q), best->set);
    return out;
}

std::string band_text(const FigureBand& b) {
    return gpuplan::checked_format("±{:.0f} % ({})", std::round(b.p90 * 100), b.source);
}

} // namespace gpuplan::model
