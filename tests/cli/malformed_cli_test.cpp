// Issue 12: bad input exits 2 with a message naming the input, never 0 with a wrong answer or 1
// with an internal error. Each case here is a reproduction from the issue.
#include "tests/support/run_cli.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace {

using gpuplan::test::RunResult;

RunResult run(const std::string& args) { return gpuplan::test::run_cli(args); }

std::string src(const std::string& rel) { return std::string(GPUPLAN_SOURCE_DIR) + "/" + rel; }

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

}  // namespace

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
