// Desktop app tests under Qt's offscreen platform (QT_QPA_PLATFORM=offscreen, set below when
// the environment does not choose): the window, the runner and the views driven as a user would,
// with QSignalSpy waiting for the worker threads.
#include "gui/analysis.hpp"
#include "gui/chart_adapter.hpp"
#include "gui/headless_plot.hpp"
#include "gui/main_window.hpp"
#include "gui/scenario_panel.hpp"
#include "gui/table_models.hpp"
#include "gui/ui_util.hpp"
#include "gui/views.hpp"
#include "hwdb/scenario_loader.hpp"
#include "hwdb/scenario_writer.hpp"
#include "tests/gui/gui_test_env.hpp"

#include <QAbstractSpinBox>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>
#include <vector>

using namespace gpuplan;
using gpuplan::gui::MainWindow;

namespace {

QApplication& app() {
    return test::gui_app();
}

const hwdb::Database& db() {
    return test::repo_db();
}

QString example(const char* name) {
    return QString::fromStdString(std::string(GPUPLAN_SOURCE_DIR) + "/examples/" + name);
}

std::string read(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// Waits for the analysis triggered by the last edit to be shown.
bool waitShown(MainWindow& w, int timeout_ms = 20000) {
    QSignalSpy spy(&w, &MainWindow::analysisShown);
    return spy.wait(timeout_ms);
}

/// A window with no debounce, shown off screen, with its first analysis done.
struct Fixture {
    Fixture() : w(db()) {
        w.setDebounce(0);
        w.show();
        waitShown(w);
    }
    MainWindow w;
};

template <class T> T* child(MainWindow& w, const char* name) {
    T* c = w.findChild<T*>(QString::fromLatin1(name));
    EXPECT_NE(c, nullptr) << "no widget named " << name;
    return c;
}

} // namespace

class GuiTest : public ::testing::Test {
  protected:
    void SetUp() override { (void)app(); }
};

TEST_F(GuiTest, StartsWithAnAnalysisOfTheDefaultScenario) {
    Fixture f;
    ASSERT_TRUE(f.w.planning().analysis());
    EXPECT_TRUE(f.w.planning().analysis()->serving().memory.fits);
    EXPECT_GT(f.w.planning().figures().rowCount(), 5);
    EXPECT_TRUE(f.w.planning().charts().at(0)->hasChart());
}

TEST_F(GuiTest, AnEditChangesTheEstimate) {
    Fixture f;
    QString error;
    ASSERT_TRUE(f.w.openFile(example("llama70b-4xh100.yaml"), &error)) << error.toStdString();
    ASSERT_TRUE(waitShown(f.w));
    const double before = f.w.planning().analysis()->serving().throughput;
    const int concurrency = f.w.document().scenario().workload.concurrency.value_or(1);
    auto* box = child<QSpinBox>(f.w, "concurrency");
    box->setValue(concurrency * 4);
    ASSERT_TRUE(waitShown(f.w));
    EXPECT_EQ(f.w.document().scenario().workload.concurrency, concurrency * 4);
    EXPECT_EQ(f.w.planning().analysis()->scenario.workload.concurrency, concurrency * 4);
    EXPECT_NE(f.w.planning().analysis()->serving().throughput, before);
    // The figure table follows.
    EXPECT_NE(f.w.planning()
                  .figures()
                  .value(QStringLiteral("running per replica"))
                  .indexOf(QString::number(concurrency * 4)),
              -1);
}

TEST_F(GuiTest, ChoosingAnotherGpuShowsItsSpecsAndReestimates) {
    Fixture f;
    auto* gpu = child<QComboBox>(f.w, "gpu");
    const int h200 = gpu->findData(QStringLiteral("h200-sxm"));
    ASSERT_GE(h200, 0);
    gpu->setCurrentIndex(h200);
    emit gpu->activated(h200);
    ASSERT_TRUE(waitShown(f.w));
    EXPECT_EQ(f.w.document().scenario().deployment.gpu.name, "h200-sxm");
    EXPECT_NE(child<QLabel>(f.w, "gpu_specs")->text().indexOf(QStringLiteral("GiB")), -1);
    EXPECT_EQ(f.w.planning().analysis()->scenario.deployment.gpu.name, "h200-sxm");
}

TEST_F(GuiTest, UndoAndRedoRestoreEdits) {
    Fixture f;
    const model::Scenario original = f.w.document().scenario();
    child<QSpinBox>(f.w, "input_tokens")->setValue(4000);
    EXPECT_EQ(f.w.document().scenario().workload.input_tokens, 4000);
    f.w.document().undoStack()->undo();
    EXPECT_TRUE(f.w.document().scenario() == original);
    EXPECT_EQ(child<QSpinBox>(f.w, "input_tokens")->value(), original.workload.input_tokens);
    f.w.document().undoStack()->redo();
    EXPECT_EQ(f.w.document().scenario().workload.input_tokens, 4000);
}

TEST_F(GuiTest, LoadThenSaveRoundTripIsIdentical) {
    QTemporaryDir tmp;
    ASSERT_TRUE(tmp.isValid());
    Fixture f;
    int count = 0;
    for (const auto& e :
         std::filesystem::directory_iterator(std::string(GPUPLAN_SOURCE_DIR) + "/examples")) {
        // Sweep specs (sweep-*.yaml) are not scenarios: `gpuplan sweep` reads them.
        if (e.path().extension() != ".yaml" ||
            e.path().filename().string().rfind("sweep-", 0) == 0) {
            continue;
        }
        SCOPED_TRACE(e.path().string());
        QString error;
        ASSERT_TRUE(f.w.openFile(QString::fromStdString(e.path().string()), &error))
            << error.toStdString();
        const model::Scenario loaded = f.w.document().scenario();
        const QString saved = tmp.filePath(QString::fromStdString(e.path().filename().string()));
        ASSERT_TRUE(f.w.saveFile(saved, &error)) << error.toStdString();
        EXPECT_FALSE(f.w.document().modified());
        // Lossless: the saved file loads to the same scenario, and saving that again writes the
        // same bytes.
        const model::Scenario back = hwdb::load_scenario(saved.toStdString(), db());
        EXPECT_TRUE(back == loaded) << read(saved.toStdString());
        ASSERT_TRUE(f.w.openFile(saved, &error)) << error.toStdString();
        const std::string first = read(saved.toStdString());
        ASSERT_TRUE(f.w.saveFile(saved, &error));
        EXPECT_EQ(read(saved.toStdString()), first);
        ++count;
    }
    EXPECT_GE(count, 10);
    EXPECT_FALSE(f.w.recentFiles().isEmpty());
}

TEST_F(GuiTest, InvalidInputShowsAnInlineErrorAndNeverCrashes) {
    Fixture f;
    const model::Scenario before = f.w.document().scenario();
    // A time without a unit: red field and message, the scenario keeps its value.
    auto* ttft = child<QLineEdit>(f.w, "slo_ttft");
    ttft->setFocus();
    QTest::keyClicks(ttft, QStringLiteral("500"));
    EXPECT_NE(f.w.panel().errorFor(ttft).indexOf(QStringLiteral("no unit")), -1)
        << f.w.panel().errorFor(ttft).toStdString();
    EXPECT_TRUE(ttft->property("invalid").toBool());
    EXPECT_FALSE(f.w.document().scenario().slo.ttft.has_value());
    QTest::keyClicks(ttft, QStringLiteral(" ms"));
    EXPECT_TRUE(f.w.panel().errorFor(ttft).isEmpty());
    ASSERT_TRUE(f.w.document().scenario().slo.ttft.has_value());
    EXPECT_DOUBLE_EQ(f.w.document().scenario().slo.ttft->si(), 0.5);

    // A price without a currency, and one with the wrong basis.
    auto* rent = child<QLineEdit>(f.w, "gpu_hour");
    QTest::keyClicks(rent, QStringLiteral("2.10/h"));
    EXPECT_FALSE(f.w.panel().errorFor(rent).isEmpty());
    rent->clear();
    QTest::keyClicks(rent, QStringLiteral("$25000"));
    EXPECT_NE(f.w.panel().errorFor(rent).indexOf(QStringLiteral("wrong price unit")), -1);
    EXPECT_FALSE(f.w.document().scenario().prices.gpu_hour.has_value());

    // A GPU count that is not a multiple of tp × pp.
    child<QSpinBox>(f.w, "tp")->setValue(2);
    ASSERT_TRUE(waitShown(f.w));
    child<QSpinBox>(f.w, "gpus")->setValue(3);
    EXPECT_NE(
        f.w.panel().errorFor(child<QSpinBox>(f.w, "gpus")).indexOf(QStringLiteral("multiple")), -1);
    EXPECT_EQ(f.w.document().scenario().deployment.gpus(), 2);

    // An inconsistent layout (tp not dividing the heads): the field, the hardware group and the
    // planning tab say so; nothing crashes, and fixing it clears the errors.
    auto* tp = child<QSpinBox>(f.w, "tp");
    tp->setValue(3);
    ASSERT_TRUE(waitShown(f.w));
    EXPECT_FALSE(f.w.panel().errorFor(tp).isEmpty());
    EXPECT_FALSE(f.w.panel().deploymentError().isEmpty());
    EXPECT_NE(f.w.planning().errorText().indexOf(QStringLiteral("Cannot estimate")), -1);
    // The previous figures are greyed and say they are out of date, never shown as this one's.
    EXPECT_FALSE(f.w.planning().resultsCurrent());
    EXPECT_NE(child<QLabel>(f.w, "analysis_summary")->text().indexOf(QStringLiteral("Out of date")),
              -1);
    tp->setValue(1);
    ASSERT_TRUE(waitShown(f.w));
    EXPECT_TRUE(f.w.panel().errorFor(tp).isEmpty());
    EXPECT_TRUE(f.w.panel().deploymentError().isEmpty());
    EXPECT_TRUE(f.w.planning().errorText().isEmpty());
    EXPECT_TRUE(f.w.planning().resultsCurrent());
    EXPECT_EQ(child<QLabel>(f.w, "analysis_summary")->text().indexOf(QStringLiteral("Out of date")),
              -1);

    // A workload longer than the context: the runner reports it, the app carries on.
    child<QSpinBox>(f.w, "max_model_len")->setValue(1024);
    child<QSpinBox>(f.w, "input_tokens")->setValue(4000);
    ASSERT_TRUE(waitShown(f.w));
    EXPECT_FALSE(f.w.planning().errorText().isEmpty());
    (void)before;
}

TEST_F(GuiTest, ClickingAWhatIfAppliesIt) {
    Fixture f;
    QString error;
    ASSERT_TRUE(f.w.openFile(example("llama70b-4xh100.yaml"), &error));
    ASSERT_TRUE(waitShown(f.w));
    const auto& table = f.w.planning().whatIfs();
    int row = -1;
    for (int r = 0; r < table.rowCount(); ++r) {
        if (table.whatIf(r).applicable && table.whatIf(r).name == "kv-fp8") {
            row = r;
        }
    }
    ASSERT_GE(row, 0) << "no kv-fp8 what-if";
    const double expected = table.whatIf(row).throughput;
    ASSERT_TRUE(f.w.planning().applyWhatIf(row));
    EXPECT_EQ(f.w.document().scenario().deployment.prec.kv_cache.name, "fp8");
    ASSERT_TRUE(waitShown(f.w));
    // The applied change is the one the what-if estimated.
    EXPECT_DOUBLE_EQ(f.w.planning().analysis()->serving().throughput, expected);
}

TEST_F(GuiTest, EveryApplicableWhatIfReproducesItsEstimate) {
    for (const char* file :
         {"llama70b-4xh100.yaml", "7b-on-rtx4090.yaml", "deepseek-v3-8xh200.yaml"}) {
        SCOPED_TRACE(file);
        const model::Scenario s = hwdb::load_scenario(example(file).toStdString(), db());
        const gui::Core core(db());
        const gui::Analysis a = gui::analyze(s, core);
        for (const auto& x : a.what_ifs) {
            if (!x.applicable) {
                continue;
            }
            SCOPED_TRACE(x.name);
            model::Scenario changed = s;
            ASSERT_TRUE(gui::apply_what_if(changed, x, db(), a.serving().memory));
            const auto e = model::estimate_serving(changed.deployment, changed.workload,
                                                   core.profile_for(changed.deployment.gpu));
            EXPECT_DOUBLE_EQ(e.throughput, x.throughput);
            EXPECT_EQ(changed.deployment.gpus(), x.gpus);
        }
    }
}

TEST_F(GuiTest, ASimulationRunCompletesAndFillsTheCharts) {
    Fixture f;
    QString error;
    ASSERT_TRUE(f.w.openFile(example("simulate-chat.yaml"), &error)) << error.toStdString();
    ASSERT_TRUE(waitShown(f.w));
    child<QSpinBox>(f.w, "sim_requests")->setValue(150);
    QSignalSpy progress(&f.w.runner(), &gui::Runner::simulationProgress);
    QSignalSpy done(&f.w.runner(), &gui::Runner::simulationFinished);
    f.w.simulation().start();
    ASSERT_TRUE(done.count() > 0 || done.wait(120000));
    const auto& outcome = f.w.simulation().outcome();
    ASSERT_TRUE(outcome);
    ASSERT_TRUE(outcome->result) << outcome->error;
    EXPECT_FALSE(outcome->result->stopped);
    EXPECT_EQ(outcome->result->overall.arrived, 150);
    EXPECT_GT(progress.count(), 0);
    for (gui::ChartPanel* c : f.w.simulation().charts()) {
        SCOPED_TRACE(c->key().toStdString());
        EXPECT_TRUE(c->hasChart()) << c->message().toStdString();
        EXPECT_GT(c->pointCount(), 0);
    }
    // A line at zero (nobody waiting) is drawn above the axis, not under it: the time charts'
    // value axis starts below zero, its first tick still at 0.
    gui::ChartPanel* queue = f.w.simulation().charts().at(4);
    ASSERT_EQ(queue->key(), QStringLiteral("queue"));
    EXPECT_LT(queue->axisRange(Qt::Vertical).first, 0.0);
    EXPECT_EQ(queue->axisLabels(Qt::Vertical).value(0), QStringLiteral("0"));
    // The class table has the three classes of the example.
    const auto tables = f.w.simulation().tables();
    EXPECT_EQ(tables.at(1).second->rowCount(), 3);
    // Any edit after the run marks its results out of date; a new run clears the mark.
    EXPECT_TRUE(f.w.simulation().staleText().isEmpty());
    child<QSpinBox>(f.w, "input_tokens")
        ->setValue(f.w.document().scenario().workload.input_tokens + 1);
    EXPECT_NE(f.w.simulation().staleText().indexOf(QStringLiteral("Out of date")), -1);
    QSignalSpy again(&f.w.runner(), &gui::Runner::simulationFinished);
    f.w.simulation().start();
    EXPECT_TRUE(f.w.simulation().staleText().isEmpty());
    ASSERT_TRUE(again.count() > 0 || again.wait(120000));
    EXPECT_TRUE(f.w.simulation().staleText().isEmpty());
}

TEST_F(GuiTest, ASimulationCanBeCancelled) {
    Fixture f;
    QString error;
    ASSERT_TRUE(f.w.openFile(example("simulate-chat.yaml"), &error));
    model::Scenario endless = f.w.document().scenario();
    endless.workload.duration.reset(); // run until the requests are sent: far longer than the test
    f.w.document().edit(endless, QStringLiteral("no duration"));
    child<QSpinBox>(f.w, "sim_requests")->setValue(5'000'000);
    QSignalSpy done(&f.w.runner(), &gui::Runner::simulationFinished);
    f.w.simulation().start();
    QTest::qWait(200);
    f.w.simulation().cancel();
    ASSERT_TRUE(done.count() > 0 || done.wait(60000));
    ASSERT_TRUE(f.w.simulation().outcome()->result);
    EXPECT_TRUE(f.w.simulation().outcome()->result->stopped);
}

TEST_F(GuiTest, PowerCostAndTrainingTabsShowTheCoreResults) {
    Fixture f;
    QString error;
    f.w.tabs().setCurrentWidget(&f.w.powerCost());
    ASSERT_TRUE(f.w.openFile(example("cost-rent-vs-buy.yaml"), &error)) << error.toStdString();
    ASSERT_TRUE(waitShown(f.w));
    for (gui::ChartPanel* c : f.w.powerCost().charts()) {
        SCOPED_TRACE(c->key().toStdString());
        EXPECT_TRUE(c->hasChart()) << c->message().toStdString();
    }
    f.w.tabs().setCurrentWidget(&f.w.training());
    ASSERT_TRUE(f.w.openFile(example("train-llama70b-2x8xh100.yaml"), &error))
        << error.toStdString();
    ASSERT_TRUE(waitShown(f.w));
    for (gui::ChartPanel* c : f.w.training().charts()) {
        SCOPED_TRACE(c->key().toStdString());
        EXPECT_TRUE(c->hasChart()) << c->message().toStdString();
    }
    QSignalSpy searched(&f.w.runner(), &gui::Runner::layoutSearchReady);
    f.w.training().search();
    ASSERT_TRUE(searched.count() > 0 || searched.wait(120000));
    EXPECT_GT(f.w.training().tables().at(1).second->rowCount(), 0);
}

TEST_F(GuiTest, PinnedConfigurationsAreComparedSideBySide) {
    Fixture f;
    QString error;
    ASSERT_TRUE(f.w.openFile(example("llama70b-4xh100.yaml"), &error));
    ASSERT_TRUE(waitShown(f.w));
    QSignalSpy shown(&f.w.compare(), &gui::CompareView::shown);
    ASSERT_TRUE(f.w.compare().pinCurrent());
    auto* gpu = child<QComboBox>(f.w, "gpu");
    const int h200 = gpu->findData(QStringLiteral("h200-sxm"));
    emit gpu->activated(h200);
    ASSERT_TRUE(f.w.compare().pinCurrent());
    while (f.w.compare().table().columnCount() < 3 && shown.wait(20000)) {
    }
    EXPECT_EQ(f.w.compare().table().columnCount(), 3);
    EXPECT_TRUE(f.w.compare().charts().at(0)->hasChart());
    EXPECT_EQ(f.w.compare().charts().at(0)->pointCount(), 2);
    ASSERT_TRUE(f.w.compare().pinCurrent());
    ASSERT_TRUE(f.w.compare().pinCurrent());
    EXPECT_FALSE(f.w.compare().pinCurrent()) << "at most four";
}

// Issue 18, item 6: the app imports and names models as `gpuplan model import` and --model do.
TEST_F(GuiTest, ImportedQuantizedConfigSetsTheWeightsAndTheConfigsName) {
    Fixture f;
    const QString config = QString::fromStdString(std::string(GPUPLAN_SOURCE_DIR) +
                                                  "/tests/fixtures/hf/llama-3.1-8b-awq.json");
    ASSERT_TRUE(f.w.panel().importConfig(config));
    const model::Scenario& s = f.w.document().scenario();
    EXPECT_EQ(s.deployment.model.name, "meta-llama-3.1-8b-instruct-awq-int4"); // _name_or_path
    EXPECT_EQ(s.deployment.prec.weights.name, "awq-int4");
    // A Hugging Face id typed into the model field resolves to the catalog with its quantization.
    auto* model = child<QComboBox>(f.w, "model");
    model->lineEdit()->setText(QStringLiteral("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4"));
    emit model->lineEdit()->returnPressed();
    EXPECT_EQ(f.w.document().scenario().deployment.model.name, "qwen2.5-7b");
    EXPECT_EQ(f.w.document().scenario().deployment.prec.weights.name, "gptq-int4");
    EXPECT_EQ(f.w.document().scenario().model_ref, "Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4");
}

TEST_F(GuiTest, ImportedConfigAndAppBuiltScenariosSaveAndReloadEqual) {
    QTemporaryDir tmp;
    Fixture f;
    const QString config = QString::fromStdString(std::string(GPUPLAN_SOURCE_DIR) +
                                                  "/tests/fixtures/hf/qwen2.5-7b.json");
    ASSERT_TRUE(f.w.panel().importConfig(config))
        << f.w.panel().errorFor(f.w.findChild<QComboBox*>(QStringLiteral("model"))).toStdString();
    EXPECT_TRUE(f.w.document().scenario().model_ref.empty());
    ASSERT_TRUE(waitShown(f.w));
    // A scenario built in the app (not loaded) saves and loads back equal too.
    auto* gpu = child<QComboBox>(f.w, "gpu");
    emit gpu->activated(gpu->findData(QStringLiteral("a100-sxm-80gb")));
    ASSERT_EQ(f.w.document().scenario().deployment.gpu.name, "a100-sxm-80gb");
    const QString saved = tmp.filePath(QStringLiteral("imported.yaml"));
    QString error;
    ASSERT_TRUE(f.w.saveFile(saved, &error)) << error.toStdString();
    EXPECT_TRUE(hwdb::load_scenario(saved.toStdString(), db()) == f.w.document().scenario());
    // A file that is not a config.json gives an inline error.
    EXPECT_FALSE(f.w.panel().importConfig(example("quickstart.yaml")));
}

TEST_F(GuiTest, ChartsAndTablesExport) {
    QTemporaryDir tmp;
    Fixture f;
    f.w.tabs().setCurrentIndex(0);
    QTest::qWait(50);
    const QStringList charts = f.w.exportCharts(tmp.path());
    EXPECT_EQ(charts.size(), 4)
        << charts.join(QStringLiteral(", ")).toStdString(); // 2 charts × PNG, SVG
    for (const QString& file : charts) {
        EXPECT_GT(QFile(file).size(), 1000) << file.toStdString();
    }
    const QStringList tables = f.w.exportTables(tmp.path());
    EXPECT_EQ(tables.size(), 3);
    QFile csv(QDir(tmp.path()).filePath(QStringLiteral("what_ifs.csv")));
    ASSERT_TRUE(csv.open(QIODevice::ReadOnly));
    EXPECT_TRUE(csv.readLine().startsWith("change,fits,GPUs"));
}

namespace {

/// The rows of a CSV file (RFC 4180 quoting), each split into cells.
std::vector<QStringList> readCsv(const QString& path) {
    QFile f(path);
    EXPECT_TRUE(f.open(QIODevice::ReadOnly)) << path.toStdString();
    const QString text = QString::fromUtf8(f.readAll());
    std::vector<QStringList> rows(1);
    QString cell;
    bool quoted = false;
    for (int i = 0; i < text.size(); ++i) {
        const QChar c = text[i];
        if (quoted) {
            if (c == QLatin1Char('"') && i + 1 < text.size() && text[i + 1] == QLatin1Char('"')) {
                cell += c;
                ++i;
            } else if (c == QLatin1Char('"')) {
                quoted = false;
            } else {
                cell += c;
            }
        } else if (c == QLatin1Char('"')) {
            quoted = true;
        } else if (c == QLatin1Char(',')) {
            rows.back() << cell;
            cell.clear();
        } else if (c == QLatin1Char('\n')) {
            rows.back() << cell;
            cell.clear();
            rows.emplace_back();
        } else {
            cell += c;
        }
    }
    if (rows.back().isEmpty()) {
        rows.pop_back();
    }
    return rows;
}

} // namespace

// Issue 17, item 7: CSV exports carry numbers (full precision) with the unit in the header,
// not display strings; PNG exports are at twice the chart's size.
TEST_F(GuiTest, CsvExportsCarryNumbersWithUnitsAndPngsAreAtTwiceTheSize) {
    QTemporaryDir tmp;
    Fixture f;
    QString error;
    ASSERT_TRUE(f.w.openFile(example("llama70b-4xh100.yaml"), &error)) << error.toStdString();
    ASSERT_TRUE(waitShown(f.w));
    f.w.tabs().setCurrentIndex(0);
    QTest::qWait(20);
    ASSERT_EQ(f.w.exportTables(tmp.path()).size(), 3);
    const auto whatIfs = readCsv(QDir(tmp.path()).filePath(QStringLiteral("what_ifs.csv")));
    ASSERT_GE(whatIfs.size(), 2u);
    EXPECT_EQ(whatIfs[0],
              (QStringList{QStringLiteral("change"), QStringLiteral("fits"), QStringLiteral("GPUs"),
                           QStringLiteral("TTFT (s)"), QStringLiteral("TPOT (s)"),
                           QStringLiteral("throughput (tok/s)"),
                           QStringLiteral("throughput gain (x)"), QStringLiteral("note")}))
        << whatIfs[0].join(QLatin1Char('|')).toStdString();
    const auto& table = f.w.planning().whatIfs();
    ASSERT_EQ(static_cast<int>(whatIfs.size()) - 1, table.rowCount());
    for (int r = 0; r < table.rowCount(); ++r) {
        const model::WhatIf& x = table.whatIf(r);
        const QStringList& row = whatIfs[static_cast<std::size_t>(r) + 1];
        ASSERT_EQ(row.size(), 8);
        if (!x.applicable) {
            EXPECT_TRUE(row[3].isEmpty());
            continue;
        }
        // Numbers, not "1,234" or "12.3 ms", and exactly the estimate's values.
        bool ok = false;
        EXPECT_DOUBLE_EQ(row[3].toDouble(&ok), x.ttft.si()) << row[3].toStdString();
        EXPECT_TRUE(ok);
        EXPECT_DOUBLE_EQ(row[5].toDouble(&ok), x.throughput) << row[5].toStdString();
        EXPECT_TRUE(ok);
        EXPECT_EQ(row[2].toInt(), x.gpus);
        EXPECT_TRUE(row[1] == QStringLiteral("true") || row[1] == QStringLiteral("false"));
    }
    // Memory: sizes in GiB; the capacity row is 100 % of the capacity.
    const auto memory = readCsv(QDir(tmp.path()).filePath(QStringLiteral("memory.csv")));
    ASSERT_GE(memory.size(), 2u);
    EXPECT_EQ(memory[0].join(QLatin1Char(',')),
              QStringLiteral("item,size (GiB),share of capacity (%)"));
    EXPECT_EQ(memory.back()[2].toDouble(), 100.0)
        << memory.back().join(QLatin1Char(',')).toStdString();

    // Figure lists: one line per number, "figure,value,unit". The serving figures of 4 GPUs:
    // per GPU is a quarter of the total; TTFT is in seconds, as the estimate holds it.
    const auto serving = readCsv(QDir(tmp.path()).filePath(QStringLiteral("serving.csv")));
    ASSERT_GE(serving.size(), 2u);
    EXPECT_EQ(serving[0].join(QLatin1Char(',')), QStringLiteral("figure,value,unit"));
    std::map<QString, std::pair<double, QString>> number;
    for (std::size_t i = 1; i < serving.size(); ++i) {
        ASSERT_EQ(serving[i].size(), 3) << serving[i].join(QLatin1Char(',')).toStdString();
        bool ok = false;
        const double v = serving[i][1].toDouble(&ok);
        if (ok) {
            number[serving[i][0]] = {v, serving[i][2]};
        }
    }
    ASSERT_TRUE(number.count(QStringLiteral("throughput")));
    ASSERT_TRUE(number.count(QStringLiteral("throughput per GPU")));
    EXPECT_EQ(number[QStringLiteral("throughput")].second, QStringLiteral("tok/s"));
    EXPECT_DOUBLE_EQ(number[QStringLiteral("throughput per GPU")].first,
                     number[QStringLiteral("throughput")].first / 4);
    EXPECT_DOUBLE_EQ(number[QStringLiteral("TTFT alone")].first,
                     f.w.planning().analysis()->serving().ttft.si());
    EXPECT_EQ(number[QStringLiteral("TTFT alone")].second, QStringLiteral("s"));
    // Rack limits: capacity, used and headroom in W (or U), headroom = capacity - used.
    f.w.tabs().setCurrentWidget(&f.w.powerCost());
    QTest::qWait(20);
    f.w.exportTables(tmp.path());
    const auto racks = readCsv(QDir(tmp.path()).filePath(QStringLiteral("racks.csv")));
    std::map<QString, double> rack;
    for (std::size_t i = 1; i < racks.size(); ++i) {
        rack[racks[i][0]] = racks[i][1].toDouble();
    }
    ASSERT_TRUE(rack.count(QStringLiteral("pdu headroom")))
        << racks.size() << " lines; first " << racks.front().join(QLatin1Char(',')).toStdString();
    EXPECT_DOUBLE_EQ(rack[QStringLiteral("pdu headroom")],
                     rack[QStringLiteral("pdu capacity")] - rack[QStringLiteral("pdu used")]);
    f.w.tabs().setCurrentWidget(&f.w.planning());
    QTest::qWait(20);

    // PNG at 2x: twice the chart's width and height in pixels.
    const QStringList charts = f.w.exportCharts(tmp.path());
    gui::ChartPanel* memoryChart = f.w.planning().charts().at(0);
    const QImage png(QDir(tmp.path()).filePath(memoryChart->key() + QStringLiteral(".png")));
    ASSERT_FALSE(png.isNull()) << charts.join(QStringLiteral(", ")).toStdString();
    EXPECT_EQ(png.width(), 2 * memoryChart->width());
    EXPECT_EQ(png.height(), 2 * memoryChart->height());
}

TEST_F(GuiTest, HeadlessPlotsAreWritten) {
    QTemporaryDir tmp;
    const model::Scenario s =
        hwdb::load_scenario(example("simulate-chat.yaml").toStdString(), db());
    const gui::Core core(db());
    const auto out = gui::render_plots(s, core, tmp.path(), true, 100);
    for (const char* name :
         {"memory.png", "roofline.png", "ttft_cdf.png", "throughput.png", "slo_attainment.png"}) {
        EXPECT_TRUE(out.files.contains(QDir(tmp.path()).filePath(QString::fromLatin1(name))))
            << name << " missing; notes: " << out.notes.join(QStringLiteral("; ")).toStdString();
    }
}

#ifdef GPUPLAN_CLI
TEST_F(GuiTest, CliPlotOptionWritesTheChartsWithoutADisplay) {
    QTemporaryDir tmp;
    const std::string dir = tmp.path().toStdString();
    const std::string cmd = std::string(GPUPLAN_CLI) + " simulate " + GPUPLAN_SOURCE_DIR +
                            "/examples/simulate-chat.yaml --requests 100 --plot " + dir +
                            " --json > " + dir + "/out.json 2> " + dir + "/err.txt";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << read(dir + "/err.txt");
    for (const char* name :
         {"scenario.yaml", "memory.png", "roofline.png", "ttft_cdf.png", "power.png"}) {
        EXPECT_TRUE(std::filesystem::exists(dir + "/" + name)) << name;
    }
    // The JSON on stdout stays clean: gpuplan-plot reports on stderr.
    EXPECT_EQ(read(dir + "/out.json").front(), '{');
    EXPECT_NE(read(dir + "/err.txt").find("wrote"), std::string::npos);
}
#endif

// Edit → re-estimate → redraw for Llama-3.1-70B on 8 H100 (tp 8), the responsiveness target of
// issue 8 (< 50 ms). The figure is printed; the assertion is loose because CI machines are
// shared and this is a Debug build.
TEST_F(GuiTest, EditToRedrawLatencyFor70bOn8Gpus) {
    Fixture f;
    model::Scenario s = f.w.document().scenario();
    s.model_ref = "llama-3.1-70b";
    s.deployment.model = db().model(s.model_ref);
    gui::change_hardware(s, db(), "h100-sxm", "dgx-h100");
    s.deployment.par = {8, 1, 1, 1};
    s.workload.concurrency = 64;
    f.w.document().reset(s);
    ASSERT_TRUE(waitShown(f.w));
    auto* box = child<QSpinBox>(f.w, "concurrency");
    std::vector<double> total, shown, compute, window;
    const auto ms_since = [](std::chrono::steady_clock::time_point t) {
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t)
            .count();
    };
    for (int i = 0; i < 21; ++i) {
        const auto start = std::chrono::steady_clock::now();
        QSignalSpy spy(&f.w, &MainWindow::analysisShown);
        box->setValue(i % 2 == 0 ? 128 : 64);
        ASSERT_TRUE(spy.wait(20000));
        shown.push_back(ms_since(start));
        f.w.planning().repaint(); // paint the analytic view with its new charts and tables now
        total.push_back(ms_since(start));
        f.w.repaint(); // the whole window, as an upper bound
        window.push_back(ms_since(start));
        compute.push_back(f.w.planning().analysis()->compute_ms);
    }
    const auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    const double m = median(total);
    std::cout << "[ latency  ] llama-3.1-70b on 8 x h100-sxm (tp 8), median of " << total.size()
              << " edits: edit -> re-estimate -> redraw " << m << " ms (max "
              << *std::max_element(total.begin(), total.end()) << "); of which core analysis "
              << median(compute) << " ms, until shown " << median(shown)
              << " ms; repainting the whole window instead " << median(window)
              << " ms. Debounce 0 here; the app waits 10 ms after the last keystroke.\n";
    RecordProperty("edit_to_redraw_median_ms", std::to_string(m));
    EXPECT_LT(m, 500.0);
}

