#include "calib/fit.hpp"
#include "calib/fit_params.hpp"
#include "calib/stats.hpp"
#include "model/checked_format.hpp"

#include "hwdb/database.hpp"
#include "model/error.hpp"

#include <Eigen/Dense>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

namespace gpuplan::calib {

using namespace detail;

std::string describe(const Measurement& m) {
    std::string shape;
    switch (m.op_class) {
    case OpClass::Gemm:
        shape = gpuplan::checked_format("m={:g} k={:g} n={:g}", m.m, m.k, m.n);
        break;
    case OpClass::AttentionPrefill:
    case OpClass::AttentionDecode:
        shape =
            gpuplan::checked_format("batch={} tokens={:g} context={:g} heads={}/{} d={}", m.batch,
                                    m.tokens, m.context, m.heads, m.kv_heads, m.head_dim);
        break;
    case OpClass::MemoryBound: shape = gpuplan::checked_format("bytes={:g}", m.bytes); break;
    case OpClass::AllReduce:
    case OpClass::SendRecv:
        shape =
            gpuplan::checked_format("bytes={:g} gpus={} link={}", m.bytes, m.tp, m.link.c_str());
        break;
    case OpClass::GroupedGemm:
        shape =
            gpuplan::checked_format("tokens={:g} hidden={:g} ffn={:g} experts={} top_k={} mats={}",
                                    m.m, m.k, m.n, m.experts, m.top_k, m.matrices);
        break;
    }
    return m.source_file + ":" + std::to_string(m.row) + " " + m.op + " " + shape + " " + m.dtype;
}

// ---------------------------------------------------------------- hold-out and statistics

unsigned long long shape_hash(const Measurement& m) {
    // FNV-1a (64 bit) over a canonical text of the shape: stable across runs, platforms and
    // compilers, unlike std::hash.
    std::string text = gpuplan::checked_format(
        "{}|{}|{}|{:.9g}|{:.9g}|{:.9g}|{}|{:.9g}|{:.9g}|{}|{}|{}|{:.9g}|{}|{}|{}|{}",
        hwdb::normalize_name(m.gpu).c_str(), model::to_string(m.op_class), m.op.c_str(), m.m, m.n,
        m.k, m.batch, m.tokens, m.context, m.heads, m.kv_heads, m.head_dim, m.bytes,
        m.dtype.c_str(), m.tp, m.nodes, m.link.c_str());
    if (m.op_class == OpClass::GroupedGemm) {
        // Only grouped points carry these; the other classes' texts (and their split) are as
        // they were.
        text += gpuplan::checked_format("|{}|{}|{}", m.experts, m.top_k, m.matrices);
    }
    // The hash covers at most the first 511 characters, as it always has (the text was written
    // into a 512-byte buffer), so that the held-out shapes stay the same ones.
    const std::size_t len = std::min<std::size_t>(text.size(), 511);
    unsigned long long h = 1469598103934665603ULL;
    for (std::size_t i = 0; i < len; ++i) {
        h ^= static_cast<unsigned char>(text[i]);
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
    s.median = nearest_rank(e, 0.5);
    s.p90 = nearest_rank(e, 0.9);
    return s;
}

ErrorStats weighted_error_stats(const std::vector<double>& e, const std::vector<double>& w) {
    ErrorStats s = error_stats(e);
    if (e.empty() || w.size() != e.size()) {
        return s;
    }
    double total = 0, sum = 0;
    for (std::size_t i = 0; i < e.size(); ++i) {
        total += w[i];
        sum += w[i] * e[i];
    }
    if (!(total > 0)) {
        return s;
    }
    s.mape = sum / total;
    s.median = weighted_nearest_rank(e, w, 0.5);
    s.p90 = weighted_nearest_rank(e, w, 0.9);
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

namespace {

// One class's errors in evaluate(): absolute and signed, and the points they belong to.
struct ClassErrors {
    std::vector<double> abs_err, signed_err;
    std::vector<const Measurement*> which;
};

// A class's statistics and its kWorstCases largest errors, worst first.
Evaluation::Class class_evaluation(OpClass c, const ClassErrors& e) {
    Evaluation::Class cl;
    cl.op_class = c;
    cl.stats = error_stats(e.abs_err);
    std::vector<std::size_t> idx(e.abs_err.size());
    for (std::size_t i = 0; i < idx.size(); ++i) {
        idx[i] = i;
    }
    std::sort(idx.begin(), idx.end(),
              [&](std::size_t a, std::size_t b) { return e.abs_err[a] > e.abs_err[b]; });
    for (std::size_t i = 0; i < idx.size() && static_cast<int>(i) < kWorstCases; ++i) {
        const Measurement& m = *e.which[idx[i]];
        cl.worst.push_back({m, m.time_s * (1.0 + e.signed_err[idx[i]]), e.signed_err[idx[i]]});
    }
    return cl;
}

// Whether evaluate() looks at a point of the subset.
bool in_subset(const Measurement& m, Subset subset, int holdout_every) {
    const bool held = is_held_out(m, holdout_every);
    return !((subset == Subset::HeldOut && !held) || (subset == Subset::Train && held));
}

} // namespace

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
    std::array<ClassErrors, kClasses> by_class;
    std::vector<double> all, all_time;
    std::map<std::pair<int, std::string>, std::pair<std::vector<double>, double>> by_op;
    for (const auto& m : points) {
        if (hwdb::normalize_name(m.gpu) != gpu || !in_subset(m, subset, holdout_every)) {
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
        ClassErrors& ce = by_class[static_cast<std::size_t>(c)];
        ce.abs_err.push_back(std::abs(e));
        ce.signed_err.push_back(e);
        ce.which.push_back(&m);
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
        if (!by_class[static_cast<std::size_t>(c)].abs_err.empty()) {
            ev.classes.push_back(
                class_evaluation(static_cast<OpClass>(c), by_class[static_cast<std::size_t>(c)]));
        }
    }
    ev.all = error_stats(all);
    ev.all_time_weighted = weighted_error_stats(all, all_time);
    return ev;
}

} // namespace gpuplan::calib
