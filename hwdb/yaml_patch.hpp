#pragma once
/// Comment-keeping edits of YAML text (issue 17 item 4): a document a person wrote, with its
/// comments, blank lines, key order and spellings, is changed into one that reads as a new
/// canonical text by touching only what changed. Pure text in, text out (no files, no Qt).
///
/// What is kept: every byte outside the changed values. A scalar whose value changed (the same
/// key, the same place in lists of the same length) is replaced at its position (yaml-cpp's
/// Mark) by the new value's text, so the comment after it stays. What is emitted anew: a
/// top-level block (`engine:`, `cluster:`, ...) in which a key was added or removed, a list
/// changed length, a value changed shape (a scalar became a mapping) or a scalar cannot be
/// patched in place (a block scalar, or a flow-context value the new text would break); such a
/// block is replaced by the canonical block, losing the comments inside it only. A top-level
/// key the original lacks is inserted before the key that follows it in the canonical text.

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan::hwdb {

/// The result of patch_yaml.
struct YamlPatch {
    std::string text;                   ///< the patched document
    std::vector<std::string> replaced;  ///< dotted paths of the scalars replaced in place
    std::vector<std::string> rewritten; ///< top-level keys whose block was emitted anew
};

/// `original` changed by what differs between `before` and `after`, two canonical texts of the
/// same writer: `before` reads as `original` does, `after` is the wanted document. Keys of
/// `force_rewrite` are emitted anew even when no scalar in them changed (a caller that checks
/// the result and finds a top-level block reading differently). Throws InputError when a text
/// is not YAML or its top level is not a mapping.
[[nodiscard]] YamlPatch patch_yaml(std::string_view original, std::string_view before,
                                   std::string_view after,
                                   const std::set<std::string>& force_rewrite = {});

/// The value at a dotted `path` of a YAML text (numeric segments index lists), written as the
/// text spells it when it is a scalar and as one-line flow YAML when it is a list or mapping;
/// "" when the path is absent or null. Throws InputError when the text is not YAML.
[[nodiscard]] std::string yaml_value_at(std::string_view text, std::string_view path);
/// yaml_value_at for several paths, reading the text once.
[[nodiscard]] std::vector<std::string> yaml_values_at(std::string_view text,
                                                      const std::vector<std::string>& paths);

/// The top-level keys whose blocks differ between two YAML texts (by their values, not their
/// spelling), in the order of `b` then those only in `a`.
[[nodiscard]] std::vector<std::string> differing_top_keys(std::string_view a, std::string_view b);

} // namespace gpuplan::hwdb
