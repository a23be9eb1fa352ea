#include "calib/cuda/cuda_util.hpp"

#include <cstdio>
#include <utility>

namespace gpuplan::calib::bench {

void check_cuda(cudaError_t status, std::string_view what) {
    if (status == cudaSuccess) {
        return;
    }
    throw CudaError(std::string(what) + ": " + cudaGetErrorString(status) + " (" +
                    cudaGetErrorName(status) + ")");
}

std::string format_bytes(double bytes) {
    static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024.0 && u < 4) {
        bytes /= 1024.0;
        ++u;
    }
    char buf[32];
    if (bytes == static_cast<double>(static_cast<long long>(bytes))) {
        std::snprintf(buf, sizeof buf, "%lld %s", static_cast<long long>(bytes), units[u]);
    } else {
        std::snprintf(buf, sizeof buf, "%.3g %s", bytes, units[u]);
    }
    return buf;
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes > 0) {
        check_cuda(cudaMalloc(&ptr_, bytes),
                   "cudaMalloc of " + format_bytes(static_cast<double>(bytes)));
    }
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
        if (ptr_ != nullptr) {
            cudaFree(ptr_);
        }
        ptr_ = std::exchange(other.ptr_, nullptr);
        bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
}

DeviceBuffer::~DeviceBuffer() {
    if (ptr_ != nullptr) {
        cudaFree(ptr_); // an error here has nowhere to go; a sticky error is reported elsewhere
    }
}

PinnedBuffer::PinnedBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes > 0) {
        check_cuda(cudaMallocHost(&ptr_, bytes),
                   "cudaMallocHost of " + format_bytes(static_cast<double>(bytes)));
    }
}

PinnedBuffer::PinnedBuffer(PinnedBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& other) noexcept {
    if (this != &other) {
        if (ptr_ != nullptr) {
            cudaFreeHost(ptr_);
        }
        ptr_ = std::exchange(other.ptr_, nullptr);
        bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
}

PinnedBuffer::~PinnedBuffer() {
    if (ptr_ != nullptr) {
        cudaFreeHost(ptr_);
    }
}

Stream::Stream() {
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
}

Stream::~Stream() {
    if (stream_ != nullptr) {
        cudaStreamDestroy(stream_);
    }
}

Event::Event() {
    check_cuda(cudaEventCreate(&event_), "cudaEventCreate");
}

Event::Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}

Event::~Event() {
    if (event_ != nullptr) {
        cudaEventDestroy(event_);
    }
}

double elapsed_s(const Event& begin, const Event& end) {
    float ms = 0.0F;
    check_cuda(cudaEventElapsedTime(&ms, begin.get(), end.get()), "cudaEventElapsedTime");
    return static_cast<double>(ms) * 1e-3;
}

} // namespace gpuplan::calib::bench
