#pragma once
/// The error band printed beside each figure (model/error_bands.hpp): "±31 % [1]" in a table
/// cell, and below the table each note's source ("[1] P90 of 315 whole-step validation points,
/// SplitwiseSim ..."), so every figure says where its band comes from.

#include "model/error_bands.hpp"

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <string>
#include <vector>

namespace gpuplan::cli {

class BandNotes {
  public:
    BandNotes(const model::ErrorBands& bands, model::BandQuery query)
        : bands_(bands), query_(std::move(query)) {}
    /// The band of `figure` in `regime`: "±31 % [1]", the note numbered by first use.
    [[nodiscard]] std::string cell(model::BandFigure figure, model::BandRegime regime);
    /// Later cells are for another class (a plan row's GPU and weights).
    void set_query(model::BandQuery query) { query_ = std::move(query); }
    /// "band: P90 of |predicted - measured| / measured ...", then one line per note.
    void print(std::ostream& out) const;

  private:
    const model::ErrorBands& bands_;
    model::BandQuery query_;
    std::vector<std::string> notes_;
};

/// The band of one figure for --json: {"p90", "mean_signed", "points", "validated", "source"}.
[[nodiscard]] nlohmann::json band_json(const model::FigureBand& b);

} // namespace gpuplan::cli
