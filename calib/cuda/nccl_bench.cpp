// NCCL collectives across the visible GPUs, with libnccl loaded at run time (it may be absent).
#include "calib/cuda/kernels.hpp"
#include "calib/cuda/sections.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <memory>

namespace gpuplan::calib::bench {
namespace {

// The subset of nccl.h used here (NCCL 2.x ABI): results and data types are int enums,
// communicators opaque pointers. Checked against nccl.h below where the header is installed.
using NcclResult = int;
using NcclComm = void*;
constexpr NcclResult kNcclSuccess = 0;
constexpr int kNcclBfloat16 = 9; // ncclBfloat16
constexpr int kNcclSum = 0;      // ncclSum

using GetVersionFn = NcclResult (*)(int*);
using CommInitAllFn = NcclResult (*)(NcclComm*, int, const int*);
using CommDestroyFn = NcclResult (*)(NcclComm);
using AllReduceFn = NcclResult (*)(const void*, void*, std::size_t, int, int, NcclComm,
                                   cudaStream_t);
using SendFn = NcclResult (*)(const void*, std::size_t, int, int, NcclComm, cudaStream_t);
using RecvFn = NcclResult (*)(void*, std::size_t, int, int, NcclComm, cudaStream_t);
using GroupFn = NcclResult (*)();
using ErrorStringFn = const char* (*)(NcclResult);

} // namespace
} // namespace gpuplan::calib::bench

#if __has_include(<nccl.h>)
#include <nccl.h>
static_assert(ncclSuccess == gpuplan::calib::bench::kNcclSuccess, "ncclSuccess is 0");
static_assert(ncclBfloat16 == gpuplan::calib::bench::kNcclBfloat16, "ncclBfloat16 is 9");
static_assert(ncclSum == gpuplan::calib::bench::kNcclSum, "ncclSum is 0");
static_assert(sizeof(ncclResult_t) == sizeof(int) && sizeof(ncclDataType_t) == sizeof(int) &&
                  sizeof(ncclRedOp_t) == sizeof(int) && sizeof(ncclComm_t) == sizeof(void*),
              "NCCL enums are ints and communicators pointers");
#endif

namespace gpuplan::calib::bench {
namespace {

struct Nccl {
    void* lib = nullptr;
    GetVersionFn get_version = nullptr;
    CommInitAllFn comm_init_all = nullptr;
    CommDestroyFn comm_destroy = nullptr;
    AllReduceFn all_reduce = nullptr;
    SendFn send = nullptr;
    RecvFn recv = nullptr;
    GroupFn group_start = nullptr;
    GroupFn group_end = nullptr;
    ErrorStringFn error_string = nullptr;

    Nccl() = default;
    Nccl(const Nccl&) = delete;
    Nccl& operator=(const Nccl&) = delete;
    ~Nccl() {
        if (lib != nullptr) {
            dlclose(lib);
        }
    }

