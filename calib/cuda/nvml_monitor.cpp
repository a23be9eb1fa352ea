#include "calib/cuda/nvml_monitor.hpp"

#include "calib/cuda/timer.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <stop_token>
#include <thread>
#include <vector>

namespace gpuplan::calib::bench {
namespace {

// The subset of nvml.h used here. NVML's header is not on the build machine; these
// declarations follow the NVML API reference (R5xx): every function returns nvmlReturn_t (an
// int enum, 0 = NVML_SUCCESS), enums are passed as int, nvmlDevice_t is an opaque pointer.
using NvmlReturn = int;
using NvmlDevice = void*;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr int kClockSm = 1;                  // NVML_CLOCK_SM
constexpr int kClockMem = 2;                 // NVML_CLOCK_MEM
constexpr int kTemperatureGpu = 0;           // NVML_TEMPERATURE_GPU
constexpr unsigned kFieldPowerInstant = 186; // NVML_FI_DEV_POWER_INSTANT, milliwatts

// nvmlValue_t and nvmlFieldValue_t, laid out as in nvml.h (40 bytes).
union NvmlValue {
    double d_val;
    unsigned int ui_val;
    unsigned long ul_val;
    unsigned long long ull_val;
    long long sll_val;
    int si_val;
    unsigned short us_val;
};
struct NvmlFieldValue {
    unsigned int field_id;
    unsigned int scope_id;
    long long timestamp;
    long long latency_usec;
    int value_type; // nvmlValueType_t
    NvmlReturn nvml_return;
    NvmlValue value;
};
static_assert(sizeof(NvmlFieldValue) == 40, "nvmlFieldValue_t is 40 bytes");

using InitFn = NvmlReturn (*)();
using ShutdownFn = NvmlReturn (*)();
using ErrorStringFn = const char* (*)(NvmlReturn);
using HandleByPciFn = NvmlReturn (*)(const char*, NvmlDevice*);
using UintQueryFn = NvmlReturn (*)(NvmlDevice, unsigned int*);
using ClockFn = NvmlReturn (*)(NvmlDevice, int, unsigned int*);
using FieldValuesFn = NvmlReturn (*)(NvmlDevice, int, NvmlFieldValue*);
using DriverVersionFn = NvmlReturn (*)(char*, unsigned int);

struct Sample {
    double t = 0;
    double power_w = -1;
    double sm_mhz = -1;
    double mem_mhz = -1;
    double temp_c = -1;
};

double field_as_double(const NvmlFieldValue& f) {
    switch (f.value_type) { // nvmlValueType_t
    case 0: return f.value.d_val;
    case 1: return f.value.ui_val;
    case 2: return static_cast<double>(f.value.ul_val);
    case 3: return static_cast<double>(f.value.ull_val);
    case 4: return static_cast<double>(f.value.sll_val);
    case 5: return f.value.si_val;
    case 6: return f.value.us_val;
    default: return -1;
    }
}

template <class Fn> Fn symbol(void* lib, const char* name) {
    return reinterpret_cast<Fn>(dlsym(lib, name));
}

} // namespace

struct NvmlMonitor::Impl {
    void* lib = nullptr;
    InitFn init = nullptr;
    ShutdownFn shutdown = nullptr;
    ErrorStringFn error_string = nullptr;
    HandleByPciFn handle_by_pci = nullptr;
    UintQueryFn power_usage = nullptr;
    UintQueryFn power_limit = nullptr;
    ClockFn clock = nullptr;
    ClockFn max_clock = nullptr;
    ClockFn temperature = nullptr;
    FieldValuesFn field_values = nullptr;
    DriverVersionFn driver_version = nullptr;
    bool initialised = false;
    NvmlDevice device = nullptr;

    std::atomic<bool> use_instant{true}; // cleared by the sampler the first time the field fails
    bool power_seen = false;
    int interval_ms = 20;
    mutable std::mutex mutex;
    std::vector<Sample> samples; // guarded by mutex
    std::jthread thread;

