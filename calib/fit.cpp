#include "calib/fit.hpp"

#include "hwdb/database.hpp"
#include "model/error.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>

namespace gpuplan::calib {
namespace {

constexpr int kClasses = model::kOpClassCount;
constexpr int kWorstCases = 5;

int cls_index(OpClass c) {
    return static_cast<int>(c);
}

// ---------------------------------------------------------------- parameters
//
// Every coefficient the fit can move, in one vector of plain values. The Levenberg-Marquardt
// refinement works on the logarithms of the free ones, which keeps them positive and makes
// the steps scale-free (an efficiency of 0.7 and a half-saturation of 2e6 bytes move alike).
enum Param : int {
    kGemmEmax,
    kGemmMHalf,
    kGemmNkHalf,
    kScale0, // + ComputeType index
    kWoMax = kScale0 + static_cast<int>(model::kComputeTypeCount),
    kWoHalf,
    kMemMax,
    kMemHalf,
    kPreMax,
    kPreHalf,
    kDecMax,
    kDecHalf,
    kCommMax,
    kCommHalf,
    kCommOverhead,
    kOffset0, // + host-timed source index
};

std::vector<double> params_of(const model::EfficiencyProfile& p, std::size_t offsets) {
    std::vector<double> v(static_cast<std::size_t>(kOffset0) + offsets, 0.0);
    v[kGemmEmax] = p.gemm.e_max;
    v[kGemmMHalf] = p.gemm.m_half;
    v[kGemmNkHalf] = p.gemm.nk_half;
    for (std::size_t i = 0; i < model::kComputeTypeCount; ++i) {
        v[kScale0 + i] = p.gemm.dtype_scale[i];
    }
    v[kWoMax] = p.gemm_weight_only.max;
    v[kWoHalf] = p.gemm_weight_only.half;
    v[kMemMax] = p.memory.max;
    v[kMemHalf] = p.memory.half;
    v[kPreMax] = p.attention_prefill.max;
    v[kPreHalf] = p.attention_prefill.half;
    v[kDecMax] = p.attention_decode.max;
    v[kDecHalf] = p.attention_decode.half;
    v[kCommMax] = p.comm.bandwidth.max;
    v[kCommHalf] = p.comm.bandwidth.half;
    v[kCommOverhead] = p.comm.collective_overhead.si();
    return v;
}

void set_params(const std::vector<double>& v, model::EfficiencyProfile& p) {
    p.gemm.e_max = v[kGemmEmax];
    p.gemm.m_half = v[kGemmMHalf];
    p.gemm.nk_half = v[kGemmNkHalf];
    for (std::size_t i = 0; i < model::kComputeTypeCount; ++i) {
        p.gemm.dtype_scale[i] = v[kScale0 + i];
    }
    p.gemm_weight_only = {v[kWoMax], v[kWoHalf]};
    p.memory = {v[kMemMax], v[kMemHalf]};
    p.attention_prefill = {v[kPreMax], v[kPreHalf]};
    p.attention_decode = {v[kDecMax], v[kDecHalf]};
    p.comm.bandwidth = {v[kCommMax], v[kCommHalf]};
    p.comm.collective_overhead = Seconds(v[kCommOverhead]);
}

// Which operator classes a parameter's value reaches, as a bit mask (for skipping work in the
// numerical Jacobian). The memory curve also bounds GEMMs and prefill attention; the prefill
// plateau also bounds decode compute.
unsigned classes_of(int param) {
    auto bit = [](OpClass c) { return 1u << cls_index(c); };
    if (param <= kMemMax - 1) {
        return bit(OpClass::Gemm);
    }
    switch (param) {
    case kMemMax:
    case kMemHalf:
        return bit(OpClass::Gemm) | bit(OpClass::MemoryBound) | bit(OpClass::AttentionPrefill);
    case kPreMax: return bit(OpClass::AttentionPrefill) | bit(OpClass::AttentionDecode);
    case kPreHalf: return bit(OpClass::AttentionPrefill);
    case kDecMax:
    case kDecHalf: return bit(OpClass::AttentionDecode);
    case kCommMax:
    case kCommHalf:
    case kCommOverhead: return bit(OpClass::AllReduce) | bit(OpClass::SendRecv);
    default: return ~0u; // offsets: any class
    }
}

// Plateau efficiencies live in (0, 1): a kernel cannot beat the datasheet peak for long (the
// few points above it are L2-cache hits), so they are fitted through a logistic transform;
// everything else (half-saturations, scales, overheads) through a logarithm.
bool is_fraction(int param) {
    return param == kGemmEmax || param == kMemMax || param == kPreMax || param == kDecMax ||
           param == kCommMax;
}

double to_theta(int param, double value) {
    if (is_fraction(param)) {
        const double f = std::clamp(value, 1e-6, 0.999);
        return std::log(f / (1.0 - f));
    }
    return std::log(value);
}

double from_theta(int param, double theta) {
    return is_fraction(param) ? 1.0 / (1.0 + std::exp(-theta)) : std::exp(theta);
}

struct Sample {
    PreparedPoint p;
    const Measurement* m = nullptr;
    int cls = 0;
    int source = -1; // host-timed data set index, -1 for kernel-timed points
    bool held_out = false;
    bool in_fit = true; // used by the fit (communication: scale-up links only)
};

double offset_of(const Sample& s, const std::vector<double>& v) {
    return s.source >= 0 ? v[static_cast<std::size_t>(kOffset0 + s.source)] : 0.0;
}

double rel_error(const Sample& s, const model::EfficiencyProfile& prof,
                 const std::vector<double>& v) {
    return predict(s.p, prof, offset_of(s, v)) / s.p.time_s - 1.0;
}

} // namespace

std::string describe(const Measurement& m) {
    char buf[256];
    std::string shape;
    switch (m.op_class) {
    case OpClass::Gemm:
        std::snprintf(buf, sizeof buf, "m=%g k=%g n=%g", m.m, m.k, m.n);
        shape = buf;
        break;
    case OpClass::AttentionPrefill:
    case OpClass::AttentionDecode:
        std::snprintf(buf, sizeof buf, "batch=%d tokens=%g context=%g heads=%d/%d d=%d", m.batch,
                      m.tokens, m.context, m.heads, m.kv_heads, m.head_dim);
        shape = buf;
        break;
    case OpClass::MemoryBound:
        std::snprintf(buf, sizeof buf, "bytes=%g", m.bytes);
        shape = buf;
        break;
    case OpClass::AllReduce:
    case OpClass::SendRecv:
        std::snprintf(buf, sizeof buf, "bytes=%g gpus=%d link=%s", m.bytes, m.tp, m.link.c_str());
        shape = buf;
        break;
    }
    return m.source_file + ":" + std::to_string(m.row) + " " + m.op + " " + shape + " " + m.dtype;
}

namespace {

// Solves the least-squares problem min Σ_i (A_i · x − b_i)² by column-pivoted QR.
Eigen::VectorXd least_squares(const Eigen::MatrixXd& a, const Eigen::VectorXd& b) {
    return a.colPivHouseholderQr().solve(b);
}

std::vector<PointError> worst_of(const std::vector<const Sample*>& samples,
                                 const std::vector<double>& signed_errors) {
    std::vector<std::size_t> idx(samples.size());
    for (std::size_t i = 0; i < idx.size(); ++i) {
        idx[i] = i;
    }
    std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
        return std::abs(signed_errors[a]) > std::abs(signed_errors[b]);
    });
    std::vector<PointError> out;
    for (std::size_t i = 0; i < idx.size() && static_cast<int>(i) < kWorstCases; ++i) {
        const std::size_t j = idx[i];
        out.push_back(
            {*samples[j]->m, samples[j]->p.time_s * (1.0 + signed_errors[j]), signed_errors[j]});
    }
    return out;
}

} // namespace

