#include "calib/cuda/session.hpp"

#include <cstdio>
#include <iostream>

namespace gpuplan::calib::bench {
namespace {

// Repeat plans. Full: 7 groups of about 3 ms per point, so that NVML (20 ms) sees a sample or
// two of each point; the whole GEMM sweep (about 1,900 points) then takes 1-2 minutes on an
// H100-class GPU. Quick: 5 groups of about 1.5 ms.
TimingPlan plan_for(bool quick) {
    TimingPlan p;
    if (quick) {
        p.warmup = 1;
        p.groups = 5;
        p.group_target_s = 1.5e-3;
        p.max_point_s = 0.25;
    } else {
        p.warmup = 2;
        p.groups = 7;
        p.group_target_s = 3e-3;
        p.max_point_s = 0.6;
    }
    return p;
}

} // namespace

Session::Session(const CalibOptions& options, DeviceInfo device, NvmlMonitor* nvml)
    : options_(options), device_(std::move(device)), nvml_(nvml), plan_(plan_for(options.quick)),
      gpu_name_(options.gpu_name.empty() ? device_.name : options.gpu_name), start_s_(now_s()),
      limit_s_(time_limit_s(options)) {}

double Session::elapsed_s() const {
    return now_s() - start_s_;
}

bool Session::out_of_time() const {
    return elapsed_s() > limit_s_;
}

TimedRun Session::measure(const std::function<void(long)>& launch) {
    return time_on_stream(stream_.get(), plan_, launch, &gate_);
}

PowerStats Session::power(double t0, double t1) const {
    return nvml_ != nullptr ? nvml_->stats(t0, t1) : PowerStats{};
}

void Session::add(Record r, const TimedRun& run) {
    r.time_s = run.median_s;
    r.min_s = run.min_s;
    r.max_s = run.max_s;
    r.calls = run.calls;
    r.power = power(run.wall_begin, run.wall_end);
    add_filled(std::move(r));
}

void Session::add_filled(Record r) {
    r.gpu = gpu_name_;
    records_.push_back(std::move(r));
}

std::size_t Session::free_memory() const {
    std::size_t free = 0;
    std::size_t total = 0;
    check_cuda(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    return free;
}

void Session::note(const std::string& text) {
    notes_.push_back(text);
    progress("note: " + text);
}

void Session::progress(const std::string& text) const {
    char stamp[32];
    std::snprintf(stamp, sizeof stamp, "[%6.1f s] ", elapsed_s());
    std::cerr << stamp << text << '\n';
}

} // namespace gpuplan::calib::bench
