#pragma once
/// The state one calibration run shares between its sections: the device, the stream, the
/// repeat plan, the deadline, the NVML monitor and the records measured so far. Each section
/// (sections.hpp) measures into it; calibrate.cpp writes it out.

#include "calib/cuda/cuda_util.hpp"
#include "calib/cuda/nvml_monitor.hpp"
#include "calib/cuda/options.hpp"
#include "calib/cuda/report.hpp"
#include "calib/cuda/timer.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace gpuplan::calib::bench {

/// The device being measured.
struct DeviceInfo {
    int index = 0;
    std::string name;       ///< cudaDeviceProp::name
    std::string pci_bus_id; ///< "0000:41:00.0"
    int cc_major = 0;
    int cc_minor = 0;
    int sm_count = 0;
    std::size_t memory_bytes = 0;
    std::size_t l2_bytes = 0;
    int gpu_count = 0; ///< CUDA devices visible
};

/// One run's shared state. Sections call measure() for GPU work and add() for records.
class Session {
  public:
    Session(const CalibOptions& options, DeviceInfo device, NvmlMonitor* nvml);

    [[nodiscard]] const CalibOptions& options() const { return options_; }
    [[nodiscard]] const DeviceInfo& device() const { return device_; }
    [[nodiscard]] const TimingPlan& plan() const { return plan_; }
    [[nodiscard]] cudaStream_t stream() const { return stream_.get(); }
    [[nodiscard]] bool quick() const { return options_.quick; }
    [[nodiscard]] const std::string& gpu_name() const { return gpu_name_; }

    /// Seconds since the run started.
    [[nodiscard]] double elapsed_s() const;
    /// True once the time limit has passed: sections start no new point.
    [[nodiscard]] bool out_of_time() const;

    /// Times `launch` with the session's plan, short calls queued behind a LaunchGate
    /// (time_on_stream).
    [[nodiscard]] TimedRun measure(const std::function<void(long)>& launch);

    /// Power and clocks over [t0, t1] (empty without NVML).
    [[nodiscard]] PowerStats power(double t0, double t1) const;

    /// Completes `r` with the timing, the GPU name and the power over the run, and keeps it.
    void add(Record r, const TimedRun& run);
    /// Keeps a record whose time and power the caller has filled in.
    void add_filled(Record r);

    /// Free device memory now, bytes.
    [[nodiscard]] std::size_t free_memory() const;

    /// Records a note for the output file and prints it to stderr.
    void note(const std::string& text);
    /// Prints "[  12.3 s] text" to stderr.
    void progress(const std::string& text) const;

    /// The NCCL version the collectives ran with (0 when NCCL was not used).
    void set_nccl_version(int v) { nccl_version_ = v; }
    [[nodiscard]] int nccl_version() const { return nccl_version_; }

    [[nodiscard]] const std::vector<Record>& records() const { return records_; }
    [[nodiscard]] const std::vector<std::string>& notes() const { return notes_; }

  private:
    const CalibOptions& options_;
    DeviceInfo device_;
    NvmlMonitor* nvml_;
    TimingPlan plan_;
    Stream stream_;
    LaunchGate gate_;
    std::string gpu_name_;
    double start_s_ = 0;
    double limit_s_ = 0;
    int nccl_version_ = 0;
    std::vector<Record> records_;
    std::vector<std::string> notes_;
};

} // namespace gpuplan::calib::bench
