#include "hwdb/error_bands_io.hpp"

#include "hwdb/detail/yaml_emit.hpp"
#include "hwdb/file_io.hpp"

#include <sstream>

namespace gpuplan::hwdb {

std::string error_bands_yaml(const model::ErrorBands& bands) {
    using detail::yaml_number;
    using detail::yaml_quoted;
    std::ostringstream o;
    o << "# Measured error bands of gpuplan's printed figures (docs/validation.md). Generated: do "
         "not edit;\n# rerun the command below after a model or profile change.\nschema: 1\n"
         "error_bands:\n  command: "
      << yaml_quoted(bands.generated_by) << "\n  bands:" << (bands.bands.empty() ? " []" : "")
      << '\n';
    for (const model::MeasuredBand& b : bands.bands) {
        o << "    - figure: " << model::name_of(b.figure)
          << "\n      gpu: " << yaml_quoted(b.cls.gpu)
          << "\n      family: " << yaml_quoted(b.cls.family)
          << "\n      engine: " << yaml_quoted(b.cls.engine)
          << "\n      moe: " << (b.cls.moe ? "true" : "false")
          << "\n      precision: " << yaml_quoted(b.cls.precision)
          << "\n      regime: " << model::name_of(b.cls.regime) << "\n      points: " << b.points
          << "\n      mean_signed: " << yaml_number(b.mean_signed)
          << "\n      p90: " << yaml_number(b.p90) << "\n      level: " << yaml_quoted(b.level)
          << "\n      set: " << yaml_quoted(b.set)
          << "\n      fitted_on: " << (b.fitted_on ? "true" : "false") << "\n      measured_on: [";
        for (std::size_t i = 0; i < b.measured_on.size(); ++i) {
            o << (i ? ", " : "") << yaml_quoted(b.measured_on[i]);
        }
        o << "]\n";
    }
    return o.str();
}

model::ErrorBands read_error_bands_file(const std::filesystem::path& path) {
    const std::string file = path.string();
    const std::string text = read_text_file(path, "error bands");
    detail::MapReader root(detail::parse_strict(text, file), file, "");
    const int schema = root.integer("schema", 1, 1000);
    if (schema != 1) {
        root.fail_at("schema", "unsupported schema version " + std::to_string(schema) +
                                   "; this gpuplan reads schema 1");
    }
    model::ErrorBands out = detail::read_error_bands(root.map("error_bands"));
    root.finish();
    return out;
}

model::ErrorBands load_error_bands(const std::vector<std::filesystem::path>& hwdb_folders) {
    model::ErrorBands out;
    for (const auto& folder : hwdb_folders) {
        std::error_code ec;
        const std::filesystem::path f = folder / "error_bands.yaml";
        if (std::filesystem::is_regular_file(f, ec)) {
            out = read_error_bands_file(f);
        }
    }
    return out;
}

namespace detail {
namespace {

template <class E> E required_enum(MapReader& m, const std::string& key) {
    if (const auto v = opt_enum<E>(m, key)) {
        return *v;
    }
    m.fail_at(key, "missing; use one of " + model::names_list<E>());
}

} // namespace

model::ErrorBands read_error_bands(MapReader m) {
    model::ErrorBands out;
    out.generated_by = m.string_or("command", "");
    for (MapReader& b : m.map_list("bands")) {
        model::MeasuredBand band;
        band.figure = required_enum<model::BandFigure>(b, "figure");
        // A family aggregate has an empty gpu and names the GPUs it pools in measured_on.
        band.cls.gpu = b.string_or("gpu", "");
        band.cls.family = b.string_or("family", "");
        if (band.cls.gpu.empty() && band.cls.family.empty()) {
            b.fail_at("gpu", "empty, and no family either; give the accelerator the band was "
                             "measured on, or the family of an aggregate");
        }
        band.cls.engine = b.string("engine");
        band.cls.moe = b.boolean_or("moe", false);
        band.cls.precision = b.string("precision");
        if (band.cls.precision != "16-bit" && band.cls.precision != "8-bit" &&
            band.cls.precision != "4-bit") {
            b.fail_at("precision", "unknown width class '" + band.cls.precision +
                                       "'; use 16-bit, 8-bit or 4-bit");
        }
        band.cls.regime = required_enum<model::BandRegime>(b, "regime");
        band.points = b.integer("points", 0, 1'000'000'000);
        band.mean_signed = b.number("mean_signed", -1e6, 1e6);
        band.p90 = b.number("p90", 0.0, 1e6);
        band.level = b.string("level");
        band.set = b.string("set");
        band.fitted_on = b.boolean_or("fitted_on", false);
        band.measured_on = b.string_list("measured_on");
        if (band.measured_on.empty() && !band.cls.gpu.empty()) {
            band.measured_on = {band.cls.gpu};
        }
        b.finish();
        out.bands.push_back(std::move(band));
    }
    m.finish();
    return out;
}

} // namespace detail
} // namespace gpuplan::hwdb
