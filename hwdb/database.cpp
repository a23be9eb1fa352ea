#include "hwdb/database.hpp"

#include "hwdb/detail/spec_readers.hpp"
#include "hwdb/detail/yaml_reader.hpp"
#include "hwdb/file_io.hpp"
#include "model/error.hpp"

#include <algorithm>
#include <cstdlib>
#include <unordered_map>
#include <unordered_set>

namespace gpuplan::hwdb {
namespace {

template <class Spec> bool name_matches(const Spec& spec, const std::string& key) {
    if (normalize_name(spec.name) == key) {
        return true;
    }
    return std::any_of(spec.aliases.begin(), spec.aliases.end(),
                       [&](const std::string& a) { return normalize_name(a) == key; });
}

// Newest first: within a folder names and aliases are unique (add_entry), so the order only
// matters across folders, where the later folder wins, for aliases as for names.
template <class Spec> const Spec* find_in(const std::vector<Spec>& list, std::string_view name) {
    const std::string key = normalize_name(name);
    for (auto it = list.rbegin(); it != list.rend(); ++it) {
        if (name_matches(*it, key)) {
            return &*it;
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

// Every normalized name and alias in `list`, for checking references in O(1) each.
template <class Spec> std::unordered_set<std::string> names_of(const std::vector<Spec>& list) {
    std::unordered_set<std::string> out;
    for (const auto& spec : list) {
        out.insert(normalize_name(spec.name));
        for (const auto& a : spec.aliases) {
            out.insert(normalize_name(a));
        }
    }
    return out;
}

std::string read_file(const std::filesystem::path& path) {
    return read_text_file(path, "hwdb file");
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

// Adds or replaces by canonical name, so a user folder overrides the built-in entry; refuses a
// second entry with the same name, or a name or alias already used, in the same scope.
template <class Spec>
void Database::add_entry(std::vector<Spec>& list, Spec spec, const char* kind,
                         const std::string& file) {
    std::vector<std::string> keys{normalize_name(spec.name)};
    for (const auto& a : spec.aliases) {
        keys.push_back(normalize_name(a));
    }
    for (std::size_t i = 0; i < keys.size(); ++i) {
        const auto it = scope_keys_.find(std::string(kind) + ":" + keys[i]);
        if (it == scope_keys_.end()) {
            continue;
        }
        const auto bar = it->second.find('|');
        const std::string other_file = it->second.substr(0, bar);
        const std::string other = it->second.substr(bar + 1);
        const std::string what = i == 0 ? "name" : "alias '" + spec.aliases[i - 1] + "'";
        throw ConfigError(file, 0, 0, std::string(kind) + " '" + spec.name + "'",
                          other == spec.name
                              ? "defined twice (also in " + other_file +
                                    "); keep one entry per name in a folder"
                              : "its " + what + " is also a name or alias of " + kind + " '" +
                                    other + "' in " + other_file +
                                    "; rename one (names and aliases are unique in a folder)");
    }
    for (const auto& key : keys) {
        scope_keys_[std::string(kind) + ":" + key] = file + "|" + spec.name;
    }
    // Across scopes the later entry wins: say what it replaces or shadows. The index of every
    // name and alias loaded so far keeps this O(1) per key, so a folder of n entries loads in O(n).
    bool replaces = false;
    for (const auto& key : keys) {
        const auto it = all_keys_.find(std::string(kind) + ":" + key);
        if (it == all_keys_.end()) {
            continue;
        }
        const std::string& old = it->second;
        if (old == spec.name) {
            if (!replaces) {
                notes_.push_back(std::string(kind) + " '" + spec.name + "' from " + file +
                                 " replaces the one from " + origin_[std::string(kind) + ":" + old]);
            }
            replaces = true;
        } else {
            notes_.push_back(std::string(kind) + " name '" + key + "' now means '" + spec.name +
                             "' from " + file + ", not '" + old + "' from " +
                             origin_[std::string(kind) + ":" + old]);
        }
    }
    for (const auto& key : keys) {
        all_keys_[std::string(kind) + ":" + key] = spec.name;
    }
    origin_[std::string(kind) + ":" + spec.name] = file;
    if (replaces) {
        auto it = std::find_if(list.begin(), list.end(),
                               [&](const Spec& s) { return s.name == spec.name; });
        if (it != list.end()) {
            list.erase(it); // the replacement goes last, where find_in looks first
        }
    }
    list.push_back(std::move(spec));
}

void Database::add_yaml(std::string_view text, const std::string& file) {
    scope_keys_.clear();
    add_yaml_in_scope(text, file);
}

void Database::add_yaml_in_scope(std::string_view text, const std::string& file) {
    detail::MapReader root(detail::parse_strict(text, file), file, "");
    const int schema = root.integer("schema", 1, 1000);
    if (schema != 1) {
        root.fail_at("schema", "unsupported schema version " + std::to_string(schema) +
                                   "; this gpuplan reads schema 1");
    }
    for (auto& m : root.map_list("accelerators")) {
        add_entry(accelerators_, detail::read_accelerator(m), "accelerator", file);
    }
    for (auto& m : root.map_list("interconnects")) {
        add_entry(interconnects_, detail::read_interconnect(m), "interconnect", file);
    }
    for (auto& m : root.map_list("servers")) {
        add_entry(servers_, detail::read_server(m), "server", file);
    }
    for (auto& m : root.map_list("racks")) {
        add_entry(racks_, detail::read_rack(m), "rack", file);
    }
    for (auto& m : root.map_list("models")) {
        add_entry(models_, detail::read_model(m), "model", file);
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
        db.scope_keys_.clear();  // one folder is one scope for the clash check
        for (const auto& f : files) {
            db.add_yaml_in_scope(read_file(f), f.string());
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
    // Name sets, so that n references cost O(n) rather than a scan of the list each.
    const auto links = names_of(interconnects_);
    const auto gpus = names_of(accelerators_);
    const auto servers = names_of(servers_);
    const auto has = [](const std::unordered_set<std::string>& names, const std::string& ref) {
        return names.count(normalize_name(ref)) > 0;
    };
    for (const auto& a : accelerators_) {
        require(a.scale_up_link, "interconnect", a.name, has(links, a.scale_up_link));
        require(a.host_link, "interconnect", a.name, has(links, a.host_link));
    }
    for (const auto& s : servers_) {
        require(s.accelerator, "accelerator", s.name, has(gpus, s.accelerator));
        require(s.intra_node_link, "interconnect", s.name, has(links, s.intra_node_link));
        require(s.inter_node_link, "interconnect", s.name, has(links, s.inter_node_link));
    }
    for (const auto& r : racks_) {
        require(r.server, "server", r.name, has(servers, r.server));
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
