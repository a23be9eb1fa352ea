// The training planner against hand calculations, the papers' figures and invariants.
#include "model/training.hpp"

#include "fixtures.hpp"
#include "model/error.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace gpuplan::model {
namespace {

using test::llama_like;

/// GPT-3 175B (Brown et al. 2020, Table 2.1): 96 layers, h 12288, 96 heads, GELU MLP of 4h,
/// learned positions, LayerNorm, biases, tied embeddings, GPT-2 vocabulary.
ModelSpec gpt3() {
    ModelSpec m = llama_like("gpt-3-175b", 96, 12288, 96, 96, 49152, 50257, 2048);
    m.mlp = MlpKind::Plain;
    m.norm = NormKind::LayerNorm;
    m.position = PositionKind::Learned;
    m.linear_bias = true;
    m.tied_embeddings = true;
    m.attention = AttentionKind::Mha;
    return m;
}

/// meta-llama/Llama-2-13b-hf.
ModelSpec llama2_13b() {
    return llama_like("llama-2-13b", 40, 5120, 40, 40, 13824, 32000, 4096);
}

/// A100 SXM 80GB: 312 TFLOPS dense BF16, 2.039 TB/s, 400 W.
AcceleratorSpec a100() {
    AcceleratorSpec g;
    g.name = "a100-sxm-80gb";
    g.vendor = "nvidia";
    g.memory = Bytes(80.0 * kGiB);
    g.memory_bandwidth = BytesPerSecond(2.039e12);
    g.dense.bf16 = FlopsPerSecond(312e12);
    g.dense.fp16 = FlopsPerSecond(312e12);
    g.board_power = Watts(400);
    return g;
}

InterconnectSpec nvlink3() {
    InterconnectSpec l;
    l.name = "nvswitch-nvlink3";
    l.bandwidth_per_direction = BytesPerSecond(300e9);
    l.latency = Seconds(2e-6);
    return l;
}

InterconnectSpec ib_hdr() {
    InterconnectSpec l;
    l.name = "ib-hdr";
    l.bandwidth_per_direction = BytesPerSecond(25e9);
    l.latency = Seconds(5e-6);
    return l;
}

Deployment cluster(const ModelSpec& m, const AcceleratorSpec& g, int gpus) {
    Deployment d;
    d.model = m;
    d.gpu = g;
    d.par.dp = gpus;
    d.intra_node_link = g.name == "h100-sxm" ? test::nvlink4() : nvlink3();
    d.inter_node_link = g.name == "h100-sxm" ? test::ib_ndr() : ib_hdr();
    d.gpus_per_node = 8;
    return d;
}

TrainingLayout layout(int tp, int pp, int dp, int zero, int mb, Recompute rc, bool sp = true) {
    TrainingLayout l;
    l.tp = tp;
    l.pp = pp;
    l.dp = dp;
    l.zero = zero;
    l.micro_batch = mb;
    l.recompute = rc;
    l.sequence_parallel = sp;
    return l;
}

/// Megatron-LM's GPT-3 175B run as Narayanan et al. 2021 §5.1 describe it: 1,024 A100s,
/// batch 1536 × 2048 tokens, 300B tokens, full recomputation, unfused attention, dropout.
TrainingConfig gpt3_run() {
    TrainingConfig c;
    c.tokens = 300e9;
    c.global_batch = 1536;
    c.seq_len = 2048;
    c.layout = layout(8, 16, 8, 0, 1, Recompute::Full, false);
    c.flash_attention = false;
    c.dropout = true;
    c.grad_reduce_overlap = 0.0;
    return c;
}

/// docs/domain.md §3's 13B fine-tune on four GPUs with ZeRO-3.
TrainingConfig thirteen_b(std::optional<double> loader) {
    TrainingConfig c;
    c.tokens = 1e9;
    c.global_batch = 32;
    c.seq_len = 2048;
    c.layout = layout(1, 1, 4, 3, 2, Recompute::Full);
    c.data_loader_tokens_per_s = loader;
    return c;
}

// ---- Hand calculations ----

TEST(TrainingCompute, Gpt3NeedsSixNDFlopsAbout3640PfDays) {
    // 6 × 175e9 × 300e9 = 3.15e23 FLOPs; / (1e15 × 86,400) = 3,646 PF-days (GPT-3 paper: 3,640).
    const Flops c = training_compute(175e9, 300e9);
    EXPECT_DOUBLE_EQ(c.si(), 3.15e23);
    EXPECT_NEAR(pf_days(c), 3640.0, 10.0);
}

TEST(TrainingCompute, OneGpuAt700TflopsNeedsAbout5200Days) {
    // docs/domain.md §3: the article's "over 500 days" is off by 10×.
    const Seconds t = training_compute(175e9, 300e9) / FlopsPerSecond(700e12);
    EXPECT_NEAR(t.si() / 86400.0, 5208.0, 5.0);
}

TEST(TrainingCompute, ModelFlopsFollowKorthikantiFormula) {
    // Korthikanti et al. 2022 §6: 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h)) per step.
    const TrainingModel m(cluster(gpt3(), a100(), 1024), gpt3_run(), default_profile());
    const double B = 1536, s = 2048, l = 96, h = 12288, V = 50257;
    // Model FLOPs count the causal half of the s × s attention product (s(s+1)/2 pairs, the
    // FlashAttention-2 convention), so the paper's s/(6h) becomes (s+1)/(12h).
    const double expected = 72 * B * s * l * h * h * (1 + (s + 1) / (12 * h) + V / (12 * l * h));
    const LayoutResult r = m.evaluate(gpt3_run().layout);
    EXPECT_NEAR(r.model_flops.si() / expected, 1.0, 0.003); // biases and norms are extra
    // Full recomputation adds one forward: 96 instead of 72 (Narayanan et al. 2021 eq. 3); the
    // unfused attention of this run computes the whole square, so hardware FLOPs keep s/(6h).
    const double hw = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
    EXPECT_NEAR(r.hardware_flops.si() / hw, 1.0, 0.003);
}

// Issue 12: HFU 1.197 for Llama-3.1-8B on 64 H100s, tp 8, cp 8, seq_len 524288. At that
// length attention is 90 % of the work; counting the full s × s square as model FLOPs while the
// FlashAttention kernel times only the causal half counted the masked half twice.
TEST(TrainingCompute, LongContextFlopsCountCausalPairsAndUtilizationStaysBelowOne) {
    const Deployment d = cluster(test::llama3_8b(), test::h100(), 64);
    TrainingConfig c;
    c.tokens = 1e9;
    c.global_batch = 8;
    c.seq_len = 524288;
    c.layout = layout(8, 1, 1, 0, 1, Recompute::Full);
    c.layout.cp = 8;
    const TrainingModel m(d, c, default_profile());
    // By hand, per token: 6 × matmul parameters + 3 × causal attention forward.
    //   matmul = 32 layers × (q 4096² + k, v 2 × 4096 × 1024 + o 4096² + MLP 3 × 4096 × 14336
    //            + 2 norms × 4096) + final norm 4096 + LM head 128256 × 4096 = 7,504,924,672
    //   attention forward = 2 × 32 heads × (128 + 128) × 32 layers × (s + 1) / 2
    //                     = 16384 × 32 × 262144.5 = 137,439,215,616
    const double matmul =
        32.0 * (4096.0 * 4096 * 2 + 2.0 * 4096 * 1024 + 3.0 * 4096 * 14336 + 2.0 * 4096) + 4096.0 +
        128256.0 * 4096;
    EXPECT_DOUBLE_EQ(matmul, 7504924672.0);
    const double attention = 2.0 * 32 * 256 * 32 * (524288.0 + 1) / 2;
    EXPECT_DOUBLE_EQ(attention, 137439215616.0);
    EXPECT_NEAR(m.model_flops_per_token() / (6 * matmul + 3 * attention), 1.0, 1e-9);
    const LayoutResult r = m.evaluate(c.layout);
    ASSERT_EQ(r.issue, LayoutIssue::None);
    EXPECT_GT(r.mfu, 0.0);
    EXPECT_LE(r.mfu, r.hfu);
    EXPECT_LE(r.hfu, 1.0);
    // Full recomputation adds one forward (2 × matmul + attention) per token.
    EXPECT_NEAR(r.hardware_flops.si() / r.model_flops.si(),
                (8 * matmul + 4 * attention) / (6 * matmul + 3 * attention), 1e-9);
    // Every layout the search tries at this length stays within the peak.
    SearchOptions o;
    o.top = 1000;
    for (const LayoutResult& x : search_layouts(d, c, default_profile(), o).top) {
        EXPECT_LE(x.hfu, 1.0) << "tp " << x.layout.tp << " cp " << x.layout.cp;
        EXPECT_LE(x.mfu, x.hfu);
    }
}

TEST(TrainingMemory, MixedPrecisionAdamKeepsSixteenBytesPerParameter) {
    EXPECT_DOUBLE_EQ(optimizer_state_bytes(TrainOptimizer::Adam, true), 12.0);
    EXPECT_DOUBLE_EQ(zero_model_states(1e9, 12.0, 0, 1).total().si(), 16e9);
    EXPECT_DOUBLE_EQ(optimizer_state_bytes(TrainOptimizer::Adam8bit, true), 6.0);
    EXPECT_DOUBLE_EQ(optimizer_state_bytes(TrainOptimizer::SgdMomentum, true), 8.0);
    const TrainingEstimate e = estimate_training(cluster(llama2_13b(), a100(), 4),
                                                 thirteen_b(std::nullopt), default_profile());
    EXPECT_DOUBLE_EQ(e.state_bytes_per_param, 16.0);
}

TEST(TrainingMemory, ZeroPaperFiguresForSevenPointFiveBOnSixtyFourGpus) {
    // Rajbhandari et al. 2020, Fig. 1: Ψ = 7.5B, K = 12, Nd = 64.
    const double psi = 7.5e9;
    EXPECT_NEAR(zero_model_states(psi, 12, 0, 64).total().si() / 1e9, 120.0, 0.05);
    EXPECT_NEAR(zero_model_states(psi, 12, 1, 64).total().si() / 1e9, 31.4, 0.05);
    EXPECT_NEAR(zero_model_states(psi, 12, 2, 64).total().si() / 1e9, 16.6, 0.05);
    EXPECT_NEAR(zero_model_states(psi, 12, 3, 64).total().si() / 1e9, 1.9, 0.05);
}

TEST(TrainingMemory, KorthikantiActivationFormulaOnGpt3Layer) {
    // s = 2048, b = 1, h = 12288, a = 96: 5·a·s/h = 80.
    const ModelSpec m = gpt3();
    const double sbh = 2048.0 * 12288.0;
    ActivationShape s;
    s.seq = 2048;
    s.micro_batch = 1;
    s.flash_attention = false;
    s.dropout = true;
    EXPECT_DOUBLE_EQ(activation_bytes_per_layer(m, s).si(), sbh * (34 + 80)); // eq. 1
    s.tp = 8;
    EXPECT_DOUBLE_EQ(activation_bytes_per_layer(m, s).si(),
                     sbh * (10 + 24.0 / 8 + 80.0 / 8)); // eq. 2
    s.sequence_parallel = true;
    EXPECT_DOUBLE_EQ(activation_bytes_per_layer(m, s).si(), sbh / 8 * (34 + 80)); // eq. 4
    s.recompute = Recompute::Selective;
    EXPECT_DOUBLE_EQ(activation_bytes_per_layer(m, s).si(), sbh / 8 * 34); // eq. 5
    s.recompute = Recompute::Full;
    s.sequence_parallel = false;
    EXPECT_DOUBLE_EQ(activation_bytes_per_layer(m, s).si(), 2 * sbh); // §5: 2sbh per layer
    // FlashAttention stores no s² term: like selective, plus a 4-byte log-sum-exp per head.
    s.recompute = Recompute::None;
    s.tp = 1;
    s.flash_attention = true;
    EXPECT_DOUBLE_EQ(activation_bytes_per_layer(m, s).si(), sbh * 34 + 2048.0 * 4 * 96);
}

TEST(TrainingMemory, GeneralFormCountsGqaAndGatedMlp) {
    // Llama-3-8B, FlashAttention, no dropout, per token: norms 4h, GEMM inputs 2h + 2h, Q and K
    // 2(4096 + 1024), V 2·1024, attention output 2·4096, SwiGLU 6·14336, LSE 4·32.
    ActivationShape s;
    s.seq = 4096;
    s.flash_attention = true;
    s.dropout = false;
    const double per_token =
        8 * 4096 + 2 * (4096 + 1024) + 2 * 1024 + 2 * 4096 + 6 * 14336 + 4 * 32;
    EXPECT_DOUBLE_EQ(activation_bytes_per_layer(test::llama3_8b(), s).si(), 4096 * per_token);
}

TEST(TrainingScaling, AmdahlCapsTwentyFoldAtFivePercentSerial) {
    EXPECT_NEAR(amdahl_speedup(0.05, 1e12), 20.0, 1e-6);
    EXPECT_NEAR(amdahl_speedup(0.05, 4), 1 / (0.05 + 0.95 / 4), 1e-12);
    // docs/domain.md §3's 2.6× on 4 GPUs implies s = (4/2.6 − 1)/3 = 0.179, a 5.6× ceiling.
    EXPECT_NEAR(amdahl_serial_fraction(2.6, 4), (4 / 2.6 - 1) / 3, 1e-12);
    EXPECT_NEAR(amdahl_speedup(amdahl_serial_fraction(2.6, 4), 4), 2.6, 1e-9);
}

TEST(TrainingCompute, ChinchillaTwentyTokensPerParameter) {
    const ComputeOptimal c = chinchilla_for_params(70e9);
    EXPECT_DOUBLE_EQ(c.tokens, 1.4e12);
    EXPECT_DOUBLE_EQ(c.compute.si(), 6 * 70e9 * 1.4e12);
    const ComputeOptimal back = chinchilla_for_compute(c.compute);
    EXPECT_NEAR(back.params / 70e9, 1.0, 1e-12);
    EXPECT_NEAR(back.tokens / 1.4e12, 1.0, 1e-12);
}

TEST(TrainingLora, AdaptersCountRankTimesInPlusOut) {
    // Llama-3-8B, rank 16 on all seven linears: q, o 16·8192; k, v 16·5120; gate, up, down
    // 16·18432 per layer; 32 layers = 41,943,040.
    TrainingConfig c;
    c.tokens = 1e6;
    c.global_batch = 16;
    c.seq_len = 2048;
    c.method = FinetuneMethod::Lora;
    c.lora.target_modules = {"all-linear"};
    c.layout = layout(1, 1, 1, 0, 1, Recompute::Full);
    Deployment d = cluster(test::llama3_8b(), test::rtx4090(), 1);
    d.intra_node_link = test::pcie4();
    const TrainingModel lora(d, c, default_profile());
    EXPECT_DOUBLE_EQ(lora.trainable_params(), 41943040.0);
    const LayoutResult r = lora.evaluate(c.layout);
    EXPECT_TRUE(r.fits) << r.memory.total.si() / kGiB;
    // A frozen 16-bit base needs forward and data gradient only: 4 FLOPs per weight and token.
    EXPECT_LT(lora.model_flops_per_token(), 5.0 * lora.params());
    c.method = FinetuneMethod::Qlora;
    const LayoutResult q = TrainingModel(d, c, default_profile()).evaluate(c.layout);
    EXPECT_LT(q.memory.weights.si(), 0.4 * r.memory.weights.si());
    // q_proj and v_proj alone: 16 × ((4096 + 4096) + (4096 + 1024)) × 32 layers = 6,815,744,
    // the widths serving's adapters use (model::lora_module_dims).
    c.lora.target_modules = {"q_proj", "v_proj"};
    EXPECT_DOUBLE_EQ(TrainingModel(d, c, default_profile()).trainable_params(), 6815744.0);
    c.lora.target_modules = {"qkv"};
    try {
        (void)TrainingModel(d, c, default_profile());
        ADD_FAILURE() << "an unknown target module was accepted";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("'qkv'; use q_proj k_proj v_proj o_proj gate_proj "
                                             "up_proj down_proj or all-linear"),
                  std::string::npos)
            << e.what();
    }
}

