#include "calib/fit_params.hpp"

#include <algorithm>
#include <cmath>

namespace gpuplan::calib::detail {

std::vector<double> params_of(const model::EfficiencyProfile& p, std::size_t offsets) {
    std::vector<double> v(static_cast<std::size_t>(kOffset0) + offsets, 0.0);
    v[kGemmEmax] = p.gemm.e_max;
    v[kGemmMHalf] = p.gemm.m_half;
    v[kGemmNkHalf] = p.gemm.nk_half;
    for (std::size_t i = 0; i < model::kGemmClassCount; ++i) {
        v[kScale0 + i] = p.gemm.scale(static_cast<model::GemmClass>(i));
    }
    v[kWoMax] = p.gemm_weight_only.max;
    v[kWoHalf] = p.gemm_weight_only.half;
    v[kGrMax] = p.gemm_grouped.max;
    v[kGrHalf] = p.gemm_grouped.half;
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
    for (std::size_t j = 0; j < model::kBlockScaledClassCount; ++j) {
        if (p.gemm.class_scale[j]) {
            p.gemm.class_scale[j] = v[kScale0 + model::kComputeTypeCount + j];
        }
    }
    p.gemm_weight_only = {v[kWoMax], v[kWoHalf]};
    p.gemm_grouped = {v[kGrMax], v[kGrHalf]};
    p.memory = {v[kMemMax], v[kMemHalf]};
    p.attention_prefill = {v[kPreMax], v[kPreHalf]};
    p.attention_decode = {v[kDecMax], v[kDecHalf]};
    p.comm.bandwidth = {v[kCommMax], v[kCommHalf]};
    p.comm.collective_overhead = Seconds(v[kCommOverhead]);
}

// The memory curve also bounds GEMMs and prefill attention; the prefill plateau also bounds
// decode compute; the dense GEMM plateau, scales and matrix-size term (and the weight-only
// curve, for quantized experts) also set grouped GEMMs.
unsigned classes_of(int param) {
    auto bit = [](OpClass c) { return 1u << cls_index(c); };
    if (param == kGrMax || param == kGrHalf) {
        return bit(OpClass::GroupedGemm);
    }
    if (param <= kMemMax - 1) {
        return bit(OpClass::Gemm) | bit(OpClass::GroupedGemm);
    }
    switch (param) {
    case kMemMax:
    case kMemHalf:
        return bit(OpClass::Gemm) | bit(OpClass::MemoryBound) | bit(OpClass::AttentionPrefill) |
               bit(OpClass::GroupedGemm);
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

namespace {

// Plateau efficiencies live in (0, 1): a kernel cannot beat the datasheet peak for long (the
// few points above it are L2-cache hits), so they are fitted through a logistic transform;
// everything else (half-saturations, scales, overheads) through a logarithm.
bool is_fraction(int param) {
    return param == kGemmEmax || param == kMemMax || param == kPreMax || param == kDecMax ||
           param == kCommMax;
}

} // namespace

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

double offset_of(const Sample& s, const std::vector<double>& v) {
    return s.source >= 0 ? v[static_cast<std::size_t>(kOffset0 + s.source)] : 0.0;
}

double rel_error(const Sample& s, const model::EfficiencyProfile& prof,
                 const std::vector<double>& v) {
    return predict(s.p, prof, offset_of(s, v)) / s.p.time_s - 1.0;
}

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

} // namespace gpuplan::calib::detail
