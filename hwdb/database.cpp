#include "hwdb/database.hpp"

#include "hwdb/detail/spec_readers.hpp"
#include "hwdb/detail/yaml_reader.hpp"
#include "model/error.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace gpuplan::hwdb {
namespace {

template <class Spec> bool name_matches(const Spec& spec, const std::string& key) {
    if (normalize_name(spec.name) == key) {
        return true;
    }
    return std::any_of(spec.aliases.begin(), spec.aliases.end(),
                       [&](const std::string& a) { return normalize_name(a) == key; });
}

template <class Spec> const Spec* find_in(const std::vector<Spec>& list, std::string_view name) {
    const std::string key = normalize_name(name);
    for (const auto& spec : list) {
        if (name_matches(spec, key)) {
            return &spec;
        }
    }
    return nullptr;
}

template <class Spec>
const Spec& get_in(const std::vector<Spec>& list, std::string_view name, const char* what,
                   const char* list_command) {
    if (const Spec* s = find_in(list, name)) {
        return *s;
    }
    std::vector<std::string> names;
    for (const auto& spec : list) {
        names.push_back(normalize_name(spec.name));
        for (const auto& a : spec.aliases) {
            names.push_back(normalize_name(a));
        }
    }
    std::string message = std::string("unknown ") + what + " '" + std::string(name) + "'";
    if (auto hint = detail::closest(normalize_name(name), names)) {
        // Suggest the canonical name of the entry the closest name belongs to.
        const Spec* s = find_in(list, *hint);
        message += "; did you mean '" + (s ? s->name : *hint) + "'?";
    }
    message += std::string(" ('") + list_command + "' lists them)";
    throw InputError(message);
}

// Adds or replaces by canonical name, so a user folder overrides the built-in entry.
template <class Spec> void upsert(std::vector<Spec>& list, Spec spec) {
    auto it = std::find_if(list.begin(), list.end(),
                           [&](const Spec& s) { return s.name == spec.name; });
    if (it != list.end()) {
        *it = std::move(spec);
    } else {
        list.push_back(std::move(spec));
    }
}

std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw InputError(path.string() + ": cannot open the file; check that it exists and is readable");
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace

std::string normalize_name(std::string_view name) {
    std::string out;
    out.reserve(name.size());
    for (char c : name) {
        if (c == ' ' || c == '_') {
            c = '-';
        }
        out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
    return out;
}

void Database::add_yaml(std::string_view text, const std::string& file) {
    detail::MapReader root(detail::parse_strict(text, file), file, "");
    const int schema = root.integer("schema", 1, 1000);
    if (schema != 1) {
        root.fail_at("schema", "unsupported schema version " + std::to_string(schema) +
                                   "; this gpuplan reads schema 1");
    }
    for (auto& m : root.map_list("accelerators")) {
        upsert(accelerators_, detail::read_accelerator(m));
    }
    for (auto& m : root.map_list("interconnects")) {
        upsert(interconnects_, detail::read_interconnect(m));
    }
    for (auto& m : root.map_list("servers")) {
        upsert(servers_, detail::read_server(m));
    }
    for (auto& m : root.map_list("racks")) {
        upsert(racks_, detail::read_rack(m));
    }
    for (auto& m : root.map_list("models")) {
        upsert(models_, detail::read_model(m));
    }
    for (auto& m : root.map_list("sources")) {
        const std::string tag = m.string("tag");
        sources_[tag] = SourceRef{m.string_or("title", ""), m.string_or("url", "")};
        m.finish();
    }
    root.finish();
}

Database Database::load(const std::vector<std::filesystem::path>& folders) {
    Database db;
    for (const auto& folder : folders) {
        std::error_code ec;
        if (!std::filesystem::is_directory(folder, ec)) {
            throw InputError(folder.string() + ": not a folder; --hwdb and GPUPLAN_HWDB take folders of YAML files");
        }
        std::vector<std::filesystem::path> files;
        for (const auto& entry : std::filesystem::recursive_directory_iterator(folder)) {
            const auto ext = entry.path().extension();
            // hwdb/profiles/ holds calibration profiles, which have their own schema.
            if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml") &&
                entry.path().parent_path().filename() != "profiles") {
                files.push_back(entry.path());
            }
        }
        std::sort(files.begin(), files.end());
        for (const auto& f : files) {
            db.add_yaml(read_file(f), f.string());
        }
    }
    db.check_references();
    return db;
}

void Database::check_references() const {
    const auto require = [&](const std::string& ref, const char* what, const std::string& owner,
                             bool exists) {
        if (!ref.empty() && !exists) {
            throw InputError("hwdb: " + owner + " refers to unknown " + what + " '" + ref +
                             "'; add it to the hwdb or fix the name");
        }
    };
    for (const auto& a : accelerators_) {
        require(a.scale_up_link, "interconnect", a.name, find_in(interconnects_, a.scale_up_link));
        require(a.host_link, "interconnect", a.name, find_in(interconnects_, a.host_link));
    }
    for (const auto& s : servers_) {
        require(s.accelerator, "accelerator", s.name, find_in(accelerators_, s.accelerator));
        require(s.intra_node_link, "interconnect", s.name, find_in(interconnects_, s.intra_node_link));
        require(s.inter_node_link, "interconnect", s.name, find_in(interconnects_, s.inter_node_link));
    }
    for (const auto& r : racks_) {
        require(r.server, "server", r.name, find_in(servers_, r.server));
    }
}

const model::AcceleratorSpec& Database::accelerator(std::string_view name) const {
    return get_in(accelerators_, name, "accelerator", "gpuplan hw list");
}
const model::InterconnectSpec& Database::interconnect(std::string_view name) const {
    return get_in(interconnects_, name, "interconnect", "gpuplan hw list --links");
}
const model::ServerSpec& Database::server(std::string_view name) const {
    return get_in(servers_, name, "server", "gpuplan hw list --servers");
}
const model::RackSpec& Database::rack(std::string_view name) const {
    return get_in(racks_, name, "rack", "gpuplan hw list --racks");
}
const model::ModelSpec& Database::model(std::string_view name) const {
    return get_in(models_, name, "model", "gpuplan model list");
}
const model::AcceleratorSpec* Database::find_accelerator(std::string_view name) const {
    return find_in(accelerators_, name);
}
const model::ModelSpec* Database::find_model(std::string_view name) const {
    return find_in(models_, name);
}

std::vector<model::AcceleratorSpec> similar_accelerators(const Database& db,
                                                       const model::AcceleratorSpec& gpu) {
    std::vector<model::AcceleratorSpec> out;
    for (const auto& a : db.accelerators()) {
        if (a.vendor == gpu.vendor && a.launch_year >= gpu.launch_year && a.form_factor == gpu.form_factor) {
            out.push_back(a);
        }
    }
    return out;
}

std::vector<std::filesystem::path> default_folders(const std::vector<std::filesystem::path>& extra) {
    std::vector<std::filesystem::path> out{GPUPLAN_BUILTIN_HWDB};
    if (const char* env = std::getenv("GPUPLAN_HWDB"); env && *env) {
        std::string_view rest = env;
        while (!rest.empty()) {
            const auto colon = rest.find(':');
            if (colon != 0) {
                out.emplace_back(std::string(rest.substr(0, colon)));
            }
            if (colon == std::string_view::npos) {
                break;
            }
            rest.remove_prefix(colon + 1);
        }
    }
    out.insert(out.end(), extra.begin(), extra.end());
    return out;
}

}  // namespace gpuplan::hwdb
