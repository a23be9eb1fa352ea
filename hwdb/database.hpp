#pragma once
/// The hardware database and model catalog: YAML folders turned into model value types, with
/// lookup by canonical name or alias and "did you mean" suggestions.

#include "model/hardware_spec.hpp"
#include "model/model_spec.hpp"

#include <filesystem>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gpuplan::hwdb {

namespace detail {
class MapReader;
} // namespace detail

/// Every entry loaded from one or more hwdb folders. Later folders override earlier ones by name.
class Database {
  public:
    /// Loads every `*.yaml` under each folder (recursively, in sorted order), in the given order.
    /// Throws ConfigError (file:line:column, key path) on the first bad entry.
    [[nodiscard]] static Database load(const std::vector<std::filesystem::path>& folders);

    /// Adds (or replaces by canonical name) the entries of one YAML text. `file` names it in
    /// error messages. Within one text (one folder for load()), two entries of a kind with the
    /// same name, or a name or alias used by two entries, throw ConfigError; across texts the
    /// later entry wins and notes() says so.
    void add_yaml(std::string_view text, const std::string& file);

    /// What later folders replaced, one line each ("accelerator 'h100-sxm' from B replaces the
    /// one from A"), for front ends to show; empty when nothing was overridden.
    [[nodiscard]] const std::vector<std::string>& notes() const { return notes_; }

    [[nodiscard]] const std::vector<model::AcceleratorSpec>& accelerators() const {
        return accelerators_;
    }
    [[nodiscard]] const std::vector<model::InterconnectSpec>& interconnects() const {
        return interconnects_;
    }
    [[nodiscard]] const std::vector<model::ServerSpec>& servers() const { return servers_; }
    [[nodiscard]] const std::vector<model::RackSpec>& racks() const { return racks_; }
    [[nodiscard]] const std::vector<model::ModelSpec>& models() const { return models_; }

    /// Finds by canonical name or alias (case-insensitive; ' ', '-', '_' alike).
    /// Throws InputError with "did you mean ..." when nothing matches.
    [[nodiscard]] const model::AcceleratorSpec& accelerator(std::string_view name) const;
    [[nodiscard]] const model::InterconnectSpec& interconnect(std::string_view name) const;
    [[nodiscard]] const model::ServerSpec& server(std::string_view name) const;
    [[nodiscard]] const model::RackSpec& rack(std::string_view name) const;
    [[nodiscard]] const model::ModelSpec& model(std::string_view name) const;

    /// The canonical name of the catalog model to suggest for an unknown `name` ("did you
    /// mean"): the same name token and version first, then the same parameter size, then the
    /// fewest edits ("Llama-3-70B" -> llama-3.1-70b); nullopt when nothing is close.
    [[nodiscard]] std::optional<std::string> suggest_model(std::string_view name) const;

    /// Null when not found (no exception), for GUI fields.
    [[nodiscard]] const model::AcceleratorSpec* find_accelerator(std::string_view name) const;
    [[nodiscard]] const model::ModelSpec* find_model(std::string_view name) const;

    /// A citation from hwdb/sources.yaml.
    struct SourceRef {
        std::string title;
        std::string url;
    };
    /// Source tags ("S6") and what they cite.
    [[nodiscard]] const std::map<std::string, SourceRef>& sources() const { return sources_; }

    /// Throws InputError when an entry names a link, accelerator or server that is not loaded.
    void check_references() const;

  private:
    void add_yaml_in_scope(std::string_view text, const std::string& file);
    /// Remembers where `keys` of the entry `kind:name` are written, for check_references.
    void note_reference(const detail::MapReader& m, const char* kind, const std::string& name,
                        std::initializer_list<const char*> keys);
    template <class Spec>
    void add_entry(std::vector<Spec>& list, Spec spec, const char* kind, const std::string& file);

    std::map<std::string, SourceRef> sources_;
    /// "kind:normalized name or alias" -> "file|canonical name" of the entries added in the
    /// current scope (one folder of load(), or one add_yaml call), for the clash check.
    std::map<std::string, std::string> scope_keys_;
    /// "kind:canonical name" -> the file that defined the entry.
    std::map<std::string, std::string> origin_;
    /// "kind:normalized name or alias" -> canonical name, over every folder loaded so far.
    std::unordered_map<std::string, std::string> all_keys_;
    /// "kind:canonical name:key" -> "file:line:col: key path" of a reference to another entry.
    std::map<std::string, std::string> reference_at_;
    std::vector<std::string> notes_;
    std::vector<model::AcceleratorSpec> accelerators_;
    std::vector<model::InterconnectSpec> interconnects_;
    std::vector<model::ServerSpec> servers_;
    std::vector<model::RackSpec> racks_;
    std::vector<model::ModelSpec> models_;
};

/// Accelerators a buyer of `gpu` would weigh against it (the what-if candidates): the same
/// vendor and form factor, launched the same year or later, `gpu` itself included; preliminary
/// (announced, unshipped) parts only when `gpu` is one.
[[nodiscard]] std::vector<model::AcceleratorSpec>
similar_accelerators(const Database& db, const model::AcceleratorSpec& gpu);

/// How the notes of an accelerator written with `preliminary: true` begin.
inline constexpr const char* kPreliminaryNote = "PRELIMINARY:";

/// True for an accelerator written with `preliminary: true`: announced figures of a part that was
/// not shipping when the entry was written (its notes begin with kPreliminaryNote).
[[nodiscard]] inline bool is_preliminary(const model::AcceleratorSpec& a) {
    return a.notes.starts_with(kPreliminaryNote);
}

/// The built-in hwdb folder plus `extra` folders and those in GPUPLAN_HWDB (colon-separated).
[[nodiscard]] std::vector<std::filesystem::path>
default_folders(const std::vector<std::filesystem::path>& extra);

/// Normalizes a name for matching: lowercase, with ' ', '_' turned into '-'.
[[nodiscard]] std::string normalize_name(std::string_view name);

} // namespace gpuplan::hwdb