// ---- Invariants ----

TEST(TrainingInvariants, MoreZeroShardingNeverRaisesMemory) {
    for (const ModelSpec& m : {llama2_13b(), test::llama31_70b(), test::mixtral_8x7b()}) {
        const Deployment d = cluster(m, test::h100(), 16);
        TrainingConfig c = thirteen_b(std::nullopt);
        c.global_batch = 64;
        for (const TrainingLayout base :
             {layout(1, 1, 16, 0, 1, Recompute::Full), layout(2, 1, 8, 0, 2, Recompute::None),
              layout(4, 2, 2, 0, 1, Recompute::Selective)}) {
            const TrainingModel tm(d, c, default_profile());
            double last = 1e300;
            for (int z = 0; z <= (base.pp > 1 ? 1 : 3); ++z) {
                TrainingLayout l = base;
                l.zero = z;
                const LayoutResult r = tm.evaluate(l);
                ASSERT_EQ(r.issue, LayoutIssue::None) << m.name << " zero " << z;
                EXPECT_LE(r.memory.total.si(), last) << m.name << " zero " << z;
                last = r.memory.total.si();
            }
        }
    }
}

TEST(TrainingInvariants, RecomputationLowersMemoryAndRaisesStepTime) {
    const Deployment d = cluster(gpt3(), a100(), 64);
    TrainingConfig c = gpt3_run();
    c.global_batch = 64;
    const TrainingModel tm(d, c, default_profile());
    const auto at = [&](Recompute rc) { return tm.evaluate(layout(8, 8, 1, 0, 1, rc, true)); };
    const LayoutResult none = at(Recompute::None), sel = at(Recompute::Selective),
                       full = at(Recompute::Full);
    EXPECT_GT(none.memory.activations, sel.memory.activations);
    EXPECT_GT(sel.memory.activations, full.memory.activations);
    EXPECT_LT(none.step.total, sel.step.total);
    EXPECT_LT(sel.step.total, full.step.total);
    // Unfused attention computes the masked half of the scores too: HFU > MFU even without
    // recomputation; with FlashAttention and nothing recomputed, HFU = MFU.
    EXPECT_GT(none.hfu, none.mfu);
    EXPECT_GT(full.hfu, full.mfu);
    TrainingConfig flash = c;
    flash.flash_attention = true;
    const LayoutResult fl = TrainingModel(d, flash, default_profile())
                                .evaluate(layout(8, 8, 1, 0, 1, Recompute::None, true));
    EXPECT_LT(fl.hfu - fl.mfu, 1e-12);
}

