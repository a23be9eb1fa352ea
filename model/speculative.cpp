#include "model/speculative.hpp"
#include "model/checked_format.hpp"

#include "model/error.hpp"
#include "model/memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuplan::model {

const char* to_string(SpeculativeMethod method) {
    return name_of(method);
}

std::optional<SpeculativeMethod> find_speculative_method(std::string_view name) {
    return value_of<SpeculativeMethod>(name);
}

int default_num_speculative_tokens(SpeculativeMethod method) {
    switch (method) {
    case SpeculativeMethod::Eagle: return 3;
    case SpeculativeMethod::Mtp: return 1;
    case SpeculativeMethod::DraftModel:
    case SpeculativeMethod::Ngram: return 4;
    }
    return 1;
}

double default_acceptance_rate(SpeculativeMethod method) {
    switch (method) {
    // Leviathan et al. (arXiv:2211.17192, Table 3) measure α from about 0.5 to 0.9 across
    // target/draft pairs (T5, GPT-like, LaMDA); 0.7 is an assumption inside that range for a
    // same-family draft about a tenth of the target's size.
    case SpeculativeMethod::DraftModel: return 0.7;
    // EAGLE (arXiv:2401.15077, acceptance-rate table, MT-bench, chain drafts) reports
    // per-position acceptance of roughly 0.7-0.8 for LLaMA2-Chat and Vicuna; 0.75 is an
    // assumption in that range. EAGLE-3 (arXiv:2503.01840) reports higher; give it explicitly.
    case SpeculativeMethod::Eagle: return 0.75;
    // DeepSeek-V3 (arXiv:2412.19437, §5.4.3): the second token predicted by its MTP module is
    // accepted 85-90 % of the time; 0.85 is the low end.
    case SpeculativeMethod::Mtp: return 0.85;
    // Prompt-lookup (n-gram) acceptance depends on how much of the output copies the prompt
    // (high for summarisation, code edits and RAG, low for open chat); 0.4 is an assumption.
    case SpeculativeMethod::Ngram: return 0.4;
    }
    return 0.0;
}

double expected_tokens_per_step(double alpha, int k) {
    if (k <= 0) {
        return 1.0;
    }
    if (alpha >= 1.0) {
        return k + 1.0;
    }
    // Σ_{i=0..k} α^i (Leviathan et al. eq. 1).
    return (1.0 - std::pow(alpha, k + 1)) / (1.0 - alpha);
}

double expected_tokens_per_step(std::span<const double> acceptance) {
    double total = 1.0; // the token the verify pass samples itself
    double prefix = 1.0;
    for (const double a : acceptance) {
        prefix *= a;
        total += prefix;
    }
    return total;
}

int speculative_tokens(const SpeculativeConfig& c) {
    if (c.num_speculative_tokens) {
        return *c.num_speculative_tokens;
    }
    if (!c.acceptance.empty()) {
        return static_cast<int>(c.acceptance.size());
    }
    return default_num_speculative_tokens(c.method);
}

std::vector<double> acceptance_by_position(const SpeculativeConfig& c) {
    if (!c.acceptance.empty()) {
        return c.acceptance;
    }
    const int k = std::max(0, speculative_tokens(c));
    return std::vector<double>(static_cast<std::size_t>(k),
                               c.acceptance_rate.value_or(default_acceptance_rate(c.method)));
}

