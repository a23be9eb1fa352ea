#include "hwdb/profile_loader.hpp"

#include "hwdb/database.hpp"
#include "hwdb/detail/yaml_reader.hpp"
#include "hwdb/file_io.hpp"
#include "model/error.hpp"
#include "model/precision.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <system_error>

namespace gpuplan::hwdb {
namespace {

using detail::MapReader;
using model::Dimension;

// Efficiencies are fractions of the datasheet peak. A fitted plateau can exceed 1 when a part
// boosts above the clock the datasheet peak assumes, but never by 2x.
constexpr double kMaxEfficiency = 2.0;
constexpr double kMaxHalf = 1e18;
constexpr int kMaxShape = 1 << 30;

std::string read_text(const std::filesystem::path& path) {
    return read_text_file(path, "profile");
}

void check_schema(MapReader& root) {
    const int schema = root.integer("schema", 1, 1000);
    if (schema != 1) {
        root.fail_at("schema", "unsupported schema version " + std::to_string(schema) +
                                   "; this gpuplan reads schema 1");
    }
}

model::SaturatingCurve read_curve(MapReader m, Dimension half_dim, bool half_has_unit) {
    model::SaturatingCurve c;
    c.max = m.number("max", 1e-6, kMaxEfficiency);
    if (half_has_unit) {
        c.half = m.opt_quantity("half", half_dim, false).value_or(0.0);
    } else {
        c.half = m.opt_number("half", 0.0, kMaxHalf).value_or(0.0);
    }
    m.finish();
    return c;
}

model::ProvenanceKind read_kind(MapReader& m) {
    const std::string k = m.string("kind");
    for (auto kind : {model::ProvenanceKind::SpecSheet, model::ProvenanceKind::Microbenchmark,
                      model::ProvenanceKind::EngineProfile}) {
        if (k == model::to_string(kind)) {
            return kind;
        }
    }
    m.fail_at("kind",
              "unknown value '" + k + "'; use spec-sheet, microbenchmark or engine-profile");
}

model::GemmEfficiency read_gemm(MapReader m) {
    model::GemmEfficiency g;
    g.e_max = m.number("e_max", 1e-6, kMaxEfficiency);
    g.m_half = m.opt_number("m_half", 0.0, kMaxHalf).value_or(0.0);
    g.nk_half = m.opt_number("nk_half", 0.0, kMaxHalf).value_or(0.0);
    g.dtype_scale.fill(1.0);
    if (auto s = m.opt_map("dtype_scale")) {
        for (std::size_t i = 0; i < model::kComputeTypeCount; ++i) {
            const std::string name(model::to_string(static_cast<model::ComputeType>(i)));
            if (auto v = s->opt_number(name, 1e-6, kMaxEfficiency)) {
                g.dtype_scale[i] = *v;
            }
        }
        // The block-scaled kernel classes (model/gemm_class.hpp): absent, the class runs on its
        // compute path's scale.
        for (std::size_t j = 0; j < model::kBlockScaledClassCount; ++j) {
            const auto c = static_cast<model::GemmClass>(model::kComputeTypeCount + j);
            g.class_scale[j] =
                s->opt_number(std::string(model::to_string(c)), 1e-6, kMaxEfficiency);
        }
        s->finish();
    }
    m.finish();
    return g;
}

model::ErrorBand read_error_band(MapReader m) {
    model::ErrorBand e;
    e.mape = m.number("mape", 0.0, 1e6);
    e.p90 = m.number("p90", 0.0, 1e6);
    e.points = m.integer("points", 0, 1'000'000'000);
    e.validated_on = m.string_or("validated_on", "");
    m.finish();
    return e;
}

ResidualSummary read_residual(MapReader& m) {
    ResidualSummary r;
    r.op_class = m.string("op_class");
    if (r.op_class != "all" && !model::find_op_class(r.op_class)) {
        m.fail_at("op_class", "unknown operator class '" + r.op_class +
                                  "'; use gemm, attention_prefill, attention_decode, memory_bound, "
                                  "all_reduce, send_recv or all");
    }
    r.kernel_class = m.string_or("kernel_class", "");
    if (!r.kernel_class.empty() && !model::find_gemm_class(r.kernel_class)) {
        m.fail_at("kernel_class", "unknown GEMM kernel class '" + r.kernel_class + "'; use " +
                                      model::names_list<model::GemmClass>());
    }
    r.fitted = m.boolean_or("fitted", true);
    r.train_points = m.opt_integer("train_points", 0, 1'000'000'000).value_or(0);
    r.held_out_points = m.opt_integer("held_out_points", 0, 1'000'000'000).value_or(0);
    r.train_mape = m.opt_number("train_mape", 0.0, 1e6).value_or(0.0);
    r.mape = m.opt_number("mape", 0.0, 1e6).value_or(0.0);
    r.median = m.opt_number("median", 0.0, 1e6).value_or(0.0);
    r.p90 = m.opt_number("p90", 0.0, 1e6).value_or(0.0);
    r.worst = m.opt_number("worst", 0.0, 1e9).value_or(0.0);
    r.worst_point = m.string_or("worst_point", "");
    r.default_mape = m.opt_number("default_mape", 0.0, 1e9).value_or(0.0);
    r.default_p90 = m.opt_number("default_p90", 0.0, 1e9).value_or(0.0);
    m.finish();
    return r;
}

CommLinkFit read_comm_link(MapReader& m) {
    CommLinkFit c;
    c.collective = m.string("collective");
    if (c.collective != "all_reduce" && c.collective != "send_recv") {
        m.fail_at("collective",
                  "unknown collective '" + c.collective + "'; use all_reduce or send_recv");
    }
    c.link = m.string("link");
    c.group = m.integer("group", 1, 1'000'000);
    c.nodes = m.opt_integer("nodes", 1, 1'000'000).value_or(1);
    c.alpha = Seconds(m.quantity("alpha", Dimension::Seconds, false));
    c.bandwidth = BytesPerSecond(m.quantity("bandwidth", Dimension::BytesPerSecond));
    c.points = m.opt_integer("points", 0, 1'000'000'000).value_or(0);
    c.mape = m.opt_number("mape", 0.0, 1e6).value_or(0.0);
    m.finish();
    return c;
}

model::Measurement read_point(MapReader& m) {
    model::Measurement p;
    const std::string cls = m.string("op_class");
    const auto c = model::find_op_class(cls);
    if (!c) {
        m.fail_at("op_class", "unknown operator class '" + cls +
                                  "'; use gemm, attention_prefill, attention_decode, memory_bound, "
                                  "all_reduce, send_recv or grouped_gemm");
    }
    p.op_class = *c;
    p.op = m.string_or("op", "");
    p.m = m.opt_number("m", 0.0, kMaxShape).value_or(0.0);
    p.n = m.opt_number("n", 0.0, kMaxShape).value_or(0.0);
    p.k = m.opt_number("k", 0.0, kMaxShape).value_or(0.0);
    p.batch = m.opt_integer("batch", 0, kMaxShape).value_or(0);
    p.tokens = m.opt_number("tokens", 0.0, kMaxShape).value_or(0.0);
    p.context = m.opt_number("context", 0.0, kMaxShape).value_or(0.0);
    p.heads = m.opt_integer("heads", 0, 1 << 20).value_or(0);
    p.kv_heads = m.opt_integer("kv_heads", 0, 1 << 20).value_or(0);
    p.head_dim = m.opt_integer("head_dim", 0, 1 << 20).value_or(0);
    p.experts = m.opt_integer("experts", 0, 1 << 20).value_or(0);
    p.top_k = m.opt_integer("top_k", 0, 1 << 20).value_or(0);
    p.matrices = m.opt_integer("matrices", 1, 3).value_or(3);
    p.bytes = m.opt_quantity("bytes", Dimension::Bytes).value_or(0.0);
    p.dtype = m.string_or("dtype", "bf16");
    if (!model::find_precision(p.dtype)) {
        m.fail_at("dtype",
                  "unknown data type '" + p.dtype + "'; use bf16, fp16, fp8, int8 or fp32");
    }
    p.gpu = m.string_or("gpu", "");
    p.tp = m.opt_integer("tp", 1, 1'000'000).value_or(1);
    p.nodes = m.opt_integer("nodes", 1, 1'000'000).value_or(1);
    p.link = m.string_or("link", "");
    const std::string timing = m.string_or("timing", "kernel");
    if (timing != "kernel" && timing != "host") {
        m.fail_at("timing", "unknown timing '" + timing + "'; use kernel or host");
    }
    p.timing = timing == "host" ? model::Timing::Host : model::Timing::Kernel;
    p.time_s = m.quantity("time", Dimension::Seconds);
    p.source = m.string_or("source", "");
    p.source_file = m.string_or("file", "");
    p.row = m.opt_integer("row", 0, 1'000'000'000).value_or(0);
    m.finish();
    return p;
}

std::vector<model::Measurement> read_points(MapReader& root) {
    std::vector<model::Measurement> out;
    for (auto& m : root.map_list("points")) {
        out.push_back(read_point(m));
    }
    return out;
}

std::string format_g(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.10g", v);
    return buf;
}

// Plain YAML scalars need no quotes when they are names; anything else is double-quoted.
std::string scalar(const std::string& s) {
    const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '_' || c == '.' || c == '/';
    });
    if (plain && !(s[0] >= '0' && s[0] <= '9') && s != "true" && s != "false" && s != "null") {
        return s;
    }
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
        }
        out += c;
    }
    return out + "\"";
}

bool matches_gpu(const std::string& name, const model::AcceleratorSpec& gpu) {
    const std::string key = normalize_name(name);
    if (key == normalize_name(gpu.name)) {
        return true;
    }
    return std::any_of(gpu.aliases.begin(), gpu.aliases.end(),
                       [&](const std::string& a) { return normalize_name(a) == key; });
}

} // namespace

ProfileFile parse_profile_file(std::string_view text, const std::string& file) {
    MapReader root(detail::parse_strict(text, file), file, "");
    check_schema(root);
    ProfileFile out;
    {
        MapReader p = root.map("profile");
        auto& prof = out.profile;
        prof = model::default_profile();
        prof.name = p.string("name");
        out.gpu = p.string("gpu");
        out.architecture = p.string_or("architecture", "");
        {
            MapReader v = p.map("provenance");
            prof.provenance.kind = read_kind(v);
            out.description = v.string("description");
            out.command = v.string_or("command", "");
            out.date = v.string_or("date", "");
            out.sources = v.string_list("sources");
            v.finish();
        }
        prof.gemm = read_gemm(p.map("gemm"));
        // Optional: profiles written before weight-only kernels had a curve keep the default.
        if (auto w = p.opt_map("gemm_weight_only")) {
            prof.gemm_weight_only = read_curve(*w, Dimension::Bytes, false);
        }
        // Optional likewise: the grouped MoE GEMM row curve (x: rows per expert).
        if (auto g = p.opt_map("gemm_grouped")) {
            prof.gemm_grouped = read_curve(*g, Dimension::Bytes, false);
        }
        prof.memory = read_curve(p.map("memory"), Dimension::Bytes, true);
        prof.attention_prefill = read_curve(p.map("attention_prefill"), Dimension::Bytes, false);
        prof.attention_decode = read_curve(p.map("attention_decode"), Dimension::Bytes, true);
        {
            MapReader c = p.map("comm");
            prof.comm.bandwidth = read_curve(c.map("bandwidth"), Dimension::Bytes, true);
            prof.comm.collective_overhead =
                Seconds(c.quantity("collective_overhead", Dimension::Seconds, false));
            c.finish();
        }
        prof.launch_overhead = Seconds(p.quantity("launch_overhead", Dimension::Seconds, false));
        prof.graph_launch_overhead =
            Seconds(p.opt_quantity("graph_launch_overhead", Dimension::Seconds, false)
                        .value_or(prof.graph_launch_overhead.si()));
        prof.step_overhead = Seconds(p.quantity("step_overhead", Dimension::Seconds, false));
        prof.error_band = read_error_band(p.map("error_band"));
        for (auto& r : p.map_list("residuals")) {
            out.residuals.push_back(read_residual(r));
        }
        for (auto& c : p.map_list("comm_links")) {
            out.comm_links.push_back(read_comm_link(c));
        }
        for (auto& o : p.map_list("timing_offsets")) {
            TimingOffset t;
            t.source = o.string("source");
            t.offset = Seconds(o.quantity("offset", Dimension::Seconds, false));
            t.points = o.opt_integer("points", 0, 1'000'000'000).value_or(0);
            o.finish();
            out.timing_offsets.push_back(std::move(t));
        }
        p.finish();
        prof.provenance.file = file;
        prof.provenance.description = out.description + " (measured on " + out.gpu +
                                      (out.date.empty() ? "" : ", " + out.date) + ")";
    }
    out.points = read_points(root);
    root.finish();
    return out;
}

ProfileFile read_profile_file(const std::filesystem::path& path) {
    return parse_profile_file(read_text(path), path.string());
}

model::EfficiencyProfile parse_profile(std::string_view text, const std::string& file) {
    return parse_profile_file(text, file).profile;
}

model::EfficiencyProfile load_profile(const std::filesystem::path& path) {
    return read_profile_file(path).profile;
}

PointSet parse_point_set(std::string_view text, const std::string& file) {
    MapReader root(detail::parse_strict(text, file), file, "");
    check_schema(root);
    PointSet out;
    if (auto p = root.opt_map("profile")) {
        // A profile file: its coefficients are not points, but its sources are theirs.
        if (auto v = p->opt_map("provenance")) {
            out.sources = v->string_list("sources");
        }
    }
    const auto sources = root.string_list("sources");
    out.sources.insert(out.sources.end(), sources.begin(), sources.end());
    if (!root.has("points")) {
        root.fail_here("no 'points:' list; a points file holds 'schema: 1' and 'points:' "
                       "(written by 'gpuplan calib import -o FILE')");
    }
    out.points = read_points(root);
    root.finish();
    return out;
}

std::vector<model::Measurement> parse_points(std::string_view text, const std::string& file) {
    return parse_point_set(text, file).points;
}

std::string point_to_yaml(const model::Measurement& m) {
    std::string s = "{op_class: ";
    s += model::to_string(m.op_class);
    auto num = [&s](const char* key, double v) {
        if (v != 0) {
            s += std::string(", ") + key + ": " + format_g(v);
        }
    };
    if (!m.op.empty()) {
        s += ", op: " + scalar(m.op);
    }
    num("m", m.m);
    num("k", m.k);
    num("n", m.n);
    num("batch", m.batch);
    num("tokens", m.tokens);
    num("context", m.context);
    num("heads", m.heads);
    num("kv_heads", m.kv_heads);
    num("head_dim", m.head_dim);
    num("experts", m.experts);
    num("top_k", m.top_k);
    if (m.op_class == model::OpClass::GroupedGemm) {
        num("matrices", m.matrices);
    }
    if (m.bytes > 0) {
        s += ", bytes: " + format_g(m.bytes) + " B";
    }
    s += ", dtype: " + scalar(m.dtype);
    if (!m.gpu.empty()) {
        s += ", gpu: " + scalar(m.gpu);
    }
    if (m.tp != 1) {
        s += ", tp: " + std::to_string(m.tp);
    }
    if (m.nodes != 1) {
        s += ", nodes: " + std::to_string(m.nodes);
    }
    if (!m.link.empty()) {
        s += ", link: " + scalar(m.link);
    }
    s += std::string(", timing: ") + model::to_string(m.timing);
    s += ", time: " + format_g(m.time_s * 1e6) + " us";
    if (!m.source.empty()) {
        s += ", source: " + scalar(m.source);
    }
    if (!m.source_file.empty()) {
        s += ", file: " + scalar(m.source_file);
    }
    if (m.row > 0) {
        s += ", row: " + std::to_string(m.row);
    }
    return s + "}";
}

std::optional<ProfileFile>
find_profile_file_for_gpu(const std::vector<std::filesystem::path>& folders,
                          const model::AcceleratorSpec& gpu) {
    // Later folders override earlier ones (as in Database::load): search them last to first,
    // each in sorted order, so a user's measured profile wins over the shipped one.
    std::vector<std::filesystem::path> files;
    for (auto folder = folders.rbegin(); folder != folders.rend(); ++folder) {
        std::error_code ec;
        if (!std::filesystem::is_directory(*folder, ec)) {
            continue;
        }
        std::vector<std::filesystem::path> in_folder;
        for (const auto& entry : std::filesystem::recursive_directory_iterator(*folder)) {
            const auto ext = entry.path().extension();
            if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml")) {
                in_folder.push_back(entry.path());
            }
        }
        std::sort(in_folder.begin(), in_folder.end());
        files.insert(files.end(), in_folder.begin(), in_folder.end());
    }
    std::optional<ProfileFile> borrowed;
    for (const auto& f : files) {
        ProfileFile pf = read_profile_file(f);
        if (matches_gpu(pf.gpu, gpu)) {
            return pf;
        }
        // Same architecture: efficiencies are fractions of each part's own peaks, which carry
        // over between parts of one generation better than the spec-sheet guesses do. Prefer
        // the profile with the most validation points.
        if (!gpu.architecture.empty() && pf.architecture == gpu.architecture &&
            (!borrowed || pf.profile.error_band.points > borrowed->profile.error_band.points)) {
            borrowed = std::move(pf);
        }
    }
    if (!borrowed) {
        return std::nullopt;
    }
    auto& p = borrowed->profile;
    const std::string note = "extrapolated from " + borrowed->gpu + " (same architecture '" +
                             borrowed->architecture + "') to " + gpu.name;
    p.provenance.description = note + ": " + p.provenance.description;
    p.error_band.validated_on = note + "; " + p.error_band.validated_on;
    borrowed->description = note + ": " + borrowed->description;
    return borrowed;
}

std::optional<model::EfficiencyProfile>
find_profile_for_gpu(const std::vector<std::filesystem::path>& folders,
                     const model::AcceleratorSpec& gpu) {
    if (auto f = find_profile_file_for_gpu(folders, gpu)) {
        return f->profile;
    }
    return std::nullopt;
}

std::string shown_path(const std::string& file) {
    namespace fs = std::filesystem;
    const fs::path path(file);
    if (file.empty() || !path.is_absolute()) {
        return file;
    }
    const auto inside = [&](const fs::path& folder) -> std::optional<fs::path> {
        const fs::path rel = path.lexically_normal().lexically_relative(folder.lexically_normal());
        if (rel.empty() || *rel.begin() == "..") {
            return std::nullopt;
        }
        return rel;
    };
    const fs::path builtin = builtin_profile_folder().parent_path(); // .../hwdb
    if (const auto rel = inside(builtin)) {
        return (fs::path("hwdb") / *rel).generic_string();
    }
    std::error_code ec;
    if (const fs::path cwd = fs::current_path(ec); !ec) {
        if (const auto rel = inside(cwd)) {
            return rel->generic_string();
        }
    }
    return file;
}

std::filesystem::path builtin_profile_folder() {
    return std::filesystem::path(GPUPLAN_BUILTIN_HWDB) / "profiles";
}

std::vector<std::filesystem::path>
profile_folders(const std::vector<std::filesystem::path>& hwdb_folders) {
    std::vector<std::filesystem::path> out;
    out.reserve(hwdb_folders.size());
    for (const auto& f : hwdb_folders) {
        out.push_back(f / "profiles");
    }
    return out;
}

} // namespace gpuplan::hwdb
