#include "sim/detail/replica.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

namespace gpuplan::sim::detail {
namespace {

// The replica's settings with the model's attention window, which the decode sums need.
ReplicaConfig with_window(ReplicaConfig c, const model::StepCostModel& cost) {
    c.attention_window = cost.window();
    return c;
}

} // namespace

Replica::Replica(Simulation& sim, const model::StepCostModel& cost, RequestPool& pool,
                 Metrics& metrics, ReplicaHost& host, const ReplicaConfig& config)
    : sim_(sim), cost_(cost), pool_(pool), metrics_(metrics), host_(host), cfg_(config),
      policy_(make_scheduler_policy(config)),
      state_(pool, metrics, with_window(config, cost), policy_->uses_prefix_cache()),
      same_gap_(static_cast<std::size_t>(std::max(1, config.classes)), 0), cost_memo_(cost),
      spec_rng_(sim.rng().fork(0x5bec0000ULL + static_cast<std::uint64_t>(config.id))) {
    stages_ = std::max(1, cost_.pp());
    // A policy that runs its batch to completion before forming the next has one in flight.
    depth_ = policy_->pipelines() && cfg_.pipeline_micro_batches ? stages_ : 1;
    mbs_.resize(static_cast<std::size_t>(depth_));
    for (MicroBatch& m : mbs_) {
        m.seqs.reserve(static_cast<std::size_t>(cfg_.max_num_seqs));
    }
    mb_busy_.assign(static_cast<std::size_t>(depth_), false);
    stage_free_.assign(static_cast<std::size_t>(stages_), 0);
    if (cfg_.lora != nullptr) {
        lora_ = std::make_unique<LoraCache>(*cfg_.lora);
    }
    // The decode cohort needs each step to start where the last ended, with one token per
    // decode and the plain decode sums.
    state_.enable_cohort(cfg_.decode_cohort && depth_ == 1 && stages_ == 1 &&
                         cfg_.speculative == nullptr && cost_.window() == 0 &&
                         cfg_.lora == nullptr);
}

bool Replica::fits(int prompt, int output) const {
    const std::int64_t tokens = static_cast<std::int64_t>(prompt) + output;
    if (tokens > cfg_.max_model_len) {
        return false;
    }
    if (state_.blocks_for(tokens) > state_.blocks().total() - state_.watermark_blocks()) {
        return false;
    }
    return policy_->can_schedule(prompt, output, cfg_);
}

void Replica::enqueue(std::uint32_t slot) {
    Request& r = pool_[slot];
    r.enqueued = sim_.now();
    ++assigned_;
    state_.enqueue(slot, sim_.now());
    kick();
}

bool Replica::cancel(std::uint32_t slot) {
    Request& r = pool_[slot];
    if (r.state != ReqState::Waiting || r.replica != cfg_.id || r.started) {
        return false;
    }
    r.state = ReqState::Done; // its queue entry goes stale and is dropped when reached
    state_.forget_waiting(sim_.now());
    --assigned_;
    return true;
}

void Replica::kick() {
    if (!in_end_ && !kick_pending_ && can_issue()) {
        kick_pending_ = true;
        sim_.schedule_in(0, *this, kKick);
    }
}

void Replica::on_event(std::uint32_t kind, std::uint64_t data) {
    if (dead_) {
        return;
    }
    switch (kind) {
    case kStepEnd: end_step(static_cast<std::size_t>(data)); break;
    case kKick:
        kick_pending_ = false;
        if (can_issue()) {
            start_step();
        }
        break;
    case kStaticTimer:
        timer_pending_ = false;
        if (can_issue()) {
            start_step();
        }
        break;
    case kStageFree:
        if (!kick_pending_ && can_issue()) {
            start_step();
        }
        break;
    default: break;
    }
}

void Replica::start_step() {
    state_.begin_step(sim_.now());
    std::vector<std::uint32_t>& batch = state_.batch();
    // A step whose only running sequence preempted itself is empty; forming again admits
    // from the waiting queue (which a preempting step skips), so the replica never stalls.
    for (int attempt = 0; attempt < 4; ++attempt) {
        state_.begin_attempt();
        policy_->form(state_);
        if (!batch.empty() || !state_.preempted()) {
            break;
        }
    }
    if (const std::optional<Tick> wake = state_.wake(); wake && !timer_pending_) {
        timer_pending_ = true;
        sim_.schedule_at(*wake, *this, kStaticTimer);
    }
    state_.report_tiers(); // KV offload: the step's tier figures, for a trace
    const double swap_time = state_.swap_time();
    const std::int64_t members = state_.cohort_scheduled(); // decodes not listed in the batch
    if (state_.unscheduled() > 0) {
        // Preempted entries were unmarked: drop them.
        std::erase_if(batch, [&](std::uint32_t slot) { return !pool_[slot].in_batch; });
    }
    // Sums for the cost model: the plain decodes were summed as they were scheduled; the rest
    // (prefill chunks, speculative decodes) are added here, preempted ones skipped. Decode
    // sums are whole numbers, so adding them apart gives the same bits.
    model::BatchStats stats;
    model::BatchStats draft_stats; // the proposer's batch (speculative decoding)
    StepSample sample;
    const DecodeSums& plain = state_.decode_sums();
    cost_.add_decode_sums(stats, plain.n, plain.context, plain.windowed);
    sample.decodes = static_cast<int>(plain.n);
    for (const std::uint32_t slot : state_.others()) {
        const Request& r = pool_[slot];
        if (!r.in_batch) {
            continue;
        }
        if (SchedulerState::is_decode(r)) {
            if (cfg_.speculative != nullptr && r.sched > 1) {
                // The verify pass: the last sampled token and r.sched − 1 drafts.
                cfg_.speculative->add_verify(cost_, stats, r.computed, r.sched - 1);
                if (const model::StepCostModel* dm = cfg_.speculative->draft()) {
                    dm->add(draft_stats, model::DecodeSeq{r.computed + 1});
                }
            } else {
                cost_.add(stats, model::DecodeSeq{r.computed + 1});
            }
            ++sample.decodes;
        } else {
            cost_.add(stats, model::PrefillChunk{r.sched, r.computed});
            if (cfg_.speculative != nullptr && cfg_.speculative->draft() != nullptr) {
                cfg_.speculative->draft()->add(draft_stats,
                                               model::PrefillChunk{r.sched, r.computed});
            }
            ++sample.prefills;
            sample.prefill_tokens += r.sched;
        }
    }
    if (batch.empty() && members == 0 && swap_time <= 0) {
        return; // nothing to run; an arrival or a step's end starts the next
    }
    double lora_load = 0.0; // engine.lora: adapters copied in before the step runs
    if (lora_ != nullptr && !batch.empty()) {
        int adapters = 0;
        lora_load = lora_->step(batch, state_.running(), pool_, sim_.now(), adapters);
        stats.lora_adapters = adapters;
        lora_->report(cfg_.id, sim_.now(), metrics_.features()); // its loads, for a trace
    }
    double t = lora_load;
    if (!batch.empty() || members > 0) {
        // A degraded link swaps in the slowed model; the batch sums do not depend on links.
        if (cfg_.capped) {
            const model::PowerCappedStepCost::Step st =
                (link_capped_ != nullptr ? link_capped_ : cfg_.capped)->cost(stats);
            step_cost_ = st.cost;
            sample.clock = st.clock;
        } else if (link_cost_ != nullptr) {
            step_cost_ = link_cost_->cost(stats);
            sample.clock = cost_.clocks().compute;
        } else {
            cost_memo_.cost(stats, step_cost_);
            sample.clock = cost_.clocks().compute;
        }
        t += step_cost_.time.si();
        if (cfg_.speculative != nullptr) {
            // The proposer runs before the verify pass on the same GPUs (at full clocks).
            const double draft = cfg_.speculative->draft_time(draft_stats).si();
            t += draft;
            metrics_.speculative_draft_time(draft);
            sample.draft_s = draft;
        }
        sample.cost = &step_cost_;
    }
    const Tick start = sim_.now();
    std::size_t mb = 0;
    while (mb_busy_[mb]) {
        ++mb;
    }
    Tick end = 0;
    if (stages_ == 1) {
        sample.compute_end = add_ticks(start, to_tick(Seconds(t), "a step's compute time"));
        t += swap_time;
        end = add_ticks(start, std::max<Tick>(1, to_tick(Seconds(t), "a step's time")));
        sample.end = end;
        stage0_free_ = end;
    } else {
        // The step time split evenly over the stages (cumulative rounding, so the last stage
        // ends exactly T after the start when the pipeline is empty); swap traffic likewise.
        cover_until(start);
        const double total = t + swap_time;
        const double per_stage = total / stages_;
        Tick c = start;
        Tick prev = 0;
        for (int j = 0; j < stages_; ++j) {
            const Tick off = j + 1 == stages_
                                 ? to_tick(Seconds(total), "a pipeline step's time")
                                 : to_tick(Seconds(per_stage * (j + 1)), "a pipeline stage's time");
            const Tick d = std::max<Tick>(1, off - prev);
            prev = std::max(prev, off);
            Tick& free = stage_free_[static_cast<std::size_t>(j)];
            c = add_ticks(std::max(c, free), d);
            free = c;
        }
        end = c;
        stage0_free_ = stage_free_[0];
        // Metrics see the micro-batch's time in stage 0: every stage is busy that long with
        // it, so busy time and energy are per GPU, and the slices of a replica never overlap.
        sample.end = stage0_free_;
        sample.compute_end =
            std::min(stage0_free_,
                     add_ticks(start, to_tick(Seconds(t / stages_), "a pipeline stage's time")));
        covered_ = stage0_free_;
        sim_.schedule_at(stage0_free_, *this, kStageFree);
    }
    if (depth_ > 1) {
        // Only a pipeline forms a step while another is in flight (the preemption victims
        // skip those); with one step at a time nothing reads the flag.
        for (const std::uint32_t slot : batch) {
            pool_[slot].in_flight = true;
        }
    }
    MicroBatch& m = mbs_[mb];
    m.seqs.swap(batch);
    m.start = start;
    m.cohort = state_.cohort_formed();
    mb_busy_[mb] = true;
    ++in_flight_;
    sample.replica = cfg_.id;
    sample.start = start;
    sample.sequences = static_cast<int>(static_cast<std::int64_t>(m.seqs.size()) + members);
    sample.running = static_cast<int>(state_.running().size());
    sample.preempted = state_.preempted_count();
    sample.used_blocks = state_.blocks().used();
    sample.total_blocks = state_.blocks().total();
    metrics_.step(sample);
    sim_.schedule_at(end, *this, kStepEnd, mb);
}

void Replica::cover_until(Tick now) {
    if (in_flight_ > 0 && now > covered_) {
        metrics_.hold(cfg_.id, covered_, now, static_cast<int>(state_.running().size()),
                      state_.blocks().used(), state_.blocks().total());
    }
    covered_ = std::max(covered_, now);
}

void Replica::end_step(std::size_t mb) {
    const Tick now = sim_.now();
    if (stages_ > 1) {
        cover_until(now);
    }
    MicroBatch& m = mbs_[mb];
    const Tick step_start = m.start;
    const Tick gap = now - step_start;
    std::int64_t prefill_tokens = 0;
    std::int64_t out_tokens = 0;
    finished_.clear();
    if (m.cohort) {
        // The cohort's members come first in the batch: their finishers lead, in running order.
        state_.end_cohort_step(now, finished_, same_gap_, out_tokens);
    }
    for (const std::uint32_t slot : m.seqs) {
        Request& r = pool_[slot];
        if (!r.in_batch) {
            continue;
        }
        r.in_batch = false;
        r.in_flight = false;
        const bool decode = SchedulerState::is_decode(r);
        if (!decode) {
            prefill_tokens += r.sched;
        }
        int advance = 1; // tokens this step emits for r once its prompt is done
        if (decode && cfg_.speculative != nullptr && r.sched > 1) {
            // Draft i is kept when drafts 1..i − 1 were and it passes its own test (Leviathan
            // et al., arXiv:2211.17192, §2.3); the verify pass then samples one more token.
            const int drafts = r.sched - 1;
            const auto& acc = cfg_.speculative->acceptance();
            int accepted = 0;
            while (accepted < drafts &&
                   spec_rng_.uniform() < acc[static_cast<std::size_t>(accepted)]) {
                ++accepted;
            }
            advance = std::min(accepted + 1, r.output - r.generated);
            metrics_.speculative_verify(drafts, accepted);
            r.computed += advance;
        } else {
            r.computed += r.sched;
        }
        r.sched = 0;
        if (r.computed < r.num_tokens()) {
            continue; // a prefill chunk that did not reach the end of the prompt
        }
        // The step that computes the last pending token samples the next one (speculative: the
        // accepted drafts and one more, streamed together: their gaps after the first are 0).
        r.generated += advance;
        out_tokens += advance;
        if (cfg_.role == ReplicaRole::Prefill) {
            // The prompt is done: the request leaves for the decode pool with its first token
            // (delivered there), or finishes here when that was its only one.
            r.prefill_end = now;
            if (r.generated >= r.output) {
                r.first_token = now;
                r.last_token = now;
            }
            finished_.push_back(slot);
            continue;
        }
        if (advance > 1) {
            metrics_.itl(r.cls, 0, advance - 1);
        }
        if (r.first_token < 0) {
            r.first_token = now;
        } else if (r.last_token == step_start) {
            ++same_gap_[static_cast<std::size_t>(r.cls)];
        } else {
            metrics_.itl(r.cls, now - r.last_token, 1);
        }
        r.last_token = now;
        if (r.generated >= r.output) {
            finished_.push_back(slot);
        } else if (m.cohort && SchedulerState::is_decode(r)) {
            state_.join_cohort(slot, r);
        }
    }
    if (cfg_.speculative != nullptr) {
        metrics_.speculative_step(cfg_.id, now); // the step's accepted drafts, for a trace
    }
    m.seqs.clear();
    mb_busy_[mb] = false;
    --in_flight_;
    for (std::size_t c = 0; c < same_gap_.size(); ++c) {
        if (same_gap_[c] > 0) {
            metrics_.itl(static_cast<int>(c), gap, same_gap_[c]);
            same_gap_[c] = 0;
        }
    }
    metrics_.tokens(now, prefill_tokens, out_tokens);
    in_end_ = true; // keeps enqueue() from scheduling a kick; the next step starts right here
    if (!finished_.empty()) {
        for (const std::uint32_t slot : finished_) {
            Request& r = pool_[slot];
            state_.release(r);
            r.state = ReqState::Done;
        }
        state_.drop_done(finished_);
        // Tell the cluster after the running set is consistent; it may enqueue more here.
        for (const std::uint32_t slot : finished_) {
            --assigned_;
            host_.request_done(cfg_.id, slot);
        }
    }
    in_end_ = false;
    if (can_issue()) {
        start_step();
    }
}

} // namespace gpuplan::sim::detail
