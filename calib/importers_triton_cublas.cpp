// tmoreau89/triton, branch triton-cublas-bench:
// python/triton_cublas_bench/<run>/<dtype>_results.csv with columns K,triton_tflops,cublas_tflops.
// Each row is one GEMM C[M,N] = A[M,K] B[K,N] with M = N = 8192 (fixed in
// bench_09_persistent_matmul.py and bench_10_block_scaled_matmul.py), timed with
// triton.testing.do_bench (CUDA events around the kernel), reported as TFLOPS = 2 M N K / time.
// cuBLAS is what serving engines call, so its figure is used; where cuBLAS 13.0 had no kernel
// (MXFP4, NVFP4: cublas_tflops = 0, a missing value, not a measurement) the Triton tutorial
// kernel's figure is used. The data set's runs are on one B200.
#include "calib/importers_detail.hpp"

#include "model/error.hpp"

#include <array>
#include <string>
#include <utility>

namespace gpuplan::calib::detail {

std::vector<Measurement> import_triton_cublas(const CsvTable& t, const std::filesystem::path& path,
                                              const ImportOptions& o) {
    constexpr double kMN = 8192.0;
    // File name prefix -> the data type the model knows. MXFP8 is FP8 E4M3 with one 8-bit scale
    // per 32 elements (8.25 bits): it runs at the FP8 tensor-core rate as a kernel class of its
    // own (model/gemm_class.hpp), as do MXFP4 and NVFP4 on the FP4 path.
    static const std::array<std::pair<const char*, const char*>, 5> kTypes{{
        {"fp16_", "fp16"},
        {"fp8_", "fp8"},
        {"mxfp8_", "mxfp8"},
        {"mxfp4_", "mxfp4"},
        {"nvfp4_", "nvfp4"},
    }};
    const std::string name = path.filename().string();
    std::string dtype, label;
    for (const auto& [prefix, type] : kTypes) {
        if (name.rfind(prefix, 0) == 0) {
            dtype = type;
            label = std::string(prefix).substr(0, std::string(prefix).size() - 1);
            break;
        }
    }
    if (dtype.empty()) {
        throw InputError(path.string() +
                         ": the file name must start with the data type (fp16_, fp8_, mxfp8_, "
                         "mxfp4_ or nvfp4_) as in triton_cublas_bench, found '" +
                         name + "'");
    }
    bool in_bench = false;
    for (const auto& part : path) {
        in_bench = in_bench || part == "triton_cublas_bench";
    }
    const std::string gpu = gpu_or(o, in_bench ? "b200" : "", path);
    const int ck = t.column("K");
    const int ct = t.column("triton_tflops");
    const int cc = t.column("cublas_tflops");
    std::vector<Measurement> out;
    for (const auto& r : t.rows) {
        const double k = t.number(r, ck);
        const double cublas = t.number(r, cc);
        const bool use_cublas = cublas > 0;
        const double tflops = use_cublas ? cublas : t.number(r, ct);
        if (k <= 0 || tflops <= 0) {
            t.fail(r, use_cublas ? cc : ct, "K and the throughput must be positive");
        }
        Measurement m =
            gemm_point(base(t, r, "triton-cublas", gpu),
                       (use_cublas ? "cublas_" : "triton_") + label, kMN, k, kMN, dtype);
        m.time_s = 2.0 * kMN * kMN * k / (tflops * 1e12);
        out.push_back(std::move(m));
    }
    return out;
}

} // namespace gpuplan::calib::detail