    void check(NcclResult r, const std::string& what) const {
        if (r != kNcclSuccess) {
            throw CudaError(what + ": " +
                            (error_string != nullptr ? error_string(r) : "NCCL error") + " (" +
                            std::to_string(r) + ")");
        }
    }
};

template <class Fn> Fn symbol(void* lib, const char* name) {
    return reinterpret_cast<Fn>(dlsym(lib, name));
}

// Loads NCCL; null with the reason in `why`.
std::unique_ptr<Nccl> load_nccl(std::string& why) {
    auto n = std::make_unique<Nccl>();
    for (const char* name : {"libnccl.so.2", "libnccl.so"}) {
        n->lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
        if (n->lib != nullptr) {
            break;
        }
    }
    if (n->lib == nullptr) {
        const char* e = dlerror();
        why = std::string("libnccl.so.2 not found (") + (e != nullptr ? e : "dlopen failed") + ")";
        return nullptr;
    }
    n->get_version = symbol<GetVersionFn>(n->lib, "ncclGetVersion");
    n->comm_init_all = symbol<CommInitAllFn>(n->lib, "ncclCommInitAll");
    n->comm_destroy = symbol<CommDestroyFn>(n->lib, "ncclCommDestroy");
    n->all_reduce = symbol<AllReduceFn>(n->lib, "ncclAllReduce");
    n->send = symbol<SendFn>(n->lib, "ncclSend");
    n->recv = symbol<RecvFn>(n->lib, "ncclRecv");
    n->group_start = symbol<GroupFn>(n->lib, "ncclGroupStart");
    n->group_end = symbol<GroupFn>(n->lib, "ncclGroupEnd");
    n->error_string = symbol<ErrorStringFn>(n->lib, "ncclGetErrorString");
    if (n->get_version == nullptr || n->comm_init_all == nullptr || n->comm_destroy == nullptr ||
        n->all_reduce == nullptr || n->send == nullptr || n->recv == nullptr ||
        n->group_start == nullptr || n->group_end == nullptr) {
        why =
            "the loaded NCCL lacks ncclSend/ncclRecv or another function (needs NCCL 2.7 or newer)";
        return nullptr;
    }
    return n;
}

// One group of GPUs 0 … g-1 with a communicator, a stream, events and buffers on each.
class Group {
  public:
    Group(const Nccl& nccl, int size, std::size_t bytes, int home_device)
        : nccl_(nccl), home_(home_device),
          comms_(&nccl, std::vector<NcclComm>(static_cast<std::size_t>(size), nullptr)) {
        std::vector<int> devices(static_cast<std::size_t>(size));
        for (int r = 0; r < size; ++r) {
            devices[static_cast<std::size_t>(r)] = r;
        }
        nccl_.check(nccl_.comm_init_all(comms_.comms.data(), size, devices.data()),
                    "ncclCommInitAll");
        for (int r = 0; r < size; ++r) {
            check_cuda(cudaSetDevice(r), "cudaSetDevice");
            streams_.push_back(std::make_unique<Stream>());
            begin_.emplace_back();
            end_.emplace_back();
            send_.emplace_back(bytes);
            recv_.emplace_back(bytes);
            check_cuda(launch_fill(send_.back().get(), bytes / 2, FillType::Bf16,
                                   31 + static_cast<unsigned>(r), 1.0F, streams_.back()->get()),
                       "fill");
        }
        sync();
        check_cuda(cudaSetDevice(home_.device), "cudaSetDevice");
    }
    Group(const Group&) = delete;
    Group& operator=(const Group&) = delete;
    ~Group() = default;

    [[nodiscard]] int size() const { return static_cast<int>(comms_.comms.size()); }

    void all_reduce(std::size_t bytes) {
        nccl_.check(nccl_.group_start(), "ncclGroupStart");
        for (int r = 0; r < size(); ++r) {
            nccl_.check(nccl_.all_reduce(send(r), recv(r), bytes / 2, kNcclBfloat16, kNcclSum,
                                         comm(r), stream(r)),
                        "ncclAllReduce");
        }
        nccl_.check(nccl_.group_end(), "ncclGroupEnd");
    }

    // Rank 0 sends `bytes` to rank 1.
    void send_recv(std::size_t bytes) {
        nccl_.check(nccl_.group_start(), "ncclGroupStart");
        nccl_.check(nccl_.send(send(0), bytes / 2, kNcclBfloat16, 1, comm(0), stream(0)),
                    "ncclSend");
        nccl_.check(nccl_.recv(recv(1), bytes / 2, kNcclBfloat16, 0, comm(1), stream(1)),
                    "ncclRecv");
        nccl_.check(nccl_.group_end(), "ncclGroupEnd");
    }

