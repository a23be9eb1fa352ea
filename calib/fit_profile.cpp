// calib::fit_profile (fit.hpp): the GPU's points prepared and split, linear starts class by
// class, the joint refinement (fit_refine.cpp), then the error reports and the per-link
// alpha-beta fits.
#include "calib/fit.hpp"
#include "calib/fit_params.hpp"

#include "hwdb/database.hpp"
#include "model/error.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>

namespace gpuplan::calib {
namespace {

using namespace detail;

// ---------------------------------------------------------------- the GPU's points

// The GPU's predictable points and the host-timed data sets they come from.
struct Samples {
    std::vector<Sample> samples;
    std::vector<std::string> sources; // host-timed data sets, indexed by Sample::source
};

// Whether the fit may use a point (held-out or not): communication only on the GPU's scale-up
// fabric, no validation-only operator.
bool in_fit(const Measurement& m, const Hardware& hw, const FitOptions& opt) {
    bool in = true;
    if (m.op_class == OpClass::AllReduce || m.op_class == OpClass::SendRecv) {
        // The profile's one communication curve describes the GPU's scale-up fabric (NVLink,
        // NVSwitch, AMD Infinity Fabric); PCIe and network rows are validated but not fitted
        // (their alpha-beta is reported per link below).
        const model::InterconnectSpec* l = hw.find_link(m.link);
        in = m.nodes == 1 && l &&
             (l->kind == model::LinkKind::NvLink || l->kind == model::LinkKind::NvSwitch ||
              l->kind == model::LinkKind::InfinityFabric);
    }
    if (std::find(opt.validation_only_ops.begin(), opt.validation_only_ops.end(), m.op) !=
        opt.validation_only_ops.end()) {
        in = false;
    }
    return in;
}

// Prepares the GPU's points; indexes the host-timed data sets. Notes the skipped points in
// `rep` and sets rep.points and rep.skipped.
Samples prepare_samples(const std::vector<Measurement>& points, const Hardware& hw,
                        const FitOptions& opt, FitReport& rep) {
    const std::string gpu = hwdb::normalize_name(hw.gpu.name);
    Samples out;
    std::map<std::string, int> skipped_reasons;
    for (const auto& m : points) {
        if (hwdb::normalize_name(m.gpu) != gpu) {
            continue;
        }
        std::string why;
        auto p = prepare(m, hw, &why);
        if (!p) {
            ++rep.skipped;
            ++skipped_reasons[std::string(model::to_string(m.op_class)) + ": " + why];
            continue;
        }
        Sample s;
        s.p = *p;
        s.m = &m;
        s.cls = cls_index(m.op_class);
        s.held_out = is_held_out(m, opt.holdout_every);
        if (p->host) {
            auto it = std::find(out.sources.begin(), out.sources.end(), m.source);
            if (it == out.sources.end()) {
                out.sources.push_back(m.source);
                it = out.sources.end() - 1;
            }
            s.source = static_cast<int>(it - out.sources.begin());
        }
        s.in_fit = in_fit(m, hw, opt);
        out.samples.push_back(s);
    }
    for (const auto& [reason, count] : skipped_reasons) {
        rep.notes.push_back("skipped " + std::to_string(count) + " points (" + reason + ")");
    }
    if (out.samples.empty()) {
        throw InputError("no measurement of '" + hw.gpu.name +
                         "' can be predicted; check the points' gpu names and data types");
    }
    rep.points = static_cast<int>(out.samples.size());
    return out;
}

// What the training points hold: counts per class, dense GEMM data type and host-timed set,
// weight-only GEMM points and the distinct N×K of the dense GEMMs.
struct TrainingCounts {
    std::array<int, kClasses> per_class{};
    std::set<double> nk_values;
    std::set<double> m_values; // dense GEMM row counts: m_half needs a sweep over M
    std::array<int, model::kGemmClassCount> per_dtype{}; // dense GEMM points per kernel class
    int weight_only = 0;                                 // weight-only GEMM points
    std::set<double> grouped_m; // grouped GEMM rows per expert: half needs a sweep
    std::vector<int> per_source;