// ---------------------------------------------------------------- hold-out and statistics

unsigned long long shape_hash(const Measurement& m) {
    // FNV-1a (64 bit) over a canonical text of the shape: stable across runs, platforms and
    // compilers, unlike std::hash.
    char buf[512];
    std::snprintf(buf, sizeof buf, "%s|%s|%s|%.9g|%.9g|%.9g|%d|%.9g|%.9g|%d|%d|%d|%.9g|%s|%d|%d|%s",
                  hwdb::normalize_name(m.gpu).c_str(), model::to_string(m.op_class), m.op.c_str(),
                  m.m, m.n, m.k, m.batch, m.tokens, m.context, m.heads, m.kv_heads, m.head_dim,
                  m.bytes, m.dtype.c_str(), m.tp, m.nodes, m.link.c_str());
    unsigned long long h = 1469598103934665603ULL;
    for (const char* c = buf; *c; ++c) {
        h ^= static_cast<unsigned char>(*c);
        h *= 1099511628211ULL;
    }
    return h;
}

const std::vector<std::string>& keepable_parameters() {
    static const std::vector<std::string> names{"gemm.m_half", "gemm.nk_half"};
    return names;
}

bool is_held_out(const Measurement& m, int every) {
    if (every <= 1) {
        return false;
    }
    return shape_hash(m) % static_cast<unsigned long long>(every) == 0;
}

ErrorStats error_stats(const std::vector<double>& e) {
    ErrorStats s;
    s.n = static_cast<int>(e.size());
    if (e.empty()) {
        return s;
    }
    double sum = 0;
    for (std::size_t i = 0; i < e.size(); ++i) {
        sum += e[i];
        if (s.worst < 0 || e[i] > s.max) {
            s.max = e[i];
            s.worst = static_cast<int>(i);
        }
    }
    s.mape = sum / static_cast<double>(e.size());
    std::vector<double> sorted = e;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    s.median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    // Nearest-rank percentile: the smallest value with at least 90 % of the values at or below.
    const auto rank = static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(n)));
    s.p90 = sorted[std::max<std::size_t>(rank, 1) - 1];
    return s;
}

