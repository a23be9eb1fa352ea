#include "gui/runner.hpp"

#include "gui/sim_charts.hpp"
#include "model/error.hpp"

#include <QMetaObject>
#include <QPointer>
#include <QtConcurrent/QtConcurrentRun>

#include <chrono>
#include <exception>

namespace gpuplan::gui {

namespace {

QString message_of(const std::exception& e, bool internal) {
    const QString text = QString::fromStdString(e.what());
    return internal ? QStringLiteral("internal error: ") + text : text;
}

/// Runs `work` and records its outcome the way every long run reports it: a user-fixable
/// error as is, anything else as an internal error, and the wall time either way.
template <class Outcome, class Work>
void run_recorded(Outcome& out, std::chrono::steady_clock::time_point start, Work&& work) {
    try {
        work();
    } catch (const InputError& e) {
        out.error = e.what();
    } catch (const std::exception& e) {
        out.error = std::string("internal error: ") + e.what();
    }
    out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

Runner::Runner(const Core& core, QObject* parent)
    : QObject(parent), core_(core), last_progress_(std::make_shared<std::atomic<double>>(-1.0)) {
    qRegisterMetaType<AnalysisPtr>();
    qRegisterMetaType<SimOutcomePtr>();
    qRegisterMetaType<ComparisonPtr>();
    qRegisterMetaType<PlanOutcomePtr>();
    connect(&plan_, &QFutureWatcher<PlanOutcomePtr>::finished, this,
            [this] { emit planSearchFinished(plan_.result()); });
    connect(&analysis_, &QFutureWatcher<AnalysisResult>::finished, this, &Runner::analysisDone);
    connect(&simulation_, &QFutureWatcher<SimOutcomePtr>::finished, this,
            [this] { emit simulationFinished(simulation_.result()); });
    connect(&comparison_, &QFutureWatcher<ComparisonPtr>::finished, this,
            [this] { emit comparisonReady(comparison_.result()); });
    connect(&search_, &QFutureWatcher<AnalysisResult>::finished, this, [this] {
        const AnalysisResult r = search_.result();
        if (r.analysis) {
            emit layoutSearchReady(r.analysis);
        } else {
            auto failed = std::make_shared<Analysis>();
            failed->training_error = r.error.toStdString();
            emit layoutSearchReady(failed);
        }
    });
}

Runner::~Runner() {
    stop_.request_stop();
    planStop_.request_stop();
    waitForIdle();
}

void Runner::waitForIdle() {
    analysis_.waitForFinished();
    simulation_.waitForFinished();
    comparison_.waitForFinished();
    search_.waitForFinished();
    plan_.waitForFinished();
}

void Runner::requestAnalysis(model::Scenario s, AnalysisParts parts) {
    if (analysis_.isRunning()) {
        pending_.emplace(std::move(s), parts); // latest wins
        return;
    }
    startAnalysis(std::move(s), parts);
}

void Runner::startAnalysis(model::Scenario s, AnalysisParts parts) {
    emit analysisStarted();
    const Core* core = &core_;
    analysis_.setFuture(QtConcurrent::run([s = std::move(s), parts, core]() -> AnalysisResult {
        try {
            return {std::make_shared<const Analysis>(analyze(s, *core, parts)), {}};
        } catch (const InputError& e) {
            return {nullptr, message_of(e, false)};
        } catch (const std::exception& e) {
            return {nullptr, message_of(e, true)};
        }
    }));
}

void Runner::analysisDone() {
    const AnalysisResult r = analysis_.result();
    if (pending_) {
        // A newer request is waiting: its answer replaces this one, so skip showing stale work.
        auto [s, parts] = std::move(*pending_);
        pending_.reset();
        startAnalysis(std::move(s), parts);
        return;
    }
    if (r.analysis) {
        emit analysisReady(r.analysis);
    } else {
        emit analysisFailed(r.error);
    }
}

void Runner::startSimulation(model::Scenario s, sim::SimOptions options) {
    if (simulation_.isRunning()) {
        stop_.request_stop();
        simulation_.waitForFinished();
    }
    stop_ = std::stop_source();
    last_progress_->store(-1.0);
    options.keep_requests = true; // the latency CDFs need every request
    const std::stop_token token = stop_.get_token();
    auto last = last_progress_;
    QPointer<Runner> self(this);
    const Core* core = &core_;
    simulation_.setFuture(
        QtConcurrent::run([s = std::move(s), options, token, last, self, core]() mutable {
            const auto start = std::chrono::steady_clock::now();
            auto out = std::make_shared<SimOutcome>();
            // Reports at most every 1 % so that the GUI thread's queue stays short.
            const sim::ProgressFn progress = [last, self](double f) {
                if (f - last->load() < 0.01 && f < 1.0) {
                    return;
                }
                last->store(f);
                if (self) {
                    QMetaObject::invokeMethod(
                        self.data(),
                        [self, f] {
                            if (self) {
                                emit self->simulationProgress(f);
                            }
                        },
                        Qt::QueuedConnection);
                }
            };
            run_recorded(*out, start, [&] {
                // The CLI's choices: the GPU's efficiency profile and the scenario's node.
                if (!options.profile) {
                    options.profile = core->profile_for(s.deployment.gpu);
                }
                if (!options.node) {
                    options.node = core->node_of(s);
                }
                out->result = sim::simulate(s, options, token, progress);
            });
            if (out->result) {
                // Sorting 10^6 latencies is work for this thread, not the window's.
                auto charts = prepare_chart_data(*out->result);
                out->charts = std::make_shared<const SimChartData>(std::move(charts));
            }
            return SimOutcomePtr(std::move(out));
        }));
}

void Runner::cancelSimulation() {
    stop_.request_stop();
}

void Runner::requestComparison(std::vector<model::Scenario> configs) {
    comparison_.waitForFinished();
    const Core* core = &core_;
    comparison_.setFuture(QtConcurrent::run([configs = std::move(configs), core]() {
        auto out = std::make_shared<Comparison>();
        AnalysisParts parts;
        parts.what_ifs = false;
        parts.training = false;
        for (const auto& s : configs) {
            try {
                out->analyses.emplace_back(analyze(s, *core, parts));
                out->errors.emplace_back();
            } catch (const std::exception& e) {
                out->analyses.emplace_back(std::nullopt);
                out->errors.emplace_back(e.what());
            }
        }
        return ComparisonPtr(std::move(out));
    }));
}

void Runner::requestLayoutSearch(model::Scenario s) {
    search_.waitForFinished();
    const Core* core = &core_;
    search_.setFuture(QtConcurrent::run([s = std::move(s), core]() -> AnalysisResult {
        AnalysisParts parts;
        parts.what_ifs = false;
        parts.power_cost = false;
        parts.layout_search = true;
        try {
            return {std::make_shared<const Analysis>(analyze(s, *core, parts)), {}};
        } catch (const std::exception& e) {
            return {nullptr, QString::fromStdString(e.what())};
        }
    }));
}

void Runner::startPlanSearch(model::Scenario s) {
    if (plan_.isRunning()) {
        planStop_.request_stop();
        plan_.waitForFinished();
    }
    planStop_ = std::stop_source();
    const std::stop_token token = planStop_.get_token();
    // Progress comes per finished simulation (at most plan.max_simulations), so no throttle.
    QPointer<Runner> self(this);
    const Core* core = &core_;
    plan_.setFuture(QtConcurrent::run([s = std::move(s), token, self, core]() {
        const auto start = std::chrono::steady_clock::now();
        auto out = std::make_shared<PlanOutcome>();
        out->scenario = s;
        const sim::ProgressFn progress = [self](double f) {
            if (self) {
                QMetaObject::invokeMethod(
                    self.data(),
                    [self, f] {
                        if (self) {
                            emit self->planSearchProgress(f);
                        }
                    },
                    Qt::QueuedConnection);
            }
        };
        run_recorded(*out, start, [&] {
            std::optional<model::ServerSpec> node;
            if (const model::ServerSpec* server = core->server_of(s)) {
                node = *server;
            }
            out->plan = plan::effective_plan(s, node);
            out->result = search_sizing(s, *core, token, progress);
        });
        return PlanOutcomePtr(std::move(out));
    }));
}

void Runner::cancelPlanSearch() {
    planStop_.request_stop();
}

} // namespace gpuplan::gui
