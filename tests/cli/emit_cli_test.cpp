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
const std::set<std::string> kBench{"--backend",         "--base-url",         "--model",
                                   "--dataset-name",    "--random-input-len", "--random-output-len",
                                   "--max-concurrency", "--request-rate",     "--num-prompts",
                                   "--ignore-eos",      "--save-result"};
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
    // The scenario: tp 2 over 4 GPUs (2 replicas), fp8 weights and KV, every setting given.
    EXPECT_EQ(c, "vllm serve meta-llama/Llama-3.1-70B --tensor-parallel-size 2 "
                 "--data-parallel-size 2 --max-model-len 8192 --gpu-memory-utilization 0.92 "
                 "--max-num-seqs 128 --max-num-batched-tokens 4096 --enable-chunked-prefill "
                 "--no-enable-prefix-caching --quantization fp8 --kv-cache-dtype fp8");
    const std::string b = j["benchmark"];
    expect_documented(b, kBench);
    // 64 clients × 10 prompts, 2048 + 512 tokens.
    EXPECT_EQ(b, "vllm bench serve --backend vllm --model meta-llama/Llama-3.1-70B --dataset-name "
                 "random --random-input-len 2048 --random-output-len 512 --max-concurrency 64 "
                 "--num-prompts 640 --ignore-eos --save-result");
    EXPECT_TRUE(j["notes"].empty());
}

TEST(EmitCli, SglangFromEstimate) {
    const auto j = emit_of(k70b + " --emit sglang");
    const std::string c = j["command"];
    expect_documented(c.substr(c.find("sglang.launch_server")), kSglang); // after `python -m`
    for (const char* part :
         {"python -m sglang.launch_server --model-path meta-llama/Llama-3.1-70B", "--tp-size 2",
          "--dp-size 2", "--context-length 8192", "--max-running-requests 128",
          "--chunked-prefill-size 4096", "--disable-radix-cache", "--quantization fp8",
          "--kv-cache-dtype fp8_e4m3", "--mem-fraction-static 0."}) {
        EXPECT_NE(c.find(part), std::string::npos) << part << " in " << c;
    }
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
    // Chunked prefill is left at TensorRT-LLM's default (off: serve.py's
    // --enable_chunked_prefill is a flag that defaults to False), as the scenario does not set it.
    EXPECT_EQ(c, "trtllm-serve meta-llama/Llama-3.1-70B --backend pytorch --tp_size 2 --pp_size 1 "
                 "--max_batch_size 128 --max_num_tokens 4096 --max_seq_len 8192 "
                 "--kv_cache_free_gpu_memory_fraction 0.9");
    const std::string notes = j["notes"].dump();
    EXPECT_NE(notes.find("start 2 of them"), std::string::npos) << notes; // dp 2
    EXPECT_NE(notes.find("kv_cache_config"), std::string::npos) << notes; // fp8 KV, no reuse
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
    // From the vLLM scenario: tp 2 splits rows; fp8 weights have no GGUF type (q8_0 instead);
    // 128 slots of 8192 tokens.
    const auto k = emit_of(k70b + " --emit llama.cpp");
    const std::string c2 = k["command"];
    expect_documented(c2, kLlama);
    EXPECT_NE(c2.find("-m llama-3.1-70b-q8_0.gguf -c 1048576 -ngl 999 -np 128"), std::string::npos)
        << c2;
    EXPECT_NE(c2.find("-sm row"), std::string::npos) << c2;
    EXPECT_NE(k["notes"].dump().find("GGUF has no fp8 weights"), std::string::npos);
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
    EXPECT_EQ(c, "printf 'scheduler_config:\\n  capacity_scheduler_policy: MAX_UTILIZATION\\n' > "
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
