#include "sim/detail/cluster.hpp"

#include "model/error.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpuplan::sim::detail {

Cluster::Cluster(Simulation& sim, const model::StepCostModel& cost, RequestPool& pool,
                 Metrics& metrics, ClusterSetup setup, Rng cloud_rng)
    : sim_(sim), cost_(cost), pool_(pool), metrics_(metrics), setup_(std::move(setup)),
      rng_(cloud_rng), fail_rng_(cloud_rng.fork(0xfa11)) {
    if (setup_.config.cloud && setup_.config.cloud->rate_limit_rps) {
        bucket_ = *setup_.config.cloud->rate_limit_rps; // a full bucket: one second of burst
    }
    pools_ = setup_.pools;
    if (pools_.empty()) {
        PoolSetup one;
        one.replica = setup_.replica;
        one.cost = &cost_;
        one.replicas = setup_.replicas;
        one.load_time = setup_.load_time;
        if (const auto& a = setup_.config.autoscaler) {
            one.min_replicas = a->min_replicas;
            one.max_replicas = a->max_replicas;
        }
        pools_.push_back(std::move(one));
    }
    last_change_.assign(pools_.size(), 0);
    pool_peak_.assign(pools_.size(), 0);
    scaled_.pool_replica_seconds.assign(pools_.size(), 0.0);
}

void Cluster::add_replica(Tick up_at, int pool) {
    const PoolSetup& ps = pools_[static_cast<std::size_t>(pool)];
    ReplicaConfig rc = ps.replica;
    rc.id = static_cast<int>(replicas_.size());
    replicas_.push_back(std::make_unique<Replica>(sim_, *ps.cost, pool_, metrics_, *this, rc));
    up_.push_back(false);
    pool_of_.push_back(pool);
    allowed_.push_back(true);
    draining_.push_back(false);
    removed_.push_back(false);
    paid_from_.push_back(sim_.now());
    link_free_.push_back(0);
    replacement_.push_back(false);
    degraded_since_.push_back(-1);
    metrics_.replica_up(rc.id, up_at);
    sim_.schedule_at(up_at, *this, kReplicaUp, static_cast<std::uint64_t>(rc.id));
    if (setup_.link_cost != nullptr) {
        schedule_unit(static_cast<std::size_t>(rc.id), kLinkDown, setup_.link_mtbf);
    }
}

void Cluster::link_event(std::size_t i, bool down) {
    if (removed_[i] || draining_[i]) {
        return; // gone: no further link events
    }
    if (down) {
        ++failed_.link_degradations;
        degraded_since_[i] = sim_.now();
        replicas_[i]->set_link_cost(setup_.link_cost, setup_.link_capped);
        schedule_unit(i, kLinkRepaired, setup_.link_mttr);
    } else {
        end_degraded(i);
        replicas_[i]->set_link_cost(nullptr, nullptr);
        schedule_unit(i, kLinkDown, setup_.link_mtbf);
    }
}

void Cluster::end_degraded(std::size_t i) {
    if (degraded_since_[i] >= 0) {
        failed_.degraded_replica_seconds += tick_s(sim_.now() - degraded_since_[i]);
        degraded_since_[i] = -1;
    }
}

void Cluster::start() {
    const Tick initial = setup_.config.cold_start.at_start ? setup_.load_time : 0;
    for (std::size_t p = 0; p < pools_.size(); ++p) {
        for (int i = 0; i < pools_[p].replicas; ++i) {
            add_replica(initial, static_cast<int>(p));
        }
    }
    for (std::size_t i = 0; i < setup_.config.scale.size(); ++i) {
        sim_.schedule_at(to_tick(setup_.config.scale[i].at, "cluster.scale.at"), *this, kScale, i);
    }
    if (const auto& f = setup_.config.failures) {
        metrics_.enable_availability();
        const auto n = static_cast<std::size_t>(setup_.replicas);
        units_.assign(n + static_cast<std::size_t>(f->spares), Unit{});
        for (std::size_t u = 0; u < units_.size(); ++u) {
            units_[u].replica = u < n ? static_cast<int>(u) : -1;
            schedule_unit(u, kUnitFail, setup_.fail_mtbf);
        }
        failed_.needed = setup_.replicas;
        failed_.spares = f->spares;
        failed_.mtbf = setup_.fail_mtbf;
        failed_.mttr = setup_.fail_mttr;
    }
    if (const auto& a = setup_.config.autoscaler) {
        note_count();
        sim_.schedule_at(to_tick(a->interval, "cluster.autoscaler.interval"), *this, kScrape);
        scrape_pending_ = true;
    }
}

int Cluster::active_count(int pool) const {
    int n = 0;
    for (std::size_t i = 0; i < replicas_.size(); ++i) {
        if (pool >= 0 && pool_of_[i] != pool) {
            continue;
        }
        n += draining_[i] || removed_[i] ? 0 : 1;
    }
    return n;
}

void Cluster::note_count() {
    const int n = active_count();
    scaled_.peak_replicas = std::max(scaled_.peak_replicas, n);
    for (std::size_t p = 0; p < pools_.size(); ++p) {
        pool_peak_[p] = std::max(pool_peak_[p], active_count(static_cast<int>(p)));
    }
    const Seconds t = to_seconds(sim_.now());
    if (!scaled_.timeline.empty() && scaled_.timeline.back().t == t) {
        scaled_.timeline.back().replicas = n;
    } else {
        scaled_.timeline.push_back({t, n});
    }
}

