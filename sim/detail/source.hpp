#pragma once
/// The workload generator (layer-private): open-loop arrivals (Poisson, Gamma, constant, with
/// rate curves), closed-loop clients with think time, trace replay and agent sessions. It fills
/// in each request (class, lengths, shared-prefix and stream content ids) and submits it to the
/// cluster.

#include "model/scenario.hpp"
#include "sim/arrival_clock.hpp"
#include "sim/detail/cluster.hpp"
#include "sim/detail/lora_cache.hpp"
#include "sim/length_sampler.hpp"

#include <optional>
#include <vector>

namespace gpuplan::sim::detail {

/// Limits on what the source sends.
struct SourceLimits {
    std::int64_t max_arrivals = 1000; ///< top-level arrivals (requests, or sessions for agents)
    Tick end = kNever;                ///< no top-level arrival at or after this time
};

class WorkloadSource final : public EventHandler, public RequestListener {
  public:
    /// `classes` must be non-empty with positive total share.
    WorkloadSource(Simulation& sim, RequestPool& pool, Cluster& cluster, const model::Workload& w,
                   std::vector<model::RequestClass> classes, SourceLimits limits, Rng rng);

    /// Schedules the first arrivals.
    void start();
    /// engine.lora: each request names an adapter drawn from `setup` (not owned) with the
    /// source's own RNG stream. Null (the default): none.
    void set_lora(const LoraSetup* setup) noexcept { lora_ = setup; }
    /// Top-level arrivals so far.
    [[nodiscard]] std::int64_t arrivals() const noexcept { return arrivals_; }
    [[nodiscard]] const SourceLimits& limits() const noexcept { return limits_; }

    void request_ended(const Request& r, Outcome outcome) override;
    void on_event(std::uint32_t kind, std::uint64_t data) override;

  private:
    enum Kind : std::uint32_t { kOpenArrival, kUserSend, kTraceArrival, kAgentStep, kBatchArrival };

    struct Session {
        int cls = 0;
        int user = -1;
        int steps_done = 0;
        std::int64_t history = 0; // tokens of earlier inputs and outputs in the stream
        std::uint64_t shared_id = 0;
        std::uint64_t stream_id = 0;
    };

    [[nodiscard]] bool may_arrive() const;
    [[nodiscard]] int pick_class();
    [[nodiscard]] std::uint64_t shared_id(int cls);
    void top_level(int cls, int user);
    void send(int cls, int user, int prompt_own, int output, std::int64_t session,
              int shared_cap = 1 << 30);
    void send_agent_step(std::uint64_t session);
    void user_next(int user);

    Simulation& sim_;
    RequestPool& pool_;
    Cluster& cluster_;
    const model::Workload& w_;
    std::vector<model::RequestClass> classes_;
    std::vector<LengthSampler> input_, output_, step_input_;
    std::vector<double> share_cdf_;
    SourceLimits limits_;
    Rng rng_arrivals_, rng_class_, rng_len_, rng_think_, rng_adapter_;
    const LoraSetup* lora_ = nullptr;
    std::optional<ArrivalClock> clock_;
    std::vector<model::TraceRecord> trace_;
    std::size_t trace_next_ = 0;
    std::vector<Session> sessions_;
    std::int64_t arrivals_ = 0;
    std::uint64_t next_id_ = 0;
    std::uint64_t next_stream_ = 0;
};

} // namespace gpuplan::sim::detail
