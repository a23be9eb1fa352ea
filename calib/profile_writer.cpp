#include "calib/profile_writer.hpp"

#include "model/error.hpp"
#include "model/precision.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <sstream>

namespace gpuplan::calib {
namespace {

// A number as the profile YAML writes it: `digits` significant digits (printf's %g).
std::string num(double v, int digits = 6) {
    return fmt::format("{:.{}g}", v, digits);
}

// A time with a readable unit.
std::string seconds(double s) {
    if (s == 0) {
        return "0 us";
    }
    if (s < 1e-3) {
        return num(s * 1e6) + " us";
    }
    if (s < 1) {
        return num(s * 1e3) + " ms";
    }
    return num(s) + " s";
}

std::string bytes(double b) {
    if (b == 0) {
        return "0 B";
    }
    if (b >= 1024.0 * 1024.0) {
        return num(b / (1024.0 * 1024.0)) + " MiB";
    }
    if (b >= 1024.0) {
        return num(b / 1024.0) + " KiB";
    }
    return num(b) + " B";
}

std::string rate(double bps) {
    return num(bps / 1e9) + " GB/s";
}

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

std::string curve(const model::SaturatingCurve& c, bool half_in_bytes) {
    return "{max: " + num(c.max) + ", half: " + (half_in_bytes ? bytes(c.half) : num(c.half)) + "}";
}

hwdb::ResidualSummary summary(const std::string& cls, bool fitted, const ErrorStats& train,
                              const ErrorStats& held, const ErrorStats& def,
                              const std::vector<PointError>& worst) {
    hwdb::ResidualSummary r;
    r.op_class = cls;
    r.fitted = fitted;
    r.train_points = train.n;
    r.held_out_points = held.n;
    r.train_mape = train.mape;
    r.mape = held.mape;
    r.median = held.median;
    r.p90 = held.p90;
    r.worst = held.max;
    if (!worst.empty()) {
        const auto& w = worst.front();
        r.worst_point = w.point.source_file + ":" + std::to_string(w.point.row) + " " + w.point.op +
                        " (measured " + seconds(w.point.time_s) + ", predicted " +
                        seconds(w.predicted_s) + ")";
    }
    r.default_mape = def.mape;
    r.default_p90 = def.p90;
    return r;
}

} // namespace

hwdb::ProfileFile make_profile_file(const FitReport& fit, const model::AcceleratorSpec& gpu,
                                    const ProfileMeta& meta,
                                    std::vector<model::Measurement> points) {
    if (fit.held_out.n < 1) {
        throw InvalidArgument("no measured shape was held out, so the profile's error band "
                              "would read 0 %; measure more shapes or lower --holdout-every "
                              "(at least 2)");
    }
    hwdb::ProfileFile f;
    f.profile = fit.profile;
    f.profile.name = meta.name;
    f.gpu = gpu.name;
    f.architecture = gpu.architecture;
    f.description = meta.description;
    f.command = meta.command;
    f.date = meta.date;
    f.sources = meta.sources;
    f.profile.provenance.kind = meta.kind;
    f.profile.provenance.description = meta.description;
    f.profile.provenance.file = "";
    std::string classes;
    int train = 0;
    for (const auto& c : fit.classes) {
        classes += (classes.empty() ? "" : ", ") + std::string(model::to_string(c.op_class));
        train += c.train.n;
        f.residuals.push_back(summary(model::to_string(c.op_class), c.fitted, c.train, c.held_out,
                                      c.default_held_out, c.worst));
    }
    ErrorStats all_train;
    all_train.n = train;
    double sum = 0;
    for (const auto& c : fit.classes) {
        sum += c.train.mape * c.train.n;
    }
    all_train.mape = train > 0 ? sum / train : 0.0;
    f.residuals.push_back(summary("all", true, all_train, fit.held_out, fit.default_held_out, {}));
    for (const auto& c : fit.kernel_classes) {
        auto r = summary(model::to_string(c.op_class), c.fitted, c.train, c.held_out,
                         c.default_held_out, c.worst);
        r.kernel_class = c.kernel_class ? std::string(model::to_string(*c.kernel_class)) : "";
        f.residuals.push_back(std::move(r));
    }
    // The band describes the error of a sum of kernels (a step), so the held-out errors are
    // weighted by measured time; the per-kernel figures are in the residuals.
    f.profile.error_band.mape = fit.held_out_time_weighted.mape;
    f.profile.error_band.p90 = fit.held_out_time_weighted.p90;
    f.profile.error_band.points = fit.held_out.n;
    const std::string per_kernel = fmt::format("per kernel: MAPE {:.1f}%, P90 {:.1f}%",
                                               fit.held_out.mape * 100, fit.held_out.p90 * 100);
    f.profile.error_band.validated_on = "time-weighted |relative error| on held-out (1 in " +
                                        std::to_string(fit.holdout_every) + " shapes) " + classes +
                                        " times on " + gpu.name + "; " + per_kernel;
    f.comm_links = fit.comm_links;
    f.timing_offsets = fit.offsets;
    f.points = std::move(points);
    return f;
}

std::string profile_to_yaml(const hwdb::ProfileFile& f) {
    const auto& p = f.profile;
    std::ostringstream o;
    o << "# Efficiency profile for gpuplan (docs/calibration.md). Written by gpuplan calib; the\n"
         "# coefficients are fitted, the residuals are errors on held-out measurements.\n"
      << "schema: 1\n"
      << "profile:\n"
      << "  name: " << quoted(p.name) << "\n"
      << "  gpu: " << f.gpu << "\n";
    if (!f.architecture.empty()) {
        o << "  architecture: " << f.architecture << "\n";
    }
    o << "  provenance:\n"
      << "    kind: " << model::to_string(p.provenance.kind) << "\n"
      << "    description: " << quoted(f.description) << "\n";
    if (!f.command.empty()) {
        o << "    command: " << quoted(f.command) << "\n";
    }
    if (!f.date.empty()) {
        o << "    date: " << quoted(f.date) << "\n";
    }
    if (!f.sources.empty()) {
        o << "    sources:\n";
        for (const auto& s : f.sources) {
            o << "      - " << quoted(s) << "\n";
        }
    }
    o << "  gemm:\n"
      << "    e_max: " << num(p.gemm.e_max) << "\n"
      << "    m_half: " << num(p.gemm.m_half) << "      # tokens\n"
      << "    nk_half: " << num(p.gemm.nk_half) << "    # weight elements (N x K)\n"
      << "    dtype_scale: {";
    for (std::size_t i = 0; i < model::kComputeTypeCount; ++i) {
        o << (i ? ", " : "") << model::to_string(static_cast<model::ComputeType>(i)) << ": "
          << num(p.gemm.dtype_scale[i]);
    }
    // The block-scaled classes' own scales (model/gemm_class.hpp), only where fitted: a class
    // without one runs on its compute path's.
    for (std::size_t j = 0; j < model::kBlockScaledClassCount; ++j) {
        if (const auto& own = p.gemm.class_scale[j]) {
            o << ", "
              << model::to_string(static_cast<model::GemmClass>(model::kComputeTypeCount + j))
              << ": " << num(*own);
        }
    }
    o << "}\n";
    // Written only when fitted (it differs from the built-in default), so that a profile fitted
    // without weight-only measurements keeps following the default in code.
    if (p.gemm_weight_only != model::default_profile().gemm_weight_only) {
        o << "  gemm_weight_only: " << curve(p.gemm_weight_only, false)
          << "   # x: token rows; plateau relative to gemm\n";
    }
    if (p.gemm_grouped != model::default_profile().gemm_grouped) {
        o << "  gemm_grouped: " << curve(p.gemm_grouped, false)
          << "   # x: rows per expert; plateau relative to gemm\n";
    }
    o << "  memory: " << curve(p.memory, true) << "              # x: bytes per kernel\n"
      << "  attention_prefill: " << curve(p.attention_prefill, false)
      << "   # x: effective sequence, tokens\n"
      << "  attention_decode: " << curve(p.attention_decode, true) << "    # x: bytes per kernel\n"
      << "  comm:\n"
      << "    bandwidth: " << curve(p.comm.bandwidth, true) << "   # x: message bytes\n"
      << "    collective_overhead: " << seconds(p.comm.collective_overhead.si()) << "\n"
      << "  launch_overhead: " << seconds(p.launch_overhead.si()) << "\n"
      << "  graph_launch_overhead: " << seconds(p.graph_launch_overhead.si()) << "\n"
      << "  step_overhead: " << seconds(p.step_overhead.si()) << "\n"
      << "  error_band: {mape: " << num(p.error_band.mape, 4)
      << ", p90: " << num(p.error_band.p90, 4) << ", points: " << p.error_band.points
      << ", validated_on: " << quoted(p.error_band.validated_on) << "}\n";
    if (!f.residuals.empty()) {
        o << "  residuals:   # |relative error| of time; held out unless prefixed train_\n";
        for (const auto& r : f.residuals) {
            o << "    - {op_class: " << r.op_class
              << (r.kernel_class.empty() ? "" : ", kernel_class: " + r.kernel_class)
              << ", fitted: " << (r.fitted ? "true" : "false")
              << ", train_points: " << r.train_points << ", held_out_points: " << r.held_out_points
              << ", train_mape: " << num(r.train_mape, 4) << ", mape: " << num(r.mape, 4)
              << ", median: " << num(r.median, 4) << ", p90: " << num(r.p90, 4)
              << ", worst: " << num(r.worst, 4);
            if (!r.worst_point.empty()) {
                o << ", worst_point: " << quoted(r.worst_point);
            }
            o << ", default_mape: " << num(r.default_mape, 4)
              << ", default_p90: " << num(r.default_p90, 4) << "}\n";
        }
    }
    if (!f.comm_links.empty()) {
        o << "  comm_links:   # time = alpha + message / bandwidth, per collective, link and "
             "group\n";
        for (const auto& c : f.comm_links) {
            o << "    - {collective: " << c.collective << ", link: " << quoted(c.link)
              << ", group: " << c.group << ", nodes: " << c.nodes
              << ", alpha: " << seconds(c.alpha.si()) << ", bandwidth: " << rate(c.bandwidth.si())
              << ", points: " << c.points << ", mape: " << num(c.mape, 4) << "}\n";
        }
    }
    if (!f.timing_offsets.empty()) {
        o << "  timing_offsets:   # harness overhead of host-timed data sets, not part of the "
             "model\n";
        for (const auto& t : f.timing_offsets) {
            o << "    - {source: " << quoted(t.source) << ", offset: " << seconds(t.offset.si())
              << ", points: " << t.points << "}\n";
        }
    }
    if (!f.points.empty()) {
        o << "points:\n";
        for (const auto& pt : f.points) {
            o << "  - " << hwdb::point_to_yaml(pt) << "\n";
        }
    }
    return o.str();
}

std::string points_to_yaml(const std::vector<model::Measurement>& points,
                           const std::vector<std::string>& sources) {
    std::ostringstream o;
    o << "# Measured points for gpuplan calib fit (docs/calibration.md).\n"
      << "schema: 1\n";
    if (!sources.empty()) {
        o << "sources:\n";
        for (const auto& s : sources) {
            o << "  - " << quoted(s) << "\n";
        }
    }
    o << "points:\n";
    for (const auto& pt : points) {
        o << "  - " << hwdb::point_to_yaml(pt) << "\n";
    }
    return o.str();
}

} // namespace gpuplan::calib