void Cluster::scrape() {
    scrape_pending_ = false;
    const model::Autoscaler& a = *setup_.config.autoscaler;
    ++scaled_.scrapes;
    // The metric averaged over each pool's replicas that are up and not draining. Replicas
    // still provisioning count as 0 in HPA's scale-up rule (kubernetes.io, HPA "Algorithm
    // details"), which is ready × average over the ready ones: so `current` is the ready count.
    const std::size_t np = pools_.size();
    std::vector<int> ready(np, 0);
    std::vector<double> sum(np, 0.0);
    if (a.metric == model::ScaleMetric::QueueLength) {
        if (np == 1) {
            sum[0] += gateway_live_;
        } else {
            // A request queued at the gateway counts for every pool that may serve it.
            for (const std::uint64_t h : gateway_) {
                const std::uint32_t slot = pool_.resolve(h);
                if (slot == ~0u || pool_[slot].state != ReqState::Gateway) {
                    continue;
                }
                for (std::size_t p = 0; p < np; ++p) {
                    sum[p] += pool_takes(static_cast<int>(p), pool_[slot]) ? 1.0 : 0.0;
                }
            }
        }
    }
    for (std::size_t i = 0; i < replicas_.size(); ++i) {
        if (!up_[i]) {
            continue;
        }
        const auto p = static_cast<std::size_t>(pool_of_[i]);
        ++ready[p];
        const Replica& rep = *replicas_[i];
        switch (a.metric) {
        case model::ScaleMetric::QueueLength: sum[p] += rep.waiting(); break;
        case model::ScaleMetric::Utilisation:
            sum[p] += static_cast<double>(rep.outstanding() - rep.waiting()) /
                      std::max(1, pools_[p].replica.max_num_seqs);
            break;
        case model::ScaleMetric::KvUse: sum[p] += rep.kv_use(); break;
        }
    }
    for (std::size_t p = 0; p < np; ++p) {
        if (ready[p] > 0) {
            scale_pool(static_cast<int>(p), ready[p], sum[p]);
        }
    }
    // Scrape while anything else may still happen (arrivals to come, requests in the system);
    // failure and repair events alone do not keep it going.
    if (sim_.pending() > static_cast<std::size_t>(unit_events_) || inflight_ + gateway_live_ > 0) {
        sim_.schedule_in(to_tick(a.interval, "cluster.autoscaler.interval"), *this, kScrape);
        scrape_pending_ = true;
    }
    maybe_end();
}

void Cluster::scale_pool(int p, int ready, double sum) {
    model::Autoscaler a = *setup_.config.autoscaler;
    const PoolSetup& ps = pools_[static_cast<std::size_t>(p)];
    a.min_replicas = ps.min_replicas;
    a.max_replicas = ps.max_replicas;
    const int desired = model::desired_replicas(a, ready, sum / ready);
    const int active = active_count(p);
    Tick& last = last_change_[static_cast<std::size_t>(p)];
    if (desired > active) {
        const Tick up_at = scale_up_at(to_tick(a.provisioning, "cluster.autoscaler"), p);
        for (int k = active; k < desired; ++k) {
            const int id = static_cast<int>(replicas_.size());
            add_replica(up_at, p);
            ++scaled_.scale_ups;
            if (setup_.config.failures) {
                add_unit(id);
            }
        }
        last = sim_.now();
        note_count();
    } else if (desired < active && sim_.now() - last >= to_tick(a.cooldown, "cluster.autoscaler")) {
        for (int k = desired; k < active; ++k) {
            // Victims: a replica still provisioning (newest first), else the fewest
            // outstanding requests (newest among equals).
            std::size_t victim = replicas_.size();
            for (std::size_t i = replicas_.size(); i-- > 0;) {
                if (draining_[i] || removed_[i] || pool_of_[i] != p) {
                    continue;
                }
                if (victim == replicas_.size()) {
                    victim = i;
                    continue;
                }
                const bool vi = !up_[victim], ii = !up_[i];
                if ((ii && !vi) ||
                    (ii == vi && replicas_[i]->outstanding() < replicas_[victim]->outstanding())) {
                    victim = i;
                }
            }
            drain_replica(victim);
        }
        last = sim_.now();
        note_count();
    }
}

namespace {

bool serves(const PoolSetup& ps, const Request& r) {
    return ps.classes.empty() || ps.classes[static_cast<std::size_t>(r.cls)];
}

int prompt_cap(const PoolSetup& ps) {
    return ps.max_prompt.value_or(std::numeric_limits<int>::max());
}

/// Length buckets: of the pools serving its class, those with the smallest max_prompt at or
/// above its prompt (no limit: above every prompt); nullopt when none takes its length (then
/// no pool takes it: see takes()).
std::optional<int> bucket_of(const std::vector<PoolSetup>& pools, const Request& r) {
    std::optional<int> bucket;
    for (const PoolSetup& ps : pools) {
        if (serves(ps, r) && r.prompt <= prompt_cap(ps)) {
            bucket = std::min(bucket.value_or(prompt_cap(ps)), prompt_cap(ps));
        }
    }
    return bucket;
}

// A pool never takes a prompt longer than its max_prompt_tokens, also when no pool's bound is
// that long (issue 33: such a request went to every pool); then no pool takes it and the
// cluster rejects it (or sends it to the cloud endpoint as fallback).
bool takes(const PoolSetup& ps, const Request& r, const std::optional<int>& bucket) {
    return serves(ps, r) && r.prompt <= prompt_cap(ps) && (!bucket || prompt_cap(ps) == *bucket);
}

} // namespace

