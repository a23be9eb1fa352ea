#pragma once
/// Numeric formats for weights, activations and the KV cache, with their real storage cost.

#include "model/enum_names.hpp"

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan::model {

/// The compute path a format runs on (which peak FLOP/s applies).
enum class ComputeType { Fp32, Tf32, Bf16, Fp16, Fp8, Int8, Fp4 };

/// The spellings (model/enum_names.hpp), as hwdb, the training block and the writers use them.
[[nodiscard]] constexpr std::array<EnumName<ComputeType>, 7> enum_names(ComputeType) noexcept {
    return {
        EnumName<ComputeType>{"fp32", ComputeType::Fp32},
        EnumName<ComputeType>{"tf32", ComputeType::Tf32},
        EnumName<ComputeType>{"bf16", ComputeType::Bf16},
        EnumName<ComputeType>{"fp16", ComputeType::Fp16},
        EnumName<ComputeType>{"fp8", ComputeType::Fp8},
        EnumName<ComputeType>{"int8", ComputeType::Int8},
        EnumName<ComputeType>{"fp4", ComputeType::Fp4},
    };
}

/// A storage format with everything needed to size tensors stored in it.
struct Precision {
    std::string name;        ///< canonical name, e.g. "bf16", "gptq-int4", "q4_k_m"
    double bits_per_element; ///< effective bits including scales/zero points
    ComputeType compute;     ///< the tensor-core path that consumes it
    bool weight_only;        ///< dequantized to 16 bit before the matmul (GPTQ, AWQ, GGUF)
    std::string note;        ///< where the bits figure comes from
    [[nodiscard]] double bytes_per_element() const { return bits_per_element / 8.0; }
    friend bool operator==(const Precision&, const Precision&) = default;
};

/// Looks a precision up by name or alias (case-insensitive), e.g. "bf16", "fp8", "e4m3",
/// "int4-awq", "gptq-int4:g64", "q4_k_m", "nvfp4". Integer weight-only formats take an
/// optional group size after a colon ("awq:g64"); the default group size is 128.
[[nodiscard]] std::optional<Precision> find_precision(std::string_view name);

/// Like find_precision, but throws InputError naming the accepted formats.
[[nodiscard]] Precision parse_precision(std::string_view name);

/// Canonical names of every built-in format (for help texts and error messages).
[[nodiscard]] std::vector<std::string> precision_names();

/// The name of a compute path as hwdb spells it ("bf16", "fp8", ...).
[[nodiscard]] std::string_view to_string(ComputeType type);

} // namespace gpuplan::model
