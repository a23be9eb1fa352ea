// Fuzzes the hwdb YAML loader: any input must load or throw gpuplan::Error, never crash or hang.
#include "hwdb/database.hpp"
#include "model/error.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    gpuplan::hwdb::Database db;
    try {
        db.add_yaml(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.yaml");
        db.check_references();
    } catch (const gpuplan::Error&) {
        // expected for malformed input
    }
    return 0;
}
