#include "hwdb/database.hpp"

#include "hwdb/detail/spec_readers.hpp"
#include "hwdb/detail/yaml_reader.hpp"
#include "hwdb/file_io.hpp"
#include "model/error.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace gpuplan::hwdb {
namespace {

// False for a file that holds none of the hwdb lists but keys of another gpuplan file (a scenario,
// sweep, plan or profile): `--hwdb .` in a folder of scenarios. Anything else is read as hardware,
// so a misspelt list name ("acelerators:") is still an unknown-key error.
bool is_hardware_file(const std::string& text, const std::string& file) {
    const YAML::Node root = detail::parse_strict(text, file);
    if (!root.IsMap()) {
        return true;
    }
    for (const char* key :
         {"accelerators", "interconnects", "servers", "racks", "models", "sources"}) {
        if (root[key]) {
            return true;
        }
    }
    for (const char* key : {"model", "hardware", "workload", "engine", "profile", "points", "plan",
                            "training", "fleet", "cluster", "slo", "sweep", "base", "grid"}) {
        if (root[key]) {
            return false;
        }
    }
    return true;
}

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
std::optional<std::string> suggest_in(const std::vector<Spec>& list, std::string_view name) {
    std::vector<std::string> names;
    for (const auto& spec : list) {
        names.push_back(normalize_name(spec.name));
        for (const auto& a : spec.aliases) {
            names.push_back(normalize_name(a));
        }
    }
    if (auto hint = detail::closest(normalize_name(name), names)) {
        // Suggest the canonical name of the entry the closest name belongs to.
        const Spec* s = find_in(list, *hint);
        return s ? s->name : *hint;
    }
    return std::nullopt;
}

template <class Spec>
const Spec& get_in(const std::vector<Spec>& list, std::string_view name, const char* what,
                   const char* list_command, const std::optional<std::string>& suggestion) {
    if (const Spec* s = find_in(list, name)) {
        return *s;
    }
    std::string message = std::string("unknown ") + what + " '" + std::string(name) + "'";
    if (suggestion) {
        message += "; did you mean '" + *suggestion + "'?";
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

/// What a model name says about the model: "Llama-3.1-70B-Instruct" -> name token "llama",
/// version "3.1", size "70b".
struct ModelNameParts {
    std::string token;   ///< leading letters of the name
    std::string version; ///< digits (and dots) after them, e.g. "3.1", "2.5", "3"
    std::string size;    ///< parameter-count token, e.g. "70b", "8x7b", "1.5b"
};

bool is_size_token(std::string_view t) {
    // 70b, 1.5b, 8x7b, 560m: digits (with '.' or 'x') ending in b or m, starting with a digit.
    if (t.size() < 2 || !std::isdigit(static_cast<unsigned char>(t.front())) ||
        (t.back() != 'b' && t.back() != 'm')) {
        return false;
    }
    return std::all_of(t.begin(), t.end() - 1, [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'x';
    });
}

ModelNameParts name_parts(std::string_view raw) {
    std::string n = normalize_name(raw);
    if (const auto slash = n.rfind('/'); slash != std::string::npos) {
        n.erase(0, slash + 1); // the repository name of an "org/name" id
    }
    if (n.rfind("meta-", 0) == 0) {
        n.erase(0, 5); // "Meta-Llama-3.1-8B" names Llama 3.1 8B
    }
    std::vector<std::string> tokens;
    for (std::size_t start = 0; start <= n.size();) {
        const std::size_t dash = std::min(n.find('-', start), n.size());
        tokens.push_back(n.substr(start, dash - start));
        start = dash + 1;
    }
    ModelNameParts p;
    const std::string& first = tokens.front();
    std::size_t letters = 0;
    while (letters < first.size() && std::isalpha(static_cast<unsigned char>(first[letters]))) {
        ++letters;
    }
    p.token = first.substr(0, letters);
    p.version = first.substr(letters); // "qwen2.5" -> "2.5"
    std::size_t next = 1;
    if (p.version.empty() && tokens.size() > 1) {
        // "llama-3.1-70b", "deepseek-v3": a version token after the name.
        std::string_view t = tokens[1];
        if (t.starts_with('v')) {
            t.remove_prefix(1);
        }
        if (!t.empty() && std::isdigit(static_cast<unsigned char>(t.front())) &&
            !is_size_token(tokens[1])) {
            p.version = std::string(t);
            next = 2;
        }
    }
    for (std::size_t i = next; i < tokens.size(); ++i) {
        if (is_size_token(tokens[i])) {
            p.size = tokens[i];
            break;
        }
    }
    return p;
}

std::string major_version(const std::string& v) {
    return v.substr(0, v.find('.'));
}

/// Billions of parameters a size token states ("8x7b" -> 56, "560m" -> 0.56); 0 when none.
double size_billions(const std::string& size) {
    if (size.empty()) {
        return 0;
    }
    double product = 1;
    std::size_t start = 0;
    const std::string digits = size.substr(0, size.size() - 1);
    while (start <= digits.size()) {
        const std::size_t x = std::min(digits.find('x', start), digits.size());
        try {
            product *= std::stod(digits.substr(start, x - start));
        } catch (const std::exception&) {
            return 0;
        }
        start = x + 1;
    }
    return size.back() == 'm' ? product / 1000 : product;
}

/// How far apart two sizes are, as |ln(a / b)|; large when either is unknown.
double size_gap(const std::string& a, const std::string& b) {
    const double x = size_billions(a);
    const double y = size_billions(b);
    return x > 0 && y > 0 ? std::abs(std::log(x / y)) : 1e9;
}

/// The catalog model to suggest for an unknown name. Candidates are the names close by edit
/// distance (detail::closest) and those of the same name token and size or version; they rank by
/// the same name token, then the same major version, then the same size, then the same full
/// version, then the nearest size, then edit distance: "Llama-3-70B" suggests llama-3.1-70b, not
/// llama-2-70b.
std::optional<std::string> suggest_model_in(const std::vector<model::ModelSpec>& models,
                                            std::string_view name) {
    const std::optional<std::string> close = suggest_in(models, name);
    const ModelNameParts q = name_parts(name);
    const std::string key = normalize_name(name);
    // false ranks first; then the nearer size (7b suggests 8b before 70b); then edit distance.
    using Rank = std::tuple<bool, bool, bool, bool, double, std::size_t>;
    std::optional<std::pair<Rank, std::string>> best;
    for (const auto& m : models) {
        std::vector<std::string> spellings{m.name};
        spellings.insert(spellings.end(), m.aliases.begin(), m.aliases.end());
        for (const auto& spelling : spellings) {
            const ModelNameParts c = name_parts(spelling);
            const bool token = !q.token.empty() && q.token == c.token;
            const bool size = !q.size.empty() && q.size == c.size;
            const bool major =
                q.version.empty() || major_version(q.version) == major_version(c.version);
            const bool same_release = !q.version.empty() && q.version == c.version;
            if (!(token && (size || same_release)) && close != m.name) {
                continue;
            }
            const Rank rank{!token,
                            !major,
                            !size,
                            q.version != c.version,
                            size_gap(q.size, c.size),
                            detail::edit_distance(key, normalize_name(spelling))};
            if (!best || rank < best->first) {
                best = std::pair{rank, m.name};
            }
        }
    }
    return best ? std::optional<std::string>(best->second) : close;
}

std::string read_file(const std::filesystem::path& path) {
    return read_text_file(path, "hwdb file");
}

} // namespace

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
        throw ConfigError(
            file, 0, 0, std::string(kind) + " '" + spec.name + "'",
            other == spec.name
                ? "defined twice (also in " + other_file + "); keep one entry per name in a folder"
                : "its " + what + " is also a name or alias of " + kind + " '" + other + "' in " +
                      other_file + "; rename one (names and aliases are unique in a folder)");
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
                                 " replaces the one from " +
                                 origin_[std::string(kind) + ":" + old]);
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
        model::AcceleratorSpec a = detail::read_accelerator(m);
        note_reference(m, "accelerator", a.name, {"scale_up_link", "host_link"});
        add_entry(accelerators_, std::move(a), "accelerator", file);
    }
    for (auto& m : root.map_list("interconnects")) {
        add_entry(interconnects_, detail::read_interconnect(m), "interconnect", file);
    }
    for (auto& m : root.map_list("servers")) {
        model::ServerSpec server = detail::read_server(m);
        note_reference(m, "server", server.name,
                       {"accelerator", "intra_node_link", "inter_node_link"});
        add_entry(servers_, std::move(server), "server", file);
    }
    for (auto& m : root.map_list("racks")) {
        model::RackSpec rack = detail::read_rack(m);
        note_reference(m, "rack", rack.name, {"server"});
        add_entry(racks_, std::move(rack), "rack", file);
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
            throw InputError(folder.string() +
                             ": not a folder; --hwdb and GPUPLAN_HWDB take folders of YAML files");
        }
        std::vector<std::filesystem::path> files;
        for (const auto& entry : std::filesystem::recursive_directory_iterator(folder)) {
            const auto ext = entry.path().extension();
            // hwdb/profiles/ holds calibration profiles and error_bands.yaml the measured error
            // bands (hwdb/error_bands_io.hpp), which have their own schemas.
            if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml") &&
                entry.path().parent_path().filename() != "profiles" &&
                entry.path().filename() != "error_bands.yaml") {
                files.push_back(entry.path());
            }
        }
        std::sort(files.begin(), files.end());
        db.scope_keys_.clear(); // one folder is one scope for the clash check
        for (const auto& f : files) {
            const std::string text = read_file(f);
            // `--hwdb .` in a folder that also holds scenarios or sweep specs: those are not
            // hardware, so they are skipped with a note instead of failing on their keys.
            if (!is_hardware_file(text, f.string())) {
                db.notes_.push_back("hwdb: skipped " + f.string() +
                                    ": not a hardware file (no accelerators, interconnects, "
                                    "servers, racks, models or sources list)");
                continue;
            }
            db.add_yaml_in_scope(text, f.string());
        }
    }
    db.check_references();
    return db;
}

