#include "model/precision.hpp"

#include "model/error.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace gpuplan::model {
namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::replace(out.begin(), out.end(), '_', '-');
    return out;
}

struct Entry {
    const char* name;
    const char* aliases; // space-separated
    double bits;
    ComputeType compute;
    bool weight_only;
    bool grouped; // integer weight-only format whose scale overhead depends on the group size
    const char* note;
};

// Bits per weight of the GGUF k-quants are the averages llama.cpp reports for a 7B model
// (ggml-org/llama.cpp, tools/quantize/README.md table "bits per weight"): Q8_0 8.50,
// Q6_K 6.56, Q5_K_M 5.69, Q4_K_M 4.89, Q4_0 4.50 (32-weight blocks with one fp16 scale).
// MXFP4: 32 4-bit elements share one 8-bit scale -> 4.25 bits (OCP MX spec v1.0).
// MXFP8: 32 FP8 (E4M3) elements share one E8M0 scale -> 8 + 8/32 = 8.25 bits (OCP Microscaling
// Formats (MX) Specification v1.0, 2023, §5).
// NVFP4: 16 4-bit elements share one fp8 scale -> 4.5 bits (NVIDIA Blackwell docs).
constexpr Entry kEntries[] = {
    {"fp32", "float32 float", 32, ComputeType::Fp32, false, false, "IEEE binary32"},
    {"tf32", "tensorfloat32", 32, ComputeType::Tf32, false, false, "stored as fp32"},
    {"bf16", "bfloat16", 16, ComputeType::Bf16, false, false, "bfloat16"},
    {"fp16", "float16 half f16", 16, ComputeType::Fp16, false, false, "IEEE binary16"},
    {"fp8", "fp8-e4m3 e4m3 float8-e4m3 fp8-e4m3fn", 8, ComputeType::Fp8, false, false,
     "OCP FP8 E4M3"},
    {"fp8-e5m2", "e5m2 float8-e5m2", 8, ComputeType::Fp8, false, false, "OCP FP8 E5M2"},
    {"int8", "w8a8 int8-w8a8 smoothquant", 8, ComputeType::Int8, false, false,
     "int8 weights and activations (per-channel scales, negligible)"},
    {"int8-weight-only", "w8a16 int8-wo", 8, ComputeType::Bf16, true, true,
     "int8 weight-only, fp16 scale per group"},
    {"int4", "w4a16 int4-wo", 4, ComputeType::Bf16, true, true,
     "int4 weight-only, fp16 scale per group"},
    {"gptq-int4", "gptq int4-gptq gptq-4bit", 4, ComputeType::Bf16, true, true,
     "GPTQ 4-bit: fp16 scale and packed 4-bit zero point per group"},
    {"awq-int4", "awq int4-awq awq-4bit", 4, ComputeType::Bf16, true, true,
     "AWQ 4-bit: fp16 scale and packed 4-bit zero point per group"},
    {"gptq-int8", "int8-gptq", 8, ComputeType::Bf16, true, true, "GPTQ 8-bit"},
    {"q8_0", "q8-0 gguf-q8-0", 8.5, ComputeType::Bf16, true, false, "llama.cpp Q8_0"},
    {"q6_k", "q6-k gguf-q6-k", 6.5625, ComputeType::Bf16, true, false, "llama.cpp Q6_K"},
    {"q5_k_m", "q5-k-m gguf-q5-k-m", 5.69, ComputeType::Bf16, true, false, "llama.cpp Q5_K_M"},
    {"q4_k_m", "q4-k-m gguf-q4-k-m", 4.89, ComputeType::Bf16, true, false, "llama.cpp Q4_K_M"},
    {"q4_0", "q4-0 gguf-q4-0", 4.5, ComputeType::Bf16, true, false, "llama.cpp Q4_0"},
    {"nvfp4", "fp4 nv-fp4", 4.5, ComputeType::Fp4, false, false,
     "NVFP4: fp8 scale per 16 elements"},
    {"mxfp4", "mx-fp4", 4.25, ComputeType::Fp4, false, false, "MXFP4: e8m0 scale per 32"},
    {"mxfp8", "mx-fp8 mxfp8-e4m3", 8.25, ComputeType::Fp8, false, false,
     "MXFP8: e4m3 elements, e8m0 scale per 32"},
};

// GPTQ/AWQ keep one fp16 scale per group and a zero point packed at the weight width
// (docs/domain.md §2: a 16-bit scale per 128 weights adds 0.125 bit; with a zero point 0.25).
double group_overhead_bits(const Entry& e, int group) {
    const bool has_zero_point = std::string_view(e.name).find("gptq") != std::string_view::npos ||
                                std::string_view(e.name).find("awq") != std::string_view::npos;
    return (16.0 + (has_zero_point ? e.bits : 0.0)) / group;
}

bool matches(const Entry& e, const std::string& key) {
    if (key == e.name || key == lower(e.name)) {
        return true;
    }
    std::string_view aliases = e.aliases;
    while (!aliases.empty()) {
        const auto space = aliases.find(' ');
        const auto alias = aliases.substr(0, space);
        if (key == lower(alias)) {
            return true;
        }
        if (space == std::string_view::npos) {
            break;
        }
        aliases.remove_prefix(space + 1);
    }
    return false;
}

} // namespace

std::optional<Precision> find_precision(std::string_view name) {
    std::string key = lower(name);
    int group = 128;
    if (const auto colon = key.find(':'); colon != std::string::npos) {
        const std::string suffix = key.substr(colon + 1);
        key.resize(colon);
        const char* first = suffix.data() + (suffix.starts_with('g') ? 1 : 0);
        const char* last = suffix.data() + suffix.size();
        const auto [ptr, ec] = std::from_chars(first, last, group);
        if (ec != std::errc() || ptr != last || group <= 0 || group > 1 << 16) {
            return std::nullopt;
        }
    }
    for (const Entry& e : kEntries) {
        if (!matches(e, key)) {
            continue;
        }
        const double bits = e.grouped ? e.bits + group_overhead_bits(e, group) : e.bits;
        std::string canonical = e.name;
        if (e.grouped && group != 128) {
            canonical += ":g" + std::to_string(group);
        }
        return Precision{canonical, bits, e.compute, e.weight_only, e.note};
    }
    return std::nullopt;
}

Precision parse_precision(std::string_view name) {
    if (auto p = find_precision(name)) {
        return *p;
    }
    std::string list;
    for (const auto& n : precision_names()) {
        list += (list.empty() ? "" : ", ") + n;
    }
    throw InputError("unknown precision '" + std::string(name) + "'; use one of " + list +
                     " (integer weight-only formats take a group size, e.g. 'awq-int4:g64')");
}

std::vector<std::string> precision_names() {
    std::vector<std::string> out;
    for (const Entry& e : kEntries) {
        out.emplace_back(e.name);
    }
    return out;
}

std::string_view to_string(ComputeType type) {
    return name_of(type);
}

} // namespace gpuplan::model
