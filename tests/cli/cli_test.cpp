// Runs the real gpuplan binary: output, exit codes and error messages are its contract.
#include "tests/support/run_cli.hpp"
#include "tests/support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace {

using gpuplan::test::RunResult;

RunResult run(const std::string& args) {
    return gpuplan::test::run_cli(args);
}

std::string src(const std::string& rel) {
    return std::string(GPUPLAN_SOURCE_DIR) + "/" + rel;
}

} // namespace

TEST(Cli, VersionAndHelp) {
    EXPECT_EQ(run("--version").exit_code, 0);
    const auto help = run("--help");
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_NE(help.out.find("hw list"), std::string::npos);
    for (const char* cmd :
         {"hw list", "hw show", "model list", "model show", "model import", "scenario check"}) {
        const auto r = run(std::string(cmd) + " --help");
        EXPECT_EQ(r.exit_code, 0) << cmd;
        EXPECT_NE(r.out.find("usage: gpuplan"), std::string::npos) << cmd;
    }
}

TEST(Cli, HwListShowsAtLeastThirtyAccelerators) {
    const auto r = run("hw list --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    std::size_t count = 0;
    for (std::size_t pos = 0; (pos = r.out.find("\"memory_bytes\"", pos)) != std::string::npos;
         ++pos) {
        ++count;
    }
    EXPECT_GE(count, 30u);
    EXPECT_EQ(run("hw list --vendor amd").exit_code, 0);
}

TEST(Cli, ModelShowReportsParamsAndKvPerToken) {
    const auto r = run("model show llama-3.1-70b --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("\"kv_bytes_per_token_bf16\": 327680"), std::string::npos) << r.out;
    const auto pos = r.out.find("\"params\": ");
    ASSERT_NE(pos, std::string::npos);
    const double params = std::stod(r.out.substr(pos + 10));
    EXPECT_NEAR(params, 70.6e9, 0.35e9);
}

TEST(Cli, UnknownNamesExitTwoWithASuggestion) {
    const auto r = run("hw show h100-sxn");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.out.find("did you mean 'h100-sxm'"), std::string::npos) << r.out;
    EXPECT_EQ(run("model show llama-3.1-7b").exit_code, 2);
    EXPECT_EQ(run("no-such-command").exit_code, 2);
    EXPECT_EQ(run("hw list --bogus").exit_code, 2);
}

TEST(Cli, MalformedHwdbFolderExitsTwoNamingTheFile) {
    for (const auto& e : std::filesystem::directory_iterator(src("tests/fixtures/malformed"))) {
        SCOPED_TRACE(e.path().filename().string());
        const auto dir = std::filesystem::temp_directory_path() /
                         ("gpuplan-cli-malformed-" + std::to_string(::getpid()));
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir);
        std::filesystem::copy_file(e.path(), dir / "bad.yaml");
        const auto r = run("--hwdb " + dir.string() + " hw list");
        EXPECT_EQ(r.exit_code, 2) << r.out;
        EXPECT_NE(r.out.find("bad.yaml:"), std::string::npos) << r.out;
        EXPECT_EQ(r.out.find("internal error"), std::string::npos) << r.out;
    }
}

TEST(Cli, ModelImportWritesLoadableYaml) {
    const auto out =
        std::filesystem::temp_directory_path() / ("gpuplan-import-" + std::to_string(::getpid()));
    std::filesystem::remove_all(out);
    std::filesystem::create_directories(out);
    const auto r = run("model import " + src("tests/fixtures/hf/qwen2.5-7b.json") +
                       " --name my-qwen -o " + (out / "my-qwen.yaml").string());
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto shown = run("--hwdb " + out.string() + " model show my-qwen --json");
    ASSERT_EQ(shown.exit_code, 0) << shown.out;
    EXPECT_NE(shown.out.find("\"kv_bytes_per_token_bf16\": 57344"), std::string::npos) << shown.out;
    EXPECT_EQ(run("model import /no/such/config.json").exit_code, 2);
}

TEST(Cli, ModelImportKeepsTheHubIdAndRefusesAnInvalidOne) {
    // A Hub config without _name_or_path: the id comes from --hub-id and is written as hf_id,
    // which `plan --emit` serves.
    const std::string cfg = src("tests/fixtures/hf/aic/openai--gpt-oss-20b_config.json");
    const auto r = run("model import " + cfg + " --name oss --hub-id my-org/gpt-oss-20b-ft");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("hf_id: \"my-org/gpt-oss-20b-ft\""), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("attention_sinks: true"), std::string::npos) << r.out;
    const auto bad = run("model import " + cfg + " --hub-id my-org/gpt--oss");
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.out.find("--hub-id 'my-org/gpt--oss' is not a Hugging Face repository id: "
                           "'--' and '..' are not allowed"),
              std::string::npos)
        << bad.out;
    // Nemotron-H-56B's Infinity parses; the model is refused for its dense MLP blocks, exit 2.
    const auto nemo = run("model import " +
                          src("tests/fixtures/hf/aic/nvidia--Nemotron-H-56B-Base-8K_config.json"));
    EXPECT_EQ(nemo.exit_code, 2);
    EXPECT_NE(nemo.out.find("hybrid_override_pattern: has dense MLP blocks"), std::string::npos)
        << nemo.out;
}

namespace {

// Extracts a number following "\"key\": " in JSON text (first occurrence after `from`).
double json_number(const std::string& text, const std::string& key, std::size_t from = 0) {
    const auto pos = text.find("\"" + key + "\": ", from);
    if (pos == std::string::npos) {
        ADD_FAILURE() << "no key " << key;
        return -1;
    }
    return std::stod(text.substr(pos + key.size() + 4));
}

} // namespace

TEST(Cli, FitReportsTheDocumentedJsonKeys) {
    const auto r = run("fit " + src("examples/qwen7b-gptq-rtx4090.yaml") + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    for (const char* key :
         {"\"fits\": true", "\"weights_bytes\"", "\"kv_bytes_per_token\"", "\"kv_blocks\"",
          "\"max_concurrency\"", "\"fewest_gpus\"", "\"host_ram\""}) {
        EXPECT_NE(r.out.find(key), std::string::npos) << key;
    }
    // Qwen2.5-7B: 28 layers × 4 KV heads × 128 × 2 (K and V) × 2 B = 57,344 B per token.
    EXPECT_DOUBLE_EQ(json_number(r.out, "kv_bytes_per_token"), 57344);
    // vLLM: tokens = blocks × block_size; concurrency = tokens / max_model_len (16384).
    const double blocks = json_number(r.out, "kv_blocks");
    EXPECT_DOUBLE_EQ(json_number(r.out, "kv_tokens"), blocks * 16);
    EXPECT_NEAR(json_number(r.out, "max_concurrency"), blocks * 16 / 16384, 0.01);
    // docs/domain.md §3: max-num-seqs 4 binds, not the KV cache.
    EXPECT_NE(r.out.find("\"concurrency_limit\": \"max-num-seqs\""), std::string::npos) << r.out;
}

TEST(Cli, SeventyBOnOneH100DoesNotFit) {
    const auto r = run("fit --model llama-3.1-70b --gpu h100-sxm --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("\"fits\": false"), std::string::npos);
    // 70.55e9 parameters × 2 B = 141 GB of weights > 80 GiB.
    EXPECT_NEAR(json_number(r.out, "weights_bytes"), 141.1e9, 0.2e9);
    const auto tp4 = run("fit --model llama-3.1-70b --gpu h100-sxm --tp 4 --json");
    EXPECT_NE(tp4.out.find("\"fits\": true"), std::string::npos) << tp4.out;
    EXPECT_NEAR(json_number(tp4.out, "weights_bytes"), 141.1e9 / 4, 1.5e9); // embeddings split too
}

TEST(Cli, EstimateGivesSpeedBottlenecksAndProvenance) {
    const auto r = run("estimate " + src("examples/quickstart.yaml") + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    for (const char* key : {"\"ttft_s\"", "\"tpot_s\"", "\"throughput_tok_s\"", "\"mfu\"",
                            "\"mbu\"", "\"provenance\"", "\"what_ifs\""}) {
        EXPECT_NE(r.out.find(key), std::string::npos) << key;
    }
    EXPECT_NE(r.out.find("\"decode\": \"memory-bandwidth\""), std::string::npos);
    EXPECT_NE(r.out.find("\"prefill\": \"compute\""), std::string::npos);
    // Decode of an 8B bf16 model on one H100 cannot beat the bandwidth bound:
    // 3.35 TB/s / 16.06 GB of weights = 209 steps/s, so TPOT >= 4.8 ms.
    EXPECT_GT(json_number(r.out, "tpot_s"), 16.06e9 / 3.35e12);
    const auto human = run("estimate " + src("examples/quickstart.yaml"));
    EXPECT_NE(human.out.find("binding resource"), std::string::npos);
}

TEST(Cli, AwqInt4DecodeOnA100IsMemoryBoundAndFasterThanInt8) {
    // Issue 19: the fitted bf16 GEMM curve (m_half ~110 rows) made this decode compute-bound
    // and slower than int8. Weight-only kernels keep it memory-bound.
    const std::string base = "estimate --model llama-3.1-8b --gpu a100-sxm-80gb --max-model-len "
                             "4096 --concurrency 1 --json --weights ";
    const auto awq = run(base + "awq-int4");
    const auto int8 = run(base + "int8");
    ASSERT_EQ(awq.exit_code, 0) << awq.out;
    ASSERT_EQ(int8.exit_code, 0) << int8.out;
    EXPECT_NE(awq.out.find("\"decode\": \"memory-bandwidth\""), std::string::npos) << awq.out;
    // Weights read per token: 32 × 218,103,808 linear weights at 4 + 20/128 bits (AWQ g128)
    // = 3.626 GB, plus the bf16 LM head 128256 × 4096 × 2 = 1.051 GB; at 2.039 TB/s >= 2.29 ms.
    const double weights = 32.0 * 218103808.0 * (4.0 + 20.0 / 128.0) / 8.0 + 128256.0 * 4096 * 2;
    const double tpot = json_number(awq.out, "tpot_s");
    EXPECT_GE(tpot, weights / 2.039e12);
    EXPECT_LT(tpot, json_number(int8.out, "tpot_s"));
}

TEST(Cli, EstimateMfuStaysBelowOneWhenAttentionRunsOnAFasterPath) {
    // fp32 weights: GEMMs at the A100's 19.5 TFLOPS fp32, attention of a 60K prompt at 312 bf16;
    // the prefill MFU printed 139 % against the fp32 peak (issue 18).
    const auto r = run("estimate --model llama-3.1-8b --gpu a100-sxm-80gb --weights fp32 "
                       "--input-len 60000 --max-model-len 65000 --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const std::size_t mfu = r.out.find("\"mfu\"");
    const std::size_t mbu = r.out.find("\"mbu\"");
    ASSERT_NE(mfu, std::string::npos);
    ASSERT_NE(mbu, std::string::npos);
    for (std::size_t at : {mfu, mbu}) {
        for (const char* phase : {"prefill", "decode"}) {
            const double v = json_number(r.out, phase, at);
            EXPECT_GT(v, 0.0) << phase;
            EXPECT_LE(v, 1.0) << phase;
        }
    }
}

TEST(Cli, CompareRunsConfigurationsSideBySide) {
    const auto r = run("compare " + src("examples/llama70b-4xh100.yaml") + " " +
                       src("examples/llama70b-2xh200.yaml") + " --with h100-sxm:8");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("llama70b-4xh100"), std::string::npos);
    EXPECT_NE(r.out.find("llama70b-2xh200"), std::string::npos);
    EXPECT_NE(r.out.find("8x-h100-sxm"), std::string::npos);
    EXPECT_EQ(run("compare " + src("examples/quickstart.yaml")).exit_code, 2); // one config only
    EXPECT_EQ(run("compare " + src("examples/quickstart.yaml") + " --with h100-sxm:x").exit_code,
              2);
}

