/// Serving figures, bottleneck verdicts and what-ifs.

#include "model/serving.hpp"

#include "fixtures.hpp"
#include "model/bottleneck.hpp"
#include "model/error.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace {

using namespace gpuplan;
using namespace gpuplan::model;
using namespace gpuplan::model::test;

Workload workload(int input, int output, int concurrency) {
    Workload w;
    w.input_tokens = input;
    w.output_tokens = output;
    w.concurrency = concurrency;
    return w;
}

/// docs/domain.md §3: Qwen2.5-7B-Instruct-GPTQ-Int4 on an RTX 4090 with --max-model-len 16384
/// --gpu-memory-utilization 0.9 --max-num-seqs 4 --enable-prefix-caching.
Deployment domain_example() {
    Deployment d = deploy(qwen25_7b(), rtx4090());
    d.prec.weights = precision("gptq-int4");
    d.intra_node_link = pcie4();
    d.engine.max_model_len = 16384;
    d.engine.gpu_memory_utilization = 0.9;
    d.engine.max_num_seqs = 4;
    d.engine.enable_prefix_caching = true;
    return d;
}

TEST(Serving, SingleStreamDecodeBoundIsBandwidthOverBytesPerToken) {
    // docs/domain.md §2: 1 TB/s ÷ 14 GB ≈ 71 tokens/s for a "7B FP16" model. Llama-2-7B reads
    // 13.21 GB per token (its 13.48 GB less the embedding table, of which one row is read) plus
    // 1 MiB of KV at context 1: 1e12 / 13.216e9 = 75.7 tokens/s.
    const StepCostModel m(deploy(llama2_7b(), round_gpu()), default_profile());
    const double bound = single_stream_decode_bound(m, 1);
    const double bytes = 2.0 * (6'738'415'616.0 - 32000.0 * 4096 - 65 * 4096) + 2 * 512 * 1024;
    EXPECT_NEAR(bound, 1e12 / bytes, 1e-9);
    EXPECT_NEAR(bound, 75.7, 0.1);
    // The achieved batch-1 rate stays below the bound.
    EXPECT_LT(1.0 / tpot(m, 1, 1).si(), bound);
}

TEST(Serving, MfuAndMbuNeverExceedOneWhateverThePathsOrTheProfile) {
    // fp32 weights on an A100: the GEMMs run at 19.5 TFLOPS (vector fp32), attention on the
    // bf16 path at 312. A 60K-token prompt is mostly attention, so model FLOPs over the fp32
    // peak gave an MFU of 1.39 (issue 18). The denominator is the faster path's peak.
    ModelSpec model = llama3_8b();
    model.max_context = 131072;
    Deployment d = deploy(model, a100_80gb());
    d.gpu.dense.fp32 = FlopsPerSecond(19.5e12);
    d.prec.weights = precision("fp32");
    d.engine.max_model_len = 65536;
    const ServingEstimate e = estimate_serving(d, workload(60000, 128, 1), default_profile());
    EXPECT_NEAR(e.prefill.mfu, e.prefill.model_flops.si() / (312e12 * e.ttft.si()), 1e-12);
    EXPECT_LE(e.prefill.mfu, 1.0);
    EXPECT_GT(e.prefill.mfu, 0.0);

    // A profile claiming plateaus above the datasheet peaks (the loader reads them up to 2):
    // every efficiency is capped at 1, so neither figure can pass 1 either.
    EfficiencyProfile greedy = default_profile();
    greedy.gemm.e_max = 1.6;
    greedy.gemm.m_half = 0.0;
    greedy.gemm_weight_only = {1.9, 0.0};
    greedy.memory = {1.8, 0.0};
    greedy.attention_prefill = {1.7, 0.0};
    greedy.attention_decode = {1.9, 0.0};
    greedy.launch_overhead = Seconds(0);
    greedy.graph_launch_overhead = Seconds(0);
    greedy.step_overhead = Seconds(0);
    for (const char* weights : {"bf16", "fp8", "awq-int4", "fp32"}) {
        Deployment g = deploy(llama3_8b(), h100());
        g.prec.weights = precision(weights);
        for (int concurrency : {1, 64}) {
            const ServingEstimate x = estimate_serving(g, workload(4096, 256, concurrency), greedy);
            for (const PhaseFigures* f : {&x.prefill, &x.decode}) {
                EXPECT_LE(f->mfu, 1.0 + 1e-12) << weights << " at " << concurrency;
                EXPECT_LE(f->mbu, 1.0 + 1e-12) << weights << " at " << concurrency;
            }
        }
    }
}

TEST(Serving, TtftChunksLongPromptsByTheTokenBudget) {
    Deployment d = deploy(llama3_8b(), h100());
    d.engine.max_num_batched_tokens = 2048;
    const StepCostModel chunked(d, default_profile());
    d.engine.enable_chunked_prefill = false;
    d.engine.max_num_batched_tokens.reset();
    const StepCostModel whole(d, default_profile());
    const Seconds a = ttft(chunked, 8000);
    const Seconds b = ttft(whole, 8000);
    // Four chunks re-read the weights and pay four step overheads, but do the same attention.
    EXPECT_GT(a, b);
    EXPECT_LT(a.si(), 1.25 * b.si());
    // Prefill of 8000 tokens ≈ 2 × 7.5e9 × 8000 FLOPs at ~60 % of 989 TFLOPS ≈ 0.2 s.
    EXPECT_GT(b.si(), 0.1);
    EXPECT_LT(b.si(), 0.4);
    // A prefix-cache hit skips most of the work.
    EXPECT_LT(ttft(chunked, 8000, 7000).si(), 0.2 * a.si());
}

TEST(Serving, TtftAndTpotGrowWithTheirArguments) {
    const StepCostModel m(deploy(llama3_8b(), h100()), default_profile());
    Seconds previous(0);
    for (int n = 1; n <= 20000; n += 333) {
        EXPECT_GE(ttft(m, n), previous) << n;
        previous = ttft(m, n);
    }
    EXPECT_LT(tpot(m, 1, 1000), tpot(m, 64, 1000));
    EXPECT_LT(tpot(m, 64, 1000), tpot(m, 64, 8000));
}

TEST(Serving, DomainExampleMaxNumSeqsCapsTheRunningBatch) {
    const Deployment d = domain_example();
    const ServingEstimate e = estimate_serving(d, workload(1024, 256, 16), default_profile());
    EXPECT_TRUE(e.memory.fits);
    EXPECT_EQ(e.running, 4);
    EXPECT_EQ(e.peak_concurrency, 4);
    EXPECT_GT(e.throughput, 0.0);
    // Raising max_num_seqs lets all 16 run, with more output tokens per second.
    Deployment more = d;
    more.engine.max_num_seqs = 32;
    const ServingEstimate f = estimate_serving(more, workload(1024, 256, 16), default_profile());
    EXPECT_EQ(f.running, 16);
    EXPECT_GT(f.throughput, 2.0 * e.throughput);
    EXPECT_GT(f.peak_concurrency, 16);
    EXPECT_GE(f.peak_throughput, f.throughput);
}

TEST(Serving, ThroughputGrowsWithConcurrencyUpToCapacity) {
    const Deployment d = deploy(llama3_8b(), h100());
    double previous = 0;
    for (int n : {1, 2, 4, 8, 16, 32, 64, 128}) {
        const double t = estimate_serving(d, workload(512, 256, n), default_profile()).throughput;
        EXPECT_GT(t, previous) << n;
        previous = t;
    }
}

TEST(Serving, ReplicasMultiplyThroughput) {
    Deployment one = deploy(llama3_8b(), h100());
    Deployment two = one;
    two.par.dp = 2;
    const double a = estimate_serving(one, workload(512, 128, 8), default_profile()).throughput;
    const double b = estimate_serving(two, workload(512, 128, 16), default_profile()).throughput;
    EXPECT_NEAR(b / a, 2.0, 1e-9);
}

TEST(Serving, UtilizationsAreFractionsAndPhasesDiffer) {
    const ServingEstimate e =
        estimate_serving(deploy(llama3_8b(), h100()), workload(4096, 256, 1), default_profile());
    EXPECT_GT(e.prefill.mfu, 0.3);
    EXPECT_LE(e.prefill.mfu, 1.0);
    EXPECT_LT(e.decode.mfu, 0.05);
    EXPECT_GT(e.decode.mbu, 0.5);
    EXPECT_LE(e.decode.mbu, 1.0);
    EXPECT_EQ(e.provenance.kind, ProvenanceKind::SpecSheet);
    EXPECT_DOUBLE_EQ(e.error_band.mape, default_profile().error_band.mape);
}

TEST(Serving, RejectsRequestsLongerThanTheContext) {
    Deployment d = deploy(llama3_8b(), h100());
    EXPECT_THROW((void)estimate_serving(d, workload(8000, 500, 1), default_profile()),
                 InvalidArgument);
    EXPECT_THROW((void)estimate_serving(d, workload(0, 500, 1), default_profile()),
                 InvalidArgument);
    // TensorRT-LLM without chunking cannot schedule a prompt above max_num_tokens (8192).
    Deployment trt = deploy(llama31_70b(), h100(), 8);
    trt.engine.kind = EngineKind::TensorRtLlm;
    EXPECT_THROW((void)estimate_serving(trt, workload(10000, 100, 1), default_profile()),
                 InvalidArgument);
    EXPECT_NO_THROW((void)estimate_serving(trt, workload(8000, 100, 1), default_profile()));
}

TEST(Serving, NotFittingMeansNoThroughput) {
    const ServingEstimate e =
        estimate_serving(deploy(llama31_70b(), h100()), workload(1024, 256, 4), default_profile());
    EXPECT_FALSE(e.memory.fits);
    EXPECT_EQ(e.running, 0);
    EXPECT_EQ(e.throughput, 0.0);
    EXPECT_GT(e.ttft.si(), 0.0); // still estimated, for comparison
}

TEST(Bottleneck, DecodeIsBandwidthBoundAndPrefillComputeBound) {
    const BottleneckReport r =
        find_bottleneck(deploy(llama3_8b(), h100()), workload(4096, 256, 1), default_profile());
    EXPECT_EQ(r.decode.binding, Resource::MemoryBandwidth);
    EXPECT_EQ(r.prefill.binding, Resource::Compute);
    EXPECT_FALSE(r.capacity_binds);
    EXPECT_GT(r.decode.share, 0.5);
    EXPECT_NE(r.decode.detail.find("memory-bandwidth-bound"), std::string::npos) << r.decode.detail;
    EXPECT_NE(r.prefill.detail.find("compute-bound"), std::string::npos) << r.prefill.detail;
}

TEST(Bottleneck, TooMuchTensorParallelismOverPcieIsInterconnectBound) {
    Deployment d = deploy(llama3_8b(), h100(), 8);
    d.intra_node_link = pcie4();
    const BottleneckReport r = find_bottleneck(d, workload(512, 128, 64), default_profile());
    EXPECT_EQ(r.decode.binding, Resource::Interconnect) << r.decode.detail;
}

TEST(Bottleneck, DomainExampleNamesMaxNumSeqs) {
    const BottleneckReport r =
        find_bottleneck(domain_example(), workload(1024, 256, 16), default_profile());
    EXPECT_TRUE(r.capacity_binds);
    EXPECT_EQ(r.decode.binding, Resource::MemoryCapacity);
    EXPECT_NE(r.capacity_detail.find("max_num_seqs 4 caps it"), std::string::npos)
        << r.capacity_detail;
}

TEST(WhatIf, FixesForANonFittingDeploymentRankFirst) {
    Deployment d = deploy(llama31_70b(), h100(), 2);
    d.engine.max_model_len = 16384;
    const GpuCandidate candidates[] = {{h200(), default_profile()}, {h100(), default_profile()}};
    const std::vector<WhatIf> ws =
        what_ifs(d, workload(2048, 512, 8), default_profile(), candidates);
    ASSERT_FALSE(ws.empty());
    EXPECT_TRUE(ws.front().fits) << ws.front().name;
    EXPECT_TRUE(ws.front().applicable);
    const auto find = [&](const std::string& name) {
        return std::find_if(ws.begin(), ws.end(), [&](const WhatIf& w) { return w.name == name; });
    };
    ASSERT_NE(find("tp-x2"), ws.end());
    EXPECT_TRUE(find("tp-x2")->fits);
    ASSERT_NE(find("weights-fp8"), ws.end());
    EXPECT_TRUE(find("weights-fp8")->fits);
    ASSERT_NE(find("gpu:h200-sxm"), ws.end());
    EXPECT_TRUE(find("gpu:h200-sxm")->fits);
    EXPECT_EQ(find("gpu:h100-sxm"), ws.end()); // the same GPU is not a what-if
    // Ranked: applicable ones first, fitting ones before the rest.
    bool seen_not_fitting = false;
    for (const WhatIf& w : ws) {
        if (w.applicable && !w.fits) {
            seen_not_fitting = true;
        }
        if (w.applicable && w.fits) {
            EXPECT_FALSE(seen_not_fitting) << w.name;
        }
    }
}

TEST(WhatIf, DomainExampleRaisingMaxNumSeqsHelpsAndHalvingContextDoesNot) {
    const std::vector<WhatIf> ws =
        what_ifs(domain_example(), workload(1024, 256, 16), default_profile());
    const auto seqs = std::find_if(ws.begin(), ws.end(),
                                   [](const WhatIf& w) { return w.name == "max-num-seqs"; });
    ASSERT_NE(seqs, ws.end());
    EXPECT_GT(seqs->throughput_gain, 2.0);
    const auto half = std::find_if(ws.begin(), ws.end(),
                                   [](const WhatIf& w) { return w.name == "max-model-len-half"; });
    ASSERT_NE(half, ws.end());
    EXPECT_NEAR(half->throughput_gain, 1.0, 0.01); // max_num_seqs still binds
    // Already int4: quantizing further is not applicable, and says so.
    const auto int4 = std::find_if(ws.begin(), ws.end(),
                                   [](const WhatIf& w) { return w.name == "weights-int4"; });
    ASSERT_NE(int4, ws.end());
    EXPECT_FALSE(int4->applicable);
    EXPECT_FALSE(int4->note.empty());
    // Sorted by throughput among the applicable ones.
    for (std::size_t i = 1; i < ws.size(); ++i) {
        if (ws[i].applicable && ws[i - 1].applicable) {
            EXPECT_GE(ws[i - 1].throughput, ws[i].throughput);
        }
    }
}

} // namespace
