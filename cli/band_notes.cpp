#include "cli/band_notes.hpp"

#include <algorithm>
#include <cmath>
#include <ostream>

namespace gpuplan::cli {

std::string BandNotes::cell(model::BandFigure figure, model::BandRegime regime) {
    const model::FigureBand b = model::band_for(bands_, figure, regime, query_);
    auto it = std::find(notes_.begin(), notes_.end(), b.source);
    if (it == notes_.end()) {
        notes_.push_back(b.source);
        it = notes_.end() - 1;
    }
    return "±" + std::to_string(static_cast<int>(std::lround(b.p90 * 100))) + " % [" +
           std::to_string(it - notes_.begin() + 1) + "]";
}

void BandNotes::print(std::ostream& out) const {
    if (notes_.empty()) {
        return;
    }
    out << "band: P90 of |predicted - measured| / measured in the nearest measured class (this "
           "GPU, else its family; same dense/MoE, weight width and regime; "
           "hwdb/error_bands.yaml, docs/validation.md)\n";
    for (std::size_t i = 0; i < notes_.size(); ++i) {
        out << "  [" << i + 1 << "] " << notes_[i] << '\n';
    }
}

nlohmann::json band_json(const model::FigureBand& b) {
    return {{"p90", b.p90},
            {"mean_signed", b.mean_signed},
            {"points", b.points},
            {"validated", b.validated},
            {"source", b.source}};
}

} // namespace gpuplan::cli
