#pragma once
/// The command line of gpuplan-calib. Parsing needs no GPU, so bad flags exit with code 2 on
/// any machine.

#include <string>
#include <vector>

namespace gpuplan::calib::bench {

/// The measurement sections, in the order they run.
inline const std::vector<std::string>& section_names() {
    static const std::vector<std::string> names{"launch",    "memory", "gemm",
                                                "attention", "host",   "nccl"};
    return names;
}

/// What the user asked for.
struct CalibOptions {
    bool help = false;
    bool quick = false;            ///< a subset of shapes and fewer repeats (under 2 minutes)
    std::string out;               ///< output YAML path; "" = ./<gpu>-measured.yaml
    std::string gpu_name;          ///< name written into every point; "" = the CUDA device name
    int device = 0;                ///< CUDA device index
    std::string link;              ///< hwdb link name for collective points ("" = unknown)
    std::vector<std::string> only; ///< sections to run (empty = all)
    double max_seconds = 0;        ///< stop starting new work after this long (0 = mode default)
    std::string command;           ///< the command line as typed (control characters replaced)
};

/// Parses argv. Throws UsageError with a one-line message for an unknown flag, a missing or bad
/// value, or an unknown section name.
[[nodiscard]] CalibOptions parse_options(int argc, const char* const* argv);

/// The --help text.
[[nodiscard]] std::string usage_text();

/// Whether `section` runs under these options.
[[nodiscard]] bool wants(const CalibOptions& o, const std::string& section);

/// The time limit in force: max_seconds, else 450 s (full) or 110 s (quick).
[[nodiscard]] double time_limit_s(const CalibOptions& o);

} // namespace gpuplan::calib::bench
