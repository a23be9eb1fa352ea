#include "model/rack.hpp"
#include "model/checked_format.hpp"

#include "model/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gpuplan::model {

namespace {

// Air 20 kW and liquid 130 kW per rack: the top of docs/domain.md §6's ranges (air ≈ 10-20 kW,
// liquid 40-130 kW), consistent with Uptime's surveys (most sites have no rack above 20 kW)
// and GB200 NVL72's ~120-132 kW liquid-cooled rack ([S65][S34]).
constexpr double kAirLimitW = 20e3;
constexpr double kLiquidLimitW = 130e3;

std::string kw(double w) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f kW", w / 1e3);
    return mark_non_finite(w, buf);
}

int fit(double capacity, double each) {
    if (each <= 0) {
        return 0;
    }
    // The epsilon keeps an exact fit (2 × 10.2 kW in 20.4 kW) from flooring to one less.
    return static_cast<int>(std::floor(capacity / each + 1e-9));
}

std::string pdu_text(const PduSpec& p) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.0f V %.0f A %s", p.voltage_v, p.current_a,
                  p.phases == 3 ? "three-phase" : "single-phase");
    return buf;
}

} // namespace

Watts pdu_nameplate(const PduSpec& p) noexcept {
    // Three-phase power with line-to-line volts is √3 × V × I (HP's branch-circuit tables:
    // 208 V 3-ph 30 A = 10.8 kVA [S63]); kVA is taken as kW (server PSUs correct the power factor
    // to ~1).
    const double phase = p.phases == 3 ? std::sqrt(3.0) : 1.0;
    return Watts(phase * p.voltage_v * p.current_a);
}

Watts pdu_usable(const PduSpec& p) noexcept {
    return pdu_nameplate(p) * p.derating;
}

Watts rack_pdu_capacity(const PduSpec& p) noexcept {
    const int counted = p.redundant ? p.count / 2 : p.count;
    return pdu_usable(p) * static_cast<double>(std::max(0, counted));
}

const char* to_string(CoolingKind k) {
    return name_of(k);
}

Watts cooling_limit(const CoolingSpec& c) noexcept {
    if (c.limit) {
        return *c.limit;
    }
    return Watts(c.kind == CoolingKind::Liquid ? kLiquidLimitW : kAirLimitW);
}

const char* to_string(RackLimit l) {
    switch (l) {
    case RackLimit::Budget: return "budget";
    case RackLimit::Pdu: return "pdu";
    case RackLimit::Cooling: return "cooling";
    case RackLimit::RackUnits: return "rack_units";
    }
    return "budget";
}

RackPlan plan_racks(Watts node_power, int node_units, int nodes, const RackConfig& c,
                    std::optional<Watts> rack_budget) {
    const PduSpec& p = c.pdu;
    if (node_power.si() <= 0) {
        throw InvalidArgument("rack plan: the node power is " + kw(node_power.si()) +
                              "; it must be positive (check the node's power figures)");
    }
    if (nodes < 1) {
        throw InvalidArgument("rack plan: " + std::to_string(nodes) +
                              " nodes to place; give at least 1");
    }
    if (p.current_a <= 0 || p.voltage_v <= 0 || (p.phases != 1 && p.phases != 3) ||
        p.derating <= 0 || p.derating > 1 || p.count < 1) {
        throw InvalidArgument("rack.pdu: amps and volts must be positive, phases 1 or 3, "
                              "derating in (0, 1] and count at least 1");
    }
    if (p.redundant && (p.count < 2 || p.count % 2 != 0)) {
        throw InvalidArgument("rack.pdu: redundant (A+B) feeds need an even count of at least 2, "
                              "got " +
                              std::to_string(p.count));
    }
    if (c.rack_units < 1) {
        throw InvalidArgument("rack.rack_units must be at least 1, got " +
                              std::to_string(c.rack_units));
    }
    RackPlan r;
    r.node_power = node_power;
    r.node_units = std::max(0, node_units);
    r.nodes = nodes;
    r.pdu_nameplate = pdu_nameplate(p);
    r.pdu_usable = pdu_usable(p);
    r.pdu_capacity = rack_pdu_capacity(p);
    const double w = node_power.si();

    if (rack_budget) {
        r.limits.push_back({RackLimit::Budget, rack_budget->si(), fit(rack_budget->si(), w)});
    }
    r.limits.push_back({RackLimit::Pdu, r.pdu_capacity.si(), fit(r.pdu_capacity.si(), w)});
    const double cool = cooling_limit(c.cooling).si();
    r.limits.push_back({RackLimit::Cooling, cool, fit(cool, w)});
    if (r.node_units > 0) {
        r.limits.push_back(
            {RackLimit::RackUnits, static_cast<double>(c.rack_units), c.rack_units / r.node_units});
    }
    const auto tightest = std::min_element(r.limits.begin(), r.limits.end(),
                                           [](const RackLimitFigure& a, const RackLimitFigure& b) {
                                               return a.nodes_fit < b.nodes_fit;
                                           });
    r.nodes_per_rack = tightest->nodes_fit;
    r.binding = tightest->which;
    for (RackLimitFigure& l : r.limits) {
        l.used = l.which == RackLimit::RackUnits
                     ? static_cast<double>(r.nodes_per_rack) * r.node_units
                     : r.nodes_per_rack * w;
        l.headroom = l.capacity - l.used;
    }
    r.rack_power = node_power * static_cast<double>(r.nodes_per_rack);
    r.feasible = r.nodes_per_rack >= 1;
    r.racks = r.feasible ? (nodes + r.nodes_per_rack - 1) / r.nodes_per_rack : 0;

    if (w > r.pdu_usable.si()) {
        // docs/domain.md §2: 16 A × 230 V single phase = 3.68 kW, ~2.9 kW continuous: an 8-GPU
        // server trips it.
        r.node_exceeds_one_pdu = true;
        const int feeds = static_cast<int>(std::ceil(w / r.pdu_usable.si()));
        r.warnings.push_back(
            "one node draws " + kw(w) + " but one PDU (" + pdu_text(p) + ", " +
            std::to_string(static_cast<int>(std::lround(p.derating * 100))) +
            " % derated) carries " + kw(r.pdu_usable.si()) + " continuously (" +
            kw(r.pdu_nameplate.si()) + " nameplate): on a single feed the node " +
            (w > r.pdu_nameplate.si() ? "trips the breaker" : "overloads it for continuous use") +
            "; spread its PSUs over at least " + std::to_string(feeds) +
            " such feeds or use a larger one (e.g. 400 V 32 A three-phase, 17.7 kW derated)");
    }
    if (!r.feasible) {
        r.warnings.push_back(
            std::string("not even one node fits in a rack: the ") + to_string(r.binding) +
            " limit (" +
            (r.binding == RackLimit::RackUnits ? std::to_string(c.rack_units) + " U"
                                               : kw(tightest->capacity)) +
            ") is below one node (" +
            (r.binding == RackLimit::RackUnits ? std::to_string(r.node_units) + " U" : kw(w)) +
            ")");
    }
    return r;
}

} // namespace gpuplan::model
