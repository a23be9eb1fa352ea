// The scenario form (issue 17 item 4): every example goes read -> form -> write -> read without
// loss, each field takes the text it shows and changes nothing else, an edit in each group
// changes exactly its key, a refused value says why at the field, and a save into the opened
// file keeps its comments.
#include "gui/scenario_document.hpp"
#include "gui/scenario_form.hpp"
#include "hwdb/scenario_edit.hpp"
#include "hwdb/scenario_loader.hpp"
#include "hwdb/scenario_writer.hpp"
#include "model/error.hpp"
#include "tests/gui/gui_test_env.hpp"

#include <QComboBox>
#include <QLineEdit>
#include <QTemporaryDir>
#include <QUndoStack>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace gpuplan;

namespace {

class ScenarioFormTest : public ::testing::Test {
  protected:
    void SetUp() override { (void)test::gui_app(); }
};

std::vector<std::filesystem::path> examples() {
    std::vector<std::filesystem::path> out;
    for (const auto& e :
         std::filesystem::directory_iterator(std::string(GPUPLAN_SOURCE_DIR) + "/examples")) {
        if (e.path().extension() == ".yaml") {
            out.push_back(e.path());
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::string example(const char* name) {
    return std::string(GPUPLAN_SOURCE_DIR) + "/examples/" + name;
}

std::string read(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::vector<std::string> formKeys() {
    std::vector<std::string> out;
    for (const QString& k : gui::ScenarioForm::keys()) {
        out.push_back(k.toStdString());
    }
    return out;
}

} // namespace

TEST_F(ScenarioFormTest, EveryExampleRoundTripsThroughTheForm) {
    const auto& db = test::repo_db();
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    int checked = 0;
    for (const auto& path : examples()) {
        model::Scenario s;
        try {
            s = hwdb::load_scenario(path, db);
        } catch (const InputError&) {
            continue; // not a scenario (a sweep spec)
        }
        SCOPED_TRACE(path.filename().string());
        gui::ScenarioDocument doc(db, s);
        gui::ScenarioForm form(doc);
        // Every enabled field takes back the text it shows and changes nothing.
        for (const QString& key : gui::ScenarioForm::keys()) {
            if (!form.editor(key)->isEnabled()) {
                continue; // in a block the scenario does not have
            }
            SCOPED_TRACE(key.toStdString());
            const model::Scenario back = hwdb::with_scenario_key(
                s, db, key.toStdString(), form.text(key).toStdString(), "test");
            EXPECT_TRUE(back == s) << "'" << form.text(key).toStdString() << "'";
            EXPECT_TRUE(form.setKey(key, form.text(key)));
        }
        EXPECT_EQ(doc.undoStack()->count(), 0)
            << doc.undoStack()->text(0).toStdString(); // the field that changed something
        // And through the file: write, read, compare with the original.
        const auto out = std::filesystem::path(dir.path().toStdString()) / path.filename();
        doc.saveAs(QString::fromStdString(out.string()));
        EXPECT_TRUE(hwdb::load_scenario(out, db) == s);
        ++checked;
    }
    EXPECT_GE(checked, 20);
}

// One field of each group, edited in the form: that key's value changes and no other key the
// form or the file shows does.
TEST_F(ScenarioFormTest, EditingOneFieldChangesExactlyThatKey) {
    const auto& db = test::repo_db();
    const model::Scenario base = hwdb::load_scenario(example("simulate-chat.yaml"), db);
    struct Case {
        const char* block; // switched on first ("" for none)
        const char* key;
        const char* value;
        const char* before_key = ""; // set first too (the engine a knob belongs to)
        const char* before_value = "";
    };
    const Case cases[] = {
        {"", "engine.max_num_seqs", "96"},
        {"", "engine.preemption_mode", "swap"},
        {"", "engine.kv_cache_memory", "6 GiB"},
        {"", "engine.capacity_scheduler", "max_utilization", "engine.kind", "tensorrt-llm"},
        {"", "engine.schedule_policy", "lpm", "engine.kind", "sglang"},
        {"", "engine.schedule_conservativeness", "0.5", "engine.kind", "sglang"},
        {"", "engine.moe_load_imbalance", "1.3"},
        {"", "engine.ep_overlap", "0.5"},
        {"engine.speculative", "engine.speculative.num_speculative_tokens", "5"},
        {"engine.speculative", "engine.speculative.method", "ngram"},
        {"", "cluster.replicas", "3"},
        {"", "cluster.router", "least_kv"},
        {"", "cluster.prefix_routing.weight", "0.8"},
        {"cluster.disaggregation", "cluster.disaggregation.transfer", "whole"},
        {"cluster.disaggregation", "cluster.disaggregation.decode",
         "{accelerator: h100-sxm, replicas: 3, tp: 1}"},
        {"", "cluster.admission.max_queue", "50"},
        {"", "cluster.cold_start.startup", "30 s"},
        {"cluster.autoscaler", "cluster.autoscaler.target", "0.8"},
        {"cluster.failures", "cluster.failures.spares", "2"},
        {"cluster.cloud", "cluster.cloud.ttft_sigma", "0.5"},
        {"", "power.pue", "1.4"},
        {"", "power.gpu_cap", "500 W"},
        {"", "prices.gpu_hour", "$2.50/h"},
        {"", "rack.rack_units", "48"},
        {"", "cost.amortization_years", "5"},
        {"availability", "availability.target", "0.9999"},
        {"plan", "plan.top", "3"},
        {"plan", "plan.pricing", "rent"},
        {"training", "training.seq_len", "2048"},
        {"training", "training.grad_bucket", "50 MiB"},
        {"training", "training.fsdp_prefetch", "false"},
        {"training", "training.ep_overlap", "0.5"},
        {"", "seed", "9"},
        {"", "slo.e2e", "20 s"},
    };
    std::vector<std::string> keys = formKeys();
    for (const char* panel : {"hardware.count", "hardware.tp", "workload.input_tokens",
                              "workload.arrival", "workload.classes", "slo.ttft", "model"}) {
        keys.emplace_back(panel);
    }
    for (const Case& c : cases) {
        SCOPED_TRACE(c.key);
        gui::ScenarioDocument doc(db, base);
        gui::ScenarioForm form(doc);
        if (*c.block != '\0') {
            ASSERT_TRUE(form.setBlock(QString::fromLatin1(c.block), true))
                << form.errorFor(QString::fromLatin1(c.block)).toStdString();
        }
        if (*c.before_key != '\0') {
            ASSERT_TRUE(
                form.setKey(QString::fromLatin1(c.before_key), QString::fromLatin1(c.before_value)))
                << form.errorFor(QString::fromLatin1(c.before_key)).toStdString();
        }
        const int steps = doc.undoStack()->count();
        const std::vector<std::string> before = hwdb::scenario_key_texts(doc.scenario(), keys);
        ASSERT_TRUE(form.setKey(QString::fromLatin1(c.key), QString::fromLatin1(c.value)))
            << form.errorFor(QString::fromLatin1(c.key)).toStdString();
        EXPECT_EQ(doc.undoStack()->count(), steps + 1); // one undoable edit
        const std::vector<std::string> after = hwdb::scenario_key_texts(doc.scenario(), keys);
        // Only that key differs: the other keys show what they showed, or, where the writer
        // now spells out a block it left out, the default they had ("" before).
        for (std::size_t i = 0; i < keys.size(); ++i) {
            if (keys[i] == c.key) {
                EXPECT_EQ(after[i], c.value);
                EXPECT_NE(before[i], after[i]);
            } else if (!before[i].empty()) {
                EXPECT_EQ(before[i], after[i]) << keys[i] << " changed too";
            }
        }
        // ... and setting that key back alone gives the scenario before, exactly.
        const std::size_t at = static_cast<std::size_t>(
            std::find(keys.begin(), keys.end(), std::string(c.key)) - keys.begin());
        const model::Scenario edited = doc.scenario();
        doc.undoStack()->undo();
        const model::Scenario previous = doc.scenario();
        doc.undoStack()->redo();
        EXPECT_TRUE(hwdb::with_scenario_key(edited, db, c.key, before[at], "test") == previous);
        EXPECT_EQ(form.text(QString::fromLatin1(c.key)), QString::fromLatin1(c.value));
        doc.undoStack()->undo();
        EXPECT_EQ(hwdb::scenario_key_texts(doc.scenario(), keys), before);
    }
}

TEST_F(ScenarioFormTest, ARefusedValueSaysWhyAtTheFieldAndChangesNothing) {
    const auto& db = test::repo_db();
    const model::Scenario base = hwdb::load_scenario(example("simulate-chat.yaml"), db);
    gui::ScenarioDocument doc(db, base);
    gui::ScenarioForm form(doc);
    const QString seqs = QStringLiteral("engine.max_num_seqs");
    EXPECT_FALSE(form.setKey(seqs, QStringLiteral("lots")));
    EXPECT_NE(form.errorFor(seqs).indexOf(QStringLiteral("max_num_seqs")), -1)
        << form.errorFor(seqs).toStdString();
    EXPECT_EQ(form.text(seqs), QStringLiteral("lots")); // kept for the user to fix
    EXPECT_TRUE(doc.scenario() == base);
    EXPECT_EQ(doc.undoStack()->count(), 0);
    const QString util = QStringLiteral("engine.gpu_memory_utilization");
    EXPECT_FALSE(form.setKey(util, QStringLiteral("1.5")));
    EXPECT_FALSE(form.errorFor(util).isEmpty());
    EXPECT_TRUE(doc.scenario() == base);
    // Fixing it clears the message and applies.
    EXPECT_TRUE(form.setKey(seqs, QStringLiteral("64")));
    EXPECT_TRUE(form.errorFor(seqs).isEmpty());
    EXPECT_EQ(doc.scenario().deployment.engine.max_num_seqs, 64);
    // Drop-downs list the enum_names spellings (no aliases), with "" for the default.
    auto* engine = qobject_cast<QComboBox*>(form.editor(QStringLiteral("engine.kind")));
    ASSERT_NE(engine, nullptr);
    EXPECT_EQ(engine->findText(QStringLiteral("trtllm")), -1);
    EXPECT_GE(engine->findText(QStringLiteral("tensorrt-llm")), 0);
    // The autoscaler and replica failures now run together (a failed replica is replaced by a
    // cold start): both boxes apply.
    EXPECT_TRUE(form.setBlock(QStringLiteral("cluster.autoscaler"), true));
    EXPECT_TRUE(form.setBlock(QStringLiteral("cluster.failures"), true));
    EXPECT_TRUE(form.errorFor(QStringLiteral("cluster.failures")).isEmpty());
    EXPECT_TRUE(doc.scenario().cluster.autoscaler.has_value());
    EXPECT_TRUE(doc.scenario().cluster.failures.has_value());
}

TEST_F(ScenarioFormTest, SavingIntoTheOpenedFileKeepsItsComments) {
    const auto& db = test::repo_db();
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    const auto file = std::filesystem::path(dir.path().toStdString()) / "rag.yaml";
    std::filesystem::copy_file(example("prefix-routing-rag.yaml"), file);
    const std::string original = read(file);
    gui::ScenarioDocument doc(db, hwdb::load_scenario(file, db));
    doc.open(QString::fromStdString(file.string()));
    gui::ScenarioForm form(doc);
    ASSERT_TRUE(form.setKey(QStringLiteral("cluster.router"), QStringLiteral("weighted")));
    ASSERT_TRUE(form.setKey(QStringLiteral("seed"), QStringLiteral("12")));
    doc.saveAs(QString::fromStdString(file.string()));
    std::string expected = original;
    expected.replace(expected.find("router: longest_prefix"), 22, "router: weighted");
    expected.replace(expected.find("seed: 11"), 8, "seed: 12");
    EXPECT_EQ(read(file), expected);
    EXPECT_TRUE(hwdb::load_scenario(file, db) == doc.scenario());
    EXPECT_NE(doc.lastSaveNote().indexOf(QStringLiteral("2 value")), -1)
        << doc.lastSaveNote().toStdString();
}

// cluster.disaggregation's "on" box starts both pools as one replica of the scenario's own
// accelerator and tp over ib-ndr; the new enums are drop-downs; an engine's knob on another
// engine, and disaggregation beside cluster.replicas, are refused with the loader's message.
TEST_F(ScenarioFormTest, NewBlocksAndKnobsStartValidAndRefuseWhatTheLoaderRefuses) {
    const auto& db = test::repo_db();
    const model::Scenario base = hwdb::load_scenario(example("simulate-chat.yaml"), db);
    gui::ScenarioDocument doc(db, base);
    gui::ScenarioForm form(doc);
    const QString disagg = QStringLiteral("cluster.disaggregation");
    EXPECT_FALSE(form.editor(QStringLiteral("cluster.disaggregation.link"))->isEnabled());
    ASSERT_TRUE(form.setBlock(disagg, true)) << form.errorFor(disagg).toStdString();
    // simulate-chat.yaml: accelerator h100-sxm, no hardware.tp (1).
    const char* pool = "{accelerator: h100-sxm, replicas: 1, tp: 1}";
    EXPECT_EQ(form.text(QStringLiteral("cluster.disaggregation.prefill")).toStdString(), pool);
    EXPECT_EQ(form.text(QStringLiteral("cluster.disaggregation.decode")).toStdString(), pool);
    EXPECT_EQ(form.text(QStringLiteral("cluster.disaggregation.link")), QStringLiteral("ib-ndr"));
    EXPECT_EQ(form.text(QStringLiteral("cluster.disaggregation.transfer")),
              QStringLiteral("layerwise")); // the default, which the writer spells out
    EXPECT_TRUE(form.editor(QStringLiteral("cluster.disaggregation.link"))->isEnabled());
    ASSERT_TRUE(doc.scenario().cluster.disaggregation.has_value());
    EXPECT_EQ(doc.scenario().cluster.disaggregation->decode.replicas, 1);
    EXPECT_TRUE(form.setBlock(disagg, false));
    EXPECT_TRUE(doc.scenario() == base);
    // Disaggregation gives its own pools: with cluster.replicas it is refused at its box.
    ASSERT_TRUE(form.setKey(QStringLiteral("cluster.replicas"), QStringLiteral("2")));
    EXPECT_FALSE(form.setBlock(disagg, true));
    EXPECT_NE(form.errorFor(disagg).indexOf(QStringLiteral("gives its own pools")), -1)
        << form.errorFor(disagg).toStdString();
    EXPECT_FALSE(doc.scenario().cluster.disaggregation.has_value());
    // TensorRT-LLM's capacity scheduler on vLLM is refused at the field.
    const QString cap = QStringLiteral("engine.capacity_scheduler");
    EXPECT_FALSE(form.setKey(cap, QStringLiteral("max_utilization")));
    EXPECT_NE(form.errorFor(cap).indexOf(QStringLiteral("TensorRT-LLM")), -1)
        << form.errorFor(cap).toStdString();
    // The speculative method and the plan's pricing are drop-downs of their enum_names.
    auto* method =
        qobject_cast<QComboBox*>(form.editor(QStringLiteral("engine.speculative.method")));
    ASSERT_NE(method, nullptr);
    for (const char* m : {"draft_model", "eagle", "mtp", "ngram"}) {
        EXPECT_GE(method->findText(QString::fromLatin1(m)), 0) << m;
    }
    auto* pricing = qobject_cast<QComboBox*>(form.editor(QStringLiteral("plan.pricing")));
    ASSERT_NE(pricing, nullptr);
    EXPECT_GE(pricing->findText(QStringLiteral("own")), 0);
    EXPECT_GE(pricing->findText(QStringLiteral("rent")), 0);
    EXPECT_NE(qobject_cast<QComboBox*>(form.editor(cap)), nullptr);
}
