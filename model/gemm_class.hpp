#pragma once
/// GEMM kernel classes: which efficiency scale a matrix product takes. A class is a compute
/// path (the tensor-core rate, model/precision.hpp ComputeType) or a block-scaled format that
/// runs on one with kernels of its own: MXFP8 on the FP8 path, NVFP4 and MXFP4 on the FP4 path.
/// The peak FLOP/s always comes from the compute path; the efficiency scale from the class
/// (GemmEfficiency::scale), falling back to the compute path's when a profile has none of its
/// own for the class.

#include "model/enum_names.hpp"
#include "model/precision.hpp"

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace gpuplan::model {

/// The first seven values mirror ComputeType (same order); the rest are block-scaled formats.
enum class GemmClass { Fp32, Tf32, Bf16, Fp16, Fp8, Int8, Fp4, Mxfp8, Nvfp4, Mxfp4 };

/// Number of GemmClass values.
inline constexpr std::size_t kGemmClassCount = 10;
/// The classes past the compute paths (Mxfp8, Nvfp4, Mxfp4): the block-scaled formats.
inline constexpr std::size_t kBlockScaledClassCount = kGemmClassCount - 7;

/// The spellings (model/enum_names.hpp), as the profiles' `dtype_scale` keys and the residual
/// rows' `kernel_class` use them.
[[nodiscard]] constexpr std::array<EnumName<GemmClass>, kGemmClassCount>
enum_names(GemmClass) noexcept {
    return {
        EnumName<GemmClass>{"fp32", GemmClass::Fp32},
        EnumName<GemmClass>{"tf32", GemmClass::Tf32},
        EnumName<GemmClass>{"bf16", GemmClass::Bf16},
        EnumName<GemmClass>{"fp16", GemmClass::Fp16},
        EnumName<GemmClass>{"fp8", GemmClass::Fp8},
        EnumName<GemmClass>{"int8", GemmClass::Int8},
        EnumName<GemmClass>{"fp4", GemmClass::Fp4},
        EnumName<GemmClass>{"mxfp8", GemmClass::Mxfp8},
        EnumName<GemmClass>{"nvfp4", GemmClass::Nvfp4},
        EnumName<GemmClass>{"mxfp4", GemmClass::Mxfp4},
    };
}

/// The class of a plain compute path (the same enumerator).
[[nodiscard]] constexpr GemmClass gemm_class(ComputeType type) noexcept {
    return static_cast<GemmClass>(static_cast<int>(type));
}

/// The compute path a class runs on: its peak FLOP/s and the scale it falls back to.
[[nodiscard]] constexpr ComputeType compute_path(GemmClass c) noexcept {
    switch (c) {
    case GemmClass::Mxfp8: return ComputeType::Fp8;
    case GemmClass::Nvfp4:
    case GemmClass::Mxfp4: return ComputeType::Fp4;
    default: return static_cast<ComputeType>(static_cast<int>(c));
    }
}

/// Whether the class is a block-scaled format with a scale of its own (Mxfp8, Nvfp4, Mxfp4).
[[nodiscard]] constexpr bool is_block_scaled(GemmClass c) noexcept {
    return static_cast<std::size_t>(c) >= 7;
}

/// The class of a GEMM whose operands are stored in `p` and run natively (not weight-only):
/// "mxfp8", "nvfp4" and "mxfp4" are classes of their own, every other format its compute path.
[[nodiscard]] GemmClass gemm_class_of(const Precision& p);

/// "fp8", "nvfp4", ... (the first spelling of enum_names).
[[nodiscard]] std::string_view to_string(GemmClass c);

/// The class spelled `name` (exactly, lower case), or nullopt.
[[nodiscard]] std::optional<GemmClass> find_gemm_class(std::string_view name);

} // namespace gpuplan::model
