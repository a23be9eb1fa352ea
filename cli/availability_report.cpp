// The availability block of estimate and plan (availability_report.hpp).
#include "cli/availability_report.hpp"

#include "cli/table.hpp"

#include <algorithm>

namespace gpuplan::cli {

std::optional<model::ServingAvailability>
scenario_availability(const model::Scenario& s, int replicas, int gpus_per_replica) {
    if (!s.availability) {
        return std::nullopt;
    }
    return model::serving_availability(*s.availability, replicas, gpus_per_replica);
}

std::optional<model::ServingAvailability> scenario_availability(const model::Scenario& s) {
    const model::Deployment& d = s.deployment;
    const int dp = std::max(1, d.par.dp);
    return scenario_availability(s, s.cluster.replicas.value_or(dp), std::max(1, d.gpus() / dp));
}

nlohmann::json availability_json(const model::ServingAvailability& a) {
    nlohmann::json spares = nullptr;
    if (a.result.spares) {
        spares = *a.result.spares;
    }
    return {{"replicas_needed", a.inputs.needed},
            {"mtbf_s", a.inputs.mtbf.si()},
            {"mtbf_default", a.mtbf_default},
            {"mttr_s", a.inputs.mttr.si()},
            {"mttr_default", a.mttr_default},
            {"target", a.inputs.target},
            {"replica_availability", a.result.unit_up},
            {"availability_without_spares", a.result.without_spares},
            {"spares", spares},
            {"availability", a.result.with_spares}};
}

void print_availability(std::ostream& out, const model::ServingAvailability& a) {
    const auto hours = [](Seconds t) { return fixed(t.si() / 3600, 1) + " h"; };
    out << "\navailability (N needed + k hot spares, exponential failures and repairs; "
           "docs/failures.md)\n"
        << "per replica          up " << fixed(a.result.unit_up * 100, 4) << " % (MTBF "
        << hours(a.inputs.mtbf) << (a.mtbf_default ? " from Llama 3's per-GPU rate" : "")
        << ", MTTR " << hours(a.inputs.mttr) << (a.mttr_default ? " (default)" : "") << ")\n"
        << "fleet                " << a.inputs.needed << " replicas needed: availability "
        << fixed(a.result.without_spares * 100, 4) << " % with no spares\n";
    if (a.result.spares) {
        out << "spares needed        " << *a.result.spares << " for " << a.inputs.target * 100
            << " %: availability " << fixed(a.result.with_spares * 100, 4) << " %\n";
    } else {
        out << "spares needed        none reaches " << a.inputs.target * 100 << " %\n";
    }
}

} // namespace gpuplan::cli