TEST(TrainingInvariants, PipelineBubbleIsPMinusOneOverMPlusPMinusOne) {
    // Narayanan et al. 2021 §2.2.1: one pipeline, p = 4, m = 8 micro-batches.
    const Deployment d = cluster(llama2_13b(), test::h100(), 4);
    TrainingConfig c = thirteen_b(std::nullopt);
    c.global_batch = 8;
    const TrainingModel tm(d, c, default_profile());
    TrainingLayout l = layout(1, 4, 1, 0, 1, Recompute::None);
    const LayoutResult r = tm.evaluate(l);
    ASSERT_EQ(r.micro_batches, 8);
    const double pipeline = (r.step.compute + r.step.exposed_comm + r.step.bubble).si();
    EXPECT_NEAR(r.step.bubble.si() / pipeline, 3.0 / 11.0, 1e-9);
    // Interleaving with 2 chunks per stage halves the fill and drain (§2.2.2).
    l.virtual_stages = 2;
    const LayoutResult v = tm.evaluate(l);
    ASSERT_EQ(v.issue, LayoutIssue::None);
    EXPECT_NEAR(v.step.bubble / r.step.bubble, 0.5, 0.02);
    // 1F1B holds p − k micro-batches on stage k.
    const auto stages = tm.stage_memory(layout(1, 4, 1, 0, 1, Recompute::None));
    ASSERT_EQ(stages.size(), 4u);
    for (int k = 0; k < 4; ++k) {
        EXPECT_DOUBLE_EQ(stages[static_cast<std::size_t>(k)].in_flight, 4.0 - k);
    }
}