TEST(Cli, BadFlagsExitTwo) {
    EXPECT_EQ(run("fit --model llama-3.1-70b").exit_code, 2);                       // no GPU
    EXPECT_EQ(run("fit --model llama-3.1-70b --gpu h100-sxm --tp 3").exit_code, 2); // 64 heads
    EXPECT_EQ(run("fit --model llama-3.1-8b --gpu h100-sxm --weights int3").exit_code, 2);
    EXPECT_EQ(
        run("estimate --model llama-3.1-8b --gpu h100-sxm --gpu-memory-utilization 1.5").exit_code,
        2);
    EXPECT_EQ(run("fit /no/such/file.yaml").exit_code, 2);
}

TEST(Cli, SimulateJsonIsDeterministicAndDocumented) {
    const std::string cmd = "simulate " + src("examples/simulate-chat.yaml") + " --json";
    const auto a = run(cmd);
    const auto b = run(cmd);
    ASSERT_EQ(a.exit_code, 0) << a.out;
    EXPECT_EQ(a.out, b.out); // byte for byte
    for (const char* key :
         {"\"ttft_s\"", "\"tpot_s\"", "\"e2e_s\"", "\"p50\"", "\"p90\"", "\"p99\"",
          "\"throughput_tok_s\"", "\"requests_completed\"", "\"completed\"", "\"failed\"",
          "\"goodput_rps\"", "\"preemptions\"", "\"prefix_hit_rate\"", "\"slo_attainment\"",
          "\"slo_attainment_by_class\"", "\"classes\""}) {
        EXPECT_NE(a.out.find(key), std::string::npos) << key;
    }
    EXPECT_GT(json_number(a.out, "requests_completed"), 100);
    // Another seed gives another run.
    EXPECT_NE(run(cmd + " --seed 3").out, a.out);
}

TEST(Cli, SimulateExamplesRunAndBadInputExitsTwo) {
    const auto burst = run("simulate " + src("examples/simulate-burst.yaml"));
    ASSERT_EQ(burst.exit_code, 0) << burst.out;
    EXPECT_NE(burst.out.find("goodput"), std::string::npos);
    const auto trace =
        run("simulate " + src("examples/simulate-trace.yaml") + " --requests 50 --json");
    ASSERT_EQ(trace.exit_code, 0) << trace.out;
    EXPECT_EQ(json_number(trace.out, "arrived"), 50);
    const auto replay =
        run("simulate " + src("examples/simulate-chat.yaml") + " --trace " +
            src("examples/traces/chat-azure-layout.csv") + " --trace-format azure --json");
    ASSERT_EQ(replay.exit_code, 0) << replay.out;
    EXPECT_EQ(json_number(replay.out, "arrived"), 40);
    const auto sweep = run("simulate " + src("examples/simulate-chat.yaml") +
                           " --duration 10 --sweep workload.requests_per_s=2,8");
    ASSERT_EQ(sweep.exit_code, 0) << sweep.out;
    EXPECT_NE(sweep.out.find("workload.requests_per_s"), std::string::npos);
    const auto out_dir = std::filesystem::temp_directory_path() /
                         ("gpuplan-cli-simulate-" + std::to_string(::getpid()));
    std::filesystem::remove_all(out_dir);
    ASSERT_EQ(run("simulate " + src("examples/simulate-chat.yaml") + " --duration 5 --out " +
                  out_dir.string())
                  .exit_code,
              0);
    for (const char* f : {"requests.csv", "timeseries.csv", "trace.json", "summary.json"}) {
        EXPECT_TRUE(std::filesystem::exists(out_dir / f)) << f;
    }
    EXPECT_EQ(run("simulate " + src("examples/simulate-chat.yaml") + " --set engine.max_num_sqs=4")
                  .exit_code,
              2);
    EXPECT_EQ(run("simulate " + src("examples/simulate-chat.yaml") + " --requests 0").exit_code, 2);
    EXPECT_EQ(
        run("simulate " + src("examples/simulate-chat.yaml") + " --trace /no/such.csv").exit_code,
        2);
}

TEST(Cli, SimulateTraceIsStreamedAndATraceLimitCutsItWithANote) {
    const auto dir = std::filesystem::temp_directory_path() / "gpuplan-cli-trace-limit";
    std::filesystem::remove_all(dir);
    const auto read = [](const std::filesystem::path& p) {
        std::ifstream f(p);
        std::stringstream ss;
        ss << f.rdbuf();
        return ss.str();
    };
    const auto count = [](const std::string& text, const std::string& what) {
        std::size_t n = 0;
        for (std::size_t pos = 0; (pos = text.find(what, pos)) != std::string::npos;
             pos += what.size()) {
            ++n;
        }
        return n;
    };
    const auto cut = run("simulate " + src("examples/simulate-chat.yaml") +
                         " --duration 5 --trace-limit 7 --out " + dir.string());
    ASSERT_EQ(cut.exit_code, 0) << cut.out;
    EXPECT_NE(cut.out.find("holds the first 7 of"), std::string::npos) << cut.out;
    EXPECT_NE(cut.out.find("--trace-limit 0"), std::string::npos) << cut.out;
    const std::string trace = read(dir / "trace.json");
    EXPECT_EQ(count(trace, "\"ph\":\"X\""), 7u);
    EXPECT_NE(trace.find("\"steps_written\":7,"), std::string::npos)
        << trace.substr(trace.size() - 200);
    EXPECT_NE(trace.find("\"requests_written\":7,\"truncated\":true"), std::string::npos)
        << trace.substr(trace.size() - 200);
    EXPECT_EQ(count(trace, "\"name\":\"request\",\"cat\":\"request\",\"ph\":\"b\""), 7u);
    // Without a cut: every step, no note, and the same bytes for the same seed.
    const auto all = run("simulate " + src("examples/simulate-chat.yaml") +
                         " --duration 5 --trace-limit 0 --out " + dir.string());
    ASSERT_EQ(all.exit_code, 0) << all.out;
    EXPECT_EQ(all.out.find("--trace-limit"), std::string::npos) << all.out;
    const std::string full = read(dir / "trace.json");
    EXPECT_NE(full.find("\"truncated\":false"), std::string::npos);
    EXPECT_GT(count(full, "\"ph\":\"X\""), 7u);
    // Each step's slice comes with a counter of the replica's running set, KV use and power.
    EXPECT_EQ(count(full, "\"ph\":\"C\""), count(full, "\"ph\":\"X\""));
    EXPECT_NE(full.find("\"kv_use\":"), std::string::npos);
    // Every request of requests.csv has its span, opened and closed, with its phases inside.
    const std::string rows = read(dir / "requests.csv");
    const auto requests = static_cast<std::size_t>(std::count(rows.begin(), rows.end(), '\n')) - 1;
    EXPECT_EQ(count(full, "\"name\":\"request\",\"cat\":\"request\",\"ph\":\"b\""), requests);
    EXPECT_EQ(count(full, "\"name\":\"request\",\"cat\":\"request\",\"ph\":\"e\""), requests);
    EXPECT_EQ(count(full, "\"name\":\"queued\",\"cat\":\"request\",\"ph\":\"b\""),
              count(full, "\"name\":\"queued\",\"cat\":\"request\",\"ph\":\"e\""));
    EXPECT_GT(count(full, "\"name\":\"decode\",\"cat\":\"request\",\"ph\":\"e\""), 0u);
    ASSERT_EQ(run("simulate " + src("examples/simulate-chat.yaml") +
                  " --duration 5 --trace-limit 0 --out " + dir.string())
                  .exit_code,
              0);
    EXPECT_EQ(read(dir / "trace.json"), full);
    EXPECT_EQ(run("simulate " + src("examples/simulate-chat.yaml") + " --trace-limit=-1").exit_code,
              2);
    // A deployment that does not fit leaves no output folder behind.
    const auto none = std::filesystem::temp_directory_path() / "gpuplan-cli-no-fit";
    std::filesystem::remove_all(none);
    EXPECT_EQ(run("simulate " + src("examples/simulate-chat.yaml") +
                  " --set model=llama-3.1-405b --set hardware.count=1 --out " + none.string())
                  .exit_code,
              2);
    EXPECT_FALSE(std::filesystem::exists(none));
}

TEST(Cli, TrainAnswersTheExamplesWithTheDocumentedKeys) {
    for (const char* f :
         {"examples/train-gpt3-1024xa100.yaml", "examples/train-llama8b-lora-rtx4090.yaml",
          "examples/train-llama70b-2x8xh100.yaml", "examples/train-13b-slow-input.yaml"}) {
        const auto r = run("train " + src(f) + " --json");
        ASSERT_EQ(r.exit_code, 0) << f << '\n' << r.out;
        for (const char* key :
             {"\"fits\": true", "\"memory_per_gpu_bytes\"", "\"step_time_s\"", "\"tokens_per_s\"",
              "\"mfu\"", "\"time_to_train_s\"", "\"gpu_hours\"", "\"total_flops\"", "\"breakdown\"",
              "\"input_stall_s\"", "\"scaling\"", "\"stages\""}) {
            EXPECT_NE(r.out.find(key), std::string::npos) << f << ": " << key;
        }
        EXPECT_EQ(run("train " + src(f)).exit_code, 0) << f; // the human report
    }
    // docs/domain.md §3's 13B case: 2.6x on 4 GPUs, input-bound at the loader's 5,100 tokens/s.
    const auto slow = run("train " + src("examples/train-13b-slow-input.yaml") + " --json");
    EXPECT_NEAR(json_number(slow.out, "speedup"), 2.6, 0.1);
    EXPECT_NEAR(json_number(slow.out, "tokens_per_s"), 5100, 1);
    // GPT-3: 6 × 175e9 × 300e9 = 3.15e23 FLOPs plus attention and the LM head (~3 %).
    const auto gpt3 = run("train " + src("examples/train-gpt3-1024xa100.yaml") + " --json");
    EXPECT_NEAR(json_number(gpt3.out, "total_flops") / 3.15e23, 1.0, 0.05);
}

