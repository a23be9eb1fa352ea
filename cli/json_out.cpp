#include "cli/json_out.hpp"

#include "hwdb/database.hpp"
#include "model/error.hpp"
#include "model/money.hpp"
#include "model/unit_parser.hpp"

#include <cmath>
#include <optional>
#include <ostream>
#include <sstream>
#include <string_view>
#include <utility>

namespace gpuplan::cli {
namespace {

template <class Q> nlohmann::json opt_si(const std::optional<Q>& q) {
    return q ? nlohmann::json(q->si()) : nlohmann::json(nullptr);
}

nlohmann::json prices_json(const std::vector<model::PriceEstimate>& prices) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& p : prices) {
        out.push_back(to_json(p));
    }
    return out;
}

} // namespace

nlohmann::json to_json(const model::PriceEstimate& p) {
    return {{"price", model::to_string(p.price)},
            {"amount", p.price.money.amount},
            {"currency", p.price.money.currency},
            {"per", std::string(model::to_string(p.price.per)).empty()
                        ? "once"
                        : std::string(model::to_string(p.price.per)).substr(1)},
            {"date", p.date},
            {"source", p.source},
            {"note", p.note}};
}

nlohmann::json to_json(const model::AcceleratorSpec& a) {
    const auto& d = a.dense;
    nlohmann::json dense = {{"fp64", opt_si(d.fp64)}, {"fp32", opt_si(d.fp32)},
                            {"tf32", opt_si(d.tf32)}, {"bf16", opt_si(d.bf16)},
                            {"fp16", opt_si(d.fp16)}, {"fp8", opt_si(d.fp8)},
                            {"int8", opt_si(d.int8)}, {"fp4", opt_si(d.fp4)}};
    return {{"name", a.name},
            {"aliases", a.aliases},
            {"vendor", a.vendor},
            {"architecture", a.architecture},
            {"form_factor", a.form_factor},
            {"launch_year", a.launch_year},
            {"preliminary", hwdb::is_preliminary(a)},
            {"memory_bytes", a.memory.si()},
            {"memory_type", a.memory_type},
            {"memory_bandwidth_bytes_per_s", a.memory_bandwidth.si()},
            {"dense_flops_per_s", dense},
            {"l2_cache_bytes", opt_si(a.l2_cache)},
            {"compute_units", a.compute_units},
            {"boost_clock_hz", opt_si(a.boost_clock)},
            {"board_power_w", opt_si(a.board_power)},
            {"idle_power_w", opt_si(a.idle_power)},
            {"scale_up_link", a.scale_up_link},
            {"scale_up_bandwidth_bytes_per_s", opt_si(a.scale_up_bandwidth)},
            {"host_link", a.host_link},
            {"prices", prices_json(a.prices)},
            {"sources", a.sources},
            {"notes", a.notes}};
}

nlohmann::json to_json(const model::InterconnectSpec& l) {
    return {{"name", l.name},
            {"aliases", l.aliases},
            {"kind", model::to_string(l.kind)},
            {"bandwidth_per_direction_bytes_per_s", l.bandwidth_per_direction.si()},
            {"latency_s", l.latency.si()},
            {"sources", l.sources},
            {"notes", l.notes}};
}

nlohmann::json to_json(const model::ServerSpec& s) {
    return {{"name", s.name},
            {"aliases", s.aliases},
            {"accelerator", s.accelerator},
            {"accelerators", s.accelerators},
            {"intra_node_link", s.intra_node_link},
            {"inter_node_link", s.inter_node_link},
            {"network_ports", s.network_ports},
            {"max_power_w", s.max_power.si()},
            {"idle_power_w", opt_si(s.idle_power)},
            {"host_power_w", s.host_power.si()},
            {"host_memory_bytes", s.host_memory.si()},
            {"rack_units", s.rack_units},
            {"prices", prices_json(s.prices)},
            {"sources", s.sources},
            {"notes", s.notes}};
}

