#include "plan/sizing_search.hpp"

#include "model/engine_rules.hpp"

#include "model/bottleneck.hpp"
#include "model/cost.hpp"
#include "model/engine_defaults.hpp"
#include "model/error.hpp"
#include "model/memory.hpp"
#include "model/operating_point.hpp"
#include "model/power.hpp"
#include "model/price_list.hpp"
#include "model/rack.hpp"
#include "model/serving.hpp"
#include "model/slo_capacity.hpp"
#include "model/step_cost.hpp"
#include "model/unit_parser.hpp"
#include "model/workload_mix.hpp"
#include "plan/choice_run.hpp"
#include "plan/row_outcome.hpp"
#include "plan/thread_pool.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <tuple>

namespace gpuplan::plan {

const char* to_string(SizingStage s) {
    switch (s) {
    case SizingStage::Invalid: return "invalid";
    case SizingStage::Memory: return "memory";
    case SizingStage::Latency: return "latency";
    case SizingStage::Capacity: return "capacity";
    case SizingStage::Price: return "price";
    case SizingStage::Budget: return "budget";
    case SizingStage::Power: return "power";
    case SizingStage::Racks: return "racks";
    case SizingStage::Simulated: return "simulated";
    case SizingStage::NotReached: return "not_reached";
    }
    return "?";
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Configurations simulated per round. Fixed (not the thread count) so the rounds, and with
// them the result, are the same on every machine.
constexpr std::size_t kBatch = 16;

using model::format_fixed;

std::string ms(double s) {
    return format_fixed(s * 1e3, s < 0.1 ? 1 : 0) + " ms";
}

// Mean lengths: the one rule of model/workload_mix.hpp (clamped as every draw is).
using model::mean_length;

/// A request class as the analytic pruning sees it: mean lengths and its SLOs.
struct ClassView {
    std::string name;
    double share = 1; ///< of requests (agent sessions count their steps)
    double input = 0; ///< mean prompt, shared prefix included
    double output = 0;
    int shared_prefix = 0;
    std::optional<Seconds> ttft, tpot, e2e;
};

std::vector<ClassView> class_views(const model::Scenario& s) {
    std::vector<ClassView> out;
    for (const auto& c : sim::effective_classes(s.workload)) {
        if (!(c.share > 0) || c.route == model::RouteTarget::Cloud) {
            continue;
        }
        ClassView v;
        v.name = c.name;
        v.output = mean_length(c.output);
        v.shared_prefix = c.shared_prefix;
        if (c.agent) {
            // A session of n steps re-sends its growing context: on average half of it.
            const double n = c.agent->steps;
            v.share = c.share * n;
            v.input = c.shared_prefix + mean_length(c.agent->step_input) * (n + 1) / 2 +
                      v.output * (n - 1) / 2;
        } else {
            v.share = c.share;
            v.input = c.shared_prefix + mean_length(c.input);
        }
        v.ttft = c.ttft ? c.ttft : s.slo.ttft;
        v.tpot = c.tpot ? c.tpot : s.slo.tpot;
        v.e2e = c.e2e ? c.e2e : s.slo.e2e;
        out.push_back(v);
    }
    return out;
}

/// Requests per second offered (0: no rate to size replicas for: a closed loop, given or the
/// default one every command uses when the scenario gives no load, or a trace replay). The
/// rate is the operating point's (model::offered_rate), so plan sizes for the load that
/// estimate, cost and simulate run at.
double offered_rate(const model::Scenario& s) {
    if (s.workload.arrival.kind == model::ArrivalKind::Trace) {
        return 0.0;
    }
    return model::offered_rate(s.workload).value_or(0.0);
}

/// The analytic workload: share-weighted mean lengths.
struct Mix {
    model::Workload w;
    int cached_prefix = 0;
    double mean_output = 1;
};

Mix analytic_mix(const model::Scenario& s) {
    // The class mix's mean request: the same reading estimate, cost and the desktop app use.
    Mix m;
    m.w = s.workload;
    if (const auto r = model::mean_request(s.workload)) {
        m.w.input_tokens = r->input_tokens;
        m.w.output_tokens = r->output_tokens;
        m.cached_prefix = r->cached_prefix;
    }
    m.mean_output = m.w.output_tokens;
    return m;
}

model::NodePower node_of(const model::PlanCandidate& c, const model::PowerModel& pm) {
    return c.node ? model::node_power_of(*c.node, pm) : model::unknown_node(c.gpus_per_node, pm);
}

/// The full-batch power estimate of one replica of the configured deployment (dp = 1).
model::PowerEstimate replica_power(const model::Scenario& t, const model::PlanCandidate& c,
                                   const model::EfficiencyProfile& profile, const Mix& mix,
                                   const model::MemoryEstimate& mem) {
    model::Deployment d1 = t.deployment;
    d1.par.dp = 1;
    model::Workload w = mix.w;
    model::set_closed_loop(w, std::max(1, model::replica_capacity(mem, w)));
    return model::estimate_power(d1, w, profile, t.power_model, t.power, node_of(c, t.power_model),
                                 t.slo, t.rack, mix.cached_prefix);
}

/// Cost and power of the configured deployment at its operating point: the estimate `gpuplan
/// cost` makes for the same configuration (one chain, so a plan row and cost agree), with the
/// capacity from its replica's full-batch estimate.
SizingCost cost_from(const model::Scenario& t, const model::PlanCandidate& c,
                     const model::EfficiencyProfile& profile, const Mix& mix,
                     const model::PowerEstimate& replica) {
    const model::Deployment& d = t.deployment;
    SizingCost r;
    r.capacity_tok_s = replica.capped.throughput * d.par.dp;
    const model::PowerEstimate p =
        model::estimate_power(d, t.workload, profile, t.power_model, t.power,
                              node_of(c, t.power_model), t.slo, t.rack, mix.cached_prefix);
    const model::ServerSpec* server = c.node ? &*c.node : nullptr;
    const model::CostInputs in = model::cost_inputs(t, server, p);
    const model::CostEstimate e = model::estimate_cost(in);
    r.currency = e.currency;
    const auto amount = [](const std::optional<model::Money>& m) {
        return m ? std::optional<double>(m->amount) : std::nullopt;
    };
    r.own_monthly = amount(e.own_monthly);
    r.rent_monthly = amount(e.rent_monthly);
    r.own_per_million = amount(e.own_per_million_tokens);
    r.rent_per_million = amount(e.rent_per_million_tokens);
    r.tokens_per_month = e.tokens;
    r.gpu_limit_w = p.limit.per_gpu.si();
    r.avg_power_w = p.deployment_average.si();
    r.peak_power_w = p.deployment_peak.si();
    r.node_peak_w = p.node_peak.si();
    r.nodes = p.nodes;
    r.excluded = e.excluded;
    r.notes = in.notes;
    return r;
}

/// One replica shape: everything but the replica count.
struct Shape {
    int candidate = 0;
    int tp = 1, pp = 1;
    model::Precision weights = model::bf16_precision();
    model::Precision kv = model::bf16_precision();
    int seqs = 0; // 0: the scenario's setting
    bool speculative = false;
};

/// Why the analytic stage stops a shape or a row: the stage, the reason, and how far off
/// (infinite when not a ratio).
struct Stop {
    SizingStage stage = SizingStage::Invalid;
    std::string reason;
    double ratio = kInf;
};

/// What the analytic stage found for one shape: a row per replica count it considered (or
/// one row for the whole shape when it stopped before replica counts).
struct ShapeOutcome {
    std::vector<SizingRow> rows;
};

// The value at the scenario's percentile: simulate()'s one SLO percentile rule.
using sim::at_percentile;

std::string config_text(const SizingConfig& k) {
    return std::to_string(k.gpus) + " x " + k.gpu + " (tp " + std::to_string(k.par.tp) +
           (k.par.pp > 1 ? ", pp " + std::to_string(k.par.pp) : "") + ", " +
           std::to_string(k.par.dp) + " replica" + (k.par.dp == 1 ? "" : "s") + ", " +
           k.weights.name + "/" + k.kv_cache.name + ", max_num_seqs " +
           std::to_string(k.max_num_seqs) + (k.speculative ? ", speculative" : "") + ")";
}

std::string money_text(double v, const std::string& currency) {
    return format_fixed(v, v >= 100 ? 0 : 2) + " " + currency;
}

class Search {
  public:
    Search(const model::Scenario& s, const std::optional<model::ServerSpec>& node,
           const SizingOptions& o, std::stop_token stop, const sim::ProgressFn& progress)
        : s_(s), opt_(o), stop_(std::move(stop)), progress_(progress) {
        if (!s.cluster.pools.empty()) {
            // Each configuration is one accelerator; simulating the scenario's pools for every
            // candidate would answer another question.
            throw InvalidArgument("plan: cluster.pools are not searched yet (a configuration is "
                                  "one accelerator); remove cluster.pools to size one pool, or "
                                  "compare pool mixes with `gpuplan simulate --set`");
        }
        plan_ = effective_plan(s, node);
        threads_ = worker_threads(o.threads);
        classes_ = class_views(s);
        if (classes_.empty()) {
            throw InvalidArgument(
                "plan: the workload has no class served locally with a positive share; "
                "give workload.classes or input_tokens/output_tokens");
        }
        if (plan_.budget && plan_.budget->per != model::PriceBasis::Month) {
            throw InvalidArgument("plan.budget must be a monthly amount, e.g. '$50000/month'");
        }
        mix_ = analytic_mix(s);
        offered_rps_ = offered_rate(s);
        has_slo_ = std::any_of(classes_.begin(), classes_.end(),
                               [](const ClassView& c) { return c.ttft || c.tpot || c.e2e; });
    }

    SizingResult run();

  private:
    const model::EfficiencyProfile& profile(const std::string& gpu) const {
        const auto it = opt_.profiles.find(gpu);
        return it != opt_.profiles.end() ? it->second : default_profile_;
    }
    /// The outcome of confirming a list with the simulator.
    struct Confirmed {
        std::vector<std::size_t>
            ranked; ///< the first `want` passes, none preceded by an untested one
        std::vector<std::size_t> passed; ///< every pass, in list order (one per shape)
    };
    Confirmed confirm(std::vector<SizingRow>& rows, const std::vector<int>& shape_of,
                      const std::vector<std::size_t>& order, std::vector<char>& simulated,
                      std::size_t want, std::size_t sim_budget, SizingResult& res) const;
    std::vector<Shape> shapes() const;
    // The steps of run() after the analytic stage.
    std::optional<std::size_t> cheapest_constrained(std::vector<SizingRow>& rows,
                                                    const std::vector<int>& shape_of,
                                                    std::vector<char>& simulated,
                                                    SizingResult& res) const;
    std::optional<std::size_t> closest_miss(const std::vector<SizingRow>& rows,
                                            std::optional<std::size_t> over_constraints) const;
    std::string verdict(const SizingResult& res, bool over_constraints) const;
    void add_notes(SizingResult& res, const std::vector<std::size_t>& order,
                   const std::vector<char>& simulated) const;
    // The analytic stage of one shape (analyse), in the order it prunes.
    ShapeOutcome analyse(const Shape& sh) const;
    SizingRow base_row(const Shape& sh, const model::PlanCandidate& cand) const;
    std::optional<Stop> layout_stop(const Shape& sh, const model::PlanCandidate& cand,
                                    const SizingRow& base) const;
    std::optional<Stop> analytic_stop(model::Scenario& t, const model::PlanCandidate& cand,
                                      SizingRow& base, model::MemoryEstimate& mem,
                                      model::PowerEstimate& replica) const;
    std::optional<Stop> lone_request_stop(const model::Scenario& t,
                                          const model::MemoryEstimate& mem,
                                          const model::EfficiencyProfile& prof,
                                          SizingRow& base) const;
    std::optional<Stop> replica_range(double cap_rps, SizingRow& base, int& dp_min,
                                      int& dp_max) const;
    bool cost_row(SizingRow& row, const model::Scenario& t, const model::PlanCandidate& cand,
                  const model::PowerEstimate& replica) const;
    std::optional<Stop> limit_stop(const SizingRow& row, const SizingCost& c,
                                   const model::RackPlan& racks,
                                   const model::PlanCandidate& cand) const;
    void simulate_row(SizingRow& row) const;
    void explain(SizingRow& row) const;
    // Ties in money: fewer GPUs, lower peak power, then the lower cost per million tokens (at
    // the same money the configuration that serves more tokens: with a closed loop, speculative
    // decoding's gain), then the candidate order and the layout.
    [[nodiscard]] std::tuple<double, int, double, double, int, int, int, std::string, std::string,
                             int, bool, int>
    key(const SizingRow& r) const {
        return {r.monthly.value_or(kInf), r.config.gpus,
                r.peak_power_w,           r.per_million_tokens.value_or(kInf),
                r.config.candidate,       r.config.par.tp,
                r.config.par.pp,          r.config.weights.name,
                r.config.kv_cache.name,   r.config.max_num_seqs,
                r.config.speculative,     r.config.par.dp};
    }

    const model::Scenario& s_;
    model::PlanConfig plan_;
    SizingOptions opt_;
    std::stop_token stop_;
    const sim::ProgressFn& progress_;
    int threads_ = 1;
    std::vector<ClassView> classes_;
    Mix mix_;
    double offered_rps_ = 0;
    bool has_slo_ = false;
    model::EfficiencyProfile default_profile_ = model::default_profile();
};

std::vector<Shape> Search::shapes() const {
    std::vector<Shape> out;
    const std::vector<model::Precision> weights =
        plan_.weights.empty() ? std::vector{s_.deployment.prec.weights} : plan_.weights;
    const std::vector<model::Precision> kvs =
        plan_.kv_cache.empty() ? std::vector{s_.deployment.prec.kv_cache} : plan_.kv_cache;
    const std::vector<int> seqs = plan_.max_num_seqs.empty() ? std::vector{0} : plan_.max_num_seqs;
    const std::vector<int> pps = plan_.pp.empty() ? std::vector{1} : plan_.pp;
    // Speculative decoding is a choice only when the plan lists it; otherwise the scenario's.
    const std::vector<bool> specs = plan_.speculative.empty()
                                        ? std::vector{s_.deployment.engine.speculative.has_value()}
                                        : plan_.speculative;
    for (std::size_t c = 0; c < plan_.candidates.size(); ++c) {
        std::vector<int> tps = plan_.tp;
        if (tps.empty()) {
            for (int tp = 1; tp <= std::min(8, plan_.candidates[c].gpus_per_node); tp *= 2) {
                tps.push_back(tp);
            }
        }
        for (const int tp : tps) {
            for (const int pp : pps) {
                for (const auto& w : weights) {
                    for (const auto& kv : kvs) {
                        for (const int n : seqs) {
                            for (const bool sp : specs) {
                                out.push_back(Shape{static_cast<int>(c), tp, pp, w, kv, n, sp});
                            }
                        }
                    }
                }
            }
        }
    }
    return out;
}

SizingRow Search::base_row(const Shape& sh, const model::PlanCandidate& cand) const {
    SizingRow base;
    base.config.candidate = sh.candidate;
    base.config.gpu = cand.gpu.name;
    base.config.node = cand.node ? cand.node->name : "";
    base.config.par = {sh.tp, sh.pp, 1, 1};
    base.config.gpus = sh.tp * sh.pp;
    base.config.weights = sh.weights;
    base.config.kv_cache = sh.kv;
    base.config.max_num_seqs = sh.seqs;
    base.config.speculative = sh.speculative;
    base.offered_rps = offered_rps_;
    base.miss_ratio = kInf;
    return base;
}

std::optional<Stop> Search::layout_stop(const Shape& sh, const model::PlanCandidate& cand,
                                        const SizingRow& base) const {
    if (sh.tp > cand.gpus_per_node) {
        return Stop{SizingStage::Invalid, "tp " + std::to_string(sh.tp) + " spans nodes of " +
                                              std::to_string(cand.gpus_per_node) + " GPUs"};
    }
    if (base.config.gpus > plan_.max_gpus) {
        return Stop{SizingStage::Capacity, "one replica needs " + std::to_string(base.config.gpus) +
                                               " GPUs, more than max_gpus " +
                                               std::to_string(plan_.max_gpus)};
    }
    return std::nullopt;
}

std::optional<Stop> Search::analytic_stop(model::Scenario& t, const model::PlanCandidate& cand,
                                          SizingRow& base, model::MemoryEstimate& mem,
                                          model::PowerEstimate& replica) const {
    const model::EfficiencyProfile& prof = profile(cand.gpu.name);
    model::validate(t.deployment);
    // Only configurations the engine can launch as estimated (model/engine_rules.hpp).
    const auto problems = model::launch_problems(t.deployment.engine.kind, t.deployment);
    if (!problems.empty()) {
        return Stop{SizingStage::Invalid, problems.front().key + ": " + problems.front().reason};
    }
    mem = model::estimate_memory(t.deployment);
    base.config.max_num_seqs = mem.engine.max_num_seqs;
    t.deployment.engine.max_num_seqs = mem.engine.max_num_seqs;
    if (!mem.fits) {
        std::string why;
        for (const auto& r : mem.reasons) {
            why += (why.empty() ? "" : "; ") + r;
        }
        return Stop{SizingStage::Memory, "does not fit: " + why};
    }
    if (auto stop = lone_request_stop(t, mem, prof, base)) {
        return stop;
    }
    replica = replica_power(t, cand, prof, mix_, mem);
    return std::nullopt;
}

// A lone request of each class, uncapped and with its shared prefix cached: a bound in the
// configuration's favour (load, a cap and cache misses only add).
std::optional<Stop> Search::lone_request_stop(const model::Scenario& t,
                                              const model::MemoryEstimate& mem,
                                              const model::EfficiencyProfile& prof,
                                              SizingRow& base) const {
    const model::StepCostModel m(t.deployment, prof);
    std::optional<model::SpeculativeModel> spec;
    if (t.deployment.engine.speculative) {
        spec.emplace(t.deployment, *t.deployment.engine.speculative, prof);
    }
    const double slack = 1.0 + plan_.prune_margin;
    double worst = 0;
    std::string worst_text;
    for (const auto& c : classes_) {
        const int in = std::max(1, static_cast<int>(std::lround(c.input)));
        const int outn = std::max(1, static_cast<int>(std::lround(c.output)));
        const int cached = mem.engine.prefix_caching ? std::min(c.shared_prefix, in - 1) : 0;
        const double ttft = model::ttft(m, in, cached).si();
        const double tpot = model::tpot(m, 1, in + outn / 2, spec ? &*spec : nullptr).si();
        const double e2e = ttft + (outn - 1) * tpot;
        if (&c == &classes_.front()) {
            base.lone_ttft_s = ttft;
            base.lone_tpot_s = tpot;
        }
        const auto check = [&](const std::optional<Seconds>& target, double value,
                               const char* metric) {
            if (target && target->si() > 0 && value / target->si() > worst) {
                worst = value / target->si();
                worst_text = "a lone " + c.name + " request's " + metric + " is " + ms(value) +
                             ", SLO " + ms(target->si());
            }
        };
        check(c.ttft, ttft, "TTFT");
        check(c.tpot, tpot, "TPOT");
        check(c.e2e, e2e, "E2E");
    }
    if (worst > slack) {
        return Stop{SizingStage::Latency, worst_text, worst};
    }
    return std::nullopt;
}

// The replica counts worth costing: from the fewest that carry the offered rate (with the prune
// margin) to as many as max_gpus allows.
std::optional<Stop> Search::replica_range(double cap_rps, SizingRow& base, int& dp_min,
                                          int& dp_max) const {
    dp_max = plan_.max_gpus / base.config.gpus;
    dp_min = 1;
    if (!(offered_rps_ > 0)) {
        return std::nullopt;
    }
    if (!(cap_rps > 0)) {
        return Stop{SizingStage::Capacity, "a replica serves no requests at this load"};
    }
    dp_min = std::max(1, static_cast<int>(std::ceil(
                             offered_rps_ / (cap_rps * (1.0 + plan_.prune_margin)) - 1e-9)));
    if (dp_min > dp_max) {
        base.capacity_rps = cap_rps * dp_max;
        return Stop{SizingStage::Capacity,
                    format_fixed(dp_max, 0) + " replicas (max_gpus " +
                        std::to_string(plan_.max_gpus) + ") sustain " +
                        format_fixed(cap_rps * dp_max, 2) + " requests/s, the workload sends " +
                        format_fixed(offered_rps_, 2),
                    offered_rps_ / (cap_rps * dp_max)};
    }
    return std::nullopt;
}

ShapeOutcome Search::analyse(const Shape& sh) const {
    const model::PlanCandidate& cand = plan_.candidates[static_cast<std::size_t>(sh.candidate)];
    ShapeOutcome out;
    SizingRow base = base_row(sh, cand);
    const auto stop_at = [&](Stop stop) {
        base.stage = stop.stage;
        base.reason = std::move(stop.reason);
        base.miss_ratio = stop.ratio;
        out.rows.push_back(base);
        return out;
    };
    if (auto stop = layout_stop(sh, cand, base)) {
        return stop_at(std::move(*stop));
    }
    model::Scenario t = configured_scenario(s_, cand, base.config);
    // The analytic model reads a trace's load and mean lengths only; a replayed trace can be large.
    t.workload = model::without_trace(t.workload);
    model::MemoryEstimate mem;
    model::PowerEstimate replica;
    // An impossible layout (heads not divisible by tp, a precision the GPU has no path for, a
    // mean request longer than max_model_len) is an ordinary outcome of enumerating a space,
    // so it is recorded as a reason here instead of failing the search.
    try {
        if (auto stop = analytic_stop(t, cand, base, mem, replica)) {
            return stop_at(std::move(*stop));
        }
    } catch (const InvalidArgument& e) {
        return stop_at(Stop{SizingStage::Invalid, e.what()});
    }
    const double cap_rps = replica.capped.throughput / mix_.mean_output;
    int dp_min = 1;
    int dp_max = 1;
    if (auto stop = replica_range(cap_rps, base, dp_min, dp_max)) {
        return stop_at(std::move(*stop));
    }
    for (int dp = dp_min; dp <= dp_max; ++dp) {
        SizingRow row = base;
        row.config.par.dp = dp;
        row.config.gpus = base.config.gpus * dp;
        row.capacity_rps = cap_rps * dp;
        row.miss_ratio = 0;
        // configured_scenario(s_, cand, row.config) differs from `t` only in the replicas.
        t.deployment.par.dp = dp;
        const bool priced = cost_row(row, t, cand, replica);
        out.rows.push_back(row);
        if (!priced) {
            break; // the same prices fail for every replica count
        }
    }
    return out;
}

// Costs one replica count of a shape: its price, power and racks, and the first limit it
// breaks. False when the prices cannot be resolved (the row then says why).
bool Search::cost_row(SizingRow& row, const model::Scenario& t, const model::PlanCandidate& cand,
                      const model::PowerEstimate& replica) const {
    SizingCost c;
    try {
        c = cost_from(t, cand, profile(cand.gpu.name), mix_, replica);
    } catch (const InvalidArgument& e) {
        row.stage = SizingStage::Price;
        row.reason = e.what();
        row.miss_ratio = kInf;
        return false;
    }
    row.currency = c.currency;
    row.own_monthly = c.own_monthly;
    row.rent_monthly = c.rent_monthly;
    const bool own = plan_.pricing == model::PlanPricing::Own;
    row.monthly = own ? c.own_monthly : c.rent_monthly;
    row.per_million_tokens = own ? c.own_per_million : c.rent_per_million;
    row.tokens_per_month = c.tokens_per_month;
    row.gpu_limit_w = c.gpu_limit_w;
    row.avg_power_w = c.avg_power_w;
    row.peak_power_w = c.peak_power_w;
    row.nodes = c.nodes;
    row.notes = c.notes;
    if (own && !c.excluded.empty()) {
        std::string what;
        for (const auto& x : c.excluded) {
            what += (what.empty() ? "" : ", ") + x;
        }
        row.notes.push_back("the cost of owning excludes " + what);
    }
    const model::RackPlan racks = model::plan_racks(Watts(c.node_peak_w), replica.node.rack_units,
                                                    c.nodes, s_.rack, s_.power.rack_budget);
    row.racks = racks.racks;
    row.rack_binding = model::to_string(racks.binding);
    if (auto stop = limit_stop(row, c, racks, cand)) {
        row.stage = stop->stage;
        row.reason = std::move(stop->reason);
        row.miss_ratio = stop->ratio;
    }
    return true;
}

// The first limit a costed row breaks: no price, the budget, the power budget, the racks.
std::optional<Stop> Search::limit_stop(const SizingRow& row, const SizingCost& c,
                                       const model::RackPlan& racks,
                                       const model::PlanCandidate& cand) const {
    const bool own = plan_.pricing == model::PlanPricing::Own;
    if (!row.monthly) {
        return Stop{SizingStage::Price,
                    std::string(own ? "no purchase price" : "no rent per GPU-hour") + " for " +
                        cand.gpu.name + (c.currency.empty() ? "" : " in " + c.currency) +
                        "; give the candidate's " +
                        (own ? "gpu_purchase or node_purchase" : "gpu_hour") +
                        " or use pricing: " + (own ? "rent" : "own")};
    }
    if (plan_.budget && plan_.budget->money.currency != c.currency) {
        return Stop{SizingStage::Budget, "costs are in " + c.currency + ", the budget in " +
                                             plan_.budget->money.currency};
    }
    if (plan_.budget && *row.monthly > plan_.budget->money.amount) {
        return Stop{SizingStage::Budget,
                    money_text(*row.monthly, c.currency) + "/month is over the budget of " +
                        money_text(plan_.budget->money.amount, c.currency),
                    *row.monthly / plan_.budget->money.amount};
    }
    if (plan_.power_budget && c.peak_power_w > plan_.power_budget->si()) {
        return Stop{SizingStage::Power,
                    "peak " + format_fixed(c.peak_power_w / 1e3, 1) +
                        " kW at the wall is over the power budget of " +
                        format_fixed(plan_.power_budget->si() / 1e3, 1) + " kW",
                    c.peak_power_w / plan_.power_budget->si()};
    }
    if (!racks.feasible) {
        return Stop{SizingStage::Racks, "no node fits a rack (" + row.rack_binding + ")"};
    }
    if (plan_.max_racks && racks.racks > *plan_.max_racks) {
        return Stop{SizingStage::Racks,
                    std::to_string(racks.racks) + " racks (" + row.rack_binding +
                        " binds), at most " + std::to_string(*plan_.max_racks) + " allowed",
                    static_cast<double>(racks.racks) / *plan_.max_racks};
    }
    return std::nullopt;
}

void Search::simulate_row(SizingRow& row) const {
    const model::PlanCandidate& cand =
        plan_.candidates[static_cast<std::size_t>(row.config.candidate)];
    const model::Scenario t = configured_scenario(s_, cand, row.config);
    sim::SimOptions o;
    o.requests =
        s_.workload.requests ? std::min(*s_.workload.requests, plan_.requests) : plan_.requests;
    o.profile = profile(cand.gpu.name);
    o.node = node_of(cand, t.power_model);
    const sim::SimResult r = sim::simulate(t, o, stop_);
    row.stage = SizingStage::Simulated;
    if (!r.ok) {
        row.stage = SizingStage::Memory;
        row.reason = r.reasons.empty() ? "does not fit" : r.reasons.front();
        row.miss_ratio = kInf;
        return;
    }
    const double p = s_.slo.percentile;
    row.margins.clear();
    for (const auto& c : r.classes) {
        const auto add = [&](const std::optional<Seconds>& target, const sim::LatencyStats& st,
                             const char* metric) {
            if (target && st.count > 0) {
                row.margins.push_back(
                    SloMargin{c.name, metric, at_percentile(st, p).si(), target->si()});
            }
        };
        add(c.ttft_slo, c.summary.ttft, "ttft");
        add(c.tpot_slo, c.summary.tpot, "tpot");
        add(c.e2e_slo, c.summary.e2e, "e2e");
    }
    row.failed = r.overall.rejected + r.overall.timed_out;
    const bool meets = meets_every_slo(r);
    row.meets_slo = meets;
    double worst = 0;
    const SloMargin* tight = nullptr;
    for (const auto& m : row.margins) {
        const double ratio = m.value_s / m.target_s;
        if (!tight || ratio > worst) {
            worst = ratio;
            tight = &m;
        }
    }
    if (tight) {
        row.binding_slo = tight->request_class + " " + tight->metric;
    }
    if (row.failed > 0 && r.overall.arrived > 0) {
        worst = std::max(worst, 1.0 + static_cast<double>(row.failed) /
                                          static_cast<double>(r.overall.arrived));
    }
    row.miss_ratio = worst;
    row.sim_throughput_tok_s = r.output_tok_s;
    row.sim_mean_running = r.mean_running;
    row.sim_avg_power_w = r.power.avg_power.si();
    row.sim_peak_power_w = r.power.peak_power.si();
    row.sim_energy_j_per_token = r.power.energy_per_token.si();
    if (meets) {
        row.reason = tight ? "meets every SLO; tightest " + row.binding_slo + " p" +
                                 format_fixed(p, 0) + " " + ms(tight->value_s) + " of " +
                                 ms(tight->target_s)
                           : "serves every request (no SLO given)";
    } else if (row.failed > 0) {
        row.reason = std::to_string(row.failed) + " of " + std::to_string(r.overall.arrived) +
                     " requests failed (rejected or timed out)";
    } else if (tight) {
        row.reason = row.binding_slo + " p" + format_fixed(p, 0) + " is " + ms(tight->value_s) +
                     ", SLO " + ms(tight->target_s) + " (" + format_fixed(100 * (worst - 1), 0) +
                     " % over)";
    } else {
        row.reason = "nothing completed";
    }
}

void Search::explain(SizingRow& row) const {
    // The binding resource of the phase behind the tightest SLO (prefill for TTFT, decode for
    // the others), at the simulated load.
    if (row.stage != SizingStage::Simulated && row.margins.empty()) {
        return;
    }
    const model::PlanCandidate& cand =
        plan_.candidates[static_cast<std::size_t>(row.config.candidate)];
    const model::Scenario t = configured_scenario(s_, cand, row.config);
    model::Workload w = mix_.w;
    model::set_closed_loop(
        w, std::max(row.config.par.dp, static_cast<int>(std::lround(row.sim_mean_running))));
    try {
        const model::BottleneckReport b =
            model::find_bottleneck(t.deployment, w, profile(cand.gpu.name), mix_.cached_prefix);
        const bool prefill = row.binding_slo.size() >= 4 &&
                             row.binding_slo.compare(row.binding_slo.size() - 4, 4, "ttft") == 0;
        row.binding_resource =
            b.capacity_binds ? model::to_string(model::Resource::MemoryCapacity)
                             : model::to_string(prefill ? b.prefill.binding : b.decode.binding);
        if (row.gpu_limit_w > 0 &&
            row.gpu_limit_w < t.deployment.gpu.board_power.value_or(Watts(kInf)).si()) {
            row.binding_resource += " (under a " + format_fixed(row.gpu_limit_w, 0) + " W cap)";
        }
    } catch (const InvalidArgument&) {
        row.binding_resource = "?";
    }
    try {
        const model::SloCapacity c = model::slo_capacity(
            t.deployment, t.workload, s_.slo, profile(cand.gpu.name), mix_.cached_prefix);
        row.slo_capacity_rps = c.rate;
        row.slo_capacity_ratio = c.ratio;
        row.slo_capacity_bound = model::to_string(c.bound);
    } catch (const InvalidArgument&) {
        row.slo_capacity_bound = "?";
    }
}

// Rounds: walk the list; ranked = passes not preceded by an unresolved configuration; the next
// batch = the first unresolved configurations, one per shape (a shape's larger replica count
// waits for its smaller one, which ends the shape when it passes). A row the constraints
// stopped keeps its stage and reason; the simulation only adds its verdict.
Search::Confirmed Search::confirm(std::vector<SizingRow>& rows, const std::vector<int>& shape_of,
                                  const std::vector<std::size_t>& order,
                                  std::vector<char>& simulated, std::size_t want,
                                  std::size_t sim_budget, SizingResult& res) const {
    Confirmed c;
    while (true) {
        c.ranked.clear();
        c.passed.clear();
        std::vector<std::size_t> batch;
        std::set<int> passed_shapes, waiting_shapes;
        bool blocked = false;
        for (const std::size_t i : order) {
            const int sh = shape_of[i];
            if (passed_shapes.count(sh) > 0 || waiting_shapes.count(sh) > 0) {
                continue;
            }
            if (simulated[i]) {
                if (rows[i].meets_slo) {
                    passed_shapes.insert(sh);
                    c.passed.push_back(i);
                    if (!blocked && c.ranked.size() < want) {
                        c.ranked.push_back(i);
                    }
                }
                continue;
            }
            if (c.ranked.size() >= want) {
                break;
            }
            blocked = true;
            waiting_shapes.insert(sh);
            if (batch.size() < kBatch) {
                batch.push_back(i);
            }
        }
        if (batch.empty() || c.ranked.size() >= want) {
            return c;
        }
        const std::size_t done = static_cast<std::size_t>(res.simulated);
        const std::size_t left = sim_budget > done ? sim_budget - done : 0;
        if (left == 0) {
            res.exhausted = true;
            return c;
        }
        if (stop_.stop_requested()) {
            res.stopped = true;
            return c;
        }
        batch.resize(std::min(batch.size(), left));
        const auto confirm_row = [&](std::size_t j) {
            SizingRow& row = rows[batch[j]];
            const SizingStage stage = row.stage;
            const std::string reason = row.reason;
            const double ratio = row.miss_ratio;
            simulate_row(row);
            if (stage != SizingStage::NotReached && row.stage == SizingStage::Simulated) {
                row.reason = reason + (row.meets_slo ? "; it would meet every SLO"
                                                     : "; it would also miss an SLO");
                row.stage = stage;
                row.miss_ratio = ratio;
            }
        };
        if (opt_.run_batch) {
            opt_.run_batch(
                batch.size(),
                [&](std::size_t j) {
                    confirm_row(j);
                    return encode_outcome(rows[batch[j]]);
                },
                [&](std::size_t j, const std::string& bytes) {
                    decode_outcome(bytes, rows[batch[j]]);
                });
        } else {
            parallel_for(batch.size(), threads_, confirm_row);
        }
        for (const std::size_t i : batch) {
            simulated[i] = 1;
        }
        res.simulated += static_cast<int>(batch.size());
        if (progress_) {
            const double f = sim_budget > 0 ? static_cast<double>(res.simulated) /
                                                  static_cast<double>(sim_budget)
                                            : 1.0;
            progress_(std::min(1.0, f));
        }
    }
}

// Nothing met the SLO within the constraints: the cheapest configuration the constraints
// stopped that would meet it tells the user what the SLO costs (one more confirmation
// pass, within what is left of the simulation budget).
std::optional<std::size_t> Search::cheapest_constrained(std::vector<SizingRow>& rows,
                                                        const std::vector<int>& shape_of,
                                                        std::vector<char>& simulated,
                                                        SizingResult& res) const {
    std::vector<std::size_t> constrained;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const SizingStage st = rows[i].stage;
        if (st == SizingStage::Budget || st == SizingStage::Power || st == SizingStage::Racks) {
            constrained.push_back(i);
        }
    }
    std::stable_sort(constrained.begin(), constrained.end(),
                     [&](std::size_t a, std::size_t b) { return key(rows[a]) < key(rows[b]); });
    const std::size_t budget =
        std::min<std::size_t>(static_cast<std::size_t>(plan_.max_simulations),
                              static_cast<std::size_t>(res.simulated) + constrained.size());
    const Confirmed second = confirm(rows, shape_of, constrained, simulated, 1, budget, res);
    if (!second.ranked.empty()) {
        return second.ranked.front();
    }
    return std::nullopt;
}

// The closest miss: simulated configurations first (the simulator's word beats the
// model's), then the analytic ones; the smallest miss ratio, cheapest on ties.
std::optional<std::size_t> Search::closest_miss(const std::vector<SizingRow>& rows,
                                                std::optional<std::size_t> over_constraints) const {
    std::optional<std::size_t> best = over_constraints;
    const auto better = [&](std::size_t a, std::size_t b) {
        const bool sa = rows[a].stage == SizingStage::Simulated;
        const bool sb = rows[b].stage == SizingStage::Simulated;
        if (sa != sb) {
            return sa;
        }
        if (rows[a].miss_ratio != rows[b].miss_ratio) {
            return rows[a].miss_ratio < rows[b].miss_ratio;
        }
        return key(rows[a]) < key(rows[b]);
    };
    for (std::size_t i = 0; i < rows.size() && !over_constraints; ++i) {
        const bool considered =
            rows[i].stage == SizingStage::Simulated ||
            (rows[i].stage != SizingStage::NotReached && std::isfinite(rows[i].miss_ratio));
        if (considered && (!best || better(i, *best))) {
            best = i;
        }
    }
    if (!best) {
        for (std::size_t i = 0; i < rows.size(); ++i) {
            if (rows[i].stage != SizingStage::NotReached &&
                (!best || key(rows[i]) < key(rows[*best]))) {
                best = i;
            }
        }
    }
    return best;
}

// The verdict: the cheapest configuration that meets every SLO, or why none does.
std::string Search::verdict(const SizingResult& res, bool over_constraints) const {
    if (res.found) {
        const SizingRow& b = res.ranked.front();
        return "cheapest meeting every SLO: " + config_text(b.config) + " at " +
               money_text(*b.monthly, b.currency) + "/month (" + to_string(plan_.pricing) + ")" +
               (b.binding_slo.empty()
                    ? ""
                    : "; tightest " + b.binding_slo + ", " +
                          format_fixed(100 * (1 - b.miss_ratio), 0) + " % margin");
    }
    if (over_constraints) {
        const SizingRow& m = *res.closest_miss;
        return "nothing meets the SLO within the plan's constraints: the cheapest "
               "configuration that meets it, " +
               config_text(m.config) + ", breaks them: " + m.reason;
    }
    if (res.closest_miss) {
        const SizingRow& m = *res.closest_miss;
        return "nothing meets the SLO: the closest miss is " + config_text(m.config) + ": " +
               m.reason;
    }
    return "nothing meets the SLO: no configuration was considered; widen "
           "plan.candidates, tp or max_gpus";
}

// What the result leaves out: an exhausted simulation budget, no SLO, no rate, unpriced costs.
void Search::add_notes(SizingResult& res, const std::vector<std::size_t>& order,
                       const std::vector<char>& simulated) const {
    if (res.exhausted) {
        const auto untested =
            std::count_if(order.begin(), order.end(), [&](std::size_t i) { return !simulated[i]; });
        res.notes.push_back(
            "the search stopped after plan.max_simulations = " +
            std::to_string(plan_.max_simulations) + " simulations with " +
            std::to_string(untested) +
            " eligible configurations untested (the costlier ones); raise plan.max_simulations");
    }
    if (!has_slo_) {
        res.notes.push_back("no SLO given: every configuration that serves all requests qualifies");
    }
    if (offered_rps_ <= 0) {
        res.notes.push_back("no open-loop arrival rate: replica counts are not sized to a rate");
    }
    // Say once what every ranked ownership cost leaves out (the rows carry it too).
    std::vector<const SizingRow*> shown;
    for (const SizingRow& row : res.ranked) {
        shown.push_back(&row);
    }
    if (res.closest_miss) {
        shown.push_back(&*res.closest_miss);
    }
    for (const SizingRow* row_ptr : shown) {
        const SizingRow& row = *row_ptr;
        const auto it = std::find_if(row.notes.begin(), row.notes.end(), [](const std::string& n) {
            return n.rfind("the cost of owning excludes", 0) == 0;
        });
        if (it != row.notes.end()) {
            res.notes.push_back(*it + " in every row: the ranking compares what is priced");
            break;
        }
    }
}

SizingResult Search::run() {
    SizingResult res;
    res.pricing = plan_.pricing;
    const std::vector<Shape> shapes = this->shapes();
    res.shapes = static_cast<int>(shapes.size());
    std::vector<ShapeOutcome> outcomes(shapes.size());
    parallel_for(shapes.size(), threads_, [&](std::size_t i) { outcomes[i] = analyse(shapes[i]); });

    // Every row, in shape order; the eligible ones go to the simulator cheapest first.
    std::vector<SizingRow> rows;
    std::vector<int> shape_of;
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
        for (auto& r : outcomes[i].rows) {
            rows.push_back(std::move(r));
            shape_of.push_back(static_cast<int>(i));
        }
    }
    res.configurations = static_cast<int>(rows.size());
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (rows[i].stage == SizingStage::NotReached) {
            order.push_back(i);
        }
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return key(rows[a]) < key(rows[b]); });
    const std::size_t planned =
        std::min<std::size_t>(order.size(), static_cast<std::size_t>(plan_.max_simulations));

    std::vector<char> simulated(rows.size(), 0);
    const Confirmed first = confirm(rows, shape_of, order, simulated,
                                    static_cast<std::size_t>(plan_.top), planned, res);
    std::vector<std::size_t> ranked = first.ranked;
    if ((res.exhausted || res.stopped) && ranked.empty()) {
        // Not proven the cheapest, but they meet the SLO: better than nothing.
        for (const std::size_t i : first.passed) {
            if (ranked.size() < static_cast<std::size_t>(plan_.top)) {
                ranked.push_back(i);
            }
        }
    }
    const std::optional<std::size_t> over_constraints =
        ranked.empty() && !res.stopped ? cheapest_constrained(rows, shape_of, simulated, res)
                                       : std::nullopt;

    for (const auto& r : rows) {
        ++res.stages[r.stage == SizingStage::Simulated ? (r.meets_slo ? "met_slo" : "missed_slo")
                                                       : to_string(r.stage)];
    }
    res.found = !ranked.empty();
    parallel_for(ranked.size(), threads_, [&](std::size_t j) { explain(rows[ranked[j]]); });
    for (const std::size_t i : ranked) {
        res.ranked.push_back(rows[i]);
    }
    if (!res.ranked.empty()) {
        res.currency = res.ranked.front().currency;
    }

    if (!res.found) {
        if (const auto best = closest_miss(rows, over_constraints)) {
            explain(rows[*best]);
            res.closest_miss = rows[*best];
            res.currency = rows[*best].currency;
        }
    }

    res.verdict = verdict(res, over_constraints.has_value());
    add_notes(res, order, simulated);
    return res;
}

} // namespace

