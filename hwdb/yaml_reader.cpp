#include "hwdb/detail/yaml_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>
#include <unordered_set>

namespace gpuplan::hwdb::detail {
namespace {

// Returns the 1-based line of the first byte that is not valid UTF-8, or 0.
int first_invalid_utf8_line(std::string_view s) {
    int line = 1;
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c == '\n') {
            ++line;
        }
        int extra = 0;
        if (c < 0x80) {
            extra = 0;
        } else if ((c & 0xE0) == 0xC0 && c >= 0xC2) {
            extra = 1;
        } else if ((c & 0xF0) == 0xE0) {
            extra = 2;
        } else if ((c & 0xF8) == 0xF0 && c <= 0xF4) {
            extra = 3;
        } else {
            return line;
        }
        if (i + extra >= s.size() && extra > 0) {
            return line; // truncated multi-byte sequence at the end
        }
        for (int k = 1; k <= extra; ++k) {
            if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) {
                return line;
            }
        }
        i += 1 + extra;
    }
    return 0;
}

// Rejects anchors, aliases, several documents and deep nesting while yaml-cpp parses, before
// any node tree is built: an alias bomb never gets the chance to expand.
class GuardHandler : public YAML::EventHandler {
  public:
    explicit GuardHandler(const std::string& file) : file_(file) {}
    void OnDocumentStart(const YAML::Mark&) override {}
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
        check_anchor(mark, anchor);
    }
    void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
        throw ConfigError(file_, mark.line + 1, mark.column + 1, "",
                          "aliases ('*name') are not allowed; write the value out in full");
    }
    void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  const std::string&) override {
        check_anchor(mark, anchor);
    }
    void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                         YAML::EmitterStyle::value) override {
        enter(mark, anchor);
    }
    void OnSequenceEnd() override { --depth_; }
    void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                    YAML::EmitterStyle::value) override {
        enter(mark, anchor);
    }
    void OnMapEnd() override { --depth_; }

  private:
    void check_anchor(const YAML::Mark& mark, YAML::anchor_t anchor) const {
        if (anchor != YAML::NullAnchor) {
            throw ConfigError(file_, mark.line + 1, mark.column + 1, "",
                              "anchors ('&name') are not allowed; write the value out in full");
        }
    }
    void enter(const YAML::Mark& mark, YAML::anchor_t anchor) {
        check_anchor(mark, anchor);
        if (++depth_ > kMaxNesting) {
            throw ConfigError(file_, mark.line + 1, mark.column + 1, "",
                              "nesting deeper than " + std::to_string(kMaxNesting) +
                                  " levels; this is not a gpuplan file");
        }
    }
    const std::string& file_;
    int depth_ = 0;
};

// yaml-cpp keeps the last of duplicate keys silently; a typo'd copy must not win unnoticed.
void reject_duplicate_keys(const YAML::Node& node, const std::string& file, const std::string& path,
                           int depth) {
    if (depth > kMaxNesting) {
        return;
    }
    if (node.IsMap()) {
        // A hash set keeps the check linear: a mapping of 10^6 keys took minutes with a list.
        std::unordered_set<std::string> seen;
        seen.reserve(node.size());
        for (const auto& kv : node) {
            const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
            if (kv.first.IsScalar() && !seen.insert(key).second) {
                const auto mark = kv.first.Mark();
                throw ConfigError(file, mark.line + 1, mark.column + 1,
                                  path.empty() ? key : path + "." + key,
                                  "duplicate key; keep one of the two entries");
            }
            reject_duplicate_keys(kv.second, file, path.empty() ? key : path + "." + key,
                                  depth + 1);
        }
    } else if (node.IsSequence()) {
        int index = 0;
        for (const auto& item : node) {
            reject_duplicate_keys(item, file, path + "[" + std::to_string(index++) + "]",
                                  depth + 1);
        }
    }
}

std::string kind_of(const YAML::Node& n) {
    if (n.IsMap()) {
        return "a mapping";
    }
    if (n.IsSequence()) {
        return "a list";
    }
    if (n.IsNull()) {
        return "nothing";
    }
    return "'" + n.Scalar() + "'";
}

} // namespace

