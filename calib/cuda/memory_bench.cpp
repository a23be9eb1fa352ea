// HBM and L2 bandwidth with the streaming kernels of kernels.cu.
#include "calib/cuda/kernels.hpp"
#include "calib/cuda/sections.hpp"

#include <algorithm>
#include <cstdio>

namespace gpuplan::calib::bench {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kGiB = std::size_t{1} << 30;

std::string rate_text(double bytes_per_s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f GB/s", bytes_per_s / 1e9);
    return buf;
}

} // namespace

void measure_memory(Session& s) {
    const cudaStream_t stream = s.stream();
    const std::size_t free = s.free_memory();
    // Two buffers (copy reads one and writes the other) share 40 % of free memory.
    const std::size_t largest = s.quick() ? 2 * kGiB : 8 * kGiB;
    const std::size_t each = std::min(largest, (free / 5) / kMiB * kMiB);
    if (each < 4 * kMiB) {
        s.note("memory: skipped, only " + format_bytes(static_cast<double>(free)) + " free");
        return;
    }
    std::vector<std::size_t> sizes;
    for (std::size_t b = 4 * kMiB; b <= each; b *= 2) {
        sizes.push_back(b);
    }
    if (each < largest) {
        s.note("memory: largest size capped at " + format_bytes(static_cast<double>(sizes.back())) +
               " (40 % of free memory)");
    }
    const std::size_t buffer = sizes.back();
    DeviceBuffer a(buffer);
    DeviceBuffer b(buffer);
    DeviceBuffer sink(sizeof(unsigned));
    check_cuda(launch_fill(a.get(), buffer / 2, FillType::Bf16, 1, 1.0F, stream), "fill");
    check_cuda(launch_fill(b.get(), buffer / 2, FillType::Bf16, 2, 1.0F, stream), "fill");
    check_cuda(cudaStreamSynchronize(stream), "fill");
    const int blocks = streaming_blocks(s.device().sm_count);
    // Consecutive calls use consecutive regions of a span of at least 16 × L2, so every call
    // reads memory that the previous calls have evicted from L2.
    const std::size_t span_floor = std::max<std::size_t>(16 * s.device().l2_bytes, 256 * kMiB);

    for (const std::size_t size : sizes) {
        if (s.out_of_time()) {
            s.note("memory: stopped at " + format_bytes(static_cast<double>(size)) +
                   ", time limit reached");
            return;
        }
        const std::size_t span = std::min(buffer, std::max(size, span_floor));
        const long copies = static_cast<long>(std::max<std::size_t>(span / size, 1));
        auto region = [&](const DeviceBuffer& buf, long i) {
            return static_cast<char*>(buf.get()) + static_cast<std::size_t>(i % copies) * size;
        };
        std::string line = "memory " + format_bytes(static_cast<double>(size)) + ":";
        struct Kind {
            const char* op;
            double bytes;
        };
        for (const Kind kind : {Kind{"hbm_read", static_cast<double>(size)},
                                Kind{"hbm_write", static_cast<double>(size)},
                                Kind{"hbm_copy", 2.0 * static_cast<double>(size)}}) {
            const std::string op = kind.op;
            const TimedRun run = s.measure([&](long i) {
                if (op == "hbm_read") {
                    check_cuda(launch_read(region(a, i), size, sink.as<unsigned>(), blocks, stream),
                               "read kernel");
                } else if (op == "hbm_write") {
                    check_cuda(
                        launch_write(region(a, i), size, static_cast<unsigned>(i), blocks, stream),
                        "write kernel");
                } else {
                    check_cuda(launch_copy(region(a, i), region(b, i), size, blocks, stream),
                               "copy kernel");
                }
            });
            Record r;
            r.op_class = "memory_bound";
            r.op = op;
            r.bytes = kind.bytes;
            r.dtype = "bf16";
            r.rate = kind.bytes / run.median_s / 1e9;
            r.rate_unit = "GB/s";
            s.add(r, run);
            line += " " + op.substr(4) + " " + rate_text(kind.bytes / run.median_s);
        }
        s.progress(line);
    }

    // L2-resident: the same region re-read, for sizes up to half the L2.
    for (std::size_t size = kMiB; size <= s.device().l2_bytes / 2 && size <= buffer; size *= 2) {
        if (s.out_of_time()) {
            return;
        }
        const TimedRun run = s.measure([&](long) {
            check_cuda(launch_read(a.get(), size, sink.as<unsigned>(), blocks, stream),
                       "read kernel");
        });
        Record r;
        r.point = false;
        r.op_class = "l2";
        r.op = "l2_read";
        r.bytes = static_cast<double>(size);
        r.rate = r.bytes / run.median_s / 1e9;
        r.rate_unit = "GB/s";
        s.add(r, run);
        s.progress("L2 read " + format_bytes(r.bytes) + ": " + rate_text(r.bytes / run.median_s));
    }
}

} // namespace gpuplan::calib::bench