    [[nodiscard]] int of(OpClass c) const {
        return per_class[static_cast<std::size_t>(cls_index(c))];
    }
    [[nodiscard]] int comm() const { return of(OpClass::AllReduce) + of(OpClass::SendRecv); }
};

TrainingCounts count_training(const Samples& s) {
    TrainingCounts n;
    n.per_source.assign(s.sources.size(), 0);
    for (const auto& x : s.samples) {
        if (x.held_out || !x.in_fit) {
            continue;
        }
        ++n.per_class[static_cast<std::size_t>(x.cls)];
        if (x.cls == cls_index(OpClass::Gemm) && x.p.path == model::GemmPath::WeightOnly) {
            ++n.weight_only;
        } else if (x.cls == cls_index(OpClass::Gemm)) {
            n.nk_values.insert(x.p.k * x.p.n);
            n.m_values.insert(x.p.m);
            ++n.per_dtype[static_cast<std::size_t>(x.p.cls)];
        }
        if (x.cls == cls_index(OpClass::GroupedGemm)) {
            n.grouped_m.insert(x.p.m / std::max(1.0, x.p.groups));
        }
        if (x.source >= 0) {
            ++n.per_source[static_cast<std::size_t>(x.source)];
        }
    }
    return n;
}

// Which curves the training points determine (a class needs `min_points` points).
struct FitPlan {
    bool memory = false, prefill = false, decode = false;
    bool gemm = false;
    bool has16 = false; // enough 16-bit dense GEMMs to set the reference (scale 1)
    bool nk = false;    // the N×K half-saturation (3 or more distinct N×K, not kept)
    bool m = false;     // the M half-saturation (3 or more distinct M, not kept)
    bool weight_only = false;
    bool grouped = false; // the grouped row curve (enough points over 3 or more rows per expert)
    bool comm = false;    // all-reduce and send/recv together
    int min_points = 0;

