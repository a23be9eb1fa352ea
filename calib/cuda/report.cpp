#include "calib/cuda/report.hpp"

#include "hwdb/file_io.hpp"
#include "model/error.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>

namespace gpuplan::calib::bench {
namespace {

constexpr const char* kSource = "gpuplan-calib";

// The number format of hwdb::point_to_yaml (hwdb/profile_loader.cpp): 10 significant digits.
std::string format_g(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.10g", v);
    return buf;
}

std::string format_short(double v, int digits = 4) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return buf;
}

// A YAML double-quoted scalar.
std::string quoted(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
        }
        out += c;
    }
    return out + "\"";
}

// hwdb::point_to_yaml's scalar rule: names stay plain, anything else is double-quoted.
std::string scalar(const std::string& s) {
    const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '_' || c == '.' || c == '/';
    });
    if (plain && !(s[0] >= '0' && s[0] <= '9') && s != "true" && s != "false" && s != "null") {
        return s;
    }
    return quoted(s);
}

std::string time_text(double s) {
    if (s >= 1e-3) {
        return format_short(s * 1e3) + " ms";
    }
    return format_short(s * 1e6) + " us";
}

std::string power_text(const PowerStats& p) {
    if (p.samples == 0) {
        return "no power sample";
    }
    return "power mean " + format_short(p.mean_w) + " W, max " + format_short(p.max_w) + " W, SM " +
           format_short(p.sm_clock_mhz) + " MHz, mem " + format_short(p.mem_clock_mhz) + " MHz, " +
           std::to_string(p.samples) + (p.samples == 1 ? " sample" : " samples");
}

std::string shape_text(const Record& r) {
    std::string s;
    auto add = [&s](const char* key, double v) {
        if (v != 0) {
            s += std::string(s.empty() ? "" : " ") + key + "=" + format_g(v);
        }
    };
    add("m", r.m);
    add("n", r.n);
    add("k", r.k);
    add("batch", r.batch);
    add("context", r.context);
    add("heads", r.heads);
    add("kv_heads", r.kv_heads);
    if (r.bytes > 0) {
        s += std::string(s.empty() ? "" : " ") + "bytes=" + format_g(r.bytes);
    }
    if (r.tp != 1) {
        s += " tp=" + std::to_string(r.tp);
    }
    return s;
}

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) {
        return s;
    }
    std::string out = "\"";
    for (char c : s) {
        if (c == '"') {
            out += '"';
        }
        out += c;
    }
    return out + "\"";
}

std::string version_text(int v) {
    // CUDA versions are 1000 × major + 10 × minor.
    if (v <= 0) {
        return "unknown";
    }
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

} // namespace

std::string point_flow_yaml(const Record& r, const std::string& file, int row) {
    std::string s = "{op_class: " + r.op_class;
    auto num = [&s](const char* key, double v) {
        if (v != 0) {
            s += std::string(", ") + key + ": " + format_g(v);
        }
    };
    if (!r.op.empty()) {
        s += ", op: " + scalar(r.op);
    }
    num("m", r.m);
    num("k", r.k);
    num("n", r.n);
    num("batch", r.batch);
    num("tokens", r.tokens);
    num("context", r.context);
    num("heads", r.heads);
    num("kv_heads", r.kv_heads);
    num("head_dim", r.head_dim);
    if (r.bytes > 0) {
        s += ", bytes: " + format_g(r.bytes) + " B";
    }
    s += ", dtype: " + scalar(r.dtype);
    if (!r.gpu.empty()) {
        s += ", gpu: " + scalar(r.gpu);
    }
    if (r.tp != 1) {
        s += ", tp: " + std::to_string(r.tp);
    }
    if (!r.link.empty()) {
        s += ", link: " + scalar(r.link);
    }
    s += ", timing: kernel";
    s += ", time: " + format_g(r.time_s * 1e6) + " us";
    s += std::string(", source: ") + kSource;
    if (!file.empty()) {
        s += ", file: " + scalar(file);
    }
    if (row > 0) {
        s += ", row: " + std::to_string(row);
    }
    return s + "}";
}

std::string provenance_line(const Environment& env) {
    std::string s = kSource;
    s += " " + env.tool_version + " (CUDA microbenchmark, " + env.mode + ") on " +
         env.cuda_device_name;
    s += " (sm_" + std::to_string(env.cc_major) + std::to_string(env.cc_minor) + ", " +
         std::to_string(env.sm_count) + " SMs, " +
         format_short(env.memory_bytes / (1024.0 * 1024 * 1024)) + " GiB)";
    s += "; driver " + (env.driver_version.empty() ? std::string("unknown") : env.driver_version) +
         " (CUDA " + version_text(env.cuda_driver_version) + "), runtime " +
         version_text(env.cuda_runtime_version) + ", cuBLASLt " +
         std::to_string(env.cublaslt_version);
    s += "; " + env.date_utc + "; command: " + env.command;
    return s;
}

