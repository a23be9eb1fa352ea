// gpuplan-plot: renders the desktop app's charts of a scenario to PNG files without a display,
// so that `gpuplan estimate|simulate FILE --plot DIR` (which runs this program) gives pictures.
//   gpuplan-plot SCENARIO --out DIR [--simulate] [--requests N] [--hwdb DIR]...
// Exit codes as the CLI: 0 success, 2 bad input, 1 internal error.
#include "gui/headless_plot.hpp"
#include "hwdb/database.hpp"
#include "hwdb/scenario_loader.hpp"
#include "model/error.hpp"

#include <QApplication>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

namespace {

int usage(std::ostream& out, int code) {
    out << "usage: gpuplan-plot SCENARIO --out DIR [--simulate] [--requests N] [--hwdb DIR]...\n"
           "renders the scenario's charts (memory, roofline, cost, racks, training; with "
           "--simulate\n"
           "the latency CDFs, throughput, queue, KV use and SLO attainment) as PNG files into "
           "DIR\n";
    return code;
}

/// Keeps the offscreen platform's chatter ("does not support propagateSizeHints()") out of the
/// CLI's output; real errors still print.
void quiet(QtMsgType type, const QMessageLogContext&, const QString& message) {
    if (type == QtCriticalMsg || type == QtFatalMsg) {
        std::cerr << "gpuplan-plot: " << message.toStdString() << '\n';
    }
}

} // namespace

int main(int argc, char** argv) {
    // No display needed: draw on Qt's offscreen platform unless the caller chose another.
    if (std::getenv("QT_QPA_PLATFORM") == nullptr) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    std::string scenario;
    std::string out;
    bool simulate = false;
    std::optional<int> requests;
    std::vector<std::filesystem::path> extra;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const auto next = [&](const char* what) -> std::string {
            if (i + 1 >= argc) {
                throw gpuplan::UsageError(std::string(what) + " needs a value");
            }
            return argv[++i];
        };
        try {
            if (a == "--help" || a == "-h") {
                return usage(std::cout, 0);
            } else if (a == "--out") {
                out = next("--out");
            } else if (a == "--simulate") {
                simulate = true;
            } else if (a == "--requests") {
                requests = std::stoi(next("--requests"));
            } else if (a == "--hwdb") {
                extra.emplace_back(next("--hwdb"));
            } else if (!a.empty() && a[0] != '-' && scenario.empty()) {
                scenario = a;
            } else {
                std::cerr << "error: unknown argument '" << a << "'\n";
                return usage(std::cerr, 2);
            }
        } catch (const std::exception& e) {
            std::cerr << "error: " << e.what() << '\n';
            return 2;
        }
    }
    if (scenario.empty() || out.empty()) {
        return usage(std::cerr, 2);
    }
    qInstallMessageHandler(quiet);
    QApplication app(argc, argv);
    try {
        const auto folders = gpuplan::hwdb::default_folders(extra);
        const auto db = gpuplan::hwdb::Database::load(folders);
        const gpuplan::gui::Core core(db, folders);
        const gpuplan::model::Scenario s = gpuplan::hwdb::load_scenario(scenario, db);
        const auto result =
            gpuplan::gui::render_plots(s, core, QString::fromStdString(out), simulate, requests);
        for (const QString& f : result.files) {
            std::cout << "wrote " << f.toStdString() << '\n';
        }
        for (const QString& n : result.notes) {
            std::cout << "skipped " << n.toStdString() << '\n';
        }
        return 0;
    } catch (const gpuplan::InputError& e) {
        std::cerr << "error: " << e.what() << '\n';
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "internal error: " << e.what() << '\n';
        return 1;
    }
}