// The Plan tab: the sizing search (plan::size_deployment) on a small variant of
// examples/plan-search.yaml through the runner, the ranked table ordered by monthly cost, the
// plan block round-tripping through the scenario writer, and adopting the cheapest row
// (undoable).
TEST_F(GuiTest, PlanTabSearchesRanksAndAdopts) {
    Fixture f;
    model::Scenario s =
        hwdb::load_scenario(std::string(GPUPLAN_SOURCE_DIR) + "/examples/plan-search.yaml", db());
    ASSERT_TRUE(s.plan);
    // Small enough for a few seconds in Debug: two candidates, fp8 only, one engine limit.
    s.plan->candidates.resize(2); // h100-sxm, h200-sxm
    s.plan->max_gpus = 8;
    s.plan->weights = {*model::find_precision("fp8")};
    s.plan->kv_cache = {*model::find_precision("fp8")};
    s.plan->max_num_seqs = {256};
    s.plan->requests = 200;
    s.plan->top = 3;
    f.w.document().reset(s);
    f.w.tabs().setCurrentWidget(&f.w.plan());
    // The controls show the plan block; editing one is an undoable edit of it.
    EXPECT_EQ(child<QSpinBox>(f.w, "plan_max_gpus")->value(), 8);
    child<QSpinBox>(f.w, "plan_top")->setValue(4);
    ASSERT_TRUE(f.w.document().scenario().plan);
    EXPECT_EQ(f.w.document().scenario().plan->top, 4);
    f.w.document().undoStack()->undo();
    EXPECT_EQ(f.w.document().scenario().plan->top, 3);
    EXPECT_EQ(child<QSpinBox>(f.w, "plan_top")->value(), 3);
    // The plan block saves and loads back equal.
    {
        QTemporaryDir tmp;
        const QString path = tmp.filePath(QStringLiteral("plan.yaml"));
        ASSERT_TRUE(f.w.saveFile(path));
        const model::Scenario back = hwdb::load_scenario(path.toStdString(), db());
        ASSERT_TRUE(back.plan);
        EXPECT_EQ(*back.plan, *f.w.document().scenario().plan);
    }

    QSignalSpy done(&f.w.runner(), &gui::Runner::planSearchFinished);
    QSignalSpy shown(&f.w.plan(), &gui::PlanView::shown);
    f.w.plan().search();
    ASSERT_TRUE(done.wait(120000));
    if (shown.isEmpty()) {
        ASSERT_TRUE(shown.wait(5000));
    }
    const auto& outcome = f.w.plan().outcome();
    ASSERT_TRUE(outcome);
    ASSERT_TRUE(outcome->result) << outcome->error;
    EXPECT_TRUE(outcome->result->found) << outcome->result->verdict;
    const auto& table = f.w.plan().table();
    ASSERT_GT(table.rowCount(), 0);
    EXPECT_LE(table.rowCount(), 3);
    double previous = 0;
    for (int r = 0; r < table.rowCount(); ++r) {
        const QVariant monthly =
            table.data(table.index(r, gui::PlanTableModel::kMonthlyColumn), Qt::UserRole);
        ASSERT_TRUE(monthly.isValid());
        EXPECT_GE(monthly.toDouble(), previous) << "row " << r;
        previous = monthly.toDouble();
        EXPECT_FALSE(table.data(table.index(r, 1), Qt::DisplayRole).toString().isEmpty());
    }
    EXPECT_EQ(f.w.plan().charts().size(), 1);

    // Adopt the cheapest: the scenario takes its GPU, count and layout, keeping the plan block.
    const model::Scenario before = f.w.document().scenario();
    const plan::SizingConfig best = table.row(0).config;
    ASSERT_TRUE(f.w.plan().adopt(0));
    const model::Scenario& after = f.w.document().scenario();
    EXPECT_EQ(after.deployment.gpu.name, best.gpu);
    EXPECT_EQ(after.deployment.gpus(), best.gpus);
    EXPECT_EQ(after.deployment.par.tp, best.par.tp);
    EXPECT_EQ(after.deployment.par.dp, best.par.dp);
    EXPECT_EQ(after.deployment.prec.weights.name, "fp8");
    EXPECT_TRUE(after.deployment.gpu.name != before.deployment.gpu.name ||
                after.deployment.gpus() != before.deployment.gpus());
    EXPECT_EQ(after.plan, before.plan);
    f.w.document().undoStack()->undo();
    EXPECT_EQ(f.w.document().scenario(), before);
    EXPECT_FALSE(f.w.plan().adopt(99));
}

