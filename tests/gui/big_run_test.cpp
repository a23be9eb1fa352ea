// Big runs in the desktop app (issue 17 item 8, issue 12): series thinned to the chart's width
// with their peaks kept, the memory a run needs estimated and warned about before it starts,
// and the result of a 10^6-request run drawn without freezing the window.
#include "gui/chart_adapter.hpp"
#include "gui/downsample.hpp"
#include "gui/main_window.hpp"
#include "gui/run_memory.hpp"
#include "gui/sim_charts.hpp"
#include "gui/table_models.hpp"
#include "gui/views.hpp"
#include "tests/gui/gui_test_env.hpp"

#include <QApplication>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>
#include <QTest>
#include <QTimer>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <random>

using namespace gpuplan;

namespace {

/// A result shaped like a 10^6-request run: three classes, every request kept, and 50,000
/// one-second bins (10^6 requests at 20 requests/s) with a modelled power series.
std::shared_ptr<gui::SimOutcome> big_outcome(int requests, int bins) {
    auto out = std::make_shared<gui::SimOutcome>();
    sim::SimResult r;
    std::mt19937_64 rng(7);
    std::lognormal_distribution<double> ttft(std::log(0.2), 0.6);
    std::lognormal_distribution<double> tpot(std::log(0.02), 0.3);
    r.requests.reserve(static_cast<std::size_t>(requests));
    for (int i = 0; i < requests; ++i) {
        sim::RequestRecord q;
        q.id = static_cast<std::uint64_t>(i);
        q.request_class = i % 3;
        q.arrival = Seconds(i / 20.0);
        q.input_tokens = 1000;
        q.output_tokens = 200;
        q.ttft = Seconds(ttft(rng));
        q.tpot = Seconds(tpot(rng));
        q.e2e = *q.ttft + 199 * *q.tpot;
        q.queue = Seconds(0.01);
        q.slo_met = *q.ttft < Seconds(0.5);
        r.requests.push_back(q);
    }
    for (int c = 0; c < 3; ++c) {
        sim::ClassResult k;
        k.name = "class" + std::to_string(c);
        k.summary.arrived = requests / 3;
        k.summary.completed = requests / 3;
        k.summary.slo_attainment = 0.9;
        r.classes.push_back(k);
    }
    r.overall.arrived = requests;
    r.overall.completed = requests;
    r.duration = Seconds(bins);
    r.series.resize(static_cast<std::size_t>(bins));
    r.power.modelled = true;
    r.power.total_power.resize(static_cast<std::size_t>(bins));
    for (int b = 0; b < bins; ++b) {
        auto& t = r.series[static_cast<std::size_t>(b)];
        t.t = Seconds(b);
        t.arrivals = 20;
        t.completions = 20;
        t.running = 40 + 20 * std::sin(b / 300.0);
        t.waiting = b % 5000 == 0 ? 900 : 3;
        t.kv_use = 0.5 + 0.4 * std::sin(b / 700.0);
        t.input_tok_s = 20000 + (b % 97) * 10;
        t.output_tok_s = 4000 + (b % 89) * 10;
        t.power = Watts(8000 + 2000 * t.kv_use);
        r.power.total_power[static_cast<std::size_t>(b)] = t.power;
    }
    r.power.avg_power = Watts(9000);
    r.power.peak_power = Watts(9800);
    out->result = std::move(r);
    out->wall_s = 1;
    return out;
}

} // namespace

class BigRunTest : public ::testing::Test {
  protected:
    void SetUp() override { (void)test::gui_app(); }
};

