// The sweep table window (gui/sweep_view, gui/sweep_table) under Qt's offscreen platform: a
// table written by the real CLI (`gpuplan sweep examples/sweep-llama70b-gpus.yaml`) and a small
// fixture opened through the main window, the choices made on the real combo boxes, and the
// plotted points compared with the CSV's own values, read here by a separate parser.
#include "gui/chart_adapter.hpp"
#include "gui/main_window.hpp"
#include "gui/sweep_table.hpp"
#include "gui/sweep_view.hpp"
#include "gui/ui_util.hpp"
#include "hwdb/database.hpp"
#include "model/error.hpp"
#include "tests/gui/gui_test_env.hpp"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QMenu>
#include <QMenuBar>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace gpuplan;

namespace {

QApplication& app() {
    return test::gui_app();
}

const hwdb::Database& db() {
    return test::repo_db();
}

std::string fixture(const char* name) {
    return std::string(GPUPLAN_SOURCE_DIR) + "/tests/fixtures/sweep/" + name;
}

/// The test's own CSV reader: RFC 4180 fields (quotes, "" inside quotes), no trimming needed
/// for the sweep's output. Rows of cells, header first.
std::vector<std::vector<std::string>> readCsv(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    std::vector<std::vector<std::string>> rows(1);
    std::string cell;
    bool quoted = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
                cell += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                cell += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            rows.back().push_back(cell);
            cell.clear();
        } else if (c == '\n') {
            rows.back().push_back(cell);
            cell.clear();
            rows.emplace_back();
        } else if (c != '\r') {
            cell += c;
        }
    }
    if (!cell.empty() || !rows.back().empty()) {
        rows.back().push_back(cell);
    } else {
        rows.pop_back();
    }
    return rows;
}

int col(const std::vector<std::string>& header, const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    EXPECT_NE(it, header.end()) << name;
    return static_cast<int>(it - header.begin());
}

using Points = std::vector<std::pair<double, double>>;

/// Per value of `series`, the (x, y) of every row without an error and with both values, in
/// table order, then sorted by x (stable).
std::map<std::string, Points> expected(const std::vector<std::vector<std::string>>& csv,
                                       const std::string& x, const std::string& y,
                                       const std::string& series) {
    const auto& h = csv.front();
    const int cx = col(h, x);
    const int cy = col(h, y);
    const int cs = col(h, series);
    const int ce = col(h, "error");
    std::map<std::string, Points> out;
    for (std::size_t r = 1; r < csv.size(); ++r) {
        const auto& row = csv[r];
        if (!row[ce].empty() || row[cx].empty() || row[cy].empty()) {
            continue;
        }
        out[row[cs]].emplace_back(std::strtod(row[cx].c_str(), nullptr),
                                  std::strtod(row[cy].c_str(), nullptr));
    }
    for (auto& [name, pts] : out) {
        std::stable_sort(pts.begin(), pts.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
    }
    return out;
}

void choose(QComboBox& box, const QString& text) {
    const int i = box.findText(text);
    ASSERT_GE(i, 0) << text.toStdString();
    box.setCurrentIndex(i);
}

/// The chart's series by name ("hardware.accelerator = h100-sxm" → "h100-sxm").
std::map<std::string, Points> plotted(const gui::ChartPanel& chart, const std::string& series) {
    std::map<std::string, Points> out;
    const QStringList names = chart.seriesNames();
    for (int i = 0; i < names.size(); ++i) {
        std::string n = names[i].toStdString();
        const std::string prefix = series + " = ";
        EXPECT_EQ(n.rfind(prefix, 0), 0U) << n;
        out[n.substr(prefix.size())] = chart.seriesPoints(i);
    }
    return out;
}

} // namespace

