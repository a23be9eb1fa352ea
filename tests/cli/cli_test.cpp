// Runs the real gpuplan binary: output, exit codes and error messages are its contract.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

namespace {

struct RunResult {
    int exit_code;
    std::string out;  // stdout and stderr together
};

RunResult run(const std::string& args) {
    const std::string cmd = std::string(GPUPLAN_CLI) + " " + args + " 2>&1";
    FILE* pipe = popen(cmd.c_str(), "r");
    std::string out;
    char buf[4096];
    while (std::size_t n = fread(buf, 1, sizeof buf, pipe)) {
        out.append(buf, n);
    }
    const int status = pclose(pipe);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

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
