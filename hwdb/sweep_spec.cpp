#include "hwdb/sweep_spec.hpp"

#include "hwdb/detail/yaml_reader.hpp"
#include "hwdb/file_io.hpp"
#include "model/error.hpp"

#include <cmath>
#include <cstdio>
#include <set>

namespace gpuplan::hwdb {
namespace {

using detail::MapReader;

std::string where(const YAML::Node& n, const std::string& file) {
    const auto mark = n.Mark();
    return file + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

void check_key(MapReader& a, const std::string& key) {
    if (key.empty() || key.front() == '.' || key.back() == '.' ||
        key.find("..") != std::string::npos || key.find_first_of(" =,") != std::string::npos) {
        a.fail_at("key",
                  "'" + key + "' is not a scenario key path; write e.g. workload.requests_per_s");
    }
}

// A range's value as text: whole numbers without a decimal point, others with 12 digits.
std::string range_value(double v, bool whole) {
    char buf[40];
    if (whole) {
        std::snprintf(buf, sizeof buf, "%.0f", v);
    } else {
        std::snprintf(buf, sizeof buf, "%.12g", v);
    }
    return buf;
}

SweepAxis read_axis(MapReader& a, const std::string& file) {
    SweepAxis axis;
    axis.key = a.string("key");
    check_key(a, axis.key);
    const std::string label =
        " (" + a.path_of("key").substr(0, a.path_of("key").size() - 4) + " " + axis.key + ")";
    const bool has_values = a.has("values");
    const bool has_range = a.has("range");
    if (has_values == has_range) {
        a.fail_here(
            "an axis needs exactly one of 'values' (a list) or 'range' (start, stop, step) for '" +
            axis.key + "'");
    }
    if (has_values) {
        const auto list = a.string_list("values");
        if (list.empty()) {
            a.fail_at("values", "the axis '" + axis.key + "' has no values; give at least one");
        }
        const YAML::Node n = a.node()["values"];
        for (std::size_t i = 0; i < list.size(); ++i) {
            if (list[i].find('\n') != std::string::npos) {
                a.fail_at("values",
                          "a value of '" + axis.key + "' spans lines; write it on one line");
            }
            axis.values.push_back({axis.key, list[i], where(n[i], file) + label});
        }
    } else {
        MapReader r = a.map("range");
        const double start = r.number("start", -1e15, 1e15);
        const double stop = r.number("stop", -1e15, 1e15);
        const double step = r.number("step", -1e15, 1e15);
        r.finish();
        if (!(step > 0)) {
            r.fail_at("step", "the range of '" + axis.key + "' needs a step above 0");
        }
        if (stop < start) {
            r.fail_at("stop",
                      "the range of '" + axis.key + "' stops before it starts; give stop >= start");
        }
        const double n = std::floor((stop - start) / step + 1e-9) + 1;
        if (n > static_cast<double>(kMaxSweepPoints)) {
            r.fail_at("step", "the range of '" + axis.key + "' has more than " +
                                  std::to_string(kMaxSweepPoints) + " values; use a larger step");
        }
        const auto whole = [](double v) { return std::nearbyint(v) == v; };
        axis.whole = whole(start) && whole(step);
        axis.origin = where(a.node()["range"], file) + label;
        axis.start = start;
        axis.step = step;
        axis.count = static_cast<std::size_t>(n);
    }
    a.finish();
    return axis;
}

// The inline base: the spec's lines of the `base:` block, every other line blank, so line and
// column numbers in scenario errors are the spec's own.
std::string inline_base_text(std::string_view text, const YAML::Node& base, MapReader& m) {
    const int first = base.Mark().line; // 0-based line of the mapping's first key
    if (first < 0 || base.Style() == YAML::EmitterStyle::Flow) {
        m.fail_at("base", "write an inline base as an indented block under 'base:', not in braces");
    }
    std::vector<std::string_view> lines;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= text.size(); ++i) {
        if (i == text.size() || text[i] == '\n') {
            lines.push_back(text.substr(start, i - start));
            start = i + 1;
        }
    }
    const auto indent = [](std::string_view l) { return l.find_first_not_of(' '); };
    const std::size_t block = static_cast<std::size_t>(base.Mark().column);
    std::string out;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const auto l = lines[i];
        const auto ind = indent(l);
        const bool blank = ind == std::string_view::npos || l[ind] == '#';
        if (i >= static_cast<std::size_t>(first) && (blank || ind >= block)) {
            out.append(l);
        } else if (i >= static_cast<std::size_t>(first)) {
            break;
        }
        out.push_back('\n');
    }
    return out;
}

} // namespace