void Database::note_reference(const detail::MapReader& m, const char* kind, const std::string& name,
                              std::initializer_list<const char*> keys) {
    const YAML::Node node = m.node();
    for (const char* key : keys) {
        if (const YAML::Node value = node[key]; value) {
            const YAML::Mark mark = value.Mark();
            reference_at_[std::string(kind) + ":" + name + ":" + key] =
                m.file() + ":" + std::to_string(mark.line + 1) + ":" +
                std::to_string(mark.column + 1) + ": " + m.path_of(key);
        }
    }
}

void Database::check_references() const {
    const auto require_at = [&](const std::string& ref, const char* what, const char* kind,
                                const std::string& owner, const char* key, bool exists) {
        if (ref.empty() || exists) {
            return;
        }
        const auto at = reference_at_.find(std::string(kind) + ":" + owner + ":" + key);
        const std::string where = at != reference_at_.end() ? at->second + ": " : "hwdb: ";
        throw InputError(where + owner + " refers to unknown " + what + " '" + ref +
                         "'; add it to the hwdb or fix the name");
    };
    // Name sets, so that n references cost O(n) rather than a scan of the list each.
    const auto links = names_of(interconnects_);
    const auto gpus = names_of(accelerators_);
    const auto servers = names_of(servers_);
    const auto has = [](const std::unordered_set<std::string>& names, const std::string& ref) {
        return names.count(normalize_name(ref)) > 0;
    };
    for (const auto& a : accelerators_) {
        require_at(a.scale_up_link, "interconnect", "accelerator", a.name, "scale_up_link",
                   has(links, a.scale_up_link));
        require_at(a.host_link, "interconnect", "accelerator", a.name, "host_link",
                   has(links, a.host_link));
    }
    for (const auto& s : servers_) {
        require_at(s.accelerator, "accelerator", "server", s.name, "accelerator",
                   has(gpus, s.accelerator));
        require_at(s.intra_node_link, "interconnect", "server", s.name, "intra_node_link",
                   has(links, s.intra_node_link));
        require_at(s.inter_node_link, "interconnect", "server", s.name, "inter_node_link",
                   has(links, s.inter_node_link));
    }
    for (const auto& r : racks_) {
        require_at(r.server, "server", "rack", r.name, "server", has(servers, r.server));
    }
}

