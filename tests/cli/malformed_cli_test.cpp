// Issue 12: bad input exits 2 with a message naming the input, never 0 with a wrong answer or 1
// with an internal error. Each case here is a reproduction from the issue.
#include "tests/support/run_cli.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace {

using gpuplan::test::RunResult;

RunResult run(const std::string& args) {
    return gpuplan::test::run_cli(args);
}

std::string src(const std::string& rel) {
    return std::string(GPUPLAN_SOURCE_DIR) + "/" + rel;
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

std::filesystem::path temp_dir(const std::string& name) {
    const auto dir = std::filesystem::temp_directory_path() / ("gpuplan-cli-" + name);
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

void write(const std::filesystem::path& p, const std::string& text) {
    std::ofstream(p, std::ios::binary) << text;
}

void expect_input_error(const std::string& args, const std::string& message) {
    SCOPED_TRACE(args);
    const RunResult r = run(args);
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_TRUE(has(r.out, message)) << r.out;
    EXPECT_FALSE(has(r.out, "internal error")) << r.out;
}

constexpr const char* kEstimate = "estimate --model llama-3.1-8b --gpu h100-sxm ";

} // namespace

TEST(CliMalformed, NonFiniteAndNegativeNumbersInFlagsAreRefused) {
    expect_input_error(std::string(kEstimate) + "--pue nan",
                       "--pue 'nan' is not a finite number; give a value such as 1.5");
    expect_input_error(std::string(kEstimate) + "--pue inf", "--pue 'inf' is not a finite number");
    expect_input_error("simulate " + src("examples/simulate-chat.yaml") + " --seed -1",
                       "--seed '-1' is negative; give a whole number >= 0");
    expect_input_error("simulate " + src("examples/simulate-chat.yaml") + " --duration nan",
                       "--duration 'nan' is not a finite number");
}

TEST(CliMalformed, CountsThatWouldOverflowAreRefused) {
    expect_input_error(std::string(kEstimate) + "--output-len 2147483647",
                       "--output-len must be a whole number from 1 to 268435456, got 2147483647");
    expect_input_error("fit --model llama-3.1-8b --gpu h100-sxm --output-len 2147483647",
                       "--output-len must be a whole number from 1 to 268435456");
    expect_input_error(std::string(kEstimate) + "--gpus 2147483640",
                       "--gpus must be a whole number from 1 to 16777216, got 2147483640");
    const auto dir = temp_dir("overflow");
    write(dir / "wrap.yaml", "schema: 1\nmodel: llama-3.1-8b\nhardware:\n  accelerator: h100-sxm\n"
                             "  tp: 64\n  pp: 80\n  dp: 1048576\n");
    expect_input_error("fit " + (dir / "wrap.yaml").string(),
                       "hardware.dp: tp × pp × dp = 5368709120 is more than 16777216 GPUs; lower "
                       "tp, pp or dp");
    std::filesystem::remove_all(dir);
}

TEST(CliMalformed, TrainingTokensThatWouldMakeInfiniteComputeAreRefused) {
    expect_input_error("train --model llama-3.1-8b --gpu h100-sxm --node dgx-h100 --gpus 64 "
                       "--tokens 1e300 --global-batch 64 --seq-len 4096",
                       "tokens to train must be from 1 to 1e18");
}

TEST(CliMalformed, SimulatedTimeAndRequestCountsAreBoundedUpFront) {
    const auto dir = temp_dir("span");
    write(dir / "far.csv", "arrival_s,input_tokens,output_tokens\n0,100,10\n1e12,100,10\n");
    write(dir / "far.yaml", "schema: 1\nmodel: llama-3.1-8b\nhardware:\n  accelerator: h100-sxm\n"
                            "workload:\n  trace: {file: far.csv, format: plain}\n");
    expect_input_error("simulate " + (dir / "far.yaml").string(),
                       "workload.trace (span of the arrival times / trace_speedup): 1e+12 s is "
                       "beyond the simulator's limit of 3.1536e+08 s (10 years)");
    expect_input_error("simulate " + src("examples/simulate-chat.yaml") + " --duration 1e12",
                       "workload.duration: 1e+12 s is beyond the simulator's limit");
    write(dir / "slow.yaml", "schema: 1\nmodel: llama-3.1-8b\nhardware:\n  accelerator: h100-sxm\n"
                             "workload:\n  requests_per_s: 1e-9\n  requests: 1000\n");
    expect_input_error("simulate " + (dir / "slow.yaml").string(),
                       "workload.requests / workload.requests_per_s (the expected time to send "
                       "1000 requests): 1e+12 s is beyond the simulator's limit");
    write(dir / "cold.yaml", "schema: 1\nmodel: llama-3.1-8b\nhardware:\n  accelerator: h100-sxm\n"
                             "cluster:\n  cold_start: {startup: 1e15 s, at_start: true}\n");
    expect_input_error("simulate " + (dir / "cold.yaml").string(),
                       "cluster.cold_start (startup + weights / load_bandwidth): 1e+15 s is beyond "
                       "the simulator's limit");
    std::filesystem::remove_all(dir);
}

TEST(CliMalformed, EmpiricalLengthsMustBeTokenCounts) {
    const auto dir = temp_dir("empirical");
    write(dir / "e.yaml", "schema: 1\nmodel: llama-3.1-8b\nhardware:\n  accelerator: h100-sxm\n"
                          "workload:\n  classes:\n    - name: c\n"
                          "      input: {dist: empirical, values: [100, nan]}\n");
    expect_input_error("simulate " + (dir / "e.yaml").string(),
                       "workload.classes[0].input.values: 'nan' is not a token count; give whole "
                       "numbers from 0 to 268435456");
    std::filesystem::remove_all(dir);
}

TEST(CliMalformed, TrainUtilizationStaysWithinThePeakAtLongContext) {
    // Issue 12: MFU/HFU 116.9 % for this layout; no utilization may exceed 100 %.
    const RunResult r = run("train --model llama-3.1-8b --gpu h100-sxm --node dgx-h100 --gpus 64 "
                            "--tp 8 --cp 8 --seq-len 524288 --global-batch 8 --tokens 1e9 --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    for (const std::string key : {"\"mfu\": ", "\"hfu\": "}) {
        const auto at = r.out.find(key);
        ASSERT_NE(at, std::string::npos) << key << r.out;
        const double v = std::stod(r.out.substr(at + key.size()));
        EXPECT_GT(v, 0.0) << key;
        EXPECT_LE(v, 1.0) << key;
    }
}