// ---- Issue 17, item 1: nothing stale or wrong on screen ----

// An error banner on the Planning tab greys every tab's figures: Power & cost and Training too
// (they went on showing the last estimate as if it were this scenario's), and switching to
// them does not redraw the old analysis.
TEST_F(GuiTest, AnErrorGreysTheFiguresOfEveryTab) {
    Fixture f;
    QString error;
    ASSERT_TRUE(f.w.openFile(example("llama70b-4xh100.yaml"), &error)) << error.toStdString();
    ASSERT_TRUE(waitShown(f.w));
    f.w.tabs().setCurrentWidget(&f.w.powerCost());
    QTest::qWait(10);
    EXPECT_TRUE(f.w.powerCost().resultsCurrent());
    const QString headline = f.w.powerCost().headline();
    ASSERT_FALSE(headline.isEmpty());
    f.w.tabs().setCurrentWidget(&f.w.planning());
    // Llama-3.1-70B has 64 attention heads: tp 3 does not divide them.
    child<QSpinBox>(f.w, "tp")->setValue(3);
    ASSERT_TRUE(waitShown(f.w));
    ASSERT_NE(f.w.planning().errorText().indexOf(QStringLiteral("Cannot estimate")), -1);
    for (QWidget* tab :
         {static_cast<QWidget*>(&f.w.powerCost()), static_cast<QWidget*>(&f.w.training())}) {
        f.w.tabs().setCurrentWidget(tab);
        QTest::qWait(10);
        auto* banner = tab->findChild<QLabel*>(QStringLiteral("error_banner"));
        ASSERT_NE(banner, nullptr);
        EXPECT_FALSE(banner->isHidden()) << tab->metaObject()->className();
        EXPECT_NE(banner->text().indexOf(QStringLiteral("tp 3")), -1)
            << banner->text().toStdString();
    }
    EXPECT_FALSE(f.w.powerCost().resultsCurrent());
    EXPECT_FALSE(f.w.training().resultsCurrent());
    // The charts are drawn faded, as the disabled tables are greyed.
    for (const auto* view : {static_cast<const gui::ExportableView*>(&f.w.planning()),
                             static_cast<const gui::ExportableView*>(&f.w.powerCost()),
                             static_cast<const gui::ExportableView*>(&f.w.training())}) {
        for (gui::ChartPanel* c : view->charts()) {
            EXPECT_TRUE(c->faded()) << c->key().toStdString();
        }
    }
    EXPECT_TRUE(f.w.powerCost().headline().startsWith(QStringLiteral("Out of date")))
        << f.w.powerCost().headline().toStdString();
    // Fixed: every tab is current again and the banners go.
    f.w.tabs().setCurrentWidget(&f.w.planning());
    child<QSpinBox>(f.w, "tp")->setValue(4);
    ASSERT_TRUE(waitShown(f.w));
    f.w.tabs().setCurrentWidget(&f.w.powerCost());
    QTest::qWait(10);
    EXPECT_TRUE(f.w.powerCost().resultsCurrent());
    EXPECT_TRUE(f.w.powerCost().errorText().isEmpty());
    for (gui::ChartPanel* c : f.w.powerCost().charts()) {
        EXPECT_FALSE(c->faded()) << c->key().toStdString();
    }
    EXPECT_EQ(f.w.powerCost().headline(), headline);
    f.w.tabs().setCurrentWidget(&f.w.training());
    QTest::qWait(10);
    EXPECT_TRUE(f.w.training().resultsCurrent());
}