bool Cluster::pool_takes(int p, const Request& r) const {
    return setup_.pools.empty() ||
           takes(pools_[static_cast<std::size_t>(p)], r, bucket_of(pools_, r));
}

void Cluster::add_unit(int replica) {
    units_.push_back(Unit{true, replica, false});
    schedule_unit(units_.size() - 1, kUnitFail, setup_.fail_mtbf);
}

void Cluster::release_unit_of(std::size_t i) {
    for (Unit& u : units_) {
        if (u.replica == static_cast<int>(i)) {
            u.replica = -1;
            u.released = true;
            return;
        }
    }
}

void Cluster::start_replacement(std::size_t i) {
    account();
    replacement_[i] = true;
    ++replacing_;
}

void Cluster::end_replacement(std::size_t i) {
    if (!replacement_[i]) {
        return;
    }
    account();
    replacement_[i] = false;
    --replacing_;
}

void Cluster::pay_until_now(std::size_t i) {
    const double s = tick_s(sim_.now() - paid_from_[i]);
    scaled_.replica_seconds += s;
    scaled_.pool_replica_seconds[static_cast<std::size_t>(pool_of_[i])] += s;
}

void Cluster::drain_replica(std::size_t i) {
    account();
    end_degraded(i);
    end_replacement(i);
    release_unit_of(i);
    draining_[i] = true;
    ++scaled_.scale_downs;
    if (up_[i]) {
        up_[i] = false;
        --up_count_;
    }
    remove_if_empty(i);
}

void Cluster::remove_if_empty(std::size_t i) {
    if (draining_[i] && !removed_[i] && replicas_[i]->outstanding() == 0) {
        removed_[i] = true;
        pay_until_now(i);
    }
}

void Cluster::schedule_unit(std::size_t unit, Kind kind, Seconds mean) {
    // Times past the simulator's span limit never fire: cap them there.
    const double dt = std::min(fail_rng_.exponential(mean.si()), 0.99 * kMaxSimulatedSpanS);
    sim_.schedule_in(to_tick(Seconds(dt), "cluster.failures"), *this, kind, unit);
    ++unit_events_;
}

void Cluster::account() {
    const Tick from = acc_from_;
    const double dt = tick_s(sim_.now() - from);
    acc_from_ = sim_.now();
    // With the autoscaler the replicas needed are those serving or replacing a failed one.
    const int need = setup_.config.autoscaler ? up_count_ + replacing_ : setup_.replicas;
    acc_up_s_ += dt * up_count_;
    acc_need_s_ += dt * need;
    if (up_count_ >= need) {
        acc_ok_s_ += dt;
        if (setup_.config.failures) {
            metrics_.available(from, sim_.now());
        }
    }
}

void Cluster::unit_failed(std::size_t unit) {
    if (units_[unit].released) {
        return; // left the fleet
    }
    units_[unit].up = false;
    ++failed_.failures;
    if (units_[unit].replica >= 0) {
        const auto i = static_cast<std::size_t>(units_[unit].replica);
        const int pool = pool_of_[i];
        units_[unit].replica = -1;
        failed_.failed_at.push_back(to_seconds(sim_.now()));
        fail_replica(i);
        bool taken = false;
        for (std::size_t s = 0; s < units_.size() && !taken; ++s) {
            if (units_[s].up && units_[s].replica < 0 && !units_[s].released) {
                take_over(s, pool);
                taken = true;
            }
        }
        if (!taken && setup_.config.autoscaler) {
            // No spare: a new machine, provisioned and cold-started like a scale-up.
            const auto id = replicas_.size();
            add_replica(
                scale_up_at(to_tick(setup_.config.autoscaler->provisioning, "cluster.autoscaler"),
                            pool),
                pool);
            start_replacement(id);
            add_unit(static_cast<int>(id));
        }
    }
    schedule_unit(unit, kUnitRepaired, setup_.fail_mttr);
}

void Cluster::unit_repaired(std::size_t unit) {
    if (units_[unit].released) {
        return;
    }
    units_[unit].up = true;
    if (setup_.config.autoscaler) {
        // Failed replicas were replaced at once: the repaired machine is a hot spare while the
        // spares are short, else it leaves the fleet.
        int idle = 0;
        for (std::size_t u = 0; u < units_.size(); ++u) {
            idle += u != unit && !units_[u].released && units_[u].replica < 0 ? 1 : 0;
        }
        if (idle >= setup_.config.failures->spares) {
            units_[unit].released = true;
            return;
        }
        schedule_unit(unit, kUnitFail, setup_.fail_mtbf);
        return;
    }
    int serving = 0;
    for (const Unit& u : units_) {
        serving += u.replica >= 0 ? 1 : 0;
    }
    if (serving < setup_.replicas) {
        take_over(unit, 0);
    }
    schedule_unit(unit, kUnitFail, setup_.fail_mtbf);
}