TEST(TrainingInvariants, SlowerClocksSlowTheStep) {
    Deployment d = cluster(llama2_13b(), a100(), 4);
    const TrainingConfig c = thirteen_b(std::nullopt);
    const LayoutResult full = TrainingModel(d, c, default_profile()).evaluate(c.layout);
    d.clocks = ClockFactors{0.6, 0.95};
    const LayoutResult capped = TrainingModel(d, c, default_profile()).evaluate(c.layout);
    EXPECT_GT(capped.step.compute / full.step.compute, 1.5);
    EXPECT_LT(capped.mfu, full.mfu);
}

TEST(TrainingInvariants, InvalidLayoutsNameTheFix) {
    const Deployment d = cluster(gpt3(), a100(), 64);
    TrainingConfig c = gpt3_run();
    c.global_batch = 64;
    c.layout = layout(5, 1, 1, 0, 1, Recompute::Full);
    EXPECT_EQ(TrainingModel(d, c, default_profile()).evaluate(c.layout).issue,
              LayoutIssue::GpuCount);
    c.layout = layout(64, 1, 1, 0, 1, Recompute::Full);
    EXPECT_EQ(TrainingModel(d, c, default_profile()).evaluate(c.layout).issue, LayoutIssue::Heads);
    c.layout = layout(8, 2, 4, 3, 1, Recompute::Full);
    EXPECT_EQ(TrainingModel(d, c, default_profile()).evaluate(c.layout).issue,
              LayoutIssue::ZeroPipeline);
    try {
        (void)estimate_training(d, c, default_profile());
        FAIL() << "expected InvalidArgument";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("pipeline parallelism"), std::string::npos)
            << e.what();
    }
    Deployment one_node = d;
    one_node.inter_node_link.reset();
    c.layout = layout(8, 1, 8, 1, 1, Recompute::Full);
    EXPECT_EQ(TrainingModel(one_node, c, default_profile()).evaluate(c.layout).issue,
              LayoutIssue::NoInterNodeLink);
}