TEST(CliMalformed, PlanFlagErrorsNameTheFlag) {
    const RunResult r = run("plan " + src("examples/plan-search.yaml") + " --tp 0,3");
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_TRUE(has(r.out, "error: --tp 0,3: plan.tp: '0' is not a whole number from 1 to 1024"))
        << r.out;
    EXPECT_FALSE(has(r.out, ":1:1:")) << r.out;
}

TEST(CliMalformed, ModelImportRefusesWhatTheCatalogWouldRefuse) {
    const auto dir = temp_dir("import");
    write(dir / "config.json",
          R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 32,
              "hidden_size": 4096, "num_attention_heads": 3, "num_key_value_heads": 3,
              "intermediate_size": 14336, "vocab_size": 128256, "max_position_embeddings": 8192})");
    expect_input_error("model import " + (dir / "config.json").string() + " --name bad-heads -o " +
                           (dir / "m.yaml").string(),
                       "num_attention_heads: 3 heads do not divide hidden_size 4096");
    EXPECT_FALSE(std::filesystem::exists(dir / "m.yaml"));
    std::filesystem::remove_all(dir);
}

TEST(CliMalformed, HwdbOverridesAcrossFoldersAreNamedOnStandardError) {
    const auto dir = temp_dir("override");
    write(dir / "links.yaml", "schema: 1\ninterconnects:\n  - name: pcie4-x16\n    kind: pcie\n"
                              "    bandwidth_per_direction: 20 GB/s\n    latency: 9 us\n"
                              "    sources: my lab\n");
    const RunResult r = run("--hwdb " + dir.string() + " hw list --links");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(has(r.out, "note: hwdb: interconnect 'pcie4-x16' from " +
                               (dir / "links.yaml").string() + " replaces the one from "))
        << r.out;
    std::filesystem::remove_all(dir);
}