    [[nodiscard]] bool fitted(int cls) const {
        const std::array<bool, kClasses> by_class = {gemm, prefill, decode, memory,
                                                     comm, comm,    grouped};
        return by_class[static_cast<std::size_t>(cls)];
    }
};

bool kept(const FitOptions& opt, const char* name) {
    return std::find(opt.keep.begin(), opt.keep.end(), name) != opt.keep.end();
}

FitPlan plan_fit(const TrainingCounts& n, const FitOptions& opt) {
    const int min_points = opt.min_points;
    FitPlan plan;
    plan.min_points = min_points;
    plan.memory = n.of(OpClass::MemoryBound) >= min_points;
    plan.prefill = n.of(OpClass::AttentionPrefill) >= min_points;
    plan.decode = n.of(OpClass::AttentionDecode) >= min_points;
    plan.gemm = n.of(OpClass::Gemm) >= min_points;
    plan.has16 = n.per_dtype[static_cast<std::size_t>(model::GemmClass::Bf16)] +
                     n.per_dtype[static_cast<std::size_t>(model::GemmClass::Fp16)] >=
                 min_points;
    plan.nk = plan.gemm && n.nk_values.size() >= 3 && !kept(opt, "gemm.nk_half");
    // A set at one M (e.g. only 8192 x 8192 x K GEMMs) says nothing about m_half: keep the base's.
    plan.m = plan.gemm && n.m_values.size() >= 3 && !kept(opt, "gemm.m_half");
    plan.weight_only = n.weight_only >= min_points;
    plan.grouped = n.of(OpClass::GroupedGemm) >= min_points && n.grouped_m.size() >= 3;
    plan.comm = n.comm() >= min_points;
    return plan;
}

// Training points a kernel class's scale needs: a scale is one number on the shared GEMM curve
// (whose shape the other classes' points set), so two points determine it, where a curve needs
// min_points. Its held-out points then say how well it does.
constexpr int kMinScalePoints = 2;

// Whether the fit sets a kernel class's scale: the 16-bit classes are the reference (scale 1)
// when there are enough of them; every other class with dense GEMM points of its own gets its
// scale fitted on them (model/gemm_class.hpp: NVFP4, MXFP4 and MXFP8 apart from the FP4 and FP8
// paths they run on).
bool scale_fitted(const FitPlan& plan, const TrainingCounts& n, model::GemmClass c) {
    const bool sixteen = c == model::GemmClass::Bf16 || c == model::GemmClass::Fp16;
    return plan.gemm && plan.has16 && !sixteen &&
           n.per_dtype[static_cast<std::size_t>(c)] >= std::min(plan.min_points, kMinScalePoints);
}

// The profile the fit starts from: `base`, with a scale of its own (its compute path's to start
// with) for each block-scaled class whose scale is fitted.
model::EfficiencyProfile fit_start(const model::EfficiencyProfile& base, const FitPlan& plan,
                                   const TrainingCounts& n) {
    model::EfficiencyProfile p = base;
    for (std::size_t j = 0; j < model::kBlockScaledClassCount; ++j) {
        const auto c = static_cast<model::GemmClass>(model::kComputeTypeCount + j);
        if (scale_fitted(plan, n, c) && !p.gemm.class_scale[j]) {
            p.gemm.class_scale[j] = p.gemm.scale(c);
        }
    }
    return p;
}

std::vector<const Sample*> train_of(const std::vector<Sample>& samples, OpClass c) {
    std::vector<const Sample*> out;
    for (const auto& s : samples) {
        if (!s.held_out && s.in_fit && s.cls == cls_index(c)) {
            out.push_back(&s);
        }
    }
    return out;
}

// The measured time less the sample's host-timed offset.
double adjusted(const Sample& s, const std::vector<double>& v) {
    return s.p.time_s - offset_of(s, v);
}

// ---------------------------------------------------------------- linear starts

// Initial harness offsets: half the smallest time of each host-timed set.
void start_offsets(const Samples& s, std::vector<double>& v) {
    for (std::size_t i = 0; i < s.sources.size(); ++i) {
        double smallest = std::numeric_limits<double>::infinity();
        for (const auto& x : s.samples) {
            if (x.source == static_cast<int>(i)) {
                smallest = std::min(smallest, x.p.time_s);
            }
        }
        v[kOffset0 + i] = 0.5 * smallest;
    }
}

// A saturating curve of class `c` into v[max_param], v[half_param]: over bytes at the memory
// bandwidth `bw` (memory-bound, decode attention), or over tokens at the peak (prefill).
void start_saturating(const std::vector<Sample>& samples, OpClass c, double bw, int max_param,
                      int half_param, std::vector<double>& v) {
    std::vector<CurvePoint> pts;
    for (const Sample* s : train_of(samples, c)) {
        if (c == OpClass::AttentionPrefill) {
            pts.push_back({s->p.x, s->p.flops / s->p.peak, adjusted(*s, v)});
        } else {
            pts.push_back({s->p.bytes, s->p.bytes / bw, adjusted(*s, v)});
        }
    }
    if (auto curve = fit_saturating(pts)) {
        v[static_cast<std::size_t>(max_param)] = curve->max;
        v[static_cast<std::size_t>(half_param)] = curve->half;
    }
}

// The GEMM rows of the linear start: reference-type dense rows that are compute-bound
// (measured time well above the memory time of the start curve). 16-bit rows set the
// reference when there are any.
std::vector<const Sample*> gemm_start_rows(const std::vector<Sample>& samples, const FitPlan& plan,
                                           const model::EfficiencyProfile& base, double bw,
                                           const std::vector<double>& v) {
    model::EfficiencyProfile start = base;
    set_params(v, start);
    std::vector<const Sample*> rows;
    for (const Sample* s : train_of(samples, OpClass::Gemm)) {
        const bool ref = s->p.path == model::GemmPath::Dense &&
                         (!plan.has16 || s->p.type == model::ComputeType::Bf16 ||
                          s->p.type == model::ComputeType::Fp16);
        const double bytes = s->p.k * s->p.n * s->p.weight_bytes +
                             (s->p.m * s->p.k + s->p.m * s->p.n) * s->p.act_bytes;
        const double mt = bytes / (bw * start.memory.at(bytes));
        if (ref && adjusted(*s, v) > 1.5 * mt) {
            rows.push_back(s);
        }
    }
    return rows;
}

// time/ideal = 1/eff = a (1 + m_half/m)(1 + nk_half/nk) = a + b/m + c/nk + d/(m nk), linear in
// (a, b, c, d) on the rows of gemm_start_rows.
void start_gemm(const std::vector<Sample>& samples, const FitPlan& plan,
                const model::EfficiencyProfile& base, double bw, std::vector<double>& v) {
    const std::vector<const Sample*> rows = gemm_start_rows(samples, plan, base, bw, v);
    // Columns: a, then b (m) and c (nk) when they vary, and d when both do; a fixed m_half or
    // nk_half enters through the factor of the other terms instead.
    const int c_m = plan.m ? 1 : -1;
    const int c_nk = plan.nk ? (plan.m ? 2 : 1) : -1;
    const int c_mnk = plan.m && plan.nk ? 3 : -1;
    const int cols = 1 + (plan.m ? 1 : 0) + (plan.nk ? 1 : 0) + (c_mnk >= 0 ? 1 : 0);
    if (static_cast<int>(rows.size()) >= cols + 2) {
        Eigen::MatrixXd a(static_cast<Eigen::Index>(rows.size()), cols);
        Eigen::VectorXd b = Eigen::VectorXd::Ones(static_cast<Eigen::Index>(rows.size()));
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const auto& p = rows[i]->p;
            double r = 2.0 * p.m * p.k * p.n / p.peak / adjusted(*rows[i], v);
            if (!plan.m) {
                r *= 1.0 + v[kGemmMHalf] / p.m;
            }
            if (!plan.nk) {
                r *= 1.0 + v[kGemmNkHalf] / (p.k * p.n);
            }
            const auto ri = static_cast<Eigen::Index>(i);
            a(ri, 0) = r;
            if (plan.m) {
                a(ri, c_m) = r / p.m;
            }
            if (plan.nk) {
                a(ri, c_nk) = r / (p.k * p.n);
            }
            if (c_mnk >= 0) {
                a(ri, c_mnk) = r / (p.m * p.k * p.n);
            }
        }
        const Eigen::VectorXd sol = least_squares(a, b);
        if (sol(0) > 0 && std::isfinite(sol(0))) {
            const double scale16 =
                plan.has16 ? 1.0 : v[kScale0 + static_cast<std::size_t>(rows[0]->p.cls)];
            v[kGemmEmax] = 1.0 / sol(0) / scale16;
            if (plan.m) {
                v[kGemmMHalf] = std::max(0.0, sol(c_m) / sol(0));
            }
            if (plan.nk) {
                v[kGemmNkHalf] = std::max(0.0, sol(c_nk) / sol(0));
            }
        }
    }
    if (plan.has16) {
        v[kScale0 + static_cast<std::size_t>(model::ComputeType::Bf16)] = 1.0;
        v[kScale0 + static_cast<std::size_t>(model::ComputeType::Fp16)] = 1.0;
    }
}

// Communication: ring all-reduce time = c (msg + half)/(bw max) + L + overhead with
// c = 2(n−1)/n and L = 2(n−1) × latency (send: c = 1, L = latency), linear in
// (1/max, half/max, overhead). NCCL's tree for small messages is left to the refinement.
void start_comm(const std::vector<Sample>& samples, std::vector<double>& v) {
    std::vector<const Sample*> rows = train_of(samples, OpClass::AllReduce);
    for (const Sample* s : train_of(samples, OpClass::SendRecv)) {
        rows.push_back(s);
    }
    Eigen::MatrixXd a(static_cast<Eigen::Index>(rows.size()), 3);
    Eigen::VectorXd b(static_cast<Eigen::Index>(rows.size()));
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto& p = rows[i]->p;
        const bool send = p.op_class == OpClass::SendRecv;
        const double n = p.group;
        const double c = send ? 1.0 : 2.0 * (n - 1.0) / n;
        const double lat = send ? p.link_latency : 2.0 * (n - 1.0) * p.link_latency;
        const double t = adjusted(*rows[i], v);
        const auto ri = static_cast<Eigen::Index>(i);
        a(ri, 0) = c * p.bytes / (p.link_bandwidth * t);
        a(ri, 1) = c / (p.link_bandwidth * t);
        a(ri, 2) = 1.0 / t;
        b(ri) = 1.0 - lat / t;
    }
    const Eigen::VectorXd sol = least_squares(a, b);
    if (sol(0) > 0 && std::isfinite(sol(0))) {
        v[kCommMax] = 1.0 / sol(0);
        v[kCommHalf] = std::max(0.0, sol(1) / sol(0));
        v[kCommOverhead] = std::max(0.0, sol(2));
    }
}