model::PlanConfig effective_plan(const model::Scenario& s,
                                 const std::optional<model::ServerSpec>& node) {
    model::PlanConfig p = s.plan.value_or(model::PlanConfig{});
    if (p.candidates.empty()) {
        model::PlanCandidate c;
        c.accelerator_ref = s.accelerator_ref;
        c.node_ref = s.node_ref;
        c.gpu = s.deployment.gpu;
        c.node = node;
        c.intra_node_link = s.deployment.intra_node_link;
        c.inter_node_link = s.deployment.inter_node_link;
        c.gpus_per_node = s.deployment.gpus_per_node;
        if (model::scenario_prices_gpu(s, s.deployment.gpu)) {
            c.gpu_hour = s.prices.gpu_hour;
            c.gpu_purchase = s.prices.gpu_purchase;
        }
        if (model::scenario_prices_node(s)) {
            c.node_purchase = s.prices.node_purchase;
        }
        p.candidates.push_back(c);
    }
    return p;
}

SizingOptions sizing_options(const model::Scenario& s, const std::optional<model::ServerSpec>& node,
                             const ProfileChooser& choose, int threads) {
    SizingOptions o;
    o.threads = threads;
    for (const auto& c : effective_plan(s, node).candidates) {
        if (o.profiles.count(c.gpu.name) == 0) {
            o.profiles.emplace(c.gpu.name, choose(c.gpu));
        }
    }
    return o;
}

