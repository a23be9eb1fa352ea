// The `training.failures` and `availability:` blocks: keys match model::FailureConfig and
// model::AvailabilityConfig.
#include "hwdb/detail/failures_reader.hpp"

#include <sstream>

namespace gpuplan::hwdb::detail {

std::optional<double> read_availability_target(MapReader& m, const std::string& key,
                                               bool required) {
    if (required && !m.has(key)) {
        m.fail_here("missing key '" + key +
                    "': give the availability to reach, a number strictly between 0 and 1 "
                    "(e.g. 0.999)");
    }
    const auto v = m.opt_number(key, -1e300, 1e300);
    if (v && !(*v > 0.0 && *v < 1.0)) {
        std::ostringstream found;
        found << *v;
        m.fail_at(key, "'" + found.str() +
                           "' must lie strictly between 0 and 1 (e.g. 0.999); no finite number "
                           "of spares reaches an availability of 1");
    }
    return v;
}

std::optional<model::FailureConfig> read_failures(std::optional<MapReader> m) {
    if (!m) {
        return std::nullopt;
    }
    using model::Dimension;
    model::FailureConfig c;
    c.gpu_mtbf = opt_typed<Seconds>(*m, "gpu_mtbf", Dimension::Seconds);
    c.write_bandwidth =
        opt_typed<BytesPerSecond>(*m, "checkpoint_write_bandwidth", Dimension::BytesPerSecond);
    c.read_bandwidth =
        opt_typed<BytesPerSecond>(*m, "checkpoint_read_bandwidth", Dimension::BytesPerSecond);
    c.restart_overhead = opt_typed<Seconds>(*m, "restart_overhead", Dimension::Seconds, false);
    c.repair_time = opt_typed<Seconds>(*m, "repair_time", Dimension::Seconds, false);
    c.checkpoint_interval = opt_typed<Seconds>(*m, "checkpoint_interval", Dimension::Seconds);
    c.spares_target = read_availability_target(*m, "spares_target", false);
    m->finish();
    return c;
}

std::optional<model::AvailabilityConfig> read_availability(std::optional<MapReader> m) {
    if (!m) {
        return std::nullopt;
    }
    using model::Dimension;
    model::AvailabilityConfig c;
    c.replicas = m->opt_integer("replicas", 1, 1 << 24);
    c.mtbf = opt_typed<Seconds>(*m, "mtbf", Dimension::Seconds);
    c.mttr = opt_typed<Seconds>(*m, "mttr", Dimension::Seconds, false);
    c.target = *read_availability_target(*m, "target", true);
    m->finish();
    return c;
}

} // namespace gpuplan::hwdb::detail