// The starting parameter vector: `base` with the linear fit of each class that has enough
// points, class by class (the GEMM rows are selected with the memory curve fitted first).
std::vector<double> linear_starts(const Samples& s, const FitPlan& plan,
                                  const model::EfficiencyProfile& base, double bw) {
    std::vector<double> v = params_of(base, s.sources.size());
    start_offsets(s, v);
    if (plan.memory) {
        start_saturating(s.samples, OpClass::MemoryBound, bw, kMemMax, kMemHalf, v);
    }
    if (plan.decode) {
        start_saturating(s.samples, OpClass::AttentionDecode, bw, kDecMax, kDecHalf, v);
    }
    if (plan.prefill) {
        start_saturating(s.samples, OpClass::AttentionPrefill, bw, kPreMax, kPreHalf, v);
    }
    if (plan.gemm) {
        start_gemm(s.samples, plan, base, bw, v);
    }
    if (plan.comm) {
        start_comm(s.samples, v);
    }
    return v;
}

// ---------------------------------------------------------------- the refinement's inputs

// The free parameters, in Param order; a free parameter that starts at 0 or below starts from a
// small positive size instead (the refinement works in log space).
std::vector<int> free_params(const FitPlan& plan, const TrainingCounts& n, std::vector<double>& v) {
    std::vector<int> free;
    auto add_free = [&](int p, bool on) {
        if (on) {
            free.push_back(p);
        }
    };
    add_free(kGemmEmax, plan.gemm);
    add_free(kGemmMHalf, plan.m);
    add_free(kGemmNkHalf, plan.nk);
    for (std::size_t t = 0; t < model::kGemmClassCount; ++t) {
        add_free(kScale0 + static_cast<int>(t),
                 scale_fitted(plan, n, static_cast<model::GemmClass>(t)));
    }
    // The weight-only row curve has no linear start: it is refined from the base values.
    add_free(kWoMax, plan.weight_only);
    add_free(kWoHalf, plan.weight_only);
    add_free(kMemMax, plan.memory);
    add_free(kMemHalf, plan.memory);
    add_free(kPreMax, plan.prefill);
    add_free(kPreHalf, plan.prefill);
    add_free(kDecMax, plan.decode);
    add_free(kDecHalf, plan.decode);
    add_free(kCommMax, plan.comm);
    add_free(kCommHalf, plan.comm);
    add_free(kCommOverhead, plan.comm);
    for (std::size_t i = 0; i < n.per_source.size(); ++i) {
        add_free(kOffset0 + static_cast<int>(i), n.per_source[i] >= 3);
    }
    for (int p : free) {
        auto& x = v[static_cast<std::size_t>(p)];
        if (!(x > 0)) {
            x = (p == kGemmMHalf || p == kWoHalf || p == kGrHalf) ? 1.0
                : p == kGemmNkHalf                                ? 1e3
                : p == kPreHalf                                   ? 1.0
                : (p == kCommOverhead || p >= kOffset0)           ? 1e-7
                                                                  : 1e3;
        }
    }
    return free;
}

