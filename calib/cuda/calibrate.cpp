#include "calib/cuda/calibrate.hpp"

#include "calib/cuda/sections.hpp"
#include "calib/cuda/session.hpp"

#include <cublasLt.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>

namespace gpuplan::calib::bench {
namespace {

constexpr const char* kToolVersion = "0.1.0";
constexpr int kNvmlIntervalMs = 20;

std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string runtime_text() {
    int v = 0;
    cudaRuntimeGetVersion(&v);
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

int device_count() {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        throw NoGpuError(std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e) + " [" +
                         cudaGetErrorName(e) + "]; is an NVIDIA driver for CUDA " + runtime_text() +
                         " installed and a GPU visible?");
    }
    if (count == 0) {
        throw NoGpuError("cudaGetDeviceCount found no device; check CUDA_VISIBLE_DEVICES");
    }
    return count;
}

DeviceInfo query_device(int index, int count) {
    cudaDeviceProp p{};
    check_cuda(cudaGetDeviceProperties(&p, index), "cudaGetDeviceProperties");
    DeviceInfo d;
    d.index = index;
    d.name = p.name;
    d.cc_major = p.major;
    d.cc_minor = p.minor;
    d.sm_count = p.multiProcessorCount;
    d.memory_bytes = p.totalGlobalMem;
    d.l2_bytes = p.l2CacheSize > 0 ? static_cast<std::size_t>(p.l2CacheSize) : 0;
    d.gpu_count = count;
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, static_cast<int>(sizeof bus), index) == cudaSuccess) {
        d.pci_bus_id = bus;
    }
    return d;
}

std::string csv_path_for(const std::string& yaml) {
    for (const char* ext : {".yaml", ".yml"}) {
        const std::string e = ext;
        if (yaml.size() > e.size() && yaml.compare(yaml.size() - e.size(), e.size(), e) == 0) {
            return yaml.substr(0, yaml.size() - e.size()) + ".csv";
        }
    }
    return yaml + ".csv";
}

// The best rate per (class, op or data type), for the closing summary.
void print_summary(std::ostream& out, const std::vector<Record>& records) {
    struct Best {
        double rate = 0;
        const Record* at = nullptr;
    };
    std::map<std::string, Best> best;
    std::map<std::string, double> launch;
    for (const auto& r : records) {
        if (r.op_class == "launch") {
            launch[r.op] = r.time_s;
            continue;
        }
        const std::string key = r.op_class == "gemm" ? "gemm " + r.dtype : r.op_class + " " + r.op;
        auto& b = best[key];
        if (r.rate > b.rate) {
            b = {r.rate, &r};
        }
    }
    for (const auto& [key, b] : best) {
        char buf[200];
        const Record& r = *b.at;
        if (r.op_class == "gemm") {
            std::snprintf(buf, sizeof buf, "  %-28s %8.1f %-8s (m=%g n=%g k=%g)", key.c_str(),
                          b.rate, r.rate_unit.c_str(), r.m, r.n, r.k);
        } else if (r.op_class == "attention_decode") {
            std::snprintf(buf, sizeof buf, "  %-28s %8.1f %-8s (batch %d, context %g, %d KV heads)",
                          key.c_str(), b.rate, r.rate_unit.c_str(), r.batch, r.context, r.kv_heads);
        } else {
            std::snprintf(buf, sizeof buf, "  %-28s %8.1f %-8s (%s%s)", key.c_str(), b.rate,
                          r.rate_unit.c_str(), format_bytes(r.bytes).c_str(),
                          r.tp > 1 && r.op_class != "memory_bound"
                              ? (", " + std::to_string(r.tp) + " GPUs").c_str()
                              : "");
        }
        out << buf << '\n';
    }
    for (const auto& [op, t] : launch) {
        char buf[120];
        std::snprintf(buf, sizeof buf, "  launch %-21s %8.2f us", op.c_str(), t * 1e6);
        out << buf << '\n';
    }
}

} // namespace

