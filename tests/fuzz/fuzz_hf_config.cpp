// Fuzzes the Hugging Face config.json importer and the catalog YAML writer round trip.
#include "hwdb/database.hpp"
#include "hwdb/hf_import.hpp"
#include "hwdb/model_yaml_writer.hpp"
#include "model/error.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const auto spec = gpuplan::hwdb::import_hf_config(
            std::string_view(reinterpret_cast<const char*>(data), size), "config.json", "fuzzed");
        // Whatever imports must write YAML that loads back to the same architecture.
        gpuplan::hwdb::Database db;
        db.add_yaml(gpuplan::hwdb::model_to_yaml(spec), "fuzzed.yaml");
        if (db.models().size() != 1 || db.models()[0].layers != spec.layers) {
            std::abort();
        }
    } catch (const gpuplan::Error&) {
    }
    return 0;
}