// A field that refused a value shows its message only while it shows that value: once the
// scenario makes it right (here tp 4 takes the count to 4) or another edit resets it, the
// message goes.
TEST_F(GuiTest, AGpuCountErrorGoesWhenTheFieldIsCorrected) {
    Fixture f;
    auto* count = child<QSpinBox>(f.w, "gpus");
    auto* tp = child<QSpinBox>(f.w, "tp");
    ASSERT_EQ(f.w.document().scenario().deployment.gpus(), 1);
    tp->setValue(2); // 1 GPU cannot hold tp 2: the count follows to 2 (said under the layout)
    EXPECT_EQ(f.w.document().scenario().deployment.gpus(), 2);
    count->setValue(3); // not a multiple of tp 2: refused at the field
    EXPECT_NE(f.w.panel().errorFor(count).indexOf(QStringLiteral("multiple")), -1);
    EXPECT_EQ(f.w.document().scenario().deployment.gpus(), 2);
    tp->setValue(4); // 4 does not divide 2 GPUs: the count follows to 4 × 1 replica
    EXPECT_EQ(f.w.document().scenario().deployment.gpus(), 4);
    EXPECT_EQ(count->value(), 4);
    EXPECT_TRUE(f.w.panel().errorFor(count).isEmpty()) << f.w.panel().errorFor(count).toStdString();
    EXPECT_FALSE(count->property("invalid").toBool());
    // Refused again, then an unrelated edit: the field shows the scenario's count, no message.
    count->setValue(6);
    EXPECT_FALSE(f.w.panel().errorFor(count).isEmpty());
    child<QSpinBox>(f.w, "input_tokens")->setValue(1000);
    EXPECT_EQ(count->value(), 4);
    EXPECT_TRUE(f.w.panel().errorFor(count).isEmpty());
    // Refused, then typed right: 8 = 2 replicas of tp 4.
    count->setValue(6);
    count->setValue(8);
    EXPECT_TRUE(f.w.panel().errorFor(count).isEmpty());
    EXPECT_EQ(f.w.document().scenario().deployment.par.dp, 2);
}