// ---- Search ----

TEST(TrainingSearch, ReturnsOnlyFittingLayoutsSortedByTime) {
    const Deployment d = cluster(test::llama31_70b(), test::h100(), 16);
    TrainingConfig c;
    c.tokens = 2e9;
    c.global_batch = 64;
    c.seq_len = 4096;
    SearchOptions o;
    o.top = 8;
    const SearchResult s = search_layouts(d, c, default_profile(), o);
    ASSERT_FALSE(s.top.empty());
    EXPECT_LE(s.top.size(), 8u);
    EXPECT_EQ(s.enumerated, s.fitting + s.not_fitting + s.invalid);
    EXPECT_GT(s.not_fitting, 0);
    for (std::size_t i = 0; i < s.top.size(); ++i) {
        EXPECT_EQ(s.top[i].issue, LayoutIssue::None);
        EXPECT_TRUE(s.top[i].fits);
        EXPECT_LE(s.top[i].memory.total, s.top[i].memory.capacity);
        if (i > 0) {
            EXPECT_LE(s.top[i - 1].time_to_train, s.top[i].time_to_train);
        }
    }
    EXPECT_NE(s.why.find("wins"), std::string::npos) << s.why;
    // Pinning a dimension keeps it.
    o.tp = 8;
    for (const LayoutResult& r : search_layouts(d, c, default_profile(), o).top) {
        EXPECT_EQ(r.layout.tp, 8);
    }
    // Ranking by cost needs a price.
    o.rank_by = RankBy::Cost;
    EXPECT_THROW((void)search_layouts(d, c, default_profile(), o), InvalidArgument);
}

