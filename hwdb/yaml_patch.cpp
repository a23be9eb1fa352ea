// Comment-keeping YAML edits: scalars replaced at their yaml-cpp Mark, blocks emitted anew only
// where the shape changed (hwdb/yaml_patch.hpp).
#include "hwdb/yaml_patch.hpp"

#include "model/error.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <tuple>
#include <utility>

namespace gpuplan::hwdb {
namespace {

YAML::Node load(std::string_view text, const char* what) {
    try {
        YAML::Node n = YAML::Load(std::string(text));
        if (!n.IsMap()) {
            throw InputError(std::string("patch_yaml: the ") + what +
                             " text is not a mapping of keys; give a scenario document");
        }
        return n;
    } catch (const YAML::Exception& e) {
        throw InputError(std::string("patch_yaml: the ") + what + " text is not YAML: " + e.msg);
    }
}

bool same(const YAML::Node& a, const YAML::Node& b) {
    if (a.Type() != b.Type()) {
        return false;
    }
    if (a.IsScalar()) {
        return a.Scalar() == b.Scalar();
    }
    if (a.IsSequence()) {
        if (a.size() != b.size()) {
            return false;
        }
        for (std::size_t i = 0; i < a.size(); ++i) {
            if (!same(a[i], b[i])) {
                return false;
            }
        }
        return true;
    }
    if (a.IsMap()) {
        if (a.size() != b.size()) {
            return false;
        }
        for (auto it = a.begin(); it != a.end(); ++it) {
            const YAML::Node other = b[it->first.Scalar()];
            if (!other.IsDefined() || !same(it->second, other)) {
                return false;
            }
        }
        return true;
    }
    return true; // both null or undefined
}

/// Where a scalar starting at `pos` ends; npos when it cannot be patched in place.
std::size_t scalar_end(std::string_view t, std::size_t pos, bool flow) {
    if (pos >= t.size()) {
        return std::string_view::npos;
    }
    const char c = t[pos];
    if (c == '"') {
        for (std::size_t i = pos + 1; i < t.size(); ++i) {
            if (t[i] == '\\') {
                ++i;
            } else if (t[i] == '"') {
                return i + 1;
            } else if (t[i] == '\n') {
                return std::string_view::npos;
            }
        }
        return std::string_view::npos;
    }
    if (c == '\'') {
        for (std::size_t i = pos + 1; i < t.size(); ++i) {
            if (t[i] == '\'' && i + 1 < t.size() && t[i + 1] == '\'') {
                ++i;
            } else if (t[i] == '\'') {
                return i + 1;
            } else if (t[i] == '\n') {
                return std::string_view::npos;
            }
        }
        return std::string_view::npos;
    }
    if (c == '|' || c == '>' || c == '\n') {
        return std::string_view::npos;
    }
    std::size_t end = pos;
    while (end < t.size() && t[end] != '\n' && t[end] != '\r') {
        if (t[end] == '#' && end > pos && (t[end - 1] == ' ' || t[end - 1] == '\t')) {
            break;
        }
        if (flow && (t[end] == ',' || t[end] == ']' || t[end] == '}')) {
            break;
        }
        ++end;
    }
    while (end > pos && (t[end - 1] == ' ' || t[end - 1] == '\t')) {
        --end;
    }
    return end;
}

std::size_t line_start(std::string_view t, std::size_t pos) {
    while (pos > 0 && t[pos - 1] != '\n') {
        --pos;
    }
    return pos;
}

/// The top-level keys of a document with [start, end) of each block: from its key's line to
/// the next key's line, less the blank lines and column-0 comments just before the next key
/// (they belong to it).
struct Block {
    std::string key;
    std::size_t start;
    std::size_t end;
};

std::vector<Block> blocks(std::string_view t, const YAML::Node& root) {
    std::vector<Block> out;
    for (auto it = root.begin(); it != root.end(); ++it) {
        const auto pos = static_cast<std::size_t>(std::max(0, it->first.Mark().pos));
        out.push_back({it->first.Scalar(), line_start(t, pos), t.size()});
    }
    std::sort(out.begin(), out.end(),
              [](const Block& a, const Block& b) { return a.start < b.start; });
    for (std::size_t i = 0; i < out.size(); ++i) {
        std::size_t end = i + 1 < out.size() ? out[i + 1].start : t.size();
        // Back over trailing blank and column-0 comment lines.
        while (end > out[i].start) {
            const std::size_t ls = line_start(t, end - 1);
            const std::string_view line = t.substr(ls, end - ls);
            const auto first = line.find_first_not_of(" \t\r\n");
            const bool blank = first == std::string_view::npos;
            const bool comment0 = !line.empty() && line.front() == '#';
            if (ls == out[i].start || (!blank && !comment0)) {
                break;
            }
            end = ls;
        }
        out[i].end = end;
    }
    return out;
}

const Block* find_block(const std::vector<Block>& bs, const std::string& key) {
    for (const Block& b : bs) {
        if (b.key == key) {
            return &b;
        }
    }
    return nullptr;
}

struct Edit {
    std::size_t begin;
    std::size_t end;
    std::string text;
    std::size_t order; ///< ties at one position: lower order comes first in the text
    std::string top;   ///< the top-level key it belongs to ("" for block edits)
};

struct Walker {
    std::string_view orig;
    std::string_view after;
    std::vector<Edit> edits;
    std::set<std::string> rewrite;
    std::vector<std::string> replaced;

