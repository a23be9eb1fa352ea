// The Diagnose tab driven through its widgets under Qt's offscreen platform: the verdict and the
// first fix against what `gpuplan diagnose --json` prints for the same files, a fix applied to
// the scenario, and a malformed file's error.
#include "gui/diagnose_view.hpp"
#include "gui/main_window.hpp"
#include "tests/gui/gui_test_env.hpp"

#include <QApplication>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QPushButton>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <gtest/gtest.h>

#include <ostream>
#include <string>

using namespace gpuplan;
using gpuplan::gui::DiagnoseView;
using gpuplan::gui::MainWindow;

// Readable failure messages for QString comparisons.
QT_BEGIN_NAMESPACE
inline void PrintTo(const QString& s, std::ostream* os) {
    *os << '"' << s.toStdString() << '"';
}
QT_END_NAMESPACE

namespace {

QApplication& app() {
    return test::gui_app();
}

const hwdb::Database& db() {
    return test::repo_db();
}

QString fixture(const char* name) {
    return QString::fromStdString(std::string(GPUPLAN_SOURCE_DIR) + "/tests/fixtures/diagnose/" +
                                  name);
}

template <class T> T* child(QWidget& w, const char* name) {
    T* c = w.findChild<T*>(QString::fromLatin1(name));
    EXPECT_NE(c, nullptr) << "no widget named " << name;
    return c;
}

/// Types `path` into the file input `name`, as a user would.
void type(QWidget& w, const char* name, const QString& path) {
    QLineEdit* e = child<QLineEdit>(w, name);
    e->clear();
    QTest::keyClicks(e, path);
}

QString cell(QWidget& w, const char* table, int row, int column) {
    const QTableView* v = child<QTableView>(w, table);
    return v->model()->index(row, column).data().toString();
}

struct Window {
    Window() : w(db()) {
        w.show();
        view = child<DiagnoseView>(w, "diagnose_view");
        w.tabs().setCurrentWidget(view);
    }
    MainWindow w;
    DiagnoseView* view = nullptr;
};

#ifdef GPUPLAN_CLI
/// `gpuplan diagnose SCENARIO ARGS --json`, parsed.
QJsonObject cli_diagnose(const QString& scenario, const QStringList& args) {
    QProcess p;
    p.start(QString::fromUtf8(GPUPLAN_CLI), QStringList{QStringLiteral("diagnose"), scenario} +
                                                args + QStringList{QStringLiteral("--json")});
    EXPECT_TRUE(p.waitForFinished(120000));
    EXPECT_EQ(p.exitCode(), 0) << p.readAllStandardError().toStdString();
    return QJsonDocument::fromJson(p.readAllStandardOutput()).object();
}

/// The verdict row and the first fix the tab shows equal the CLI's.
void expect_same_as_cli(Window& f, const QJsonObject& cli) {
    const QJsonArray rows = cli[QStringLiteral("rows")].toArray();
    ASSERT_FALSE(rows.isEmpty());
    const QJsonObject verdict = rows.first().toObject();
    const QJsonObject fix = verdict[QStringLiteral("fixes")].toArray().first().toObject();
    EXPECT_EQ(cell(*f.view, "diagnose_rows", 0, 0), verdict[QStringLiteral("id")].toString());
    EXPECT_EQ(cell(*f.view, "diagnose_rows", 0, 2), verdict[QStringLiteral("symptom")].toString());
    EXPECT_EQ(cell(*f.view, "diagnose_rows", 0, 3), verdict[QStringLiteral("cause")].toString());
    EXPECT_EQ(cell(*f.view, "diagnose_rows", 0, 5), verdict[QStringLiteral("check")].toString());
    EXPECT_EQ(cell(*f.view, "diagnose_rows", 0, 6), fix[QStringLiteral("change")].toString());
    EXPECT_EQ(cell(*f.view, "diagnose_fixes", 0, 0), fix[QStringLiteral("layer")].toString());
    EXPECT_EQ(cell(*f.view, "diagnose_fixes", 0, 1), fix[QStringLiteral("change")].toString());
    EXPECT_EQ(cell(*f.view, "diagnose_fixes", 0, 2), fix[QStringLiteral("effect")].toString());
    // The rows that apply come first, in the CLI's order, marked; the rest of the table follows,
    // marked as not applying: fourteen rows in all (docs/diagnose.md, "The rows" and "Training and
    // rack rows").
    const QAbstractItemModel* table = child<QTableView>(*f.view, "diagnose_rows")->model();
    EXPECT_EQ(table->rowCount(), 14);
    for (int i = 0; i < table->rowCount(); ++i) {
        const bool applies = i < rows.size();
        EXPECT_EQ(cell(*f.view, "diagnose_rows", i, 1),
                  applies ? QStringLiteral("yes") : QStringLiteral("no"));
        if (applies) {
            EXPECT_EQ(cell(*f.view, "diagnose_rows", i, 0),
                      rows[i].toObject()[QStringLiteral("id")].toString());
        } else {
            EXPECT_TRUE(
                cell(*f.view, "diagnose_rows", i, 4).startsWith(QStringLiteral("fires when")));
        }
    }
    QStringList evidence;
    for (const auto& e : verdict[QStringLiteral("evidence")].toArray()) {
        evidence << e.toString();
    }
    EXPECT_EQ(cell(*f.view, "diagnose_rows", 0, 4), evidence.join(QStringLiteral("\n")));
    EXPECT_EQ(static_cast<int>(f.view->diagnosis()->comparisons.size()),
              cli[QStringLiteral("comparisons")].toArray().size());
}
#endif

} // namespace

class DiagnoseTabTest : public ::testing::Test {
  protected:
    void SetUp() override { (void)app(); }
};