ErrorStats weighted_error_stats(const std::vector<double>& e, const std::vector<double>& w) {
    ErrorStats s = error_stats(e);
    if (e.empty() || w.size() != e.size()) {
        return s;
    }
    double total = 0, sum = 0;
    std::vector<std::pair<double, double>> sorted;
    for (std::size_t i = 0; i < e.size(); ++i) {
        total += w[i];
        sum += w[i] * e[i];
        sorted.emplace_back(e[i], w[i]);
    }
    if (!(total > 0)) {
        return s;
    }
    s.mape = sum / total;
    std::sort(sorted.begin(), sorted.end());
    auto quantile = [&](double q) {
        double acc = 0;
        for (const auto& [err, weight] : sorted) {
            acc += weight;
            if (acc >= q * total) {
                return err;
            }
        }
        return sorted.back().first;
    };
    s.median = quantile(0.5);
    s.p90 = quantile(0.9);
    return s;
}

// ---------------------------------------------------------------- linear building blocks

std::optional<model::SaturatingCurve> fit_saturating(const std::vector<CurvePoint>& pts) {
    std::vector<CurvePoint> use;
    for (const auto& p : pts) {
        if (p.x > 0 && p.ideal > 0 && p.time > 0) {
            use.push_back(p);
        }
    }
    if (use.size() < 2) {
        return std::nullopt;
    }
    // Relative residual: (ideal/time) × (a + b/x) − 1, with a = 1/max and b = half/max.
    Eigen::MatrixXd a(static_cast<Eigen::Index>(use.size()), 2);
    Eigen::VectorXd b = Eigen::VectorXd::Ones(static_cast<Eigen::Index>(use.size()));
    for (std::size_t i = 0; i < use.size(); ++i) {
        const double r = use[i].ideal / use[i].time;
        a(static_cast<Eigen::Index>(i), 0) = r;
        a(static_cast<Eigen::Index>(i), 1) = r / use[i].x;
    }
    Eigen::VectorXd sol = least_squares(a, b);
    if (!(sol(0) > 0) || !std::isfinite(sol(0))) {
        return std::nullopt;
    }
    if (sol(1) < 0) {
        // The data show no size dependence: refit a constant efficiency.
        const double num = a.col(0).sum();
        const double den = a.col(0).squaredNorm();
        return model::SaturatingCurve{den / num, 0.0};
    }
    return model::SaturatingCurve{1.0 / sol(0), sol(1) / sol(0)};
}

std::optional<AlphaBeta> fit_alpha_beta(const std::vector<double>& bytes,
                                        const std::vector<double>& times) {
    const std::size_t n = std::min(bytes.size(), times.size());
    if (n < 2) {
        return std::nullopt;
    }
    // Relative residual: (alpha + beta × bytes) / time − 1.
    Eigen::MatrixXd a(static_cast<Eigen::Index>(n), 2);
    Eigen::VectorXd b = Eigen::VectorXd::Ones(static_cast<Eigen::Index>(n));
    for (std::size_t i = 0; i < n; ++i) {
        a(static_cast<Eigen::Index>(i), 0) = 1.0 / times[i];
        a(static_cast<Eigen::Index>(i), 1) = bytes[i] / times[i];
    }
    Eigen::VectorXd sol = least_squares(a, b);
    if (!(sol(1) > 0) || !std::isfinite(sol(1))) {
        return std::nullopt;
    }
    AlphaBeta ab{std::max(0.0, sol(0)), 1.0 / sol(1), 0.0};
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
        sum += std::abs((ab.alpha_s + bytes[i] / ab.bandwidth) / times[i] - 1.0);
    }
    ab.mape = sum / static_cast<double>(n);
    return ab;
}

// ---------------------------------------------------------------- evaluation

