#pragma once
/// Importers: measured kernel and collective times from other projects' profiling data (and our
/// own torch_profile.py) turned into model::Measurement points. Each format's column meanings
/// and the shapes derived from them are documented in importers.cpp and docs/calibration.md,
/// with the data set's SOURCE.md as the reference.

#include "model/measurement.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan::calib {

using model::Measurement;
using model::OpClass;
using model::Timing;

/// The file formats `gpuplan calib import` reads.
enum class Format {
    Auto,          ///< decided from the file's path, name and header
    VidurMlp,      ///< microsoft/vidur data/profiling/compute/<gpu>/<model>/mlp.csv
    VidurNetwork,  ///< microsoft/vidur data/profiling/network/<node>/{all_reduce,send_recv}.csv
    BlisGemm,      ///< inference-sim bench_data/gemm/h100/data.csv (FP8 DeepGEMM)
    BlisMha,       ///< inference-sim bench_data/mha/{prefill,decode}/h100/<q>-<kv>-<d>[-tpN].csv
    LlmCompass,    ///< LLMCompass ae/figure5/**/real_hardware/*.csv (no header)
    LlmServingSim, ///< LLMServingSim
                   ///< profiler/v0/perf_models/<GPU>/<model>/tpN/{attention,layers}.csv
    Torch,         ///< the CSV of calib/torch_profile.py
    TritonCublas,  ///< tmoreau89/triton python/triton_cublas_bench/*/<dtype>_results.csv (B200)
    CudnnSdpa,     ///< NVIDIA/cudnn-frontend benchmark/sdpa_benchmark_training/{artifacts,results}
    CudnnNorms,    ///< NVIDIA/cudnn-frontend benchmark/norms/results/<gpu>/*.csv
    AzureBench,    ///< Azure/AI-benchmarking-guide Azure_Results/ND_*_results*.md (Markdown)
    AiterGemm,     ///< ROCm/aiter aiter/configs/**/*tuned_gemm*.csv
    AiterMoe,      ///< ROCm/aiter aiter/configs/**/*tuned_fmoe*.csv (grouped MoE GEMMs)
    TorchaoMoe,    ///< pytorch/ao torchao/prototype/moe_training/README.md (Markdown)
    FusedMoe,      ///< fused-MoE kernel times transcribed from benchmark posts (validation/kernels)
};

/// "auto", "vidur-mlp", "vidur-network", "blis-gemm", "blis-mha", "llmcompass",
/// "llmservingsim", "torch", "triton-cublas", "cudnn-sdpa", "cudnn-norms", "azure-bench",
/// "aiter-gemm", "aiter-moe", "torchao-moe", "fused-moe".
[[nodiscard]] const char* to_string(Format f);

/// The format named by to_string; nullopt when unknown.
[[nodiscard]] std::optional<Format> find_format(std::string_view name);

/// The format of a file from its path and first line; nullopt when it is none we read.
[[nodiscard]] std::optional<Format> detect_format(const std::filesystem::path& path,
                                                  std::string_view first_line);

/// What the importers need beyond the file.
struct ImportOptions {
    /// The GPU the data was measured on, overriding what the path implies (hwdb name).
    std::string gpu;
};

/// Reads one file of the given format (Auto: detected). Throws InputError (file:line:column,
/// column name) on malformed data and when the format or the GPU cannot be told.
[[nodiscard]] std::vector<Measurement> import_file(const std::filesystem::path& path, Format format,
                                                   const ImportOptions& options = {});

/// The result of importing files and folders.
struct ImportResult {
    std::vector<Measurement> points;
    std::vector<std::string> files;   ///< files read
    std::vector<std::string> skipped; ///< files under the folders in no format we read
    std::vector<std::string> sources; ///< citations of the files read (see source_citation)
};

/// Imports every path: files with `format`, folders walked recursively (sorted) with Auto,
/// skipping files in no known format. Throws InputError on malformed files, and on a file given
/// by name whose format cannot be told.
[[nodiscard]] ImportResult import_paths(const std::vector<std::filesystem::path>& paths,
                                        Format format, const ImportOptions& options = {});

/// "owner/repo@commit:path/in/repo" for a file under a folder with a SOURCE.md naming the
/// repository ("- Repository: owner/repo") and commit ("- Commit: <hex>"), as in the data
/// folders of docs/calibration.md, "Measurement data"; otherwise the path as given.
[[nodiscard]] std::string source_citation(const std::filesystem::path& path);

} // namespace gpuplan::calib