TEST(Cli, MoeAndOverlapKnobsOutOfRangeExitTwoNamingTheKey) {
    // Issue 19: engine.ep_overlap, engine.moe_load_imbalance and the training overlap keys.
    const auto ep = run("simulate " + src("examples/moe-qwen3-235b-ep-h200.yaml") +
                        " --set engine.ep_overlap=1.5");
    EXPECT_EQ(ep.exit_code, 2);
    EXPECT_NE(ep.out.find("ep_overlap"), std::string::npos) << ep.out;
    const auto imb = run("simulate " + src("examples/moe-qwen3-235b-ep-h200.yaml") +
                         " --set engine.moe_load_imbalance=0.5");
    EXPECT_EQ(imb.exit_code, 2);
    EXPECT_NE(imb.out.find("moe_load_imbalance"), std::string::npos) << imb.out;
    const auto bucket = run("train " + src("examples/train-13b-slow-input.yaml") +
                            " --set training.grad_bucket=-1MB");
    EXPECT_EQ(bucket.exit_code, 2);
    EXPECT_NE(bucket.out.find("grad_bucket"), std::string::npos) << bucket.out;
    const auto a2a = run("train " + src("examples/train-deepseek-v3-2048xh800.yaml") +
                         " --set training.ep_overlap=2");
    EXPECT_EQ(a2a.exit_code, 2);
    EXPECT_NE(a2a.out.find("ep_overlap"), std::string::npos) << a2a.out;
}

TEST(Cli, TrainSearchRanksLayoutsAndFlagsOverride) {
    const auto r =
        run("train --model llama-3.1-70b --gpu h100-sxm --node dgx-h100 --gpus 16 --tokens 2e9 "
            "--global-batch 64 --seq-len 4096 --search --top 3 --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    for (const char* key : {"\"search\"", "\"why\"", "\"enumerated\"", "\"top\""}) {
        EXPECT_NE(r.out.find(key), std::string::npos) << key;
    }
    const auto human =
        run("train " + src("examples/train-llama70b-2x8xh100.yaml") + " --search --top 3");
    ASSERT_EQ(human.exit_code, 0) << human.out;
    EXPECT_NE(human.out.find("wins"), std::string::npos) << human.out;
    // A flag overrides the file: ZeRO-3 over 16 GPUs with no TP/PP does not fit a 70B fine-tune.
    const auto z3 = run("train " + src("examples/train-llama70b-2x8xh100.yaml") +
                        " --tp 1 --pp 1 --zero 3 --json");
    ASSERT_EQ(z3.exit_code, 0) << z3.out;
    EXPECT_NE(z3.out.find("\"fits\": false"), std::string::npos);
}

TEST(Cli, TrainBadInputExitsTwo) {
    EXPECT_EQ(run("train --model llama-3.1-8b --gpu h100-sxm").exit_code, 2); // no tokens/batch/seq
    EXPECT_EQ(run("train " + src("examples/train-13b-slow-input.yaml") + " --zero 5").exit_code, 2);
    EXPECT_EQ(
        run("train " + src("examples/train-13b-slow-input.yaml") + " --recompute some").exit_code,
        2);
    const auto tp3 = run("train " + src("examples/train-gpt3-1024xa100.yaml") + " --tp 5");
    EXPECT_EQ(tp3.exit_code, 2);
    // A typo in the training block is located by file, line and column.
    const auto dir = std::filesystem::temp_directory_path() /
                     ("gpuplan-cli-train-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto file = dir / "typo.yaml";
    std::ofstream(file)
        << "schema: 1\nmodel: llama-2-13b\nhardware:\n  accelerator: a100-sxm-80gb\n  count: 4\n"
           "training:\n  tokens: 1e9\n  global_batch: 32\n  seq_len: 2048\n  zero_stage: 3\n";
    const auto typo = run("train " + file.string());
    EXPECT_EQ(typo.exit_code, 2);
    EXPECT_NE(typo.out.find("typo.yaml:10:"), std::string::npos) << typo.out;
    EXPECT_NE(typo.out.find("zero_stage"), std::string::npos) << typo.out;
}

// --- power, racks and cost (issue 5) ---

TEST(Cli, RackAnswersTheExampleAndACapAddsNodesPerRack) {
    const auto r = run("rack " + src("examples/rack-power-cap.yaml") + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    // DGX H100 at 8 × 500 W + 2.8 kW host = 6.8 kW: 5 per 40 kW rack (8.4 kW uncapped: 4).
    const auto plan = r.out.find("\"plan\"");
    ASSERT_NE(plan, std::string::npos);
    EXPECT_DOUBLE_EQ(json_number(r.out, "node_power_w", plan), 6800);
    EXPECT_EQ(json_number(r.out, "nodes_per_rack", plan), 5);
    EXPECT_EQ(json_number(r.out, "racks", plan), 4);
    EXPECT_EQ(json_number(r.out, "nodes_per_rack_uncapped"), 4);
    EXPECT_EQ(json_number(r.out, "more_gpus_per_rack"), 8);
    for (const char* key : {"\"binding\"", "\"limits\"", "\"bases\"", "\"headroom\"",
                            "\"pdu_usable_w\"", "\"oversubscription\"", "\"power\""}) {
        EXPECT_NE(r.out.find(key), std::string::npos) << key;
    }
    const auto human = run("rack " + src("examples/rack-power-cap.yaml"));
    ASSERT_EQ(human.exit_code, 0) << human.out;
    EXPECT_NE(human.out.find("answer: 5 nodes (40 GPUs) per rack, 4 racks"), std::string::npos)
        << human.out;
}

TEST(Cli, RackWarnsWhenOneNodeExceedsASixteenAmpFeed) {
    // docs/domain.md §2: 16 A × 230 V single phase = 3.68 kW (2.94 kW derated): an 8-GPU server
    // trips it.
    const auto r =
        run("rack --node dgx-h100 --nodes 4 --pdu-amps 16 --pdu-volts 230 --pdu-phases 1");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("trips the breaker"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("2.94 kW"), std::string::npos) << r.out;
    const auto ok = run("rack --node dgx-h100 --nodes 4 --json"); // 400 V 32 A three-phase: 17.7 kW
    ASSERT_EQ(ok.exit_code, 0) << ok.out;
    const auto plan = ok.out.find("\"plan\"");
    EXPECT_NEAR(json_number(ok.out, "pdu_usable_w", plan), 17736, 1);
    EXPECT_EQ(json_number(ok.out, "nodes_per_rack", plan), 2);        // 2 × 8.4 kW at peak
    EXPECT_EQ(run("rack --nodes 4").exit_code, 2);                    // no node
    EXPECT_EQ(run("rack --node dgx-h100 --basis load").exit_code, 2); // load needs a model
    EXPECT_EQ(run("rack --node dgx-h100 --cooling water").exit_code, 2);
}

TEST(Cli, CostAnswersTheExampleWithABreakEven) {
    const auto r = run("cost " + src("examples/cost-rent-vs-buy.yaml") + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("\"currency\": \"USD\""), std::string::npos);
    EXPECT_DOUBLE_EQ(json_number(r.out, "capex"), 270000);
    EXPECT_DOUBLE_EQ(json_number(r.out, "rent_monthly"), 8 * 2.99 * 720);
    EXPECT_DOUBLE_EQ(json_number(r.out, "capex_monthly"), 270000 * 0.9 / 48);
    EXPECT_GT(json_number(r.out, "break_even_month"), 6);
    EXPECT_LT(json_number(r.out, "break_even_month"), 48);
    EXPECT_NE(r.out.find("\"cheaper\": \"own\""), std::string::npos);
    // Used 10 h on 22 days a month, renting wins.
    const auto peaky = run("cost " + src("examples/cost-rent-vs-buy.yaml") +
                           " --hours-per-day 10 --days-per-month 22 --json");
    ASSERT_EQ(peaky.exit_code, 0) << peaky.out;
    EXPECT_NE(peaky.out.find("\"cheaper\": \"rent\""), std::string::npos);
    const auto human = run("cost " + src("examples/cost-rent-vs-buy.yaml"));
    EXPECT_NE(human.out.find("break-even month"), std::string::npos) << human.out;
}

TEST(Cli, CostInAnyCurrencyButNeverMixed) {
    // docs/domain.md §2's electricity in CNY: every price in CNY works.
    const auto cny =
        run("cost " + src("examples/cost-rent-vs-buy.yaml") +
            " --node-price '1900000 CNY' --gpu-hour '20 CNY/h' --electricity '0.6 CNY/kWh' --json");
    ASSERT_EQ(cny.exit_code, 0) << cny.out;
    EXPECT_NE(cny.out.find("\"currency\": \"CNY\""), std::string::npos);
    const auto mixed =
        run("cost " + src("examples/cost-rent-vs-buy.yaml") + " --electricity '0.6 CNY/kWh'");
    EXPECT_EQ(mixed.exit_code, 2);
    EXPECT_NE(mixed.out.find("one currency"), std::string::npos) << mixed.out;
    EXPECT_EQ(run("cost " + src("examples/cost-rent-vs-buy.yaml") + " --gpu-hour '$3'").exit_code,
              2); // no /h
}

TEST(Cli, EstimateShowsPowerFiguresUnderACap) {
    const auto r =
        run("estimate " + src("examples/llama70b-4xh100.yaml") + " --gpu-cap '350 W' --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto at = r.out.find("\"power\"");
    ASSERT_NE(at, std::string::npos);
    EXPECT_DOUBLE_EQ(json_number(r.out, "limit_w", at), 350);
    EXPECT_NEAR(json_number(r.out, "slowdown", at), 1.3, 0.05); // prefill at a 50 % cap
    EXPECT_GT(json_number(r.out, "throughput_loss", at), 0.0);
    const auto human = run("estimate " + src("examples/llama70b-4xh100.yaml") + " --gpu-cap 350W");
    EXPECT_NE(human.out.find("under the power limit"), std::string::npos) << human.out;
    // Without a cap, estimate prints no power section.
    EXPECT_EQ(
        run("estimate " + src("examples/llama70b-4xh100.yaml") + " --json").out.find("\"limit_w\""),
        std::string::npos);
    EXPECT_EQ(run("estimate " + src("examples/llama70b-4xh100.yaml") + " --gpu-cap 350").exit_code,
              2); // no unit
}

TEST(Cli, SimulateReportsEnergyAndACapLowersPowerAndThroughput) {
    const auto free =
        run("simulate " + src("examples/simulate-chat.yaml") + " --duration 20 --json");
    ASSERT_EQ(free.exit_code, 0) << free.out;
    for (const char* key : {"energy_j_per_token", "avg_power_w", "peak_power_w"}) {
        EXPECT_GT(json_number(free.out, key), 0) << key;
    }
    const auto capped = run("simulate " + src("examples/simulate-chat.yaml") +
                            " --duration 20 --gpu-cap '350 W' --json");
    ASSERT_EQ(capped.exit_code, 0) << capped.out;
    EXPECT_LE(json_number(capped.out, "peak_power_w"), 350 + 1e-6);
    EXPECT_LT(json_number(capped.out, "avg_power_w"), json_number(free.out, "avg_power_w"));
    EXPECT_GT(json_number(capped.out, "p99", capped.out.find("\"tpot_s\"")),
              json_number(free.out, "p99", free.out.find("\"tpot_s\"")));
    const auto human =
        run("simulate " + src("examples/simulate-chat.yaml") + " --duration 10 --gpu-cap 350W");
    EXPECT_NE(human.out.find("J per output token"), std::string::npos) << human.out;
    EXPECT_NE(human.out.find("power limit  350 W per GPU (gpu_cap)"), std::string::npos)
        << human.out;
}

TEST(Cli, PlanAnswersTheExampleAndSaysWhenNothingMeetsTheSlo) {
    const auto r = run("plan " + src("examples/plan-search.yaml") + " --top 2 --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("\"found\": true"), std::string::npos) << r.out;
    const auto first = r.out.find("\"ranked\": [");
    ASSERT_NE(first, std::string::npos);
    EXPECT_NE(r.out.find("\"meets_slo\": true", first), std::string::npos);
    EXPECT_GT(json_number(r.out, "monthly", first), 0);
    EXPECT_LE(json_number(r.out, "gpus", first), 16); // plan.max_gpus
    // One thread or many: the same answer.
    EXPECT_EQ(run("plan " + src("examples/plan-search.yaml") + " --top 2 --json --threads 1").out,
              r.out);
    const auto human = run("plan " + src("examples/plan-search.yaml") + " --top 1");
    EXPECT_EQ(human.exit_code, 0);
    EXPECT_NE(human.out.find("cheapest meeting every SLO"), std::string::npos) << human.out;

    // 1 ms per token is beyond every candidate: a clear no, with the closest miss.
    const auto no =
        run("plan " + src("examples/plan-search.yaml") + " --set slo.tpot='1 ms' --json");
    ASSERT_EQ(no.exit_code, 0) << no.out;
    EXPECT_NE(no.out.find("\"found\": false"), std::string::npos);
    EXPECT_NE(no.out.find("\"verdict\": \"nothing meets the SLO"), std::string::npos) << no.out;
    EXPECT_EQ(no.out.find("\"closest_miss\": null"), std::string::npos);
    const auto no_human =
        run("plan " + src("examples/plan-search.yaml") + " --set slo.tpot='1 ms'");
    EXPECT_NE(no_human.out.find("NO ANSWER    nothing meets the SLO"), std::string::npos)
        << no_human.out;
    // Under a budget the cheapest configuration meeting the SLO is named with what it breaks.
    const auto poor = run("plan " + src("examples/plan-search.yaml") + " --budget '$500/month'");
    EXPECT_NE(poor.out.find("within the plan's constraints"), std::string::npos) << poor.out;

    EXPECT_EQ(run("plan " + src("examples/plan-search.yaml") + " --budget '$500'").exit_code,
              2); // not monthly
    EXPECT_EQ(
        run("plan " + src("examples/plan-search.yaml") + " --candidate no-such-gpu").exit_code, 2);
    EXPECT_EQ(run("plan " + src("examples/plan-search.yaml") + " --set plan.tpp=[1]").exit_code, 2);
    EXPECT_EQ(run("plan --help").exit_code, 0);
}

// ---- outputs, signals and bounded inputs (issue 12, items 1, 2 and 4) ----

namespace {

namespace fs = std::filesystem;

using gpuplan::test::TempDir;

std::size_t entries(const fs::path& dir) {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) {
        ++n;
    }
    return n;
}

// Runs gpuplan with standard output sent to `stdout_target` and returns what it wrote to
// standard error, with its exit code.
RunResult run_stdout_to(const std::string& args, const std::string& stdout_target) {
    const std::string cmd = std::string(GPUPLAN_CLI) + " " + args + " 2>&1 >" + stdout_target;
    FILE* pipe = popen(cmd.c_str(), "r");
    std::string out;
    char buf[4096];
    while (std::size_t n = fread(buf, 1, sizeof buf, pipe)) {
        out.append(buf, n);
    }
    const int status = pclose(pipe);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// True once process `pid` has installed a handler for `sig` (SigCgt in /proc/PID/status).
bool catches(pid_t pid, int sig) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("SigCgt:", 0) == 0) {
            const unsigned long long mask = std::stoull(line.substr(7), nullptr, 16);
            return ((mask >> (sig - 1)) & 1ULL) != 0;
        }
    }
    return false;
}

} // namespace

