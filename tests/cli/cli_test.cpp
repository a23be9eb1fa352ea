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