    ~Impl() {
        if (thread.joinable()) {
            thread.request_stop();
            thread.join();
        }
        if (initialised && shutdown != nullptr) {
            shutdown();
        }
        if (lib != nullptr) {
            dlclose(lib);
        }
    }

    std::string error(NvmlReturn rc) const {
        return error_string != nullptr ? std::string(error_string(rc))
                                       : "NVML error " + std::to_string(rc);
    }

    Sample sample() {
        Sample s;
        s.t = now_s();
        unsigned int v = 0;
        if (use_instant && field_values != nullptr) {
            NvmlFieldValue f{};
            f.field_id = kFieldPowerInstant;
            if (field_values(device, 1, &f) == kNvmlSuccess && f.nvml_return == kNvmlSuccess) {
                s.power_w = field_as_double(f) * 1e-3;
            } else {
                use_instant = false;
            }
        }
        if (s.power_w < 0 && power_usage != nullptr && power_usage(device, &v) == kNvmlSuccess) {
            s.power_w = v * 1e-3;
        }
        if (clock != nullptr && clock(device, kClockSm, &v) == kNvmlSuccess) {
            s.sm_mhz = v;
        }
        if (clock != nullptr && clock(device, kClockMem, &v) == kNvmlSuccess) {
            s.mem_mhz = v;
        }
        if (temperature != nullptr && temperature(device, kTemperatureGpu, &v) == kNvmlSuccess) {
            s.temp_c = v;
        }
        return s;
    }

