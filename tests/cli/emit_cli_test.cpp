// `--emit vllm|sglang|tensorrt-llm|llama.cpp` on estimate, compare, plan and diagnose: every flag
// is one the engine documents (the lists below are transcribed from the sources cli/emit.hpp
// cites), and each setting of the scenario becomes the flag and value written by hand here.
#include "tests/support/run_cli.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using gpuplan::test::run_cli;

std::string fx(const std::string& name) {
    return std::string(GPUPLAN_SOURCE_DIR) + "/tests/fixtures/" + name;
}

// vLLM engine arguments (docs.vllm.ai configuration/engine_args) and `vllm bench serve`.
const std::set<std::string> kVllm{"--tensor-parallel-size",   "--pipeline-parallel-size",
                                  "--data-parallel-size",     "--enable-expert-parallel",
                                  "--max-model-len",          "--gpu-memory-utilization",
                                  "--max-num-seqs",           "--max-num-batched-tokens",
                                  "--enable-chunked-prefill", "--no-enable-chunked-prefill",
                                  "--enable-prefix-caching",  "--no-enable-prefix-caching",
                                  "--quantization",           "--dtype",
                                  "--kv-cache-dtype",         "--enforce-eager"};
const std::set<std::string> kBench{"--backend", "--base-url", "--model", "--dataset-name",
                                   "--random-input-len", "--random-output-len", "--max-concurrency",
                                   "--request-rate", "--num-prompts", "--ignore-eos",
                                   "--save-result",
                                   // the workload's shape (docs/emit.md "The benchmark")
                                   "--random-prefix-len", "--random-range-ratio", "--burstiness"};
// SGLang python/sglang/srt/server_args.py (sgl-project/sglang at 469c63e5).
const std::set<std::string> kSglang{"--model-path", "--tp-size", "--pp-size", "--dp-size",
                                    "--ep-size", "--context-length", "--mem-fraction-static",
                                    "--max-running-requests", "--chunked-prefill-size",
                                    "--page-size", "--disable-radix-cache", "--quantization",
                                    "--dtype", "--kv-cache-dtype", "--disable-cuda-graph",
                                    // ServerArgs schedule_policy, schedule_conservativeness
                                    "--schedule-policy", "--schedule-conservativeness"};
// trtllm-serve, tensorrt_llm/commands/serve.py (NVIDIA/TensorRT-LLM at 00209af1).
const std::set<std::string> kTrt{"--backend", "--tp_size", "--pp_size", "--ep_size",
                                 "--max_batch_size", "--max_num_tokens", "--max_seq_len",
                                 "--kv_cache_free_gpu_memory_fraction", "--enable_chunked_prefill",
                                 // --config's older name, accepted by every release since 0.17
                                 // (tensorrt_llm/commands/serve.py at 4c05a748)
                                 "--extra_llm_api_options"};
// llama-server, tools/server/README.md (ggml-org/llama.cpp at 00dc8057).
const std::set<std::string> kLlama{"-m", "-c", "-ngl", "-np", "-b", "-ub", "-sm", "-ctk", "-ctv"};

/// Every option of a command line (tokens that start with '-' and are not numbers).
std::vector<std::string> flags_of(const std::string& cmd) {
    std::istringstream in(cmd);
    std::vector<std::string> out;
    for (std::string t; in >> t;) {
        if (t.size() > 1 && t[0] == '-' && !std::isdigit(static_cast<unsigned char>(t[1])))
            out.push_back(t);
    }
    return out;
}

void expect_documented(const std::string& cmd, const std::set<std::string>& known) {
    for (const auto& f : flags_of(cmd))
        EXPECT_TRUE(known.count(f)) << f << " is not a documented flag in: " << cmd;
}

nlohmann::json emit_of(const std::string& args) {
    const auto r = run_cli(args + " --json");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return nlohmann::json::parse(r.out)["emit"];
}

const std::string k70b = "estimate " + fx("emit/llama70b-4xh100-fp8.yaml");

