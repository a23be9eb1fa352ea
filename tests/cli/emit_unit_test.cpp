// cli/emit.cpp compiled into the test: the one shell-quoting function, the Hub id grammar, the
// checkpoint a command launches and the settings it must carry or refuse, on deployments built
// in code (the expectations are written by hand from the engines' rules, docs/emit.md).
#include "cli/emit.hpp"
#include "model/engine_rules.hpp"
#include "tests/model/fixtures.hpp"
#include "tests/support/shell_words.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using gpuplan::cli::EmitEngine;
using gpuplan::cli::launch_commands;
using gpuplan::cli::shell_join;
using gpuplan::cli::shell_quote;
using gpuplan::test::last_command_words;
using gpuplan::test::shell_split;
namespace m = gpuplan::model;
namespace mt = gpuplan::model::test;

// One word of every class POSIX sh treats specially (XCU 2.2, 2.3, 2.6, 2.13), and plain ones.
const std::vector<std::string> kHostile{
    ";",     "a;b", "&",    "a&&b", "|",       "$HOME",   "$(id)", "${x}",
    "`id`",  "'",   "it's", "\"",   "a\"b",    " ",       "a b",   "\n",
    "x\ny",  "\t",  "*",    "?",    "[a]",     "~",       "~user", "#c",
    "(",     ")",   "<",    ">",    ">>f",     "\\",      "\\n",   "!",
    "{a,b}", "%",   "",     "=",    "--a=b c", "'\"$`\\", "plain", "Qwen/Qwen2.5-72B",
    "0.92",  "-1"};

TEST(ShellQuote, EveryMetacharacterClassSplitsBackToTheSameWord) {
    for (const auto& w : kHostile) {
        const auto t = shell_split(shell_quote(w));
        ASSERT_EQ(t.size(), 1u) << "[" << w << "] -> " << shell_quote(w);
        EXPECT_EQ(t[0].text, w);
        EXPECT_FALSE(t[0].op);
    }
    // Safe words stay bare, as the engines' documentation writes them.
    EXPECT_EQ(shell_quote("Qwen/Qwen2.5-72B-Instruct-AWQ"), "Qwen/Qwen2.5-72B-Instruct-AWQ");
    EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
    EXPECT_EQ(shell_quote(""), "''");
}