std::size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> prev(b.size() + 1);
    std::vector<std::size_t> cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) {
        prev[j] = j;
    }
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

std::optional<std::string> closest(const std::string& word,
                                   const std::vector<std::string>& candidates) {
    std::optional<std::string> best;
    std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
    for (const auto& c : candidates) {
        const std::size_t d = edit_distance(word, c);
        const bool contains =
            c.size() > 2 && word.size() > 2 &&
            (c.find(word) != std::string::npos || word.find(c) != std::string::npos);
        if (d < best_distance || (contains && !best)) {
            best = c;
            best_distance = std::min(d, best_distance);
        }
    }
    return best;
}

namespace {

// The checks every YAML text goes through before yaml-cpp builds a tree from it: size, UTF-8,
// tabs, one document, no anchors or aliases (an alias can make a tree that refers to itself),
// bounded nesting; then the tree, with duplicate keys refused. Positions are reported in `file`;
// a --set value is a one-line document named after its flag.
YAML::Node parse_checked(std::string_view text, const std::string& file) {
    if (text.size() > kMaxFileBytes) {
        throw ConfigError(file, 0, 0, "", "file is larger than 16 MiB; this is not a gpuplan file");
    }
    if (const int line = first_invalid_utf8_line(text)) {
        throw ConfigError(file, line, 1, "",
                          "bytes that are not valid UTF-8; save the file as UTF-8");
    }
    // YAML forbids tabs in indentation; yaml-cpp's own message for it is cryptic.
    int line = 1;
    bool at_line_start = true;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\n') {
            ++line;
            at_line_start = true;
        } else if (at_line_start && c == '\t') {
            throw ConfigError(file, line, 1, "", "tab in indentation; indent with spaces");
        } else if (c != ' ') {
            at_line_start = false;
        }
    }
    try {
        {
            std::istringstream stream{std::string(text)};
            YAML::Parser parser(stream);
            GuardHandler guard(file);
            if (parser.HandleNextDocument(guard) && parser.HandleNextDocument(guard)) {
                throw ConfigError(file, 0, 0, "", "more than one YAML document ('---'); keep one");
            }
        }
        YAML::Node root = YAML::Load(std::string(text));
        if (root.IsDefined() && !root.IsNull()) {
            reject_duplicate_keys(root, file, "", 0);
        }
        return root;
    } catch (const YAML::Exception& e) {
        throw ConfigError(file, e.mark.line + 1, e.mark.column + 1, "", "invalid YAML: " + e.msg);
    }
}

} // namespace

YAML::Node parse_strict(std::string_view text, const std::string& file) {
    YAML::Node root = parse_checked(text, file);
    if (!root.IsDefined() || root.IsNull()) {
        throw ConfigError(file, 1, 1, "", "file is empty; it must start with 'schema: 1'");
    }
    if (!root.IsMap()) {
        fail(root, file, "", "expected a mapping of keys at the top level, found " + kind_of(root));
    }
    return root;
}

YAML::Node parse_strict_value(std::string_view text, const std::string& origin) {
    try {
        return parse_checked(text, origin);
    } catch (const ConfigError& e) {
        // One line on the command line: the flag names the place, a line number would not help.
        std::string prefix = origin;
        if (e.line() > 0) {
            prefix += ":" + std::to_string(e.line()) + ":" + std::to_string(e.column());
        }
        prefix += ": " + (e.key_path().empty() ? std::string() : e.key_path() + ": ");
        const std::string what = e.what();
        throw ConfigError(origin, 0, 0, e.key_path(),
                          what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what);
    }
}

void fail(const YAML::Node& node, const std::string& file, const std::string& path,
          const std::string& message) {
    // A value from the command line (a --set override or a flag that becomes one) has no place
    // in the file: name the flag instead of a line and column of the file.
    if (node.Tag().rfind(kCommandLineTag, 0) == 0) {
        throw ConfigError(node.Tag().substr(kCommandLineTag.size()), 0, 0, path, message);
    }
    const auto mark = node.Mark();
    const bool known = mark.line >= 0 && !node.IsNull();
    throw ConfigError(file, known ? mark.line + 1 : 0, known ? mark.column + 1 : 0, path, message);
}