TEST(EmitCli, VllmFromEstimate) {
    const auto j = emit_of(k70b + " --emit vllm");
    const std::string c = j["command"];
    expect_documented(c, kVllm);
    // The scenario: tp 2 over 4 GPUs (2 replicas), fp8 weights and KV, every setting given. The
    // fp8 weights are the catalog's FP8 checkpoint of Llama-3.1-70B
    // (hwdb/models/llama-3.1-70b.yaml checkpoints.fp8), which names its quantization in its
    // config.json: no --quantization, so vLLM picks the kernel itself.
    EXPECT_EQ(c, "vllm serve nvidia/Llama-3.1-70B-Instruct-FP8 --tensor-parallel-size 2 "
                 "--data-parallel-size 2 --max-model-len 8192 --gpu-memory-utilization 0.92 "
                 "--max-num-seqs 128 --max-num-batched-tokens 4096 --enable-chunked-prefill "
                 "--no-enable-prefix-caching --kv-cache-dtype fp8");
    const std::string b = j["benchmark"];
    expect_documented(b, kBench);
    // 64 clients × 10 prompts, 2048 + 512 tokens.
    EXPECT_EQ(b, "vllm bench serve --backend vllm --model nvidia/Llama-3.1-70B-Instruct-FP8 "
                 "--dataset-name "
                 "random --random-input-len 2048 --random-output-len 512 --max-concurrency 64 "
                 "--num-prompts 640 --ignore-eos --save-result");
    EXPECT_TRUE(j["notes"].empty());
}

TEST(EmitCli, SglangFromEstimate) {
    const auto j = emit_of(k70b + " --emit sglang");
    const std::string c = j["command"];
    expect_documented(c.substr(c.find("sglang.launch_server")), kSglang); // after `python -m`
    for (const char* part :
         {"python -m sglang.launch_server --model-path nvidia/Llama-3.1-70B-Instruct-FP8",
          "--tp-size 2", "--dp-size 2", "--context-length 8192", "--max-running-requests 128",
          "--chunked-prefill-size 4096", "--disable-radix-cache", "--kv-cache-dtype fp8_e4m3",
          "--mem-fraction-static 0."}) {
        EXPECT_NE(c.find(part), std::string::npos) << part << " in " << c;
    }
    EXPECT_EQ(c.find("--quantization"), std::string::npos) << c;
    // SGLang serves on port 30000: the benchmark talks to it as an OpenAI server.
    EXPECT_NE(j["benchmark"].get<std::string>().find(
                  "--backend openai --base-url http://localhost:30000"),
              std::string::npos);
    expect_documented(j["benchmark"], kBench);
    ASSERT_EQ(j["notes"].size(), 1u);
    EXPECT_NE(j["notes"][0].get<std::string>().find("the scenario models vllm"), std::string::npos);
}

TEST(EmitCli, TensorRtLlmFromEstimate) {
    const auto j = emit_of(k70b + " --emit tensorrt-llm");
    const std::string c = j["command"];
    expect_documented(c, kTrt);
    // The limits are the estimate's (vLLM's chunked prefill on), and the fp8 KV cache and the
    // prefix cache turned off, which trtllm-serve has no flags for, go in the LLM API options
    // file (KvCacheConfig.dtype and enable_block_reuse).
    EXPECT_EQ(c, "printf '%s\\n' kv_cache_config: '  dtype: fp8' '  enable_block_reuse: false' > "
                 "trtllm-extra-options.yaml && trtllm-serve nvidia/Llama-3.1-70B-Instruct-FP8 "
                 "--backend pytorch --tp_size 2 --pp_size 1 --max_batch_size 128 --max_num_tokens "
                 "4096 --max_seq_len 8192 --kv_cache_free_gpu_memory_fraction 0.9 "
                 "--enable_chunked_prefill --extra_llm_api_options trtllm-extra-options.yaml");
    const std::string notes = j["notes"].dump();
    EXPECT_NE(notes.find("start 2 of them"), std::string::npos) << notes; // dp 2
}