// The refinement's rows (training points the fit uses) and their weights: each class weighted
// so that its squared errors sum to its mean square. All-reduce and send/recv share one curve
// and are weighted as one group, by their point counts (all-reduce, twice per layer in tensor
// parallelism, dominates).
struct Rows {
    std::vector<const Sample*> rows;
    std::vector<double> weights;
};

Rows refinement_rows(const std::vector<Sample>& samples, const TrainingCounts& n, bool grouped) {
    Rows out;
    for (const auto& s : samples) {
        if (!s.held_out && s.in_fit && (s.cls == cls_index(OpClass::GroupedGemm)) == grouped) {
            out.rows.push_back(&s);
        }
    }
    out.weights.resize(out.rows.size());
    for (std::size_t i = 0; i < out.rows.size(); ++i) {
        const int c = out.rows[i]->cls;
        const bool comm = c == cls_index(OpClass::AllReduce) || c == cls_index(OpClass::SendRecv);
        out.weights[i] = 1.0 / std::sqrt(static_cast<double>(
                                   comm ? n.comm() : n.per_class[static_cast<std::size_t>(c)]));
    }
    return out;
}

// A fitted curve whose half-saturation collapsed to nothing is a constant efficiency.
void zero_collapsed_halves(std::vector<double>& v) {
    for (int p :
         {kGemmMHalf, kGemmNkHalf, kWoHalf, kGrHalf, kMemHalf, kPreHalf, kDecHalf, kCommHalf}) {
        if (v[static_cast<std::size_t>(p)] < 1e-6) {
            v[static_cast<std::size_t>(p)] = 0.0;
        }
    }
}