void validate(const SpeculativeConfig& c) {
    const std::string where = "engine.speculative";
    const int k = speculative_tokens(c);
    constexpr int kMaxK = 64;
    if (k < 1 || k > kMaxK) {
        throw InvalidArgument(
            gpuplan::checked_format("{}.num_speculative_tokens: {} draft tokens per step; "
                                    "give a whole number from 1 to {}",
                                    where, k, kMaxK));
    }
    if (c.acceptance_rate && !c.acceptance.empty()) {
        throw InvalidArgument(where + ": both acceptance_rate and acceptance are given; keep one "
                                      "(a mean rate, or a list per position)");
    }
    if (c.acceptance_rate && !(*c.acceptance_rate >= 0.0 && *c.acceptance_rate < 1.0)) {
        throw InvalidArgument(
            gpuplan::checked_format("{}.acceptance_rate: {} is outside [0, 1); give the "
                                    "probability that a draft token is accepted, e.g. 0.7",
                                    where, *c.acceptance_rate));
    }
    if (!c.acceptance.empty()) {
        if (static_cast<int>(c.acceptance.size()) != k) {
            throw InvalidArgument(
                gpuplan::checked_format("{}.acceptance: {} positions for {} draft tokens; "
                                        "give one probability per draft token",
                                        where, c.acceptance.size(), k));
        }
        for (std::size_t i = 0; i < c.acceptance.size(); ++i) {
            const double a = c.acceptance[i];
            if (!(a >= 0.0 && a <= 1.0)) {
                throw InvalidArgument(
                    gpuplan::checked_format("{}.acceptance[{}]: {} is outside [0, 1]; give "
                                            "the probability that this position is "
                                            "accepted when the ones before it were",
                                            where, i, a));
            }
        }
    }
    if (c.method == SpeculativeMethod::DraftModel) {
        if (c.draft_model.empty() && !c.draft) {
            throw InvalidArgument(where + ": method draft_model needs draft_model: <catalog "
                                          "name>, e.g. llama-3.1-8b");
        }
    } else if (!c.draft_model.empty()) {
        throw InvalidArgument(
            gpuplan::checked_format("{}.draft_model: '{}' is given for method {}, which "
                                    "has no separate draft model; use method draft_model "
                                    "or remove the key",
                                    where, c.draft_model, to_string(c.method)));
    }
}

namespace {

/// The target cut to `layers` decoder layers (an EAGLE head or an MTP module has the target's
/// layer shape; DeepSeek-V3's MTP block is a MoE layer like the target's later layers).
ModelSpec head_model(const ModelSpec& target, int layers) {
    ModelSpec m = target;
    m.name = target.name + "-draft-head";
    m.layers = layers;
    if (m.moe) {
        m.moe->first_dense_layers = 0;
        m.moe->layer_interval = 1;
    }
    m.state.reset(); // an MTP or EAGLE layer attends (Qwen3.5's MTP layer is full attention)
    if (m.sliding_window) {
        m.sliding_window->windowed_layers = 0;
    }
    return m;
}

} // namespace

std::optional<Deployment> draft_deployment(const Deployment& d) {
    if (!d.engine.speculative || d.engine.speculative->method == SpeculativeMethod::Ngram) {
        return std::nullopt;
    }
    const SpeculativeConfig& c = *d.engine.speculative;
    Deployment draft = d;
    draft.engine.speculative.reset();
    draft.par.pp = 1;
    draft.par.dp = 1;
    draft.par.ep = std::min(d.par.ep, d.par.tp);
    if (draft.par.ep > 1 && draft.par.tp % draft.par.ep != 0) {
        draft.par.ep = 1;
    }
    if (c.method == SpeculativeMethod::DraftModel) {
        if (!c.draft) {
            throw InvalidArgument("engine.speculative.draft_model: the draft '" + c.draft_model +
                                  "' has no architecture; name a model of the catalog");
        }
        draft.model = *c.draft;
        // The draft runs at the target's precisions, with its own context limit.
        draft.engine.max_model_len.reset();
        draft.engine.max_num_seqs = resolve_engine(d).max_num_seqs;
        if (draft.model.moe == std::nullopt) {
            draft.par.ep = 1;
        }
    } else {
        draft.model = head_model(d.model, 1);
    }
    try {
        validate(draft);
    } catch (const InvalidArgument& e) {
        throw InvalidArgument(gpuplan::checked_format(
            "engine.speculative: the {} cannot be split like the "
            "target (tp {}): {}; choose a draft whose heads divide "
            "by tp",
            c.method == SpeculativeMethod::DraftModel ? "draft model '" + c.draft_model + "'"
                                                      : std::string("draft head"),
            d.par.tp, e.what()));
    }
    return draft;
}