TEST(TrainingSearch, SaysWhyWhenNothingFits) {
    // 70B full fine-tune on two 80 GiB GPUs: 1.13 TB of model states.
    const Deployment d = cluster(test::llama31_70b(), test::h100(), 2);
    TrainingConfig c;
    c.tokens = 1e9;
    c.global_batch = 8;
    c.seq_len = 4096;
    const SearchResult s = search_layouts(d, c, default_profile(), SearchOptions{});
    EXPECT_TRUE(s.top.empty());
    ASSERT_TRUE(s.closest_miss.has_value());
    EXPECT_NE(s.why.find("no layout fits"), std::string::npos) << s.why;
}

// ---- docs/domain.md's cases and published runs ----

TEST(TrainingCases, ThirteenBWithSlowInputScalesTwoPointSixOnFourGpus) {
    const Deployment d = cluster(llama2_13b(), a100(), 4);
    const TrainingEstimate slow = estimate_training(d, thirteen_b(5000.0), default_profile());
    EXPECT_NEAR(slow.speedup, 2.6, 0.1);
    EXPECT_NEAR(slow.scaling_efficiency, 0.65, 0.03);
    EXPECT_GT(slow.result.step.input_stall.si(), 0.0);
    EXPECT_DOUBLE_EQ(slow.result.tokens_per_s, 5000.0); // input-bound: the loader's rate
    // The GPUs themselves scale almost linearly here (ZeRO-3 over NVLink).
    const TrainingEstimate fast = estimate_training(d, thirteen_b(std::nullopt), default_profile());
    EXPECT_GT(fast.speedup, 3.5);
    EXPECT_DOUBLE_EQ(fast.result.step.input_stall.si(), 0.0);
}

