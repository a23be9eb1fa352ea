// The first ten minutes of a new user (issue 37): each test runs the exact command a trial user
// typed and checks the answer they should have got. Expected figures are worked by hand in the
// comments (8k = 8000 tokens as vLLM reads it, 32k - 256 = 31744 prompt tokens, ...).
#include "tests/support/run_cli.hpp"
#include "tests/support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

namespace {

using gpuplan::test::RunResult;
namespace fs = std::filesystem;

RunResult run(const std::string& args) {
    return gpuplan::test::run_cli(args);
}

std::string src(const std::string& rel) {
    return std::string(GPUPLAN_SOURCE_DIR) + "/" + rel;
}

bool has(const RunResult& r, const std::string& text) {
    return r.out.find(text) != std::string::npos;
}

using gpuplan::test::TempDir;

} // namespace

TEST(FirstContact, AGroupWordAloneListsItsSubcommands) {
    for (const char* group : {"hw", "model", "calib"}) {
        const auto r = run(group);
        EXPECT_EQ(r.exit_code, 2) << group;
        EXPECT_TRUE(has(r, std::string("'gpuplan ") + group + "' needs a subcommand")) << r.out;
        EXPECT_TRUE(has(r, std::string("gpuplan ") + group + " ")) << r.out;
        EXPECT_FALSE(has(r, "unknown command")) << r.out;
    }
    const auto help = run("hw --help");
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_TRUE(has(help, "gpuplan hw list")) << help.out;
    EXPECT_TRUE(has(help, "gpuplan hw show")) << help.out;
}

TEST(FirstContact, ATypoGetsTheClosestCommand) {
    const auto r = run("estimte examples/quickstart.yaml");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(has(r, "unknown command 'estimte'; did you mean 'estimate'?")) << r.out;
    const auto sub = run("hw lst");
    EXPECT_TRUE(has(sub, "did you mean 'hw list'?")) << sub.out;
}

TEST(FirstContact, AShortGpuNameSaysWhichPartItPicked) {
    const auto r = run("fit --model llama-3.1-8b --gpu a100");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(has(r, "note: --gpu 'a100' is a100-sxm-80gb; also named so: ")) << r.out;
    EXPECT_TRUE(has(r, "a100-sxm-40gb")) << r.out;
    EXPECT_FALSE(has(run("fit --model llama-3.1-8b --gpu a100-sxm-80gb"), "note: --gpu")) << "";
}

TEST(FirstContact, MaxModelLenTakesVllmSuffixes) {
    // vLLM's human_readable_int: lowercase k is 1000, uppercase K is 1024.
    for (const auto& [typed, tokens] :
         {std::pair{"8k", 8000}, std::pair{"8K", 8192}, std::pair{"25.6k", 25600}}) {
        const auto r = run(std::string("fit --model llama-3.1-8b --gpu h100-sxm --json ") +
                           "--input-len 1024 --max-model-len " + typed);
        ASSERT_EQ(r.exit_code, 0) << typed << ": " << r.out;
        const auto j = nlohmann::json::parse(r.out);
        EXPECT_EQ(j["memory"]["max_model_len"].get<int>(), tokens) << typed;
    }
    const auto bad = run("fit --model llama-3.1-8b --gpu h100-sxm --max-model-len 8q");
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_TRUE(has(bad, "8k (8000) or 8K (8192)")) << bad.out;
}

TEST(FirstContact, BlockSizeMustBeAPowerOfTwo) {
    const auto r = run("fit --model llama-3.1-8b --gpu h100-sxm --block-size 7");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(has(r, "block_size 7 is not a power of two")) << r.out;
    EXPECT_EQ(run("fit --model llama-3.1-8b --gpu h100-sxm --block-size 32").exit_code, 0);
}

TEST(FirstContact, AModelFileFromModelImportIsAccepted) {
    const TempDir dir("import");
    const std::string file = (dir.path / "my.yaml").string();
    const auto imported = run("model import " + src("tests/fixtures/hf/llama-3.1-8b-fp8.json") +
                              " --name my-llama -o " + file);
    ASSERT_EQ(imported.exit_code, 0) << imported.out;
    const auto r = run("fit --model " + file + " --gpu h100-sxm");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(has(r, "read from " + file)) << r.out;
    const auto missing =
        run("fit --model " + (dir.path / "nope.yaml").string() + " --gpu h100-sxm");
    EXPECT_EQ(missing.exit_code, 2);
}

TEST(FirstContact, HwdbFolderWithAScenarioSkipsTheScenario) {
    const TempDir dir("hwdb");
    dir.write("scenario.yaml", "schema: 1\nmodel: llama-3.1-8b\nhardware:\n  gpu: h100-sxm\n");
    const auto r = run("--hwdb " + dir.path.string() + " hw list");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(
        has(r, "skipped " + (dir.path / "scenario.yaml").string() + ": not a hardware file"))
        << r.out;
}

TEST(FirstContact, HwShowPrintsUnitsNotRawNumbers) {
    const auto r = run("hw show dgx-h100");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(has(r, "host_memory: 2.00 TiB")) << r.out; // 2199023255552 B = 2 TiB
    EXPECT_TRUE(has(r, "max_power: 10.2 kW")) << r.out;
    EXPECT_FALSE(has(r, "_bytes")) << r.out;
    EXPECT_FALSE(has(r, "2199023255552")) << r.out;
    const auto link = run("hw show ib-ndr");
    EXPECT_FALSE(has(link, "e-06")) << link.out; // 5 us, not 4.9999999999999996e-06
    EXPECT_TRUE(has(link, "latency: 5.0 us")) << link.out;
}

