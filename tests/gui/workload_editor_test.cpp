// The workload form (issue 17 item 4): every example's arrival process and request classes go
// through the form and back without loss (read -> form -> write -> read gives the same
// scenario), and edits made in the form reach the document as one undoable step.
#include "gui/scenario_document.hpp"
#include "gui/workload_editor.hpp"
#include "hwdb/scenario_loader.hpp"
#include "hwdb/scenario_writer.hpp"
#include "model/error.hpp"
#include "tests/gui/gui_test_env.hpp"

#include <QTableWidget>
#include <QTemporaryDir>
#include <QUndoStack>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace gpuplan;

namespace {

class WorkloadEditorTest : public ::testing::Test {
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

} // namespace

TEST_F(WorkloadEditorTest, EveryExampleRoundTripsThroughTheForm) {
    const auto& db = test::repo_db();
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    int checked = 0;
    int with_classes = 0;
    for (const auto& path : examples()) {
        SCOPED_TRACE(path.filename().string());
        model::Scenario s;
        try {
            s = hwdb::load_scenario(path, db);
        } catch (const InputError&) {
            continue; // not a scenario (a sweep spec or a training-only file the loader refuses)
        }
        gui::ScenarioDocument doc(db, s);
        gui::WorkloadEditor form(doc);
        form.setWorkload(s.workload);
        model::Scenario back = s;
        back.workload = form.workload(s.workload);
        EXPECT_EQ(back.workload, s.workload);
        // And through the file format: write, read, compare with the original.
        const auto out = std::filesystem::path(dir.path().toStdString()) / path.filename();
        hwdb::save_scenario(out, back);
        const model::Scenario reread = hwdb::load_scenario(out, db);
        EXPECT_EQ(reread.workload, s.workload);
        EXPECT_TRUE(reread == s);
        ++checked;
        with_classes += s.workload.classes.empty() ? 0 : 1;
    }
    EXPECT_GE(checked, 20);
    EXPECT_GE(with_classes, 3);
}

TEST_F(WorkloadEditorTest, LengthDistributionsReadAndWriteOneLine) {
    model::LengthDistribution d;
    d.kind = model::LengthKind::LogNormal;
    d.mean = 800;
    d.stddev = 400.5;
    d.max = 4096;
    EXPECT_EQ(gui::formatLength(d), QStringLiteral("lognormal mean=800 stddev=400.5 max=4096"));
    EXPECT_EQ(gui::parseLength(QStringLiteral("lognormal mean=800 stddev=400.5 max=4096")), d);
    EXPECT_EQ(gui::parseLength(QStringLiteral("fixed 1024")),
              model::LengthDistribution::fixed(1024));
    model::LengthDistribution e;
    e.kind = model::LengthKind::Empirical;
    e.values = {128, 512};
    e.weights = {0.7, 0.3};
    EXPECT_EQ(gui::formatLength(e), QStringLiteral("empirical values=128,512 weights=0.7,0.3"));
    EXPECT_EQ(gui::parseLength(gui::formatLength(e)), e);
    // 0.1 + 0.2 is not 0.3: written in as many digits as it takes to read back exactly.
    model::LengthDistribution n;
    n.kind = model::LengthKind::Normal;
    n.mean = 0.1 + 0.2;
    EXPECT_EQ(gui::parseLength(gui::formatLength(n)), n);
    try {
        (void)gui::parseLength(QStringLiteral("zipf mean=3"));
        FAIL() << "zipf accepted";
    } catch (const InputError& err) {
        EXPECT_NE(std::string(err.what()).find("'zipf' is not one of fixed, uniform"),
                  std::string::npos)
            << err.what();
    }
}

TEST_F(WorkloadEditorTest, AnEditInTheTableIsOneUndoableStep) {
    const auto& db = test::repo_db();
    const model::Scenario s =
        hwdb::load_scenario(std::string(GPUPLAN_SOURCE_DIR) + "/examples/simulate-chat.yaml", db);
    ASSERT_EQ(s.workload.classes.size(), 3u);
    gui::ScenarioDocument doc(db, s);
    gui::WorkloadEditor form(doc);
    QTableWidget& t = form.classTable();
    ASSERT_EQ(t.rowCount(), 3);
    t.item(0, 1)->setText(QStringLiteral("0.5"));                   // share
    t.item(0, 3)->setText(QStringLiteral("uniform min=10 max=20")); // output
    t.item(0, 7)->setText(QStringLiteral("0.25"));                  // TTFT SLO
    ASSERT_TRUE(form.apply()) << form.errorText().toStdString();
    const auto& c = doc.scenario().workload.classes.at(0);
    EXPECT_DOUBLE_EQ(c.share, 0.5);
    EXPECT_EQ(c.output.kind, model::LengthKind::Uniform);
    EXPECT_EQ(c.output.min, 10);
    EXPECT_EQ(c.output.max, 20);
    ASSERT_TRUE(c.ttft);
    EXPECT_DOUBLE_EQ(c.ttft->si(), 0.25);
    // The other classes are untouched; undo restores the original.
    EXPECT_EQ(doc.scenario().workload.classes.at(1), s.workload.classes.at(1));
    doc.undoStack()->undo();
    EXPECT_TRUE(doc.scenario() == s);
    // An edit elsewhere keeps what is typed in the form; undo of a form edit shows it back.
    t.item(2, 6)->setText(QStringLiteral("7"));
    model::Scenario other = doc.scenario();
    other.workload.input_tokens += 1;
    doc.edit(other, QStringLiteral("input tokens"));
    EXPECT_EQ(t.item(2, 6)->text(), QStringLiteral("7"));
    doc.undoStack()->undo();
    EXPECT_EQ(t.item(2, 6)->text(), QStringLiteral("7"));
    ASSERT_TRUE(form.apply());
    EXPECT_EQ(doc.scenario().workload.classes.at(2).priority, 7);
    doc.undoStack()->undo();
    EXPECT_EQ(t.item(2, 6)->text(), QString::number(s.workload.classes.at(2).priority));
    // A cell that cannot be read is named, and nothing changes.
    t.item(1, 2)->setText(QStringLiteral("fixed many"));
    EXPECT_FALSE(form.apply());
    EXPECT_NE(form.errorText().indexOf(QStringLiteral("class row 2, input tokens")), -1)
        << form.errorText().toStdString();
    EXPECT_TRUE(doc.scenario() == s);
}

// What the examples do not use: every process, step and diurnal curves, agent sessions,
// routes, per-class SLOs and priorities, through the form and the file format.
TEST_F(WorkloadEditorTest, EveryProcessCurveAndClassFieldRoundTrips) {
    const auto& db = test::repo_db();
    const model::Scenario base =
        hwdb::load_scenario(std::string(GPUPLAN_SOURCE_DIR) + "/examples/simulate-chat.yaml", db);
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    const auto variant = [&](int i) {
        model::Scenario s = base;
        auto& a = s.workload.arrival;
        auto& c = s.workload.classes.at(0);
        switch (i) {
        case 0:
            a.kind = model::ArrivalKind::Gamma;
            a.cv = 2.5;
            a.requests_per_s = 7.25;
            a.curve.kind = model::RateCurveKind::Diurnal;
            a.curve.period = Seconds(3600);
            a.curve.amplitude = 0.3;
            a.curve.peak_at = Seconds(900);
            break;
        case 1:
            a.kind = model::ArrivalKind::Constant;
            a.curve.kind = model::RateCurveKind::Step;
            a.curve.steps = {{Seconds(60), 20}, {Seconds(120.5), 5}};
            break;
        default:
            a.kind = model::ArrivalKind::ClosedLoop;
            a.users = 48;
            a.think_time = Seconds(1.5);
            c.agent = model::AgentSession{};
            c.agent->steps = 6;
            c.agent->think_time = Seconds(2);
            c.agent->step_input.kind = model::LengthKind::Uniform;
            c.agent->step_input.min = 50;
            c.agent->step_input.max = 300;
            break;
        }
        c.priority = 2;
        c.ttft = Seconds(0.3);
        c.e2e = Seconds(20);
        c.route = model::RouteTarget::Local;
        c.shared_prefix = 512;
        c.prefix_groups = 4;
        return s;
    };
    for (int i = 0; i < 3; ++i) {
        SCOPED_TRACE(i);
        const model::Scenario s = variant(i);
        gui::ScenarioDocument doc(db, s);
        gui::WorkloadEditor form(doc);
        model::Scenario back = s;
        back.workload = form.workload(s.workload);
        EXPECT_EQ(back.workload, s.workload);
        const auto out = std::filesystem::path(dir.path().toStdString()) /
                         ("variant" + std::to_string(i) + ".yaml");
        hwdb::save_scenario(out, back);
        EXPECT_EQ(hwdb::load_scenario(out, db).workload, s.workload);
    }
}

// A trace file loaded in the form replaces the workload's records and makes the process trace;
// a file that cannot be read says why and changes nothing.
TEST_F(WorkloadEditorTest, ALoadedTraceIsReplayed) {
    const auto& db = test::repo_db();
    const model::Scenario s =
        hwdb::load_scenario(std::string(GPUPLAN_SOURCE_DIR) + "/examples/simulate-chat.yaml", db);
    gui::ScenarioDocument doc(db, s);
    gui::WorkloadEditor form(doc);
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    const QString good = dir.filePath(QStringLiteral("t.csv"));
    {
        std::ofstream out(good.toStdString());
        out << "arrival_s,input_tokens,output_tokens\n0,100,10\n0.5,200,20\n2,300,30\n";
    }
    ASSERT_TRUE(form.loadTrace(good)) << form.errorText().toStdString();
    EXPECT_TRUE(doc.scenario() == s); // not applied yet
    ASSERT_TRUE(form.apply()) << form.errorText().toStdString();
    const auto& w = doc.scenario().workload;
    EXPECT_EQ(w.arrival.kind, model::ArrivalKind::Trace);
    ASSERT_EQ(w.trace.size(), 3u);
    EXPECT_DOUBLE_EQ(w.trace[1].arrival.si(), 0.5);
    EXPECT_EQ(w.trace[2].input_tokens, 300);
    EXPECT_EQ(w.trace[2].output_tokens, 30);
    const QString bad = dir.filePath(QStringLiteral("bad.csv"));
    {
        std::ofstream out(bad.toStdString());
        out << "when,who\n1,2\n";
    }
    EXPECT_FALSE(form.loadTrace(bad));
    EXPECT_NE(form.errorText().indexOf(QStringLiteral("bad.csv")), -1)
        << form.errorText().toStdString();
}