// The Plan tab's results are marked out of date by any edit, as the simulation's are.
TEST_F(GuiTest, AnEditMarksThePlanResultsStale) {
    Fixture f;
    model::Scenario s =
        hwdb::load_scenario(std::string(GPUPLAN_SOURCE_DIR) + "/examples/plan-search.yaml", db());
    ASSERT_TRUE(s.plan);
    s.plan->candidates.resize(1);
    s.plan->max_gpus = 4;
    s.plan->weights = {*model::find_precision("fp8")};
    s.plan->kv_cache = {*model::find_precision("fp8")};
    s.plan->max_num_seqs = {256};
    s.plan->requests = 100;
    s.plan->top = 2;
    f.w.document().reset(s);
    f.w.tabs().setCurrentWidget(&f.w.plan());
    QSignalSpy done(&f.w.runner(), &gui::Runner::planSearchFinished);
    f.w.plan().search();
    ASSERT_TRUE(done.wait(120000));
    QTest::qWait(10);
    ASSERT_TRUE(f.w.plan().outcome());
    EXPECT_TRUE(f.w.plan().staleText().isEmpty());
    // Any edit marks it.
    child<QSpinBox>(f.w, "output_tokens")
        ->setValue(f.w.document().scenario().workload.output_tokens + 1);
    EXPECT_NE(f.w.plan().staleText().indexOf(QStringLiteral("Out of date")), -1);
}