TEST(EmitCli, LlamaCppFromEstimate) {
    // A llama.cpp scenario: 4 slots of 4096 tokens are -c 16384 -np 4; Q8_0 KV cache.
    const auto j =
        emit_of("estimate " + fx("emit/llama8b-rtx4090-llamacpp.yaml") + " --emit llama.cpp");
    const std::string c = j["command"];
    expect_documented(c, kLlama);
    EXPECT_EQ(c, "llama-server -m llama-3.1-8b-q4_k_m.gguf -c 16384 -ngl 999 -np 4 -b 2048 -ub "
                 "512 -ctk q8_0 -ctv q8_0");
    EXPECT_NE(j["benchmark"].get<std::string>().find("--base-url http://localhost:8080"),
              std::string::npos);
    // From the vLLM scenario: GGUF has no fp8 weights, so llama.cpp would run another model
    // than the one estimated: refused, naming the setting.
    const auto k = emit_of(k70b + " --emit llama.cpp");
    EXPECT_TRUE(k["command"].is_null());
    ASSERT_FALSE(k["refused"].empty());
    EXPECT_EQ(k["refused"][0].get<std::string>().rfind(
                  "precision.weights: llama.cpp loads GGUF files, which have no fp8 weights", 0),
              0u)
        << k["refused"].dump();
}

