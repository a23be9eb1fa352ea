#pragma once
/// Power and clocks through NVML, loaded at run time with dlopen (libnvidia-ml.so.1 ships with
/// the driver, not the toolkit, so the build machine has none). A sampler thread reads board
/// power, SM and memory clocks and temperature about every 20 ms; stats() summarises the
/// samples that fell inside one measurement.

#include "calib/cuda/report.hpp"

#include <memory>
#include <string>

namespace gpuplan::calib::bench {

/// The NVML view of one GPU, with its sampler. Not copyable.
class NvmlMonitor {
  public:
    /// Loads NVML and finds the GPU with this PCI bus id (cudaDeviceGetPCIBusId's form,
    /// "0000:41:00.0"). Null, with the reason in `why`, when NVML or the GPU is unavailable.
    [[nodiscard]] static std::unique_ptr<NvmlMonitor> open(const std::string& pci_bus_id,
                                                           std::string& why);

    NvmlMonitor(const NvmlMonitor&) = delete;
    NvmlMonitor& operator=(const NvmlMonitor&) = delete;
    /// Stops the sampler, shuts NVML down and unloads it.
    ~NvmlMonitor();

    /// Starts sampling every `interval_ms` milliseconds (once; later calls do nothing).
    void start(int interval_ms);

    /// Summary of the samples taken in [t0, t1] (now_s() seconds). When none fell inside, the
    /// nearest sample within one interval after t1 or before t0 stands in; samples == 0 when
    /// there is none either.
    [[nodiscard]] PowerStats stats(double t0, double t1) const;

    [[nodiscard]] std::string driver_version() const;
    [[nodiscard]] double max_sm_clock_mhz() const;  ///< 0 when unknown
    [[nodiscard]] double max_mem_clock_mhz() const; ///< 0 when unknown
    [[nodiscard]] double power_limit_w() const;     ///< 0 when unknown
    /// "instant" (NVML_FI_DEV_POWER_INSTANT), "1 s average" (nvmlDeviceGetPowerUsage on Ampere
    /// and newer except GA100) or "none".
    [[nodiscard]] std::string power_source() const;

    struct Impl;

  private:
    explicit NvmlMonitor(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

} // namespace gpuplan::calib::bench