// Drawing the result of a 10^6-request run: the time from the result arriving to the tab being
// painted (issue 17 item 8: about 4.5 s before).
TEST_F(BigRunTest, TheResultOfAMillionRequestRunIsDrawnQuickly) {
    gui::MainWindow w(test::repo_db());
    w.setDebounce(0);
    w.resize(1542, 940);
    w.show();
    w.tabs().setCurrentWidget(&w.simulation());
    QTest::qWait(50);
    const auto outcome = big_outcome(1'000'000, 50'000);
    // What the runner does on its worker thread after the run (not the window's time).
    QElapsedTimer worker;
    worker.start();
    outcome->charts =
        std::make_shared<const gui::SimChartData>(gui::prepare_chart_data(*outcome->result));
    const double worker_ms = static_cast<double>(worker.nsecsElapsed()) / 1e6;
    QElapsedTimer timer;
    timer.start();
    emit w.runner().simulationFinished(outcome);
    const double update_ms = static_cast<double>(timer.nsecsElapsed()) / 1e6;
    (void)w.grab(); // paints every chart once, as the first frame after the update
    const double total_ms = static_cast<double>(timer.nsecsElapsed()) / 1e6;
    std::cout << "[ figures  ] 10^6 requests, 50,000 bins: chart update " << update_ms
              << " ms, update and first paint " << total_ms
              << " ms (CDFs prepared on the worker in " << worker_ms << " ms)\n";
    // Before: 1,255 ms to update and 1,536 ms to the first paint on this machine (the issue
    // measured about 4.5 s on a desktop); the bound leaves room for a loaded machine.
    EXPECT_LT(update_ms, 1000.0);
    for (gui::ChartPanel* c : w.simulation().charts()) {
        SCOPED_TRACE(c->key().toStdString());
        EXPECT_TRUE(c->hasChart()) << c->message().toStdString();
        // Every line is thinned: at most two points per pixel column (CDFs: per prepared
        // column), whatever the 10^6 requests and 50,000 bins.
        for (int i = 0; i < c->seriesCount(); ++i) {
            EXPECT_LE(c->seriesPoints(i).size(),
                      static_cast<std::size_t>(
                          2 * std::max(gui::kCdfColumns, gui::chartColumns(c->width()))));
        }
    }
    // The CDF still reaches the slowest request, and the queue's spikes (900 waiting every
    // 5,000 s, 3 otherwise) all survive the thinning.
    const auto ttft = w.simulation().charts().at(0)->seriesPoints(0);
    ASSERT_FALSE(ttft.empty());
    EXPECT_DOUBLE_EQ(ttft.back().second, 1.0);
    const auto waiting = w.simulation().charts().at(4)->seriesPoints(0);
    EXPECT_EQ(std::count_if(waiting.begin(), waiting.end(),
                            [](const auto& pt) { return pt.second == 900.0; }),
              10);
}

// ---- downsampleMinMax ----

TEST(Downsample, KeepsEveryPeakWithAtMostTwoPointsPerColumnInOrder) {
    // 100,000 points of a flat line at 1 with a spike to 50 at x = 12,345 and a dip to -7 at
    // x = 77,777, into 500 columns.
    QList<QPointF> in;
    for (int i = 0; i < 100'000; ++i) {
        in.append(QPointF(i, i == 12'345 ? 50.0 : i == 77'777 ? -7.0 : 1.0));
    }
    const QList<QPointF> out = gui::downsampleMinMax(in, 500);
    EXPECT_LE(out.size(), 1000);
    EXPECT_GE(out.size(), 500); // every column holds points: at least one each
    EXPECT_TRUE(std::is_sorted(out.begin(), out.end(),
                               [](const QPointF& a, const QPointF& b) { return a.x() < b.x(); }));
    EXPECT_TRUE(out.contains(QPointF(12'345, 50.0)));
    EXPECT_TRUE(out.contains(QPointF(77'777, -7.0)));
    // Every kept point is an input point (x is the index here).
    for (const QPointF& p : out) {
        EXPECT_EQ(in.at(static_cast<qsizetype>(p.x())), p);
    }
}

TEST(Downsample, ABucketKeepsItsLowAndHighInTheirOrder) {
    // 8 points into 2 columns (x 0..7: column 0 holds x < 3.5): column 0 has its low at x 2 and
    // its high at x 1; column 1 its high at x 4 and its low at x 6.
    const QList<QPointF> in{{0, 5}, {1, 9}, {2, 1}, {3, 5}, {4, 8}, {5, 5}, {6, 2}, {7, 5}};
    EXPECT_EQ(gui::downsampleMinMax(in, 2), (QList<QPointF>{{1, 9}, {2, 1}, {4, 8}, {6, 2}}));
    // Short enough already: unchanged.
    EXPECT_EQ(gui::downsampleMinMax(in, 4), in);
    // A constant column keeps one point; points that are not finite are dropped.
    const QList<QPointF> flat{{0, 1}, {0, 1}, {0, 1}, {1, std::nan("")}, {0, 1}};
    EXPECT_EQ(gui::downsampleMinMax(flat, 1), (QList<QPointF>{{0, 1}}));
    EXPECT_TRUE(gui::downsampleMinMax({}, 10).isEmpty());
}

// ---- the memory a run needs ----

TEST(RunMemory, EstimateFollowsTheDocumentedCosts) {
    model::Scenario s;
    s.workload.requests_per_s = 20;
    sim::SimOptions o;
    o.requests = 1'000'000;
    const auto e = gui::estimate_run_memory(s, o);
    EXPECT_EQ(e.requests, 1'000'000);
    EXPECT_DOUBLE_EQ(e.span_s, 50'000); // 10^6 requests at 20 requests/s
    // Per request: the record twice (vector growth), the CDF's sorted value and point (8 + 16
    // B), and 96 B of exact-percentile samples (one class: all 10^6 < 2^20 are kept).
    const double per_request = 2.0 * sizeof(sim::RequestRecord) + 24 + 96;
    EXPECT_DOUBLE_EQ(e.per_request_bytes, per_request);
    EXPECT_DOUBLE_EQ(e.request_bytes, 1e6 * per_request);
    // Per second: a TimeBin and 4 power series (1 GPU: replica, node, rack, total).
    EXPECT_DOUBLE_EQ(e.series_bytes, 50'001 * (sizeof(sim::TimeBin) + 4 * 8.0));
    EXPECT_DOUBLE_EQ(e.total_bytes, e.request_bytes + e.series_bytes);
    // About 0.4 GB: within the default budget of 2 GiB; 10^7 requests (about 4 GB) are not.
    EXPECT_LT(e.total_bytes, gui::kDefaultMemoryBudgetBytes);
    o.requests = 10'000'000;
    const auto big = gui::estimate_run_memory(s, o);
    EXPECT_GT(big.total_bytes, gui::kDefaultMemoryBudgetBytes);
    // Past 2^20 requests per class the samples are a histogram: only 2^20 count.
    EXPECT_DOUBLE_EQ(big.request_bytes,
                     1e7 * (2.0 * sizeof(sim::RequestRecord) + 24) + 1048576.0 * 96);
    // The span caps the series at 65,536 bins.
    EXPECT_DOUBLE_EQ(big.series_bytes, 65'536 * (sizeof(sim::TimeBin) + 4 * 8.0));

    // Without a count: duration × rate; agent sessions send `steps` requests each.
    o.requests.reset();
    s.workload.duration = Seconds(100);
    EXPECT_EQ(gui::estimate_run_memory(s, o).requests, 2000);
    model::RequestClass agent;
    agent.agent = model::AgentSession{};
    agent.agent->steps = 3;
    s.workload.classes = {agent};
    EXPECT_EQ(gui::estimate_run_memory(s, o).requests, 6000);
    // Neither: the simulator's default of 1000.
    s.workload = model::Workload{};
    EXPECT_EQ(gui::estimate_run_memory(s, o).requests, 1000);
}

// Above the budget the Simulation tab asks first: Cancel starts nothing, "Run anyway" runs.
TEST_F(BigRunTest, ARunAboveTheBudgetAsksFirst) {
    gui::MainWindow w(test::repo_db());
    w.setDebounce(0);
    w.show();
    w.tabs().setCurrentWidget(&w.simulation());
    auto* budget = w.findChild<QDoubleSpinBox*>(QStringLiteral("sim_memory_budget"));
    ASSERT_NE(budget, nullptr);
    EXPECT_DOUBLE_EQ(budget->value(), 2.0); // the default, in GiB
    budget->setValue(0.1);
    EXPECT_DOUBLE_EQ(gui::memoryBudgetBytes(), 0.1 * kGiB);
    w.findChild<QSpinBox*>(QStringLiteral("sim_requests"))->setValue(1'000'000); // about 0.4 GB
    QString text;
    const auto answer = [&](const char* button) {
        QTimer::singleShot(0, [&, button] {
            auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
            ASSERT_NE(box, nullptr);
            EXPECT_EQ(box->objectName(), QStringLiteral("memory_warning"));
            text = box->text();
            box->findChild<QPushButton*>(QString::fromLatin1(button))->click();
        });
    };
    answer("memory_cancel");
    w.simulation().start();
    EXPECT_NE(text.indexOf(QStringLiteral("above the budget of 102 MiB")), -1)
        << text.toStdString();
    EXPECT_FALSE(w.runner().simulationRunning());
    QSignalSpy done(&w.runner(), &gui::Runner::simulationFinished);
    answer("memory_continue");
    w.simulation().start();
    EXPECT_TRUE(w.runner().simulationRunning() || done.count() > 0);
    w.simulation().cancel();
    EXPECT_TRUE(done.count() > 0 || done.wait(60000));
    gui::setMemoryBudgetBytes(gui::kDefaultMemoryBudgetBytes);
}
