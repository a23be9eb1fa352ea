// The planner's workbench under Qt's offscreen platform: the Curves tab against `gpuplan curve
// --json` for the same file and its simulator confirmation on a worker thread; the Racks tab
// against `gpuplan rack --json`; the HTML report against what `gpuplan estimate`, `rack` and
// `cost` print for the same scenario.
#include "gui/chart_adapter.hpp"
#include "gui/curve_view.hpp"
#include "gui/main_window.hpp"
#include "gui/rack_view.hpp"
#include "gui/report.hpp"
#include "gui/scenario_document.hpp"
#include "gui/ui_util.hpp"
#include "hwdb/scenario_loader.hpp"
#include "hwdb/scenario_writer.hpp"
#include "model/error_bands.hpp"
#include "tests/gui/gui_test_env.hpp"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

#include <gtest/gtest.h>

#include <string>

using namespace gpuplan;

namespace {

const hwdb::Database& db() {
    return test::repo_db();
}

QString example(const char* name) {
    return QString::fromStdString(std::string(GPUPLAN_SOURCE_DIR) + "/examples/" + name);
}

template <class T> T* child(QWidget& w, const char* name) {
    T* c = w.findChild<T*>(QString::fromLatin1(name));
    EXPECT_NE(c, nullptr) << "no widget named " << name;
    return c;
}

#ifdef GPUPLAN_CLI
/// `gpuplan ARGS --json`, parsed.
QJsonObject cli_json(const QStringList& args) {
    QProcess p;
    p.start(QString::fromUtf8(GPUPLAN_CLI), args + QStringList{QStringLiteral("--json")});
    EXPECT_TRUE(p.waitForFinished(120000));
    EXPECT_EQ(p.exitCode(), 0) << p.readAllStandardError().toStdString();
    return QJsonDocument::fromJson(p.readAllStandardOutput()).object();
}
#endif

class WorkbenchTest : public ::testing::Test {
  protected:
    void SetUp() override { (void)test::gui_app(); }
};

/// The Curves tab of a window with `file` open, its curves drawn.
struct CurveTab {
    explicit CurveTab(const QString& file) : w(db(), {std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"}) {
        w.setDebounce(0);
        EXPECT_TRUE(w.openFile(file));
        w.show();
        view = child<gui::CurveView>(w, "curve_view");
        QSignalSpy shown(view, &gui::CurveView::shown);
        w.tabs().setCurrentWidget(view);
        view->waitForIdle();
        EXPECT_TRUE(shown.count() > 0 || shown.wait(60000));
        // A later edit's refresh may be queued: settle on the document's scenario.
        while (view->outcome() && !(view->outcome()->scenario == w.document().scenario())) {
            EXPECT_TRUE(shown.wait(60000));
        }
    }
    gui::MainWindow w;
    gui::CurveView* view = nullptr;
};

/// The quickstart with H200 and A100 as plan candidates, written to `dir`.
QString with_candidates(const QTemporaryDir& dir) {
    model::Scenario s = hwdb::load_scenario(example("quickstart.yaml").toStdString(), db());
    gui::set_plan_candidates(s, db(), {"h100-sxm", "h200-sxm", "a100-sxm-80gb"});
    const QString path = dir.filePath(QStringLiteral("candidates.yaml"));
    EXPECT_TRUE(gui::writeFileBytes(path, QByteArray::fromStdString(hwdb::scenario_to_yaml(s))));
    return path;
}

TEST_F(WorkbenchTest, TheCurvesTabDrawsWhatGpuplanCurvePrints) {
    QTemporaryDir dir;
    const QString file = with_candidates(dir);
    CurveTab t(file);
    ASSERT_TRUE(t.view->outcome() && t.view->outcome()->curve) << t.view->errorText().toStdString();
    const plan::LoadCurve& c = *t.view->outcome()->curve;
#ifdef GPUPLAN_CLI
    // The tab's loads, given to the CLI: the same points and the same highest loads.
    QStringList loads;
    for (const auto& p : c.curves.front().points) {
        loads << QString::number(p.load, 'g', 17);
    }
    const QJsonObject cli =
        cli_json({QStringLiteral("curve"), file, QStringLiteral("--axis"),
                  c.axis == plan::LoadAxis::Concurrency ? QStringLiteral("concurrency")
                                                        : QStringLiteral("rate"),
                  QStringLiteral("--loads"), loads.join(u',')});
    const QJsonArray cands = cli[QStringLiteral("candidates")].toArray();
    ASSERT_EQ(cands.size(), static_cast<int>(c.curves.size()));
    ASSERT_EQ(cands.size(), 3);
    for (int i = 0; i < cands.size(); ++i) {
        const QJsonObject k = cands[i].toObject();
        const plan::CandidateCurve& g = c.curves[static_cast<std::size_t>(i)];
        EXPECT_EQ(k[QStringLiteral("gpu")].toString().toStdString(), g.name);
        if (g.max_load) {
            EXPECT_DOUBLE_EQ(k[QStringLiteral("max_load")].toDouble(), *g.max_load);
        } else {
            EXPECT_TRUE(k[QStringLiteral("max_load")].isNull());
        }
        const QJsonArray pts = k[QStringLiteral("points")].toArray();
        ASSERT_EQ(pts.size(), static_cast<int>(g.points.size()));
        for (int j = 0; j < pts.size(); ++j) {
            const auto& p = g.points[static_cast<std::size_t>(j)];
            EXPECT_DOUBLE_EQ(pts[j].toObject()[QStringLiteral("tpot_s")].toDouble(), p.tpot.si());
            EXPECT_DOUBLE_EQ(pts[j].toObject()[QStringLiteral("throughput_tok_s")].toDouble(),
                             p.throughput);
        }
    }
#endif
    // The TTFT chart: a line per GPU, the SLO line at the scenario's target (ms) and a marker
    // line at each highest load.
    const QList<gui::ChartPanel*> charts = t.view->charts();
    ASSERT_EQ(charts.size(), 3);
    gui::ChartPanel* ttft = charts[1];
    ASSERT_TRUE(ttft->hasChart()) << ttft->message().toStdString();
    const QStringList names = ttft->seriesNames();
    for (const auto& g : c.curves) {
        EXPECT_TRUE(names.contains(QString::fromStdString(g.name)));
    }
    ASSERT_TRUE(c.slo.ttft.has_value());
    int slo = -1;
    for (int i = 0; i < names.size(); ++i) {
        if (names[i].startsWith(QStringLiteral("SLO "))) {
            slo = i;
        }
    }
    ASSERT_GE(slo, 0) << names.join(u'|').toStdString();
    const auto pts = ttft->seriesPoints(slo);
    ASSERT_EQ(pts.size(), 2u);
    EXPECT_DOUBLE_EQ(pts[0].second, c.slo.ttft->si() * 1e3);
    EXPECT_TRUE(t.view->headline().contains(QStringLiteral("Highest load meeting the SLO")));
}

TEST_F(WorkbenchTest, TheSimulatorConfirmsTheCurvesWithoutBlockingTheWindow) {
    CurveTab t(example("quickstart.yaml"));
    ASSERT_TRUE(t.view->outcome() && t.view->outcome()->curve);
    child<QSpinBox>(*t.view, "curve_requests")->setValue(60);
    QSignalSpy done(t.view, &gui::CurveView::simulated);
    QElapsedTimer clock;
    clock.start();
    QTest::mouseClick(child<QPushButton>(*t.view, "curve_confirm"), Qt::LeftButton);
    // The click returns at once: the simulations run on a worker thread.
    EXPECT_LT(clock.elapsed(), 1000);
    ASSERT_TRUE(done.wait(120000));
    const auto& sim = t.view->simulation();
    ASSERT_TRUE(sim);
    EXPECT_TRUE(sim->error.empty()) << sim->error;
    ASSERT_FALSE(sim->points.empty());
    const auto expected = gui::confirm_loads(t.view->outcome()->curve->curves.front(),
                                             t.view->outcome()->curve->axis);
    ASSERT_EQ(sim->points.front().size(), expected.size());
    for (const auto& p : sim->points.front()) {
        EXPECT_TRUE(p.ok) << p.reason;
        EXPECT_LE(p.ttft_p50_s, p.ttft_p99_s);
    }
    // The markers: P50 and P99 on the TTFT chart.
    const QStringList names = t.view->charts()[1]->seriesNames();
    EXPECT_TRUE(names.filter(QStringLiteral("sim P99")).size() >= 1)
        << names.join(u'|').toStdString();
}

TEST_F(WorkbenchTest, ConfirmLoadsSurroundTheHighestLoad) {
    plan::CandidateCurve c;
    c.max_load = 40;
    EXPECT_EQ(gui::confirm_loads(c, plan::LoadAxis::Concurrency),
              (std::vector<double>{20, 30, 40, 50}));
    c.max_load = 1;
    EXPECT_EQ(gui::confirm_loads(c, plan::LoadAxis::Concurrency), (std::vector<double>{1}));
    c.max_load = 4.0;
    EXPECT_EQ(gui::confirm_loads(c, plan::LoadAxis::RequestRate),
              (std::vector<double>{2, 3, 4, 5}));
}

#ifdef GPUPLAN_CLI
TEST_F(WorkbenchTest, TheRacksTabDrawsThePlanGpuplanRackPrints) {
    gui::MainWindow w(db(), {std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    w.setDebounce(0);
    ASSERT_TRUE(w.openFile(example("rack-power-cap.yaml")));
    w.show();
    auto* view = child<gui::RackView>(w, "rack_view");
    QSignalSpy shown(&w, &gui::MainWindow::analysisShown);
    w.tabs().setCurrentWidget(view);
    w.runner().waitForIdle();
    QCoreApplication::processEvents();
    while (view->drawing().racks == 0 && shown.wait(60000)) {
    }
    const gui::RackDrawing& d = view->drawing();
    const QJsonObject plan =
        cli_json({QStringLiteral("rack"), example("rack-power-cap.yaml")})[QStringLiteral("plan")]
            .toObject();
    EXPECT_TRUE(d.feasible);
    EXPECT_EQ(d.racks, plan[QStringLiteral("racks")].toInt());
    const int perRack = plan[QStringLiteral("nodes_per_rack")].toInt();
    EXPECT_TRUE(d.binding.contains(QStringLiteral("at %1 nodes").arg(perRack)))
        << d.binding.toStdString();
    // 16 nodes of 8 GPUs: the drawn racks hold them all, full racks first.
    ASSERT_FALSE(d.drawn.empty());
    EXPECT_EQ(d.drawn.front().nodes, perRack);
    EXPECT_EQ(d.drawn.front().gpus, perRack * 8);
    // Units on every label.
    for (const auto& r : d.drawn) {
        EXPECT_TRUE(r.label.contains(QStringLiteral(" kW"))) << r.label.toStdString();
        EXPECT_TRUE(r.label.contains(QStringLiteral(" U"))) << r.label.toStdString();
    }
    EXPECT_TRUE(d.pduLabel.contains(QStringLiteral(" kW")));
    EXPECT_TRUE(d.nodeLabel.contains(QStringLiteral(" kW")));
    for (const QString& l : d.limits) {
        EXPECT_TRUE(l.contains(QStringLiteral(" kW")) || l.contains(QStringLiteral(" U")))
            << l.toStdString();
    }
    // The binding kind follows the plan's binding limit.
    const QString binding = plan[QStringLiteral("binding")].toString();
    EXPECT_EQ(d.bindingKind, binding == QStringLiteral("rack_units") ? QStringLiteral("space")
                                                                     : QStringLiteral("power"));
    // The widget paints it (a non-white image).
    const QImage img = view->grab().toImage();
    EXPECT_FALSE(img.isNull());
}

TEST_F(WorkbenchTest, TheReportHoldsTheFiguresTheCliPrintsAndNoExternalReference) {
    const QString file = example("llama70b-4xh100.yaml");
    gui::Core core(db(), {std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    const model::Scenario s = hwdb::load_scenario(file.toStdString(), db());
    const gui::ReportInputs in = gui::gather_report(s, core);
    const QString html = gui::html_report(in);

    const QJsonObject est = cli_json({QStringLiteral("estimate"), file});
    const auto has = [&](const QString& what) {
        EXPECT_TRUE(html.contains(what.toHtmlEscaped())) << "missing: " << what.toStdString();
    };
    const auto hasHtml = [&](const QString& what) {
        EXPECT_TRUE(html.contains(what)) << "missing: " << what.toStdString();
    };
    has(gui::formatTime(Seconds(est[QStringLiteral("ttft_s")].toDouble())));
    has(gui::formatTime(Seconds(est[QStringLiteral("ttft_loaded_s")].toDouble())));
    has(gui::formatTime(Seconds(est[QStringLiteral("tpot_s")].toDouble())));
    has(gui::formatNumber(est[QStringLiteral("throughput_tok_s")].toDouble(), 0));
    has(gui::formatNumber(est[QStringLiteral("peak_throughput_tok_s")].toDouble(), 0));
    // Each figure's measured band, the text `estimate` prints for it (not the profile's).
    const QJsonObject bands = est[QStringLiteral("bands")].toObject();
    ASSERT_EQ(bands.size(), 5);
    for (const auto& key : bands.keys()) {
        const QJsonObject b = bands[key].toObject();
        has(QString::fromStdString(model::band_text(model::FigureBand{
            b[QStringLiteral("p90")].toDouble(), b[QStringLiteral("mean_signed")].toDouble(),
            b[QStringLiteral("points")].toInt(), b[QStringLiteral("validated")].toBool(),
            b[QStringLiteral("source")].toString().toStdString()})));
    }
    const QJsonObject bottleneck = est[QStringLiteral("bottleneck")].toObject();
    has(bottleneck[QStringLiteral("prefill")].toString());
    has(bottleneck[QStringLiteral("decode")].toString());
    // What-ifs: every one the CLI lists.
    ASSERT_FALSE(est[QStringLiteral("what_ifs")].toArray().isEmpty());
    for (const auto& x : est[QStringLiteral("what_ifs")].toArray()) {
        has(x.toObject()[QStringLiteral("name")].toString());
    }

    const QJsonObject rack =
        cli_json({QStringLiteral("rack"), file})[QStringLiteral("plan")].toObject();
    hasHtml(QStringLiteral("<th>Racks</th><td>%1</td>").arg(rack[QStringLiteral("racks")].toInt()));
    hasHtml(QStringLiteral("<th>Binding limit</th><td>%1</td>")
                .arg(rack[QStringLiteral("binding")].toString()));

    const QJsonObject cost = cli_json({QStringLiteral("cost"), file});
    const std::string currency = cost[QStringLiteral("currency")].toString().toStdString();
    for (const char* key : {"own_monthly", "rent_monthly"}) {
        const QJsonValue v = cost[QString::fromLatin1(key)];
        ASSERT_TRUE(v.isDouble()) << key; // the example has hwdb prices for both
        has(gui::formatMoney(model::Money{v.toDouble(), currency}));
    }

    const QJsonObject curve = cli_json({QStringLiteral("curve"), file});
    ASSERT_FALSE(curve[QStringLiteral("candidates")].toArray().isEmpty());
    for (const auto& c : curve[QStringLiteral("candidates")].toArray()) {
        const QJsonValue max = c.toObject()[QStringLiteral("max_load")];
        EXPECT_TRUE(max.isDouble()); // the example meets its SLO at some load
        if (max.isDouble()) {
            has(gui::formatNumber(
                max.toDouble(),
                curve[QStringLiteral("axis")] == QStringLiteral("concurrency") ? 0 : 2));
        }
    }

    // Self-contained: no resource loaded from elsewhere; the charts are embedded PNGs.
    EXPECT_FALSE(html.contains(QStringLiteral("src=\"http")));
    EXPECT_FALSE(html.contains(QStringLiteral("src='http")));
    EXPECT_FALSE(html.contains(QStringLiteral("<link"), Qt::CaseInsensitive));
    EXPECT_FALSE(html.contains(QStringLiteral("<script"), Qt::CaseInsensitive));
    EXPECT_FALSE(html.contains(QStringLiteral("url(")));
    EXPECT_GE(html.count(QStringLiteral("src=\"data:image/png;base64,")),
              7); // analytic + curves + racks
    // The scenario and the provenance.
    has(QStringLiteral("schema: 1"));
    hasHtml(QStringLiteral("<th>gpuplan</th><td>%1</td>").arg(gui::app_version()));
    EXPECT_TRUE(html.contains(QStringLiteral("[S"))); // hwdb source tags with their citations
    has(QString::fromStdString(model::to_string(in.analysis.serving().provenance.kind)));
}
#endif

} // namespace