#ifdef GPUPLAN_CLI
TEST(SweepView, PlotsTheCliSweepTableAsWritten) {
    app();
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    const std::string csv = dir.path().toStdString() + "/gpus.csv";
    const std::string cmd = std::string(GPUPLAN_CLI) + " sweep " + GPUPLAN_SOURCE_DIR +
                            "/examples/sweep-llama70b-gpus.yaml -o " + csv + " > " +
                            dir.path().toStdString() + "/out.txt 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    const auto rows = readCsv(csv);
    ASSERT_EQ(rows.size(), 25U); // header + 2 accelerators x 3 tp x 4 concurrencies

    gui::MainWindow w(db());
    QString error;
    gui::SweepView& v = w.openSweepTable(QString::fromStdString(csv), &error);
    ASSERT_TRUE(error.isEmpty()) << error.toStdString();
    EXPECT_TRUE(v.errorText().isEmpty());

    for (const auto& [x, y, s] :
         {std::tuple{"workload.concurrency", "throughput_tok_s", "hardware.accelerator"},
          std::tuple{"workload.concurrency", "tpot_s", "hardware.tp"},
          std::tuple{"hardware.tp", "ttft_s", "workload.concurrency"}}) {
        SCOPED_TRACE(std::string(y) + " against " + x + " per " + s);
        choose(v.axisBox(), QString::fromUtf8(x));
        choose(v.figureBox(), QString::fromUtf8(y));
        choose(v.seriesBox(), QString::fromUtf8(s));
        ASSERT_TRUE(v.chart().hasChart()) << v.chart().message().toStdString();
        const auto want = expected(rows, x, y, s);
        std::set<std::string> distinct;
        for (std::size_t r = 1; r < rows.size(); ++r) {
            distinct.insert(rows[r][static_cast<std::size_t>(col(rows.front(), s))]);
        }
        EXPECT_EQ(v.chart().seriesCount(), static_cast<int>(distinct.size()));
        EXPECT_EQ(plotted(v.chart(), s), want);
        EXPECT_EQ(v.statusText(),
                  QStringLiteral("24 rows plotted in %1 line(s)").arg(distinct.size()));
    }
    // Units from the column names, in the axis titles.
    choose(v.axisBox(), QStringLiteral("workload.concurrency"));
    choose(v.figureBox(), QStringLiteral("throughput_tok_s"));
    EXPECT_EQ(v.chart().axisTitle(Qt::Vertical), QStringLiteral("throughput_tok_s (tok/s)"));
    EXPECT_EQ(v.chart().axisTitle(Qt::Horizontal), QStringLiteral("workload.concurrency"));
}
#endif

TEST(SweepView, SkipsErrorAndEmptyRowsAndCountsThem) {
    app();
    gui::MainWindow w(db());
    const std::string path = fixture("rates.csv");
    gui::SweepView& v = w.openSweepTable(QString::fromStdString(path));
    ASSERT_TRUE(v.errorText().isEmpty()) << v.errorText().toStdString();
    // P99 TTFT against the offered rate, one line per accelerator.
    choose(v.axisBox(), QStringLiteral("workload.requests_per_s"));
    choose(v.figureBox(), QStringLiteral("ttft_s.p99"));
    choose(v.seriesBox(), QStringLiteral("hardware.accelerator"));
    const auto rows = readCsv(path);
    EXPECT_EQ(plotted(v.chart(), "hardware.accelerator"),
              expected(rows, "workload.requests_per_s", "ttft_s.p99", "hardware.accelerator"));
    // By hand: h100 (1, 0.41), (2, 0.57); h200 (1, 0.33), (4, 0.125); mi300x (2, 0.9).
    EXPECT_EQ(v.chart().seriesCount(), 3);
    EXPECT_EQ(v.chart().pointCount(), 5);
    EXPECT_EQ(v.statusText(), QStringLiteral("5 rows plotted in 3 line(s), 1 skipped with an "
                                             "error, 1 skipped with an empty value"));
    EXPECT_EQ(v.chart().seriesPoints(1), (Points{{1, 0.33}, {4, 0.125}}));
    // Axis titles carry the units the names state; ticks come from the one formatter: x spans
    // the rates 1..4 in steps of 1, y starts at 0 and ends at the round 1.0 above 0.9, in steps
    // of 0.2.
    EXPECT_EQ(v.chart().title(), QStringLiteral("ttft_s.p99 against workload.requests_per_s"));
    EXPECT_EQ(v.chart().axisTitle(Qt::Horizontal),
              QStringLiteral("workload.requests_per_s (requests/s)"));
    EXPECT_EQ(v.chart().axisTitle(Qt::Vertical), QStringLiteral("ttft_s.p99 (s)"));
    EXPECT_EQ(v.chart().axisLabels(Qt::Horizontal), gui::formatTicks({1.0, 2.0, 3.0, 4.0}));
    EXPECT_EQ(v.chart().axisLabels(Qt::Vertical), gui::formatTicks({0.0, 0.2, 0.4, 0.6, 0.8, 1.0}));
    EXPECT_EQ(v.chart().axisLabels(Qt::Horizontal),
              (QStringList{QStringLiteral("1"), QStringLiteral("2"), QStringLiteral("3"),
                           QStringLiteral("4")}));

    // Without a series column: one line named after the figure, every usable row in it.
    choose(v.seriesBox(), QStringLiteral("(none)"));
    choose(v.figureBox(), QStringLiteral("output_tok_s"));
    EXPECT_EQ(v.chart().seriesCount(), 1);
    EXPECT_EQ(v.chart().seriesNames(), QStringList{QStringLiteral("output_tok_s")});
    EXPECT_EQ(v.chart().pointCount(), 6); // 7 rows, one with an error
    EXPECT_EQ(v.statusText(),
              QStringLiteral("6 rows plotted in 1 line(s), 1 skipped with an error"));
}