// ---------------------------------------------------------------- reports

// Which GEMM half-saturations stayed at the base profile's value, and why.
void note_kept_gemm_halves(const FitPlan& plan, const FitOptions& opt, FitReport& rep) {
    if (!plan.gemm) {
        return;
    }
    const auto note = [&](bool fitted, const char* name, const char* too_few) {
        if (!fitted) {
            rep.notes.push_back(std::string("gemm: ") + name +
                                " kept at the base profile's value (" +
                                (kept(opt, name) ? std::string("--keep") : too_few) + ")");
        }
    };
    note(plan.m, "gemm.m_half", "fewer than 3 row counts M in the training points");
    note(plan.nk, "gemm.nk_half", "fewer than 3 weight sizes N x K in the training points");
}

// Which GEMM kernel classes' scales were not fitted though they have points, and which compute
// path scales stayed at the base's while the block-scaled classes on them have their own.
void note_kernel_class_scales(const FitPlan& plan, const TrainingCounts& n, FitReport& rep) {
    if (!plan.gemm) {
        return;
    }
    for (std::size_t t = 0; t < model::kGemmClassCount; ++t) {
        const auto c = static_cast<model::GemmClass>(t);
        const int points = n.per_dtype[t];
        const bool sixteen = c == model::GemmClass::Bf16 || c == model::GemmClass::Fp16;
        if (points > 0 && !sixteen && !scale_fitted(plan, n, c)) {
            rep.notes.push_back(
                "gemm: the " + std::string(model::to_string(c)) + " scale has " +
                std::to_string(points) + " training points (" +
                (plan.has16
                     ? "fewer than " + std::to_string(std::min(plan.min_points, kMinScalePoints))
                     : std::string("no 16-bit reference")) +
                "); " +
                (model::is_block_scaled(c) && !rep.profile.gemm.has_own_scale(c)
                     ? "it runs on the " + std::string(model::to_string(model::compute_path(c))) +
                           " scale"
                     : std::string("the base profile's is kept")));
        }
        if (!model::is_block_scaled(c) && points == 0) {
            std::string own;
            for (std::size_t j = model::kComputeTypeCount; j < model::kGemmClassCount; ++j) {
                const auto b = static_cast<model::GemmClass>(j);
                if (model::compute_path(b) == model::compute_path(c) && scale_fitted(plan, n, b)) {
                    own += (own.empty() ? "" : ", ") + std::string(model::to_string(b));
                }
            }
            if (!own.empty()) {
                rep.notes.push_back("gemm: no " + std::string(model::to_string(c)) +
                                    " points of its own; its scale (the fallback of block-scaled "
                                    "classes without one) is kept at the base profile's value "
                                    "(scales of their own: " +
                                    own + ")");
            }
        }
    }
}

// The weight-only curve's and the host-timed sets' notes, and the fitted offsets.
void note_curves_and_offsets(const Samples& s, const TrainingCounts& n, const FitPlan& plan,
                             const std::vector<double>& v, FitReport& rep) {
    if (n.weight_only > 0) {
        rep.notes.push_back("gemm_weight_only: " + std::to_string(n.weight_only) +
                            " training points; " +
                            (plan.weight_only ? std::string("fitted")
                                              : "fewer than " + std::to_string(plan.min_points) +
                                                    ", the base profile's curve is kept"));
    }
    if (const int g = n.of(OpClass::GroupedGemm); g > 0 && !plan.grouped) {
        rep.notes.push_back("gemm_grouped: " + std::to_string(g) + " training points over " +
                            std::to_string(n.grouped_m.size()) + " rows per expert; fewer than " +
                            std::to_string(plan.min_points) +
                            " points or 3 row counts, the base profile's curve is kept");
    }
    for (std::size_t i = 0; i < s.sources.size(); ++i) {
        if (n.per_source[i] >= 3) {
            rep.offsets.push_back({s.sources[i], Seconds(v[kOffset0 + i]), n.per_source[i]});
        } else {
            rep.notes.push_back("host-timed set '" + s.sources[i] + "' has " +
                                std::to_string(n.per_source[i]) +
                                " training points; its offset is the launch overhead");
        }
    }
}