#ifdef GPUPLAN_CLI
TEST_F(DiagnoseTabTest, SeedCaseShowsTheCliVerdictAndFirstFix) {
    Window f;
    ASSERT_TRUE(f.w.openFile(fixture("seed-7b-rtx4090.yaml")));
    type(*f.view, "diagnose_bench", fixture("seed-7b-bench.json"));
    type(*f.view, "diagnose_smi", fixture("seed-7b-smi.csv"));
    QTest::mouseClick(child<QPushButton>(*f.view, "diagnose_run"), Qt::LeftButton);
    ASSERT_TRUE(f.view->diagnosis().has_value()) << f.view->errorText().toStdString();
    EXPECT_TRUE(f.view->errorText().isEmpty());
    const QJsonObject cli = cli_diagnose(fixture("seed-7b-rtx4090.yaml"),
                                         {QStringLiteral("--bench"), fixture("seed-7b-bench.json"),
                                          QStringLiteral("--smi"), fixture("seed-7b-smi.csv")});
    expect_same_as_cli(f, cli);
    // The seed case's verdict (docs/diagnose.md): the decode is far slower than the model.
    EXPECT_EQ(cell(*f.view, "diagnose_rows", 0, 0), QStringLiteral("decode-slow"));
}

TEST_F(DiagnoseTabTest, KvFullCaseMatchesTheCliAndItsFirstFixAppliesToTheScenario) {
    Window f;
    ASSERT_TRUE(f.w.openFile(fixture("kv-full-8b-h100.yaml")));
    type(*f.view, "diagnose_metrics", fixture("kv-full-scrape-1.prom"));
    type(*f.view, "diagnose_metrics_later", fixture("kv-full-scrape-2.prom"));
    QDoubleSpinBox* interval = child<QDoubleSpinBox>(*f.view, "diagnose_interval");
    interval->setValue(60);
    QTest::mouseClick(child<QPushButton>(*f.view, "diagnose_run"), Qt::LeftButton);
    ASSERT_TRUE(f.view->diagnosis().has_value()) << f.view->errorText().toStdString();
    const QJsonObject cli = cli_diagnose(
        fixture("kv-full-8b-h100.yaml"),
        {QStringLiteral("--metrics"), fixture("kv-full-scrape-1.prom"), QStringLiteral("--metrics"),
         fixture("kv-full-scrape-2.prom"), QStringLiteral("--interval"), QStringLiteral("60")});
    expect_same_as_cli(f, cli);
    EXPECT_EQ(cell(*f.view, "diagnose_rows", 0, 0), QStringLiteral("kv-cache-full"));

    // The fixture serves with --gpu-memory-utilization 0.5; the first fix raises it to 0.95
    // (its change says "0.50 → 0.95") and changes nothing else.
    const model::Scenario before = f.w.document().scenario();
    ASSERT_DOUBLE_EQ(before.deployment.engine.gpu_memory_utilization.value_or(0), 0.5);
    QPushButton* apply = child<QPushButton>(*f.view, "diagnose_apply");
    ASSERT_TRUE(apply->isEnabled());
    QTest::mouseClick(apply, Qt::LeftButton);
    const model::Scenario after = f.w.document().scenario();
    EXPECT_DOUBLE_EQ(after.deployment.engine.gpu_memory_utilization.value_or(0), 0.95);
    model::Scenario expected = before;
    expected.deployment.engine.gpu_memory_utilization = 0.95;
    EXPECT_TRUE(after == expected);
    // The diagnosis is now of another scenario: applying again is refused until re-run.
    EXPECT_FALSE(apply->isEnabled());
    EXPECT_FALSE(f.view->applyFix(0, 1));
    EXPECT_FALSE(child<QLabel>(*f.view, "stale_note")->isHidden());
    // Undo brings the scenario back.
    f.w.document().undoStack()->undo();
    EXPECT_TRUE(f.w.document().scenario() == before);
}
#endif

TEST_F(DiagnoseTabTest, AMalformedFileShowsItsFileLineAndField) {
    Window f;
    ASSERT_TRUE(f.w.openFile(fixture("seed-7b-rtx4090.yaml")));
    QTemporaryDir tmp;
    const QString bad = tmp.filePath(QStringLiteral("bad-smi.csv"));
    {
        QFile out(bad);
        ASSERT_TRUE(out.open(QIODevice::WriteOnly));
        QFile in(fixture("seed-7b-smi.csv"));
        ASSERT_TRUE(in.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = in.readAll().split('\n');
        // The header, then a sample whose first numeric field is not a number.
        out.write(lines[0] + '\n');
        QList<QByteArray> fields = lines[1].split(',');
        fields[2] = " lots %"; // utilization.gpu
        out.write(fields.join(',') + '\n');
    }
    type(*f.view, "diagnose_smi", bad);
    QTest::mouseClick(child<QPushButton>(*f.view, "diagnose_run"), Qt::LeftButton);
    EXPECT_FALSE(f.view->diagnosis().has_value());
    const std::string err = f.view->errorText().toStdString();
    EXPECT_NE(err.find(bad.toStdString() + ":2"), std::string::npos) << err;
    EXPECT_NE(err.find("utilization.gpu"), std::string::npos) << err;
    EXPECT_EQ(child<QTableView>(*f.view, "diagnose_rows")->model()->rowCount(), 0);
    EXPECT_FALSE(child<QPushButton>(*f.view, "diagnose_apply")->isEnabled());
}

TEST_F(DiagnoseTabTest, NothingObservedIsAnError) {
    Window f;
    QTest::mouseClick(child<QPushButton>(*f.view, "diagnose_run"), Qt::LeftButton);
    EXPECT_FALSE(f.view->diagnosis().has_value());
    EXPECT_NE(f.view->errorText().indexOf(QStringLiteral("nothing observed")), -1);
}
