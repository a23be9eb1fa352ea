#pragma once
/// JSON views of the hwdb value types for `--json` output. Keys are documented in
/// docs/cli-json.md; numbers are SI with the unit in the key name (`memory_bytes`).

#include "model/hardware_spec.hpp"
#include "model/model_spec.hpp"

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <string>

namespace gpuplan::cli {

[[nodiscard]] nlohmann::json to_json(const model::AcceleratorSpec& a);
[[nodiscard]] nlohmann::json to_json(const model::InterconnectSpec& l);
[[nodiscard]] nlohmann::json to_json(const model::ServerSpec& s);
[[nodiscard]] nlohmann::json to_json(const model::RackSpec& r);
[[nodiscard]] nlohmann::json to_json(const model::PriceEstimate& p);

/// `j` as indented JSON text. The last line of defence against non-finite results: nlohmann
/// writes NaN and infinity as `null`, so any non-finite number throws InternalError naming its
/// JSON pointer instead (inputs that could produce one are refused where they enter).
[[nodiscard]] std::string json_text(const nlohmann::json& j);

/// `j` as one line of JSON (JSON Lines), with json_text's check for non-finite numbers.
[[nodiscard]] std::string json_line(const nlohmann::json& j);

/// Prints a JSON object as indented "key: value" lines for humans.
void print_key_values(std::ostream& out, const nlohmann::json& j, const std::string& indent);

} // namespace gpuplan::cli
