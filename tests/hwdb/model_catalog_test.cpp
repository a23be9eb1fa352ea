/// The shipped model catalog (hwdb/models/) against published counts, and model_to_yaml output
/// read back by the loader.

#include "hwdb/database.hpp"
#include "hwdb/hf_import.hpp"
#include "hwdb/model_yaml_writer.hpp"
#include "model/model_spec.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

namespace {

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

/// How far `computed` is from `published`, as a fraction.
double off(double computed, double published) {
    return std::abs(computed / published - 1);
}

TEST(ModelCatalog, EveryModelIsValidAndWithinTwoPercentOfPublished) {
    const auto db =
        gpuplan::hwdb::Database::load({std::string(GPUPLAN_SOURCE_DIR) + "/hwdb/models"});
    ASSERT_GE(db.models().size(), 45U);
    for (const gpuplan::model::ModelSpec& m : db.models()) {
        SCOPED_TRACE(m.name);
        EXPECT_NO_THROW(gpuplan::model::validate(m, m.name));
        const auto c = gpuplan::model::count_params(m);
        // Kimi-K2's and K2.5's cards say "1T", one significant figure, for 1.026e12.
        const bool one_figure = m.name == "kimi-k2" || m.name == "kimi-k2.5";
        EXPECT_LE(off(c.total, m.published_params), one_figure ? 0.03 : 0.02);
        if (m.moe) {
            // Cards count active parameters with the embeddings (Mixtral, Qwen3), without the
            // input embedding (DeepSeek's README_WEIGHTS.md: 36.6B of V3's 37B; OpenAI's gpt-oss
            // card) or without the LM head too (MiniMax-M2's 10B, GLM-5's 40B); the closest of
            // the three is checked. Qwen3.5's "A10B" and "A17B" labels round 9.77e9 and 17.35e9.
            const double closest =
                std::min({off(c.active, m.published_active_params),
                          off(c.active - c.embedding, m.published_active_params),
                          off(c.active - c.embedding - c.lm_head, m.published_active_params)});
            const bool label = m.name == "qwen3.5-122b-a10b" || m.name == "qwen3.5-397b-a17b";
            EXPECT_LE(closest, label ? 0.03 : 0.02);
        }
    }
}

class ModelYamlRoundTrip : public ::testing::TestWithParam<const char*> {};

TEST_P(ModelYamlRoundTrip, LoadingTheWrittenYamlReproducesTheSpec) {
    const std::string path =
        std::string(GPUPLAN_SOURCE_DIR) + "/tests/fixtures/hf/" + GetParam() + ".json";
    gpuplan::model::ModelSpec spec =
        gpuplan::hwdb::import_hf_config(read_text(path), path, GetParam());
    spec.aliases = {"Example Alias", "org/Example-Repo"};
    spec.hf_id = "org/Example-Repo";
    spec.source = "a \"quoted\" source: with a colon";
    gpuplan::hwdb::Database db;
    db.add_yaml(gpuplan::hwdb::model_to_yaml(spec), "written.yaml");
    ASSERT_EQ(db.models().size(), 1U);
    EXPECT_EQ(db.models()[0], spec);
}

INSTANTIATE_TEST_SUITE_P(HfFixtures, ModelYamlRoundTrip,
                         ::testing::Values("llama-3.1-8b", "qwen2.5-7b", "qwen3-30b-a3b",
                                           "mixtral-8x7b", "deepseek-v3", "gemma-2-9b"));

} // namespace
