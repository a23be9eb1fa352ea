#pragma once
/// Racks: how many nodes of a given power fit in one rack, bound by the rack's power budget,
/// its PDU feeds (amps × volts × phases, derated for continuous load), its cooling and its
/// rack units; how many racks a node count needs and which limit binds. The figures and their
/// sources are in docs/domain.md §2 and §6 and docs/power.md, "Racks".

#include "model/enum_names.hpp"
#include "model/units.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gpuplan::model {

/// One power distribution unit (or branch circuit) feeding a rack.
struct PduSpec {
    double current_a = 32.0;  ///< breaker rating, amps
    double voltage_v = 400.0; ///< line-to-line for three phases, line-to-neutral for one
    int phases = 3;           ///< 1 or 3
    /// Continuous loads may use this fraction of the rating: NEC's 80 % rule (NFPA 70 §210.20,
    /// [S64]); IEC tables give no derating but operators usually plan at 80 % too.
    double derating = 0.8;
    int count = 1; ///< PDUs (feeds) per rack
    /// A+B feeds (2N): each side must carry the whole load, so only half the PDUs count
    /// (2N redundancy: either side alone keeps the node up; DGX power supplies are 4+2 or 5+1,
    /// [S30][S56]).
    bool redundant = false;
    friend bool operator==(const PduSpec&, const PduSpec&) = default;
};

/// Nameplate power of one PDU: volts × amps, × √3 for three phases (line-to-line volts).
/// 230 V × 16 A single phase = 3.68 kW; 400 V × 32 A three phase = 22.2 kW.
[[nodiscard]] Watts pdu_nameplate(const PduSpec& p) noexcept;

/// Continuous power one PDU may carry: nameplate × derating.
[[nodiscard]] Watts pdu_usable(const PduSpec& p) noexcept;

/// Continuous power the rack's PDUs may carry together: usable × count (÷ 2 when redundant).
[[nodiscard]] Watts rack_pdu_capacity(const PduSpec& p) noexcept;

enum class CoolingKind { Air, Liquid };

/// The scenario spelling of each value (model/enum_names.hpp).
[[nodiscard]] constexpr std::array<EnumName<CoolingKind>, 2> enum_names(CoolingKind) noexcept {
    return {
        EnumName<CoolingKind>{"air", CoolingKind::Air},
        EnumName<CoolingKind>{"liquid", CoolingKind::Liquid},
    };
}

/// "air", "liquid".
[[nodiscard]] const char* to_string(CoolingKind k);

/// Heat a rack's cooling removes. Without a limit: 20 kW for air, 130 kW for liquid, the top of
/// the rules of thumb in docs/domain.md §6 (air ≈ 10-20 kW, liquid 40-130 kW per rack: rules of
/// thumb consistent with Uptime Institute's surveys [S65], not published figures).
struct CoolingSpec {
    CoolingKind kind = CoolingKind::Air;
    std::optional<Watts> limit;
    friend bool operator==(const CoolingSpec&, const CoolingSpec&) = default;
};

/// The cooling limit (the given one, else the kind's default).
[[nodiscard]] Watts cooling_limit(const CoolingSpec& c) noexcept;

/// The rack a deployment goes into (scenario `rack:` block).
struct RackConfig {
    PduSpec pdu;
    CoolingSpec cooling;
    int rack_units = 42;      ///< usable U per rack (a common full-height rack)
    std::optional<int> nodes; ///< nodes to place (default: the deployment's)
    /// Nodes you intend to put under one rack budget: turns power.rack_budget into a per-GPU
    /// cap (model/power.hpp). Without it the budget only sizes racks.
    std::optional<int> nodes_per_rack;
    friend bool operator==(const RackConfig&, const RackConfig&) = default;
};

/// What bounds the nodes in one rack.
enum class RackLimit { Budget, Pdu, Cooling, RackUnits };

/// "budget", "pdu", "cooling", "rack_units".
[[nodiscard]] const char* to_string(RackLimit l);

/// One limit's capacity and the nodes it allows.
struct RackLimitFigure {
    RackLimit which = RackLimit::Budget;
    double capacity = 0.0; ///< watts (budget, pdu, cooling) or rack units
    int nodes_fit = 0;     ///< nodes this limit allows alone
    double used = 0.0;     ///< at the planned nodes per rack: watts or units
    double headroom = 0.0; ///< capacity − used
    friend bool operator==(const RackLimitFigure&, const RackLimitFigure&) = default;
};

/// The rack plan.
struct RackPlan {
    Watts node_power;   ///< per node, at the wall, on the chosen basis
    int node_units = 0; ///< rack units per node (0: unknown, units do not bind)
    int nodes = 0;      ///< nodes to place
    int nodes_per_rack = 0;
    int racks = 0; ///< 0 when not even one node fits
    RackLimit binding = RackLimit::Budget;
    std::vector<RackLimitFigure> limits; ///< every limit that applies
    Watts rack_power;                    ///< nodes_per_rack × node_power
    Watts pdu_nameplate;                 ///< one PDU
    Watts pdu_usable;                    ///< one PDU, derated
    Watts pdu_capacity; ///< the rack's PDUs together, derated (and halved when redundant)
    bool node_exceeds_one_pdu = false; ///< a single node draws more than one PDU may carry
    bool feasible = true;              ///< at least one node fits in a rack
    std::vector<std::string> warnings;
};

/// Plans racks for `nodes` nodes of `node_power` (wall) and `node_units` U each, under the
/// config and an optional rack budget. Never throws for a load that does not fit: the plan
/// says so (feasible = false) with the reason. Throws InvalidArgument for nonsensical inputs
/// (non-positive power, amps, volts, phases other than 1 or 3, derating outside (0, 1]).
[[nodiscard]] RackPlan plan_racks(Watts node_power, int node_units, int nodes, const RackConfig& c,
                                  std::optional<Watts> rack_budget);

} // namespace gpuplan::model