DraftMemory draft_memory(const Deployment& d) {
    DraftMemory r;
    const auto draft = draft_deployment(d);
    if (!draft) {
        return r;
    }
    const MemoryEstimate one = estimate_memory(*draft);
    r.kv_per_token = one.kv_per_token;
    if (d.engine.speculative->method == SpeculativeMethod::DraftModel) {
        r.weights = one.weights;
    } else {
        // One decoder layer: the difference between two layers and one (the embedding and the
        // LM head are the target's own, shared).
        Deployment two = *draft;
        two.model = head_model(d.model, 2);
        r.weights = estimate_memory(two).weights - one.weights;
    }
    return r;
}

SpeculativeModel::SpeculativeModel(const Deployment& target, const SpeculativeConfig& config,
                                   const EfficiencyProfile& profile)
    : method_(config.method), mla_(target.model.mla.has_value()) {
    validate(config);
    k_ = speculative_tokens(config);
    acceptance_ = acceptance_by_position(config);
    tokens_per_step_ = expected_tokens_per_step(acceptance_);
    Deployment d = target;
    d.engine.speculative = config;
    if (auto draft = draft_deployment(d)) {
        draft_.emplace(*draft, profile);
    }
}

void SpeculativeModel::add_verify(const StepCostModel& target, BatchStats& s, int cached,
                                  int drafts) const noexcept {
    add_verifies(target, s, 1, cached, drafts);
}

void SpeculativeModel::add_verifies(const StepCostModel& target, BatchStats& s, int n, int cached,
                                    int drafts) const noexcept {
    if (n <= 0) {
        return;
    }
    const int q = 1 + (drafts < 0 ? k_ : std::min(drafts, k_));
    if (mla_) {
        // MLA backends treat requests of up to 1 + k query tokens as decodes (the absorbed,
        // latent-space path of FlashMLA), not as prefills that expand K and V per head: each
        // query is a decode at its own position (the latent KV, 576 elements per token and
        // layer for DeepSeek-V3, is counted once per query, an over-count of a small read).
        for (int i = 0; i < q; ++i) {
            target.add_decodes(s, n, cached + 1 + i);
        }
        return;
    }
    // FlashAttention varlen: q query tokens per sequence reading its KV once, each producing
    // logits.
    BatchStats one;
    target.add(one, PrefillChunk{q, cached});
    s.prefill_tokens += n * one.prefill_tokens;
    s.prefills += n * one.prefills;
    s.prefill_pairs += n * one.prefill_pairs;
    s.prefill_pairs_windowed += n * one.prefill_pairs_windowed;
    s.prefill_kv_read += n * one.prefill_kv_read;
    s.prefill_kv_read_windowed += n * one.prefill_kv_read_windowed;
    s.extra_logit_rows += static_cast<double>(n) * (q - 1);
}

Seconds SpeculativeModel::draft_time(const BatchStats& s) const noexcept {
    if (!draft_ || (s.decodes <= 0 && s.prefill_tokens <= 0)) {
        return Seconds(0);
    }
    // The first draft pass also runs the prompt chunks of the step (the draft needs their KV or
    // hidden states); the other k − 1 passes are decode steps of the proposing sequences.
    Seconds t = draft_->cost(s).time;
    if (s.decodes > 0 && k_ > 1) {
        BatchStats dec;
        dec.decodes = s.decodes;
        dec.decode_context = s.decode_context;
        dec.decode_context_windowed = s.decode_context_windowed;
        t += draft_->cost(dec).time * (k_ - 1);
    }
    return t;
}

} // namespace gpuplan::model