// ---- Issue 17, item 3: inputs that behave ----

// Typing into memory utilisation keeps what is typed: "0.85" is 0.85 (it became "engine
// default" when the first "0" was redrawn as the special value) and "0.95" is 0.95 (it became
// 0.900 when "0.9" was redrawn as "0.900" and the "5" no longer fitted).
TEST_F(GuiTest, MemoryUtilisationTakesWhatIsTyped) {
    Fixture f;
    auto* box = child<QDoubleSpinBox>(f.w, "gpu_memory_utilization");
    for (const auto& [typed, value, shown] :
         {std::tuple{"0.85", 0.85, "0.850"}, std::tuple{"0.95", 0.95, "0.950"},
          std::tuple{"0.9", 0.9, "0.900"}}) {
        SCOPED_TRACE(typed);
        box->setFocus();
        box->selectAll();
        QTest::keyClicks(box, QString::fromLatin1(typed));
        ASSERT_TRUE(f.w.document().scenario().deployment.engine.gpu_memory_utilization);
        EXPECT_DOUBLE_EQ(*f.w.document().scenario().deployment.engine.gpu_memory_utilization,
                         value);
        QTest::keyClick(box, Qt::Key_Return);
        EXPECT_EQ(box->text().toStdString(), shown);
        ASSERT_TRUE(waitShown(f.w));
        EXPECT_DOUBLE_EQ(
            *f.w.planning().analysis()->scenario.deployment.engine.gpu_memory_utilization, value);
    }
}

// A GPU name typed and Enter is applied (any case, or a unique part of a name); a name the
// database does not have is refused with a message at the field, changing nothing.
TEST_F(GuiTest, AGpuNameTypedAndEnterAppliesOrSaysWhy) {
    Fixture f;
    auto* gpu = child<QComboBox>(f.w, "gpu");
    const auto type = [&](const char* text) {
        gpu->lineEdit()->setFocus();
        gpu->lineEdit()->setText(QString::fromLatin1(text));
        QTest::keyClick(gpu->lineEdit(), Qt::Key_Return);
    };
    type("h200-sxm");
    EXPECT_EQ(f.w.document().scenario().deployment.gpu.name, "h200-sxm");
    EXPECT_TRUE(f.w.panel().errorFor(gpu).isEmpty());
    type("H100-SXM");
    EXPECT_EQ(f.w.document().scenario().deployment.gpu.name, "h100-sxm");
    type("no-such-gpu-9000");
    EXPECT_EQ(f.w.document().scenario().deployment.gpu.name, "h100-sxm");
    EXPECT_NE(f.w.panel().errorFor(gpu).indexOf(QStringLiteral("no GPU named 'no-such-gpu-9000'")),
              -1)
        << f.w.panel().errorFor(gpu).toStdString();
    EXPECT_TRUE(gpu->property("invalid").toBool());
    type("h200-sxm");
    EXPECT_EQ(f.w.document().scenario().deployment.gpu.name, "h200-sxm");
    EXPECT_TRUE(f.w.panel().errorFor(gpu).isEmpty());
    EXPECT_FALSE(gpu->property("invalid").toBool());

    // A GPU the scenario's node does not hold drops the node, and says so.
    QString error;
    ASSERT_TRUE(f.w.openFile(example("llama70b-4xh100.yaml"), &error)) << error.toStdString();
    ASSERT_EQ(f.w.document().scenario().node_ref, "dgx-h100");
    type("h200-sxm");
    EXPECT_EQ(f.w.document().scenario().deployment.gpu.name, "h200-sxm");
    EXPECT_TRUE(f.w.document().scenario().node_ref.empty());
    EXPECT_NE(f.w.panel().layoutNote().indexOf(QStringLiteral("node dgx-h100 dropped")), -1)
        << f.w.panel().layoutNote().toStdString();
}

