/// Models the way users name them: Hugging Face ids resolved to the catalog or to a fake local
/// Hugging Face cache built in the test, and "did you mean" suggestions that keep the family
/// and size.

#include "hwdb/model_resolver.hpp"

#include "hwdb/database.hpp"
#include "hwdb/scenario_loader.hpp"
#include "model/error.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using gpuplan::hwdb::resolve_model;

const gpuplan::hwdb::Database& db() {
    static const gpuplan::hwdb::Database d =
        gpuplan::hwdb::Database::load({std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    return d;
}

std::string fixture(const std::string& name) {
    return std::string(GPUPLAN_SOURCE_DIR) + "/tests/fixtures/hf/" + name;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

/// A hub cache in huggingface_hub's layout: models--ORG--NAME/{refs/main,snapshots/REV/}.
class FakeHub {
  public:
    // One folder per test and process, so ctest -j runs them side by side, and so do two builds
    // (a Release and a sanitizer build) testing at once on one machine.
    FakeHub()
        : root_(fs::temp_directory_path() /
                (std::string("gpuplan-fake-hf-hub-") + std::to_string(::getpid()) + "-" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
        fs::remove_all(root_);
        fs::create_directories(root_);
    }
    ~FakeHub() { fs::remove_all(root_); }
    FakeHub(const FakeHub&) = delete;
    FakeHub& operator=(const FakeHub&) = delete;

    /// Puts `config` (a fixture path) as snapshot `revision` of `org/name`; `main` writes
    /// refs/main.
    void add(const std::string& org, const std::string& name, const std::string& revision,
             const std::string& config, bool main) const {
        const fs::path repo = root_ / ("models--" + org + "--" + name);
        fs::create_directories(repo / "snapshots" / revision);
        fs::copy_file(config, repo / "snapshots" / revision / "config.json",
                      fs::copy_options::overwrite_existing);
        if (main) {
            fs::create_directories(repo / "refs");
            std::ofstream(repo / "refs" / "main")
                << revision; // no newline, as huggingface_hub writes it
        }
    }
    [[nodiscard]] const fs::path& path() const { return root_; }

  private:
    fs::path root_;
};

} // namespace

TEST(ModelResolver, CatalogNamesAndAliasesResolveAsBefore) {
    const auto r = resolve_model(db(), "meta-llama/Llama-3.1-70B-Instruct", "/nonexistent");
    EXPECT_EQ(r.spec.name, "llama-3.1-70b");
    EXPECT_FALSE(r.spec.weights.has_value());
    EXPECT_TRUE(r.note.empty());
    EXPECT_EQ(resolve_model(db(), "LLAMA-3.1-8B", "/nonexistent").spec.name, "llama-3.1-8b");
}

TEST(ModelResolver, SuffixesFindTheBaseModelAndKeepTheQuantization) {
    const auto awq = resolve_model(db(), "Qwen/Qwen2.5-72B-Instruct-AWQ", "/nonexistent");
    EXPECT_EQ(awq.spec.name, "qwen2.5-72b");
    ASSERT_TRUE(awq.spec.weights.has_value());
    EXPECT_EQ(awq.spec.weights->name, "awq-int4");
    EXPECT_TRUE(contains(awq.note, "catalog model 'qwen2.5-72b' with awq-int4 weights"))
        << awq.note;

    const auto fp8 =
        resolve_model(db(), "neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8-dynamic", "/nonexistent");
    EXPECT_EQ(fp8.spec.name, "llama-3.1-70b");
    EXPECT_EQ(fp8.spec.weights->name, "fp8");

    const auto gptq = resolve_model(db(), "Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8", "/nonexistent");
    EXPECT_EQ(gptq.spec.name, "qwen2.5-7b");
    EXPECT_EQ(gptq.spec.weights->name, "gptq-int8");

    const auto w4 = resolve_model(db(), "neuralmagic/Meta-Llama-3.1-8B-Instruct-quantized.w4a16",
                                  "/nonexistent");
    EXPECT_EQ(w4.spec.name, "llama-3.1-8b");
    EXPECT_EQ(w4.spec.weights->name, "int4");

    // A fine-tune suffix only: the base model with its own (16-bit) weights.
    const auto chat = resolve_model(db(), "some-org/Llama-3.1-8B-Chat", "/nonexistent");
    EXPECT_EQ(chat.spec.name, "llama-3.1-8b");
    EXPECT_FALSE(chat.spec.weights.has_value());
}

TEST(ModelResolver, OpaqueQuantizedNamesSayTheWeightsAreTheCatalogs) {
    const auto gguf =
        resolve_model(db(), "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF", "/nonexistent");
    EXPECT_EQ(gguf.spec.name, "llama-3.1-8b");
    EXPECT_FALSE(gguf.spec.weights.has_value());
    EXPECT_TRUE(contains(gguf.note, "with the catalog's bf16 weights, though its name says it is "
                                    "quantized"))
        << gguf.note;
    EXPECT_TRUE(
        contains(resolve_model(db(), "unsloth/Llama-3.1-8B-Instruct-bnb-4bit", "/nonexistent").note,
                 "--weights"));
}

TEST(ModelResolver, PrecisionInName) {
    using gpuplan::hwdb::precision_in_name;
    EXPECT_EQ(precision_in_name("hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4")->name,
              "awq-int4");
    EXPECT_EQ(precision_in_name("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4")->name, "gptq-int4");
    EXPECT_EQ(precision_in_name("nvidia/Llama-3.1-8B-Instruct-FP4")->name, "nvfp4");
    EXPECT_EQ(precision_in_name("RedHatAI/Llama-3.1-8B-Instruct-quantized.w8a8")->name, "int8");
    EXPECT_FALSE(precision_in_name("meta-llama/Llama-3.1-8B-Instruct").has_value());
    EXPECT_FALSE(precision_in_name("example/awqward-7b").has_value()); // whole tokens only
}

TEST(ModelResolver, CachedConfigQuantizationBeatsTheName) {
    FakeHub hub;
    // The repository name says nothing about AWQ; its config.json does.
    hub.add("example-org", "Llama-3.1-8B-Instruct", "abc123", fixture("llama-3.1-8b-awq.json"),
            true);
    const auto r = resolve_model(db(), "example-org/Llama-3.1-8B-Instruct", hub.path());
    EXPECT_EQ(r.spec.name, "llama-3.1-8b");
    ASSERT_TRUE(r.spec.weights.has_value());
    EXPECT_EQ(r.spec.weights->name, "awq-int4");
    EXPECT_TRUE(contains(r.note, "from its config.json in the Hugging Face cache")) << r.note;
}

TEST(ModelResolver, UncataloguedIdReadsTheCachedConfigOfRefsMain) {
    FakeHub hub;
    // refs/main names "new456"; an older snapshot holds a different (FP8) config.
    hub.add("Example-Org", "Custom-Llama", "old000", fixture("llama-3.1-8b-fp8.json"), false);
    hub.add("Example-Org", "Custom-Llama", "new456", fixture("llama-3.1-8b-gptq-g32.json"), true);
    const auto cfg = gpuplan::hwdb::find_cached_config(hub.path(), "example-org/custom-llama");
    ASSERT_TRUE(cfg.has_value()); // ids match case-insensitively
    EXPECT_EQ(cfg->parent_path().filename(), "new456");

    const auto r = resolve_model(db(), "Example-Org/Custom-Llama", hub.path());
    EXPECT_EQ(r.spec.name, "custom-llama"); // the id names it, not the snapshot folder
    EXPECT_EQ(r.spec.hf_id, "Example-Org/Custom-Llama");
    EXPECT_EQ(r.spec.layers, 32);
    ASSERT_TRUE(r.spec.weights.has_value());
    EXPECT_EQ(r.spec.weights->name, "gptq-int4:g32");
    EXPECT_TRUE(contains(r.note, "not in the catalog")) << r.note;
}

TEST(ModelResolver, WithoutRefsMainTheNewestSnapshotWins) {
    FakeHub hub;
    hub.add("org", "m", "rev1", fixture("llama-3.1-8b-fp8.json"), false);
    const fs::path older = hub.path() / "models--org--m" / "snapshots" / "rev1";
    fs::last_write_time(older, fs::file_time_type::clock::now() - std::chrono::hours(24));
    hub.add("org", "m", "rev2", fixture("llama-3.1-8b-awq.json"), false);
    const auto cfg = gpuplan::hwdb::find_cached_config(hub.path(), "org/m");
    ASSERT_TRUE(cfg.has_value());
    EXPECT_EQ(cfg->parent_path().filename(), "rev2");
}

TEST(ModelResolver, HubCacheFollowsHfHomeAndHfHubCache) {
    const char* saved_home = std::getenv("HF_HOME");
    const char* saved_hub = std::getenv("HF_HUB_CACHE");
    const std::string home = saved_home ? saved_home : "";
    const std::string hub = saved_hub ? saved_hub : "";
    unsetenv("HF_HUB_CACHE");
    setenv("HF_HOME", "/tmp/hf-home-test", 1);
    EXPECT_EQ(gpuplan::hwdb::hf_hub_cache(), fs::path("/tmp/hf-home-test/hub"));
    setenv("HF_HUB_CACHE", "/tmp/hub-cache-test", 1);
    EXPECT_EQ(gpuplan::hwdb::hf_hub_cache(), fs::path("/tmp/hub-cache-test"));
    unsetenv("HF_HOME");
    unsetenv("HF_HUB_CACHE");
    setenv("HOME", std::getenv("HOME") ? std::getenv("HOME") : "/root", 1);
    EXPECT_EQ(gpuplan::hwdb::hf_hub_cache().filename(), "hub");
    if (saved_home)
        setenv("HF_HOME", home.c_str(), 1);
    if (saved_hub)
        setenv("HF_HUB_CACHE", hub.c_str(), 1);
}

TEST(ModelResolver, UnknownIdNamesTheCacheAndSuggestsTheSameFamilyAndSize) {
    try {
        (void)resolve_model(db(), "meta-llama/Llama-3-70B-Instruct", "/no/hub");
        ADD_FAILURE() << "resolved an unknown id";
    } catch (const gpuplan::InputError& e) {
        const std::string what = e.what();
        EXPECT_TRUE(contains(what, "unknown model 'meta-llama/Llama-3-70B-Instruct'")) << what;
        EXPECT_TRUE(contains(what, "did you mean 'llama-3.1-70b'?")) << what;
        EXPECT_TRUE(contains(what, "/no/hub")) << what;
    }
}

TEST(ModelResolver, ScenarioFilesResolveHuggingFaceIdsToo) {
    const auto s = gpuplan::hwdb::parse_scenario(
        "schema: 1\nmodel: Qwen/Qwen2.5-7B-Instruct-AWQ\nhardware:\n  accelerator: h100-sxm\n",
        "s.yaml", db());
    EXPECT_EQ(s.deployment.model.name, "qwen2.5-7b");
    EXPECT_EQ(s.deployment.prec.weights.name, "awq-int4");
    EXPECT_EQ(s.model_ref, "Qwen/Qwen2.5-7B-Instruct-AWQ");
}

// The reproduction: "Llama-3-70B" suggested llama-2-70b although llama-3.1-70b exists.
TEST(ModelSuggestion, PrefersTheSameFamilyVersionAndSize) {
    EXPECT_EQ(db().suggest_model("Llama-3-70B"), "llama-3.1-70b");
    try {
        (void)db().model("Llama-3-70B");
        ADD_FAILURE() << "Llama-3-70B resolved";
    } catch (const gpuplan::InputError& e) {
        EXPECT_TRUE(contains(e.what(), "did you mean 'llama-3.1-70b'?")) << e.what();
    }
    EXPECT_EQ(db().suggest_model("llama-3-8b"), "llama-3.1-8b");
    EXPECT_EQ(db().suggest_model("llama-3.1-7b"), "llama-3.1-8b"); // version before size
    EXPECT_EQ(db().suggest_model("llama-2-7b-chat"), "llama-2-7b");
    EXPECT_EQ(db().suggest_model("Qwen2-72B"), "qwen2.5-72b");
    EXPECT_EQ(db().suggest_model("qwen3-30b"), "qwen3-30b-a3b");
    EXPECT_EQ(db().suggest_model("mixtral-8x7b-v0.1"), "mixtral-8x7b");
    EXPECT_FALSE(db().suggest_model("completely-different").has_value());
}