TEST(CliMalformed, TinyBandwidthInAnHwdbFolderIsRefused) {
    const auto dir = temp_dir("bandwidth");
    write(dir / "links.yaml", "schema: 1\ninterconnects:\n  - name: slow\n    kind: pcie\n"
                              "    bandwidth_per_direction: 1e-300 B/s\n    latency: 9 us\n"
                              "    sources: x\n");
    expect_input_error("--hwdb " + dir.string() + " hw list --links",
                       "interconnects[0].bandwidth_per_direction: '1e-300 B/s' is below any real "
                       "bandwidth; give at least 1 kB/s (check the unit)");
    std::filesystem::remove_all(dir);
}

// Issue 18 item 4: one set of validity rules, refused the same way from flags and from a file.
TEST(CliValidity, MaxModelLenAboveTheModelsContextExitsTwo) {
    // llama-3.1-8b: max_position_embeddings 131072.
    expect_input_error(std::string(kEstimate) + "--max-model-len 200000",
                       "max_model_len 200000 exceeds the model's maximum context of 131072 tokens");
    expect_input_error("fit --model llama-3.1-8b --gpu h100-sxm --max-model-len 131073",
                       "lower max_model_len to at most 131072");
    const RunResult ok =
        run(std::string(kEstimate) + "--max-model-len 200000 --allow-long-context");
    EXPECT_EQ(ok.exit_code, 0) << ok.out;
    const auto dir = temp_dir("long-context");
    write(dir / "s.yaml", "schema: 1\nmodel: llama-3.1-8b\nhardware:\n  accelerator: h100-sxm\n"
                          "engine:\n  max_model_len: 200000\n");
    expect_input_error("estimate " + (dir / "s.yaml").string(),
                       "engine: deployment of 'llama-3.1-8b': max_model_len 200000 exceeds");
    const RunResult set =
        run("estimate " + (dir / "s.yaml").string() + " --set engine.allow_long_context=true");
    EXPECT_EQ(set.exit_code, 0) << set.out;
    std::filesystem::remove_all(dir);
}

TEST(CliValidity, RequestsLongerThanMaxModelLenExitTwo) {
    expect_input_error(std::string(kEstimate) +
                           "--max-model-len 1024 --input-len 1000 --output-len 25",
                       "input_tokens + output_tokens = 1025 exceeds max_model_len 1024");
}

TEST(CliValidity, EngineFormatAndGpuCombinationsTheyCannotRunExitTwo) {
    expect_input_error(std::string(kEstimate) +
                           "--engine llama.cpp --weights awq-int4 --max-model-len 4096",
                       "llama.cpp loads GGUF files only and has no awq-int4 weights");
    expect_input_error("estimate --model llama-3.1-8b --gpu a100-sxm-80gb --engine tensorrt-llm "
                       "--weights fp8",
                       "tensorrt-llm's fp8 kernels need the GPU's own fp8 tensor cores");
    expect_input_error("estimate --model llama-3.1-8b --gpu h100-sxm --engine tensorrt-llm "
                       "--weights q4_k_m",
                       "tensorrt-llm has no GGUF loader");
    // TPU v5e has no fp16 peak: the rule names bf16 as the alternative.
    expect_input_error("fit --model llama-3.1-8b --gpu tpu-v5e --activations fp16",
                       "the GPU has no fp16 peak; use bf16");
    // vLLM runs GGUF (experimental) and FP8 on an A100 (weight-only): not errors.
    EXPECT_EQ(run(std::string(kEstimate) + "--weights q4_k_m").exit_code, 0);
    EXPECT_EQ(run("estimate --model llama-3.1-8b --gpu a100-sxm-80gb --weights fp8").exit_code, 0);
}

TEST(CliValidity, GpuCapAboveTheBoardPowerExitsTwo) {
    // H100 SXM: power_limit_max 700 W (hwdb, S92); the H200 SXM has no settable range in the
    // hwdb, so its board power (700 W) bounds the cap. The loader applies the same rule.
    expect_input_error(std::string(kEstimate) + "--gpu-cap 800W",
                       "--gpu-cap 800 W on h100-sxm is above the highest power limit the driver "
                       "accepts (700 W, nvidia-smi -q \"Max Power Limit\")");
    expect_input_error("estimate --model llama-3.1-8b --gpu h200-sxm --gpu-cap 800W",
                       "--gpu-cap 800 W on h200-sxm is above the highest power limit the driver "
                       "accepts (700 W, the board power)");
    expect_input_error("rack " + src("examples/rack-power-cap.yaml") + " --set power.gpu_cap=2000W",
                       "power.gpu_cap 2000 W on");
}

