#pragma once
/// Internal to the importers (calib/importers*.cpp): the point constructors they share and the
/// readers of the kernel-level data sets kept in their own files. Not part of the calib API.

#include "calib/csv.hpp"
#include "calib/importers.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan::calib::detail {

/// A point located at a CSV row of `t`, measured on `gpu`, tagged with the data set `source`.
[[nodiscard]] Measurement base(const CsvTable& t, const CsvRow& r, const std::string& source,
                               const std::string& gpu);

/// The point as a GEMM [rows, k] x [k, n] of `dtype`.
[[nodiscard]] Measurement gemm_point(Measurement m, std::string op, double rows, double k, double n,
                                     std::string dtype);

/// The point as a memory-bound kernel moving `bytes` (read + written).
[[nodiscard]] Measurement stream_point(Measurement m, std::string op, double bytes,
                                       std::string dtype);

/// The trimmed cells of a Markdown table row "| a | b |" (text before the first '|' and after
/// the last is dropped) (calib/importers_kernel_sets.cpp).
[[nodiscard]] std::vector<std::string> markdown_cells(const std::string& line);

/// The GPU a CSV names in a "# gpu: NAME" comment (the last one), or "" when it names none.
[[nodiscard]] std::string comment_gpu(const CsvTable& t);

/// `options.gpu` when given, else `inferred`; throws InputError naming `file` when both are empty.
[[nodiscard]] std::string gpu_or(const ImportOptions& options, const std::string& inferred,
                                 const std::filesystem::path& file);

/// The format of a file of the kernel-level sets below from its path and first line, or nullopt
/// (calib/importers_kernel_sets.cpp).
[[nodiscard]] std::optional<Format> detect_kernel_set_format(const std::filesystem::path& path,
                                                             std::string_view first_line);

/// "owner/repo@commit:path" for the file at `rel_path` (relative to the folder of a SOURCE.md
/// with text `source_md`), or "" when the SOURCE.md names no repository and commit. It reads
/// "- Repository: owner/repo" and "- Commit: <hex>"; a "- Cite as owner/repo@commit:..." line
/// overrides both; a bullet "- **<40-hex commit>** ... `path/prefix`" gives the commit of the
/// files under the prefixes it quotes (data sets copied from two commits). A file named
/// NAME.excerpt.EXT is a line excerpt of NAME.EXT and cites it (calib/importers_kernel_sets.cpp).
[[nodiscard]] std::string citation_from_source_md(std::string_view source_md,
                                                  const std::string& rel_path);

// tmoreau89/triton branch triton-cublas-bench (calib/importers_triton_cublas.cpp).
[[nodiscard]] std::vector<Measurement>
import_triton_cublas(const CsvTable& t, const std::filesystem::path& path, const ImportOptions& o);
// NVIDIA/cudnn-frontend SDPA and norm benchmarks (calib/importers_cudnn.cpp).
[[nodiscard]] std::vector<Measurement>
import_cudnn_sdpa(const CsvTable& t, const std::filesystem::path& path, const ImportOptions& o);
[[nodiscard]] std::vector<Measurement>
import_cudnn_norms(const CsvTable& t, const std::filesystem::path& path, const ImportOptions& o);
// Azure/AI-benchmarking-guide result pages, Markdown (calib/importers_azure.cpp).
[[nodiscard]] std::vector<Measurement> import_azure_results(const std::filesystem::path& path,
                                                            const ImportOptions& o);
// ROCm/aiter tuned GEMM tables (calib/importers_aiter.cpp).
[[nodiscard]] std::vector<Measurement>
import_aiter_gemm(const CsvTable& t, const std::filesystem::path& path, const ImportOptions& o);
// ROCm/aiter tuned fused-MoE tables (calib/importers_aiter.cpp).
[[nodiscard]] std::vector<Measurement>
import_aiter_moe(const CsvTable& t, const std::filesystem::path& path, const ImportOptions& o);
// Fused-MoE kernel times transcribed from benchmark posts (calib/importers_fused_moe.cpp).
[[nodiscard]] std::vector<Measurement>
import_fused_moe(const CsvTable& t, const std::filesystem::path& path, const ImportOptions& o);
// pytorch/ao MoE-training kernel table, Markdown (calib/importers_torchao.cpp).
[[nodiscard]] std::vector<Measurement> import_torchao_moe(const std::filesystem::path& path,
                                                          const ImportOptions& o);

} // namespace gpuplan::calib::detail