TEST(EmitCli, CompareGivesEachConfigurationItsCommands) {
    const auto r = run_cli("compare " + fx("emit/llama70b-4xh100-fp8.yaml") +
                           " --with h200-sxm:2 --emit vllm --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j.size(), 2u);
    EXPECT_NE(j[0]["emit"]["command"].get<std::string>().find("--data-parallel-size 2"),
              std::string::npos);
    // --with h200-sxm:2: one replica over both GPUs.
    const std::string second = j[1]["emit"]["command"];
    EXPECT_NE(second.find("--tensor-parallel-size 2"), std::string::npos) << second;
    EXPECT_EQ(second.find("--data-parallel-size"), std::string::npos) << second;
    const auto t = run_cli("compare " + fx("emit/llama70b-4xh100-fp8.yaml") +
                           " --with h200-sxm:2 --emit sglang");
    ASSERT_EQ(t.exit_code, 0) << t.out;
    // The label names the layout (issue 37): two GPUs as one TP2 replica.
    EXPECT_NE(t.out.find("2x-h200-sxm-tp2:\n  launch (sglang):"), std::string::npos) << t.out;
}

TEST(EmitCli, PlanEmitsTheChosenConfiguration) {
    const auto r = run_cli("plan " + std::string(GPUPLAN_SOURCE_DIR) +
                           "/examples/plan-search.yaml --threads 2 --emit vllm --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_TRUE(j["found"].get<bool>());
    const auto& top = j["ranked"][0];
    const std::string c = j["emit"]["command"];
    expect_documented(c, kVllm);
    // The first ranked row's layout, precisions and engine limit become the flags.
    EXPECT_NE(c.find("--tensor-parallel-size " + std::to_string(top["tp"].get<int>())),
              std::string::npos)
        << c << "\n"
        << top.dump();
    EXPECT_NE(c.find("--max-num-seqs " + std::to_string(top["max_num_seqs"].get<int>())),
              std::string::npos)
        << c << "\n"
        << top.dump();
    expect_documented(j["emit"]["benchmark"], kBench);
}

TEST(EmitCli, DiagnoseEmitsEveryEngineAndUnknownEnginesExitTwo) {
    const std::string d = "diagnose " + fx("diagnose/kv-full-8b-h100.yaml") + " --metrics " +
                          fx("diagnose/kv-full-scrape-1.prom") + " --metrics " +
                          fx("diagnose/kv-full-scrape-2.prom") + " --interval 60";
    const auto j = emit_of(d + " --emit sglang");
    // The first fix (gpu_memory_utilization 0.50 → 0.95) applied, as SGLang's flags.
    EXPECT_NE(j["command"].get<std::string>().find("python -m sglang.launch_server"),
              std::string::npos);
    EXPECT_EQ(j["applies"], "kv-cache-full: gpu_memory_utilization 0.50 → 0.95");
    for (const std::string& cmd :
         {k70b, "compare " + fx("emit/llama70b-4xh100-fp8.yaml") + " --with h200-sxm:2", d}) {
        const auto r = run_cli(cmd + " --emit tgi");
        EXPECT_EQ(r.exit_code, 2) << cmd;
        EXPECT_NE(r.out.find("vllm, sglang, tensorrt-llm or llama.cpp"), std::string::npos)
            << r.out;
    }
}

} // namespace

namespace {

const std::string kLongOutput =
    std::string(GPUPLAN_SOURCE_DIR) + "/examples/simulate-trtllm-llama70b-long-output.yaml";

} // namespace

// The example leaves max_num_seqs and max_num_batched_tokens unset: trtllm-bench's heuristic
// (tuning.py) for Llama-3.1-70B on 4 x H100 (79.2 GiB each), 1,024 + 4,096 tokens, by hand:
// 0.95 x (4 x 79.2 - 131.42) GiB / (327,680 B x 5,120 = 1.5625 GiB) = 112.7 requests ->
// max_batch_size max(64, 32 x 4) = 128; 112.7 x 1.25 = 141 tokens -> the 2,048 floor; chunked
// context on, as trtllm-bench runs.
TEST(EmitCli, TensorRtLlmTakesTrtllmBenchDefaults) {
    const auto j = emit_of("estimate " + kLongOutput + " --emit tensorrt-llm");
    const std::string c = j["command"];
    expect_documented(c, kTrt);
    EXPECT_EQ(c, "trtllm-serve meta-llama/Llama-3.1-70B --backend pytorch --tp_size 4 --pp_size 1 "
                 "--max_batch_size 128 --max_num_tokens 2048 --max_seq_len 8192 "
                 "--kv_cache_free_gpu_memory_fraction 0.9 --enable_chunked_prefill");
    // What the scenario sets is kept.
    const auto k = emit_of("estimate " + kLongOutput +
                           " --set engine.max_num_seqs=96 --set engine.enable_chunked_prefill=false"
                           " --emit tensorrt-llm");
    const std::string kc = k["command"];
    EXPECT_NE(kc.find("--max_batch_size 96 --max_num_tokens 2048 "), std::string::npos) << kc;
    EXPECT_EQ(kc.find("--enable_chunked_prefill"), std::string::npos) << kc;
}

TEST(EmitCli, TensorRtLlmCapacitySchedulerGoesInTheOptionsYaml) {
    const auto j = emit_of("estimate " + kLongOutput +
                           " --set engine.capacity_scheduler=max_utilization --emit tensorrt-llm");
    const std::string c = j["command"];
    expect_documented(c, kTrt);
    EXPECT_EQ(c,
              "printf '%s\\n' scheduler_config: '  capacity_scheduler_policy: MAX_UTILIZATION' > "
              "trtllm-extra-options.yaml && trtllm-serve meta-llama/Llama-3.1-70B --backend "
              "pytorch --tp_size 4 --pp_size 1 --max_batch_size 128 --max_num_tokens 2048 "
              "--max_seq_len 8192 --kv_cache_free_gpu_memory_fraction 0.9 "
              "--enable_chunked_prefill --extra_llm_api_options trtllm-extra-options.yaml");
    // GUARANTEED_NO_EVICT is TensorRT-LLM's default: no options file.
    const auto d =
        emit_of("estimate " + kLongOutput +
                " --set engine.capacity_scheduler=guaranteed_no_evict --emit tensorrt-llm");
    EXPECT_EQ(d["command"].get<std::string>().find("extra_llm_api_options"), std::string::npos);
}

TEST(EmitCli, SglangSchedulePolicyAndConservativeness) {
    const auto j = emit_of(k70b + " --set engine.kind=sglang --set engine.schedule_policy=lpm" +
                           " --set engine.schedule_conservativeness=0.3 --emit sglang");
    const std::string c = j["command"];
    expect_documented(c.substr(c.find("sglang.launch_server")), kSglang);
    EXPECT_NE(c.find(" --schedule-policy lpm --schedule-conservativeness 0.3"), std::string::npos)
        << c;
    // SGLang's defaults (fcfs, 1) are not written out.
    const auto d = emit_of(k70b + " --set engine.kind=sglang --emit sglang");
    EXPECT_EQ(d["command"].get<std::string>().find("--schedule-"), std::string::npos);
}

// estimate prints the resolved TensorRT-LLM limits beside the other engine defaults.
TEST(EmitCli, EstimateShowsTheTrtllmBenchLimits) {
    const auto r = run_cli("estimate " + kLongOutput);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("engine limits        max_batch_size 128, max_num_tokens 2048, chunked "
                         "context on"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("(max_num_seqs 128)"), std::string::npos) << r.out;
    const auto v = run_cli("estimate " + kLongOutput + " --set engine.kind=vllm");
    EXPECT_EQ(v.exit_code, 0) << v.out;
    EXPECT_EQ(v.out.find("engine limits"), std::string::npos) << v.out;
}

// The reproductions of issue 31: the commands launch the checkpoint and layout estimated, or say
// why they cannot.
namespace {

/// The emit object of a --json run whose resolver note (stderr) comes before the JSON.
nlohmann::json emit_after_notes(const std::string& args) {
    const auto r = run_cli(args + " --json");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return nlohmann::json::parse(r.out.substr(r.out.find('{')))["emit"];
}

std::string cmd_of(const std::string& args) {
    const auto j = emit_after_notes(args);
    EXPECT_TRUE(j["refused"].empty()) << j.dump();
    return j["command"].is_null() ? std::string() : j["command"].get<std::string>();
}

TEST(EmitReproductions, TheHubIdTheUserGaveIsLaunchedWithoutForcingTheKernel) {
    // The AWQ checkpoint, not the bf16 base; no --quantization awq (vLLM then picks
    // awq_marlin itself).
    const std::string awq =
        cmd_of("estimate --model Qwen/Qwen2.5-72B-Instruct-AWQ --gpu h100-sxm --emit vllm");
    EXPECT_EQ(awq.rfind("vllm serve Qwen/Qwen2.5-72B-Instruct-AWQ --tensor-parallel-size 1 ", 0),
              0u)
        << awq;
    EXPECT_EQ(awq.find("--quantization"), std::string::npos) << awq;
    // (131072 tokens of context do not fit under SGLang's own memory arithmetic: 8192 do.)
    const std::string sg = cmd_of("estimate --model Qwen/Qwen2.5-72B-Instruct-AWQ --gpu h100-sxm "
                                  "--max-model-len 8192 --emit sglang");
    EXPECT_NE(sg.find("--model-path Qwen/Qwen2.5-72B-Instruct-AWQ "), std::string::npos) << sg;
    EXPECT_EQ(sg.find("--quantization"), std::string::npos) << sg;
    // NVIDIA's FP8 checkpoint, not online quantization of Meta's bf16 one.
    const std::string fp8 = cmd_of(
        "estimate --model nvidia/Llama-3.1-70B-Instruct-FP8 --gpu h100-sxm --tp 2 --emit vllm");
    EXPECT_EQ(fp8.rfind("vllm serve nvidia/Llama-3.1-70B-Instruct-FP8 ", 0), 0u) << fp8;
    EXPECT_EQ(fp8.find("--quantization"), std::string::npos) << fp8;
}

TEST(EmitReproductions, AttentionDataParallelWithExpertParallelismLaunches) {
    const std::string ex =
        "estimate " + std::string(GPUPLAN_SOURCE_DIR) + "/examples/moe-qwen3-235b-ep-h200.yaml";
    // vLLM: dp 8 with expert parallel over all 8 ranks, dual-batch overlap as estimated.
    const std::string v = cmd_of(ex + " --emit vllm");
    for (const char* part : {"--tensor-parallel-size 1", "--data-parallel-size 8",
                             "--enable-expert-parallel", "--enable-dbo"}) {
        EXPECT_NE(v.find(part), std::string::npos) << part << " in " << v;
    }
    // SGLang counts the attention groups in its tp size (tp divisible by ep).
    const std::string s = cmd_of(ex + " --emit sglang");
    EXPECT_NE(s.find("--tp-size 8 --dp-size 8 --enable-dp-attention --ep-size 8"),
              std::string::npos)
        << s;
    EXPECT_NE(s.find("--enable-two-batch-overlap"), std::string::npos) << s;
    // TensorRT-LLM: tp 8 = moe_tp 1 x moe_ep 8 with attention dp; its overlap is not written.
    const auto t = emit_of(ex + " --emit tensorrt-llm");
    ASSERT_EQ(t["refused"].size(), 1u) << t.dump();
    EXPECT_EQ(t["refused"][0].get<std::string>().rfind("engine.ep_overlap: ", 0), 0u);
    const auto t0 = emit_of(ex + " --set engine.ep_overlap=0 --emit tensorrt-llm");
    const std::string tc = t0["command"];
    EXPECT_NE(tc.find("enable_attention_dp: true"), std::string::npos) << tc;
    EXPECT_NE(tc.find("--tp_size 8 --pp_size 1 --ep_size 8"), std::string::npos) << tc;
    // llama.cpp: no expert parallelism; each server would hold the whole 470 GB model.
    const auto l = emit_of(ex + " --emit llama.cpp");
    EXPECT_TRUE(l["command"].is_null());
    EXPECT_NE(l["refused"].dump().find("hardware.ep: llama.cpp has no expert parallelism"),
              std::string::npos)
        << l.dump();
}

TEST(EmitReproductions, EngineAndHardwareRules) {
    // TensorRT-LLM runs on NVIDIA GPUs only.
    const auto amd = emit_of("estimate --model llama-3.1-8b --gpu mi300x --emit tensorrt-llm");
    EXPECT_TRUE(amd["command"].is_null());
    EXPECT_NE(
        amd["refused"].dump().find("hardware.accelerator: tensorrt-llm does not run on mi300x"),
        std::string::npos)
        << amd.dump();
    // A TPU v5e has no fp8 units.
    const auto tpu =
        emit_of("estimate --model llama-3.1-8b --gpu tpu-v5e --weights fp8 --emit vllm");
    EXPECT_TRUE(tpu["command"].is_null());
    EXPECT_NE(tpu["refused"].dump().find("precision.weights: fp8 weights need fp8 tensor cores"),
              std::string::npos)
        << tpu.dump();
    // GGUF Q4_K_M weights are not launched as bf16 on vLLM.
    const auto gguf =
        emit_of("estimate " + fx("emit/llama8b-rtx4090-llamacpp.yaml") + " --emit vllm");
    EXPECT_TRUE(gguf["command"].is_null());
    EXPECT_NE(gguf["refused"].dump().find("q4_k_m is a llama.cpp (GGUF) type"), std::string::npos)
        << gguf.dump();
}

TEST(EmitReproductions, AnotherEnginesCommandCarriesTheEstimatesLimits) {
    // The estimate (vLLM on H100) ran 1024 sequences and 8192 tokens a step; SGLang's and
    // trtllm-serve's own defaults would be 2048 and heuristics.
    const std::string base = "estimate --model llama-3.1-8b --gpu h100-sxm";
    const std::string s = cmd_of(base + " --emit sglang");
    EXPECT_NE(s.find("--max-running-requests 1024"), std::string::npos) << s;
    EXPECT_NE(s.find("--chunked-prefill-size 8192"), std::string::npos) << s;
    const std::string t = cmd_of(base + " --emit tensorrt-llm");
    EXPECT_NE(t.find("--max_batch_size 1024 --max_num_tokens 8192"), std::string::npos) << t;
}

TEST(EmitReproductions, DiagnoseCarriesTheFixedMemoryFractionToSglang) {
    // The fix raises vLLM's gpu_memory_utilization to 0.95: SGLang gets the static fraction
    // that holds the same weights and KV pool, not its default.
    const std::string d = "diagnose " + fx("diagnose/kv-full-8b-h100.yaml") + " --metrics " +
                          fx("diagnose/kv-full-scrape-1.prom") + " --metrics " +
                          fx("diagnose/kv-full-scrape-2.prom") + " --interval 60";
    const auto j = emit_of(d + " --emit sglang");
    EXPECT_NE(j["notes"].dump().find("holds the weights and the kv pool the estimate sized"),
              std::string::npos)
        << j.dump();
}

} // namespace