// Changing TP or PP keeps the GPU count when tp × pp divides it (the replicas follow);
// otherwise the count follows, and either consequence is said under the layout. In the issue
// 3 GPUs (tp 1, 3 replicas) became 9 silently when tp went to 3.
TEST_F(GuiTest, ChangingTpKeepsTheGpuCountOrSaysWhatChanged) {
    Fixture f;
    auto* count = child<QSpinBox>(f.w, "gpus");
    auto* tp = child<QSpinBox>(f.w, "tp");
    count->setValue(3);
    ASSERT_EQ(f.w.document().scenario().deployment.par.dp, 3);
    tp->setValue(3);
    EXPECT_EQ(f.w.document().scenario().deployment.gpus(), 3); // 3 ÷ (tp 3 × pp 1) = 1 replica
    EXPECT_EQ(f.w.document().scenario().deployment.par.dp, 1);
    EXPECT_EQ(count->value(), 3);
    EXPECT_NE(f.w.panel().layoutNote().indexOf(QStringLiteral("replicas 3 → 1")), -1)
        << f.w.panel().layoutNote().toStdString();
    tp->setValue(2); // 2 does not divide 3: 1 replica of tp 2 is 2 GPUs
    EXPECT_EQ(f.w.document().scenario().deployment.gpus(), 2);
    EXPECT_NE(f.w.panel().layoutNote().indexOf(QStringLiteral("GPUs 3 → 2")), -1)
        << f.w.panel().layoutNote().toStdString();
    child<QSpinBox>(f.w, "dp")->setValue(2); // 2 replicas of tp 2
    EXPECT_EQ(f.w.document().scenario().deployment.gpus(), 4);
    EXPECT_NE(f.w.panel().layoutNote().indexOf(QStringLiteral("GPUs 2 → 4")), -1);
    // The note is about the last edit only.
    child<QSpinBox>(f.w, "input_tokens")->setValue(1000);
    EXPECT_TRUE(f.w.panel().layoutNote().isEmpty());
}

// ---- Issue 17, item 2: readable at the default size and at 1280 × 800 ----

namespace {

/// The widgets of the scenario panel cut off on the right, or squeezed below their minimum
/// width ("name: why"); empty when every one is whole.
QStringList clippedPanelWidgets(MainWindow& w) {
    QStringList out;
    auto* scroll = w.panel().findChild<QScrollArea*>();
    if (scroll == nullptr) {
        return {QStringLiteral("no scroll area")};
    }
    QWidget* viewport = scroll->viewport();
    for (QWidget* c : scroll->widget()->findChildren<QWidget*>()) {
        if (!c->isVisibleTo(&w) || c->parentWidget() == nullptr ||
            !(qobject_cast<QComboBox*>(c) || qobject_cast<QAbstractSpinBox*>(c) ||
              qobject_cast<QPushButton*>(c) || qobject_cast<QLabel*>(c) ||
              qobject_cast<QLineEdit*>(c) || qobject_cast<QCheckBox*>(c))) {
            continue;
        }
        if (qobject_cast<QLineEdit*>(c) && qobject_cast<QAbstractSpinBox*>(c->parentWidget())) {
            continue; // a spin box's own editor
        }
        if (qobject_cast<QLineEdit*>(c) && qobject_cast<QComboBox*>(c->parentWidget())) {
            continue;
        }
        const QString name = c->objectName().isEmpty()
                                 ? QString::fromLatin1(c->metaObject()->className())
                                 : c->objectName();
        const QRect r(c->mapTo(viewport, QPoint(0, 0)), c->size());
        if (r.left() < 0 || r.right() >= viewport->width()) {
            out << QStringLiteral("%1: x %2..%3 outside 0..%4")
                       .arg(name)
                       .arg(r.left())
                       .arg(r.right())
                       .arg(viewport->width());
        }
        auto* label = qobject_cast<QLabel*>(c);
        const int need =
            label && !label->wordWrap() ? c->sizeHint().width() : c->minimumSizeHint().width();
        if (c->width() < need) {
            out << QStringLiteral("%1: %2 px wide, needs %3").arg(name).arg(c->width()).arg(need);
        }
    }
    return out;
}

} // namespace

TEST_F(GuiTest, TheWindowIsReadableAtTheDefaultSizeAndAt1280x800) {
    Fixture f;
    QString error;
    // The scenario with the longest texts: a MoE model, a node, prices and a power budget.
    ASSERT_TRUE(f.w.openFile(example("deepseek-v3-8xh200.yaml"), &error)) << error.toStdString();
    ASSERT_TRUE(waitShown(f.w));
    for (const QSize size : {QSize(1542, 940), QSize(1280, 800)}) {
        SCOPED_TRACE(QStringLiteral("%1x%2").arg(size.width()).arg(size.height()).toStdString());
        f.w.resize(size);
        QTest::qWait(20);
        // The window can be that small (its minimum size does not push it wider).
        EXPECT_LE(f.w.width(), size.width());
        EXPECT_LE(f.w.height(), size.height());
        // Show every field error at once, the longest texts the panel shows.
        child<QSpinBox>(f.w, "gpus")->setValue(7);
        child<QLineEdit>(f.w, "slo_ttft")->setText(QString());
        QTest::keyClicks(child<QLineEdit>(f.w, "slo_ttft"), QStringLiteral("500"));
        QTest::qWait(20);
        const QStringList clipped = clippedPanelWidgets(f.w);
        EXPECT_TRUE(clipped.isEmpty()) << clipped.join(QStringLiteral("\n")).toStdString();
        // Every chart on every tab: no axis label elided.
        for (int t = 0; t < f.w.tabs().count(); ++t) {
            f.w.tabs().setCurrentIndex(t);
            QTest::qWait(20);
            for (gui::ChartPanel* c :
                 f.w.tabs().currentWidget()->findChildren<gui::ChartPanel*>()) {
                if (!c->hasChart() || !c->isVisibleTo(&f.w)) {
                    continue;
                }
                (void)c->grab(); // lays the chart out at its size
                EXPECT_FALSE(c->labelsTruncated()) << c->key().toStdString() << " on tab " << t
                                                   << " at " << c->width() << "x" << c->height();
            }
        }
        f.w.tabs().setCurrentIndex(0);
        f.w.document().undoStack()->undo();
    }
}

