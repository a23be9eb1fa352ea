// gpuplan-gui: the desktop planning app. `gpuplan-gui [--hwdb DIR]... [--sweep FILE.csv] [FILE]`
// opens FILE, a scenario in the CLI's YAML format, and FILE.csv, a sweep's output table.
#include "gui/main_window.hpp"
#include "gui/ui_util.hpp"
#include "hwdb/database.hpp"
#include "model/error.hpp"

#include <QApplication>
#include <QCommandLineParser>
#include <QMessageBox>

#include <iostream>
#include <string_view>

int main(int argc, char** argv) {
    // --help and --version need no display.
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if ((a == "--help" || a == "-h" || a == "--version" || a == "-v") &&
            !qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) {
            qputenv("QT_QPA_PLATFORM", "offscreen");
        }
    }
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("gpuplan-gui"));
    QApplication::setOrganizationName(QStringLiteral("gpuplan"));
    QApplication::setApplicationVersion(QStringLiteral("0.1.0"));
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("gpuplan desktop app: plan LLM serving and training on GPUs"));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption hwdb(
        QStringLiteral("hwdb"),
        QStringLiteral("add a folder of hwdb YAML (overrides built-in entries by name)"),
        QStringLiteral("DIR"));
    parser.addOption(hwdb);
    const QCommandLineOption sweep(
        QStringLiteral("sweep"),
        QStringLiteral("open a sweep's output table (gpuplan sweep SPEC -o FILE.csv) and plot it"),
        QStringLiteral("FILE.csv"));
    parser.addOption(sweep);
    parser.addPositionalArgument(QStringLiteral("FILE"), QStringLiteral("scenario YAML to open"),
                                 QStringLiteral("[FILE]"));
    parser.process(app);

    std::vector<std::filesystem::path> extra;
    for (const QString& d : parser.values(hwdb)) {
        extra.emplace_back(d.toStdString());
    }
    std::optional<gpuplan::hwdb::Database> db;
    const auto folders = gpuplan::hwdb::default_folders(extra);
    try {
        db = gpuplan::hwdb::Database::load(folders);
    } catch (const std::exception& e) {
        // Without a hardware database nothing can be planned: say why and stop.
        std::cerr << "error: " << e.what() << '\n';
        QMessageBox::critical(nullptr, QStringLiteral("gpuplan"),
                              QStringLiteral("Cannot load the hardware database:\n") +
                                  gpuplan::gui::qs(e.what()));
        return 2;
    }
    gpuplan::gui::MainWindow window(*db, folders);
    const QStringList files = parser.positionalArguments();
    if (!files.isEmpty()) {
        window.openFile(files.first());
    }
    window.show();
    if (parser.isSet(sweep)) {
        window.openSweepTable(parser.value(sweep));
    }
    return QApplication::exec();
}
