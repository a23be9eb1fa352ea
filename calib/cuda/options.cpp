#include "calib/cuda/options.hpp"

#include "model/error.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string_view>

namespace gpuplan::calib::bench {
namespace {

// Budgets that keep a run within the limits (8 minutes full, 2 quick) with room for
// writing the file and for the slowest section overrunning its last point.
constexpr double kFullLimitS = 450.0;
constexpr double kQuickLimitS = 110.0;

std::string shell_word(std::string_view a) {
    std::string clean;
    for (char c : a) {
        clean += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
    }
    const bool plain =
        !clean.empty() && clean.find_first_of(" \"'\\$`*?;&|<>()") == std::string::npos;
    if (plain) {
        return clean;
    }
    std::string q = "'";
    for (char c : clean) {
        q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return q + "'";
}

int parse_int(const std::string& flag, const std::string& v, int min) {
    errno = 0;
    char* end = nullptr;
    const long x = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || end == nullptr || *end != '\0' || errno != 0 || x < min || x > 1'000'000) {
        throw UsageError(flag + " '" + v + "': expected a whole number of at least " +
                         std::to_string(min));
    }
    return static_cast<int>(x);
}

double parse_seconds(const std::string& flag, const std::string& v) {
    errno = 0;
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || end == nullptr || *end != '\0' || errno != 0 || !(x > 0) || x > 86400) {
        throw UsageError(flag + " '" + v + "': expected seconds, a number above 0 (e.g. 300)");
    }
    return x;
}

} // namespace

CalibOptions parse_options(int argc, const char* const* argv) {
    CalibOptions o;
    o.command = "gpuplan-calib";
    for (int i = 1; i < argc; ++i) {
        o.command += " " + shell_word(argv[i]);
    }
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        std::string value;
        bool has_value = false;
        if (arg.rfind("--", 0) == 0) {
            const auto eq = arg.find('=');
            if (eq != std::string::npos) {
                value = arg.substr(eq + 1);
                arg = arg.substr(0, eq);
                has_value = true;
            }
        }
        auto take_value = [&]() -> std::string {
            if (has_value) {
                return value;
            }
            if (i + 1 >= argc) {
                throw UsageError("option '" + arg + "' needs a value; see gpuplan-calib --help");
            }
            return argv[++i];
        };
        auto no_value = [&] {
            if (has_value) {
                throw UsageError("option '" + arg + "' takes no value; write it alone");
            }
        };
        if (arg == "-h" || arg == "--help") {
            no_value();
            o.help = true;
        } else if (arg == "--quick") {
            no_value();
            o.quick = true;
        } else if (arg == "--out" || arg == "-o") {
            o.out = take_value();
            if (o.out.empty()) {
                throw UsageError("--out needs a file name, e.g. --out h200-sxm-measured.yaml");
            }
        } else if (arg == "--gpu-name") {
            o.gpu_name = take_value();
            if (o.gpu_name.empty()) {
                throw UsageError(
                    "--gpu-name needs a name, e.g. --gpu-name h200-sxm (a hwdb accelerator name)");
            }
        } else if (arg == "--device") {
            o.device = parse_int("--device", take_value(), 0);
        } else if (arg == "--link") {
            o.link = take_value();
        } else if (arg == "--only") {
            const std::string list = take_value();
            std::size_t start = 0;
            while (start <= list.size()) {
                const auto comma = list.find(',', start);
                const std::string name = list.substr(
                    start, comma == std::string::npos ? std::string::npos : comma - start);
                const auto& known = section_names();
                if (std::find(known.begin(), known.end(), name) == known.end()) {
                    throw UsageError(
                        "--only: unknown section '" + name +
                        "'; use a comma list of launch, memory, gemm, attention, host, nccl");
                }
                o.only.push_back(name);
                if (comma == std::string::npos) {
                    break;
                }
                start = comma + 1;
            }
        } else if (arg == "--max-seconds") {
            o.max_seconds = parse_seconds("--max-seconds", take_value());
        } else {
            throw UsageError("unknown option '" + std::string(argv[i]) +
                             "'; see gpuplan-calib --help");
        }
    }
    return o;
}

std::string usage_text() {
    return "usage: gpuplan-calib [--quick] [--out FILE] [--gpu-name NAME] [--device N]\n"
           "                     [--link NAME] [--only SECTIONS] [--max-seconds S]\n"
           "\n"
           "Measures one CUDA GPU (HBM bandwidth, cuBLASLt GEMMs in bf16/fp16/fp8/int8 over\n"
           "Llama-3.1 8B/70B layer shapes, a paged-KV decode attention proxy, launch overhead,\n"
           "pinned host copies, NCCL collectives when several GPUs are present; NVML power and\n"
           "clocks throughout) and writes a points YAML for `gpuplan calib fit` plus a CSV.\n"
           "\n"
           "  --quick            a subset of shapes and fewer repeats (under 2 minutes)\n"
           "  --out FILE         output YAML (default ./<gpu>-measured.yaml); the CSV goes\n"
           "                     next to it with the extension .csv\n"
           "  --gpu-name NAME    GPU name written into every point, ideally the hwdb name\n"
           "                     (e.g. h200-sxm); default: the CUDA device name\n"
           "  --device N         CUDA device to measure (default 0)\n"
           "  --link NAME        hwdb link name for collective points (e.g. nvswitch-nvlink4)\n"
           "  --only SECTIONS    comma list of launch, memory, gemm, attention, host, nccl\n"
           "  --max-seconds S    start no new measurement after S seconds (default 450, quick "
           "110)\n"
           "  -h, --help         this text\n"
           "\n"
           "Exit codes: 0 done, 1 a measurement failed (the file holds the rest), 2 bad flags,\n"
           "3 no CUDA GPU found.\n";
}

bool wants(const CalibOptions& o, const std::string& section) {
    return o.only.empty() || std::find(o.only.begin(), o.only.end(), section) != o.only.end();
}

double time_limit_s(const CalibOptions& o) {
    if (o.max_seconds > 0) {
        return o.max_seconds;
    }
    return o.quick ? kQuickLimitS : kFullLimitS;
}

} // namespace gpuplan::calib::bench
