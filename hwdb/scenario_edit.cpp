// One-key scenario edits and the comment-keeping save (hwdb/scenario_edit.hpp).
#include "hwdb/scenario_edit.hpp"

#include "hwdb/detail/yaml_emit.hpp"
#include "hwdb/file_io.hpp"
#include "hwdb/scenario_loader.hpp"
#include "hwdb/scenario_writer.hpp"
#include "hwdb/yaml_patch.hpp"
#include "model/error.hpp"

#include <yaml-cpp/yaml.h>

#include <set>
#include <utility>

namespace gpuplan::hwdb {

std::string scenario_key_text(const model::Scenario& s, const std::string& path) {
    model::Scenario plain = s;
    plain.workload.trace.clear();
    return yaml_value_at(scenario_to_yaml(plain), path);
}

std::vector<std::string> scenario_key_texts(const model::Scenario& s,
                                            const std::vector<std::string>& paths) {
    model::Scenario plain = s;
    plain.workload.trace.clear();
    return yaml_values_at(scenario_to_yaml(plain), paths);
}

namespace {

/// The field's text as YAML: a list or mapping as written, a plain scalar that reads back as
/// itself as written ("64", "1 GiB", "least_kv"), anything else (text with ": " or " #") quoted
/// so that it stays the one string typed.
std::string as_yaml(const std::string& text) {
    const auto first = text.find_first_not_of(" \t");
    const auto last = text.find_last_not_of(" \t");
    std::string trimmed =
        first == std::string::npos ? std::string() : text.substr(first, last - first + 1);
    if (text.find('\n') != std::string::npos) {
        return detail::yaml_quoted(text); // a description of several lines, kept as it is
    }
    if (trimmed.empty() || trimmed.front() == '[' || trimmed.front() == '{') {
        return trimmed;
    }
    try {
        const YAML::Node n = YAML::Load(trimmed);
        if (n.IsScalar() && n.Scalar() == trimmed) {
            return trimmed;
        }
    } catch (const YAML::Exception&) {
        // not YAML on its own: a string
    }
    return detail::yaml_quoted(text);
}

} // namespace

model::Scenario with_scenario_key(const model::Scenario& s, const Database& db,
                                  const std::string& path, const std::string& value,
                                  const std::string& origin) {
    model::Scenario plain = s;
    plain.workload.trace.clear(); // the records stay in memory; no file to read them from
    const std::string text = scenario_to_yaml(plain);
    model::Scenario next = parse_scenario(
        text, "", db,
        {ScenarioOverride(path, value.empty() ? std::string("~") : as_yaml(value), origin)});
    next.workload.trace = s.workload.trace;
    return next;
}

KeptSave save_scenario_keeping(const std::filesystem::path& path, const std::string& original,
                               const model::Scenario& loaded, const model::Scenario& edited,
                               const Database& db) {
    // The trace: the file the original names when it is still beside `path` and unchanged,
    // else the records written as <stem>.trace.csv (as save_scenario does).
    const std::string ref = yaml_value_at(original, "workload.trace.file");
    const ScenarioYamlOptions before_options{ref};
    ScenarioYamlOptions options{ref};
    if (!edited.workload.trace.empty() &&
        (ref.empty() || loaded.workload.trace != edited.workload.trace ||
         !std::filesystem::exists(path.parent_path() / ref))) {
        options.trace_file = path.stem().string() + ".trace.csv";
        write_text_file(path.parent_path() / options.trace_file,
                        trace_to_csv(edited.workload.trace));
    }
    const std::string before = scenario_to_yaml(loaded, before_options);
    const std::string after = scenario_to_yaml(edited, options);
    KeptSave out;
    std::set<std::string> force;
    for (int attempt = 0; attempt < 3; ++attempt) {
        YamlPatch p;
        model::Scenario back;
        try {
            p = patch_yaml(original, before, after, force);
            back = parse_scenario(p.text, path.string(), db);
        } catch (const InputError&) {
            break; // ConfigError derives from InputError: the patched text does not read
        }
        if (back == edited) {
            out.patched = true;
            out.replaced = std::move(p.replaced);
            out.rewritten = std::move(p.rewritten);
            out.text = std::move(p.text);
            write_text_file(path, out.text);
            return out;
        }
        const std::size_t had = force.size();
        for (const std::string& key : differing_top_keys(scenario_to_yaml(back, options), after)) {
            force.insert(key);
        }
        if (force.size() == had) {
            break;
        }
    }
    out.text = after;
    write_text_file(path, out.text);
    return out;
}

} // namespace gpuplan::hwdb
