#include "sim/detail/scheduler_policy.hpp"

namespace gpuplan::sim::detail {

bool SchedulerPolicy::can_schedule(int /*prompt*/, int /*output*/,
                                   const ReplicaConfig& /*config*/) const {
    return true;
}

std::unique_ptr<SchedulerPolicy> make_scheduler_policy(const ReplicaConfig& config) {
    switch (config.scheduler.batching) {
    case model::BatchingMode::Static: return make_static_batching();
    case model::BatchingMode::Continuous: break;
    }
    switch (config.engine) {
    case model::EngineKind::LlamaCpp: return make_llama_cpp_slots();
    case model::EngineKind::TensorRtLlm:
        return make_tensorrt_llm(config.scheduler.capacity_scheduler);
    case model::EngineKind::Sglang: return make_sglang(config.scheduler);
    case model::EngineKind::Vllm: break;
    }
    return make_continuous_batching();
}

} // namespace gpuplan::sim::detail
