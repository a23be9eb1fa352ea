#pragma once
/// The coefficients of the accelerator and node power model (model/power.hpp), as a value type
/// the scenario's `power:` block overrides. Every default is fitted to or taken from
/// published power measurements and SplitwiseSim's power model (hwdb/sources.yaml S69-S75); the
/// fit, its inputs and its residuals are in docs/power.md, the sources next to each constant in
/// power.cpp.

#include "model/units.hpp"

#include <optional>

namespace gpuplan::model {

/// Power-model coefficients. A value type: copy and modify freely.
struct PowerModel {
    std::optional<Watts> board_power;    ///< overrides AcceleratorSpec::board_power (TDP)
    std::optional<Watts> idle_power;     ///< overrides AcceleratorSpec::idle_power (no process)
    std::optional<Watts> resident_power; ///< model loaded, no work; default resident_fraction
    /// P_idle ÷ P_board for accelerators without a measured idle power: least-squares fit
    /// through the origin over six GPUs' bare-idle readings (S72-S74).
    double idle_fraction = 0.113;
    /// P_resident ÷ P_board: a CUDA context pins the clocks (S74: H100, A100, L40S).
    double resident_fraction = 0.198;
    /// a_c: fraction of the dynamic range (board − resident) a step with its compute pipes
    /// busy the whole step draws; fitted (docs/power.md).
    double compute_weight = 1.75;
    /// a_m: the same for a step with its memory system busy the whole step; fitted.
    double memory_weight = 0.55;
    /// γ: dynamic power ∝ clock^γ. Theory: f·V² with V ∝ f gives 3; 3.16 makes a 50 % cap slow
    /// Splitwise's prefill steps by their published 1.30x on average (docs/power.md, "Caps").
    double dynamic_exponent = 3.16;
    /// β: share of memory-phase dynamic power in the core clock domain (SMs issuing loads, L2,
    /// crossbar); the rest (HBM, PHY) runs at the memory clock, which capping leaves alone [U].
    double memory_core_share = 0.5;
    /// μ: a memory-bound kernel's time grows by 1/(1 − μ(1 − k)) at core clock k [U].
    double memory_clock_sensitivity = 0.25;
    /// Lowest core clock factor the limiter goes to (H100: ~1980 MHz boost, a few hundred MHz
    /// minimum) [U].
    double min_clock = 0.2;
    /// Node DC ÷ wall power. 1: hwdb's host_power is derived from wall measurements and already
    /// carries the PSU loss (hwdb/servers/servers.yaml header); set e.g. 0.94 with a DC host
    /// figure.
    double psu_efficiency = 1.0;
    /// Overrides ServerSpec::host_power (CPUs, switches, NICs, fans at load, at the wall).
    std::optional<Watts> host_power;
    friend bool operator==(const PowerModel&, const PowerModel&) = default;
};

} // namespace gpuplan::model
