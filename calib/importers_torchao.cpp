// pytorch/ao (torchao) torchao/prototype/moe_training/README.md, "Kernel Microbenchmarks:
// Breakdown by Pass" (Markdown): one row per kernel of an MXFP8 MoE forward and backward pass at
// DeepSeek-V3 expert shapes on a B200 (1000 W limit), `Time (µs)` the kernel time. The rows of
// `torch._scaled_grouped_mm` whose purpose is a "2D-3D" grouped GEMM are one grouped GEMM each:
// input shape "(M, K) @ (G, K, N)", M token rows split over G groups (experts), each [M/G, K] x
// [K, N]: a grouped-GEMM point with M tokens, top_k 1, G experts and one matrix
// (model::routed_experts_kernel_time with mats = 1). MXFP8 is FP8 E4M3 with an e8m0 scale per
// 32 elements: the mxfp8 kernel class on the FP8 path, as the triton-cublas importer has it. Not
// imported: the "2D-2D" weight-gradient grouped GEMM (grouped along K, not along the rows), the
// quantization and scale-layout kernels (not GEMMs), and the "Autograd function" tables (forward
// plus backward, quantization included: not one kernel).
#include "calib/importers_detail.hpp"

#include "hwdb/file_io.hpp"
#include "model/error.hpp"

#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace gpuplan::calib::detail {
namespace {

// The numbers of "(131072, 7168) @ (8, 7168, 2048)" in order.
std::vector<double> numbers_in(const std::string& s) {
    std::vector<double> out;
    std::size_t i = 0;
    while (i < s.size()) {
        if (s[i] >= '0' && s[i] <= '9') {
            char* end = nullptr;
            out.push_back(std::strtod(s.c_str() + i, &end));
            i = static_cast<std::size_t>(end - s.c_str());
        } else {
            ++i;
        }
    }
    return out;
}

} // namespace

std::vector<Measurement> import_torchao_moe(const std::filesystem::path& path,
                                            const ImportOptions& o) {
    const std::string gpu = gpu_or(o, "b200", path);
    std::istringstream in(hwdb::read_text_file(path, "torchao MoE benchmark page"));
    std::string line;
    int line_no = 0;
    std::vector<Measurement> out;
    while (std::getline(in, line)) {
        ++line_no;
        if (line.rfind('|', 0) != 0 || line.find("_scaled_grouped_mm") == std::string::npos) {
            continue;
        }
        const std::vector<std::string> c = markdown_cells(line);
        // | Pass | Kernel | Purpose | Input Shape | Time (µs) | Efficiency |
        if (c.size() < 5 || c[2].find("2D-3D") == std::string::npos) {
            continue;
        }
        const std::vector<double> shape = numbers_in(c[3]);
        const std::vector<double> time = numbers_in(c[4]);
        if (shape.size() != 5 || time.size() != 1 || shape[1] != shape[3] || shape[2] < 1 ||
            time[0] <= 0) {
            throw InputError(path.string() + ":" + std::to_string(line_no) +
                             ": a 2D-3D grouped GEMM row needs the input shape '(M, K) @ (G, K, "
                             "N)' and a positive time in microseconds, found '" +
                             c[3] + "' and '" + c[4] + "'; check the table");
        }
        Measurement m;
        m.op_class = OpClass::GroupedGemm;
        m.op = "torchao_mxfp8_grouped_mm";
        m.dtype = "mxfp8";
        m.gpu = gpu;
        m.m = shape[0];
        m.k = shape[1];
        m.n = shape[4];
        m.experts = static_cast<int>(shape[2]);
        m.top_k = 1;
        m.matrices = 1;
        m.time_s = time[0] * 1e-6;
        m.source = "torchao";
        m.source_file = path.string();
        m.row = line_no;
        out.push_back(std::move(m));
    }
    return out;
}

} // namespace gpuplan::calib::detail
