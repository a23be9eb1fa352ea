// Launch overhead of an empty kernel, eager and from a CUDA graph; pinned host copies.
#include "calib/cuda/kernels.hpp"
#include "calib/cuda/sections.hpp"

#include <algorithm>
#include <cstdio>

namespace gpuplan::calib::bench {
namespace {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n == 0 ? 0.0 : (n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
}

std::string us_text(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f us", s * 1e6);
    return buf;
}

// Host-timed repetitions of `body` (which must leave the stream idle): the median, min and max
// of `time_per_unit(rep)` over reps, as a filled record.
Record host_timed(Session& s, Record r, int reps, int units_per_rep,
                  const std::function<void()>& body) {
    std::vector<double> per_unit;
    const double t_begin = now_s();
    for (int i = 0; i < reps; ++i) {
        const double t0 = now_s();
        body();
        per_unit.push_back((now_s() - t0) / units_per_rep);
    }
    const double t_end = now_s();
    r.time_s = median(per_unit);
    r.min_s = *std::min_element(per_unit.begin(), per_unit.end());
    r.max_s = *std::max_element(per_unit.begin(), per_unit.end());
    r.calls = reps * units_per_rep;
    r.power = s.power(t_begin, t_end);
    return r;
}

// Owns a captured graph and its executable form.
class Graph {
  public:
    Graph() = default;
    Graph(const Graph&) = delete;
    Graph& operator=(const Graph&) = delete;
    ~Graph() {
        if (exec_ != nullptr) {
            cudaGraphExecDestroy(exec_);
        }
        if (graph_ != nullptr) {
            cudaGraphDestroy(graph_);
        }
    }
    void capture_empty_kernels(cudaStream_t stream, int kernels) {
        check_cuda(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
                   "cudaStreamBeginCapture");
        cudaError_t launch_status = cudaSuccess;
        for (int i = 0; i < kernels && launch_status == cudaSuccess; ++i) {
            launch_status = launch_empty(stream);
        }
        // End the capture even when a launch failed, so the stream leaves capture mode.
        const cudaError_t end_status = cudaStreamEndCapture(stream, &graph_);
        check_cuda(launch_status, "empty kernel launch during capture");
        check_cuda(end_status, "cudaStreamEndCapture");
        check_cuda(cudaGraphInstantiate(&exec_, graph_, 0), "cudaGraphInstantiate");
    }
    [[nodiscard]] cudaGraphExec_t exec() const { return exec_; }

  private:
    cudaGraph_t graph_ = nullptr;
    cudaGraphExec_t exec_ = nullptr;
};

} // namespace

void measure_launch(Session& s) {
    const cudaStream_t stream = s.stream();
    const int reps = s.quick() ? 5 : 9;
    // Eager: host time per launch over 1,000 back-to-back launches of an empty kernel and one
    // synchronise at the end: the per-kernel cost of an eager stream of tiny kernels.
    constexpr int kEager = 1000;
    for (int i = 0; i < 100; ++i) {
        check_cuda(launch_empty(stream), "empty kernel");
    }
    check_cuda(cudaStreamSynchronize(stream), "warm-up");
    Record eager;
    eager.point = false;
    eager.op_class = "launch";
    eager.op = "eager_empty_kernel";
    eager = host_timed(s, eager, reps, kEager, [&] {
        for (int i = 0; i < kEager; ++i) {
            check_cuda(launch_empty(stream), "empty kernel");
        }
        check_cuda(cudaStreamSynchronize(stream), "eager launches");
    });
    s.add_filled(eager);

    // Round trip: one launch and a stream synchronise, the floor of a synchronous call.
    Record sync;
    sync.point = false;
    sync.op_class = "launch";
    sync.op = "launch_and_sync";
    constexpr int kSync = 200;
    sync = host_timed(s, sync, reps, kSync, [&] {
        for (int i = 0; i < kSync; ++i) {
            check_cuda(launch_empty(stream), "empty kernel");
            check_cuda(cudaStreamSynchronize(stream), "launch and sync");
        }
    });
    s.add_filled(sync);

    // Graph: 100 empty kernels captured once, replayed; time per kernel.
    constexpr int kGraphKernels = 100;
    constexpr int kReplays = 20;
    Graph graph;
    graph.capture_empty_kernels(stream, kGraphKernels);
    for (int i = 0; i < 3; ++i) {
        check_cuda(cudaGraphLaunch(graph.exec(), stream), "cudaGraphLaunch");
    }
    check_cuda(cudaStreamSynchronize(stream), "graph warm-up");
    Record g;
    g.point = false;
    g.op_class = "launch";
    g.op = "graph_empty_kernel";
    g = host_timed(s, g, reps, kReplays * kGraphKernels, [&] {
        for (int i = 0; i < kReplays; ++i) {
            check_cuda(cudaGraphLaunch(graph.exec(), stream), "cudaGraphLaunch");
        }
        check_cuda(cudaStreamSynchronize(stream), "graph replay");
    });
    s.add_filled(g);
    s.progress("launch: eager " + us_text(eager.time_s) + " per kernel, launch+sync " +
               us_text(sync.time_s) + ", graph " + us_text(g.time_s) + " per kernel");
}

void measure_host_copies(Session& s) {
    constexpr std::size_t kKiB = 1024;
    const cudaStream_t stream = s.stream();
    const std::size_t largest = s.quick() ? 256 * kKiB * kKiB : 1024 * kKiB * kKiB;
    const std::size_t cap = std::min(largest, s.free_memory() / 10);
    std::vector<std::size_t> sizes;
    for (std::size_t b = 4 * kKiB; b <= cap; b *= s.quick() ? 16 : 4) {
        sizes.push_back(b);
    }
    if (sizes.empty()) {
        s.note("host copies: skipped, too little free device memory");
        return;
    }
    PinnedBuffer host(sizes.back());
    DeviceBuffer dev(sizes.back());
    check_cuda(launch_fill(dev.get(), sizes.back(), FillType::Int8, 3, 1.0F, stream), "fill");
    check_cuda(cudaStreamSynchronize(stream), "fill");
    for (const std::size_t size : sizes) {
        if (s.out_of_time()) {
            s.note("host copies: stopped at " + format_bytes(static_cast<double>(size)) +
                   ", time limit reached");
            return;
        }
        std::string line = "pinned copies " + format_bytes(static_cast<double>(size)) + ":";
        for (const bool h2d : {true, false}) {
            const TimedRun run = s.measure([&](long) {
                check_cuda(h2d ? cudaMemcpyAsync(dev.get(), host.get(), size,
                                                 cudaMemcpyHostToDevice, stream)
                               : cudaMemcpyAsync(host.get(), dev.get(), size,
                                                 cudaMemcpyDeviceToHost, stream),
                           "cudaMemcpyAsync");
            });
            Record r;
            r.point = false;
            r.op_class = "host_copy";
            r.op = h2d ? "h2d_pinned" : "d2h_pinned";
            r.bytes = static_cast<double>(size);
            r.rate = r.bytes / run.median_s / 1e9;
            r.rate_unit = "GB/s";
            s.add(r, run);
            char buf[48];
            std::snprintf(buf, sizeof buf, " %s %.1f GB/s", h2d ? "H2D" : "D2H", r.rate);
            line += buf;
        }
        s.progress(line);
    }
}

} // namespace gpuplan::calib::bench
