#include "model/hardware_spec.hpp"

namespace gpuplan::model {

std::optional<FlopsPerSecond> PeakCompute::for_type(ComputeType type) const {
    switch (type) {
    case ComputeType::Fp32: return fp32;
    case ComputeType::Tf32: return tf32;
    case ComputeType::Bf16: return bf16 ? bf16 : fp16;
    case ComputeType::Fp16: return fp16 ? fp16 : bf16;
    case ComputeType::Fp8: return fp8;
    case ComputeType::Int8: return int8;
    case ComputeType::Fp4: return fp4;
    }
    return std::nullopt;
}

const char* to_string(LinkKind kind) {
    return name_of(kind);
}

Bytes cuda_visible_memory(const AcceleratorSpec& gpu) {
    constexpr double kCudaVisibleFraction = 0.99; // see the header
    return gpu.memory * kCudaVisibleFraction;
}

} // namespace gpuplan::model