void Cluster::take_over(std::size_t unit, int pool) {
    const auto id = replicas_.size();
    units_[unit].replica = static_cast<int>(id);
    add_replica(scale_up_at(0, pool), pool);
    start_replacement(id);
    ++failed_.takeovers;
}

void Cluster::fail_replica(std::size_t i) {
    account();
    end_replacement(i);
    end_degraded(i);
    replicas_[i]->kill();
    if (!removed_[i]) {
        pay_until_now(i);
    }
    removed_[i] = true;
    if (up_[i]) {
        up_[i] = false;
        --up_count_;
    }
    std::vector<std::uint32_t> held;
    pool_.for_each_live([&](std::uint32_t s) {
        const Request& r = pool_[s];
        if (r.replica == static_cast<int>(i) &&
            (r.state == ReqState::Waiting || r.state == ReqState::Running ||
             r.state == ReqState::Swapped)) {
            held.push_back(s);
        }
    });
    const bool lose = setup_.config.failures->in_flight == model::FailedRequests::Lose;
    for (const std::uint32_t slot : held) {
        --inflight_;
        metrics_.outstanding(static_cast<int>(i), sim_.now(), -1);
        if (lose) {
            ++failed_.requests_lost;
            retire(slot, Outcome::Rejected, RejectReason::ReplicaFailed);
            continue;
        }
        // The client sends it again: everything computed is gone.
        ++failed_.requests_retried;
        Request& r = pool_[slot];
        r.generated = 0;
        r.computed = 0;
        r.sched = 0;
        r.cached_tokens = 0;
        r.started = false;
        r.in_batch = false;
        r.in_flight = false;
        r.first_scheduled = -1;
        r.first_token = -1;
        r.last_token = -1;
        r.blocks.clear();
        r.blocks_held = 0;
        r.hashed_blocks = 0;
        r.last_hash = 0;
        r.swapped_blocks = 0;
        r.replica = -1;
        admit(slot);
    }
    drain();
}

void Cluster::maybe_end() {
    if (setup_.config.failures && pool_.live() == 0 &&
        sim_.pending() <= static_cast<std::size_t>(unit_events_) + (scrape_pending_ ? 1U : 0U)) {
        sim_.stop(); // only failures and repairs are left: the workload is over
    }
}

std::optional<FailureResult> Cluster::failures(Tick end) const {
    if (!setup_.config.failures) {
        return std::nullopt;
    }
    FailureResult r = failed_;
    for (std::size_t i = 0; i < replicas_.size(); ++i) {
        if (degraded_since_[i] >= 0) {
            r.degraded_replica_seconds += tick_s(end - degraded_since_[i]);
        }
    }
    const bool scaled = setup_.config.autoscaler.has_value();
    const int need = scaled ? up_count_ + replacing_ : setup_.replicas;
    const double tail = tick_s(end - acc_from_);
    const double ok = acc_ok_s_ + (up_count_ >= need ? tail : 0.0);
    const double up = acc_up_s_ + tail * up_count_;
    const double span = tick_s(end);
    if (span > 0) {
        r.availability = ok / span;
        if (scaled) {
            const double needed = acc_need_s_ + tail * need;
            r.mean_up_fraction = needed > 0 ? up / needed : 1.0;
        } else {
            r.mean_up_fraction = up / span / setup_.replicas;
        }
    }
    return r;
}

std::optional<AutoscalerResult> Cluster::scaling(Tick end) const {
    if (!setup_.config.autoscaler) {
        return std::nullopt;
    }
    AutoscalerResult r = scaled_;
    for (std::size_t i = 0; i < replicas_.size(); ++i) {
        if (!removed_[i]) {
            const double s = tick_s(end - paid_from_[i]);
            r.replica_seconds += s;
            r.pool_replica_seconds[static_cast<std::size_t>(pool_of_[i])] += s;
        }
    }
    if (setup_.pools.empty()) {
        r.pool_replica_seconds.clear();
    }
    return r;
}

bool Cluster::can_dispatch() const {
    const auto& mc = setup_.config.admission.max_concurrency;
    return up_count_ > 0 && (!mc || inflight_ < *mc);
}

bool Cluster::cloud_eligible(const Request& r) const {
    return setup_.config.cloud && setup_.config.cloud_fallback &&
           setup_.class_routes[static_cast<std::size_t>(r.cls)] == model::RouteTarget::Any;
}

int Cluster::queued() const {
    int q = gateway_live_;
    for (const auto& rep : replicas_) {
        q += rep->waiting();
    }
    return q;
}