SweepSpec parse_sweep_spec(std::string_view text, const std::string& file) {
    const YAML::Node root_node = detail::parse_strict(text, file);
    MapReader m(root_node, file, "");
    SweepSpec spec;
    spec.file = file;
    spec.id = m.string("id");
    spec.command = m.string("command");
    if (spec.command != "estimate" && spec.command != "simulate" && spec.command != "cost" &&
        spec.command != "train" && spec.command != "plan") {
        m.fail_at("command", "unknown command '" + spec.command +
                                 "'; use estimate, simulate, cost, train or plan");
    }
    // Found by fuzzing: a key yaml-cpp cannot look up (a malformed mapping) gives an invalid
    // node, whose IsMap() throws; it is read as "not a map" and MapReader names the problem.
    YAML::Node base;
    try {
        base = root_node["base"];
        (void)base.IsMap();
    } catch (const YAML::Exception&) {
        base = YAML::Node();
    }
    if (base.IsDefined() && base.IsMap()) {
        (void)m.map("base"); // read as a scenario below
        spec.base_text = inline_base_text(text, base, m);
    } else {
        const std::string b = m.string("base");
        const std::filesystem::path p(b);
        spec.base_file = p.is_absolute()
                             ? p
                             : (std::filesystem::path(file).parent_path() / p).lexically_normal();
    }
    if (auto s = m.opt_map("set")) {
        for (auto it = s->node().begin(); it != s->node().end(); ++it) {
            const std::string key = it->first.as<std::string>();
            if (!it->second.IsScalar() && !it->second.IsNull()) {
                s->fail_at(key, "expected one value for '" + key + "', found a list or mapping");
            }
            const std::string value = it->second.IsNull() ? "null" : it->second.Scalar();
            spec.sets.push_back({key, value, where(it->first, file) + " (set " + key + ")"});
        }
    }
    auto& groups = spec.groups; // each group: one axis, or zipped axes of equal length
    auto axes = m.map_list("axes");
    if (axes.empty()) {
        m.fail_at("axes", "a sweep needs at least one axis ('axes: [{key: ..., values: [...]}]')");
    }
    std::set<std::string> seen;
    for (auto& a : axes) {
        std::vector<SweepAxis> group;
        if (a.has("zip")) {
            auto zipped = a.map_list("zip");
            a.finish();
            if (zipped.empty()) {
                a.fail_at("zip", "a zip needs at least one axis");
            }
            for (auto& z : zipped) {
                group.push_back(read_axis(z, file));
                if (group.back().size() != group.front().size()) {
                    z.fail_at("key", "zipped axis '" + group.back().key + "' has " +
                                         std::to_string(group.back().size()) + " values but '" +
                                         group.front().key + "' has " +
                                         std::to_string(group.front().size()) +
                                         "; zipped axes go in step, give them equal lengths");
                }
            }
        } else {
            group.push_back(read_axis(a, file));
        }
        for (const auto& ax : group) {
            if (!seen.insert(ax.key).second) {
                a.fail_here("the key '" + ax.key + "' is swept twice; keep one axis per key");
            }
            spec.keys.push_back(ax.key);
        }
        groups.push_back(std::move(group));
    }
    m.finish();
    std::size_t total = 1;
    for (std::size_t g = 0; g < groups.size(); ++g) {
        total *= groups[g].front().size();
        if (total > kMaxSweepPoints) {
            axes[g].fail_here("the axes give more than " + std::to_string(kMaxSweepPoints) +
                              " points; split the sweep or use fewer values");
        }
    }
    return spec;
}

SweepSetting SweepAxis::value(std::size_t i) const {
    if (!values.empty()) {
        return values[i];
    }
    return {key, range_value(start + static_cast<double>(i) * step, whole), origin};
}

std::size_t SweepSpec::point_count() const {
    std::size_t total = groups.empty() ? 0 : 1;
    for (const auto& g : groups) {
        total *= g.front().size();
    }
    return total;
}

std::vector<SweepSetting> SweepSpec::point(std::size_t i) const {
    // Row-major: the first axis outermost, the last one fastest.
    std::vector<std::size_t> at(groups.size());
    for (std::size_t g = groups.size(); g-- > 0;) {
        const std::size_t n = groups[g].front().size();
        at[g] = i % n;
        i /= n;
    }
    std::vector<SweepSetting> p;
    for (std::size_t g = 0; g < groups.size(); ++g) {
        for (const auto& ax : groups[g]) {
            p.push_back(ax.value(at[g]));
        }
    }
    return p;
}

SweepSpec load_sweep_spec(const std::filesystem::path& path) {
    return parse_sweep_spec(read_text_file(path, "sweep spec"), path.string());
}

} // namespace gpuplan::hwdb