int run_calibration(const CalibOptions& options) {
    const int count = device_count();
    if (options.device >= count) {
        throw UsageError("--device " + std::to_string(options.device) + ": only " +
                         std::to_string(count) + " CUDA GPU(s) are visible (0 to " +
                         std::to_string(count - 1) + ")");
    }
    check_cuda(cudaSetDevice(options.device), "cudaSetDevice");
    const DeviceInfo device = query_device(options.device, count);
    const std::string date = utc_now();

    std::string nvml_why;
    std::unique_ptr<NvmlMonitor> nvml = NvmlMonitor::open(device.pci_bus_id, nvml_why);
    if (nvml) {
        nvml->start(kNvmlIntervalMs);
    }
    Session s(options, device, nvml.get());
    const std::string out_path =
        options.out.empty() ? slug(s.gpu_name()) + "-measured.yaml" : options.out;
    {
        char buf[256];
        std::snprintf(
            buf, sizeof buf,
            "gpuplan-calib %s: %s (sm_%d%d, %d SMs, %s), %s mode, limit %.0f s, output %s",
            kToolVersion, device.name.c_str(), device.cc_major, device.cc_minor, device.sm_count,
            format_bytes(static_cast<double>(device.memory_bytes)).c_str(),
            options.quick ? "quick" : "full", time_limit_s(options), out_path.c_str());
        s.progress(buf);
    }
    if (!nvml) {
        s.note("power and clocks not recorded: " + nvml_why);
    }

    struct Section {
        const char* name;
        void (*run)(Session&);
    };
    const Section sections[] = {{"launch", measure_launch},    {"memory", measure_memory},
                                {"gemm", measure_gemm},        {"attention", measure_attention},
                                {"host", measure_host_copies}, {"nccl", measure_collectives}};
    bool failed = false;
    for (const auto& sec : sections) {
        if (!wants(options, sec.name)) {
            continue;
        }
        if (s.out_of_time()) {
            s.note(std::string(sec.name) + ": skipped, time limit of " +
                   std::to_string(static_cast<int>(time_limit_s(options))) + " s reached");
            continue;
        }
        s.progress(std::string("section ") + sec.name);
        // The calib driver is a boundary (where exceptions are caught and reported): a failed
        // section is noted in the file and the run goes on, so one bad kernel does not lose the
        // other measurements.
        try {
            sec.run(s);
        } catch (const std::exception& e) {
            failed = true;
            s.note(std::string(sec.name) + ": failed: " + e.what());
            // A sticky error (an illegal address) leaves the context unusable; stop measuring.
            if (cudaDeviceSynchronize() != cudaSuccess || cudaGetLastError() != cudaSuccess) {
                s.note("the CUDA context is unusable after that error; the remaining sections were "
                       "not run");
                break;
            }
        }
    }

    Environment env;
    env.tool_version = kToolVersion;
    env.gpu_name = s.gpu_name();
    env.cuda_device_name = device.name;
    env.device_index = device.index;
    env.cc_major = device.cc_major;
    env.cc_minor = device.cc_minor;
    env.sm_count = device.sm_count;
    env.memory_bytes = static_cast<double>(device.memory_bytes);
    env.l2_bytes = static_cast<double>(device.l2_bytes);
    env.gpu_count = device.gpu_count;
    cudaDriverGetVersion(&env.cuda_driver_version);
    cudaRuntimeGetVersion(&env.cuda_runtime_version);
    env.cublaslt_version = static_cast<long long>(cublasLtGetVersion());
    env.nccl_version = s.nccl_version();
    if (nvml) {
        env.driver_version = nvml->driver_version();
        env.max_sm_clock_mhz = nvml->max_sm_clock_mhz();
        env.max_mem_clock_mhz = nvml->max_mem_clock_mhz();
        env.power_limit_w = nvml->power_limit_w();
        env.power_source = nvml->power_source();
    } else {
        env.power_source = "none";
    }
    env.date_utc = date;
    env.command = options.command;
    env.output_file = std::filesystem::path(out_path).filename().string();
    env.mode = options.quick ? "quick" : "full";
    env.wall_s = s.elapsed_s();
    env.notes = s.notes();

    const std::string csv_path = csv_path_for(out_path);
    write_file_atomically(out_path, to_points_yaml(env, s.records()));
    write_file_atomically(csv_path, to_csv(s.records()));
    const auto points = std::count_if(s.records().begin(), s.records().end(),
                                      [](const Record& r) { return r.point; });
    std::cout << "gpuplan-calib: wrote " << out_path << " (" << points << " points, "
              << s.records().size() - static_cast<std::size_t>(points)
              << " other measurements) and " << csv_path << " in " << static_cast<int>(env.wall_s)
              << " s\n";
    print_summary(std::cout, s.records());
    if (failed) {
        std::cout << "gpuplan-calib: some measurements failed; see the notes at the end of "
                  << out_path << '\n';
    }
    return failed ? 1 : 0;
}

} // namespace gpuplan::calib::bench
