#pragma once
/// Speculative decoding: a cheap proposer drafts k tokens per sequence, the target model checks
/// all of them in one verify pass of k + 1 tokens per sequence, and the sequence advances by the
/// accepted prefix plus one token the verify pass samples itself (Leviathan et al., "Fast
/// Inference from Transformers via Speculative Decoding", arXiv:2211.17192, §3; Chen et al.,
/// arXiv:2302.01318). The proposer is a smaller draft model, an EAGLE-style head on the target's
/// hidden states (arXiv:2401.15077, EAGLE-3 arXiv:2503.01840), a multi-token-prediction module
/// (DeepSeek-V3, arXiv:2412.19437 §2.2) or n-gram lookup in the prompt (prompt lookup decoding;
/// vLLM's "ngram" proposer).
///
/// The gain is not a constant: the verify pass is costed by the step-cost model as a step of
/// k + 1 tokens per sequence, so at batch 1 (weight-bandwidth bound) it costs about what one
/// token costs and the accepted tokens are nearly free, while at large batches the GEMMs turn
/// compute-bound and the verify pass costs about k + 1 times a decode step, and the gain falls
/// below 1.

#include "model/deployment.hpp"
#include "model/efficiency.hpp"
#include "model/speculative_config.hpp"
#include "model/step_cost.hpp"
#include "model/units.hpp"

#include <optional>
#include <vector>

namespace gpuplan::model {

/// Memory per GPU the proposer adds (draft weights and the draft's KV per token).
struct DraftMemory {
    Bytes weights;      ///< draft model or head weights on one GPU
    Bytes kv_per_token; ///< the draft's KV bytes per token on one GPU
    friend bool operator==(const DraftMemory&, const DraftMemory&) = default;
};

/// The proposer's memory for a deployment whose engine has `speculative` set (zero otherwise).
/// A draft model is sharded like the target (same tp, no pp); an EAGLE head or MTP module is
/// one decoder layer of the target's shape sharing its embedding and LM head.
[[nodiscard]] DraftMemory draft_memory(const Deployment& d);

/// The deployment the proposer runs as: the draft model on the target's GPUs with the target's
/// tp (pp 1, dp 1), or the target cut to one decoder layer (EAGLE, MTP). nullopt for n-gram.
/// Throws InvalidArgument when the draft cannot be split like the target.
[[nodiscard]] std::optional<Deployment> draft_deployment(const Deployment& d);

/// Costs of speculative steps for one deployment: the proposer's step-cost model (none for
/// n-gram) and the acceptance. Built once; the queries are allocation-free.
class SpeculativeModel {
  public:
    /// Throws InvalidArgument when the config does not validate or the draft cannot run.
    SpeculativeModel(const Deployment& target, const SpeculativeConfig& config,
                     const EfficiencyProfile& profile);

    /// Draft tokens per step.
    [[nodiscard]] int k() const { return k_; }
    /// Per-position conditional acceptance, length k.
    [[nodiscard]] const std::vector<double>& acceptance() const { return acceptance_; }
    /// Expected tokens a sequence advances per verify step.
    [[nodiscard]] double tokens_per_step() const { return tokens_per_step_; }
    /// The proposer's step-cost model; null for n-gram lookup.
    [[nodiscard]] const StepCostModel* draft() const { return draft_ ? &*draft_ : nullptr; }
    [[nodiscard]] SpeculativeMethod method() const { return method_; }

    /// Adds to `s` (target sums) the verify pass of one sequence whose KV holds `cached` tokens:
    /// 1 + drafts query tokens (drafts < 0: k) at positions cached.., all producing logits; a
    /// prefill chunk read by FlashAttention varlen, or for MLA models decode queries on the
    /// absorbed path.
    void add_verify(const StepCostModel& target, BatchStats& s, int cached,
                    int drafts = -1) const noexcept;
    /// Adds `n` such sequences at the same `cached`.
    void add_verifies(const StepCostModel& target, BatchStats& s, int n, int cached,
                      int drafts = -1) const noexcept;

    /// The proposer's time in a step whose draft-side sums are `s` (built with draft()->add):
    /// one pass over everything in `s` (prompt chunks the draft must also see, and the first
    /// draft token of each decode), then k − 1 passes over the decodes only. Zero for n-gram.
    [[nodiscard]] Seconds draft_time(const BatchStats& s) const noexcept;

  private:
    SpeculativeMethod method_;
    int k_ = 1;
    std::vector<double> acceptance_;
    double tokens_per_step_ = 1.0;
    std::optional<StepCostModel> draft_;
    bool mla_ = false; ///< the target uses multi-head latent attention
};

} // namespace gpuplan::model
