#include "sim/detail/step_cost_memo.hpp"

#include <cstdint>

namespace gpuplan::sim::detail {

StepCostMemo::StepCostMemo(const model::StepCostModel& model) : model_(&model), entries_(kEntries) {
    // Every entry starts as the empty batch's shape, so a key match is always a true hit.
    for (model::StepShape& e : entries_) {
        model_->shape(model::BatchStats{}, e);
    }
}

// Decode-only steps of consecutive sizes (tokens = rows) land in distinct entries.
std::size_t StepCostMemo::entry_of(const model::ShapeKey& key) noexcept {
    const auto whole = [](double v) { return static_cast<std::uint64_t>(v); };
    const std::uint64_t h = whole(key.rows) + 1021 * whole(key.tokens) +
                            131 * (whole(key.decodes) + whole(key.prefill_kv_read) +
                                   whole(key.sequences) + whole(key.lora_adapters));
    return static_cast<std::size_t>(h) & (kEntries - 1);
}

void StepCostMemo::cost(const model::BatchStats& stats, model::StepCost& out) {
    const model::ShapeKey key = model_->shape_key(stats);
    model::StepShape& e = entries_[entry_of(key)];
    if (!(e.key == key)) {
        model_->shape(stats, e);
    }
    model_->complete(e, stats, out);
}

} // namespace gpuplan::sim::detail
