#pragma once
/// What every desktop-app test needs: one QApplication on Qt's offscreen platform (unless a
/// platform is set) with test-mode settings, and the repository's hardware database.

#include "hwdb/database.hpp"

#include <QApplication>
#include <QStandardPaths>

#include <string>

namespace gpuplan::test {

inline QApplication& gui_app() {
    static int argc = 1;
    static char name[] = "gpuplan_gui_tests";
    static char* argv[] = {name, nullptr};
    if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    QStandardPaths::setTestModeEnabled(true); // recent files go to a test settings file
    // Never destroyed: Qt's own statics may be gone by the time a static QApplication would be.
    static QApplication* a = new QApplication(argc, argv);
    return *a;
}

inline const hwdb::Database& repo_db() {
    static const hwdb::Database d =
        hwdb::Database::load({std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    return d;
}

} // namespace gpuplan::test
