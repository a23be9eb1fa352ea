#pragma once
/// Hardware value types: accelerators, interconnects, servers (nodes) and racks, with prices.
/// Field names match the hwdb YAML (docs/hwdb-schema.md).

#include "model/enum_names.hpp"
#include "model/money.hpp"
#include "model/precision.hpp"
#include "model/units.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpuplan::model {

/// A dated price estimate with its source.
struct PriceEstimate {
    Price price;        ///< e.g. $25000 (purchase) or $2.10/h (cloud per GPU-hour)
    std::string date;   ///< YYYY-MM or YYYY-MM-DD of the estimate
    std::string source; ///< source tag or URL
    std::string note;
    friend bool operator==(const PriceEstimate&, const PriceEstimate&) = default;
};

/// Dense peak throughput per compute path. Missing paths are unsupported on the device.
/// Never the 2:4-sparse figure.
struct PeakCompute {
    std::optional<FlopsPerSecond> fp64, fp32, tf32, bf16, fp16, fp8, int8, fp4;
    /// The peak for a compute path, if the device supports it.
    [[nodiscard]] std::optional<FlopsPerSecond> for_type(ComputeType type) const;
    friend bool operator==(const PeakCompute&, const PeakCompute&) = default;
};

/// One accelerator (GPU, NPU, TPU chip).
struct AcceleratorSpec {
    std::string name; ///< canonical, lowercase with hyphens: "h100-sxm"
    std::vector<std::string> aliases;
    std::string vendor;       ///< "nvidia", "amd", "intel", "google"
    std::string architecture; ///< "ampere", "hopper", "ada", "blackwell", "cdna3", ...
    std::string form_factor;  ///< "sxm5", "pcie", "oam", ...
    int launch_year = 0;
    Bytes memory;            ///< physical device memory
    std::string memory_type; ///< "HBM3", "GDDR6X", ...
    BytesPerSecond memory_bandwidth;
    PeakCompute dense;
    std::optional<Bytes> l2_cache;
    int compute_units = 0; ///< SMs (NVIDIA), CUs (AMD), cores
    std::optional<Hertz> boost_clock;
    /// Vendor maximum board/module power (TDP/TBP); nullopt where the vendor publishes none
    /// (Google TPUs): the power model then refuses to guess and asks for a figure.
    std::optional<Watts> board_power;
    std::optional<Watts> idle_power;
    /// Settable power-limit range (nvidia-smi -q "Min Power Limit" / "Max Power Limit"); nullopt
    /// where no primary source gives it: a cap is then only checked against board_power.
    std::optional<Watts> power_limit_min, power_limit_max;
    std::string scale_up_link;                        ///< interconnect name, "" when none
    std::optional<BytesPerSecond> scale_up_bandwidth; ///< bidirectional per device
    std::string host_link;                            ///< e.g. "pcie4-x16"
    std::vector<PriceEstimate> prices;
    std::string sources; ///< source tags for the numbers, e.g. "S6 S7"
    std::string notes;
    friend bool operator==(const AcceleratorSpec&, const AcceleratorSpec&) = default;
};

enum class LinkKind { NvLink, NvSwitch, Pcie, InfiniBand, Ethernet, InfinityFabric, Ici, Other };

/// The hwdb spelling of each value (model/enum_names.hpp).
[[nodiscard]] constexpr std::array<EnumName<LinkKind>, 8> enum_names(LinkKind) noexcept {
    return {
        EnumName<LinkKind>{"nvlink", LinkKind::NvLink},
        EnumName<LinkKind>{"nvswitch", LinkKind::NvSwitch},
        EnumName<LinkKind>{"pcie", LinkKind::Pcie},
        EnumName<LinkKind>{"infiniband", LinkKind::InfiniBand},
        EnumName<LinkKind>{"ethernet", LinkKind::Ethernet},
        EnumName<LinkKind>{"infinity-fabric", LinkKind::InfinityFabric},
        EnumName<LinkKind>{"ici", LinkKind::Ici},
        EnumName<LinkKind>{"other", LinkKind::Other},
    };
}

/// A link technology: per-direction bandwidth per device and per-hop latency.
struct InterconnectSpec {
    std::string name; ///< "nvlink4", "pcie5-x16", "ib-ndr"
    std::vector<std::string> aliases;
    LinkKind kind = LinkKind::Other;
    BytesPerSecond bandwidth_per_direction; ///< per device, one direction
    Seconds latency;                        ///< per message hop (alpha term)
    std::string sources;
    std::string notes;
    friend bool operator==(const InterconnectSpec&, const InterconnectSpec&) = default;
};

/// A server (node): accelerators plus host, with its power and price.
struct ServerSpec {
    std::string name; ///< "dgx-h100", "hgx-h200", "generic-8x-pcie"
    std::vector<std::string> aliases;
    std::string accelerator;     ///< accelerator name; "" for a generic chassis
    int accelerators = 0;        ///< count per node
    std::string intra_node_link; ///< interconnect between the node's accelerators
    std::string inter_node_link; ///< network, e.g. "ib-ndr"
    int network_ports = 0;       ///< inter-node NICs per node
    Watts max_power;             ///< PSU-sizing maximum
    std::optional<Watts> idle_power;
    Watts host_power; ///< CPUs, fans, NICs, drives at load, excluding GPUs
    Bytes host_memory;
    int rack_units = 0;
    std::vector<PriceEstimate> prices;
    std::string sources;
    std::string notes;
    friend bool operator==(const ServerSpec&, const ServerSpec&) = default;
};

/// A rack-scale system or rack template (e.g. GB200 NVL72).
struct RackSpec {
    std::string name;
    std::vector<std::string> aliases;
    std::string server; ///< node type inside
    int servers = 0;
    Watts power;         ///< rack power at load
    std::string cooling; ///< "air" or "liquid"
    std::vector<PriceEstimate> prices;
    std::string sources;
    std::string notes;
    friend bool operator==(const RackSpec&, const RackSpec&) = default;
};

[[nodiscard]] const char* to_string(LinkKind kind);

/// The memory CUDA reports on `gpu`: its physical memory × 0.99. An 80 GiB H100 reports
/// 79.22 GiB (vllm-project/vllm PR #10511's start-up log; docs/engines.md §1.6), an RTX 4090
/// (24 GiB) 23.65 GiB; 0.99 is the H100 ratio, smaller cards lose a slightly larger share [U].
/// Serving (model/memory) and training (model/training) size their pools from it.
[[nodiscard]] Bytes cuda_visible_memory(const AcceleratorSpec& gpu);

} // namespace gpuplan::model