void Cluster::submit(std::uint32_t slot) {
    Request& r = pool_[slot];
    r.arrival = sim_.now();
    metrics_.arrival(sim_.now());
    metrics_.in_system(sim_.now(), +1);
    const auto route = setup_.class_routes[static_cast<std::size_t>(r.cls)];
    if (route == model::RouteTarget::Cloud) {
        to_cloud(slot);
        return;
    }
    restrict_to_pools(r);
    bool fits = false;
    for (std::size_t i = 0; i < replicas_.size() && !fits; ++i) {
        fits = allowed_[i] && replicas_[i]->fits(r.prompt, r.output);
    }
    if (fits && setup_.disagg) {
        // Disaggregation: the decode pool must hold it too.
        fits = false;
        for (std::size_t i = 0; i < replicas_.size() && !fits; ++i) {
            fits = role_of(i) == ReplicaRole::Decode && replicas_[i]->fits(r.prompt, r.output);
        }
    }
    if (!fits) {
        // Longer than the engine accepts or than the whole KV pool holds: the engine rejects it.
        if (cloud_eligible(r)) {
            to_cloud(slot);
        } else {
            retire(slot, Outcome::Rejected, RejectReason::TooLong);
        }
        return;
    }
    if (const auto& t = setup_.config.admission.timeout) {
        sim_.schedule_in(to_tick(*t, "cluster.admission.timeout"), *this, kTimeout,
                         pool_.handle(slot));
    }
    admit(slot);
}

void Cluster::admit(std::uint32_t slot) {
    Request& r = pool_[slot];
    const auto& adm = setup_.config.admission;
    if (adm.max_queue && queued() >= *adm.max_queue) {
        reject(slot);
        return;
    }
    if (can_dispatch() && gateway_live_ == 0) {
        dispatch(slot);
        return;
    }
    r.state = ReqState::Gateway;
    gateway_.push_back(pool_.handle(slot));
    ++gateway_live_;
    metrics_.queued(sim_.now(), +1);
}

void Cluster::reject(std::uint32_t slot) {
    Request& r = pool_[slot];
    if (r.retries < setup_.config.admission.max_retries) {
        ++r.retries;
        r.state = ReqState::Backoff;
        sim_.schedule_in(
            to_tick(setup_.config.admission.retry_backoff, "cluster.admission.retry_backoff"),
            *this, kRetry, pool_.handle(slot));
        return;
    }
    if (cloud_eligible(r)) {
        to_cloud(slot);
        return;
    }
    retire(slot, Outcome::Rejected, RejectReason::QueueFull);
}

void Cluster::restrict_to_pools(const Request& r) {
    if (setup_.disagg) {
        // A new request goes to the prefill pool, a prefilled one to the decode pool.
        const ReplicaRole want = r.transferred ? ReplicaRole::Decode : ReplicaRole::Prefill;
        for (std::size_t i = 0; i < replicas_.size(); ++i) {
            allowed_[i] = role_of(i) == want;
        }
        return;
    }
    if (setup_.pools.empty()) {
        return; // every replica, always
    }
    const std::optional<int> bucket = bucket_of(pools_, r);
    for (std::size_t i = 0; i < replicas_.size(); ++i) {
        allowed_[i] = takes(pools_[static_cast<std::size_t>(pool_of_[i])], r, bucket);
    }
}

LoraCounts Cluster::lora_counts() const {
    LoraCounts sum;
    for (const auto& rep : replicas_) {
        if (const LoraCache* c = rep->lora()) {
            const LoraCounts& k = c->counts();
            sum.requests += k.requests;
            sum.hits += k.hits;
            sum.loads += k.loads;
            sum.disk_loads += k.disk_loads;
            sum.load_s += k.load_s;
            sum.adapters_per_step += k.adapters_per_step;
            sum.steps += k.steps;
        }
    }
    return sum;
}

