#pragma once
/// The purchase-review report: one self-contained HTML file of a scenario — its YAML, the
/// estimate and the binding resources, the what-ifs, the sizing curves, power, racks and cost,
/// the charts as PNG images embedded in base64 (rendered at twice their size), and where every
/// number comes from (gpuplan version and commit, the hwdb entries' sources and price dates, the
/// efficiency profile). No figure is computed here: the analysis is gui::analyze (the chain the
/// CLI's estimate, rack and cost commands run), the curves plan::load_curve (`gpuplan curve`).
/// html_report() only formats, so a test can check it without a window.

#include "gui/analysis.hpp"
#include "plan/load_curve.hpp"

#include <QByteArray>
#include <QString>

#include <optional>
#include <string>
#include <vector>

namespace gpuplan::gui {

/// A chart or drawing of the report, as PNG bytes.
struct ReportImage {
    QString title;
    QByteArray png;
};

/// One line of where the numbers come from.
struct ReportSource {
    QString what; ///< "accelerator h100-sxm", "profile", "price"
    QString text; ///< its sources, dates or description
};

/// Everything the report shows, already computed.
struct ReportInputs {
    std::string scenario_yaml; ///< the scenario as the CLI reads it (hwdb::scenario_to_yaml)
    Analysis analysis;         ///< with what-ifs, power, racks and cost
    std::optional<plan::LoadCurve> curve;
    std::string curve_error;
    std::vector<ReportImage> images;
    QString version;   ///< gpuplan's version
    QString commit;    ///< the source commit it was built from ("" when unknown)
    QString generated; ///< when the report was written (ISO 8601, UTC)
    std::vector<ReportSource> sources;
};

/// gpuplan's version and the commit the app was built from (configure time; "" unknown).
[[nodiscard]] QString app_version();
[[nodiscard]] QString app_commit();

/// Computes what the report of `s` shows: gui::analyze with every part, plan::load_curve of its
/// candidates, the hwdb sources of its accelerator, node and links, the profile's provenance,
/// and, with `charts`, the charts rendered off screen (needs a QApplication, no window).
/// Throws InputError when the scenario cannot be estimated.
[[nodiscard]] ReportInputs gather_report(const model::Scenario& s, const Core& core,
                                         bool charts = true);

/// The report as one HTML document with no external reference (images are data: URIs, the
/// style is inline). Pure formatting: needs no QApplication.
[[nodiscard]] QString html_report(const ReportInputs& in);

/// Writes `html` to `path` with the one atomic writer. Returns false when it cannot.
bool write_report(const QString& path, const QString& html);

/// gather_report, html_report and write_report for the File menu's one click. Returns false
/// with the reason in `error` when the scenario cannot be estimated or the file written.
bool write_scenario_report(const model::Scenario& s, const Core& core, const QString& path,
                           QString* error = nullptr);

} // namespace gpuplan::gui