nlohmann::json to_json(const model::RackSpec& r) {
    return {{"name", r.name},
            {"aliases", r.aliases},
            {"server", r.server},
            {"servers", r.servers},
            {"power_w", r.power.si()},
            {"cooling", r.cooling},
            {"prices", prices_json(r.prices)},
            {"sources", r.sources},
            {"notes", r.notes}};
}

namespace {

void require_finite(const nlohmann::json& j, const std::string& where) {
    if (j.is_number_float()) {
        if (!std::isfinite(j.get<double>())) {
            throw InternalError("result '" + (where.empty() ? std::string("/") : where) +
                                "' is not a finite number; please report this with the input");
        }
    } else if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it) {
            require_finite(it.value(), where + "/" + it.key());
        }
    } else if (j.is_array()) {
        for (std::size_t i = 0; i < j.size(); ++i) {
            require_finite(j[i], where + "/" + std::to_string(i));
        }
    }
}

} // namespace

std::string json_text(const nlohmann::json& j) {
    require_finite(j, "");
    return j.dump(2);
}

std::string json_line(const nlohmann::json& j) {
    require_finite(j, "");
    return j.dump();
}

namespace {

// A JSON number whose key ends in a unit suffix, in the unit a reader expects ("2 TiB" for
// host_memory_bytes, "5.00 us" for latency_s, "10.2 kW" for max_power_w); nullopt for other keys.
std::optional<std::pair<std::string, std::string>> with_unit(const std::string& key, double v) {
    const auto strip = [&](std::string_view suffix) {
        return key.substr(0, key.size() - suffix.size());
    };
    if (key.ends_with("_bytes_per_s")) {
        return std::pair{strip("_bytes_per_s"), model::format_rate(BytesPerSecond(v))};
    }
    if (key.ends_with("_bytes")) {
        const double tib = v / std::ldexp(1.0, 40);
        const std::string text = tib >= 1.0 ? model::format_fixed(tib, tib < 10 ? 2 : 1) + " TiB"
                                            : model::format_gib(Bytes(v), 1);
        return std::pair{strip("_bytes"), text};
    }
    if (key.ends_with("_s")) {
        return std::pair{strip("_s"), model::format_seconds(Seconds(v))};
    }
    if (key.ends_with("_w")) {
        return std::pair{strip("_w"), v >= 1000 ? model::format_fixed(v / 1000, 1) + " kW"
                                                : model::format_fixed(v, 0) + " W"};
    }
    return std::nullopt;
}

} // namespace

void print_key_values(std::ostream& out, const nlohmann::json& j, const std::string& indent) {
    for (auto it = j.begin(); it != j.end(); ++it) {
        const auto& v = it.value();
        if (v.is_null() || (v.is_string() && v.get<std::string>().empty()) ||
            (v.is_array() && v.empty())) {
            continue;
        }
        if (v.is_object()) {
            out << indent << it.key() << ":\n";
            print_key_values(out, v, indent + "  ");
        } else if (v.is_array() && !v.empty() && v.front().is_object()) {
            out << indent << it.key() << ":\n";
            for (const auto& item : v) {
                out << indent << "  -\n";
                print_key_values(out, item, indent + "    ");
            }
        } else if (v.is_string()) {
            out << indent << it.key() << ": " << v.get<std::string>() << '\n';
        } else if (const auto shown =
                       v.is_number() ? with_unit(it.key(), v.get<double>()) : std::nullopt) {
            out << indent << shown->first << ": " << shown->second << '\n';
        } else if (v.is_number_float()) {
            std::ostringstream
                six; // 6 significant digits, not 17 (0.1 is not 0.1000000000000000055)
            six << v.get<double>();
            out << indent << it.key() << ": " << six.str() << '\n';
        } else {
            out << indent << it.key() << ": " << v.dump() << '\n';
        }
    }
}

} // namespace gpuplan::cli