int Cluster::pick(const Request& r) {
    restrict_to_pools(r);
    const int n = static_cast<int>(replicas_.size());
    int best = -1;
    const auto least_outstanding = [&] {
        int b = -1;
        for (int i = 0; i < n; ++i) {
            if (usable(i) && (b < 0 || replicas_[static_cast<std::size_t>(i)]->outstanding() <
                                           replicas_[static_cast<std::size_t>(b)]->outstanding())) {
                b = i;
            }
        }
        return b;
    };
    switch (setup_.config.router) {
    case model::RouterPolicy::RoundRobin:
        for (int k = 0; k < n; ++k) {
            const auto i = static_cast<std::size_t>((rr_ + static_cast<std::size_t>(k)) %
                                                    static_cast<std::size_t>(n));
            if (usable(static_cast<int>(i))) {
                best = static_cast<int>(i);
                rr_ = i + 1;
                break;
            }
        }
        break;
    case model::RouterPolicy::LeastKv:
        for (int i = 0; i < n; ++i) {
            const auto si = static_cast<std::size_t>(i);
            if (!usable(i)) {
                continue;
            }
            if (best < 0) {
                best = i;
                continue;
            }
            const Replica& a = *replicas_[si];
            const Replica& b = *replicas_[static_cast<std::size_t>(best)];
            if (a.kv_use() < b.kv_use() ||
                (a.kv_use() == b.kv_use() && a.outstanding() < b.outstanding())) {
                best = i;
            }
        }
        break;
    case model::RouterPolicy::PrefixAffinity: {
        best = least_outstanding();
        const std::uint64_t key = r.session != kNoSession ? r.stream_id : r.shared_id;
        if (key != 0 && best >= 0) {
            // The up replicas in id order; the key picks one of them.
            std::uint64_t h = key * 0x9e3779b97f4a7c15ULL;
            h ^= h >> 29;
            int usable_count = 0;
            for (int i = 0; i < n; ++i) {
                usable_count += usable(i) ? 1 : 0;
            }
            auto k = static_cast<int>(h % static_cast<std::uint64_t>(usable_count));
            int chosen = -1;
            for (int i = 0; i < n && chosen < 0; ++i) {
                if (usable(i) && k-- == 0) {
                    chosen = i;
                }
            }
            // Stay with the affine replica unless it has a full batch more than the least loaded.
            const int slack = std::max(8, setup_.replica.max_num_seqs);
            if (chosen >= 0 &&
                replicas_[static_cast<std::size_t>(chosen)]->outstanding() <=
                    replicas_[static_cast<std::size_t>(best)]->outstanding() + slack) {
                best = chosen;
            }
        }
        break;
    }
    case model::RouterPolicy::LeastOutstanding: best = least_outstanding(); break;
    case model::RouterPolicy::AdapterAffinity: {
        // engine.lora: the least outstanding replica whose GPU holds the adapter, unless it has
        // a full batch more than the least loaded (as prefix_affinity); else the least loaded.
        best = least_outstanding();
        int chosen = -1;
        for (int i = 0; i < n && r.adapter >= 0; ++i) {
            const Replica& rep = *replicas_[static_cast<std::size_t>(i)];
            if (usable(i) && rep.lora_resident(r.adapter) &&
                (chosen < 0 ||
                 rep.outstanding() < replicas_[static_cast<std::size_t>(chosen)]->outstanding())) {
                chosen = i;
            }
        }
        const int slack = std::max(8, setup_.replica.max_num_seqs);
        if (chosen >= 0 && best >= 0 &&
            replicas_[static_cast<std::size_t>(chosen)]->outstanding() <=
                replicas_[static_cast<std::size_t>(best)]->outstanding() + slack) {
            best = chosen;
        }
        break;
    }
    case model::RouterPolicy::LongestPrefix:
    case model::RouterPolicy::Weighted: best = pick_by_prefix(r); break;
    }
    return best;
}

int Cluster::pick_by_prefix(const Request& r) const {
    const model::PrefixRouting& pr = setup_.config.prefix_routing;
    const int n = static_cast<int>(replicas_.size());
    int lo = -1; // fewest outstanding (lowest id among equals)
    int min_out = 0, max_out = 0;
    for (int i = 0; i < n; ++i) {
        if (!usable(i)) {
            continue;
        }
        const int o = replicas_[static_cast<std::size_t>(i)]->outstanding();
        if (lo < 0 || o < min_out) {
            lo = i;
            min_out = o;
        }
        max_out = std::max(max_out, o);
    }
    if (lo < 0) {
        return lo;
    }
    // SGLang router, cache_aware policy (sgl-router, policies/cache_aware.rs): out of balance
    // when both max − min > balance_abs_threshold and max > balance_rel_threshold × min; then
    // the least loaded, whatever the caches hold.
    if (max_out - min_out > pr.balance_abs_threshold &&
        static_cast<double>(max_out) > pr.balance_rel_threshold * static_cast<double>(min_out)) {
        return lo;
    }
    // LongestPrefix: the most cached prompt tokens. Weighted: llm-d's scorer sum (prefix-cache
    // scorer: hit fraction of the prompt; queue scorer: (max − q) / (max − min), 1 when all
    // are equal), weight and 1 − weight. Ties: fewest outstanding, then lowest id.
    const bool weighted = setup_.config.router == model::RouterPolicy::Weighted;
    const double w = weighted ? pr.weight : 1.0;
    const double prompt = std::max(1, r.num_tokens());
    int best = -1;
    double best_score = 0;
    int best_out = 0;
    for (int i = 0; i < n; ++i) {
        if (!usable(i)) {
            continue;
        }
        const Replica& rep = *replicas_[static_cast<std::size_t>(i)];
        const int o = rep.outstanding();
        const double hit = w > 0 ? rep.cached_prefix_tokens(r) : 0.0;
        double score = hit;
        if (weighted) {
            const double queue = max_out > min_out ? static_cast<double>(max_out - o) /
                                                         static_cast<double>(max_out - min_out)
                                                   : 1.0;
            score = w * (hit / prompt) + (1 - w) * queue;
        }
        if (best < 0 || score > best_score || (score == best_score && o < best_out)) {
            best = i;
            best_score = score;
            best_out = o;
        }
    }
    return best;
}

void Cluster::dispatch(std::uint32_t slot) {
    const int rep = pick(pool_[slot]);
    GPUPLAN_CHECK(rep >= 0, "no replica to route a request to");
    ++inflight_;
    metrics_.routed(rep);
    metrics_.outstanding(rep, sim_.now(), +1);
    replicas_[static_cast<std::size_t>(rep)]->enqueue(slot);
}

void Cluster::drain() {
    while (gateway_live_ > 0 && can_dispatch()) {
        const std::uint32_t slot = pool_.resolve(gateway_.front());
        gateway_.pop_front();
        if (slot == ~0u || pool_[slot].state != ReqState::Gateway) {
            continue; // timed out while queued
        }
        --gateway_live_;
        metrics_.queued(sim_.now(), -1);
        dispatch(slot);
    }
}