TEST(SweepView, MalformedCsvNamesFileAndLine) {
    app();
    QTemporaryDir dir;
    const std::string path = dir.path().toStdString() + "/bad.csv";
    {
        std::ofstream out(path);
        out << "index,sweep_id,seed,workload.requests_per_s,error,ttft_s,cli\n"
            << "0,s,1,1,,0.5,gpuplan estimate a.yaml\n"
            << "1,s,2,2,,0.6\n"; // line 3: a field short
    }
    gui::MainWindow w(db());
    QString error;
    gui::SweepView& v = w.openSweepTable(QString::fromStdString(path), &error);
    EXPECT_TRUE(error.startsWith(QString::fromStdString(path + ":3:"))) << error.toStdString();
    EXPECT_TRUE(error.contains(QStringLiteral("expected 7 fields"))) << error.toStdString();
    EXPECT_TRUE(v.errorText().contains(QString::fromStdString(path + ":3:")));
    EXPECT_FALSE(v.chart().hasChart());
    EXPECT_EQ(v.axisBox().count(), 0);

    // A CSV that is not a sweep table says so, naming the file.
    const std::string other = dir.path().toStdString() + "/other.csv";
    {
        std::ofstream out(other);
        out << "a,b\n1,2\n";
    }
    v.openFile(QString::fromStdString(other), &error);
    EXPECT_TRUE(error.startsWith(QString::fromStdString(other + ":1:"))) << error.toStdString();
    EXPECT_TRUE(error.contains(QStringLiteral("no 'index' column"))) << error.toStdString();

    // An unclosed quote.
    {
        std::ofstream out(other);
        out << "index,seed,error,cli\n0,1,\"oops,x\n";
    }
    v.openFile(QString::fromStdString(other), &error);
    EXPECT_TRUE(error.startsWith(QString::fromStdString(other + ":2:"))) << error.toStdString();
    EXPECT_TRUE(error.contains(QStringLiteral("quoted field is not closed")));
}

TEST(SweepView, FileMenuOffersOpenSweepTable) {
    app();
    gui::MainWindow w(db());
    QStringList fileActions;
    for (QAction* menu : w.menuBar()->actions()) {
        if (menu->menu() && menu->text() == QStringLiteral("&File")) {
            for (QAction* a : menu->menu()->actions()) {
                fileActions << a->text();
            }
        }
    }
    EXPECT_TRUE(fileActions.contains(QStringLiteral("Open s&weep table…")))
        << fileActions.join(u'|').toStdString();
}

TEST(SweepTable, ColumnsKindsNumbersAndUnits) {
    const gui::SweepTable t = gui::read_sweep_table(fixture("rates.csv"));
    ASSERT_EQ(t.columns.size(), 10U);
    EXPECT_EQ(t.columns[3].kind, gui::SweepColumn::Kind::Axis); // hardware.accelerator
    EXPECT_FALSE(t.columns[3].numeric);
    EXPECT_EQ(t.columns[4].kind, gui::SweepColumn::Kind::Axis); // workload.requests_per_s
    EXPECT_TRUE(t.columns[4].numeric);
    EXPECT_EQ(t.columns[5].kind, gui::SweepColumn::Kind::Meta);   // error
    EXPECT_EQ(t.columns[7].kind, gui::SweepColumn::Kind::Figure); // ttft_s.p99
    EXPECT_TRUE(t.columns[7].numeric);                            // empty cells allowed
    EXPECT_EQ(t.lines, (std::vector<int>{2, 3, 4, 5, 6, 7, 8}));
    EXPECT_EQ(t.cells[2][5], "the deployment does not fit, weights need 141 GB; raise hardware.tp");

    EXPECT_EQ(gui::sweep_unit("ttft_s.p99"), "s");
    EXPECT_EQ(gui::sweep_unit("ttft_s"), "s");
    EXPECT_EQ(gui::sweep_unit("throughput_tok_s"), "tok/s");
    EXPECT_EQ(gui::sweep_unit("output_tok_s"), "tok/s");
    EXPECT_EQ(gui::sweep_unit("workload.requests_per_s"), "requests/s");
    EXPECT_EQ(gui::sweep_unit("throughput_rps"), "requests/s");
    EXPECT_EQ(gui::sweep_unit("memory_per_gpu_bytes"), "bytes");
    EXPECT_EQ(gui::sweep_unit("workload.concurrency"), "");
    EXPECT_EQ(gui::sweep_unit("ranked.0.monthly"), "");

    EXPECT_THROW((void)gui::sweep_plot(t, 3, 7, std::nullopt), InvalidArgument); // text x
}
