// Runs the real gpuplan binary: output, exit codes and error messages are its contract.
#include "tests/support/run_cli.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

namespace {

using gpuplan::test::RunResult;

RunResult run(const std::string& args) { return gpuplan::test::run_cli(args); }

std::string src(const std::string& rel) { return std::string(GPUPLAN_SOURCE_DIR) + "/" + rel; }

}  // namespace

TEST(Cli, VersionAndHelp) {
    EXPECT_EQ(run("--version").exit_code, 0);
    const auto help = run("--help");
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_NE(help.out.find("hw list"), std::string::npos);
    for (const char* cmd : {"hw list", "hw show", "model list", "model show", "model import",
                            "scenario check"}) {
        const auto r = run(std::string(cmd) + " --help");
        EXPECT_EQ(r.exit_code, 0) << cmd;
        EXPECT_NE(r.out.find("usage: gpuplan"), std::string::npos) << cmd;
    }
}

TEST(Cli, HwListShowsAtLeastThirtyAccelerators) {
    const auto r = run("hw list --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    std::size_t count = 0;
    for (std::size_t pos = 0; (pos = r.out.find("\"memory_bytes\"", pos)) != std::string::npos; ++pos) {
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
        const auto dir = std::filesystem::temp_directory_path() / "gpuplan-cli-malformed";
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
    const auto out = std::filesystem::temp_directory_path() / "gpuplan-import";
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

}  // namespace

TEST(Cli, FitReportsTheDocumentedJsonKeys) {
    const auto r = run("fit " + src("examples/qwen7b-gptq-rtx4090.yaml") + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    for (const char* key : {"\"fits\": true", "\"weights_bytes\"", "\"kv_bytes_per_token\"", "\"kv_blocks\"",
                            "\"max_concurrency\"", "\"fewest_gpus\"", "\"host_ram\""}) {
        EXPECT_NE(r.out.find(key), std::string::npos) << key;
    }
    // Qwen2.5-7B: 28 layers × 4 KV heads × 128 × 2 (K and V) × 2 B = 57,344 B per token.
    EXPECT_DOUBLE_EQ(json_number(r.out, "kv_bytes_per_token"), 57344);
    // vLLM: tokens = blocks × block_size; concurrency = tokens / max_model_len (16384).
    const double blocks = json_number(r.out, "kv_blocks");
    EXPECT_DOUBLE_EQ(json_number(r.out, "kv_tokens"), blocks * 16);
    EXPECT_NEAR(json_number(r.out, "max_concurrency"), blocks * 16 / 16384, 0.01);
    // DOMAIN.md §3: max-num-seqs 4 binds, not the KV cache.
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
    EXPECT_NEAR(json_number(tp4.out, "weights_bytes"), 141.1e9 / 4, 1.5e9);  // embeddings split too
}

TEST(Cli, EstimateGivesSpeedBottlenecksAndProvenance) {
    const auto r = run("estimate " + src("examples/quickstart.yaml") + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    for (const char* key : {"\"ttft_s\"", "\"tpot_s\"", "\"throughput_tok_s\"", "\"mfu\"", "\"mbu\"",
                            "\"provenance\"", "\"what_ifs\""}) {
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

TEST(Cli, CompareRunsConfigurationsSideBySide) {
    const auto r = run("compare " + src("examples/llama70b-4xh100.yaml") + " " +
                       src("examples/llama70b-2xh200.yaml") + " --with h100-sxm:8");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("llama70b-4xh100"), std::string::npos);
    EXPECT_NE(r.out.find("llama70b-2xh200"), std::string::npos);
    EXPECT_NE(r.out.find("8x-h100-sxm"), std::string::npos);
    EXPECT_EQ(run("compare " + src("examples/quickstart.yaml")).exit_code, 2);  // one config only
    EXPECT_EQ(run("compare " + src("examples/quickstart.yaml") + " --with h100-sxm:x").exit_code, 2);
}

TEST(Cli, BadFlagsExitTwo) {
    EXPECT_EQ(run("fit --model llama-3.1-70b").exit_code, 2);                    // no GPU
    EXPECT_EQ(run("fit --model llama-3.1-70b --gpu h100-sxm --tp 3").exit_code, 2);  // 64 heads
    EXPECT_EQ(run("fit --model llama-3.1-8b --gpu h100-sxm --weights int3").exit_code, 2);
    EXPECT_EQ(run("estimate --model llama-3.1-8b --gpu h100-sxm --gpu-memory-utilization 1.5").exit_code, 2);
    EXPECT_EQ(run("fit /no/such/file.yaml").exit_code, 2);
}

TEST(Cli, SimulateJsonIsDeterministicAndDocumented) {
    const std::string cmd = "simulate " + src("examples/simulate-chat.yaml") + " --json";
    const auto a = run(cmd);
    const auto b = run(cmd);
    ASSERT_EQ(a.exit_code, 0) << a.out;
    EXPECT_EQ(a.out, b.out);  // byte for byte
    for (const char* key : {"\"ttft_s\"", "\"tpot_s\"", "\"e2e_s\"", "\"p50\"", "\"p90\"", "\"p99\"",
                            "\"throughput_tok_s\"", "\"requests_completed\"", "\"completed\"",
                            "\"failed\"", "\"goodput_rps\"", "\"preemptions\"", "\"prefix_hit_rate\"",
                            "\"slo_attainment\"", "\"slo_attainment_by_class\"", "\"classes\""}) {
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
    const auto trace = run("simulate " + src("examples/simulate-trace.yaml") + " --requests 50 --json");
    ASSERT_EQ(trace.exit_code, 0) << trace.out;
    EXPECT_EQ(json_number(trace.out, "arrived"), 50);
    const auto replay = run("simulate " + src("examples/simulate-chat.yaml") + " --trace " +
                            src("examples/traces/chat-azure-layout.csv") + " --trace-format azure --json");
    ASSERT_EQ(replay.exit_code, 0) << replay.out;
    EXPECT_EQ(json_number(replay.out, "arrived"), 40);
    const auto sweep = run("simulate " + src("examples/simulate-chat.yaml") +
                           " --duration 10 --sweep workload.requests_per_s=2,8");
    ASSERT_EQ(sweep.exit_code, 0) << sweep.out;
    EXPECT_NE(sweep.out.find("workload.requests_per_s"), std::string::npos);
    const auto out_dir = std::filesystem::temp_directory_path() / "gpuplan-cli-simulate";
    std::filesystem::remove_all(out_dir);
    ASSERT_EQ(run("simulate " + src("examples/simulate-chat.yaml") + " --duration 5 --out " + out_dir.string())
                  .exit_code,
              0);
    for (const char* f : {"requests.csv", "timeseries.csv", "trace.json", "summary.json"}) {
        EXPECT_TRUE(std::filesystem::exists(out_dir / f)) << f;
    }
    EXPECT_EQ(run("simulate " + src("examples/simulate-chat.yaml") + " --set engine.max_num_sqs=4").exit_code, 2);
    EXPECT_EQ(run("simulate " + src("examples/simulate-chat.yaml") + " --requests 0").exit_code, 2);
    EXPECT_EQ(run("simulate " + src("examples/simulate-chat.yaml") + " --trace /no/such.csv").exit_code, 2);
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
        for (std::size_t pos = 0; (pos = text.find(what, pos)) != std::string::npos; pos += what.size()) {
            ++n;
        }
        return n;
    };
    const auto cut = run("simulate " + src("examples/simulate-chat.yaml") + " --duration 5 --trace-limit 7 --out " +
                         dir.string());
    ASSERT_EQ(cut.exit_code, 0) << cut.out;
    EXPECT_NE(cut.out.find("holds the first 7 of"), std::string::npos) << cut.out;
    EXPECT_NE(cut.out.find("--trace-limit 0"), std::string::npos) << cut.out;
    const std::string trace = read(dir / "trace.json");
    EXPECT_EQ(count(trace, "\"ph\":\"X\""), 7u);
    EXPECT_NE(trace.find("\"steps_written\":7,\"truncated\":true"), std::string::npos) << trace.substr(trace.size() - 200);
    // Without a cut: every step, no note, and the same bytes for the same seed.
    const auto all = run("simulate " + src("examples/simulate-chat.yaml") + " --duration 5 --trace-limit 0 --out " +
                         dir.string());
    ASSERT_EQ(all.exit_code, 0) << all.out;
    EXPECT_EQ(all.out.find("--trace-limit"), std::string::npos) << all.out;
    const std::string full = read(dir / "trace.json");
    EXPECT_NE(full.find("\"truncated\":false"), std::string::npos);
    EXPECT_GT(count(full, "\"ph\":\"X\""), 7u);
    // Each step's slice comes with a counter of the replica's running set, KV use and power.
    EXPECT_EQ(count(full, "\"ph\":\"C\""), count(full, "\"ph\":\"X\""));
    EXPECT_NE(full.find("\"kv_use\":"), std::string::npos);
    ASSERT_EQ(run("simulate " + src("examples/simulate-chat.yaml") + " --duration 5 --trace-limit 0 --out " +
                  dir.string()).exit_code, 0);
    EXPECT_EQ(read(dir / "trace.json"), full);
    EXPECT_EQ(run("simulate " + src("examples/simulate-chat.yaml") + " --trace-limit=-1").exit_code, 2);
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
    for (const char* f : {"examples/train-gpt3-1024xa100.yaml", "examples/train-llama8b-lora-rtx4090.yaml",
                          "examples/train-llama70b-2x8xh100.yaml", "examples/train-13b-slow-input.yaml"}) {
        const auto r = run("train " + src(f) + " --json");
        ASSERT_EQ(r.exit_code, 0) << f << '\n' << r.out;
        for (const char* key : {"\"fits\": true", "\"memory_per_gpu_bytes\"", "\"step_time_s\"", "\"tokens_per_s\"",
                                "\"mfu\"", "\"time_to_train_s\"", "\"gpu_hours\"", "\"total_flops\"", "\"breakdown\"",
                                "\"input_stall_s\"", "\"scaling\"", "\"stages\""}) {
            EXPECT_NE(r.out.find(key), std::string::npos) << f << ": " << key;
        }
        EXPECT_EQ(run("train " + src(f)).exit_code, 0) << f;  // the human report
    }
    // The articles' 13B case: 2.6x on 4 GPUs, input-bound at the loader's 5,100 tokens/s.
    const auto slow = run("train " + src("examples/train-13b-slow-input.yaml") + " --json");
    EXPECT_NEAR(json_number(slow.out, "speedup"), 2.6, 0.1);
    EXPECT_NEAR(json_number(slow.out, "tokens_per_s"), 5100, 1);
    // GPT-3: 6 × 175e9 × 300e9 = 3.15e23 FLOPs plus attention and the LM head (~3 %).
    const auto gpt3 = run("train " + src("examples/train-gpt3-1024xa100.yaml") + " --json");
    EXPECT_NEAR(json_number(gpt3.out, "total_flops") / 3.15e23, 1.0, 0.05);
}

TEST(Cli, TrainSearchRanksLayoutsAndFlagsOverride) {
    const auto r = run("train --model llama-3.1-70b --gpu h100-sxm --node dgx-h100 --gpus 16 --tokens 2e9 "
                       "--global-batch 64 --seq-len 4096 --search --top 3 --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    for (const char* key : {"\"search\"", "\"why\"", "\"enumerated\"", "\"top\""}) {
        EXPECT_NE(r.out.find(key), std::string::npos) << key;
    }
    const auto human = run("train " + src("examples/train-llama70b-2x8xh100.yaml") + " --search --top 3");
    ASSERT_EQ(human.exit_code, 0) << human.out;
    EXPECT_NE(human.out.find("wins"), std::string::npos) << human.out;
    // A flag overrides the file: ZeRO-3 over 16 GPUs with no TP/PP does not fit a 70B fine-tune.
    const auto z3 = run("train " + src("examples/train-llama70b-2x8xh100.yaml") + " --tp 1 --pp 1 --zero 3 --json");
    ASSERT_EQ(z3.exit_code, 0) << z3.out;
    EXPECT_NE(z3.out.find("\"fits\": false"), std::string::npos);
}

TEST(Cli, TrainBadInputExitsTwo) {
    EXPECT_EQ(run("train --model llama-3.1-8b --gpu h100-sxm").exit_code, 2);  // no tokens/batch/seq
    EXPECT_EQ(run("train " + src("examples/train-13b-slow-input.yaml") + " --zero 5").exit_code, 2);
    EXPECT_EQ(run("train " + src("examples/train-13b-slow-input.yaml") + " --recompute some").exit_code, 2);
    const auto tp3 = run("train " + src("examples/train-gpt3-1024xa100.yaml") + " --tp 5");
    EXPECT_EQ(tp3.exit_code, 2);
    // A typo in the training block is located by file, line and column.
    const auto dir = std::filesystem::temp_directory_path() / "gpuplan-cli-train";
    std::filesystem::create_directories(dir);
    const auto file = dir / "typo.yaml";
    std::ofstream(file) << "schema: 1\nmodel: llama-2-13b\nhardware:\n  accelerator: a100-sxm-80gb\n  count: 4\n"
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
    for (const char* key : {"\"binding\"", "\"limits\"", "\"bases\"", "\"headroom\"", "\"pdu_usable_w\"",
                            "\"oversubscription\"", "\"power\""}) {
        EXPECT_NE(r.out.find(key), std::string::npos) << key;
    }
    const auto human = run("rack " + src("examples/rack-power-cap.yaml"));
    ASSERT_EQ(human.exit_code, 0) << human.out;
    EXPECT_NE(human.out.find("answer: 5 nodes (40 GPUs) per rack, 4 racks"), std::string::npos) << human.out;
}

TEST(Cli, RackWarnsWhenOneNodeExceedsASixteenAmpFeed) {
    // DOMAIN.md §2: 16 A × 230 V single phase = 3.68 kW (2.94 kW derated): an 8-GPU server trips it.
    const auto r = run("rack --node dgx-h100 --nodes 4 --pdu-amps 16 --pdu-volts 230 --pdu-phases 1");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("trips the breaker"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("2.94 kW"), std::string::npos) << r.out;
    const auto ok = run("rack --node dgx-h100 --nodes 4 --json");  // 400 V 32 A three-phase: 17.7 kW
    ASSERT_EQ(ok.exit_code, 0) << ok.out;
    const auto plan = ok.out.find("\"plan\"");
    EXPECT_NEAR(json_number(ok.out, "pdu_usable_w", plan), 17736, 1);
    EXPECT_EQ(json_number(ok.out, "nodes_per_rack", plan), 2);  // 2 × 8.4 kW at peak
    EXPECT_EQ(run("rack --nodes 4").exit_code, 2);                                  // no node
    EXPECT_EQ(run("rack --node dgx-h100 --basis load").exit_code, 2);               // load needs a model
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
    const auto peaky = run("cost " + src("examples/cost-rent-vs-buy.yaml") + " --hours-per-day 10 --days-per-month 22 --json");
    ASSERT_EQ(peaky.exit_code, 0) << peaky.out;
    EXPECT_NE(peaky.out.find("\"cheaper\": \"rent\""), std::string::npos);
    const auto human = run("cost " + src("examples/cost-rent-vs-buy.yaml"));
    EXPECT_NE(human.out.find("break-even month"), std::string::npos) << human.out;
}

TEST(Cli, CostInAnyCurrencyButNeverMixed) {
    // DOMAIN.md §2's electricity in CNY: every price in CNY works.
    const auto cny = run("cost " + src("examples/cost-rent-vs-buy.yaml") +
                         " --node-price '1900000 CNY' --gpu-hour '20 CNY/h' --electricity '0.6 CNY/kWh' --json");
    ASSERT_EQ(cny.exit_code, 0) << cny.out;
    EXPECT_NE(cny.out.find("\"currency\": \"CNY\""), std::string::npos);
    const auto mixed = run("cost " + src("examples/cost-rent-vs-buy.yaml") + " --electricity '0.6 CNY/kWh'");
    EXPECT_EQ(mixed.exit_code, 2);
    EXPECT_NE(mixed.out.find("one currency"), std::string::npos) << mixed.out;
    EXPECT_EQ(run("cost " + src("examples/cost-rent-vs-buy.yaml") + " --gpu-hour '$3'").exit_code, 2);  // no /h
}

TEST(Cli, EstimateShowsPowerFiguresUnderACap) {
    const auto r = run("estimate " + src("examples/llama70b-4xh100.yaml") + " --gpu-cap '350 W' --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto at = r.out.find("\"power\"");
    ASSERT_NE(at, std::string::npos);
    EXPECT_DOUBLE_EQ(json_number(r.out, "limit_w", at), 350);
    EXPECT_NEAR(json_number(r.out, "slowdown", at), 1.3, 0.05);  // prefill at a 50 % cap
    EXPECT_GT(json_number(r.out, "throughput_loss", at), 0.0);
    const auto human = run("estimate " + src("examples/llama70b-4xh100.yaml") + " --gpu-cap 350W");
    EXPECT_NE(human.out.find("under the power limit"), std::string::npos) << human.out;
    // Without a cap, estimate prints no power section.
    EXPECT_EQ(run("estimate " + src("examples/llama70b-4xh100.yaml") + " --json").out.find("\"limit_w\""),
              std::string::npos);
    EXPECT_EQ(run("estimate " + src("examples/llama70b-4xh100.yaml") + " --gpu-cap 350").exit_code, 2);  // no unit
}

TEST(Cli, SimulateReportsEnergyAndACapLowersPowerAndThroughput) {
    const auto free = run("simulate " + src("examples/simulate-chat.yaml") + " --duration 20 --json");
    ASSERT_EQ(free.exit_code, 0) << free.out;
    for (const char* key : {"energy_j_per_token", "avg_power_w", "peak_power_w"}) {
        EXPECT_GT(json_number(free.out, key), 0) << key;
    }
    const auto capped = run("simulate " + src("examples/simulate-chat.yaml") + " --duration 20 --gpu-cap '350 W' --json");
    ASSERT_EQ(capped.exit_code, 0) << capped.out;
    EXPECT_LE(json_number(capped.out, "peak_power_w"), 350 + 1e-6);
    EXPECT_LT(json_number(capped.out, "avg_power_w"), json_number(free.out, "avg_power_w"));
    EXPECT_GT(json_number(capped.out, "p99", capped.out.find("\"tpot_s\"")),
              json_number(free.out, "p99", free.out.find("\"tpot_s\"")));
    const auto human = run("simulate " + src("examples/simulate-chat.yaml") + " --duration 10 --gpu-cap 350W");
    EXPECT_NE(human.out.find("J per output token"), std::string::npos) << human.out;
    EXPECT_NE(human.out.find("power limit  350 W per GPU (gpu_cap)"), std::string::npos) << human.out;
}

TEST(Cli, PlanAnswersTheExampleAndSaysWhenNothingMeetsTheSlo) {
    const auto r = run("plan " + src("examples/plan-search.yaml") + " --top 2 --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("\"found\": true"), std::string::npos) << r.out;
    const auto first = r.out.find("\"ranked\": [");
    ASSERT_NE(first, std::string::npos);
    EXPECT_NE(r.out.find("\"meets_slo\": true", first), std::string::npos);
    EXPECT_GT(json_number(r.out, "monthly", first), 0);
    EXPECT_LE(json_number(r.out, "gpus", first), 16);  // plan.max_gpus
    // One thread or many: the same answer.
    EXPECT_EQ(run("plan " + src("examples/plan-search.yaml") + " --top 2 --json --threads 1").out, r.out);
    const auto human = run("plan " + src("examples/plan-search.yaml") + " --top 1");
    EXPECT_EQ(human.exit_code, 0);
    EXPECT_NE(human.out.find("cheapest meeting every SLO"), std::string::npos) << human.out;

    // 1 ms per token is beyond every candidate: a clear no, with the closest miss.
    const auto no = run("plan " + src("examples/plan-search.yaml") + " --set slo.tpot='1 ms' --json");
    ASSERT_EQ(no.exit_code, 0) << no.out;
    EXPECT_NE(no.out.find("\"found\": false"), std::string::npos);
    EXPECT_NE(no.out.find("\"verdict\": \"nothing meets the SLO"), std::string::npos) << no.out;
    EXPECT_EQ(no.out.find("\"closest_miss\": null"), std::string::npos);
    const auto no_human = run("plan " + src("examples/plan-search.yaml") + " --set slo.tpot='1 ms'");
    EXPECT_NE(no_human.out.find("NO ANSWER    nothing meets the SLO"), std::string::npos) << no_human.out;
    // Under a budget the cheapest configuration meeting the SLO is named with what it breaks.
    const auto poor = run("plan " + src("examples/plan-search.yaml") + " --budget '$500/month'");
    EXPECT_NE(poor.out.find("within the plan's constraints"), std::string::npos) << poor.out;

    EXPECT_EQ(run("plan " + src("examples/plan-search.yaml") + " --budget '$500'").exit_code, 2);  // not monthly
    EXPECT_EQ(run("plan " + src("examples/plan-search.yaml") + " --candidate no-such-gpu").exit_code, 2);
    EXPECT_EQ(run("plan " + src("examples/plan-search.yaml") + " --set plan.tpp=[1]").exit_code, 2);
    EXPECT_EQ(run("plan --help").exit_code, 0);
}
