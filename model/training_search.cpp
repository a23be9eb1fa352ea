// search_layouts: enumerate training layouts, keep the fitting ones, rank them, say why the best
// wins. The loop body evaluates one layout with TrainingModel::evaluate (allocation-free) and
// keeps the best N in a vector reserved up front.
#include "model/checked_format.hpp"
#include "model/error.hpp"
#include "model/training.hpp"
#include "model/unit_parser.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>

namespace gpuplan::model {

namespace {

// Context parallelism is tried only where each rank keeps at least this many tokens: below it
// the ring exchange outweighs the attention it overlaps (Megatron-Core recommends CP for long
// sequences only) [U].
constexpr int kMinTokensPerCpRank = 2048;

std::vector<int> divisors(int n) {
    std::vector<int> out;
    for (int i = 1; i <= n; ++i) {
        if (n % i == 0) {
            out.push_back(i);
        }
    }
    return out;
}

std::string duration(Seconds s) {
    const double v = s.si();
    if (v >= 2 * 86400.0) {
        return gpuplan::checked_format("{:.1f} days", v / 86400.0);
    }
    if (v >= 2 * 3600.0) {
        return gpuplan::checked_format("{:.1f} h", v / 3600.0);
    }
    if (v >= 120.0) {
        return gpuplan::checked_format("{:.1f} min", v / 60.0);
    }
    return gpuplan::checked_format("{:.2f} s", v);
}

std::string describe(const TrainingLayout& l) {
    std::string s = "tp " + std::to_string(l.tp) + " × pp " + std::to_string(l.pp) + " × dp " +
                    std::to_string(l.dp);
    if (l.cp > 1) {
        s += " × cp " + std::to_string(l.cp);
    }
    if (l.ep > 1) {
        s += " (ep " + std::to_string(l.ep) + ")";
    }
    if (l.virtual_stages > 1) {
        s += ", " + std::to_string(l.virtual_stages) + " virtual stages";
    }
    s += ", zero " + std::to_string(l.zero) + ", micro-batch " + std::to_string(l.micro_batch) +
         ", " + (l.recompute == Recompute::None ? std::string("no") : to_string(l.recompute)) +
         " recomputation";
    return s;
}

// The component of the step where `worse` loses most to `better`, and by how much per step.
std::string main_difference(const LayoutResult& better, const LayoutResult& worse) {
    const StepBreakdown& a = better.step;
    const StepBreakdown& b = worse.step;
    const std::array<std::pair<const char*, double>, 5> parts{{
        {"compute (recomputation, GEMM shapes)", (b.compute - a.compute).si()},
        {"exposed communication", (b.exposed_comm - a.exposed_comm).si()},
        {"pipeline bubble", (b.bubble - a.bubble).si()},
        {"optimizer step", (b.optimizer - a.optimizer).si()},
        {"input stall", (b.input_stall - a.input_stall).si()},
    }};
    const auto* best = &parts[0];
    for (const auto& p : parts) {
        if (p.second > best->second) {
            best = &p;
        }
    }
    if (best->second <= 0) {
        return "the same step time";
    }
    return gpuplan::checked_format("{:.3g}", best->second) + " s more " + best->first + " per step";
}

// The layouts kept so far, best first (at most `keep`, within capacity reserved up front: no
// allocation per layout), and the counts of the others.
class Ranking {
  public:
    Ranking(SearchResult& out, RankBy rank_by, std::size_t keep)
        : out_(out), rank_by_(rank_by), keep_(keep) {
        out_.top.reserve(keep_ + 1);
    }

    void record(const LayoutResult& r) {
        ++out_.enumerated;
        if (r.issue != LayoutIssue::None) {
            ++out_.invalid;
            ++issue_counts[static_cast<std::size_t>(r.issue)];
        } else if (!r.fits) {
            ++out_.not_fitting;
            if (!out_.closest_miss || r.memory.free > out_.closest_miss->memory.free) {
                out_.closest_miss = r;
            }
        } else {
            ++out_.fitting;
            offer(r);
        }
    }

    std::array<long long, 16> issue_counts{}; ///< by LayoutIssue, for the "why" of no fit

  private:
    [[nodiscard]] double key(const LayoutResult& r) const {
        return rank_by_ == RankBy::Cost && r.cost > 0 ? r.cost : r.time_to_train.si();
    }
    [[nodiscard]] bool better(const LayoutResult& a, const LayoutResult& b) const {
        const double ka = key(a), kb = key(b);
        if (ka != kb) {
            return ka < kb;
        }
        return a.memory.total < b.memory.total;
    }
    void offer(const LayoutResult& r) {
        if (out_.top.size() == keep_ && !better(r, out_.top.back())) {
            return;
        }
        auto pos = std::upper_bound(
            out_.top.begin(), out_.top.end(), r,
            [this](const LayoutResult& a, const LayoutResult& b) { return better(a, b); });
        out_.top.insert(pos, r); // within the reserved capacity: no allocation
        if (out_.top.size() > keep_) {
            out_.top.pop_back();
        }
    }