    // Every rank sends bytes / g to every rank (itself included), as ncclAlltoAll would.
    void all_to_all(std::size_t bytes) {
        const std::size_t chunk = bytes / static_cast<std::size_t>(size());
        nccl_.check(nccl_.group_start(), "ncclGroupStart");
        for (int r = 0; r < size(); ++r) {
            for (int p = 0; p < size(); ++p) {
                const std::size_t off = static_cast<std::size_t>(p) * chunk;
                nccl_.check(nccl_.send(static_cast<const char*>(send(r)) + off, chunk / 2,
                                       kNcclBfloat16, p, comm(r), stream(r)),
                            "ncclSend");
                nccl_.check(nccl_.recv(static_cast<char*>(recv(r)) + off, chunk / 2, kNcclBfloat16,
                                       p, comm(r), stream(r)),
                            "ncclRecv");
            }
        }
        nccl_.check(nccl_.group_end(), "ncclGroupEnd");
    }

    void sync() {
        for (int r = 0; r < size(); ++r) {
            check_cuda(cudaStreamSynchronize(stream(r)), "NCCL stream synchronize");
        }
    }

    // Seconds per call of `op`, the slowest rank's event time over `iters` back-to-back calls.
    double time(const std::function<void()>& op, int iters) {
        for (int r = 0; r < size(); ++r) {
            check_cuda(cudaSetDevice(r), "cudaSetDevice");
            check_cuda(cudaEventRecord(begin_[static_cast<std::size_t>(r)].get(), stream(r)),
                       "cudaEventRecord");
        }
        for (int i = 0; i < iters; ++i) {
            op();
        }
        double worst = 0;
        for (int r = 0; r < size(); ++r) {
            check_cuda(cudaSetDevice(r), "cudaSetDevice");
            check_cuda(cudaEventRecord(end_[static_cast<std::size_t>(r)].get(), stream(r)),
                       "cudaEventRecord");
        }
        for (int r = 0; r < size(); ++r) {
            check_cuda(cudaEventSynchronize(end_[static_cast<std::size_t>(r)].get()), "collective");
            worst = std::max(worst, elapsed_s(begin_[static_cast<std::size_t>(r)],
                                              end_[static_cast<std::size_t>(r)]));
        }
        check_cuda(cudaSetDevice(home_.device), "cudaSetDevice");
        return worst / iters;
    }

  private:
    [[nodiscard]] void* send(int r) const { return send_[static_cast<std::size_t>(r)].get(); }
    [[nodiscard]] void* recv(int r) const { return recv_[static_cast<std::size_t>(r)].get(); }
    [[nodiscard]] NcclComm comm(int r) const { return comms_.comms[static_cast<std::size_t>(r)]; }
    [[nodiscard]] cudaStream_t stream(int r) const {
        return streams_[static_cast<std::size_t>(r)]->get();
    }

    // Restores the measured device as current when the group goes, even after an exception.
    struct HomeDevice {
        int device = 0;
        explicit HomeDevice(int d) : device(d) {}
        HomeDevice(const HomeDevice&) = delete;
        HomeDevice& operator=(const HomeDevice&) = delete;
        ~HomeDevice() { cudaSetDevice(device); }
    };
    // Destroys the communicators that were created.
    struct Comms {
        const Nccl* nccl = nullptr;
        std::vector<NcclComm> comms;
        Comms(const Nccl* n, std::vector<NcclComm> c) : nccl(n), comms(std::move(c)) {}
        Comms(const Comms&) = delete;
        Comms& operator=(const Comms&) = delete;
        ~Comms() {
            for (auto* c : comms) {
                if (c != nullptr) {
                    nccl->comm_destroy(c);
                }
            }
        }
    };