model::Scenario configured_scenario(const model::Scenario& s, const model::PlanCandidate& c,
                                    const SizingConfig& k) {
    model::Scenario t = s;
    t.plan.reset();
    model::Deployment& d = t.deployment;
    d.gpu = c.gpu;
    d.intra_node_link = c.intra_node_link;
    d.inter_node_link = c.inter_node_link;
    d.gpus_per_node = c.gpus_per_node;
    t.accelerator_ref = c.accelerator_ref.empty() ? c.gpu.name : c.accelerator_ref;
    t.node_ref = c.node_ref;
    d.par = k.par;
    d.par.ep = 1;
    d.prec.weights = k.weights;
    d.prec.kv_cache = k.kv_cache;
    if (k.max_num_seqs > 0) {
        d.engine.max_num_seqs = k.max_num_seqs;
    }
    if (!k.speculative) {
        d.engine.speculative.reset();
    }
    t.cluster.replicas.reset();
    // The scenario's prices are for its own hardware (model/price_list.hpp), a candidate's for
    // the candidate.
    if (t.prices.accelerator.empty()) {
        t.prices.accelerator = s.deployment.gpu.name;
        t.prices.node = s.node_ref;
    }
    model::bind_prices_to_hardware(t);
    if (c.gpu_hour) {
        t.prices.gpu_hour = c.gpu_hour;
    }
    if (c.gpu_purchase) {
        t.prices.gpu_purchase = c.gpu_purchase;
    }
    if (c.node_purchase) {
        t.prices.node_purchase = c.node_purchase;
    }
    // Load-dependent engine limits for this candidate's layout (TensorRT-LLM: trtllm-bench's
    // heuristic depends on tp and the GPU's memory), as estimate and simulate fill them.
    d = model::with_load_engine_defaults(d, t.workload);
    return t;
}

SizingCost sizing_cost(const model::Scenario& configured, const model::PlanCandidate& c,
                       const model::EfficiencyProfile& profile) {
    const Mix mix = analytic_mix(configured);
    const model::MemoryEstimate mem = model::estimate_memory(configured.deployment);
    const model::PowerEstimate replica = replica_power(configured, c, profile, mix, mem);
    return cost_from(configured, c, profile, mix, replica);
}

SizingResult size_deployment(const model::Scenario& s, const std::optional<model::ServerSpec>& node,
                             const SizingOptions& options, std::stop_token stop,
                             const sim::ProgressFn& progress) {
    Search search(s, node, options, std::move(stop), progress);
    return search.run();
}

} // namespace gpuplan::plan