MapReader::MapReader(const YAML::Node& node, std::string file, std::string path)
    : node_(node), file_(std::move(file)), path_(std::move(path)) {
    if (!node_.IsMap()) {
        fail(node_, file_, path_, "expected a mapping of keys, found " + kind_of(node_));
    }
}

std::string MapReader::path_of(const std::string& key) const {
    return path_.empty() ? key : path_ + "." + key;
}

bool MapReader::has(const std::string& key) const {
    return node_[key].IsDefined() && !node_[key].IsNull();
}

YAML::Node MapReader::get(const std::string& key, bool required) {
    if (std::find(asked_.begin(), asked_.end(), key) == asked_.end()) {
        asked_.push_back(key);
    }
    YAML::Node n = node_[key];
    if (required && (!n.IsDefined() || n.IsNull())) {
        fail_here("missing required key '" + key + "'");
    }
    return n;
}

void MapReader::fail_at(const std::string& key, const std::string& message) const {
    const YAML::Node n = node_[key];
    if (n.IsDefined() && !n.IsNull()) {
        fail(n, file_, path_of(key), message);
    }
    fail(node_, file_, path_of(key), message);
}

void MapReader::fail_here(const std::string& message) const {
    fail(node_, file_, path_, message);
}

std::string MapReader::scalar(const std::string& key, const YAML::Node& n) const {
    if (!n.IsScalar()) {
        fail(n, file_, path_of(key), "expected a single value, found " + kind_of(n));
    }
    return n.Scalar();
}

std::string MapReader::string(const std::string& key) {
    std::string s = scalar(key, get(key, true));
    if (s.empty()) {
        fail_at(key, "must not be empty");
    }
    return s;
}

std::optional<std::string> MapReader::opt_string(const std::string& key) {
    const YAML::Node n = get(key, false);
    if (!n.IsDefined() || n.IsNull()) {
        return std::nullopt;
    }
    return scalar(key, n);
}

std::string MapReader::string_or(const std::string& key, std::string fallback) {
    auto s = opt_string(key);
    return s ? *s : std::move(fallback);
}

std::optional<int> MapReader::opt_integer(const std::string& key, long long min, long long max) {
    const YAML::Node n = get(key, false);
    if (!n.IsDefined() || n.IsNull()) {
        return std::nullopt;
    }
    const std::string s = scalar(key, n);
    long long v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc::result_out_of_range) {
        fail(n, file_, path_of(key),
             "'" + s + "' is out of range; expected a whole number from " + std::to_string(min) +
                 " to " + std::to_string(max));
    }
    if (ec != std::errc() || ptr != s.data() + s.size()) {
        fail(n, file_, path_of(key), "expected a whole number, found '" + s + "'");
    }
    if (v < min || v > max) {
        fail(n, file_, path_of(key),
             "'" + s + "' is out of range; expected a whole number from " + std::to_string(min) +
                 " to " + std::to_string(max));
    }
    return static_cast<int>(v);
}

int MapReader::integer(const std::string& key, long long min, long long max) {
    (void)get(key, true);
    return *opt_integer(key, min, max);
}

std::optional<double> MapReader::opt_number(const std::string& key, double min, double max) {
    const YAML::Node n = get(key, false);
    if (!n.IsDefined() || n.IsNull()) {
        return std::nullopt;
    }
    const std::string s = scalar(key, n);
    double v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v)) {
        fail(n, file_, path_of(key), "expected a number, found '" + s + "'");
    }
    if (v < min || v > max) {
        std::ostringstream range;
        range << "'" << s << "' is out of range; expected a number from " << min << " to " << max;
        fail(n, file_, path_of(key), range.str());
    }
    return v;
}

