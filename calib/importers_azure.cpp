// Azure/AI-benchmarking-guide result pages, Azure_Results/ND_<VM>_results.md (Markdown; the
// benchmark scripts under Benchmarks/{NVIDIA,AMD} say what each table is):
// - "GEMM CuBLASLt" / "GEMM HipBLASLt": | m | n | k | TFLOPS |, one FP8 (E4M3) GEMM call of
//   cuBLASLt (SuperBench cublaslt_gemm) or hipblaslt-bench, TFLOPS = 2 m n k / time: a GEMM
//   [m, k] x [k, n], time = 2 m n k / TFLOPS. A table whose heading or text says FP4 (GB300)
//   is FP4 E2M1 with a scale format the page does not state; it is taken as NVFP4.
// - "HBM Bandwidth": BabelStream's Copy, Mul, Add, Triad, Dot in TB/s. The scripts run the
//   default build (no array-size option), i.e. 2^25 doubles per array; Copy and Mul read one
//   array and write one, Add and Triad read two and write one, Dot reads two: bytes = arrays x
//   2^25 x 8, time = bytes / bandwidth (at 268 MB per array the memory curve is at its plateau,
//   so the size matters little).
// - "NCCL Bandwidth" / "RCCL Bandwidth": | size label | busbw GB/s | of all_reduce_perf (in
//   place, float32 sum) over the VM's GPUs. The labels are the harness's rounded names of the
//   powers of two 2^10 ... 2^33 ("65K" = 2^16, "132K" = 2^17), so the size is the nearest
//   power of two; busbw = algbw x 2(n-1)/n, so time = size x 2(n-1)/n / busbw.
// The flash-attention table (forward + backward at one shape) and the copy-engine tables are not
// kernel times of a class the model has, and are not imported. The VM in the file name gives
// the GPU, the number of GPUs in the all-reduce and the link it ran over.
#include "calib/importers_detail.hpp"

#include "hwdb/file_io.hpp"
#include "model/error.hpp"

#include <array>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>