TEST(CliOutput, ModelImportRefusesAFolderAndReportsAFullDisk) {
    TempDir d("import-out");
    // The fixture has no _name_or_path: --name names it (the output files are under test here).
    const std::string cfg = src("tests/fixtures/hf/qwen2.5-7b.json") + " --name qwen-test";
    // -o DIR gave an internal error.
    const auto dir = run("model import " + cfg + " -o " + d.path.string());
    EXPECT_EQ(dir.exit_code, 2) << dir.out;
    EXPECT_NE(dir.out.find(d.path.string() + ": is a folder; give a file name"), std::string::npos)
        << dir.out;
    // /dev/full fails writes with ENOSPC, as a full disk does: it said "wrote" and exited 0.
    const auto full = run("model import " + cfg + " -o /dev/full");
    EXPECT_EQ(full.exit_code, 2) << full.out;
    EXPECT_NE(full.out.find("/dev/full: cannot write the file (No space left on device)"),
              std::string::npos)
        << full.out;
    EXPECT_EQ(full.out.find("wrote"), std::string::npos) << full.out;
    EXPECT_EQ(fs::status("/dev/full").type(), fs::file_type::character); // not replaced by a file
    EXPECT_EQ(run("model import " + cfg + " -o /dev/null").exit_code, 0);
    EXPECT_EQ(fs::status("/dev/null").type(), fs::file_type::character);
    // A missing folder: exit 2 naming the path; nothing left behind.
    const auto missing = run("model import " + cfg + " -o " + (d.path / "no" / "m.yaml").string());
    EXPECT_EQ(missing.exit_code, 2) << missing.out;
    EXPECT_NE(missing.out.find("m.yaml: cannot write the file (No such file or directory)"),
              std::string::npos)
        << missing.out;
    EXPECT_EQ(entries(d.path), 0u);
}

TEST(CliOutput, ModelImportWritesThroughASymlink) {
    TempDir d("import-link");
    fs::create_symlink("real.yaml", d.path / "link.yaml");
    const auto r = run("model import " + src("tests/fixtures/hf/qwen2.5-7b.json") +
                       " --name my-qwen -o " + (d.path / "link.yaml").string());
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(fs::is_symlink(d.path / "link.yaml"));
    EXPECT_TRUE(fs::is_regular_file(d.path / "real.yaml"));
    EXPECT_EQ(entries(d.path), 2u); // the link and its target, no temporary file
}

TEST(CliOutput, AWriteErrorOnStandardOutputExitsTwo) {
    const auto r = run_stdout_to("hw list --json", "/dev/full");
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(
        r.out.find("error: standard output: cannot write the output (No space left on device)"),
        std::string::npos)
        << r.out;
    EXPECT_EQ(run_stdout_to("hw list --json", "/dev/null").exit_code, 0);
}

TEST(CliOutput, SimulateOutIsCompleteOrAbsent) {
    TempDir d("sim-out");
    const fs::path out = d.path / "run";
    const std::string sim =
        "simulate " + src("examples/simulate-chat.yaml") + " --duration 5 --out ";
    ASSERT_EQ(run(sim + out.string()).exit_code, 0);
    for (const char* f : {"requests.csv", "timeseries.csv", "trace.json", "summary.json"}) {
        EXPECT_TRUE(fs::is_regular_file(out / f)) << f;
    }
    EXPECT_EQ(entries(d.path), 1u); // no temporary folder left beside it
    // A second run replaces the previous run's folder.
    ASSERT_EQ(run(sim + out.string()).exit_code, 0);
    EXPECT_EQ(entries(d.path), 1u);
    // A folder holding anything else is never deleted.
    std::ofstream(out / "notes.txt") << "mine\n";
    const auto foreign = run(sim + out.string());
    EXPECT_EQ(foreign.exit_code, 2) << foreign.out;
    EXPECT_NE(foreign.out.find("holds 'notes.txt', which gpuplan did not write"), std::string::npos)
        << foreign.out;
    EXPECT_TRUE(fs::exists(out / "notes.txt"));
    // A path that is a file is refused, not an internal error.
    const auto file = run(sim + (out / "notes.txt").string());
    EXPECT_EQ(file.exit_code, 2) << file.out;
    EXPECT_NE(file.out.find("exists and is not a folder"), std::string::npos) << file.out;
}

