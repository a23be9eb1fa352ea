// Multi-LoRA serving (model/lora.hpp): adapter sizes worked out by hand from the model's
// config.json, the slots' reservation against the KV budget, the batched LoRA kernels in the
// step cost, Che's approximation against closed forms, and the block's validation.
#include "model/error.hpp"
#include "model/lora.hpp"
#include "model/memory.hpp"
#include "model/serving.hpp"
#include "model/step_cost.hpp"
#include "tests/model/fixtures.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace gpuplan::model {
namespace {

using test::deploy;
using test::h100;
using test::llama3_8b;

LoraServingConfig qkvo_r16() {
    LoraServingConfig c;
    c.adapters = 100;
    c.rank = 16;
    c.target_modules = {LoraModule::QProj, LoraModule::KProj, LoraModule::VProj, LoraModule::OProj};
    return c;
}

// Llama-3-8B (h 4096, 32 heads of 128, 8 KV heads, 32 layers), rank 16 on q, k, v, o, bf16:
// per layer q 16 × (4096 + 4096) = 131,072, k and v 16 × (4096 + 1024) = 81,920 each, o
// 131,072: 425,984 elements; × 32 layers = 13,631,488 elements = 27,262,976 bytes (27.3 MB, the
// size of a PEFT adapter_model.safetensors of that shape).
TEST(Lora, AdapterBytesOfLlama3_8bRank16OnQkvoByHand) {
    EXPECT_DOUBLE_EQ(lora_adapter_bytes(llama3_8b(), qkvo_r16(), 16, 2.0).si(), 27262976.0);
    // Adding the MLP (gate, up: 16 × (4096 + 14336) each; down the same): 3 × 294,912 more per
    // layer.
    LoraServingConfig all = qkvo_r16();
    all.target_modules.insert(all.target_modules.end(),
                              {LoraModule::GateProj, LoraModule::UpProj, LoraModule::DownProj});
    EXPECT_DOUBLE_EQ(lora_adapter_bytes(llama3_8b(), all, 16, 2.0).si(),
                     (425984.0 + 3 * 294912.0) * 32 * 2);
}

// With tp 2 vLLM keeps A of q/k/v whole and halves B, halves A of o and keeps B whole: per layer
// q 16 × (4096 + 2048), k and v 16 × (4096 + 512), o 16 × (2048 + 4096) = 344,064 elements.
TEST(Lora, GpuShardFollowsVllmsColumnAndRowParallelLayers) {
    Deployment d = deploy(llama3_8b(), h100(), 2);
    d.engine.lora = qkvo_r16();
    EXPECT_DOUBLE_EQ(lora_gpu_bytes(d, 16).si(), 344064.0 * 32 * 2);
}

// The slots: max_loras × the adapter at max_lora_rank, taken from the KV budget to the byte.
TEST(Lora, ReservedSlotsComeOutOfTheKvBudget) {
    Deployment off = deploy(llama3_8b(), h100());
    Deployment on = off;
    LoraServingConfig c = qkvo_r16();
    c.max_loras = 4;
    c.max_lora_rank = 32;
    on.engine.lora = c;
    EXPECT_DOUBLE_EQ(lora_reserved_bytes(on).si(), 4 * 2 * 27262976.0);
    const MemoryEstimate a = estimate_memory(off);
    const MemoryEstimate b = estimate_memory(on);
    EXPECT_DOUBLE_EQ(b.lora_slots.si(), 4 * 2 * 27262976.0);
    EXPECT_DOUBLE_EQ(a.kv_budget.si() - b.kv_budget.si(), 4 * 2 * 27262976.0);
    EXPECT_EQ(a.lora_slots.si(), 0.0);
    EXPECT_LT(b.kv_blocks, a.kv_blocks);
}

// The batched kernels: 2 × tokens × rank × (in + out) FLOPs per module and layer on one rank,
// each distinct adapter's weights read once. Every other operator is untouched, so the step
// grows by exactly the LoRA operator's time.
TEST(Lora, StepCostAddsOnlyTheLoraOperator) {
    Deployment off = deploy(llama3_8b(), h100());
    Deployment on = off;
    LoraServingConfig c = qkvo_r16();
    c.max_loras = 4;
    on.engine.lora = c;
    const EfficiencyProfile p = default_profile();
    const StepCostModel m_off(off, p);
    const StepCostModel m_on(on, p);
    BatchStats s;
    m_off.add_decodes(s, 10, 1000);
    const StepCost a = m_off.cost(s);
    const StepCost b = m_on.cost(s); // lora_adapters 0: min(max_loras, 10) = 4 adapters
    for (std::size_t i = 0; i < kOpCount; ++i) {
        if (static_cast<Op>(i) != Op::Lora) {
            EXPECT_EQ(a.ops[i], b.ops[i]) << to_string(static_cast<Op>(i));
        }
    }
    EXPECT_EQ(a.op(Op::Lora).time.si(), 0.0);
    const OpCost& l = b.op(Op::Lora);
    EXPECT_DOUBLE_EQ(l.flops.si(), 2.0 * 10 * 13631488.0);
    // Weights: 4 adapters × 13,631,488 elements × 2 bytes; activations per token: Σ over modules
    // and layers of in + 2 out + 2 r = 32 × (12320 + 6176 + 6176 + 12320) = 1,183,744 elements
    // (q: 4096 + 2 × 4096 + 32; k, v: 4096 + 2 × 1024 + 32; o as q).
    EXPECT_DOUBLE_EQ(l.bytes.si(), 4 * 13631488.0 * 2 + 10 * 1183744.0 * 2);
    EXPECT_EQ(l.kernels, 2 * 4 * 32);
    EXPECT_NEAR(b.time.si() - a.time.si(), l.time.si(), 1e-15);
    // A batch with one adapter reads one adapter's weights.
    BatchStats one = s;
    one.lora_adapters = 1;
    EXPECT_DOUBLE_EQ(m_on.cost(one).op(Op::Lora).bytes.si(), 13631488.0 * 2 + 10 * 1183744.0 * 2);
}

// Zipf with s = 1 over 3 adapters: H_3 = 11/6, so 6/11, 3/11, 2/11.
TEST(Lora, ZipfPopularityByHand) {
    LoraServingConfig c = qkvo_r16();
    c.adapters = 3;
    c.popularity = LoraPopularity::Zipf;
    c.zipf_s = 1.0;
    const std::vector<double> p = lora_popularity(c);
    ASSERT_EQ(p.size(), 3U);
    EXPECT_NEAR(p[0], 6.0 / 11, 1e-15);
    EXPECT_NEAR(p[1], 3.0 / 11, 1e-15);
    EXPECT_NEAR(p[2], 2.0 / 11, 1e-15);
    c.popularity = LoraPopularity::Uniform;
    EXPECT_EQ(lora_popularity(c), (std::vector<double>{1.0 / 3, 1.0 / 3, 1.0 / 3}));
}

// Che's approximation: with N equally popular items, N (1 − e^(−T/N)) = C gives a hit rate of
// exactly C / N. With p = (3/4, 1/4) and C = 1, x = e^(−T/4) solves x³ + x = 1 (x =
// 0.6823278038...), and the hit rate is 3/4 (1 − x³) + 1/4 (1 − x) = 1/4 + x/2.
TEST(Lora, CheApproximationAgainstClosedForms) {
    const std::vector<double> uniform(10, 0.1);
    EXPECT_NEAR(lru_hit_rate(uniform, 3), 0.3, 1e-9);
    EXPECT_EQ(lru_hit_rate(uniform, 10), 1.0);
    EXPECT_EQ(lru_hit_rate(uniform, 0), 0.0);
    const std::vector<double> skew{0.75, 0.25};
    const double x = 0.6823278038280193;
    EXPECT_NEAR(lru_hit_rate(skew, 1), 0.25 + x / 2, 1e-9);
}

// The steady-state figures: loads per second = rate × miss rate; the load time is the GPU
// shard over the load bandwidth, the disk time the whole adapter over the disk's.
TEST(Lora, FiguresAtARate) {
    Deployment d = deploy(llama3_8b(), h100());
    LoraServingConfig c = qkvo_r16();
    c.adapters = 10;
    c.max_loras = 3;
    c.max_cpu_loras = 5;
    c.load_bandwidth = BytesPerSecond(25e9);
    c.disk_bandwidth = BytesPerSecond(2e9);
    d.engine.lora = c;
    const LoraFigures f = lora_figures(d, 8.0);
    EXPECT_NEAR(f.gpu_hit_rate, 0.3, 1e-9);
    EXPECT_NEAR(f.cpu_hit_rate, 0.5, 1e-9);
    EXPECT_NEAR(f.loads_per_s, 8.0 * 0.7, 1e-8);
    EXPECT_NEAR(f.disk_loads_per_s, 8.0 * 0.5, 1e-8);
    EXPECT_DOUBLE_EQ(f.load_time.si(), 27262976.0 / 25e9);
    EXPECT_DOUBLE_EQ(f.disk_time.si(), 27262976.0 / 2e9);
    EXPECT_NEAR(f.mean_load_delay.si(), 0.7 * 27262976.0 / 25e9 + 0.5 * 27262976.0 / 2e9, 1e-12);
}

// The serving estimate carries the figures; without the block it carries none.
TEST(Lora, ServingEstimateReportsTheFiguresOnlyWithTheBlock) {
    Deployment d = deploy(llama3_8b(), h100());
    Workload w;
    w.input_tokens = 512;
    w.output_tokens = 128;
    w.concurrency = 16;
    EXPECT_FALSE(estimate_serving(d, w, default_profile()).lora.has_value());
    d.engine.lora = qkvo_r16();
    const ServingEstimate e = estimate_serving(d, w, default_profile());
    ASSERT_TRUE(e.lora.has_value());
    EXPECT_GT(e.lora->loads_per_s, 0.0);
    EXPECT_GT(e.decode_step.op(Op::Lora).time.si(), 0.0);
}

std::string error_of(const LoraServingConfig& c) {
    try {
        validate(c);
    } catch (const InvalidArgument& e) {
        return e.what();
    }
    return "no error";
}

TEST(Lora, ValidationNamesTheKeyAndTheFix) {
    LoraServingConfig c = qkvo_r16();
    c.rank = 32;
    EXPECT_EQ(error_of(c), "engine.lora.rank: 32 is above max_lora_rank 16 (vLLM refuses to load "
                           "such an adapter); raise engine.lora.max_lora_rank");
    c = qkvo_r16();
    c.max_lora_rank = 12;
    EXPECT_NE(error_of(c).find("engine.lora.max_lora_rank: 12 is not a rank vLLM accepts"),
              std::string::npos);
    c = qkvo_r16();
    c.max_loras = 4;
    c.max_cpu_loras = 2;
    EXPECT_NE(error_of(c).find("engine.lora.max_cpu_loras: 2 is below max_loras 4"),
              std::string::npos);
    c = qkvo_r16();
    c.target_modules = {LoraModule::QProj, LoraModule::QProj};
    EXPECT_NE(error_of(c).find("'q_proj' is listed twice"), std::string::npos);
    Deployment mla = deploy(test::deepseek_v3(), h100(), 8);
    mla.engine.lora = qkvo_r16();
    EXPECT_THROW(check_lora_model(mla.model, *mla.engine.lora), InvalidArgument);
}

// vLLM runs no batch naming more than max_loras adapters. With 8 equally popular adapters and 4
// slots, at the median (z = 0) R requests name 8 (1 − (7/8)^R) adapters on average: 4 or fewer
// up to R = ln 0.5 / ln(7/8) = 5.19, so 5 run. At P99 fewer do; with as many slots as adapters
// the KV cache's cap stands.
TEST(Lora, RunningLimitKeepsTheBatchsAdaptersWithinTheSlots) {
    LoraServingConfig c;
    c.adapters = 8;
    c.max_loras = 4;
    c.popularity = LoraPopularity::Uniform;
    EXPECT_EQ(lora_running_limit(c, 50.0, 256), 5);
    const int p99 = lora_running_limit(c, 99.0, 256);
    EXPECT_GE(p99, 4); // 4 requests never name more than 4 adapters
    EXPECT_LT(p99, 5);
    c.max_loras = 8;
    EXPECT_EQ(lora_running_limit(c, 99.0, 256), 256);
    EXPECT_EQ(lora_running_limit(c, 99.0, 3), 3); // never above the cap
}

// The load a request waits for at a percentile: all of the disk read and the copy when more
// than 1 % miss the host cache at P99.
TEST(Lora, LoadDelayAtAPercentileIsTheTierMissedOftenEnough) {
    LoraFigures f;
    f.load_time = Seconds(0.004);
    f.disk_time = Seconds(0.010);
    f.gpu_hit_rate = 0.9;
    f.cpu_hit_rate = 0.995;
    EXPECT_DOUBLE_EQ(lora_load_delay_at(f, 99.0).si(), 0.004); // 10 % miss the slots
    EXPECT_DOUBLE_EQ(lora_load_delay_at(f, 99.9).si(), 0.014); // 0.5 % miss the host too
    f.gpu_hit_rate = 0.999;
    EXPECT_DOUBLE_EQ(lora_load_delay_at(f, 99.0).si(), 0.0);
}

} // namespace
} // namespace gpuplan::model
