#pragma once
/// The shapes of a replica's recent steps (layer-private). Most of a step's cost depends only on
/// its shape (tokens and logit rows: model::StepCostModel::shape_key), and a steady decode
/// batch repeats a few shapes step after step while its contexts grow, so the replica
/// keeps the shape part of recent steps and only adds the attention operators and the totals
/// (model::StepCostModel::complete): the same bits as StepCostModel::cost, fewer kernel-time
/// evaluations. Direct-mapped by shape; allocation-free after construction.

#include "model/step_cost.hpp"

#include <cstddef>
#include <vector>

namespace gpuplan::sim::detail {

class StepCostMemo {
  public:
    /// Shapes of `model` (not owned; outlives the memo).
    explicit StepCostMemo(const model::StepCostModel& model);

    /// Writes model.cost(stats) into `out`.
    void cost(const model::BatchStats& stats, model::StepCost& out);

  private:
    static constexpr std::size_t kEntries = 16; // a power of two
    [[nodiscard]] static std::size_t entry_of(const model::ShapeKey& key) noexcept;

    const model::StepCostModel* model_;
    std::vector<model::StepShape> entries_; // each holds the shape of its own key
};

} // namespace gpuplan::sim::detail
