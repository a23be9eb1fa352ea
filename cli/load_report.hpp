#pragma once
/// How every command shows the load its figures are computed at (model/operating_point.hpp):
/// one text line and one JSON object, the same in estimate, compare, cost, rack, plan and
/// simulate.

#include "model/operating_point.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace gpuplan::cli {

/// "closed loop at 53 sequences in flight (default: ...)" or "offered 4 requests/s (...)".
[[nodiscard]] std::string load_line(const model::OperatingPoint& op);

/// {"kind", "concurrency", "requests_per_s", "utilisation", "defaulted", "why"}; absent figures
/// are null.
[[nodiscard]] nlohmann::json operating_point_json(const model::OperatingPoint& op);

} // namespace gpuplan::cli