    void walk(const std::string& top, const std::string& path, const YAML::Node& b,
              const YAML::Node& a, const YAML::Node& o, bool o_flow, bool a_flow) {
        if (rewrite.count(top) > 0) {
            return;
        }
        if (b.IsScalar() && a.IsScalar()) {
            if (b.Scalar() == a.Scalar()) {
                return;
            }
            if (!o.IsDefined() || !o.IsScalar() || o.Mark().pos < 0 || a.Mark().pos < 0) {
                rewrite.insert(top);
                return;
            }
            const auto ob = static_cast<std::size_t>(o.Mark().pos);
            const auto ab = static_cast<std::size_t>(a.Mark().pos);
            const std::size_t oe = scalar_end(orig, ob, o_flow);
            const std::size_t ae = scalar_end(after, ab, a_flow);
            if (oe == std::string_view::npos || ae == std::string_view::npos) {
                rewrite.insert(top);
                return;
            }
            std::string text(after.substr(ab, ae - ab));
            const bool breaks_flow = o_flow && text.find_first_of(",[]{}#") != std::string::npos;
            // The original's text must be the whole scalar (a plain scalar on one line).
            bool whole = false;
            try {
                whole = YAML::Load(std::string(orig.substr(ob, oe - ob))).Scalar() == o.Scalar();
            } catch (const YAML::Exception&) {
                whole = false;
            }
            if (breaks_flow || !whole) {
                rewrite.insert(top);
                return;
            }
            edits.push_back({ob, oe, std::move(text), 0, top});
            replaced.push_back(path);
            return;
        }
        const bool o_here = o.IsDefined();
        const bool of = o_flow || (o_here && o.Style() == YAML::EmitterStyle::Flow);
        const bool af = a_flow || a.Style() == YAML::EmitterStyle::Flow;
        if (b.IsMap() && a.IsMap()) {
            if (!o_here || !o.IsMap()) {
                if (!same(a, b)) {
                    rewrite.insert(top);
                }
                return;
            }
            for (auto it = b.begin(); it != b.end(); ++it) {
                const std::string key = it->first.Scalar();
                const YAML::Node an = a[key];
                if (!an.IsDefined()) {
                    rewrite.insert(top);
                    return;
                }
                walk(top, path + "." + key, it->second, an, o[key], of, af);
            }
            for (auto it = a.begin(); it != a.end(); ++it) {
                if (!b[it->first.Scalar()].IsDefined()) {
                    rewrite.insert(top);
                    return;
                }
            }
            return;
        }
        if (b.IsSequence() && a.IsSequence() && a.size() == b.size()) {
            if (!o_here || !o.IsSequence() || o.size() != b.size()) {
                if (!same(a, b)) {
                    rewrite.insert(top);
                }
                return;
            }
            for (std::size_t i = 0; i < a.size(); ++i) {
                walk(top, path + "." + std::to_string(i), b[i], a[i], o[i], of, af);
            }
            return;
        }
        if (!same(a, b)) {
            rewrite.insert(top);
        }
    }
};

std::string flow_text(const YAML::Node& n) {
    YAML::Emitter e;
    e.SetMapFormat(YAML::Flow);
    e.SetSeqFormat(YAML::Flow);
    e << n;
    return e.c_str();
}

} // namespace

YamlPatch patch_yaml(std::string_view original, std::string_view before, std::string_view after,
                     const std::set<std::string>& force_rewrite) {
    const YAML::Node o = load(original, "original");
    const YAML::Node b = load(before, "before");
    const YAML::Node a = load(after, "after");
    Walker w{original, after, {}, force_rewrite, {}};
    std::vector<std::string> after_keys;
    for (auto it = a.begin(); it != a.end(); ++it) {
        const std::string key = it->first.Scalar();
        after_keys.push_back(key);
        const YAML::Node bn = b[key];
        if (!bn.IsDefined()) {
            w.rewrite.insert(key);
            continue;
        }
        w.walk(key, key, bn, it->second, o[key], false, false);
    }
    for (auto it = b.begin(); it != b.end(); ++it) {
        if (!a[it->first.Scalar()].IsDefined()) {
            w.rewrite.insert(it->first.Scalar());
        }
    }

    const std::vector<Block> ob = blocks(original, o);
    const std::vector<Block> ab = blocks(after, a);
    YamlPatch out;
    std::vector<Edit> edits;
    for (Edit& e : w.edits) {
        if (w.rewrite.count(e.top) == 0) {
            edits.push_back(std::move(e));
        }
    }
    out.replaced = std::move(w.replaced);
    out.replaced.erase(std::remove_if(out.replaced.begin(), out.replaced.end(),
                                      [&](const std::string& p) {
                                          return w.rewrite.count(p.substr(0, p.find('.'))) > 0;
                                      }),
                       out.replaced.end());
    for (const std::string& key : w.rewrite) {
        const Block* in_orig = find_block(ob, key);
        const Block* in_after = find_block(ab, key);
        std::string text;
        if (in_after != nullptr) {
            text = std::string(after.substr(in_after->start, in_after->end - in_after->start));
            if (!text.empty() && text.back() != '\n') {
                text += '\n';
            }
        }
        if (in_orig != nullptr) {
            edits.push_back({in_orig->start, in_orig->end, text, 0, ""});
            out.rewritten.push_back(key);
            continue;
        }
        if (in_after == nullptr) {
            continue; // neither has it: nothing to write
        }
        // Insert before the next key (in the canonical order) that the original has.
        const auto at = std::find(after_keys.begin(), after_keys.end(), key);
        std::size_t pos = original.size();
        for (auto next = at + 1; next != after_keys.end(); ++next) {
            if (const Block* nb = find_block(ob, *next)) {
                // After the block before it, so the comments that introduce it stay with it.
                const auto j = static_cast<std::size_t>(nb - ob.data());
                pos = j > 0 ? ob[j - 1].end : nb->start;
                break;
            }
        }
        if (pos == original.size() && !original.empty() && original.back() != '\n') {
            text.insert(text.begin(), '\n');
        }
        edits.push_back({pos, pos, text, static_cast<std::size_t>(at - after_keys.begin()), ""});
        out.rewritten.push_back(key);
    }
    std::sort(edits.begin(), edits.end(), [](const Edit& x, const Edit& y) {
        return std::tie(x.begin, x.order) > std::tie(y.begin, y.order);
    });
    out.text = std::string(original);
    for (const Edit& e : edits) {
        out.text.replace(e.begin, e.end - e.begin, e.text);
    }
    return out;
}

namespace {

std::string value_at(const YAML::Node& root, std::string_view path) {
    YAML::Node n = root;
    std::size_t start = 0;
    while (start <= path.size()) {
        std::size_t dot = path.find('.', start);
        if (dot == std::string_view::npos) {
            dot = path.size();
        }
        const std::string key(path.substr(start, dot - start));
        if (n.IsSequence()) {
            std::size_t idx = 0;
            try {
                idx = std::stoul(key);
            } catch (const std::exception&) {
                return {};
            }
            if (idx >= n.size()) {
                return {};
            }
            n.reset(n[idx]);
        } else if (n.IsMap()) {
            const YAML::Node child = static_cast<const YAML::Node&>(n)[key];
            if (!child.IsDefined()) {
                return {};
            }
            n.reset(child);
        } else {
            return {};
        }
        start = dot + 1;
    }
    if (!n.IsDefined() || n.IsNull()) {
        return {};
    }
    return n.IsScalar() ? n.Scalar() : flow_text(n);
}

} // namespace

std::string yaml_value_at(std::string_view text, std::string_view path) {
    return value_at(load(text, "scenario"), path);
}

std::vector<std::string> yaml_values_at(std::string_view text,
                                        const std::vector<std::string>& paths) {
    const YAML::Node root = load(text, "scenario");
    std::vector<std::string> out;
    out.reserve(paths.size());
    for (const std::string& p : paths) {
        out.push_back(value_at(root, p));
    }
    return out;
}

std::vector<std::string> differing_top_keys(std::string_view a, std::string_view b) {
    const YAML::Node an = load(a, "first");
    const YAML::Node bn = load(b, "second");
    std::vector<std::string> out;
    for (auto it = bn.begin(); it != bn.end(); ++it) {
        const YAML::Node other = an[it->first.Scalar()];
        if (!other.IsDefined() || !same(other, it->second)) {
            out.push_back(it->first.Scalar());
        }
    }
    for (auto it = an.begin(); it != an.end(); ++it) {
        if (!bn[it->first.Scalar()].IsDefined()) {
            out.push_back(it->first.Scalar());
        }
    }
    return out;
}

} // namespace gpuplan::hwdb
