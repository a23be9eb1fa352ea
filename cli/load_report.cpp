#include "cli/load_report.hpp"
#include "model/checked_format.hpp"

#include <fmt/format.h>

namespace gpuplan::cli {

std::string load_line(const model::OperatingPoint& op) {
    if (op.kind == model::LoadKind::OfferedRate) {
        return gpuplan::checked_format("open loop at {:g} requests/s ({})",
                                       op.requests_per_s.value_or(0.0), op.why);
    }
    if (op.kind == model::LoadKind::OfflineBatch) {
        return gpuplan::checked_format("offline batch of {} requests ({})",
                                       op.batch_requests.value_or(0), op.why);
    }
    return gpuplan::checked_format("closed loop at {} sequences in flight ({})", op.concurrency,
                                   op.why);
}

nlohmann::json operating_point_json(const model::OperatingPoint& op) {
    const auto or_null = [](const std::optional<double>& v) {
        return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
    };
    return {{"kind", model::to_string(op.kind)},
            {"concurrency", op.concurrency},
            {"requests_per_s", or_null(op.requests_per_s)},
            {"batch_requests",
             op.batch_requests ? nlohmann::json(*op.batch_requests) : nlohmann::json(nullptr)},
            {"utilisation", or_null(op.utilisation)},
            {"defaulted", op.defaulted},
            {"why", op.why}};
}

} // namespace gpuplan::cli