    const Nccl& nccl_;
    HomeDevice home_;
    Comms comms_;
    std::vector<std::unique_ptr<Stream>> streams_;
    std::vector<Event> begin_;
    std::vector<Event> end_;
    std::vector<DeviceBuffer> send_;
    std::vector<DeviceBuffer> recv_;
};

} // namespace

void measure_collectives(Session& s) {
    const int n = s.device().gpu_count;
    if (n < 2) {
        s.note(
            "nccl: skipped, only one GPU is visible (all-reduce and all-to-all need two or more)");
        return;
    }
    std::string why;
    const std::unique_ptr<Nccl> nccl = load_nccl(why);
    if (!nccl) {
        s.note("nccl: skipped, " + why);
        return;
    }
    int version = 0;
    nccl->check(nccl->get_version(&version), "ncclGetVersion");
    s.set_nccl_version(version);
    if (s.options().link.empty()) {
        s.note("nccl: collective points carry no link; pass --link NAME (e.g. nvswitch-nvlink4) so "
               "that "
               "`gpuplan calib fit` can use them");
    }

    constexpr std::size_t kKiB = 1024;
    const std::size_t largest = std::min<std::size_t>(
        s.quick() ? 256 * kKiB * kKiB : 1024 * kKiB * kKiB, s.free_memory() / 10 / kKiB * kKiB);
    std::vector<std::size_t> sizes;
    for (std::size_t b = 64 * kKiB; b <= largest; b *= s.quick() ? 16 : 4) {
        sizes.push_back(b);
    }
    if (sizes.empty()) {
        s.note("nccl: skipped, too little free device memory");
        return;
    }
    std::vector<int> groups;
    for (int g = 2; g <= n; g *= 2) {
        groups.push_back(g);
    }
    if (groups.back() != n) {
        groups.push_back(n);
    }
    const int home = s.device().index;
    for (const int g : groups) {
        if (s.out_of_time()) {
            s.note("nccl: stopped, time limit reached");
            return;
        }
        Group group(*nccl, g, sizes.back(), home);
        struct Kind {
            const char* op_class;
            const char* op;
        };
        std::vector<Kind> kinds{{"all_reduce", "nccl_all_reduce"},
                                {"all_to_all", "nccl_all_to_all"}};
        if (g == 2) {
            kinds.push_back({"send_recv", "nccl_send_recv"});
        }
        for (const Kind& kind : kinds) {
            const std::string cls = kind.op_class;
            std::string line = "nccl " + cls + " on " + std::to_string(g) + " GPUs:";
            for (const std::size_t bytes : sizes) {
                if (s.out_of_time()) {
                    break;
                }
                auto op = [&] {
                    if (cls == "all_reduce") {
                        group.all_reduce(bytes);
                    } else if (cls == "all_to_all") {
                        group.all_to_all(bytes);
                    } else {
                        group.send_recv(bytes);
                    }
                };
                for (int i = 0; i < 3; ++i) {
                    op();
                }
                group.sync();
                // Size the repeats from one call: about 20 ms of work per measurement, 5 to 200
                // calls.
                const double one = group.time(op, 1);
                const int iters =
                    static_cast<int>(std::clamp(0.02 / std::max(one, 1e-7), 5.0, 200.0));
                const double t_begin = now_s();
                const double per_call = group.time(op, iters);
                const double t_end = now_s();
                Record r;
                r.point = cls != "all_to_all"; // schema 1 has no all-to-all class
                r.op_class = cls;
                r.op = kind.op;
                r.bytes = static_cast<double>(bytes);
                r.dtype = "bf16";
                r.tp = cls == "send_recv" ? 2 : g;
                r.link = s.options().link;
                r.time_s = per_call;
                r.min_s = per_call;
                r.max_s = per_call;
                r.calls = iters;
                // All-reduce: NCCL's bus bandwidth, 2 (g - 1) / g × bytes / time (nccl-tests,
                // PERFORMANCE.md); the others: bytes / time.
                const double factor = cls == "all_reduce" ? 2.0 * (g - 1) / g : 1.0;
                r.rate = factor * r.bytes / per_call / 1e9;
                r.rate_unit = cls == "all_reduce" ? "GB/s bus" : "GB/s";
                r.power = s.power(t_begin, t_end);
                s.add_filled(r);
                char buf[64];
                std::snprintf(buf, sizeof buf, " %s %.0f %s", format_bytes(r.bytes).c_str(), r.rate,
                              r.rate_unit.c_str());
                line += buf;
            }
            s.progress(line);
        }
    }
}

} // namespace gpuplan::calib::bench
