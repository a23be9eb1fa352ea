#pragma once
/// Readers from one YAML mapping to one hwdb value type. Each consumes its keys and rejects
/// unknown ones (MapReader::finish), so every schema key is listed in exactly one place.

#include "hwdb/detail/yaml_reader.hpp"
#include "model/hardware_spec.hpp"
#include "model/model_spec.hpp"

namespace gpuplan::hwdb::detail {

[[nodiscard]] model::AcceleratorSpec read_accelerator(MapReader& m);
[[nodiscard]] model::InterconnectSpec read_interconnect(MapReader& m);
[[nodiscard]] model::ServerSpec read_server(MapReader& m);
[[nodiscard]] model::RackSpec read_rack(MapReader& m);
[[nodiscard]] model::ModelSpec read_model(MapReader& m);
[[nodiscard]] std::vector<model::PriceEstimate> read_prices(MapReader& m);

/// Reads a lowercase-hyphenated canonical name and rejects other spellings.
[[nodiscard]] std::string read_canonical_name(MapReader& m);

} // namespace gpuplan::hwdb::detail