    void run(const std::stop_token& stop) {
        auto next = std::chrono::steady_clock::now();
        while (!stop.stop_requested()) {
            Sample s = sample();
            {
                std::lock_guard lock(mutex);
                power_seen = power_seen || s.power_w >= 0;
                samples.push_back(s);
            }
            next += std::chrono::milliseconds(interval_ms);
            std::this_thread::sleep_until(next);
        }
    }
};

NvmlMonitor::NvmlMonitor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

NvmlMonitor::~NvmlMonitor() = default;

std::unique_ptr<NvmlMonitor> NvmlMonitor::open(const std::string& pci_bus_id, std::string& why) {
    auto impl = std::make_unique<Impl>();
    impl->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (impl->lib == nullptr) {
        const char* e = dlerror();
        why = std::string("NVML not loaded (") +
              (e != nullptr ? e : "libnvidia-ml.so.1 not found") + ")";
        return nullptr;
    }
    impl->init = symbol<InitFn>(impl->lib, "nvmlInit_v2");
    impl->shutdown = symbol<ShutdownFn>(impl->lib, "nvmlShutdown");
    impl->error_string = symbol<ErrorStringFn>(impl->lib, "nvmlErrorString");
    impl->handle_by_pci = symbol<HandleByPciFn>(impl->lib, "nvmlDeviceGetHandleByPciBusId_v2");
    impl->power_usage = symbol<UintQueryFn>(impl->lib, "nvmlDeviceGetPowerUsage");
    impl->power_limit = symbol<UintQueryFn>(impl->lib, "nvmlDeviceGetEnforcedPowerLimit");
    impl->clock = symbol<ClockFn>(impl->lib, "nvmlDeviceGetClockInfo");
    impl->max_clock = symbol<ClockFn>(impl->lib, "nvmlDeviceGetMaxClockInfo");
    impl->temperature = symbol<ClockFn>(impl->lib, "nvmlDeviceGetTemperature");
    impl->field_values = symbol<FieldValuesFn>(impl->lib, "nvmlDeviceGetFieldValues");
    impl->driver_version = symbol<DriverVersionFn>(impl->lib, "nvmlSystemGetDriverVersion");
    if (impl->init == nullptr || impl->shutdown == nullptr || impl->handle_by_pci == nullptr) {
        why = "NVML lacks nvmlInit_v2, nvmlShutdown or nvmlDeviceGetHandleByPciBusId_v2";
        return nullptr;
    }
    if (const NvmlReturn rc = impl->init(); rc != kNvmlSuccess) {
        why = "nvmlInit_v2 failed: " + impl->error(rc);
        return nullptr;
    }
    impl->initialised = true;
    if (const NvmlReturn rc = impl->handle_by_pci(pci_bus_id.c_str(), &impl->device);
        rc != kNvmlSuccess) {
        why = "NVML does not know the GPU at PCI " + pci_bus_id + ": " + impl->error(rc);
        return nullptr;
    }
    return std::unique_ptr<NvmlMonitor>(new NvmlMonitor(std::move(impl)));
}

void NvmlMonitor::start(int interval_ms) {
    if (impl_->thread.joinable()) {
        return;
    }
    impl_->interval_ms = std::max(1, interval_ms);
    impl_->thread =
        std::jthread([impl = impl_.get()](const std::stop_token& stop) { impl->run(stop); });
}

PowerStats NvmlMonitor::stats(double t0, double t1) const {
    std::vector<Sample> in;
    {
        std::lock_guard lock(impl_->mutex);
        const auto& all = impl_->samples;
        for (const auto& s : all) {
            if (s.t >= t0 && s.t <= t1) {
                in.push_back(s);
            }
        }
        if (in.empty()) {
            // Shorter than one interval: take the nearest sample close enough to describe it.
            const double reach = 1.5 * impl_->interval_ms * 1e-3;
            const Sample* best = nullptr;
            double best_d = reach;
            for (const auto& s : all) {
                const double d = s.t > t1 ? s.t - t1 : t0 - s.t;
                if (d <= best_d) {
                    best_d = d;
                    best = &s;
                }
            }
            if (best != nullptr) {
                in.push_back(*best);
            }
        }
    }
    PowerStats st;
    int n_power = 0;
    int n_sm = 0;
    int n_mem = 0;
    for (const auto& s : in) {
        if (s.power_w >= 0) {
            st.mean_w += s.power_w;
            st.max_w = std::max(st.max_w, s.power_w);
            ++n_power;
        }
        if (s.sm_mhz >= 0) {
            st.sm_clock_mhz += s.sm_mhz;
            ++n_sm;
        }
        if (s.mem_mhz >= 0) {
            st.mem_clock_mhz += s.mem_mhz;
            ++n_mem;
        }
        st.max_temp_c = std::max(st.max_temp_c, s.temp_c);
    }
    st.samples = static_cast<int>(in.size());
    st.mean_w = n_power > 0 ? st.mean_w / n_power : 0;
    st.sm_clock_mhz = n_sm > 0 ? st.sm_clock_mhz / n_sm : 0;
    st.mem_clock_mhz = n_mem > 0 ? st.mem_clock_mhz / n_mem : 0;
    return st;
}

std::string NvmlMonitor::driver_version() const {
    char buf[96] = {};
    if (impl_->driver_version != nullptr &&
        impl_->driver_version(buf, static_cast<unsigned int>(sizeof buf)) == kNvmlSuccess) {
        return buf;
    }
    return "";
}

double NvmlMonitor::max_sm_clock_mhz() const {
    unsigned int v = 0;
    return impl_->max_clock != nullptr &&
                   impl_->max_clock(impl_->device, kClockSm, &v) == kNvmlSuccess
               ? v
               : 0.0;
}

double NvmlMonitor::max_mem_clock_mhz() const {
    unsigned int v = 0;
    return impl_->max_clock != nullptr &&
                   impl_->max_clock(impl_->device, kClockMem, &v) == kNvmlSuccess
               ? v
               : 0.0;
}

double NvmlMonitor::power_limit_w() const {
    unsigned int v = 0;
    return impl_->power_limit != nullptr && impl_->power_limit(impl_->device, &v) == kNvmlSuccess
               ? v * 1e-3
               : 0.0;
}

std::string NvmlMonitor::power_source() const {
    std::lock_guard lock(impl_->mutex);
    if (!impl_->power_seen) {
        return "none";
    }
    return impl_->use_instant && impl_->field_values != nullptr ? "instant" : "1 s average";
}

} // namespace gpuplan::calib::bench
