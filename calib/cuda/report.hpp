#pragma once
/// What gpuplan-calib measured and how it is written down: one Record per measurement, the
/// Environment it ran in, and two renderings: a points YAML file (`schema: 1`, `sources:`,
/// `points:`) that hwdb::parse_point_set reads, so `gpuplan calib fit|validate` take it as it
/// is, and a CSV with every measurement and its power and clock samples. Plain C++; needs no GPU.
///
/// The points use exactly the flow-mapping format of hwdb::point_to_yaml (report_test.cpp holds
/// the two together). Measurements that have no operator class in schema 1 (launch overhead,
/// L2 bandwidth, host copies, all-to-all) and the per-point power and clocks appear in the YAML
/// as comments and in the CSV as columns.

#include <string>
#include <vector>

namespace gpuplan::calib::bench {

/// NVML samples taken while one measurement ran. samples == 0: none (NVML absent, or the
/// measurement was shorter than the sampling interval and no sample fell near it).
struct PowerStats {
    int samples = 0;
    double mean_w = 0; ///< board power, watts
    double max_w = 0;
    double sm_clock_mhz = 0;  ///< mean SM clock
    double mem_clock_mhz = 0; ///< mean memory clock
    double max_temp_c = 0;    ///< hottest GPU temperature seen
};

/// One measurement. For model points the fields mean what model::Measurement's do (shape
/// fields that do not apply stay 0); op_class is then one of gemm, attention_decode,
/// memory_bound, all_reduce, send_recv. Extras (point == false) use their own op_class names:
/// launch, l2, host_copy, all_to_all.
struct Record {
    bool point = true;    ///< true: written to `points:`; false: a comment and a CSV row only
    std::string op_class; ///< schema class (points) or extra kind
    std::string op;       ///< e.g. "hbm_read", "qkv_proj", "paged_decode_proxy"
    std::string model;    ///< catalog model the shape comes from ("" when none); CSV only
    double m = 0, n = 0, k = 0;
    int batch = 0;
    double tokens = 0;
    double context = 0;
    int heads = 0, kv_heads = 0, head_dim = 0;
    double bytes = 0; ///< memory-bound: read + written; collectives and copies: message
    std::string dtype = "bf16";
    std::string gpu;   ///< the GPU name the file is written for (--gpu-name or CUDA's)
    int tp = 1;        ///< GEMM/attention: TP degree of the shard; collectives: GPUs
    std::string link;  ///< collectives: hwdb link name ("" unknown)
    double time_s = 0; ///< median time of one call
    double min_s = 0;  ///< fastest group
    double max_s = 0;  ///< slowest group
    int calls = 0;     ///< timed calls
    double rate = 0;   ///< derived throughput in rate_unit (GB/s, TFLOPS, TOPS, ...)
    std::string rate_unit;
    PowerStats power;
};

/// Where and how the measurements were taken. Holds no host name.
struct Environment {
    std::string tool_version;     ///< gpuplan-calib's version
    std::string gpu_name;         ///< the name points carry (--gpu-name, else the CUDA name)
    std::string cuda_device_name; ///< cudaDeviceProp::name
    int device_index = 0;
    int cc_major = 0, cc_minor = 0;
    int sm_count = 0;
    double memory_bytes = 0; ///< total device memory
    double l2_bytes = 0;
    std::string driver_version;     ///< NVML's driver version string, "" without NVML
    int cuda_driver_version = 0;    ///< cudaDriverGetVersion, e.g. 12080
    int cuda_runtime_version = 0;   ///< cudaRuntimeGetVersion
    long long cublaslt_version = 0; ///< cublasLtGetVersion
    int nccl_version = 0;           ///< ncclGetVersion when NCCL was loaded, else 0
    int gpu_count = 0;              ///< CUDA devices visible
    double max_sm_clock_mhz = 0;    ///< NVML maximum clocks (0 unknown)
    double max_mem_clock_mhz = 0;
    double power_limit_w = 0;       ///< NVML enforced power limit (0 unknown)
    std::string power_source;       ///< how power was read ("instant", "1 s average", "none")
    std::string date_utc;           ///< ISO 8601, seconds, "Z"
    std::string command;            ///< the command line, arguments quoted where needed
    std::string output_file;        ///< file name (no folder) the YAML is written to; each point
                                    ///< names it with its line, "" for neither
    std::string mode;               ///< "full" or "quick"
    double wall_s = 0;              ///< how long the run took
    std::vector<std::string> notes; ///< skipped sections and points, and why
};

/// The points YAML text. Deterministic for given input.
[[nodiscard]] std::string to_points_yaml(const Environment& env,
                                         const std::vector<Record>& records);

/// The CSV text: a header row and one row per record, points and extras alike.
[[nodiscard]] std::string to_csv(const std::vector<Record>& records);

/// One point as a YAML flow mapping, in hwdb::point_to_yaml's format (no trailing newline).
/// source is "gpuplan-calib", timing "kernel"; `file` and `row` (its line, 1-based) are
/// written when given, so that fit reports can point at the line.
[[nodiscard]] std::string point_flow_yaml(const Record& r, const std::string& file = "",
                                          int row = 0);

/// The one-line provenance string that goes into `sources:` (GPU, versions, date, command).
[[nodiscard]] std::string provenance_line(const Environment& env);

/// "NVIDIA H200" -> "nvidia-h200": lower case, runs of other characters as one '-'.
[[nodiscard]] std::string slug(const std::string& name);

/// Creates the parent folder and writes `text` to `path` with hwdb::write_text_file (temporary
/// file renamed into place). Throws InputError when it cannot.
void write_file_atomically(const std::string& path, const std::string& text);

} // namespace gpuplan::calib::bench