double MapReader::number(const std::string& key, double min, double max) {
    (void)get(key, true);
    return *opt_number(key, min, max);
}

bool MapReader::boolean_or(const std::string& key, bool fallback) {
    const YAML::Node n = get(key, false);
    if (!n.IsDefined() || n.IsNull()) {
        return fallback;
    }
    const std::string s = scalar(key, n);
    if (s == "true") {
        return true;
    }
    if (s == "false") {
        return false;
    }
    fail(n, file_, path_of(key), "expected true or false, found '" + s + "'");
}

std::optional<double> MapReader::opt_quantity(const std::string& key, model::Dimension dim,
                                              bool positive) {
    const YAML::Node n = get(key, false);
    if (!n.IsDefined() || n.IsNull()) {
        return std::nullopt;
    }
    const std::string s = scalar(key, n);
    const model::ParsedQuantity q = model::parse_quantity(s, dim);
    if (!q.si) {
        fail(n, file_, path_of(key), q.error);
    }
    if (positive ? *q.si <= 0 : *q.si < 0) {
        fail(n, file_, path_of(key),
             "'" + s + "' must be " + (positive ? "greater than zero" : "zero or more"));
    }
    return q.si;
}

double MapReader::quantity(const std::string& key, model::Dimension dim, bool positive) {
    (void)get(key, true);
    return *opt_quantity(key, dim, positive);
}

model::Price MapReader::price(const std::string& key) {
    const YAML::Node n = get(key, true);
    const std::string s = scalar(key, n);
    const model::ParsedPrice p = model::parse_price(s);
    if (!p.price) {
        fail(n, file_, path_of(key), p.error);
    }
    return *p.price;
}

std::vector<std::string> MapReader::string_list(const std::string& key) {
    const YAML::Node n = get(key, false);
    std::vector<std::string> out;
    if (!n.IsDefined() || n.IsNull()) {
        return out;
    }
    if (!n.IsSequence()) {
        fail(n, file_, path_of(key), "expected a list of strings, found " + kind_of(n));
    }
    for (const auto& item : n) {
        if (!item.IsScalar()) {
            fail(item, file_, path_of(key), "expected a string, found " + kind_of(item));
        }
        out.push_back(item.Scalar());
    }
    return out;
}

MapReader MapReader::map(const std::string& key) {
    return MapReader(get(key, true), file_, path_of(key));
}

std::optional<MapReader> MapReader::opt_map(const std::string& key) {
    const YAML::Node n = get(key, false);
    if (!n.IsDefined() || n.IsNull()) {
        return std::nullopt;
    }
    return MapReader(n, file_, path_of(key));
}

std::vector<MapReader> MapReader::map_list(const std::string& key) {
    const YAML::Node n = get(key, false);
    std::vector<MapReader> out;
    if (!n.IsDefined() || n.IsNull()) {
        return out;
    }
    if (!n.IsSequence()) {
        fail(n, file_, path_of(key),
             "expected a list of entries ('- name: ...'), found " + kind_of(n));
    }
    int index = 0;
    for (const auto& item : n) {
        out.emplace_back(item, file_, path_of(key) + "[" + std::to_string(index++) + "]");
    }
    return out;
}

void MapReader::finish() const {
    for (const auto& kv : node_) {
        const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string("?");
        if (std::find(asked_.begin(), asked_.end(), key) != asked_.end()) {
            continue;
        }
        std::string message = "unknown key";
        if (auto hint = closest(key, asked_)) {
            message += "; did you mean '" + *hint + "'?";
        } else {
            std::string list;
            for (const auto& k : asked_) {
                list += (list.empty() ? "" : ", ") + k;
            }
            message += "; valid keys here: " + list;
        }
        if (kv.second.Tag().rfind(kCommandLineTag, 0) == 0) {
            fail(kv.second, file_, path_of(key), message); // a --set key: name the flag, not a line
        }
        const auto mark = kv.first.Mark();
        throw ConfigError(file_, mark.line + 1, mark.column + 1, path_of(key), message);
    }
}

} // namespace gpuplan::hwdb::detail