void Cluster::to_cloud(std::uint32_t slot) {
    Request& r = pool_[slot];
    const auto& cloud = setup_.config.cloud;
    if (!cloud) {
        retire(slot, Outcome::Rejected, RejectReason::NoCloudEndpoint);
        return;
    }
    if (cloud->rate_limit_rps) {
        // Token bucket refilled at the limit, holding at most one second of requests.
        const double rate = *cloud->rate_limit_rps;
        bucket_ = std::min(rate, bucket_ + rate * tick_s(sim_.now() - bucket_time_));
        bucket_time_ = sim_.now();
        if (bucket_ < 1.0) {
            retire(slot, Outcome::Rejected, RejectReason::CloudRateLimited); // HTTP 429
            return;
        }
        bucket_ -= 1.0;
    }
    r.state = ReqState::InCloud;
    const double ttft = rng_.lognormal(std::log(cloud->ttft_median.si()), cloud->ttft_sigma);
    const double rest = r.output > 1 ? (r.output - 1) / cloud->output_tokens_per_s : 0.0;
    r.first_token = add_ticks(sim_.now(), to_tick(Seconds(ttft), "cluster.cloud.ttft_median"));
    r.generated = r.output;
    double cost = 0;
    std::string currency = "USD";
    if (cloud->input_price) {
        cost += r.prompt * cloud->input_price->money.amount / 1e6;
        currency = cloud->input_price->money.currency;
    }
    if (cloud->output_price) {
        cost += r.output * cloud->output_price->money.amount / 1e6;
        currency = cloud->output_price->money.currency;
    }
    metrics_.cloud_cost(cost, currency);
    sim_.schedule_at(
        add_ticks(r.first_token, to_tick(Seconds(rest), "cluster.cloud.output_tokens_per_s")),
        *this, kCloudDone, pool_.handle(slot));
}

void Cluster::retire(std::uint32_t slot, Outcome outcome, RejectReason why) {
    Request& r = pool_[slot];
    r.state = ReqState::Done;
    r.rejected_because = why;
    metrics_.finished(sim_.now(), r, outcome);
    metrics_.in_system(sim_.now(), -1);
    if (listener_ != nullptr) {
        listener_->request_ended(r, outcome);
    }
    pool_.release(slot);
    maybe_end();
}

void Cluster::request_done(int replica, std::uint32_t slot) {
    metrics_.outstanding(replica, sim_.now(), -1);
    if (setup_.disagg) {
        const Request& r = pool_[slot];
        if (role_of(static_cast<std::size_t>(replica)) == ReplicaRole::Prefill) {
            prefill_queue_s_.add(tick_s(r.first_scheduled - r.arrival));
            if (r.generated < r.output) {
                start_transfer(replica, slot); // still in flight: inflight_ unchanged
                remove_if_empty(static_cast<std::size_t>(replica));
                return;
            }
        } else if (r.transferred) {
            decode_queue_s_.add(tick_s(r.first_token - r.transfer_end));
        }
    }
    --inflight_;
    retire(slot, Outcome::Completed);
    remove_if_empty(static_cast<std::size_t>(replica));
    drain();
}

void Cluster::start_transfer(int from, std::uint32_t slot) {
    Request& r = pool_[slot];
    const DisaggSetup& g = *setup_.disagg;
    // docs/simulator.md, "Prefill/decode disaggregation": each prefill replica's link sends
    // one prompt's KV at a time; layer by layer it may start with the prefill, so the KV
    // arrives the exposed time after the prefill's end or T after the link is free.
    const Bytes bytes = model::kv_transfer_bytes(g.model, r.prompt);
    const Seconds t = model::kv_transfer_time(bytes, g.link);
    const Tick now = sim_.now();
    const Seconds prefill = to_seconds(r.prefill_end - r.first_scheduled);
    const Seconds exposed = model::exposed_transfer_time(t, prefill, g.model.model.layers, g.mode);
    const Tick t_ticks = to_tick(t, "a KV transfer's time");
    Tick& link_free = link_free_[static_cast<std::size_t>(from)];
    const Tick earliest = g.mode == model::KvTransferMode::Whole ? now : r.first_scheduled;
    const Tick end = std::max(add_ticks(now, to_tick(exposed, "a KV transfer's time")),
                              add_ticks(std::max(link_free, earliest), t_ticks));
    link_free = end;
    link_busy_s_ += t.si();
    ++transfers_;
    kv_moved_ += bytes.si();
    transfer_s_.add(t.si());
    exposed_s_.add(tick_s(end - now));
    metrics_.kv_transfer(r.id, from, now, end - t_ticks, end, t, bytes.si());
    r.state = ReqState::Transfer;
    r.transferred = true;
    r.replica = -1;
    sim_.schedule_at(end, *this, kTransferDone, pool_.handle(slot));
}

void Cluster::transfer_done(std::uint32_t slot) {
    Request& r = pool_[slot];
    r.transfer_end = sim_.now();
    const int rep = pick(r);
    GPUPLAN_CHECK(rep >= 0, "no decode replica to send a prefilled request to");
    metrics_.routed(rep);
    metrics_.outstanding(rep, sim_.now(), +1);
    replicas_[static_cast<std::size_t>(rep)]->enqueue(slot);
}