Evaluation evaluate(const std::vector<Measurement>& points, const Hardware& hw,
                    const model::EfficiencyProfile& profile,
                    const std::vector<hwdb::TimingOffset>& offsets, Subset subset,
                    int holdout_every) {
    if (subset == Subset::HeldOut && holdout_every < 2) {
        // No shape is held out, so the report would read 0 points at 0 % error.
        throw InvalidArgument("holdout-every " + std::to_string(holdout_every) +
                              " holds out no shapes, so there is no held-out error to report; "
                              "give 2 or more (the fit's rule, default 5) or use every point "
                              "with --all");
    }
    Evaluation ev;
    const std::string gpu = hwdb::normalize_name(hw.gpu.name);
    std::array<std::vector<double>, kClasses> abs_err, signed_err;
    std::array<std::vector<const Measurement*>, kClasses> which;
    std::vector<double> all, all_time;
    std::map<std::pair<int, std::string>, std::pair<std::vector<double>, double>> by_op;
    for (const auto& m : points) {
        if (hwdb::normalize_name(m.gpu) != gpu) {
            continue;
        }
        const bool held = is_held_out(m, holdout_every);
        if ((subset == Subset::HeldOut && !held) || (subset == Subset::Train && held)) {
            continue;
        }
        const auto p = prepare(m, hw);
        if (!p) {
            ++ev.skipped;
            continue;
        }
        const double e =
            predict(*p, profile, host_offset_for(m.source, offsets, profile)) / m.time_s - 1.0;
        const int c = cls_index(m.op_class);
        abs_err[static_cast<std::size_t>(c)].push_back(std::abs(e));
        signed_err[static_cast<std::size_t>(c)].push_back(e);
        which[static_cast<std::size_t>(c)].push_back(&m);
        all.push_back(std::abs(e));
        all_time.push_back(m.time_s);
        auto& o = by_op[{c, m.op}];
        o.first.push_back(std::abs(e));
        o.second += e;
    }
    for (const auto& [key, o] : by_op) {
        ev.ops.push_back({static_cast<OpClass>(key.first), key.second, error_stats(o.first),
                          o.second / static_cast<double>(o.first.size())});
    }
    for (int c = 0; c < kClasses; ++c) {
        const auto ci = static_cast<std::size_t>(c);
        if (abs_err[ci].empty()) {
            continue;
        }
        Evaluation::Class cl;
        cl.op_class = static_cast<OpClass>(c);
        cl.stats = error_stats(abs_err[ci]);
        std::vector<std::size_t> idx(abs_err[ci].size());
        for (std::size_t i = 0; i < idx.size(); ++i) {
            idx[i] = i;
        }
        std::sort(idx.begin(), idx.end(),
                  [&](std::size_t a, std::size_t b) { return abs_err[ci][a] > abs_err[ci][b]; });
        for (std::size_t i = 0; i < idx.size() && static_cast<int>(i) < kWorstCases; ++i) {
            const Measurement& m = *which[ci][idx[i]];
            cl.worst.push_back(
                {m, m.time_s * (1.0 + signed_err[ci][idx[i]]), signed_err[ci][idx[i]]});
        }
        ev.classes.push_back(std::move(cl));
    }
    ev.all = error_stats(all);
    ev.all_time_weighted = weighted_error_stats(all, all_time);
    return ev;
}

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
    const std::string gpu = hwdb::normalize_name(hw.gpu.name);
    const double bw = hw.gpu.memory_bandwidth.si();

    // Prepare the GPU's points; index the host-timed data sets.
    std::vector<std::string> sources;
    std::vector<Sample> samples;
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
            auto it = std::find(sources.begin(), sources.end(), m.source);
            if (it == sources.end()) {
                sources.push_back(m.source);
                it = sources.end() - 1;
            }
            s.source = static_cast<int>(it - sources.begin());
        }
        if (m.op_class == OpClass::AllReduce || m.op_class == OpClass::SendRecv) {
            // The profile's one communication curve describes the GPU's scale-up fabric (NVLink,
            // NVSwitch, AMD Infinity Fabric); PCIe and network rows are validated but not fitted
            // (their alpha-beta is reported per link below).
            const model::InterconnectSpec* l = hw.find_link(m.link);
            s.in_fit =
                m.nodes == 1 && l &&
                (l->kind == model::LinkKind::NvLink || l->kind == model::LinkKind::NvSwitch ||
                 l->kind == model::LinkKind::InfinityFabric);
        }
        if (std::find(opt.validation_only_ops.begin(), opt.validation_only_ops.end(), m.op) !=
            opt.validation_only_ops.end()) {
            s.in_fit = false;
        }
        samples.push_back(s);
    }
    for (const auto& [reason, count] : skipped_reasons) {
        rep.notes.push_back("skipped " + std::to_string(count) + " points (" + reason + ")");
    }
    if (samples.empty()) {
        throw InputError("no measurement of '" + hw.gpu.name +
                         "' can be predicted; check the points' gpu names and data types");
    }
    rep.points = static_cast<int>(samples.size());

    std::array<int, kClasses> n_train{};
    std::set<double> nk_values;
    std::set<double> m_values; // dense GEMM row counts: m_half needs a sweep over M
    std::array<int, model::kComputeTypeCount> n_dtype{}; // dense GEMM points per type
    int n_weight_only = 0;                               // weight-only GEMM points
    std::vector<int> n_source(sources.size(), 0);
    for (const auto& s : samples) {
        if (s.held_out || !s.in_fit) {
            continue;
        }
        ++n_train[static_cast<std::size_t>(s.cls)];
        if (s.cls == cls_index(OpClass::Gemm) && s.p.path == model::GemmPath::WeightOnly) {
            ++n_weight_only;
        } else if (s.cls == cls_index(OpClass::Gemm)) {
            nk_values.insert(s.p.k * s.p.n);
            m_values.insert(s.p.m);
            ++n_dtype[static_cast<std::size_t>(s.p.type)];
        }
        if (s.source >= 0) {
            ++n_source[static_cast<std::size_t>(s.source)];
        }
    }
    auto enough = [&](OpClass c) {
        return n_train[static_cast<std::size_t>(cls_index(c))] >= opt.min_points;
    };

    std::vector<double> v = params_of(base, sources.size());
    // Initial harness offsets: half the smallest time of each host-timed set.
    for (std::size_t i = 0; i < sources.size(); ++i) {
        double smallest = std::numeric_limits<double>::infinity();
        for (const auto& s : samples) {
            if (s.source == static_cast<int>(i)) {
                smallest = std::min(smallest, s.p.time_s);
            }
        }
        v[kOffset0 + i] = 0.5 * smallest;
    }
    auto train_of = [&](OpClass c) {
        std::vector<const Sample*> out;
        for (const auto& s : samples) {
            if (!s.held_out && s.in_fit && s.cls == cls_index(c)) {
                out.push_back(&s);
            }
        }
        return out;
    };
    auto adjusted = [&](const Sample& s) { return s.p.time_s - offset_of(s, v); };

    // Linear starts, class by class.
    if (enough(OpClass::MemoryBound)) {
        std::vector<CurvePoint> pts;
        for (const Sample* s : train_of(OpClass::MemoryBound)) {
            pts.push_back({s->p.bytes, s->p.bytes / bw, adjusted(*s)});
        }
        if (auto c = fit_saturating(pts)) {
            v[kMemMax] = c->max;
            v[kMemHalf] = c->half;
        }
    }
    if (enough(OpClass::AttentionDecode)) {
        std::vector<CurvePoint> pts;
        for (const Sample* s : train_of(OpClass::AttentionDecode)) {
            pts.push_back({s->p.bytes, s->p.bytes / bw, adjusted(*s)});
        }
        if (auto c = fit_saturating(pts)) {
            v[kDecMax] = c->max;
            v[kDecHalf] = c->half;
        }
    }
    if (enough(OpClass::AttentionPrefill)) {
        std::vector<CurvePoint> pts;
        for (const Sample* s : train_of(OpClass::AttentionPrefill)) {
            pts.push_back({s->p.x, s->p.flops / s->p.peak, adjusted(*s)});
        }
        if (auto c = fit_saturating(pts)) {
            v[kPreMax] = c->max;
            v[kPreHalf] = c->half;
        }
    }
    const bool fit_gemm = enough(OpClass::Gemm);
    const bool has16 = n_dtype[static_cast<std::size_t>(model::ComputeType::Bf16)] +
                           n_dtype[static_cast<std::size_t>(model::ComputeType::Fp16)] >=
                       opt.min_points;
    const auto kept = [&](const char* name) {
        return std::find(opt.keep.begin(), opt.keep.end(), name) != opt.keep.end();
    };
    const bool fit_nk = fit_gemm && nk_values.size() >= 3 && !kept("gemm.nk_half");
    // A set at one M (e.g. only 8192 x 8192 x K GEMMs) says nothing about m_half: keep the base's.
    const bool fit_m = fit_gemm && m_values.size() >= 3 && !kept("gemm.m_half");
    if (fit_gemm) {
        // time/ideal = 1/eff = a (1 + m_half/m)(1 + nk_half/nk) = a + b/m + c/nk + d/(m nk),
        // linear in (a, b, c, d) on compute-bound rows (measured time well above the memory
        // time of the start curve). 16-bit rows set the reference when there are any.
        model::EfficiencyProfile start = base;
        set_params(v, start);
        std::vector<const Sample*> rows;
        for (const Sample* s : train_of(OpClass::Gemm)) {
            const bool ref = s->p.path == model::GemmPath::Dense &&
                             (!has16 || s->p.type == model::ComputeType::Bf16 ||
                              s->p.type == model::ComputeType::Fp16);
            const double bytes = s->p.k * s->p.n * s->p.weight_bytes +
                                 (s->p.m * s->p.k + s->p.m * s->p.n) * s->p.act_bytes;
            const double mt = bytes / (bw * start.memory.at(bytes));
            if (ref && adjusted(*s) > 1.5 * mt) {
                rows.push_back(s);
            }
        }
        // Columns: a, then b (m) and c (nk) when they vary, and d when both do; a fixed
        // m_half or nk_half enters through the factor of the other terms instead.
        const int c_m = fit_m ? 1 : -1;
        const int c_nk = fit_nk ? (fit_m ? 2 : 1) : -1;
        const int c_mnk = fit_m && fit_nk ? 3 : -1;
        const int cols = 1 + (fit_m ? 1 : 0) + (fit_nk ? 1 : 0) + (fit_m && fit_nk ? 1 : 0);
        if (static_cast<int>(rows.size()) >= cols + 2) {
            Eigen::MatrixXd a(static_cast<Eigen::Index>(rows.size()), cols);
            Eigen::VectorXd b = Eigen::VectorXd::Ones(static_cast<Eigen::Index>(rows.size()));
            for (std::size_t i = 0; i < rows.size(); ++i) {
                const auto& p = rows[i]->p;
                double r = 2.0 * p.m * p.k * p.n / p.peak / adjusted(*rows[i]);
                if (!fit_m) {
                    r *= 1.0 + v[kGemmMHalf] / p.m;
                }
                if (!fit_nk) {
                    r *= 1.0 + v[kGemmNkHalf] / (p.k * p.n);
                }
                const auto ri = static_cast<Eigen::Index>(i);
                a(ri, 0) = r;
                if (fit_m) {
                    a(ri, c_m) = r / p.m;
                }
                if (fit_nk) {
                    a(ri, c_nk) = r / (p.k * p.n);
                }
                if (c_mnk >= 0) {
                    a(ri, c_mnk) = r / (p.m * p.k * p.n);
                }
            }
            const Eigen::VectorXd sol = least_squares(a, b);
            if (sol(0) > 0 && std::isfinite(sol(0))) {
                const double scale16 =
                    has16 ? 1.0 : v[kScale0 + static_cast<std::size_t>(rows[0]->p.type)];
                v[kGemmEmax] = 1.0 / sol(0) / scale16;
                if (fit_m) {
                    v[kGemmMHalf] = std::max(0.0, sol(c_m) / sol(0));
                }
                if (fit_nk) {
                    v[kGemmNkHalf] = std::max(0.0, sol(c_nk) / sol(0));
                }
            }
        }
        if (has16) {
            v[kScale0 + static_cast<std::size_t>(model::ComputeType::Bf16)] = 1.0;
            v[kScale0 + static_cast<std::size_t>(model::ComputeType::Fp16)] = 1.0;
        }
    }
    // Communication: ring all-reduce time = c (msg + half)/(bw max) + L + overhead with
    // c = 2(n−1)/n and L = 2(n−1) × latency (send: c = 1, L = latency), linear in
    // (1/max, half/max, overhead). NCCL's tree for small messages is left to the refinement.
    const int n_comm = n_train[static_cast<std::size_t>(cls_index(OpClass::AllReduce))] +
                       n_train[static_cast<std::size_t>(cls_index(OpClass::SendRecv))];
    const bool fit_comm = n_comm >= opt.min_points;
    if (fit_comm) {
        std::vector<const Sample*> rows = train_of(OpClass::AllReduce);
        for (const Sample* s : train_of(OpClass::SendRecv)) {
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
            const double t = adjusted(*rows[i]);
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

    // The free parameters.
    std::vector<int> free;
    auto add_free = [&](int p, bool on) {
        if (on) {
            free.push_back(p);
        }
    };
    add_free(kGemmEmax, fit_gemm);
    add_free(kGemmMHalf, fit_m);
    add_free(kGemmNkHalf, fit_nk);
    for (std::size_t t = 0; t < model::kComputeTypeCount; ++t) {
        const auto type = static_cast<model::ComputeType>(t);
        const bool sixteen = type == model::ComputeType::Bf16 || type == model::ComputeType::Fp16;
        add_free(kScale0 + static_cast<int>(t),
                 fit_gemm && has16 && !sixteen && n_dtype[t] >= opt.min_points);
    }
    // The weight-only row curve has no linear start: it is refined from the base values.
    const bool fit_weight_only = n_weight_only >= opt.min_points;
    add_free(kWoMax, fit_weight_only);
    add_free(kWoHalf, fit_weight_only);
    add_free(kMemMax, enough(OpClass::MemoryBound));
    add_free(kMemHalf, enough(OpClass::MemoryBound));
    add_free(kPreMax, enough(OpClass::AttentionPrefill));
    add_free(kPreHalf, enough(OpClass::AttentionPrefill));
    add_free(kDecMax, enough(OpClass::AttentionDecode));
    add_free(kDecHalf, enough(OpClass::AttentionDecode));
    add_free(kCommMax, fit_comm);
    add_free(kCommHalf, fit_comm);
    add_free(kCommOverhead, fit_comm);
    for (std::size_t i = 0; i < sources.size(); ++i) {
        add_free(kOffset0 + static_cast<int>(i), n_source[i] >= 3);
    }
    // Log space needs positive values; a half of 0 starts from a small positive size.
    for (int p : free) {
        auto& x = v[static_cast<std::size_t>(p)];
        if (!(x > 0)) {
            x = (p == kGemmMHalf || p == kWoHalf)       ? 1.0
                : p == kGemmNkHalf                      ? 1e3
                : p == kPreHalf                         ? 1.0
                : (p == kCommOverhead || p >= kOffset0) ? 1e-7
                                                        : 1e3;
        }
    }

    // Joint Levenberg-Marquardt refinement on r_i = w_i (pred_i / meas_i − 1), each class
    // weighted so that its squared errors sum to its mean square (communication as one class),
    // plus a weak pull of each log
    // parameter toward its start.
    std::vector<const Sample*> fit_rows;
    for (const auto& s : samples) {
        if (!s.held_out && s.in_fit) {
            fit_rows.push_back(&s);
        }
    }
    std::vector<double> weight(fit_rows.size());
    for (std::size_t i = 0; i < fit_rows.size(); ++i) {
        // All-reduce and send/recv share one curve and are weighted as one group, by their
        // point counts (all-reduce, twice per layer in tensor parallelism, dominates).
        const int c = fit_rows[i]->cls;
        const bool comm = c == cls_index(OpClass::AllReduce) || c == cls_index(OpClass::SendRecv);
        weight[i] =
            1.0 /
            std::sqrt(static_cast<double>(comm ? n_comm : n_train[static_cast<std::size_t>(c)]));
    }
    const auto nf = static_cast<Eigen::Index>(free.size());
    const auto nr = static_cast<Eigen::Index>(fit_rows.size()) + nf;
    Eigen::VectorXd theta0(nf);
    for (Eigen::Index j = 0; j < nf; ++j) {
        const int param = free[static_cast<std::size_t>(j)];
        theta0(j) = to_theta(param, v[static_cast<std::size_t>(param)]);
    }
    model::EfficiencyProfile work = base;
    auto residuals = [&](const Eigen::VectorXd& theta, Eigen::VectorXd& r, unsigned mask) {
        std::vector<double> vv = v;
        for (Eigen::Index j = 0; j < nf; ++j) {
            const int param = free[static_cast<std::size_t>(j)];
            vv[static_cast<std::size_t>(param)] = from_theta(param, theta(j));
        }
        set_params(vv, work);
        for (std::size_t i = 0; i < fit_rows.size(); ++i) {
            const Sample& s = *fit_rows[i];
            if (mask & (1u << s.cls)) {
                r(static_cast<Eigen::Index>(i)) = weight[i] * rel_error(s, work, vv);
            }
        }
        for (Eigen::Index j = 0; j < nf; ++j) {
            r(static_cast<Eigen::Index>(fit_rows.size()) + j) =
                opt.prior_weight * (theta(j) - theta0(j));
        }
    };
    Eigen::VectorXd theta = theta0;
    if (opt.refine && nf > 0) {
        Eigen::VectorXd r(nr);
        residuals(theta, r, ~0u);
        double cost = r.squaredNorm();
        double mu = 1e-3;
        Eigen::MatrixXd jac(nr, nf);
        const double h = 1e-6;
        for (int it = 0; it < opt.max_iterations; ++it) {
            rep.iterations = it + 1;
            for (Eigen::Index j = 0; j < nf; ++j) {
                Eigen::VectorXd tp = theta;
                tp(j) += h;
                Eigen::VectorXd rp = r;
                const int param = free[static_cast<std::size_t>(j)];
                unsigned mask = classes_of(param);
                residuals(tp, rp, mask);
                jac.col(j) = (rp - r) / h;
            }
            const Eigen::MatrixXd jtj = jac.transpose() * jac;
            const Eigen::VectorXd g = jac.transpose() * r;
            bool accepted = false;
            double new_cost = cost;
            for (int tries = 0; tries < 12 && !accepted; ++tries) {
                Eigen::MatrixXd a = jtj;
                for (Eigen::Index j = 0; j < nf; ++j) {
                    a(j, j) += mu * std::max(jtj(j, j), 1e-12);
                }
                Eigen::VectorXd step = a.ldlt().solve(-g);
                for (Eigen::Index j = 0; j < nf; ++j) {
                    step(j) = std::clamp(step(j), -2.0, 2.0);
                }
                Eigen::VectorXd trial = theta + step;
                Eigen::VectorXd rt(nr);
                residuals(trial, rt, ~0u);
                new_cost = rt.squaredNorm();
                if (std::isfinite(new_cost) && new_cost < cost) {
                    accepted = true;
                    theta = trial;
                    r = rt;
                    mu = std::max(mu / 3.0, 1e-12);
                } else {
                    mu *= 4.0;
                }
            }
            if (!accepted) {
                break;
            }
            const double gain = cost - new_cost;
            cost = new_cost;
            if (gain <= 1e-14 * std::max(cost, 1e-30) || cost < 1e-28) {
                break;
            }
        }
    }
    for (Eigen::Index j = 0; j < nf; ++j) {
        const int param = free[static_cast<std::size_t>(j)];
        v[static_cast<std::size_t>(param)] = from_theta(param, theta(j));
    }
    // A fitted curve whose half-saturation collapsed to nothing is a constant efficiency.
    for (int p : {kGemmMHalf, kGemmNkHalf, kWoHalf, kMemHalf, kPreHalf, kDecHalf, kCommHalf}) {
        if (v[static_cast<std::size_t>(p)] < 1e-6) {
            v[static_cast<std::size_t>(p)] = 0.0;
        }
    }
    rep.profile = base;
    set_params(v, rep.profile);
    if (fit_gemm) {
        const auto note = [&](bool fitted, const char* name, const char* too_few) {
            if (!fitted) {
                rep.notes.push_back(std::string("gemm: ") + name +
                                    " kept at the base profile's value (" +
                                    (kept(name) ? std::string("--keep") : too_few) + ")");
            }
        };
        note(fit_m, "gemm.m_half", "fewer than 3 row counts M in the training points");
        note(fit_nk, "gemm.nk_half", "fewer than 3 weight sizes N x K in the training points");
    }
    if (n_weight_only > 0) {
        rep.notes.push_back("gemm_weight_only: " + std::to_string(n_weight_only) +
                            " training points; " +
                            (fit_weight_only ? std::string("fitted")
                                             : "fewer than " + std::to_string(opt.min_points) +
                                                   ", the base profile's curve is kept"));
    }
    for (std::size_t i = 0; i < sources.size(); ++i) {
        if (n_source[i] >= 3) {
            rep.offsets.push_back({sources[i], Seconds(v[kOffset0 + i]), n_source[i]});
        } else {
            rep.notes.push_back("host-timed set '" + sources[i] + "' has " +
                                std::to_string(n_source[i]) +
                                " training points; its offset is the launch overhead");
        }
    }

    // Reports: fitted and base profile, training and held-out points, per class.
    std::vector<double> v_base = params_of(base, sources.size());
    for (std::size_t i = 0; i < sources.size(); ++i) {
        v_base[kOffset0 + i] = n_source[i] >= 3 ? v[kOffset0 + i] : base.launch_overhead.si();
    }
    std::vector<double> v_fit = v;
    for (std::size_t i = 0; i < sources.size(); ++i) {
        if (n_source[i] < 3) {
            v_fit[kOffset0 + i] = rep.profile.launch_overhead.si();
        }
    }
    std::vector<double> all_fit, all_base, all_time;
    const std::array<bool, kClasses> fitted_class = {fit_gemm,
                                                     enough(OpClass::AttentionPrefill),
                                                     enough(OpClass::AttentionDecode),
                                                     enough(OpClass::MemoryBound),
                                                     fit_comm,
                                                     fit_comm};
    for (int c = 0; c < kClasses; ++c) {
        std::vector<double> tr, ho, dtr, dho, ho_signed;
        std::vector<const Sample*> ho_samples;
        for (const auto& s : samples) {
            if (s.cls != c) {
                continue;
            }
            const double ef = rel_error(s, rep.profile, v_fit);
            const double eb = rel_error(s, base, v_base);
            if (s.held_out) {
                ho.push_back(std::abs(ef));
                dho.push_back(std::abs(eb));
                ho_signed.push_back(ef);
                ho_samples.push_back(&s);
                all_fit.push_back(std::abs(ef));
                all_base.push_back(std::abs(eb));
                all_time.push_back(s.p.time_s);
            } else {
                tr.push_back(std::abs(ef));
                dtr.push_back(std::abs(eb));
            }
        }
        if (tr.empty() && ho.empty()) {
            continue;
        }
        ClassReport cr;
        cr.op_class = static_cast<OpClass>(c);
        cr.fitted = fitted_class[static_cast<std::size_t>(c)];
        cr.train = error_stats(tr);
        cr.held_out = error_stats(ho);
        cr.default_train = error_stats(dtr);
        cr.default_held_out = error_stats(dho);
        cr.worst = worst_of(ho_samples, ho_signed);
        if (!cr.fitted) {
            rep.notes.push_back(std::string(model::to_string(cr.op_class)) + ": " +
                                std::to_string(n_train[static_cast<std::size_t>(c)]) +
                                " training points (fewer than " + std::to_string(opt.min_points) +
                                "); the base profile's curve is kept");
        }
        rep.classes.push_back(std::move(cr));
    }
    rep.held_out = error_stats(all_fit);
    rep.default_held_out = error_stats(all_base);
    rep.held_out_time_weighted = weighted_error_stats(all_fit, all_time);
    rep.default_held_out_time_weighted = weighted_error_stats(all_base, all_time);
    rep.holdout_every = opt.holdout_every;

    // Alpha-beta per collective, link and group, on all of the GPU's communication points.
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
    for (const auto& [key, g] : groups) {
        if (g.first.size() < 4) {
            continue;
        }
        if (auto ab = fit_alpha_beta(g.first, g.second)) {
            rep.comm_links.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key),
                                      std::get<3>(key), Seconds(ab->alpha_s),
                                      BytesPerSecond(ab->bandwidth),
                                      static_cast<int>(g.first.size()), ab->mape});
        }
    }
    return rep;
}

} // namespace gpuplan::calib