std::string to_points_yaml(const Environment& env, const std::vector<Record>& records) {
    std::ostringstream o;
    o << "# Measured by gpuplan-calib (calib/cuda/README.md): a points file for\n"
      << "# `gpuplan calib fit|validate` (schema 1: sources + points; docs/calibration.md).\n"
      << "# gpu: " << env.gpu_name << " (CUDA device " << env.device_index << ": "
      << env.cuda_device_name << ")\n"
      << "# compute capability " << env.cc_major << "." << env.cc_minor << ", " << env.sm_count
      << " SMs, memory " << format_short(env.memory_bytes / (1024.0 * 1024 * 1024)) << " GiB, L2 "
      << format_short(env.l2_bytes / (1024.0 * 1024)) << " MiB, " << env.gpu_count
      << " GPU(s) visible\n"
      << "# driver " << (env.driver_version.empty() ? "unknown (no NVML)" : env.driver_version)
      << ", driver CUDA " << version_text(env.cuda_driver_version) << ", runtime CUDA "
      << version_text(env.cuda_runtime_version) << ", cuBLASLt " << env.cublaslt_version
      << ", NCCL "
      << (env.nccl_version > 0 ? std::to_string(env.nccl_version) : std::string("not used")) << "\n"
      << "# clocks: max SM " << format_short(env.max_sm_clock_mhz) << " MHz, max memory "
      << format_short(env.max_mem_clock_mhz) << " MHz; power limit "
      << format_short(env.power_limit_w) << " W; power read as " << env.power_source
      << " (0 = unknown)\n"
      << "# date: " << env.date_utc << "; wall time " << format_short(env.wall_s) << " s; mode "
      << env.mode << "\n"
      << "# command: " << env.command << "\n"
      << "# timing: CUDA events around groups of back-to-back calls; time = median over groups\n"
      << "# of the time per call; cold L2 (inputs rotate over buffers larger than L2) unless "
         "noted.\n"
      << "schema: 1\n"
      << "sources:\n"
      << "  - " << quoted(provenance_line(env)) << "\n";

    std::size_t points = 0;
    for (const auto& r : records) {
        points += r.point ? 1 : 0;
    }
    if (points == 0) {
        o << "points: []\n";
    } else {
        o << "points:\n";
        // The line a point is written on, for its `row:`; the header above has no line breaks
        // inside values, so counting newlines is exact.
        const std::string head = o.str();
        int line = static_cast<int>(std::count(head.begin(), head.end(), '\n'));
        for (const auto& r : records) {
            if (r.point) {
                ++line;
                o << "  - "
                  << point_flow_yaml(r, env.output_file, env.output_file.empty() ? 0 : line)
                  << "  # ";
                if (!r.rate_unit.empty()) {
                    o << format_short(r.rate) << " " << r.rate_unit << "; ";
                }
                o << power_text(r.power) << "\n";
            }
        }
    }
    if (points != records.size()) {
        o << "# Measurements without an operator class in schema 1 (also in the CSV next to this "
             "file):\n";
        for (const auto& r : records) {
            if (!r.point) {
                const std::string shape = shape_text(r);
                o << "#   " << r.op_class << " " << r.op << (shape.empty() ? "" : " " + shape)
                  << ": " << time_text(r.time_s);
                if (!r.rate_unit.empty()) {
                    o << " (" << format_short(r.rate) << " " << r.rate_unit << ")";
                }
                o << "; " << power_text(r.power) << "\n";
            }
        }
    }
    if (!env.notes.empty()) {
        o << "# Notes:\n";
        for (const auto& n : env.notes) {
            o << "#   " << n << "\n";
        }
    }
    return o.str();
}

std::string to_csv(const std::vector<Record>& records) {
    std::ostringstream o;
    o << "kind,op_class,op,model,m,n,k,batch,tokens,context,heads,kv_heads,head_dim,bytes,dtype,"
         "gpu,tp,"
         "link,time_s,min_s,max_s,calls,rate,rate_unit,power_mean_w,power_max_w,sm_clock_mhz,"
         "mem_clock_mhz,max_temp_c,power_samples\n";
    for (const auto& r : records) {
        o << (r.point ? "point" : "extra") << ',' << csv_field(r.op_class) << ',' << csv_field(r.op)
          << ',' << csv_field(r.model) << ',' << format_g(r.m) << ',' << format_g(r.n) << ','
          << format_g(r.k) << ',' << r.batch << ',' << format_g(r.tokens) << ','
          << format_g(r.context) << ',' << r.heads << ',' << r.kv_heads << ',' << r.head_dim << ','
          << format_g(r.bytes) << ',' << csv_field(r.dtype) << ',' << csv_field(r.gpu) << ','
          << r.tp << ',' << csv_field(r.link) << ',' << format_g(r.time_s) << ','
          << format_g(r.min_s) << ',' << format_g(r.max_s) << ',' << r.calls << ','
          << format_short(r.rate, 6) << ',' << csv_field(r.rate_unit) << ','
          << format_short(r.power.mean_w, 6) << ',' << format_short(r.power.max_w, 6) << ','
          << format_short(r.power.sm_clock_mhz, 6) << ',' << format_short(r.power.mem_clock_mhz, 6)
          << ',' << format_short(r.power.max_temp_c, 4) << ',' << r.power.samples << '\n';
    }
    return o.str();
}

std::string slug(const std::string& name) {
    std::string out;
    for (char c : name) {
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
            out += c;
        } else if (c >= 'A' && c <= 'Z') {
            out += static_cast<char>(c - 'A' + 'a');
        } else if (!out.empty() && out.back() != '-') {
            out += '-';
        }
    }
    while (!out.empty() && out.back() == '-') {
        out.pop_back();
    }
    return out.empty() ? "gpu" : out;
}

void write_file_atomically(const std::string& path, const std::string& text) {
    namespace fs = std::filesystem;
    const fs::path p(path);
    std::error_code ec;
    if (p.has_parent_path()) {
        fs::create_directories(p.parent_path(), ec);
        if (ec) {
            throw InputError(path + ": cannot create the folder '" + p.parent_path().string() +
                             "' (" + ec.message() + "); choose another --out");
        }
    }
    hwdb::write_text_file(p, text);
}

} // namespace gpuplan::calib::bench