std::optional<DisaggregationResult> Cluster::disaggregation(Tick end) {
    if (!setup_.disagg) {
        return std::nullopt;
    }
    const DisaggSetup& g = *setup_.disagg;
    DisaggregationResult d;
    d.link = g.link_name;
    d.mode = model::to_string(g.mode);
    d.link_bandwidth = g.link.bandwidth.si();
    d.transfers = transfers_;
    d.kv_bytes = kv_moved_;
    d.transfer_time = transfer_s_.stats();
    d.exposed = exposed_s_.stats();
    d.prefill_queue = prefill_queue_s_.stats();
    d.decode_queue = decode_queue_s_.stats();
    int prefill_replicas = 0;
    for (std::size_t i = 0; i < replicas_.size(); ++i) {
        prefill_replicas += role_of(i) == ReplicaRole::Prefill ? 1 : 0;
    }
    const double span = tick_s(end);
    if (span > 0 && prefill_replicas > 0) {
        d.link_utilisation = link_busy_s_ / (prefill_replicas * span);
    }
    return d;
}

void Cluster::bound_events(std::int64_t& seen, const char* key, const char* what) {
    if (++seen > kMaxClusterEvents) {
        throw InvalidArgument(std::string(key) + ": the run reached " +
                              std::to_string(kMaxClusterEvents) + " " + what +
                              ", the simulator's limit; its period is too short for the "
                              "simulated time (a scrape every 15 s, a failure every hours)");
    }
}

void Cluster::on_event(std::uint32_t kind, std::uint64_t data) {
    switch (kind) {
    case kTransferDone: {
        const std::uint32_t slot = pool_.resolve(data);
        if (slot != ~0u && pool_[slot].state == ReqState::Transfer) {
            transfer_done(slot);
        }
        break;
    }
    case kReplicaUp: {
        const auto i = static_cast<std::size_t>(data);
        // A drained replica was cancelled while provisioning; a failed one died cold-starting.
        if (!up_[i] && !draining_[i] && !removed_[i]) {
            end_replacement(i);
            account();
            up_[i] = true;
            ++up_count_;
        }
        drain();
        maybe_end();
        break;
    }
    case kScale: {
        const int target = setup_.config.scale[static_cast<std::size_t>(data)].replicas;
        const Tick up_at =
            add_ticks(sim_.now(), setup_.config.cold_start.load_bandwidth ? setup_.load_time : 0);
        while (static_cast<int>(replicas_.size()) < target) {
            add_replica(up_at, 0); // scale-ups only without pools (the loader checks)
        }
        break;
    }
    case kScrape:
        bound_events(scrapes_seen_, "cluster.autoscaler.interval", "scrapes");
        scrape();
        break;
    case kLinkDown:
    case kLinkRepaired:
        bound_events(link_events_seen_, "cluster.failures.degraded_link.mtbf",
                     "link failures and repairs");
        --unit_events_;
        link_event(static_cast<std::size_t>(data), kind == kLinkDown);
        maybe_end();
        break;
    case kUnitFail:
    case kUnitRepaired:
        bound_events(failures_seen_, "cluster.failures.mtbf", "replica failures and repairs");
        --unit_events_;
        if (kind == kUnitFail) {
            unit_failed(static_cast<std::size_t>(data));
        } else {
            unit_repaired(static_cast<std::size_t>(data));
        }
        maybe_end();
        break;
    case kCloudDone: {
        const std::uint32_t slot = pool_.resolve(data);
        if (slot != ~0u && pool_[slot].state == ReqState::InCloud) {
            retire(slot, Outcome::Cloud);
        }
        break;
    }
    case kRetry: {
        const std::uint32_t slot = pool_.resolve(data);
        if (slot != ~0u && pool_[slot].state == ReqState::Backoff) {
            admit(slot);
        }
        break;
    }
    case kTimeout: {
        const std::uint32_t slot = pool_.resolve(data);
        if (slot == ~0u) {
            break;
        }
        Request& r = pool_[slot];
        if (r.started) {
            break;
        }
        bool timed_out = false;
        if (r.state == ReqState::Gateway) {
            --gateway_live_; // its queue entry goes stale
            metrics_.queued(sim_.now(), -1);
            timed_out = true;
        } else if (r.state == ReqState::Backoff) {
            timed_out = true;
        } else if (r.state == ReqState::Waiting && r.replica >= 0 &&
                   replicas_[static_cast<std::size_t>(r.replica)]->cancel(slot)) {
            --inflight_;
            metrics_.outstanding(r.replica, sim_.now(), -1);
            remove_if_empty(static_cast<std::size_t>(r.replica));
            timed_out = true;
        }
        if (!timed_out) {
            break;
        }
        // Fast fail, or local first with fallback to the cloud.
        if (cloud_eligible(r)) {
            to_cloud(slot);
        } else {
            retire(slot, Outcome::TimedOut);
        }
        drain();
        break;
    }
    default: break;
    }
}

void Cluster::cancel_all() {
    for (const auto& rep : replicas_) {
        rep->settle(); // the running requests' fields current before they are read
    }
    std::vector<std::uint32_t> live;
    pool_.for_each_live([&](std::uint32_t s) { live.push_back(s); });
    for (const std::uint32_t s : live) {
        retire(s, Outcome::Cancelled);
    }
}

} // namespace gpuplan::sim::detail
