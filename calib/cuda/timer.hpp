#pragma once
/// Timing GPU work with CUDA events: warm-up calls, a probe that sizes the groups, then groups of
/// back-to-back calls each bracketed by two events; the result is the median over groups of the
/// per-call time, so one slow group (a clock change, a host hiccup) does not move it.

#include <cuda_runtime.h>

#include <functional>

namespace gpuplan::calib::bench {

/// Seconds on a steady clock since the first call in this process; the time base shared by the
/// timer and the NVML sampler.
[[nodiscard]] double now_s();

/// How much to repeat one measurement.
struct TimingPlan {
    int warmup = 2;                 ///< untimed calls first (algorithm selection, caches, clocks)
    int groups = 7;                 ///< timed groups; the median is taken over them
    double group_target_s = 3e-3;   ///< aim for groups of about this long (calls per group vary)
    int max_calls_per_group = 2000; ///< upper bound on calls in one group
    double max_point_s = 0.6;       ///< cap on timed seconds per point (fewer groups, at least 3)
};

/// Holds a stream while the host queues work, so that short calls run back to back on the GPU
/// instead of one per host launch: without it, a call shorter than its host-side launch cost
/// (a few microseconds for cublasLtMatmul) would be timed at the launch rate. Owns a word of
/// mapped pinned memory. Not copyable.
class LaunchGate {
  public:
    /// Allocates the flag. Throws CudaError.
    LaunchGate();
    LaunchGate(const LaunchGate&) = delete;
    LaunchGate& operator=(const LaunchGate&) = delete;
    ~LaunchGate();
    /// Enqueues the waiting kernel on `stream` (it gives up after one second on its own).
    void hold(cudaStream_t stream);
    /// Lets the held stream run.
    void release();

  private:
    volatile int* host_ = nullptr;
    const volatile int* device_ = nullptr;
};

/// One timed measurement.
struct TimedRun {
    double median_s = 0;   ///< median over groups of the mean time per call
    double min_s = 0;      ///< fastest group's time per call
    double max_s = 0;      ///< slowest group's time per call
    int calls = 0;         ///< timed calls in all groups
    double wall_begin = 0; ///< now_s() when the timed groups were enqueued
    double wall_end = 0;   ///< now_s() when they had completed
    bool gated = false;    ///< the timed calls were queued behind a LaunchGate
};

/// Times `launch(i)`, which must enqueue call number i (0, 1, 2, ...) on `stream` and nothing
/// else; i lets a caller rotate over buffers so that data is not served from L2. Calls shorter
/// than 200 us are queued behind `gate` (when given), at most 128 of them, so the GPU runs them
/// back to back. Throws CudaError. Cost: about plan.groups × plan.group_target_s plus warm-up.
[[nodiscard]] TimedRun time_on_stream(cudaStream_t stream, const TimingPlan& plan,
                                      const std::function<void(long)>& launch,
                                      LaunchGate* gate = nullptr);

} // namespace gpuplan::calib::bench
