#pragma once
/// Mixture-of-experts runtime effects shared by the serving step cost (model/step_cost.cpp) and
/// the training step (model/training_geometry.cpp): the load of the busiest expert-parallel rank
/// under top-k routing, and the defaults of the MoE knobs. Pure functions; the prose is in
/// docs/training.md §2 (training) and docs/engines.md (serving).

namespace gpuplan::model {

/// Share of the expert-parallel all-to-all (dispatch and combine) hidden behind compute when not
/// given: 0. Overlap needs a schedule that splits the batch (SGLang --enable-two-batch-overlap,
/// vLLM --enable-dbo, DeepSeek's DualPipe for training, Megatron-Core
/// --overlap-moe-expert-parallel-comm) and each of those is off by default in its engine or
/// framework. 1: the all-to-all hides wholly behind the other micro-batch's compute, as
/// DeepSeek-V3 reports for DualPipe (arXiv 2412.19437 §3.2.1) and DeepEP's low-latency kernels.
inline constexpr double kDefaultEpOverlap = 0.0;

/// Largest n for which expected_max_std_normal integrates; above it, the asymptotic expansion.
inline constexpr int kQuadratureMaxN = 4096;

/// E[max(Z_1, ..., Z_n)] for n independent standard normal variables:
/// ∫ x · n φ(x) Φ(x)^(n−1) dx (0 for n = 1, 1/√π for n = 2, 3/(2√π) for n = 3). Numerical
/// quadrature up to kQuadratureMaxN (about 900 evaluations: call it once per deployment, not
/// per step), the extreme-value expansion beyond. n < 1 gives 0.
[[nodiscard]] double expected_max_std_normal(int n);

/// The busiest of `ep` expert-parallel ranks against the mean: the ratio of its routed token
/// copies to tokens × top_k / ep, when each of `tokens` tokens picks `top_k` distinct experts
/// of `experts` uniformly at random and every rank holds experts / ep of them. A rank's count
/// is a sum of per-token hypergeometric draws (top_k from experts, experts / ep of them on the
/// rank), so its variance is tokens × top_k × p(1 − p) × (E − k)/(E − 1) with p = 1/ep, and the
/// ranks' counts sum to tokens × top_k (a multinomial-like vector). In the normal limit the
/// counts are μ + σ'(Z_r − Z̄) with σ'² = tokens × top_k × p × (E − k)/(E − 1), so
///   E[max] / μ = 1 + z · sqrt(ep (E − k) / ((E − 1) · tokens · top_k)),  z = E[max of ep normals]
/// (`z` from expected_max_std_normal(ep)), capped where a rank takes every token's copies that
/// its experts can hold: ep · min(k, E/ep) / k. 1 for ep <= 1 or no tokens. This is the
/// statistical floor of uniform routing (balanced routers aim at it: DeepSeek-V3's bias-based
/// balancing, arXiv 2412.19437 §2.1.2); a trained router's skew comes on top and is the
/// knob's business.
[[nodiscard]] double moe_rank_imbalance(double tokens, double experts, double top_k, int ep,
                                        double z);

} // namespace gpuplan::model