TEST(CliValidity, WeightsThatDoNotFitAdviseTheFewestGpus) {
    // The issue's reproduction: 70B bf16 on one H100 advised "lower gpu_memory_utilization".
    const RunResult r = run("estimate " + src("examples/plan-search.yaml"));
    EXPECT_FALSE(has(r.out, "lower gpu_memory_utilization")) << r.out;
    EXPECT_TRUE(has(r.out, "the fewest that hold them and one sequence of max_model_len are"))
        << r.out;
    const RunResult fit = run("fit " + src("examples/plan-search.yaml") + " --json");
    EXPECT_TRUE(has(fit.out, "\"advice\": \"the weights and the engine's memory do not fit"))
        << fit.out;
}

// Issue 18 item 5: the same flags for the same things on every command that reads a scenario.
TEST(CliFlags, SetAndPowerFlagsWorkOnEveryScenarioCommand) {
    const std::string file = src("examples/llama70b-4xh100.yaml");
    for (const std::string cmd : {"estimate", "fit", "cost", "rack", "compare"}) {
        SCOPED_TRACE(cmd);
        const RunResult r = run(cmd + " " + file + " --set engine.max_num_seqs=0");
        EXPECT_EQ(r.exit_code, 2) << r.out;
        EXPECT_TRUE(has(r.out, "--set engine.max_num_seqs=0")) << r.out;
        const RunResult cap = run(cmd + " " + file + " --gpu-cap 900W");
        EXPECT_EQ(cap.exit_code, 2) << cap.out;
        EXPECT_TRUE(has(cap.out, "--gpu-cap 900 W on h100-sxm is above")) << cap.out;
    }
    const std::string train = src("examples/train-gpt3-1024xa100.yaml");
    expect_input_error("train " + train + " --set training.global_batch=0",
                       "--set training.global_batch=0");
    expect_input_error("train " + train + " --gpu-cap 500W", "--gpu-cap 500 W on a100-sxm-80gb");
    EXPECT_EQ(run("train " + train + " --set training.tokens=1e9 --gpu-cap 300W").exit_code, 0);
    expect_input_error(std::string(kEstimate) + "--set engine.max_num_seqs=4",
                       "--set changes a key of a scenario FILE");
}

TEST(CliFlags, SimulateTakesModelAndGpuFlagsLikeEstimate) {
    const RunResult r =
        run("simulate --model llama-3.1-8b --gpu h100-sxm --concurrency 4 --input-len 256 "
            "--output-len 32 --requests 20 --json");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    expect_input_error("simulate --requests 5",
                       "give a scenario FILE, or at least --model and --gpu");
}

TEST(CliFlags, TrainWithoutALayoutChoosesTheBestValidOne) {
    // The issue's reproduction failed with "dp does not divide the global batch".
    const RunResult r = run("train --model gpt-3-175b --gpu a100-sxm-80gb --gpus 1024 --tokens "
                            "300e9 --seq-len 2048 --global-batch 1536");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_FALSE(has(r.out, "does not divide the global batch")) << r.out;
    EXPECT_TRUE(has(r.out, "chosen by the layout search")) << r.out;
    const RunResult j = run("train --model gpt-3-175b --gpu a100-sxm-80gb --gpus 1024 --tokens "
                            "300e9 --seq-len 2048 --global-batch 1536 --json");
    EXPECT_TRUE(has(j.out, "\"layout_chosen_by\": \"search\"")) << j.out;
    // The chosen layout divides the global batch: dp | 1536 (checked from the printed dp).
    const auto at = r.out.find(" x dp ");
    ASSERT_NE(at, std::string::npos) << r.out;
    const int dp = std::stoi(r.out.substr(at + 6));
    EXPECT_EQ(1536 % dp, 0) << dp;
    EXPECT_EQ(1024 % dp, 0) << dp;
}

TEST(CliFlags, PlanTakesModelAndGpuFlagsLikeEstimate) {
    const RunResult r = run("plan --model llama-3.1-8b --gpu h100-sxm --rate 4 --input-len 512 "
                            "--output-len 128 --set \"slo.tpot=50 ms\" --candidate h100-sxm "
                            "--max-gpus 2 --requests 100 --json");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(has(r.out, "\"found\": true")) << r.out;
    expect_input_error("plan --top 3", "give a scenario FILE, or at least --model and --gpu");
    expect_input_error("plan --model llama-3.1-8b --gpu h100-sxm --max-model-len 200000 "
                       "--set \"slo.tpot=50 ms\"",
                       "exceeds the model's maximum context of 131072 tokens");
}