// One tick formatter for every chart: SI suffixes, never an elided or exponent label.
TEST_F(GuiTest, AxisTicksUseSiSuffixes) {
    EXPECT_EQ(gui::formatTick(500'000), QStringLiteral("500k"));
    EXPECT_EQ(gui::formatTick(1'500), QStringLiteral("1.5k"));
    EXPECT_EQ(gui::formatTick(2.5e9), QStringLiteral("2.5G"));
    EXPECT_EQ(gui::formatTick(999'999), QStringLiteral("1M")); // rounded before the suffix
    EXPECT_EQ(gui::formatTick(0.25), QStringLiteral("0.25"));
    EXPECT_EQ(gui::formatTick(0), QStringLiteral("0"));
    EXPECT_EQ(gui::formatTick(-3'000), QStringLiteral("-3k"));
    // Three digits unless labels would repeat: 1,000,000 and 1,000,500 need five.
    EXPECT_EQ(gui::formatTicks({1e6, 1.0005e6}),
              (QStringList{QStringLiteral("1M"), QStringLiteral("1.0005M")}));

    // A chart to 550,000 tok/s: the axis runs to niceMax = 1,000,000 in steps of 200,000 (about
    // five intervals), each labelled with its suffix, none elided even at the smallest size.
    app();
    gui::ChartPanel p(QStringLiteral("t"));
    p.resize(260, 200);
    gui::ChartAdapter::bars(p, QStringLiteral("throughput"), QStringLiteral("tok/s"),
                            {QStringLiteral("a"), QStringLiteral("b")}, {500'000, 250'000});
    p.show();
    (void)p.grab();
    EXPECT_EQ(p.axisLabels(Qt::Vertical),
              (QStringList{QStringLiteral("0"), QStringLiteral("200k"), QStringLiteral("400k"),
                           QStringLiteral("600k"), QStringLiteral("800k"), QStringLiteral("1M")}));
    EXPECT_FALSE(p.labelsTruncated());
}

// Units on every figure: rack limits in kW and U as `gpuplan rack` writes them; the training
// memory chart draws the capacity; coinciding lines stay distinguishable.
TEST_F(GuiTest, RackFiguresCarryUnitsAndTrainingMemoryShowsItsCapacity) {
    model::RackPlan plan;
    plan.limits = {{model::RackLimit::Budget, 10'000, 4, 4'000, 6'000},
                   {model::RackLimit::Pdu, 11'040, 5, 9'568, 1'472},
                   {model::RackLimit::RackUnits, 42, 5, 40, 2}};
    const gui::FiguresModel::Rows rows = gui::rackRows(plan);
    QStringList limits;
    for (const auto& row : rows) {
        if (row.figure.startsWith(QStringLiteral("limit "))) {
            limits << row.text;
        }
    }
    ASSERT_EQ(limits.size(), 3);
    EXPECT_NE(limits[0].indexOf(QStringLiteral("headroom 6.00 kW")), -1) << limits[0].toStdString();
    EXPECT_NE(limits[0].indexOf(QStringLiteral("capacity 10.00 kW")), -1);
    EXPECT_NE(limits[1].indexOf(QStringLiteral("headroom 1.47 kW")), -1) << limits[1].toStdString();
    EXPECT_NE(limits[2].indexOf(QStringLiteral("headroom 2 U")), -1) << limits[2].toStdString();
    EXPECT_NE(limits[2].indexOf(QStringLiteral("capacity 42 U")), -1);

    const model::Scenario s =
        hwdb::load_scenario(example("train-llama70b-2x8xh100.yaml").toStdString(), db());
    const gui::Core core(db());
    const gui::Analysis a = gui::analyze(s, core);
    ASSERT_TRUE(a.training) << a.training_error;
    gui::ChartPanel p(QStringLiteral("training_memory"));
    gui::ChartAdapter::trainingMemory(p, *a.training);
    const QStringList names = p.seriesNames();
    // An H100 has 80 GiB; CUDA reports 99 % of it (model/training.hpp): 79.20 GiB.
    EXPECT_TRUE(names.contains(QStringLiteral("capacity %1 GiB").arg(80 * 0.99, 0, 'f', 2)))
        << names.join(QStringLiteral(", ")).toStdString();
}

// Item 3 on the other tabs: the cost, rack and training fields take what is typed too (they
// were redrawn on every keystroke's edit: "0.05" typed into maintenance became "0.000" and
// then refused the rest).
TEST_F(GuiTest, NumberFieldsOnEveryTabTakeWhatIsTyped) {
    Fixture f;
    QString error;
    ASSERT_TRUE(f.w.openFile(example("cost-rent-vs-buy.yaml"), &error)) << error.toStdString();
    f.w.tabs().setCurrentWidget(&f.w.powerCost());
    const auto type = [&](const char* name, const char* text) {
        auto* box = child<QAbstractSpinBox>(f.w, name);
        box->setFocus();
        box->selectAll();
        QTest::keyClicks(box, QString::fromLatin1(text));
        QTest::keyClick(box, Qt::Key_Return);
    };
    type("maintenance_fraction", "0.05");
    EXPECT_DOUBLE_EQ(f.w.document().scenario().cost.maintenance_fraction, 0.05);
    type("residual_fraction", "0.15");
    EXPECT_DOUBLE_EQ(f.w.document().scenario().cost.residual_fraction, 0.15);
    type("hours_per_day", "12.5");
    EXPECT_DOUBLE_EQ(f.w.document().scenario().cost.utilization.hours_per_day, 12.5);
    ASSERT_TRUE(f.w.openFile(example("train-llama70b-2x8xh100.yaml"), &error))
        << error.toStdString();
    f.w.tabs().setCurrentWidget(&f.w.training());
    type("training_tokens", "2.5");
    ASSERT_TRUE(f.w.document().scenario().training);
    EXPECT_DOUBLE_EQ(f.w.document().scenario().training->tokens, 2.5e9);
    type("global_batch", "128");
    EXPECT_EQ(f.w.document().scenario().training->global_batch, 128);
}

// One load per scenario (model/operating_point.hpp): a concurrency clears the offered rate and
// a rate the concurrency. The panel says which it cleared instead of changing it silently.
TEST_F(GuiTest, ALoadEditSaysWhichLoadItReplaced) {
    Fixture f;
    QString error;
    ASSERT_TRUE(f.w.openFile(example("simulate-chat.yaml"), &error)) << error.toStdString();
    ASSERT_EQ(f.w.document().scenario().workload.requests_per_s, 12.0);
    EXPECT_TRUE(f.w.panel().loadNote().isEmpty());
    child<QSpinBox>(f.w, "concurrency")->setValue(64);
    EXPECT_FALSE(f.w.document().scenario().workload.requests_per_s.has_value());
    EXPECT_NE(f.w.panel().loadNote().indexOf(QStringLiteral("offered rate of 12 req/s")), -1)
        << f.w.panel().loadNote().toStdString();
    auto* rate = child<QLineEdit>(f.w, "requests_per_s");
    rate->setFocus();
    rate->clear();
    QTest::keyClicks(rate, QStringLiteral("4.5"));
    EXPECT_EQ(f.w.document().scenario().workload.requests_per_s, 4.5);
    EXPECT_FALSE(f.w.document().scenario().workload.concurrency.has_value());
    EXPECT_NE(f.w.panel().loadNote().indexOf(QStringLiteral("concurrency of 64")), -1)
        << f.w.panel().loadNote().toStdString();
    // Another field: the note goes.
    child<QSpinBox>(f.w, "output_tokens")->setValue(300);
    EXPECT_TRUE(f.w.panel().loadNote().isEmpty());
}

// Enter in a spin box re-sends the value it shows; that is no edit, so the note and the message
// of the edit that typed the value stay (they were cleared: issue 17 item 3, found by the
// real-window test).
TEST_F(GuiTest, EnterAfterTypingKeepsTheNoteAndTheMessage) {
    Fixture f;
    auto* count = child<QSpinBox>(f.w, "gpus");
    auto* tp = child<QSpinBox>(f.w, "tp");
    count->setValue(4);
    tp->setFocus();
    tp->selectAll();
    QTest::keyClicks(tp, QStringLiteral("2"));
    const QString note = f.w.panel().layoutNote();
    EXPECT_NE(note.indexOf(QStringLiteral("replicas 4 → 2")), -1) << note.toStdString();
    QTest::keyClick(tp, Qt::Key_Return);
    EXPECT_EQ(f.w.panel().layoutNote(), note);
    // tp 3 does not divide 4 GPUs: the count follows to 6 and the note says so; the default
    // model's heads are not a multiple of 3, so the field has a message. Enter keeps both.
    tp->selectAll();
    QTest::keyClicks(tp, QStringLiteral("3"));
    const QString note3 = f.w.panel().layoutNote();
    const QString message = f.w.panel().errorFor(tp);
    QTest::keyClick(tp, Qt::Key_Return);
    EXPECT_EQ(f.w.panel().layoutNote(), note3);
    EXPECT_EQ(f.w.panel().errorFor(tp), message);
}