TEST(TrainingCases, Gpt3On1024A100sMatchesMegatronWithinTenPercent) {
    // Narayanan et al. 2021 §5.1: 140 TFLOP/s per GPU (recomputation counted, 44.9 % of the
    // 312 TFLOPS peak) and about 34 days for 300B tokens.
    const TrainingEstimate e =
        estimate_training(cluster(gpt3(), a100(), 1024), gpt3_run(), default_profile());
    ASSERT_TRUE(e.result.fits);
    EXPECT_NEAR(e.result.hfu * 312.0 / 140.0, 1.0, 0.10);
    EXPECT_NEAR(e.result.time_to_train.si() / 86400.0 / 34.0, 1.0, 0.10);
    EXPECT_NEAR(e.total_flops.si() / 3.15e23, 1.0, 0.05); // 6ND plus attention and LM head
}

TEST(TrainingCases, Gpt3On64A100sMatchesKorthikantiWithinFifteenPercent) {
    // Korthikanti et al. 2022, Table 5: 175B, tp 8, pp 8, batch 64: 13.75 s per iteration with
    // selective recomputation and sequence parallelism (MFU 51.4 %), 18.13 s with full.
    const Deployment d = cluster(gpt3(), a100(), 64);
    TrainingConfig c = gpt3_run();
    c.global_batch = 64;
    c.layout = layout(8, 8, 1, 0, 1, Recompute::Selective, true);
    const LayoutResult sel = TrainingModel(d, c, default_profile()).evaluate(c.layout);
    EXPECT_NEAR(sel.step.total.si() / 13.75, 1.0, 0.15);
    c.layout = layout(8, 8, 1, 0, 1, Recompute::Full, false);
    const LayoutResult full = TrainingModel(d, c, default_profile()).evaluate(c.layout);
    EXPECT_NEAR(full.step.total.si() / 18.13, 1.0, 0.15);
}