TEST(CliValidity, NoAverageAbovePeakUnderAnUnreachableCap) {
    // 60 W per H200 is below what the lowest clock draws at this load: the limit is unreachable
    // and the GPU draws more than it. The peak shown is then what it draws, never below the
    // average. (The hwdb has no settable range for the H200, so the cap is not refused.)
    const RunResult r =
        run("estimate --model llama-3.1-8b --gpu h200-sxm --gpu-cap 60W --concurrency 64 --json");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const auto number = [&](const std::string& key) {
        const auto at = r.out.find("\"" + key + "\": ");
        EXPECT_NE(at, std::string::npos) << key;
        return std::stod(r.out.substr(at + key.size() + 4));
    };
    EXPECT_LE(number("gpu_average_w"), number("gpu_peak_w"));
    EXPECT_LE(number("gpu_peak_w"), 700.0); // never above the board power
    EXPECT_TRUE(has(r.out, "\"unreachable\": true")) << r.out;
}

TEST(CliValidity, FitsMeansTheRequestedConcurrencyAtTheRequestedLengths) {
    // The engine starts (one 131072-token sequence fits), but 2000 sequences of 8000 + 1000
    // tokens need far more than the ~53 GiB KV pool of one H100 (2000 × 8500 × 128 KiB).
    const std::string args = "fit --model llama-3.1-8b --gpu h100-sxm --concurrency 2000 "
                             "--input-len 8000 --output-len 1000";
    const RunResult text = run(args);
    EXPECT_EQ(text.exit_code, 0) << text.out;
    EXPECT_TRUE(has(text.out, "verdict              does NOT fit: 2000 sequences")) << text.out;
    EXPECT_TRUE(has(text.out, "held back (1 - gpu_memory_utilization)")) << text.out;
    EXPECT_FALSE(has(text.out, " free\n")) << text.out;
    const RunResult json = run(args + " --json");
    EXPECT_TRUE(has(json.out, "\"load_fit\": {")) << json.out;
    EXPECT_TRUE(has(json.out, "\"concurrency\": 2000")) << json.out;
}

TEST(CliValidity, GpuCapBelowTheDriversMinimumExitsTwo) {
    // hwdb b200: power_limit_min 200 W, power_limit_max 1000 W (NVIDIA DGX B200 User Guide, S91).
    expect_input_error("estimate --model llama-3.1-8b --gpu b200 --gpu-cap 150W",
                       "--gpu-cap 150 W on b200 is below the lowest power limit the driver "
                       "accepts (200 W");
    EXPECT_EQ(run("estimate --model llama-3.1-8b --gpu b200 --gpu-cap 200W").exit_code, 0);
}

TEST(CliValidity, GpuCapOutsideTheHopperAndAmpereRangesExitsTwo) {
    // hwdb (S92, nvidia-smi -q -d POWER): h100-sxm 200-700 W, a100-sxm-80gb 100-400 W.
    expect_input_error("cost --model llama-3.1-8b --gpu h100-sxm --gpu-cap 199W",
                       "below the lowest power limit the driver accepts (200 W");
    expect_input_error("rack --model llama-3.1-8b --gpu a100-sxm-80gb --gpu-cap 99W",
                       "below the lowest power limit the driver accepts (100 W");
    expect_input_error("estimate --model llama-3.1-8b --gpu a100-sxm-80gb --gpu-cap 401W", "400 W");
    EXPECT_EQ(run("estimate --model llama-3.1-8b --gpu h100-sxm --gpu-cap 200W").exit_code, 0);
}

// Issue 11 item 2: --gpus, the scenario's hardware.count and the app's GPU count share one rule
// (model::replicas_of) and one spelling, "tp × pp" (this flag's message used to say "tp x pp").
TEST(CliMalformed, GpusNotAMultipleOfTpTimesPpIsRefusedWithTheOneWording) {
    expect_input_error(std::string(kEstimate) + "--tp 4 --gpus 6",
                       "--gpus 6 is not a multiple of tp × pp = 4; change --gpus, --tp or --pp");
}