// The errors of the fitted profile (offsets `v_fit`) and of the base profile (`v_base`) on one
// class's training and held-out points; the held-out ones are also appended to the `all_*`
// lists. Nullopt when the class has no points.
struct HeldOutLists {
    std::vector<double> fit, base, time;
};

std::optional<ClassReport> class_report(const std::vector<Sample>& samples, int c,
                                        const model::EfficiencyProfile& fitted,
                                        const std::vector<double>& v_fit,
                                        const model::EfficiencyProfile& base,
                                        const std::vector<double>& v_base, HeldOutLists* all,
                                        std::optional<model::GemmClass> kernel = std::nullopt) {
    std::vector<double> tr, ho, dtr, dho, ho_signed;
    std::vector<const Sample*> ho_samples;
    for (const auto& s : samples) {
        if (s.cls != c || (kernel && s.p.cls != *kernel)) {
            continue;
        }
        const double ef = rel_error(s, fitted, v_fit);
        const double eb = rel_error(s, base, v_base);
        if (s.held_out) {
            ho.push_back(std::abs(ef));
            dho.push_back(std::abs(eb));
            ho_signed.push_back(ef);
            ho_samples.push_back(&s);
            if (all) {
                all->fit.push_back(std::abs(ef));
                all->base.push_back(std::abs(eb));
                all->time.push_back(s.p.time_s);
            }
        } else {
            tr.push_back(std::abs(ef));
            dtr.push_back(std::abs(eb));
        }
    }
    if (tr.empty() && ho.empty()) {
        return std::nullopt;
    }
    ClassReport cr;
    cr.op_class = static_cast<OpClass>(c);
    cr.kernel_class = kernel;
    cr.train = error_stats(tr);
    cr.held_out = error_stats(ho);
    cr.default_train = error_stats(dtr);
    cr.default_held_out = error_stats(dho);
    cr.worst = worst_of(ho_samples, ho_signed);
    return cr;
}

// Reports: fitted and base profile, training and held-out points, per class and over all
// held-out points. A host-timed set too small for its own offset is evaluated at the launch
// overhead (of the fitted and of the base profile respectively).
void report_errors(const Samples& s, const TrainingCounts& n, const FitPlan& plan,
                   const model::EfficiencyProfile& base, const std::vector<double>& v,
                   FitReport& rep) {
    std::vector<double> v_base = params_of(base, s.sources.size());
    for (std::size_t i = 0; i < s.sources.size(); ++i) {
        v_base[kOffset0 + i] = n.per_source[i] >= 3 ? v[kOffset0 + i] : base.launch_overhead.si();
    }
    std::vector<double> v_fit = v;
    for (std::size_t i = 0; i < s.sources.size(); ++i) {
        if (n.per_source[i] < 3) {
            v_fit[kOffset0 + i] = rep.profile.launch_overhead.si();
        }
    }
    HeldOutLists all;
    for (int c = 0; c < kClasses; ++c) {
        auto cr = class_report(s.samples, c, rep.profile, v_fit, base, v_base, &all);
        if (!cr) {
            continue;
        }
        cr->fitted = plan.fitted(c);
        if (!cr->fitted) {
            rep.notes.push_back(std::string(model::to_string(cr->op_class)) + ": " +
                                std::to_string(n.per_class[static_cast<std::size_t>(c)]) +
                                " training points (fewer than " + std::to_string(plan.min_points) +
                                "); the base profile's curve is kept");
        }
        rep.classes.push_back(std::move(*cr));
    }
    // Per kernel class within the GEMM classes that have points of two or more: each class's
    // scale is fitted on its own points, so each has its own error.
    for (const OpClass oc : {OpClass::Gemm, OpClass::GroupedGemm}) {
        const int c = cls_index(oc);
        std::set<model::GemmClass> kernels;
        for (const auto& x : s.samples) {
            if (x.cls == c) {
                kernels.insert(x.p.cls);
            }
        }
        if (kernels.size() < 2) {
            continue;
        }
        for (const model::GemmClass k : kernels) {
            if (auto cr =
                    class_report(s.samples, c, rep.profile, v_fit, base, v_base, nullptr, k)) {
                cr->fitted =
                    plan.fitted(c) && (oc == OpClass::GroupedGemm || k == model::GemmClass::Bf16 ||
                                       k == model::GemmClass::Fp16 || scale_fitted(plan, n, k));
                rep.kernel_classes.push_back(std::move(*cr));
            }
        }
    }
    rep.held_out = error_stats(all.fit);
    rep.default_held_out = error_stats(all.base);
    rep.held_out_time_weighted = weighted_error_stats(all.fit, all.time);
    rep.default_held_out_time_weighted = weighted_error_stats(all.base, all.time);
}

