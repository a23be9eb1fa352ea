// Fuzzes the scenario loader against the built-in hwdb.
#include "hwdb/database.hpp"
#include "hwdb/scenario_loader.hpp"
#include "model/error.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const gpuplan::hwdb::Database db =
        gpuplan::hwdb::Database::load({std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    try {
        (void)gpuplan::hwdb::parse_scenario(
            std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.yaml", db);
    } catch (const gpuplan::Error&) {
    }
    return 0;
}
