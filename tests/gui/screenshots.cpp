// Writes a screenshot of every tab of gpuplan-gui to the folder given (docs/images through the
// `screenshots` target), each on an example scenario, drawn on Qt's offscreen platform.
#include "gui/curve_view.hpp"
#include "gui/main_window.hpp"
#include "gui/rack_view.hpp"
#include "gui/table_models.hpp"
#include "gui/views.hpp"
#include "hwdb/database.hpp"

#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>

#include <iostream>

using gpuplan::gui::MainWindow;

namespace {

QString example(const char* name) {
    return QString::fromStdString(std::string(GPUPLAN_SOURCE_DIR) + "/examples/" + name);
}

bool open(MainWindow& w, const char* file) {
    QSignalSpy shown(&w, &MainWindow::analysisShown);
    QString error;
    if (!w.openFile(example(file), &error)) {
        std::cerr << "cannot open " << file << ": " << error.toStdString() << '\n';
        return false;
    }
    return shown.wait(30000);
}

bool save(MainWindow& w, const QDir& dir, const char* name) {
    QApplication::processEvents();
    w.repaint();
    const QString path = dir.filePath(QString::fromLatin1(name));
    if (!w.grab().save(path, "PNG")) {
        std::cerr << "cannot write " << path.toStdString() << '\n';
        return false;
    }
    std::cout << "wrote " << path.toStdString() << '\n';
    return true;
}

} // namespace

int main(int argc, char** argv) {
    if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    QApplication app(argc, argv);
    const QDir dir(argc > 1 ? QString::fromLocal8Bit(argv[1]) : QStringLiteral("."));
    QDir().mkpath(dir.path());
    const auto db = gpuplan::hwdb::Database::load({std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    MainWindow w(db);
    w.setDebounce(0);
    // The window's default size (what a user first sees; issue 17: nothing clipped at it).
    w.show();
    bool ok = true;

    ok &= open(w, "llama70b-4xh100.yaml");
    w.tabs().setCurrentWidget(&w.planning());
    ok &= save(w, dir, "gui-planning.png");

    ok &= open(w, "simulate-chat.yaml");
    w.tabs().setCurrentWidget(&w.simulation());
    w.findChild<QSpinBox*>(QStringLiteral("sim_requests"))->setValue(600);
    QSignalSpy done(&w.runner(), &gpuplan::gui::Runner::simulationFinished);
    w.simulation().start();
    ok &= done.wait(300000);
    ok &= save(w, dir, "gui-simulation.png");

    ok &= open(w, "cost-rent-vs-buy.yaml");
    w.tabs().setCurrentWidget(&w.powerCost());
    ok &= save(w, dir, "gui-power-cost.png");

    ok &= open(w, "train-llama70b-2x8xh100.yaml");
    w.tabs().setCurrentWidget(&w.training());
    QSignalSpy searched(&w.runner(), &gpuplan::gui::Runner::layoutSearchReady);
    w.training().search();
    ok &= searched.wait(300000);
    ok &= save(w, dir, "gui-training.png");

    // Llama-3.1-70B on 4 x H100, on 2 x H200 and on 8 x H100 (2 replicas).
    ok &= open(w, "llama70b-4xh100.yaml");
    w.tabs().setCurrentWidget(&w.compare());
    QSignalSpy compared(&w.compare(), &gpuplan::gui::CompareView::shown);
    w.compare().pinCurrent();
    auto* dp = w.findChild<QSpinBox*>(QStringLiteral("dp"));
    dp->setValue(2);
    w.compare().pinCurrent();
    open(w, "llama70b-2xh200.yaml");
    w.compare().pinCurrent();
    while (w.compare().table().columnCount() < 4 && compared.wait(30000)) {
    }
    ok &= save(w, dir, "gui-compare.png");

    // The workload form: the arrival process and the request classes of the chat example.
    ok &= open(w, "simulate-chat.yaml");
    w.tabs().setCurrentWidget(w.findChild<QWidget*>(QStringLiteral("workload_editor")));
    ok &= save(w, dir, "gui-workload.png");

    // The scenario form: engine, cluster, autoscaler, power and prices of the autoscaling example.
    ok &= open(w, "autoscaling-llama8b-diurnal.yaml");
    w.tabs().setCurrentWidget(w.findChild<QWidget*>(QStringLiteral("scenario_form")));
    ok &= save(w, dir, "gui-scenario-form.png");

    // The sizing curves of the quickstart (one H100 against load) and the racks of
    // examples/rack-power-cap.yaml.
    ok &= open(w, "quickstart.yaml");
    auto* curves = w.findChild<gpuplan::gui::CurveView*>();
    QSignalSpy curvesShown(curves, &gpuplan::gui::CurveView::shown);
    w.tabs().setCurrentWidget(curves);
    ok &= !curvesShown.isEmpty() || curvesShown.wait(60000);
    ok &= save(w, dir, "gui-curves.png");
    ok &= open(w, "rack-power-cap.yaml");
    w.tabs().setCurrentWidget(w.findChild<gpuplan::gui::RackView*>());
    ok &= save(w, dir, "gui-racks.png");

    // The sizing search of examples/plan-search.yaml, ranked by monthly cost.
    ok &= open(w, "plan-search.yaml");
    w.tabs().setCurrentWidget(&w.plan());
    QSignalSpy planned(&w.runner(), &gpuplan::gui::Runner::planSearchFinished);
    w.plan().search();
    ok &= planned.wait(600000);
    ok &= save(w, dir, "gui-plan.png");
    return ok ? 0 : 1;
}
