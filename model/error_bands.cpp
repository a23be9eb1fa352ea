#include "model/error_bands.hpp"

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
            precision_class(d.prec.weights.bits_per_element)};
}

BandQuery training_band_query(const Deployment& d, ComputeType compute) {
    const bool eight = compute == ComputeType::Fp8 || compute == ComputeType::Int8;
    const bool four = compute == ComputeType::Fp4;
    return {d.gpu.name, "training", d.model.moe.has_value(),
            four ? "4-bit" : (eight ? "8-bit" : "16-bit")};
}

FigureBand band_for(const ErrorBands& bands, BandFigure figure, BandRegime regime,
                    const BandQuery& q) {
    const MeasuredBand* best = nullptr;
    const auto rank = [&](const MeasuredBand& b) {
        return std::pair{b.cls.engine == q.engine ? 1 : 0, b.points};
    };
    for (const MeasuredBand& b : bands.bands) {
        if (b.fitted_on || b.points <= 0 || b.figure != figure || b.cls.regime != regime ||
            b.cls.gpu != q.gpu || b.cls.moe != q.moe || b.cls.precision != q.precision) {
            continue;
        }
        if (!best || rank(b) > rank(*best)) {
            best = &b;
        }
    }
    FigureBand out;
    if (!best) {
        out.source = "default: no validation for this class";
        return out;
    }
    out.p90 = best->p90;
    out.mean_signed = best->mean_signed;
    out.points = best->points;
    out.validated = true;
    out.source = fmt::format("P90 of {} {} validation point{}, {}{}", best->points, best->level,
                             best->points == 1 ? "" : "s", best->set,
                             best->cls.engine == q.engine
                                 ? std::string()
                                 : ", engine: " + best->cls.engine + ", not " + q.engine);
    return out;
}

std::string band_text(const FigureBand& b) {
    return fmt::format("±{:.0f} % ({})", std::round(b.p90 * 100), b.source);
}

} // namespace gpuplan::model
