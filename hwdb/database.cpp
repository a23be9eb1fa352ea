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

// Adds or replaces by canonical name, so a user folder overrides the built-in entry. The index
// (name -> position) keeps a file of n entries O(n) to load instead of one scan per entry.
template <class Spec> class Upsert {
public:
    explicit Upsert(std::vector<Spec>& list) : list_(list) {
        index_.reserve(list.size());
        for (std::size_t i = 0; i < list.size(); ++i) {
            index_.emplace(list[i].name, i);
        }
    }
    void operator()(Spec spec) {
        const auto [it, added] = index_.try_emplace(spec.name, list_.size());
        if (added) {
            list_.push_back(std::move(spec));
        } else {
            list_[it->second] = std::move(spec);
        }
    }

private:
    std::vector<Spec>& list_;
    std::unordered_map<std::string, std::size_t> index_;
};

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

void Database::add_yaml(std::string_view text, const std::string& file) {
    detail::MapReader root(detail::parse_strict(text, file), file, "");
    const int schema = root.integer("schema", 1, 1000);
    if (schema != 1) {
        root.fail_at("schema", "unsupported schema version " + std::to_string(schema) +
                                   "; this gpuplan reads schema 1");
    }
    for (Upsert add(accelerators_); auto& m : root.map_list("accelerators")) {
        add(detail::read_accelerator(m));
    }
    for (Upsert add(interconnects_); auto& m : root.map_list("interconnects")) {
        add(detail::read_interconnect(m));
    }
    for (Upsert add(servers_); auto& m : root.map_list("servers")) {
        add(detail::read_server(m));
    }
    for (Upsert add(racks_); auto& m : root.map_list("racks")) {
        add(detail::read_rack(m));
    }
    for (Upsert add(models_); auto& m : root.map_list("models")) {
        add(detail::read_model(m));
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
