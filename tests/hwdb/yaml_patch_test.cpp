// The comment-keeping save (issue 17 item 4): scalars patched in place keep every other byte,
// shape changes rewrite only their top-level block, and what is written reads back to the edited
// scenario.
#include "hwdb/scenario_edit.hpp"
#include "hwdb/scenario_loader.hpp"
#include "hwdb/scenario_writer.hpp"
#include "hwdb/yaml_patch.hpp"
#include "model/error.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace gpuplan;

namespace {

const hwdb::Database& db() {
    static const hwdb::Database d =
        hwdb::Database::load({std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    return d;
}

std::filesystem::path temp_dir() {
    const auto dir =
        std::filesystem::temp_directory_path() /
        ("gpuplan-patch-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
    std::filesystem::create_directories(dir);
    return dir;
}

/// `text` with the first `from` after `anchor` replaced by `to` (the expected edit, by hand).
std::string replaced(std::string text, const std::string& anchor, const std::string& from,
                     const std::string& to) {
    const auto a = text.find(anchor);
    EXPECT_NE(a, std::string::npos) << anchor;
    const auto p = text.find(from, a);
    EXPECT_NE(p, std::string::npos) << from;
    return text.replace(p, from.size(), to);
}

const std::string kCommented = R"(# A scenario a person wrote.
schema: 1
name: commented
model: llama-3.1-8b   # the catalog entry

hardware:
  accelerator: h100-sxm
  count: 2            # two replicas
engine:
  kind: vllm
  # the batch cap we measured
  max_num_seqs: 128   # measured 2026-11
  max_model_len: 8192
workload:
  input_tokens: 1000
  output_tokens: 200
  requests_per_s: 4
slo: {ttft: 500 ms, tpot: 50 ms}   # product asks
cluster:
  router: least_kv    # keeps KV even
seed: 7
# trailing note
)";

} // namespace

TEST(YamlPatch, ThreeScalarsChangeAndEveryOtherByteStays) {
    const auto path = temp_dir() / "commented.yaml";
    const model::Scenario loaded = hwdb::parse_scenario(kCommented, path.string(), db());
    model::Scenario edited = loaded;
    edited.deployment.engine.max_num_seqs = 64;
    edited.slo.ttft = Seconds(0.25);
    edited.cluster.router = model::RouterPolicy::RoundRobin;

    const hwdb::KeptSave saved =
        hwdb::save_scenario_keeping(path, kCommented, loaded, edited, db());
    EXPECT_TRUE(saved.patched);
    EXPECT_TRUE(saved.rewritten.empty());
    EXPECT_EQ(saved.replaced.size(), 3U);
    std::string expected = replaced(kCommented, "max_num_seqs:", "128", "64");
    expected = replaced(expected, "slo:", "500 ms", "0.25 s"); // the writer's shortest spelling
    expected = replaced(expected, "router:", "least_kv", "round_robin");
    EXPECT_EQ(saved.text, expected);
    std::ifstream in(path, std::ios::binary);
    std::ostringstream file;
    file << in.rdbuf();
    EXPECT_EQ(file.str(), expected);
    EXPECT_TRUE(hwdb::load_scenario(path, db()) == edited);
}

TEST(YamlPatch, AnAddedKeyRewritesOnlyItsBlock) {
    const auto path = temp_dir() / "added.yaml";
    const model::Scenario loaded = hwdb::parse_scenario(kCommented, path.string(), db());
    model::Scenario edited = loaded;
    edited.cluster.admission.max_queue = 100; // a key the file does not have
    edited.seed = 9;

    const hwdb::KeptSave saved =
        hwdb::save_scenario_keeping(path, kCommented, loaded, edited, db());
    EXPECT_TRUE(saved.patched);
    ASSERT_EQ(saved.rewritten.size(), 1U);
    EXPECT_EQ(saved.rewritten.front(), "cluster");
    for (const char* kept : {"# A scenario a person wrote.", "# the catalog entry",
                             "# two replicas", "# the batch cap we measured", "# measured 2026-11",
                             "# product asks", "# trailing note", "seed: 9\n"}) {
        EXPECT_NE(saved.text.find(kept), std::string::npos) << kept;
    }
    EXPECT_EQ(saved.text.find("# keeps KV even"), std::string::npos); // inside the rewritten block
    EXPECT_NE(saved.text.find("max_queue: 100"), std::string::npos);
    EXPECT_TRUE(hwdb::load_scenario(path, db()) == edited);
}

TEST(YamlPatch, AMissingTopLevelKeyIsInsertedInOrder) {
    const std::string original = "a: 1  # one\nc: 3  # three\n";
    const hwdb::YamlPatch p = hwdb::patch_yaml(original, "a: 1\nc: 3\n", "a: 1\nb: {x: 2}\nc: 3\n");
    EXPECT_EQ(p.text, "a: 1  # one\nb: {x: 2}\nc: 3  # three\n");
    const hwdb::YamlPatch removed = hwdb::patch_yaml(original, "a: 1\nc: 3\n", "c: 3\n");
    EXPECT_EQ(removed.text, "c: 3  # three\n");
}

TEST(YamlPatch, QuotedAndFlowScalarsArePatchedWhole) {
    const std::string original = "n: \"a # b\"  # note\nm: {x: 1, y: 'two'}  # flow\n";
    const hwdb::YamlPatch p = hwdb::patch_yaml(original, "n: \"a # b\"\nm: {x: 1, y: two}\n",
                                               "n: \"c\"\nm: {x: 5, y: three}\n");
    EXPECT_EQ(p.text, "n: \"c\"  # note\nm: {x: 5, y: three}  # flow\n");
    EXPECT_TRUE(p.rewritten.empty());
}

TEST(YamlPatch, EveryExampleSavesUnchangedWhenNothingChanged) {
    int checked = 0;
    for (const auto& e :
         std::filesystem::directory_iterator(std::string(GPUPLAN_SOURCE_DIR) + "/examples")) {
        if (e.path().extension() != ".yaml") {
            continue;
        }
        std::ifstream in(e.path(), std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        model::Scenario s;
        try {
            s = hwdb::parse_scenario(text.str(), e.path().string(), db());
        } catch (const InputError&) {
            continue; // a sweep spec or fleet file, not a scenario
        }
        SCOPED_TRACE(e.path().filename().string());
        const std::string canonical = hwdb::scenario_to_yaml(s);
        EXPECT_EQ(hwdb::patch_yaml(text.str(), canonical, canonical).text, text.str());
        ++checked;
    }
    EXPECT_GE(checked, 15);
}

TEST(ScenarioEdit, OneKeyIsCheckedByTheLoaderAndChangesOnlyThatKey) {
    const model::Scenario s = hwdb::parse_scenario(kCommented, "commented.yaml", db());
    const model::Scenario next =
        hwdb::with_scenario_key(s, db(), "engine.max_num_seqs", "32", "max_num_seqs");
    model::Scenario expected = s;
    expected.deployment.engine.max_num_seqs = 32;
    EXPECT_TRUE(next == expected);
    EXPECT_EQ(hwdb::scenario_key_text(next, "engine.max_num_seqs"), "32");
    EXPECT_EQ(hwdb::scenario_key_text(next, "cluster.router"), "least_kv");
    EXPECT_EQ(hwdb::scenario_key_text(next, "cluster.autoscaler"), "");
    // "" removes the key: the loader's default (unset) comes back.
    EXPECT_FALSE(hwdb::with_scenario_key(s, db(), "engine.max_num_seqs", "", "max_num_seqs")
                     .deployment.engine.max_num_seqs.has_value());
    EXPECT_THROW((void)hwdb::with_scenario_key(s, db(), "engine.max_num_seqs", "many", "field"),
                 InputError);
    EXPECT_THROW((void)hwdb::with_scenario_key(s, db(), "cluster.router", "fastest", "field"),
                 InputError);
}

// Every example, edited (a new seed, a batch cap, a percentile) and saved into its own text,
// keeps every comment outside the blocks written anew and reads back as edited.
TEST(YamlPatch, EveryExampleKeepsItsCommentsThroughAnEdit) {
    int checked = 0;
    int comments = 0;
    for (const auto& e :
         std::filesystem::directory_iterator(std::string(GPUPLAN_SOURCE_DIR) + "/examples")) {
        if (e.path().extension() != ".yaml") {
            continue;
        }
        std::ifstream in(e.path(), std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        model::Scenario s;
        try {
            s = hwdb::parse_scenario(text.str(), e.path().string(), db());
        } catch (const InputError&) {
            continue; // a sweep spec, not a scenario
        }
        SCOPED_TRACE(e.path().filename().string());
        model::Scenario edited = s;
        edited.seed = 12345;
        edited.deployment.engine.max_num_seqs = 77;
        edited.slo.percentile = 95;
        const auto path = temp_dir() / e.path().filename();
        const hwdb::KeptSave saved = hwdb::save_scenario_keeping(path, text.str(), s, edited, db());
        EXPECT_TRUE(saved.patched);
        EXPECT_TRUE(hwdb::load_scenario(path, db()) == edited);
        // The comment lines of the blocks not written anew are all still there.
        std::istringstream lines(text.str());
        std::string top;
        for (std::string line; std::getline(lines, line);) {
            if (!line.empty() && line.front() != ' ' && line.front() != '#') {
                top = line.substr(0, line.find(':'));
            }
            const auto hash = line.find(" #");
            const bool rewritten = std::find(saved.rewritten.begin(), saved.rewritten.end(), top) !=
                                   saved.rewritten.end();
            if (hash != std::string::npos && !rewritten) {
                EXPECT_NE(saved.text.find(line.substr(hash)), std::string::npos) << line;
                ++comments;
            }
        }
        ++checked;
    }
    EXPECT_GE(checked, 15);
    EXPECT_GE(comments, 20);
}