TEST(FirstContact, AnHwdbCrossReferenceErrorNamesFileAndLine) {
    const TempDir dir("xref");
    dir.write("box.yaml", "schema: 1\n"
                          "servers:\n"
                          "  - name: my-box\n"
                          "    accelerators: 8\n"
                          "    intra_node_link: nvlink-9\n"
                          "    max_power: 10 kW\n"
                          "    host_power: 2 kW\n"
                          "    host_memory: 1 TiB\n"
                          "    rack_units: 4\n"
                          "    sources: \"mine\"\n");
    const auto r = run("--hwdb " + dir.path.string() + " hw list");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(has(r, (dir.path / "box.yaml").string() + ":5:22: servers[0].intra_node_link"))
        << r.out;
}

TEST(FirstContact, AModelThatDoesNotFitShowsNoSpeedsAndNoNegativeRow) {
    // 405B in bf16 is ~756 GiB of weights: 24 GiB on an RTX 4090 is ~730 GiB short.
    const auto r = run("estimate --model llama-3.1-405b --gpu rtx-4090");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(has(r, "over capacity (does not start)")) << r.out;
    EXPECT_TRUE(has(r, "speed: none; the deployment does not start")) << r.out;
    EXPECT_FALSE(has(r, "held back")) << r.out;
    EXPECT_FALSE(has(r, "TTFT (alone)")) << r.out;
}

TEST(FirstContact, AKvCacheMemoryCapIsNotCalledHeldBack) {
    const auto r = run("estimate " + src("examples/kv-offload-rag-llama8b.yaml"));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(has(r, "unused (kv_cache_memory fixes the KV pool)")) << r.out;
    EXPECT_FALSE(has(r, "held back (1 - gpu_memory_utilization)")) << r.out;
}

TEST(FirstContact, FitJudgesTheTypedContextAndCountsInTheSingular) {
    // 32k = 32000 tokens: a request of 32000 - 256 = 31744 prompt + 256 output tokens.
    const auto r = run("fit --model llama-3.1-8b --gpu h100-sxm --max-model-len 32k");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(has(r, "1 sequence of 31744 + 256 tokens")) << r.out;
    EXPECT_FALSE(has(r, "1 sequences")) << r.out;
    EXPECT_TRUE(has(r, "note: the verdict judges requests of the typed --max-model-len 32000"))
        << r.out;
}

TEST(FirstContact, CompareNamesTheLayout) {
    const auto r = run("compare --model llama-3.1-8b --gpu rtx-4090 --with rtx-4090:8:8 "
                       "--with rtx-4090:8:1");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(has(r, "8x-rtx-4090-tp8")) << r.out;
    EXPECT_TRUE(has(r, "8x-rtx-4090-tp1")) << r.out;
}

TEST(FirstContact, ProvenanceDoesNotPrintTheCheckoutPath) {
    const auto r = run("estimate --model llama-3.1-8b --gpu h100-sxm");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(has(r, "provenance: engine-profile hwdb/profiles/h100-sxm.yaml")) << r.out;
    EXPECT_FALSE(has(r, std::string(GPUPLAN_SOURCE_DIR) + "/hwdb")) << r.out;
}

TEST(FirstContact, ABenchResultPassedAsMetricsSaysUseBench) {
    const auto r = run("diagnose " + src("tests/fixtures/diagnose/seed-7b-rtx4090.yaml") +
                       " --metrics " + src("tests/fixtures/diagnose/seed-7b-bench.json"));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(has(r, "this is a `vllm bench serve` result (JSON), not a /metrics scrape; pass "
                       "it with --bench"))
        << r.out;
}

// Issue 37's "done when": B300, GB300 NVL72, RTX PRO 6000 and MI355X side by side on one
// workload, each with its source; an announced part says it is preliminary.
TEST(FirstContact, CompareTheBuyersShortlist) {
    const auto r = run("compare --model llama-3.1-70b --gpu b300 --gpus 8 --tp 8 "
                       "--with gb300@gb300-nvl72:72:8 --with rtx-pro-6000-server:8:8 "
                       "--with mi355x:8:8 --with mi455x:8:8");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    for (const char* name : {"8x-b300", "72x-gb300@gb300-nvl72-tp8", "8x-rtx-pro-6000-server-tp8",
                             "8x-mi355x-tp8", "8x-mi455x-tp8 (preliminary)"}) {
        EXPECT_TRUE(has(r, name)) << name << "\n" << r.out;
    }
    // B300's rent is sourced (8 x $5.00/h = $40.00/h for the 8-GPU configuration).
    EXPECT_TRUE(has(r, "llama-3.1-70b-on-8x-b300: $5.00/h per GPU from hwdb b300")) << r.out;
}

TEST(FirstContact, TheNvl72RackIsAFixedEnvelope) {
    const auto r = run("rack --node gb300-nvl72 --nodes 2");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(has(r, "fixed by the system (gb300-nvl72): 1 per rack")) << r.out;
    EXPECT_TRUE(has(r, "liquid cooling")) << r.out;
    EXPECT_TRUE(has(r, "racks:     2")) << r.out;
    const auto low = run("rack --node gb300-nvl72 --nodes 1 --rack-budget 100kW");
    ASSERT_EQ(low.exit_code, 0) << low.out;
    EXPECT_TRUE(has(low, "does NOT feed one system")) << low.out;
}