TEST(ShellQuote, ARealShellReadsTheWordsBack) {
    // /bin/sh (popen) runs `printf '%s\001' WORDS...`: the words it prints are the words given.
    std::vector<std::string> argv{"printf", "%s\\001"};
    argv.insert(argv.end(), kHostile.begin(), kHostile.end());
    FILE* pipe = popen(shell_join(argv).c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string out;
    char buf[4096];
    while (const std::size_t n = fread(buf, 1, sizeof buf, pipe)) {
        out.append(buf, n);
    }
    ASSERT_EQ(pclose(pipe), 0) << shell_join(argv);
    std::vector<std::string> back;
    std::string cur;
    for (const char c : out) {
        if (c == '\001') {
            back.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    EXPECT_EQ(back, kHostile);
}

TEST(HubId, TheHubsGrammar) {
    for (const char* ok : {"Qwen/Qwen2.5-72B-Instruct-AWQ", "gpt2",
                           "nvidia/Llama-3.1-70B-Instruct-FP8", "a_b/c.d-e"}) {
        EXPECT_TRUE(gpuplan::cli::valid_hub_id(ok)) << ok;
    }
    const std::string long_name(97, 'a');
    for (const std::string& bad :
         {std::string("a/b/c"), std::string("-a/b"), std::string("a/b-"), std::string("a--b"),
          std::string("a..b"), std::string("a/b.git"), std::string("org/"), std::string("/x"),
          std::string("a b"), std::string("a;rm -rf ~"), std::string("$(id)"), long_name,
          std::string("")}) {
        EXPECT_FALSE(gpuplan::cli::valid_hub_id(bad)) << bad;
    }
}

m::Deployment llama70b_fp8() {
    m::Deployment d = mt::deploy(mt::llama31_70b(), mt::h100(), 2);
    d.gpu.architecture = "hopper";
    d.model.hf_id = "meta-llama/Llama-3.1-70B";
    d.prec.weights = mt::precision("fp8");
    d.engine.max_model_len = 8192;
    return d;
}

const gpuplan::cli::BenchLoad kLoad{2048, 512, 64, {}};

std::vector<std::string> serve_words(const gpuplan::cli::LaunchCommands& c) {
    return last_command_words(c.serve);
}

bool has(const std::vector<std::string>& w, const std::string& s) {
    return std::find(w.begin(), w.end(), s) != w.end();
}

TEST(EmitCheckpoint, TheCatalogsCheckpointOfTheFormatWithoutQuantization) {
    m::Deployment d = llama70b_fp8();
    d.model.checkpoints = {{"fp8", "nvidia/Llama-3.1-70B-Instruct-FP8"}};
    for (const EmitEngine e : {EmitEngine::Vllm, EmitEngine::Sglang, EmitEngine::TensorRtLlm}) {
        const auto c = launch_commands(e, d, kLoad);
        ASSERT_TRUE(c.refused.empty()) << c.refused.front();
        const auto w = serve_words(c);
        EXPECT_TRUE(has(w, "nvidia/Llama-3.1-70B-Instruct-FP8")) << c.serve;
        // The checkpoint names its method: the engine picks the kernel.
        EXPECT_FALSE(has(w, "--quantization")) << c.serve;
        EXPECT_NE(c.benchmark.find("--model nvidia/Llama-3.1-70B-Instruct-FP8"), std::string::npos);
    }
}

TEST(EmitCheckpoint, Fp8WithoutACheckpointIsOnlineQuantizationWhereTheEngineDoesIt) {
    const m::Deployment d = llama70b_fp8(); // no fp8 checkpoint in its catalog entry
    const auto v = launch_commands(EmitEngine::Vllm, d, kLoad);
    ASSERT_TRUE(v.refused.empty());
    const auto w = serve_words(v);
    EXPECT_EQ(w[2], "meta-llama/Llama-3.1-70B");
    EXPECT_TRUE(has(w, "--quantization") && has(w, "fp8")) << v.serve;
    // trtllm-serve does not quantize at load.
    const auto t = launch_commands(EmitEngine::TensorRtLlm, d, kLoad);
    ASSERT_EQ(t.refused.size(), 1u);
    EXPECT_NE(t.refused[0].find("precision.weights: no fp8 checkpoint of llama-3.1-70b"),
              std::string::npos)
        << t.refused[0];
    EXPECT_TRUE(t.serve.empty());
}

TEST(EmitCheckpoint, TheAwqCheckpointTheUserNamedIsLaunchedAsIs) {
    m::Deployment d = mt::deploy(mt::qwen25_7b(), mt::h100(), 1);
    d.gpu.architecture = "hopper";
    d.model.hf_id = "Qwen/Qwen2.5-7B-Instruct-AWQ";
    d.model.weights = mt::precision("awq-int4");
    d.prec.weights = mt::precision("awq-int4");
    const auto c = launch_commands(EmitEngine::Vllm, d, kLoad);
    ASSERT_TRUE(c.refused.empty());
    const auto w = serve_words(c);
    EXPECT_EQ(w[2], "Qwen/Qwen2.5-7B-Instruct-AWQ");
    EXPECT_FALSE(has(w, "--quantization")); // vLLM picks awq_marlin itself
    EXPECT_FALSE(has(w, "--dtype"));
    // AWQ weights of a 16-bit checkpoint: no engine quantizes to AWQ at load.
    d.model.hf_id = "Qwen/Qwen2.5-7B";
    d.model.weights.reset();
    const auto r = launch_commands(EmitEngine::Vllm, d, kLoad);
    ASSERT_FALSE(r.refused.empty());
    EXPECT_NE(r.refused[0].find("cannot quantize to it at load"), std::string::npos);
}

TEST(EmitQuoting, AModelIdOutsideTheHubGrammarIsRefusedByEveryEngine) {
    for (const std::string& id : {std::string("x; rm -rf ~"), std::string("a/$(id)"),
                                  std::string("a'b/c"), std::string("a/b\nc")}) {
        m::Deployment d = llama70b_fp8();
        d.prec.weights = m::bf16_precision();
        d.model.hf_id = id;
        for (const EmitEngine e : {EmitEngine::Vllm, EmitEngine::Sglang, EmitEngine::TensorRtLlm,
                                   EmitEngine::LlamaCpp}) {
            auto x = d;
            if (e == EmitEngine::LlamaCpp) {
                x.engine.kind = m::EngineKind::LlamaCpp;
                x.engine.max_num_seqs = 4;
            }
            const auto c = launch_commands(e, x, kLoad);
            ASSERT_FALSE(c.refused.empty()) << id << " " << to_string(e);
            EXPECT_NE(c.refused.back().find("is not a Hugging Face repository id"),
                      std::string::npos)
                << c.refused.back();
            EXPECT_TRUE(c.serve.empty());
            EXPECT_TRUE(c.benchmark.empty());
        }
    }
}

TEST(EmitSettings, EverySettingIsAFlagOrARefusalNamingIt) {
    m::Deployment d = llama70b_fp8();
    d.prec.weights = m::bf16_precision();
    d.par.tp = 8; // bf16 70B and a 40 GB KV pool fit under every engine's arithmetic
    d.engine.kv_cache_memory = gpuplan::Bytes(40e9);
    d.engine.lora = m::LoraServingConfig{};
    d.engine.lora->adapters = 8;
    d.engine.lora->max_loras = 4;
    d.engine.lora->max_lora_rank = 32;
    d.engine.lora->rank = 32;
    const auto v = launch_commands(EmitEngine::Vllm, d, kLoad);
    ASSERT_TRUE(v.refused.empty()) << v.refused.front();
    const auto w = serve_words(v);
    const auto value_of = [&](const std::string& flag) {
        const auto it = std::find(w.begin(), w.end(), flag);
        return it == w.end() || it + 1 == w.end() ? std::string("(absent)") : *(it + 1);
    };
    EXPECT_EQ(value_of("--kv-cache-memory-bytes"), "40000000000");
    EXPECT_TRUE(has(w, "--enable-lora"));
    EXPECT_EQ(value_of("--max-loras"), "4");
    EXPECT_EQ(value_of("--max-lora-rank"), "32");
    EXPECT_EQ(value_of("--max-cpu-loras"), "4"); // vLLM's default: max_loras
    // SGLang has no fixed KV pool in bytes; TensorRT-LLM's LoRA is not written.
    const auto s = launch_commands(EmitEngine::Sglang, d, kLoad);
    ASSERT_EQ(s.refused.size(), 1u);
    EXPECT_EQ(s.refused[0].rfind("engine.kv_cache_memory: ", 0), 0u) << s.refused[0];
    const auto t = launch_commands(EmitEngine::TensorRtLlm, d, kLoad);
    ASSERT_EQ(t.refused.size(), 2u);
    EXPECT_EQ(t.refused[0].rfind("engine.lora: ", 0), 0u) << t.refused[0];
    EXPECT_EQ(t.refused[1].rfind("engine.kv_cache_memory: ", 0), 0u) << t.refused[1];
}

TEST(EmitSettings, SpeculativeDecodingPerEngine) {
    m::Deployment d = llama70b_fp8();
    d.prec.weights = m::bf16_precision();
    d.par.tp = 8;
    d.engine.speculative = m::SpeculativeConfig{};
    d.engine.speculative->method = m::SpeculativeMethod::Ngram;
    d.engine.speculative->num_speculative_tokens = 4;
    const auto v = launch_commands(EmitEngine::Vllm, d, kLoad);
    ASSERT_TRUE(v.refused.empty());
    const auto w = serve_words(v);
    const auto it = std::find(w.begin(), w.end(), "--speculative-config");
    ASSERT_NE(it, w.end());
    EXPECT_EQ(*(it + 1), R"({"method":"ngram","num_speculative_tokens":4})");
    const auto s = serve_words(launch_commands(EmitEngine::Sglang, d, kLoad));
    const std::vector<std::string> want{
        "--speculative-algorithm",  "NGRAM", "--speculative-num-steps",        "4",
        "--speculative-eagle-topk", "1",     "--speculative-num-draft-tokens", "5"};
    EXPECT_NE(std::search(s.begin(), s.end(), want.begin(), want.end()), s.end());
    // EAGLE needs its head's checkpoint, which a scenario does not name.
    d.engine.speculative->method = m::SpeculativeMethod::Eagle;
    const auto e = launch_commands(EmitEngine::Vllm, d, kLoad);
    ASSERT_EQ(e.refused.size(), 1u);
    EXPECT_EQ(e.refused[0].rfind("engine.speculative.method: eagle", 0), 0u);
}

TEST(EmitLayout, AttentionDataParallelWithExpertParallelism) {
    // Qwen3-235B-A22B-like layout: tp 1, dp 8, ep 8 (examples/moe-qwen3-235b-ep-h200.yaml).
    m::Deployment d = mt::deploy(mt::mixtral_8x7b(), mt::h200(), 1);
    d.gpu.architecture = "hopper";
    d.model.hf_id = "mistralai/Mixtral-8x7B-v0.1";
    d.par.dp = 8;
    d.par.ep = 8;
    const auto s = serve_words(launch_commands(EmitEngine::Sglang, d, kLoad));
    const auto value_of = [&](const std::string& flag) {
        const auto it = std::find(s.begin(), s.end(), flag);
        return it == s.end() ? std::string("(absent)") : *(it + 1);
    };
    // SGLang counts the attention groups in its tp size: tp 8, dp 8, ep 8 (tp divisible by ep).
    EXPECT_EQ(value_of("--tp-size"), "8");
    EXPECT_EQ(value_of("--dp-size"), "8");
    EXPECT_EQ(value_of("--ep-size"), "8");
    EXPECT_TRUE(has(s, "--enable-dp-attention"));
    const auto t = launch_commands(EmitEngine::TensorRtLlm, d, kLoad);
    ASSERT_TRUE(t.refused.empty()) << t.refused.front();
    EXPECT_NE(t.serve.find("enable_attention_dp: true"), std::string::npos) << t.serve;
    const auto tw = serve_words(t);
    EXPECT_EQ(*(std::find(tw.begin(), tw.end(), "--tp_size") + 1), "8");
    EXPECT_EQ(*(std::find(tw.begin(), tw.end(), "--ep_size") + 1), "8");
    // llama.cpp has no expert parallelism: refused.
    const auto l = launch_commands(EmitEngine::LlamaCpp, d, kLoad);
    ASSERT_FALSE(l.refused.empty());
    EXPECT_EQ(l.refused[0].rfind("hardware.ep: llama.cpp has no expert parallelism", 0), 0u);
    // ep 4 of 8 attention groups: vLLM's EP group is all tp x dp ranks.
    d.par.ep = 4;
    const auto v = launch_commands(EmitEngine::Vllm, d, kLoad);
    ASSERT_FALSE(v.refused.empty());
    EXPECT_EQ(v.refused[0].rfind("hardware.ep: vllm's expert parallel group", 0), 0u);
}

TEST(EngineRules, HardwareAndFormats) {
    m::Deployment d = llama70b_fp8();
    // TensorRT-LLM on an AMD GPU; FP8 on a TPU v5e; FP4 on Hopper.
    d.gpu.vendor = "amd";
    d.gpu.architecture = "cdna3";
    const auto amd = m::launch_problems(m::EngineKind::TensorRtLlm, d);
    ASSERT_EQ(amd.size(), 1u);
    EXPECT_EQ(amd[0].key, "hardware.accelerator");
    EXPECT_TRUE(m::launch_problems(m::EngineKind::Vllm, d).empty()); // MI300: fp8 cores
    d.gpu.vendor = "google";
    d.gpu.architecture = "tpu-v5e";
    const auto tpu = m::launch_problems(m::EngineKind::Vllm, d);
    ASSERT_EQ(tpu.size(), 1u);
    EXPECT_EQ(tpu[0].key, "precision.weights");
    d.gpu.vendor = "nvidia";
    d.gpu.architecture = "hopper";
    d.prec.weights = mt::precision("nvfp4");
    EXPECT_EQ(m::launch_problems(m::EngineKind::Vllm, d).size(), 1u);
    d.gpu.architecture = "blackwell";
    EXPECT_TRUE(m::launch_problems(m::EngineKind::Vllm, d).empty());
    // GGUF types are llama.cpp's only.
    d.prec.weights = mt::precision("q4_k_m");
    EXPECT_EQ(m::launch_problems(m::EngineKind::Vllm, d).size(), 1u);
    EXPECT_TRUE(m::launch_problems(m::EngineKind::LlamaCpp, d).empty());
    EXPECT_EQ(m::checkpoint_format(mt::precision("awq:g64")), "awq");
    EXPECT_EQ(m::checkpoint_format(mt::precision("fp16")), "bf16");
}

TEST(EmitBenchmark, TheWorkloadsPrefixSpreadAndBurstiness) {
    gpuplan::cli::BenchLoad l{3000, 400, 32, 2.0};
    l.prefix_tokens = 1000;
    l.range_ratio = 0.5;
    l.burstiness = 0.25;
    m::Deployment d = llama70b_fp8();
    d.prec.weights = m::bf16_precision();
    const auto c = launch_commands(EmitEngine::Vllm, d, l);
    const auto w = last_command_words(c.benchmark);
    const std::vector<std::string> want{
        "--random-input-len",  "2000", "--random-output-len",  "400",
        "--random-prefix-len", "1000", "--random-range-ratio", "0.5"};
    EXPECT_NE(std::search(w.begin(), w.end(), want.begin(), want.end()), w.end()) << c.benchmark;
    // 2 requests/s for ten minutes; gamma arrivals with cv 2 are burstiness 1/4.
    const std::vector<std::string> rate{"--request-rate", "2",   "--num-prompts", "1200",
                                        "--burstiness",   "0.25"};
    EXPECT_NE(std::search(w.begin(), w.end(), rate.begin(), rate.end()), w.end()) << c.benchmark;
}

} // namespace
