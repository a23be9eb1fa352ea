// Fuzzes the simulator end to end: a fuzzed scenario YAML (loaded by the strict loader against
// the built-in hwdb), then simulated with at most 20 requests and 60 simulated seconds, so an
// input that loads but breaks the simulator (a crash, a hang, a non-finite figure) is found
// rather than a slow run.
#include "hwdb/database.hpp"
#include "hwdb/scenario_loader.hpp"
#include "model/error.hpp"
#include "sim/simulate.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const gpuplan::hwdb::Database db =
        gpuplan::hwdb::Database::load({std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    try {
        const gpuplan::model::Scenario s = gpuplan::hwdb::parse_scenario(
            std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.yaml", db);
        gpuplan::sim::SimOptions o;
        o.requests = 20;
        o.duration = gpuplan::Seconds(60);
        const gpuplan::sim::SimResult r = gpuplan::sim::simulate(s, o);
        // No output may carry a non-finite figure.
        if (!std::isfinite(r.output_tok_s) || !std::isfinite(r.duration.si()) ||
            !std::isfinite(r.mean_running)) {
            std::abort();
        }
    } catch (const gpuplan::Error&) {
    }
    return 0;
}
