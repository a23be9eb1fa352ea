#include "calib/cuda/timer.hpp"

#include "calib/cuda/cuda_util.hpp"
#include "calib/cuda/kernels.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <vector>

namespace gpuplan::calib::bench {
namespace {

// Calls shorter than this are queued behind the gate: above it the host enqueues faster than
// the GPU runs them even without help.
constexpr double kGateBelowS = 200e-6;
// Calls queued behind a closed gate: well under the driver's queue of pending launches (a
// cublasLtMatmul may be two kernels), so the host never blocks on a full queue.
constexpr int kMaxGatedCalls = 128;
// The gate opens by itself after this long, so a host that blocks anyway cannot deadlock.
constexpr unsigned long long kGateTimeoutNs = 1'000'000'000ULL;

} // namespace

LaunchGate::LaunchGate() {
    void* p = nullptr;
    check_cuda(cudaHostAlloc(&p, sizeof(int), cudaHostAllocMapped),
               "cudaHostAlloc of the launch gate");
    host_ = static_cast<volatile int*>(p);
    *host_ = 1;
    void* d = nullptr;
    check_cuda(cudaHostGetDevicePointer(&d, p, 0), "cudaHostGetDevicePointer");
    device_ = static_cast<const volatile int*>(d);
}

LaunchGate::~LaunchGate() {
    if (host_ != nullptr) {
        cudaFreeHost(const_cast<int*>(host_));
    }
}

void LaunchGate::hold(cudaStream_t stream) {
    *host_ = 0;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    check_cuda(launch_wait_for_flag(device_, kGateTimeoutNs, stream), "launch gate");
}

void LaunchGate::release() {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    *host_ = 1;
    std::atomic_thread_fence(std::memory_order_seq_cst);
}

double now_s() {
    static const auto start = std::chrono::steady_clock::now();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TimedRun time_on_stream(cudaStream_t stream, const TimingPlan& plan,
                        const std::function<void(long)>& launch, LaunchGate* gate) {
    long call = 0;
    for (int i = 0; i < plan.warmup; ++i) {
        launch(call++);
    }
    check_cuda(cudaStreamSynchronize(stream), "synchronize after warm-up");

    // Probe the time per call; very short calls are probed over several so that the event
    // resolution (about 0.5 us) does not dominate.
    Event p0;
    Event p1;
    check_cuda(cudaEventRecord(p0.get(), stream), "cudaEventRecord");
    launch(call++);
    check_cuda(cudaEventRecord(p1.get(), stream), "cudaEventRecord");
    check_cuda(cudaEventSynchronize(p1.get()), "probe");
    double probe = elapsed_s(p0, p1);
    if (probe < 50e-6) {
        constexpr int kProbeCalls = 20;
        check_cuda(cudaEventRecord(p0.get(), stream), "cudaEventRecord");
        for (int i = 0; i < kProbeCalls; ++i) {
            launch(call++);
        }
        check_cuda(cudaEventRecord(p1.get(), stream), "cudaEventRecord");
        check_cuda(cudaEventSynchronize(p1.get()), "probe");
        probe = elapsed_s(p0, p1) / kProbeCalls;
    }
    probe = std::max(probe, 1e-7);

    int per_group = static_cast<int>(std::clamp(std::ceil(plan.group_target_s / probe), 1.0,
                                                static_cast<double>(plan.max_calls_per_group)));
    int groups = std::max(plan.groups, 1);
    const double group_s = per_group * probe;
    if (groups * group_s > plan.max_point_s) {
        groups = std::max(std::min(groups, 3), static_cast<int>(plan.max_point_s / group_s));
    }
    const bool gated = gate != nullptr && probe < kGateBelowS;
    if (gated) {
        per_group = std::clamp(per_group, 1, std::max(1, kMaxGatedCalls / groups));
    }

    // Events are recorded back to back, so the GPU runs the groups without gaps; group g is the
    // span between events g and g + 1.
    std::vector<Event> events(static_cast<std::size_t>(groups) + 1);
    TimedRun run;
    run.gated = gated;
    run.wall_begin = now_s();
    if (gated) {
        gate->hold(stream);
    }
    try {
        check_cuda(cudaEventRecord(events[0].get(), stream), "cudaEventRecord");
        for (int g = 0; g < groups; ++g) {
            for (int i = 0; i < per_group; ++i) {
                launch(call++);
            }
            check_cuda(cudaEventRecord(events[static_cast<std::size_t>(g) + 1].get(), stream),
                       "cudaEventRecord");
        }
    } catch (...) {
        if (gated) {
            gate->release();
        }
        throw;
    }
    if (gated) {
        gate->release();
    }
    check_cuda(cudaEventSynchronize(events.back().get()), "timed groups");
    run.wall_end = now_s();

    std::vector<double> per_call;
    per_call.reserve(static_cast<std::size_t>(groups));
    for (std::size_t g = 0; g + 1 < events.size(); ++g) {
        per_call.push_back(elapsed_s(events[g], events[g + 1]) / per_group);
    }
    std::sort(per_call.begin(), per_call.end());
    const std::size_t n = per_call.size();
    run.median_s = n % 2 == 1 ? per_call[n / 2] : 0.5 * (per_call[n / 2 - 1] + per_call[n / 2]);
    run.min_s = per_call.front();
    run.max_s = per_call.back();
    run.calls = groups * per_group;
    return run;
}

} // namespace gpuplan::calib::bench
