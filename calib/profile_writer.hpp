#pragma once
/// Writing calibration results as hwdb YAML: a profile file (coefficients, provenance, error
/// band, held-out residuals, optionally the raw points) that hwdb::parse_profile_file reads back,
/// and a points file (`schema: 1` + `points:`) for `gpuplan calib import -o`.

#include "calib/fit.hpp"
#include "hwdb/profile_loader.hpp"
#include "model/hardware_spec.hpp"
#include "model/measurement.hpp"

#include <string>
#include <vector>

namespace gpuplan::calib {

/// What a profile file says about itself besides the fit.
struct ProfileMeta {
    std::string name;                 ///< profile name, e.g. "a100-sxm-80gb"
    std::string description;          ///< one line: what was measured, how
    std::string command;              ///< the command line that produced it
    std::string date;                 ///< YYYY-MM-DD
    std::vector<std::string> sources; ///< data files, as owner/repo@commit:path where known
    model::ProvenanceKind kind = model::ProvenanceKind::EngineProfile;
};

/// The profile file for a fit on `gpu`: the fitted coefficients, the held-out error band
/// (all held-out points pooled), residuals per class and in total, alpha-beta link fits,
/// harness offsets, and `points` when non-empty.
[[nodiscard]] hwdb::ProfileFile make_profile_file(const FitReport& fit,
                                                  const model::AcceleratorSpec& gpu,
                                                  const ProfileMeta& meta,
                                                  std::vector<model::Measurement> points = {});

/// The YAML text of a profile file (deterministic; numbers with 6 significant digits, 10 for
/// points' times and shapes).
[[nodiscard]] std::string profile_to_yaml(const hwdb::ProfileFile& file);

/// The YAML text of a points file: `schema: 1` and one flow mapping per point.
[[nodiscard]] std::string points_to_yaml(const std::vector<model::Measurement>& points,
                                         const std::vector<std::string>& sources = {});

} // namespace gpuplan::calib
