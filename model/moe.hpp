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

/// BLOCK_SIZE_M of the Triton fused_moe kernel (vLLM and SGLang,
/// vllm/model_executor/layers/fused_moe/fused_moe.py) for `rows_per_expert` mean routed rows per
/// expert: the M tile each expert's rows are padded to by moe_align_block_size. The rule is read
/// off vLLM's tuned table for Mixtral-8x7B at tp 2 on H100
/// (vllm-project/vllm@02ba322d6c22e21885041c524f4a095e25e9bf71:
/// vllm/model_executor/layers/fused_moe/configs/E=8,N=7168,device_name=NVIDIA_H100_80GB_HBM3.json:
/// 16 up to 32 tokens, 32 at 48-96, 64 at 128-512, 128 from 1024; with top-2 of 8 experts a
/// token count M is M / 4 rows per expert), restated in rows per expert so that it carries to
/// other expert counts: 16 up to 8 rows, 32 up to 24, 64 up to 128, 128 above.
[[nodiscard]] double fused_moe_block_m(double rows_per_expert);

/// Expected M tiles per expert with a token, when an expert's rows (mean `rows_per_expert`,
/// at least 1) are padded up to a multiple of `block_m`: ceil(X / B) with the remainder of X
/// taken as uniform over the B residues, E[ceil(X / B)] ≈ m / B + (B − 1) / (2B), and never
/// below one tile. block_m <= 0 (no padding) gives m / 1 tiles of one row: rows_per_expert.
[[nodiscard]] double moe_tiles_per_expert(double rows_per_expert, double block_m);

/// Rows a grouped MoE kernel computes when each of `groups` experts with a token holds
/// rows / groups routed rows on average and pads them to `block_m`:
/// groups × block_m × moe_tiles_per_expert(rows / groups, block_m). `rows` when block_m <= 0.
[[nodiscard]] double moe_padded_rows(double rows, double groups, double block_m);

} // namespace gpuplan::model