namespace {

// Starts gpuplan with `args` (no shell), sends `sig` once its handler is installed and the run
// is under way, and returns its exit code (-1 when a signal ended it) and its output.
RunResult run_and_signal(const std::vector<std::string>& cli_args, int sig) {
    const fs::path log =
        fs::temp_directory_path() / ("gpuplan-cli-signal-log-" + std::to_string(::getpid()));
    std::vector<std::string> args = {GPUPLAN_CLI};
    args.insert(args.end(), cli_args.begin(), cli_args.end());
    std::vector<char*> argv;
    for (auto& a : args) {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    pid_t pid = 0;
    const int spawned = posix_spawn(&pid, GPUPLAN_CLI, &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) {
        ADD_FAILURE() << "cannot start " << GPUPLAN_CLI;
        return {-2, ""};
    }
    // Wait until the handler is installed, then give the run time to be mid-simulation.
    for (int i = 0; i < 600 && !catches(pid, sig); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    ::kill(pid, sig);
    int status = 0;
    bool ended = false;
    for (int i = 0; i < 1200 && !ended; ++i) { // at most 120 s
        ended = ::waitpid(pid, &status, WNOHANG) == pid;
        if (!ended) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    }
    if (!ended) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        ADD_FAILURE() << "gpuplan did not stop within 120 s of the signal";
    }
    std::ifstream in(log);
    std::ostringstream text;
    text << in.rdbuf();
    fs::remove(log);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

} // namespace

// SIGINT and SIGTERM stop a long simulation at its next safe point: exit 130/143, and the
// --out folder is absent (it was a truncated requests.csv without summary.json).
TEST(CliSignals, InterruptedSimulateExitsWithTheSignalCodeAndWritesNothing) {
    for (const int sig : {SIGINT, SIGTERM}) {
        SCOPED_TRACE(sig == SIGINT ? "SIGINT" : "SIGTERM");
        TempDir d(sig == SIGINT ? "sigint" : "sigterm");
        const fs::path out = d.path / "run";
        const auto r = run_and_signal({"simulate", src("examples/simulate-chat.yaml"), "--duration",
                                       "200000", "--out", out.string()},
                                      sig);
        EXPECT_EQ(r.exit_code, 128 + sig) << r.out;
        EXPECT_NE(r.out.find(sig == SIGINT ? "stopped by SIGINT; no output was written"
                                           : "stopped by SIGTERM; no output was written"),
                  std::string::npos)
            << r.out;
        EXPECT_FALSE(fs::exists(out));
        EXPECT_EQ(entries(d.path), 0u); // no temporary folder either
    }
}

// A sweep's runs all take the token: the whole sweep stops, and no half table is printed.
TEST(CliSignals, InterruptedSweepStopsEveryRun) {
    const auto r = run_and_signal({"simulate", src("examples/simulate-chat.yaml"), "--duration",
                                   "200000", "--sweep", "workload.requests_per_s=10,12"},
                                  SIGINT);
    EXPECT_EQ(r.exit_code, 130) << r.out;
    EXPECT_EQ(r.out.find("workload.requests_per_s"), std::string::npos) << r.out;
}

TEST(CliInput, EndlessOrFolderInputsAreRefusedWithTheirName) {
    // /dev/zero never ends: it was read for gigabytes before the 16 MiB check.
    const auto zero = run("estimate /dev/zero");
    EXPECT_EQ(zero.exit_code, 2) << zero.out;
    EXPECT_NE(zero.out.find("/dev/zero: the scenario file is larger than 16 MiB"),
              std::string::npos)
        << zero.out;
    const auto profile =
        run("estimate " + src("examples/quickstart.yaml") + " --profile /dev/zero");
    EXPECT_EQ(profile.exit_code, 2) << profile.out;
    EXPECT_NE(profile.out.find("/dev/zero: the profile is larger than 16 MiB"), std::string::npos)
        << profile.out;
    const auto config = run("model import /dev/zero");
    EXPECT_EQ(config.exit_code, 2) << config.out;
    EXPECT_NE(config.out.find("/dev/zero: the config.json is larger than 16 MiB"),
              std::string::npos)
        << config.out;
    // A folder given as a scenario said "file is empty".
    TempDir d("folder-scenario");
    const auto folder = run("scenario check " + d.path.string());
    EXPECT_EQ(folder.exit_code, 2) << folder.out;
    EXPECT_NE(folder.out.find(d.path.string() + ": is a folder, not a scenario file"),
              std::string::npos)
        << folder.out;
}

// Issue 18, item 6: models the way users name them.
TEST(Cli, ModelImportReadsTheQuantizationAndNamesTheModelFromItsConfig) {
    const auto awq = run("model import " + src("tests/fixtures/hf/llama-3.1-8b-awq.json"));
    ASSERT_EQ(awq.exit_code, 0) << awq.out;
    EXPECT_NE(awq.out.find("  - name: \"meta-llama-3.1-8b-instruct-awq-int4\""), std::string::npos)
        << awq.out;
    EXPECT_NE(awq.out.find("    weights: \"awq-int4\""), std::string::npos) << awq.out;
    EXPECT_NE(awq.out.find("awq-int4 weights"), std::string::npos) << awq.out; // said on stderr

    // A ModelOpt folder: config.json plus hf_quant_config.json (NVFP4).
    const auto nvfp4 = run("model import " + src("tests/fixtures/hf/modelopt-nvfp4"));
    ASSERT_EQ(nvfp4.exit_code, 0) << nvfp4.out;
    EXPECT_NE(nvfp4.out.find("  - name: \"llama-3.1-8b-instruct-fp4\""), std::string::npos)
        << nvfp4.out;
    EXPECT_NE(nvfp4.out.find("    weights: \"nvfp4\""), std::string::npos) << nvfp4.out;

    // No _name_or_path and no --name: an error, not the folder's name.
    const auto unnamed = run("model import " + src("tests/fixtures/hf/qwen2.5-7b.json"));
    EXPECT_EQ(unnamed.exit_code, 2) << unnamed.out;
    EXPECT_NE(unnamed.out.find("_name_or_path: is missing"), std::string::npos) << unnamed.out;

    // An unsupported quant_method names the file, the key and what is supported.
    const auto dir = std::filesystem::temp_directory_path() / "gpuplan-cli-hqq";
    std::filesystem::create_directories(dir);
    {
        std::ifstream in(src("tests/fixtures/hf/llama-3.1-8b-awq.json"));
        std::stringstream text;
        text << in.rdbuf();
        std::string s = text.str();
        const std::string awq_method = "\"quant_method\": \"awq\"";
        s.replace(s.find(awq_method), awq_method.size(), "\"quant_method\": \"hqq\"");
        std::ofstream(dir / "config.json") << s;
    }
    const auto hqq = run("model import " + (dir / "config.json").string());
    EXPECT_EQ(hqq.exit_code, 2) << hqq.out;
    EXPECT_NE(hqq.out.find("config.json: quantization_config.quant_method: 'hqq' is not supported; "
                           "supported: awq, gptq"),
              std::string::npos)
        << hqq.out;
    std::filesystem::remove_all(dir);
}

TEST(Cli, DidYouMeanKeepsTheFamilyAndSize) {
    const auto r = run("fit --model Llama-3-70B --gpu h100-sxm");
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.out.find("unknown model 'Llama-3-70B'; did you mean 'llama-3.1-70b'?"),
              std::string::npos)
        << r.out;
}

TEST(Cli, HuggingFaceIdsResolveToTheCatalogWithTheirQuantization) {
    const auto awq = run("fit --model Qwen/Qwen2.5-72B-Instruct-AWQ --gpu h100-sxm --tp 2");
    ASSERT_EQ(awq.exit_code, 0) << awq.out;
    EXPECT_NE(awq.out.find("qwen2.5-72b on 2 x h100-sxm (tp 2, pp 1, dp 1), weights awq-int4"),
              std::string::npos)
        << awq.out;
    EXPECT_NE(awq.out.find("note: model 'Qwen/Qwen2.5-72B-Instruct-AWQ' is planned as catalog "
                           "model 'qwen2.5-72b'"),
              std::string::npos)
        << awq.out;
    // --weights still wins.
    const auto bf16 =
        run("fit --model Qwen/Qwen2.5-72B-Instruct-AWQ --gpu h100-sxm --tp 4 --weights bf16");
    ASSERT_EQ(bf16.exit_code, 0) << bf16.out;
    EXPECT_NE(bf16.out.find("weights bf16"), std::string::npos) << bf16.out;
    // A scenario whose weights followed its model's checkpoint follows the new --model.
    const auto file = run("fit " + src("examples/llama70b-4xh100.yaml") +
                          " --model Qwen/Qwen2.5-72B-Instruct-AWQ");
    ASSERT_EQ(file.exit_code, 0) << file.out;
    EXPECT_NE(file.out.find("weights awq-int4"), std::string::npos) << file.out;
}

TEST(Cli, HuggingFaceIdsResolveFromTheLocalCache) {
    namespace fs = std::filesystem;
    const fs::path home = fs::temp_directory_path() / "gpuplan-cli-hf-home";
    fs::remove_all(home);
    const fs::path repo = home / "hub" / "models--example-org--Custom-Llama";
    fs::create_directories(repo / "snapshots" / "0123abcd");
    fs::create_directories(repo / "refs");
    std::ofstream(repo / "refs" / "main") << "0123abcd";
    fs::copy_file(src("tests/fixtures/hf/llama-3.1-8b-gptq-g32.json"),
                  repo / "snapshots" / "0123abcd" / "config.json");
    const char* saved_hub = std::getenv("HF_HUB_CACHE");
    const std::string hub_value = saved_hub ? saved_hub : "";
    unsetenv("HF_HUB_CACHE");
    setenv("HF_HOME", home.c_str(), 1); // the CLI inherits it

    const auto est = run("estimate --model example-org/Custom-Llama --gpu h100-sxm");
    EXPECT_EQ(est.exit_code, 0) << est.out;
    EXPECT_NE(est.out.find("custom-llama"), std::string::npos) << est.out;
    EXPECT_NE(est.out.find("gptq-int4:g32"), std::string::npos) << est.out;

    const auto imported = run("model import example-org/Custom-Llama");
    EXPECT_EQ(imported.exit_code, 0) << imported.out;
    EXPECT_NE(imported.out.find("  - name: \"custom-llama\""), std::string::npos) << imported.out;
    EXPECT_NE(imported.out.find("    weights: \"gptq-int4:g32\""), std::string::npos)
        << imported.out;

    const auto missing = run("fit --model example-org/Not-Downloaded --gpu h100-sxm");
    EXPECT_EQ(missing.exit_code, 2) << missing.out;
    EXPECT_NE(missing.out.find((home / "hub").string()), std::string::npos) << missing.out;
    EXPECT_EQ(run("model import example-org/Not-Downloaded").exit_code, 2);

    unsetenv("HF_HOME");
    if (saved_hub) {
        setenv("HF_HUB_CACHE", hub_value.c_str(), 1);
    }
    fs::remove_all(home);
}

TEST(Cli, PrefixRoutingExampleBeatsLeastOutstandingAndBadRoutersExitTwo) {
    const std::string ex =
        "simulate " + src("examples/prefix-routing-rag.yaml") + " --requests 600 --json";
    const auto lp = run(ex);
    const auto lo = run(ex + " --set cluster.router=least_outstanding");
    ASSERT_EQ(lp.exit_code, 0) << lp.out;
    ASSERT_EQ(lo.exit_code, 0) << lo.out;
    for (const auto* r : {&lp, &lo}) {
        for (const char* key : {"\"routing\"", "\"request_imbalance\"", "\"outstanding_imbalance\"",
                                "\"prefix_hit_tokens\"", "\"outstanding_mean\""}) {
            EXPECT_NE(r->out.find(key), std::string::npos) << key;
        }
    }
    EXPECT_NE(lp.out.find("\"router\": \"longest_prefix\""), std::string::npos);
    // The top-level figures (keys are sorted: throughput_tok_s comes before the overall ttft_s).
    const auto ttft_mean = [](const std::string& out) {
        return json_number(out, "mean", out.find("\"ttft_s\"", out.find("\"throughput_tok_s\"")));
    };
    EXPECT_GT(json_number(lp.out, "prefix_hit_rate"), json_number(lo.out, "prefix_hit_rate") + 0.2);
    EXPECT_LT(ttft_mean(lp.out), ttft_mean(lo.out));
    EXPECT_GE(json_number(lp.out, "request_imbalance"), 1.0);
    // Text: a routing line with one hit rate per replica.
    const auto text = run("simulate " + src("examples/prefix-routing-rag.yaml") + " --requests 50");
    ASSERT_EQ(text.exit_code, 0) << text.out;
    EXPECT_NE(text.out.find("routing      longest_prefix: prefix hit rate"), std::string::npos)
        << text.out;
    // Bad input: exit 2 naming the file, line and column, or the flag.
    const auto dir = std::filesystem::temp_directory_path() /
                     ("gpuplan-cli-routing-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto bad = dir / "bad.yaml";
    std::ofstream(bad) << "schema: 1\nmodel: llama-3.1-8b\nhardware:\n  accelerator: h100-sxm\n"
                          "cluster:\n  router: weighted\n  prefix_routing: {weight: -0.1}\n";
    const auto b = run("simulate " + bad.string());
    EXPECT_EQ(b.exit_code, 2) << b.out;
    EXPECT_NE(b.out.find("bad.yaml:7:28: cluster.prefix_routing.weight"), std::string::npos)
        << b.out;
    const auto flag = run("simulate " + src("examples/prefix-routing-rag.yaml") +
                          " --set cluster.router=longest");
    EXPECT_EQ(flag.exit_code, 2) << flag.out;
    EXPECT_NE(flag.out.find("longest_prefix"), std::string::npos) << flag.out;
    EXPECT_EQ(run("simulate " + src("examples/prefix-routing-rag.yaml") +
                  " --set cluster.prefix_routing.balance_abs_threshold=-1")
                  .exit_code,
              2);
    std::filesystem::remove_all(dir);
}

TEST(Cli, HeterogeneousPoolsReportCostPerPoolAndBadPoolsExitTwo) {
    const auto r =
        run("simulate " + src("examples/heterogeneous-h100-l4.yaml") + " --requests 100 --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    for (const char* key : {"\"pools\"", "\"gpu_hours\"", "\"cost_per_hour\"", "\"accelerator\""}) {
        EXPECT_NE(r.out.find(key), std::string::npos) << key;
    }
    // Six L4s at $0.40/h (the example's rent).
    EXPECT_NE(r.out.find("\"cost_per_hour\": 2.4"), std::string::npos) << r.out;
    const auto text =
        run("simulate " + src("examples/heterogeneous-h100-l4.yaml") + " --requests 50");
    ASSERT_EQ(text.exit_code, 0) << text.out;
    EXPECT_NE(text.out.find("pool         short: 6 x l4 (6 GPUs)"), std::string::npos) << text.out;
    const auto bad = run("simulate " + src("examples/heterogeneous-h100-l4.yaml") +
                         " --set cluster.pools.1.classes=[chta]");
    EXPECT_EQ(bad.exit_code, 2) << bad.out;
    EXPECT_NE(bad.out.find("no request class is named 'chta'"), std::string::npos) << bad.out;
    // The sizing search does not search pools: it says so instead of sizing something else.
    const auto plan = run("plan " + src("examples/heterogeneous-h100-l4.yaml"));
    EXPECT_EQ(plan.exit_code, 2) << plan.out;
    EXPECT_NE(plan.out.find("cluster.pools are not searched"), std::string::npos) << plan.out;
}

TEST(Cli, OwnedPoolCostIsReportedApartFromRented) {
    const std::string ex = src("examples/heterogeneous-h100-l4.yaml");
    const auto r = run("simulate " + ex + " --requests 60 --set cluster.pools.1.owned=true --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    const auto& pools = j.at("pools");
    ASSERT_EQ(pools.size(), 2u);
    EXPECT_FALSE(pools[0].at("owned").get<bool>());
    EXPECT_TRUE(pools[1].at("owned").get<bool>());
    EXPECT_EQ(pools[1].at("owned_gpus").get<int>(), 6); // 6 x L4, tp 1, fixed
    // A fixed pool is up for the whole run, so owned it costs its GPU-hours x $0.40 as well.
    const double owned = pools[1].at("gpu_hours").get<double>() * 0.40;
    EXPECT_NEAR(pools[1].at("cost").get<double>(), owned, 1e-9);
    const auto& c = j.at("pool_cost");
    EXPECT_NEAR(c.at("owned").get<double>(), owned, 1e-9);
    EXPECT_NEAR(c.at("rented").get<double>(), pools[0].at("gpu_hours").get<double>() * 2.99, 1e-9);
    EXPECT_NEAR(c.at("total").get<double>(),
                c.at("owned").get<double>() + c.at("rented").get<double>(), 1e-9);
    const auto text = run("simulate " + ex + " --requests 30 --set cluster.pools.1.owned=true");
    ASSERT_EQ(text.exit_code, 0) << text.out;
    EXPECT_NE(text.out.find("/h owned)"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("pool cost    "), std::string::npos) << text.out;
    const auto bad = run("simulate " + ex + " --set cluster.pools.1.owned=maybe");
    EXPECT_EQ(bad.exit_code, 2) << bad.out;
    EXPECT_NE(bad.out.find("owned"), std::string::npos) << bad.out;
}

TEST(Cli, DisaggregationReportsTransfersAndPoolsInSimulateAndPlan) {
    const std::string ex = src("examples/disaggregated-llama70b-h100.yaml");
    const auto j = run("simulate " + ex + " --requests 40 --json");
    ASSERT_EQ(j.exit_code, 0) << j.out;
    for (const char* key : {"\"disaggregation\"", "\"transfer_time\"", "\"link_utilisation\"",
                            "\"decode_queue\"", "\"prefill_queue\"", "\"pools\""}) {
        EXPECT_NE(j.out.find(key), std::string::npos) << key;
    }
    EXPECT_NE(j.out.find("\"transfers\": 40"), std::string::npos) << j.out;
    const auto text = run("simulate " + ex + " --requests 20");
    ASSERT_EQ(text.exit_code, 0) << text.out;
    EXPECT_NE(text.out.find("KV transfer  20 over ib-ndr (layerwise"), std::string::npos)
        << text.out;
    EXPECT_NE(text.out.find("pool         prefill: 2 x h100-sxm (8 GPUs)"), std::string::npos)
        << text.out;
    // Switched off: the co-located run, without the section.
    const auto off = run("simulate " + ex + " --requests 20 --set cluster.disaggregation=null");
    ASSERT_EQ(off.exit_code, 0) << off.out;
    EXPECT_EQ(off.out.find("KV transfer"), std::string::npos) << off.out;
    // plan: the co-located search, and the P:D layouts of the 16 GPUs beside it.
    const auto plan = run("plan " + ex + " --json");
    ASSERT_EQ(plan.exit_code, 0) << plan.out;
    for (const char* key : {"\"disaggregation\"", "\"layouts\"", "\"verdict\"",
                            "\"2P x tp4 : 2D x tp4\"", "\"4 x tp4 co-located\""}) {
        EXPECT_NE(plan.out.find(key), std::string::npos) << key << plan.out;
    }
    const auto plan_text = run("plan " + ex);
    ASSERT_EQ(plan_text.exit_code, 0) << plan_text.out;
    EXPECT_NE(plan_text.out.find("wins at 16 GPUs"), std::string::npos) << plan_text.out;
    // A null link_bandwidth beside link is absent, not an unknown key.
    const auto null_bw =
        run("simulate " + ex + " --requests 20 --set cluster.disaggregation.link_bandwidth=null");
    EXPECT_EQ(null_bw.exit_code, 0) << null_bw.out;
    EXPECT_NE(null_bw.out.find("KV transfer  20 over ib-ndr"), std::string::npos) << null_bw.out;
    const auto bad = run("simulate " + ex + " --set cluster.disaggregation.link=ib-xyz");
    EXPECT_EQ(bad.exit_code, 2) << bad.out;
    EXPECT_NE(bad.out.find("ib-xyz"), std::string::npos) << bad.out;
}

TEST(Cli, AutoscalerAndFailuresReportAndBadBlocksExitTwo) {
    const auto a = run("simulate " + src("examples/autoscaling-llama8b-diurnal.yaml") +
                       " --requests 200 --json");
    ASSERT_EQ(a.exit_code, 0) << a.out;
    for (const char* key : {"\"autoscaler\"", "\"replica_seconds\"", "\"scale_ups\"",
                            "\"peak_replicas\"", "\"timeline\""}) {
        EXPECT_NE(a.out.find(key), std::string::npos) << key;
    }
    const auto text =
        run("simulate " + src("examples/autoscaling-llama8b-diurnal.yaml") + " --requests 100");
    ASSERT_EQ(text.exit_code, 0) << text.out;
    EXPECT_NE(text.out.find("autoscaler   utilisation target 0.60"), std::string::npos) << text.out;
    const auto range = run("simulate " + src("examples/autoscaling-llama8b-diurnal.yaml") +
                           " --set cluster.replicas=9");
    EXPECT_EQ(range.exit_code, 2) << range.out;
    EXPECT_NE(range.out.find("outside [min_replicas, max_replicas]"), std::string::npos)
        << range.out;
    const auto f = run("simulate " + src("examples/failures-serving-sim-llama8b-h100.yaml") +
                       " --requests 100 --json");
    ASSERT_EQ(f.exit_code, 0) << f.out;
    for (const char* key :
         {"\"failures\"", "\"availability\"", "\"requests_lost\"", "\"expected_availability\""}) {
        EXPECT_NE(f.out.find(key), std::string::npos) << key;
    }
    const auto bad = run("simulate " + src("examples/failures-serving-sim-llama8b-h100.yaml") +
                         " --set cluster.failures.in_flight=drop");
    EXPECT_EQ(bad.exit_code, 2) << bad.out;
    EXPECT_NE(bad.out.find("retry"), std::string::npos) << bad.out;
}

// Autoscaler and failures together run (exit 0) with the SLO windows and availability; what
// is still refused exits 2 saying why and how.
TEST(Cli, AutoscalerWithFailuresRunsAndTheRestIsRefusedWithWhyAndHow) {
    const std::string ex = src("examples/failures-serving-sim-autoscaled-llama8b-h100.yaml");
    const auto j = run("simulate " + ex + " --requests 300 --json");
    ASSERT_EQ(j.exit_code, 0) << j.out;
    for (const char* key : {"\"autoscaler\"", "\"failures\"", "\"availability\"", "\"slo_windows\"",
                            "\"slo_window_s\""}) {
        EXPECT_NE(j.out.find(key), std::string::npos) << key;
    }
    const auto text = run("simulate " + ex + " --requests 300");
    ASSERT_EQ(text.exit_code, 0) << text.out;
    EXPECT_NE(text.out.find("over time    "), std::string::npos) << text.out;
    const auto scale = run("simulate " + ex + " --set 'cluster.scale=[{at: 10 s, replicas: 2}]'");
    EXPECT_EQ(scale.exit_code, 2) << scale.out;
    EXPECT_NE(scale.out.find("leave cluster.scale out"), std::string::npos) << scale.out;
    const auto pools = run("simulate " + src("examples/heterogeneous-h100-l4.yaml") +
                           " --set 'cluster.failures={spares: 1}'");
    EXPECT_EQ(pools.exit_code, 2) << pools.out;
    EXPECT_NE(pools.out.find("simulate each pool as its own scenario"), std::string::npos)
        << pools.out;
}

// --- training with failures and serving availability (issue 15) ---

namespace {

/// P(at least n of n + k up), each up with probability p: the binomial sum, term by term.
double binomial_at_least(int n, int k, double p) {
    double sum = 0;
    for (int down = 0; down <= k; ++down) {
        double c = 1; // C(n + k, down)
        for (int i = 0; i < down; ++i) {
            c = c * (n + k - i) / (i + 1);
        }
        sum += c * std::pow(1 - p, down) * std::pow(p, n + k - down);
    }
    return sum;
}

std::string write_temp(const std::string& name, const std::string& text) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("gpuplan-cli-failures-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto file = dir / name;
    std::ofstream(file) << text;
    return file.string();
}

} // namespace

namespace {

double number_after(const std::string& text, const std::string& key) {
    const auto pos = text.find("\"" + key + "\": ");
    if (pos == std::string::npos) {
        ADD_FAILURE() << "no key " << key << " in " << text.substr(0, 400);
        return -1;
    }
    return std::stod(text.substr(pos + key.size() + 4));
}

} // namespace

TEST(Cli, TrainWithFailuresReportsTheYoungIntervalGoodputAndSpares) {
    const auto r =
        run("train " + src("examples/failures-training-llama70b-1024xh100.yaml") + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto f = r.out.find("\"failures\"");
    ASSERT_NE(f, std::string::npos) << r.out;
    const double params = json_number(r.out, "params");
    // Checkpoint: 2 B of 16-bit weights + 12 B of fp32 master weights and Adam moments per
    // parameter, written at the example's 100 GB/s and read back at 200 GB/s + 10 min.
    const double bytes = json_number(r.out, "checkpoint_bytes", f);
    EXPECT_NEAR(bytes, 14.0 * params, 1.0);
    const double delta = json_number(r.out, "checkpoint_time_s", f);
    EXPECT_NEAR(delta, bytes / 100e9, 1e-9);
    EXPECT_NEAR(json_number(r.out, "restart_time_s", f), bytes / 200e9 + 600.0, 1e-9);
    // The job stops when any of its 1,024 GPUs does: Llama 3's 54 d × 16,384 GPUs / 419.
    const double m = 54.0 * 86400.0 * 16384.0 / 419.0 / 1024.0;
    EXPECT_NEAR(json_number(r.out, "job_mtbf_s", f), m, 1e-6);
    EXPECT_NEAR(json_number(r.out, "interval_s", f), std::sqrt(2.0 * delta * m), 1e-6);
    const double without = json_number(r.out, "time_without_failures_s", f);
    EXPECT_DOUBLE_EQ(without, json_number(r.out, "time_to_train_s"));
    const double with = json_number(r.out, "expected_time_s", f);
    EXPECT_GT(with, without);
    EXPECT_NEAR(json_number(r.out, "goodput", f), without / with, 1e-12);
    // GPU-hours and rent over the expected time: 1,024 GPUs at the example's $2.99/h.
    const double gpu_hours = with * 1024 / 3600.0;
    EXPECT_NEAR(json_number(r.out, "gpu_hours", f), gpu_hours, 1e-6);
    EXPECT_NEAR(json_number(r.out, "amount", r.out.find("\"rent\"", f)), 2.99 * gpu_hours, 1e-3);
    // Spares: 128 nodes of MTBF m × 128, repaired in 24 h; the smallest k reaching 0.99.
    const double node_m = m * 1024.0 / 8.0;
    const double p = node_m / (node_m + 24 * 3600.0);
    const int k = static_cast<int>(json_number(r.out, "spare_nodes", f));
    EXPECT_GE(binomial_at_least(128, k, p), 0.99);
    EXPECT_LT(binomial_at_least(128, k - 1, p), 0.99);
    const auto text = run("train " + src("examples/failures-training-llama70b-1024xh100.yaml"));
    ASSERT_EQ(text.exit_code, 0) << text.out;
    EXPECT_NE(text.out.find("goodput"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("spare nodes"), std::string::npos) << text.out;
    // No failures block: no failure figures.
    const auto plain = run("train " + src("examples/train-llama70b-2x8xh100.yaml") + " --json");
    EXPECT_EQ(plain.out.find("\"failures\""), std::string::npos);
}

TEST(Cli, EstimateAnswersTheAvailabilityBlock) {
    const auto r =
        run("estimate " + src("examples/failures-serving-llama70b-16x4xh100.yaml") + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto a = r.out.find("\"availability\": {");
    ASSERT_NE(a, std::string::npos) << r.out;
    // A replica of 4 GPUs: MTBF = 50,676.5 h / 4, MTTR 4 h; 16 needed, target 0.9999.
    const double mtbf = 54.0 * 86400.0 * 16384.0 / 419.0 / 4.0;
    const double p = mtbf / (mtbf + 4 * 3600.0);
    EXPECT_NEAR(json_number(r.out, "replica_availability", a), p, 1e-12);
    EXPECT_NEAR(json_number(r.out, "availability_without_spares", a), std::pow(p, 16), 1e-12);
    EXPECT_EQ(json_number(r.out, "spares", a), 1);
    // One spare: p^17 + 17 p^16 (1 − p).
    EXPECT_NEAR(json_number(r.out, "availability", a + 1),
                std::pow(p, 17) + 17 * std::pow(p, 16) * (1 - p), 1e-12);
    const auto text = run("estimate " + src("examples/failures-serving-llama70b-16x4xh100.yaml"));
    EXPECT_NE(text.out.find("spares needed        1"), std::string::npos) << text.out;
}

TEST(Cli, PlanAnswersTheAvailabilityBlockForItsBestConfiguration) {
    std::ifstream in(src("examples/plan-search.yaml"));
    std::stringstream text;
    text << in.rdbuf() << "availability:\n  mttr: 24 h\n  target: 0.99999\n";
    const auto r = run("plan " + write_temp("plan-av.yaml", text.str()) + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const int replicas = static_cast<int>(json_number(r.out, "replicas"));
    const int gpus = static_cast<int>(json_number(r.out, "tp") * json_number(r.out, "pp"));
    const auto a = r.out.find("\"availability\": {");
    ASSERT_NE(a, std::string::npos) << r.out;
    EXPECT_EQ(json_number(r.out, "replicas_needed", a), replicas);
    const double mtbf = 54.0 * 86400.0 * 16384.0 / 419.0 / gpus;
    const double p = mtbf / (mtbf + 24 * 3600.0);
    const int k = static_cast<int>(json_number(r.out, "spares", a));
    EXPECT_GE(binomial_at_least(replicas, k, p), 0.99999);
    if (k > 0) {
        EXPECT_LT(binomial_at_least(replicas, k - 1, p), 0.99999);
    }
}

TEST(Cli, BadFailureOrAvailabilityValuesExitTwoWithTheirPlace) {
    const std::string train = "schema: 1\nmodel: llama-3.1-8b\nhardware:\n  accelerator: h100-sxm\n"
                              "  node: dgx-h100\n  count: 16\ntraining:\n  tokens: 1e9\n"
                              "  global_batch: 64\n  seq_len: 4096\n  tp: 8\n  failures:\n";
    const auto neg = run("train " + write_temp("neg.yaml", train + "    gpu_mtbf: -100 h\n"));
    EXPECT_EQ(neg.exit_code, 2);
    EXPECT_NE(neg.out.find("neg.yaml:13:15: training.failures.gpu_mtbf"), std::string::npos)
        << neg.out;
    // A rate so high that the expected time overflows is a result ("never finishes"), not an
    // internal error with a non-finite number.
    const auto never =
        run("train " + write_temp("never.yaml", train + "    gpu_mtbf: 10 s\n") + " --json");
    EXPECT_EQ(never.exit_code, 0) << never.out;
    EXPECT_NE(never.out.find("\"finishes\": false"), std::string::npos) << never.out;
    EXPECT_NE(never.out.find("\"expected_time_s\": null"), std::string::npos) << never.out;
    const auto one = run("train " + write_temp("one.yaml", train + "    spares_target: 1\n"));
    EXPECT_EQ(one.exit_code, 2);
    EXPECT_NE(one.out.find("one.yaml:13:20: training.failures.spares_target"), std::string::npos)
        << one.out;
    const std::string serve = "schema: 1\nmodel: llama-3.1-8b\nhardware:\n  accelerator: h100-sxm\n"
                              "availability:\n  target: 1.0\n";
    const auto target = run("estimate " + write_temp("target.yaml", serve));
    EXPECT_EQ(target.exit_code, 2);
    EXPECT_NE(target.out.find("target.yaml:6:11: availability.target"), std::string::npos)
        << target.out;
    EXPECT_NE(target.out.find("strictly between 0 and 1"), std::string::npos) << target.out;
}

// The speculative example: the accepted length is the closed form for α = 0.7 and k = 4,
// (1 − 0.7⁵) / 0.3 = 2.7731, and the gain over plain decoding shrinks from concurrency 1 to 64.
TEST(Cli, SpeculativeExampleReportsTokensPerStepAndAShrinkingGain) {
    const std::string f = src("examples/speculative-llama70b-h100.yaml");
    const auto one = run("estimate " + f + " --json --set workload.concurrency=1");
    ASSERT_EQ(one.exit_code, 0) << one.out;
    EXPECT_NEAR(number_after(one.out, "tokens_per_step"), 2.7731, 1e-9);
    const auto many = run("estimate " + f + " --json --set workload.concurrency=64");
    ASSERT_EQ(many.exit_code, 0) << many.out;
    const double gain_one = number_after(one.out, "speedup");
    const double gain_many = number_after(many.out, "speedup");
    EXPECT_GT(gain_one, 1.2);
    EXPECT_LT(gain_many, gain_one);
    EXPECT_NEAR(gain_one, number_after(one.out, "tpot_without_s") / number_after(one.out, "tpot_s"),
                1e-9);
    const auto text = run("estimate " + f);
    EXPECT_NE(text.out.find("tokens/step, acceptance 0.70"), std::string::npos) << text.out;
    const auto sim = run("simulate " + f + " --requests 40 --json");
    ASSERT_EQ(sim.exit_code, 0) << sim.out;
    EXPECT_NEAR(number_after(sim.out, "expected_tokens_per_step"), 2.7731, 1e-9);
    EXPECT_GT(number_after(sim.out, "draft_time_s"), 0.0);
}

TEST(Cli, SpeculativeBadInputExitsTwoNamingTheKey) {
    const std::string f = src("examples/speculative-llama70b-h100.yaml");
    const auto k0 = run("estimate " + f + " --set engine.speculative.num_speculative_tokens=0");
    EXPECT_EQ(k0.exit_code, 2) << k0.out;
    EXPECT_NE(k0.out.find("engine.speculative.num_speculative_tokens: 0 draft tokens per step; "
                          "give a whole number from 1 to 64"),
              std::string::npos)
        << k0.out;
    const auto alpha = run("estimate " + f + " --set engine.speculative.acceptance_rate=1");
    EXPECT_EQ(alpha.exit_code, 2) << alpha.out;
    EXPECT_NE(alpha.out.find("acceptance_rate: 1 is outside [0, 1)"), std::string::npos)
        << alpha.out;
    const auto draft = run("simulate " + f + " --set engine.speculative.draft_model=llama-9-1b");
    EXPECT_EQ(draft.exit_code, 2) << draft.out;
    EXPECT_NE(draft.out.find("engine.speculative.draft_model: unknown model 'llama-9-1b'"),
              std::string::npos)
        << draft.out;
}

// plan.speculative: [on, off] makes speculation a dimension: each layout appears with and
// without it, and the speculative row serves more tokens for the same GPUs (lower cost per
// million tokens at the example's concurrency 8).
TEST(Cli, PlanSearchesSpeculationOnAndOff) {
    const auto r = run("plan " + src("examples/speculative-llama70b-h100.yaml"));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("h100-sxm@dgx-h100 tp4 spec x1"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("h100-sxm@dgx-h100 tp4 x1"), std::string::npos) << r.out;
    const auto j = run("plan " + src("examples/speculative-llama70b-h100.yaml") + " --json");
    ASSERT_EQ(j.exit_code, 0) << j.out;
    EXPECT_NE(j.out.find("\"speculative\": true"), std::string::npos);
}

// The Chrome/Perfetto trace shows the proposer's part of each speculative step.
TEST(Cli, SpeculativeStepsCarryTheirDraftTimeInTheTrace) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("gpuplan-spec-trace-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    const auto r = run("simulate " + src("examples/speculative-llama70b-h100.yaml") +
                       " --requests 10 --out " + dir.string());
    ASSERT_EQ(r.exit_code, 0) << r.out;
    std::ifstream in(dir / "trace.json");
    std::stringstream trace;
    trace << in.rdbuf();
    EXPECT_NE(trace.str().find("\"draft_ms\":"), std::string::npos);
    std::filesystem::remove_all(dir);
}

// plan --fleet (docs/fleet.md): the owned-against-rented answer for the example year, with the
// owned and rented prices worked out by hand from the example's inputs.
TEST(Cli, PlanFleetAnswersOwnedAgainstRentedForTheExampleYear) {
    const std::string ex = src("examples/fleet-year-llama70b-h100.yaml");
    const auto r = run("plan " + ex + " --fleet --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_EQ(json_number(r.out, "steps"), 8760);
    // DGX H100 $270,000, 10 % resale over 4 years, 5 %/year support, per hour of a 365-day year.
    const double owned_h = (270000.0 * 0.9 / 4 + 0.05 * 270000.0) / 8760.0;
    EXPECT_NEAR(json_number(r.out, "owned_per_hour"), owned_h, 1e-9);
    EXPECT_NEAR(json_number(r.out, "rent_per_hour"), 8 * 2.99, 1e-9);
    const int best = static_cast<int>(json_number(r.out, "best_owned"));
    EXPECT_GT(best, 0);
    // The answer owns the replicas busier than the break-even share of the hours, and no more.
    const double even = json_number(r.out, "break_even_utilisation");
    const auto share = [&](int b) {
        const auto at = r.out.find("\"owned\": " + std::to_string(b) + ",");
        EXPECT_NE(at, std::string::npos) << b;
        return json_number(r.out, "share_of_hours", at);
    };
    EXPECT_GT(share(best), even);
    EXPECT_LT(share(best + 1), even);
    const auto total = r.out.find("\"total\": {");
    ASSERT_NE(total, std::string::npos);
    const double owned_cost = json_number(r.out, "owned_cost", total);
    const int spares = static_cast<int>(json_number(r.out, "spares", r.out.find("\"scenario\"")));
    EXPECT_NEAR(owned_cost, (best + spares) * owned_h * 8760.0, 1e-6 * owned_cost);
    // The text report says the same, and --set reaches the fleet block.
    const auto text = run("plan " + ex + " --fleet");
    ASSERT_EQ(text.exit_code, 0) << text.out;
    EXPECT_NE(text.out.find("answer       own " + std::to_string(best) + " replicas"),
              std::string::npos)
        << text.out;
    const auto day = run("plan " + ex + " --fleet --set fleet.span=day --json");
    ASSERT_EQ(day.exit_code, 0) << day.out;
    EXPECT_EQ(json_number(day.out, "steps"), 24);
}

TEST(Cli, PlanFleetErrorsExitTwo) {
    const std::string ex = src("examples/fleet-year-llama70b-h100.yaml");
    const auto closed = run("plan " + src("examples/quickstart.yaml") + " --fleet");
    EXPECT_EQ(closed.exit_code, 2);
    EXPECT_NE(closed.out.find("the fleet needs an offered rate"), std::string::npos) << closed.out;
    const auto emit = run("plan " + ex + " --fleet --emit vllm");
    EXPECT_EQ(emit.exit_code, 2);
    EXPECT_NE(emit.out.find("--fleet"), std::string::npos) << emit.out;
    const auto step = run("plan " + ex + " --fleet --set fleet.step='7 h'");
    EXPECT_EQ(step.exit_code, 2);
    EXPECT_NE(step.out.find("fleet.step must divide a day"), std::string::npos) << step.out;
}

// The KV offload example: the host tier serves document sets the GPU's pool cannot hold, so the
// simulated prefix hit rate rises and TTFT falls against the same file without the block; the
// load time is the loaded bytes over the host link (64 GB/s for the H100 SXM's PCIe 5.0 x16).
TEST(Cli, KvOffloadExampleRaisesTheHitRateAndReportsTheTiers) {
    const std::string f = src("examples/kv-offload-rag-llama8b.yaml");
    const auto with = run("simulate " + f + " --requests 300 --json");
    ASSERT_EQ(with.exit_code, 0) << with.out;
    const auto without =
        run("simulate " + f + " --requests 300 --json --set engine.kv_offload=null");
    ASSERT_EQ(without.exit_code, 0) << without.out;
    EXPECT_EQ(without.out.find("\"kv_offload\""), std::string::npos);
    EXPECT_GT(number_after(with.out, "prefix_hit_rate"),
              number_after(without.out, "prefix_hit_rate") + 0.1);
    const auto host_of = [&](const std::string& key) { // "key": {"host": x, ...}
        const auto at = with.out.find("\"" + key + "\": {");
        EXPECT_NE(at, std::string::npos) << key;
        return number_after(with.out.substr(at), "host");
    };
    const double bytes = host_of("loaded_bytes");
    EXPECT_GT(bytes, 0.0);
    EXPECT_NEAR(host_of("load_time_s"), bytes / 64e9, 1e-9);
    const auto text = run("simulate " + f + " --requests 300");
    EXPECT_NE(text.out.find("KV offload   hits: GPU"), std::string::npos) << text.out;
    const auto est = run("estimate " + f + " --json");
    ASSERT_EQ(est.exit_code, 0) << est.out;
    EXPECT_GT(number_after(est.out, "hit_rate"), number_after(est.out, "hit_rate_without"));
}

// plan compares KV offload on the answer (docs/plan.md, "KV offload and LoRA slots"): on the
// example 144,000 prefix tokens overflow a 49,152-token pool, so a host tier wins over off with
// host hits; on plan-search's 6,400 prefix tokens the GPU holds them all and off is the answer.
TEST(Cli, PlanComparesKvOffloadOnTheAnswer) {
    const auto r = run("plan " + src("examples/kv-offload-rag-llama8b.yaml") + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    const auto& c = j.at("kv_offload_choice");
    EXPECT_TRUE(c.at("choice").get<bool>());
    const std::string chosen = c.at("chosen").get<std::string>();
    EXPECT_NE(chosen, "off");
    EXPECT_NE(c.at("verdict").get<std::string>().find(chosen + " wins over off"),
              std::string::npos);
    ASSERT_FALSE(c.at("options").empty());
    for (const char* key :
         {"name", "scenario", "simulated", "meets_slo", "slo_attainment", "ttft_mean_s",
          "ttft_at_percentile_s", "tpot_at_percentile_s", "kv_tokens", "host_bytes",
          "prefix_hit_rate", "gpu_hit_rate", "host_hit_rate", "nvme_hit_rate"}) {
        EXPECT_TRUE(c.at("options").front().contains(key)) << key;
    }
    EXPECT_GT(c.at("options").front().at("host_hit_rate").get<double>(), 0.0);
    const auto text = run("plan " + src("examples/kv-offload-rag-llama8b.yaml"));
    EXPECT_NE(text.out.find("offload answer " + chosen + " wins over off"), std::string::npos)
        << text.out;
    const auto fit = run("plan " + src("examples/plan-search.yaml") + " --json");
    ASSERT_EQ(fit.exit_code, 0) << fit.out;
    const auto f = nlohmann::json::parse(fit.out).at("kv_offload_choice");
    EXPECT_EQ(f.at("chosen").get<std::string>(), "off");
    for (const auto& o : f.at("options")) {
        EXPECT_EQ(o.at("host_hit_rate").get<double>(), 0.0);
    }
}

TEST(Cli, KvOffloadBadInputExitsTwoNamingTheKey) {
    const std::string f = src("examples/kv-offload-rag-llama8b.yaml");
    const auto neg = run("simulate " + f + " --set 'engine.kv_offload.nvme=-1 TB'");
    EXPECT_EQ(neg.exit_code, 2) << neg.out;
    EXPECT_NE(neg.out.find("engine.kv_offload.nvme: '-1 TB' must be zero or more"),
              std::string::npos)
        << neg.out;
    const auto none = run("estimate " + f + " --set 'engine.kv_offload.host=0 GiB'");
    EXPECT_EQ(none.exit_code, 2) << none.out;
    EXPECT_NE(none.out.find("engine.kv_offload.host: both tiers are 0 bytes"), std::string::npos)
        << none.out;
    const auto nocache = run("simulate " + f + " --set engine.enable_prefix_caching=false");
    EXPECT_EQ(nocache.exit_code, 2) << nocache.out;
    EXPECT_NE(nocache.out.find("engine.kv_offload: KV offload tiers hold prefix-cache blocks"),
              std::string::npos)
        << nocache.out;
}

// A profile naming a GEMM kernel class gpuplan does not have (model/gemm_class.hpp) is refused
// with its file, line and key, exit 2; the block-scaled classes it has are accepted.
TEST(CliInput, ProfileWithAnUnknownKernelClassIsRefusedWithItsPlace) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("gpuplan-cli-kernel-class-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto write = [&](const std::string& name, const std::string& scales) {
        const auto path = dir / name;
        std::ofstream(path) << "schema: 1\nprofile:\n  name: x\n  gpu: h100-sxm\n"
                               "  provenance: {kind: spec-sheet, description: d}\n"
                               "  gemm: {e_max: 0.7, dtype_scale: {"
                            << scales
                            << "}}\n"
                               "  memory: {max: 0.8, half: 2 MiB}\n"
                               "  attention_prefill: {max: 0.7, half: 1024}\n"
                               "  attention_decode: {max: 0.9, half: 4 MiB}\n"
                               "  comm: {bandwidth: {max: 0.8}, collective_overhead: 10 us}\n"
                               "  launch_overhead: 4 us\n  step_overhead: 0.5 ms\n"
                               "  error_band: {mape: 0.3, p90: 0.5, points: 0}\n";
        return path.string();
    };
    const std::string scenario = src("examples/quickstart.yaml");
    const auto bad =
        run("estimate " + scenario + " --profile " + write("bad.yaml", "fp4: 0.5, mxfp6: 0.4"));
    EXPECT_EQ(bad.exit_code, 2) << bad.out;
    EXPECT_NE(bad.out.find("bad.yaml:6:"), std::string::npos) << bad.out;
    EXPECT_NE(bad.out.find("profile.gemm.dtype_scale.mxfp6: unknown key"), std::string::npos)
        << bad.out;
    const auto good = run("estimate " + scenario + " --profile " +
                          write("good.yaml", "nvfp4: 0.4, mxfp4: 0.5, mxfp8: 0.6"));
    EXPECT_EQ(good.exit_code, 0) << good.out;
    std::filesystem::remove_all(dir);
}