namespace gpuplan::calib::detail {
namespace {

struct Vm {
    const char* prefix; ///< file name prefix
    const char* gpu;    ///< hwdb accelerator (or the GPU's name when it has none)
    int gpus;           ///< GPUs in the VM, i.e. in the all-reduce
    const char* link;   ///< hwdb interconnect of the all-reduce
};

// Azure VM sizes: ND H100 v5 / ND H200 v5 / ND MI300X v5 are 8-GPU HGX / UBB nodes (NVSwitch,
// Infinity Fabric); ND GB200 v6 / ND GB300 v6 expose 4 GPUs per VM (the NCCL script runs
// 4-GPU rings there).
constexpr std::array<Vm, 5> kVms{{
    {"ND_H100_v5", "h100-sxm", 8, "nvswitch-nvlink4"},
    {"ND_H200_v5", "h200-sxm", 8, "nvswitch-nvlink4"},
    {"ND_MI300X_v5", "mi300x", 8, "infinity-fabric"},
    {"ND_GB200_v6", "gb200", 4, "nvswitch-nvl72"},
    {"ND_GB300_v6", "gb300", 4, "nvswitch-nvl72"},
}};

bool number_of(const std::string& s, double& v) {
    if (s.empty()) {
        return false;
    }
    char* end = nullptr;
    v = std::strtod(s.c_str(), &end);
    return end == s.c_str() + s.size() && std::isfinite(v);
}

// "65K" -> 2^16: the nearest power of two to the label's value (K, M, G = 2^10, 2^20, 2^30).
bool size_of(const std::string& label, double& bytes) {
    if (label.size() < 2) {
        return false;
    }
    const char unit = label.back();
    const double scale = unit == 'K'   ? 1024.0
                         : unit == 'M' ? 1048576.0
                         : unit == 'G' ? 1073741824.0
                                       : 0.0;
    double v = 0;
    if (scale == 0 || !number_of(label.substr(0, label.size() - 1), v) || v <= 0) {
        return false;
    }
    bytes = std::exp2(std::round(std::log2(v * scale)));
    return true;
}

} // namespace

std::vector<Measurement> import_azure_results(const std::filesystem::path& path,
                                              const ImportOptions& o) {
    const std::string name = path.filename().string();
    const Vm* vm = nullptr;
    for (const auto& v : kVms) {
        if (name.rfind(v.prefix, 0) == 0) {
            vm = &v;
        }
    }
    if (!vm && o.gpu.empty()) {
        throw InputError(path.string() +
                         ": cannot tell the VM from the file name (expected ND_H100_v5, "
                         "ND_H200_v5, ND_MI300X_v5, ND_GB200_v6 or ND_GB300_v6 ...); pass --gpu");
    }
    const std::string gpu = gpu_or(o, vm ? vm->gpu : "", path);
    const int group = vm ? vm->gpus : 8;
    const std::string link = vm ? vm->link : "";
    enum class Section { None, Gemm, Hbm, AllReduce } section = Section::None;
    std::string gemm_op;
    std::string gemm_type = "fp8";
    std::istringstream in(hwdb::read_text_file(path, "benchmark results page"));
    std::string line;
    int line_no = 0;
    std::vector<Measurement> out;
    auto point = [&](OpClass c, std::string op) {
        Measurement m;
        m.op_class = c;
        m.op = std::move(op);
        m.source = "azure-bench";
        m.source_file = path.string();
        m.row = line_no;
        m.gpu = gpu;
        return m;
    };
    auto fail = [&](const std::string& what) {
        throw InputError(path.string() + ":" + std::to_string(line_no) + ":1: " + what);
    };
    while (std::getline(in, line)) {
        ++line_no;
        if (!line.empty() && line.back() == '\r') {
            line.pop_back();
        }
        if (line.rfind("#", 0) == 0) {
            section = Section::None;
            if (line.find("GEMM") != std::string::npos) {
                section = Section::Gemm;
                gemm_type = line.find("FP4") != std::string::npos ? "nvfp4" : "fp8";
                gemm_op = line.find("Hipblas") != std::string::npos ||
                                  line.find("HipBLAS") != std::string::npos
                              ? "hipblaslt_fp8"
                              : "cublaslt_fp8";
            } else if (line.find("HBM Bandwidth") != std::string::npos) {
                section = Section::Hbm;
            } else if (line.find("CCL Bandwidth") != std::string::npos) {
                section = Section::AllReduce;
            }
            continue;
        }
        if (section == Section::Gemm && line.rfind("|", 0) != 0 &&
            line.find("FP4") != std::string::npos) {
            gemm_type =
                "nvfp4"; // "... (best representation ...), FP4, and ..." (scale format unstated)
        }
        if (section == Section::None || line.rfind("|", 0) != 0) {
            continue;
        }
        const auto c = markdown_cells(line);
        if (section == Section::Gemm) {
            double m = 0, n = 0, k = 0, tflops = 0;
            if (c.size() < 4 || !number_of(c[0], m) || !number_of(c[1], n) || !number_of(c[2], k)) {
                continue; // header and separator rows
            }
            if (!number_of(c[3], tflops) || m <= 0 || n <= 0 || k <= 0 || tflops <= 0) {
                fail("expected m, n, k and a positive TFLOPS figure, found '" + line + "'");
            }
            const std::string op =
                gemm_type == "fp8" ? gemm_op : gemm_op.substr(0, gemm_op.size() - 3) + "fp4";
            Measurement p = gemm_point(point(OpClass::Gemm, op), op, m, k, n, gemm_type);
            p.time_s = 2.0 * m * n * k / (tflops * 1e12);
            out.push_back(std::move(p));
        } else if (section == Section::Hbm) {
            static const std::array<std::pair<const char*, int>, 5> kArrays{
                {{"Copy", 2}, {"Mul", 2}, {"Add", 3}, {"Triad", 3}, {"Dot", 2}}};
            double tbs = 0;
            for (const auto& [kernel, arrays] : kArrays) {
                if (c.size() >= 2 && c[0] == kernel) {
                    if (!number_of(c[1], tbs) || tbs <= 0) {
                        fail("expected a positive TB/s figure for " + c[0] + ", found '" + c[1] +
                             "'");
                    }
                    const double bytes = arrays * 33554432.0 * 8.0; // 2^25 doubles per array
                    Measurement p =
                        stream_point(point(OpClass::MemoryBound, ""),
                                     std::string("babelstream_") + kernel, bytes, "fp32");
                    p.time_s = bytes / (tbs * 1e12);
                    out.push_back(std::move(p));
                }
            }
        } else {
            double bytes = 0, busbw = 0;
            if (c.size() < 2 || !size_of(c[0], bytes)) {
                continue; // header and separator rows
            }
            if (!number_of(c[1], busbw) || busbw <= 0) {
                fail("expected a positive bus bandwidth in GB/s, found '" + c[1] + "'");
            }
            Measurement p = point(OpClass::AllReduce, "all_reduce");
            p.bytes = bytes;
            p.tp = group;
            p.link = link;
            p.dtype = "fp32";
            p.time_s = bytes * 2.0 * (group - 1) / group / (busbw * 1e9);
            out.push_back(std::move(p));
        }
    }
    return out;
}

} // namespace gpuplan::calib::detail
