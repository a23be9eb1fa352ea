#pragma once
/// A sizing row's simulated outcome as bytes, so that a front end that spreads the search's
/// confirming simulations over processes (gpuplan plan --mpi) can hand each outcome to every
/// process, which then continues the search identically. Only the fields a simulation sets
/// travel; numbers are written so that they read back as the same doubles.

#include "plan/sizing_search.hpp"

#include <string>

namespace gpuplan::plan {

/// The fields Search's simulation step sets on `row` (stage, reason, miss ratio, SLO margins,
/// failed, meets_slo, binding SLO, the simulated throughput and power figures), as bytes.
[[nodiscard]] std::string encode_outcome(const SizingRow& row);

/// Installs what encode_outcome wrote into `row`. Throws InternalError on bytes it did not
/// write.
void decode_outcome(const std::string& bytes, SizingRow& row);

} // namespace gpuplan::plan