const model::AcceleratorSpec& Database::accelerator(std::string_view name) const {
    return get_in(accelerators_, name, "accelerator", "gpuplan hw list",
                  find_in(accelerators_, name) ? std::nullopt : suggest_in(accelerators_, name));
}
const model::InterconnectSpec& Database::interconnect(std::string_view name) const {
    return get_in(interconnects_, name, "interconnect", "gpuplan hw list --links",
                  find_in(interconnects_, name) ? std::nullopt : suggest_in(interconnects_, name));
}
const model::ServerSpec& Database::server(std::string_view name) const {
    return get_in(servers_, name, "server", "gpuplan hw list --servers",
                  find_in(servers_, name) ? std::nullopt : suggest_in(servers_, name));
}
const model::RackSpec& Database::rack(std::string_view name) const {
    return get_in(racks_, name, "rack", "gpuplan hw list --racks",
                  find_in(racks_, name) ? std::nullopt : suggest_in(racks_, name));
}
const model::ModelSpec& Database::model(std::string_view name) const {
    return get_in(models_, name, "model", "gpuplan model list",
                  find_in(models_, name) ? std::nullopt : suggest_model(name));
}
std::optional<std::string> Database::suggest_model(std::string_view name) const {
    return suggest_model_in(models_, name);
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
        // An announced part is no purchase option yet: it is never a what-if of a shipping one.
        if (is_preliminary(a) && !is_preliminary(gpu)) {
            continue;
        }
        if (a.vendor == gpu.vendor && a.launch_year >= gpu.launch_year &&
            a.form_factor == gpu.form_factor) {
            out.push_back(a);
        }
    }
    return out;
}

std::vector<std::filesystem::path>
default_folders(const std::vector<std::filesystem::path>& extra) {
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

} // namespace gpuplan::hwdb
