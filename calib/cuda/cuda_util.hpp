#pragma once
/// Small RAII owners of CUDA runtime objects (device and pinned memory, streams, events) and
/// the error checks of gpuplan-calib. Every failed CUDA call becomes a CudaError that names the
/// call and what it was doing; the driver (calibrate.cpp) catches it per section.

#include "model/error.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace gpuplan::calib::bench {

/// A CUDA runtime, cuBLASLt or NCCL call failed (exit code 1 at the boundary).
class CudaError : public Error {
  public:
    using Error::Error;
};

/// No usable CUDA device: cudaGetDeviceCount failed or found none (exit code 3).
class NoGpuError : public Error {
  public:
    using Error::Error;
};

/// Throws CudaError "`what`: <CUDA error string> (<error name>)" unless `status` is success.
void check_cuda(cudaError_t status, std::string_view what);

/// `bytes` as "4 MiB", "1.5 GiB", "512 B" (binary prefixes), for messages and op names.
[[nodiscard]] std::string format_bytes(double bytes);

/// Device memory from cudaMalloc; move-only. Throws CudaError when the allocation fails.
class DeviceBuffer {
  public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::size_t bytes);
    DeviceBuffer(DeviceBuffer&& other) noexcept;
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    ~DeviceBuffer();

    /// The allocation, typed; null when empty.
    template <class T> [[nodiscard]] T* as() const { return static_cast<T*>(ptr_); }
    [[nodiscard]] void* get() const { return ptr_; }
    [[nodiscard]] std::size_t size() const { return bytes_; }

  private:
    void* ptr_ = nullptr;
    std::size_t bytes_ = 0;
};

/// Page-locked host memory from cudaMallocHost; move-only.
class PinnedBuffer {
  public:
    PinnedBuffer() = default;
    explicit PinnedBuffer(std::size_t bytes);
    PinnedBuffer(PinnedBuffer&& other) noexcept;
    PinnedBuffer& operator=(PinnedBuffer&& other) noexcept;
    PinnedBuffer(const PinnedBuffer&) = delete;
    PinnedBuffer& operator=(const PinnedBuffer&) = delete;
    ~PinnedBuffer();

    [[nodiscard]] void* get() const { return ptr_; }
    [[nodiscard]] std::size_t size() const { return bytes_; }

  private:
    void* ptr_ = nullptr;
    std::size_t bytes_ = 0;
};

/// A non-blocking stream on the current device.
class Stream {
  public:
    Stream();
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    ~Stream();
    [[nodiscard]] cudaStream_t get() const { return stream_; }

  private:
    cudaStream_t stream_ = nullptr;
};

/// A timing event on the current device.
class Event {
  public:
    Event();
    Event(Event&& other) noexcept;
    Event& operator=(Event&& other) = delete;
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    ~Event();
    [[nodiscard]] cudaEvent_t get() const { return event_; }

  private:
    cudaEvent_t event_ = nullptr;
};

/// Seconds between two recorded, completed events.
[[nodiscard]] double elapsed_s(const Event& begin, const Event& end);

} // namespace gpuplan::calib::bench