TEST(TrainingCases, EnergyUsesThePowerModelOrAGivenAverage) {
    const Deployment d = cluster(llama2_13b(), a100(), 4);
    TrainingConfig c = thirteen_b(std::nullopt);
    const TrainingEstimate e = estimate_training(d, c, default_profile());
    EXPECT_EQ(e.power_basis, "power-model");
    ASSERT_TRUE(e.energy_kwh.has_value());
    EXPECT_GT(e.result.average_gpu_power.si(), 0.2 * 400);
    EXPECT_LE(e.result.average_gpu_power.si(), 400.0 + 1e-9);
    c.average_gpu_power = Watts(300);
    TrainingCostInputs prices;
    prices.gpu_hour = Price{Money{2.0, "USD"}, PriceBasis::Hour};
    prices.electricity = Price{Money{0.10, "USD"}, PriceBasis::KilowattHour};
    prices.pue = 1.5;
    const TrainingEstimate g = estimate_training(d, c, default_profile(), prices);
    EXPECT_EQ(g.power_basis, "given");
    // kWh = GPUs × 300 W × time; facility × 1.5; rent = GPU-hours × $2.
    const double hours = g.result.time_to_train.si() / 3600.0;
    EXPECT_NEAR(*g.energy_kwh, 4 * 0.3 * hours, 1e-9 * hours);
    EXPECT_NEAR(*g.facility_energy_kwh, 1.5 * 4 * 0.3 * hours, 1e-9 * hours);
    EXPECT_NEAR(g.rent_cost->amount, 2.0 * g.result.gpu_hours, 1e-9 * g.result.gpu_hours);
    EXPECT_NEAR(g.energy_cost->amount, 0.10 * *g.facility_energy_kwh, 1e-9 * hours);
}

TEST(TrainingCases, APowerLimitSlowsTheStepAndHoldsTheBusyPower) {
    // docs/domain.md §5's rack that tripped its PDU: capped GPUs, a longer run.
    const Deployment d = cluster(llama2_13b(), a100(), 4);
    const TrainingConfig c = thirteen_b(std::nullopt);
    const TrainingEstimate free = estimate_training(d, c, default_profile());
    TrainingCostInputs capped;
    capped.gpu_power_limit = Watts(200);
    const TrainingEstimate e = estimate_training(d, c, default_profile(), capped);
    EXPECT_LT(e.clock, 1.0);
    EXPECT_GT(e.power_slowdown, 1.2);
    EXPECT_NEAR(e.result.step.total / free.result.step.total, e.power_slowdown, 1e-9);
    EXPECT_LE(e.result.busy_gpu_power.si(), 200.0 + 1e-6);
    EXPECT_GT(free.result.busy_gpu_power.si(), 200.0);
    EXPECT_LT(e.result.energy, free.result.energy); // slower clocks spend less per operation
    // A limit above the busy power changes nothing.
    capped.gpu_power_limit = Watts(1000);
    EXPECT_DOUBLE_EQ(estimate_training(d, c, default_profile(), capped).clock, 1.0);
}

// Issue 18 item 4: training in bf16 on a GPU without bf16 peaks (a V100) is refused with fp16 as
// the alternative, by the same rule (model::check_compute_path) serving formats use.
TEST(TrainingCompute, Bf16OnAGpuWithoutBf16IsRefusedWithFp16AsTheFix) {
    AcceleratorSpec v100 = test::h100();
    v100.name = "v100-like";
    v100.dense.bf16.reset();
    v100.dense.fp8.reset();
    Deployment d = cluster(test::llama3_8b(), v100, 8);
    d.prec.activations = parse_precision("fp16");
    d.prec.weights = parse_precision("fp16");
    d.prec.kv_cache = parse_precision("fp16");
    TrainingConfig c;
    c.tokens = 1e9;
    c.global_batch = 8;
    c.seq_len = 2048;
    c.layout = layout(8, 1, 1, 0, 1, Recompute::None);
    c.compute = ComputeType::Bf16;
    try {
        const TrainingModel m(d, c, default_profile());
        FAIL() << "bf16 training accepted on a GPU without bf16";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(std::string(e.what()), "training compute bf16 on v100-like: the GPU has no bf16 "
                                         "peak; use fp16 (the GPU has fp16 peaks)");
    }
    c.compute = ComputeType::Fp16;
    EXPECT_NO_THROW((void)TrainingModel(d, c, default_profile()));
}

} // namespace
} // namespace gpuplan::model