    SearchResult& out_;
    RankBy rank_by_;
    std::size_t keep_;
};

// Micro-batch sizes to try on dp replicas: divisors of the per-replica batch.
void micro_batches(const TrainingConfig& cfg, const SearchOptions& options, int dp,
                   std::vector<int>& mbs) {
    mbs.clear();
    if (options.micro_batch) {
        mbs.push_back(*options.micro_batch);
    } else if (cfg.global_batch % dp == 0) {
        const int per = cfg.global_batch / dp;
        for (int b = 1; b <= std::min(per, options.max_micro_batch); ++b) {
            if (per % b == 0) {
                mbs.push_back(b);
            }
        }
    } else {
        mbs.push_back(1); // evaluates to LayoutIssue::Batch
    }
}

// Every ZeRO stage × micro-batch × virtual stages × recomputation of one split of the GPUs
// (`split`'s tp, pp, dp, cp and ep).
void search_split(const TrainingModel& model, const TrainingConfig& cfg,
                  const SearchOptions& options, const TrainingLayout& split,
                  const std::vector<int>& mbs, Ranking& ranking) {
    const Recompute recomputes[] = {Recompute::None, Recompute::Selective, Recompute::Full};
    for (int zero = 0; zero <= 3; ++zero) {
        if (options.zero && *options.zero != zero) {
            continue;
        }
        if (zero > 0 && split.dp * split.cp == 1 && !options.zero) {
            continue; // nothing to shard: the same as zero 0
        }
        for (const int mb : mbs) {
            for (const int v : {1, 2, 4}) {
                if (options.virtual_stages ? *options.virtual_stages != v
                                           : (v > 1 && split.pp == 1)) {
                    continue;
                }
                for (const Recompute rc : recomputes) {
                    if (options.recompute && *options.recompute != rc) {
                        continue;
                    }
                    if (!options.recompute && rc == Recompute::Selective && cfg.flash_attention) {
                        continue; // FlashAttention: selective = none
                    }
                    TrainingLayout l = split;
                    l.zero = zero;
                    l.micro_batch = mb;
                    l.virtual_stages = v;
                    l.recompute = rc;
                    ranking.record(model.evaluate(l));
                }
            }
        }
    }
}

// Why no layout fits: the counts, the most common reason nothing runs, the closest miss.
void explain_no_fit(SearchResult& out, const std::array<long long, 16>& issue_counts,
                    const std::string& counts) {
    out.why = "no layout fits. " + counts + ".";
    if (out.fitting == 0 && out.not_fitting == 0 && out.invalid > 0) {
        // Nothing can run: say the most common reason, which says what to change.
        std::size_t most = 0;
        for (std::size_t i = 1; i < issue_counts.size(); ++i) {
            most = issue_counts[i] > issue_counts[most] ? i : most;
        }
        out.why += std::string(" Most cannot run because ") +
                   to_string(static_cast<LayoutIssue>(most)) + ".";
    }
    if (out.closest_miss) {
        const LayoutResult& c = *out.closest_miss;
        out.why += " The closest, " + describe(c.layout) + ", needs " +
                   format_fixed(c.memory.total.si() / kGiB, 1) + " GiB of " +
                   format_fixed(c.memory.capacity.si() / kGiB, 1) + " GiB on stage " +
                   std::to_string(c.memory.stage) +
                   ": add GPUs, use LoRA/QLoRA or 8-bit Adam, shorten the sequence, or pick "
                   "a GPU with more memory.";
    }
}

// Why the best wins: its time, MFU and memory, the runner-up and the best other split, where its
// step goes; trims the list to options.top.
void explain_best(SearchResult& out, const SearchOptions& options, const std::string& counts) {
    // The best layout that splits the GPUs differently (another tp, pp, dp, cp or ep).
    const LayoutResult* other = nullptr;
    for (const LayoutResult& r : out.top) {
        const TrainingLayout& a = r.layout;
        const TrainingLayout& b = out.top.front().layout;
        if (a.tp != b.tp || a.pp != b.pp || a.dp != b.dp || a.cp != b.cp || a.ep != b.ep) {
            other = &r;
            break;
        }
    }
    std::string other_text;
    if (other != nullptr && other != &out.top[1]) {
        const LayoutResult& best = out.top.front();
        const double gain = (other->time_to_train - best.time_to_train) / best.time_to_train;
        other_text = " The best other split, " + describe(other->layout) + ", is " +
                     format_fixed(gain * 100.0, 1) + " % slower: " + main_difference(best, *other) +
                     ".";
    }
    if (out.top.size() > static_cast<std::size_t>(options.top)) {
        out.top.resize(static_cast<std::size_t>(options.top));
    }
    const LayoutResult& best = out.top.front();
    out.why = describe(best.layout) + " wins: " + duration(best.time_to_train) + " to train at " +
              format_fixed(best.mfu * 100.0, 1) + " % MFU, " +
              format_fixed(best.memory.total.si() / kGiB, 1) + " of " +
              format_fixed(best.memory.capacity.si() / kGiB, 1) + " GiB per GPU";
    if (options.rank_by == RankBy::Cost && best.cost > 0) {
        out.why += ", the cheapest";
    }
    out.why += ".";
    if (out.top.size() > 1) {
        const LayoutResult& second = out.top[1];
        const double gain = (second.time_to_train - best.time_to_train) / best.time_to_train;
        out.why += " The runner-up, " + describe(second.layout) + ", is " +
                   format_fixed(gain * 100.0, 1) + " % slower: " + main_difference(best, second) +
                   ".";
    }
    out.why += other_text;
    // The step of the winner, where its time goes.
    const StepBreakdown& s = best.step;
    out.why += " Its step (" + gpuplan::checked_format("{:.3g}", s.total.si()) + " s) is " +
               format_fixed(s.compute / s.total * 100.0, 0) + " % compute, " +
               format_fixed(s.exposed_comm / s.total * 100.0, 0) + " % exposed communication, " +
               format_fixed(s.bubble / s.total * 100.0, 0) + " % bubble, " +
               format_fixed(s.optimizer / s.total * 100.0, 0) + " % optimizer, " +
               format_fixed(s.input_stall / s.total * 100.0, 0) + " % input stall. " + counts + ".";
}

} // namespace

SearchResult search_layouts(const Deployment& hw, const TrainingConfig& cfg,
                            const EfficiencyProfile& profile, const SearchOptions& options,
                            const TrainingCostInputs& prices) {
    if (options.rank_by == RankBy::Cost && !prices.gpu_hour && !prices.electricity) {
        throw InvalidArgument(
            "ranking training layouts by cost needs a price: give prices.gpu_hour "
            "or prices.electricity (with power.pue), or rank by time");
    }
    if (options.top < 1) {
        throw InvalidArgument("search: top must be at least 1");
    }
    const TrainingModel model(hw, cfg, profile, prices);
    const int n = hw.gpus();
    const bool moe = hw.model.moe.has_value();
    const std::vector<int> divs = divisors(n);
    std::vector<int> mbs;
    mbs.reserve(64);
    std::vector<int> eps;
    eps.reserve(divs.size());

    SearchResult out;
    // Keep more than asked internally, to name the best layout with another parallel split.
    Ranking ranking(out, options.rank_by,
                    std::max<std::size_t>(static_cast<std::size_t>(options.top), 64));
    for (const int tp : divs) {
        if (options.tp && *options.tp != tp) {
            continue;
        }
        for (const int pp : divs) {
            if ((n / tp) % pp != 0 || (options.pp && *options.pp != pp)) {
                continue;
            }
            const int rest = n / (tp * pp);
            for (int cp = 1; cp <= rest; cp *= 2) {
                if (rest % cp != 0 || (options.cp && *options.cp != cp)) {
                    continue;
                }
                if (!options.cp && cp > 1 &&
                    (cp > options.max_cp || cfg.seq_len / cp < kMinTokensPerCpRank)) {
                    continue;
                }
                const int dp = rest / cp;
                eps.clear();
                if (moe) {
                    for (const int e : divs) {
                        if (dp % e == 0) {
                            eps.push_back(e);
                        }
                    }
                } else {
                    eps.push_back(1);
                }
                for (const int ep : eps) {
                    if (options.ep && *options.ep != ep) {
                        continue;
                    }
                    micro_batches(cfg, options, dp, mbs);
                    TrainingLayout split;
                    split.tp = tp;
                    split.pp = pp;
                    split.dp = dp;
                    split.cp = cp;
                    split.ep = ep;
                    split.sequence_parallel = cfg.layout.sequence_parallel;
                    search_split(model, cfg, options, split, mbs, ranking);
                }
            }
        }
    }

    // Why the best wins.
    const std::string counts = std::to_string(out.enumerated) +
                               " layouts enumerated: " + std::to_string(out.fitting) + " fit, " +
                               std::to_string(out.not_fitting) + " do not fit in memory, " +
                               std::to_string(out.invalid) + " cannot run";
    if (out.top.empty()) {
        explain_no_fit(out, ranking.issue_counts, counts);
    } else {
        explain_best(out, options, counts);
    }
    return out;
}

} // namespace gpuplan::model