// Alpha-beta per collective, link and group, on all of the GPU's communication points (groups
// of 4 or more).
std::vector<hwdb::CommLinkFit> comm_link_fits(const std::vector<Measurement>& points,
                                              const std::string& gpu) {
    std::map<std::tuple<std::string, std::string, int, int>,
             std::pair<std::vector<double>, std::vector<double>>>
        groups;
    for (const auto& m : points) {
        if ((m.op_class == OpClass::AllReduce || m.op_class == OpClass::SendRecv) &&
            hwdb::normalize_name(m.gpu) == gpu && m.bytes > 0 && m.time_s > 0) {
            const std::string link = m.link.empty() ? "undocumented" : m.link;
            auto& g = groups[{model::to_string(m.op_class), link, m.tp, m.nodes}];
            g.first.push_back(m.bytes);
            g.second.push_back(m.time_s);
        }
    }
    std::vector<hwdb::CommLinkFit> out;
    for (const auto& [key, g] : groups) {
        if (g.first.size() < 4) {
            continue;
        }
        if (auto ab = fit_alpha_beta(g.first, g.second)) {
            out.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key),
                           Seconds(ab->alpha_s), BytesPerSecond(ab->bandwidth),
                           static_cast<int>(g.first.size()), ab->mape});
        }
    }
    return out;
}

} // namespace

// ---------------------------------------------------------------- the fit

FitReport fit_profile(const std::vector<Measurement>& points, const Hardware& hw,
                      const model::EfficiencyProfile& base, const FitOptions& opt) {
    // A fitted profile states its error on held-out shapes; with none held out it would claim
    // 0 % error, so a fit needs a hold-out rule.
    if (opt.holdout_every < 2) {
        throw InvalidArgument("holdout-every " + std::to_string(opt.holdout_every) +
                              " holds out no shapes, so the profile's error could not be "
                              "measured; give 2 or more (default 5)");
    }
    FitReport rep;
    const Samples s = prepare_samples(points, hw, opt, rep);
    const TrainingCounts n = count_training(s);
    const FitPlan plan = plan_fit(n, opt);
    const model::EfficiencyProfile start = fit_start(base, plan, n);
    std::vector<double> v = linear_starts(s, plan, start, hw.gpu.memory_bandwidth.si());
    const std::vector<int> free = free_params(plan, n, v);
    const Rows rows = refinement_rows(s.samples, n, false);
    rep.iterations = refine(rows.rows, rows.weights, free, start, opt, v);
    // The grouped row curve second, on the grouped points alone with every other curve as just
    // fitted: it starts from the base profile's (the documented default), and grouped data
    // leave the dense, memory and other curves exactly where their own points put them.
    if (plan.grouped) {
        const Rows grouped = refinement_rows(s.samples, n, true);
        rep.iterations += refine(grouped.rows, grouped.weights, {kGrMax, kGrHalf}, start, opt, v);
    }
    zero_collapsed_halves(v);
    rep.profile = start;
    set_params(v, rep.profile);
    note_kept_gemm_halves(plan, opt, rep);
    note_kernel_class_scales(plan, n, rep);
    note_curves_and_offsets(s, n, plan, v, rep);
    report_errors(s, n, plan, base, v, rep);
    rep.holdout_every = opt.holdout_every;
    rep.comm_links = comm_link_fits(points, hwdb::normalize_name(hw.gpu.name));
    return rep;
}

} // namespace gpuplan::calib
