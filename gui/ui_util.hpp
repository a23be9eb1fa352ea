#pragma once
/// Small helpers shared by the views: text from core values (formatting only, no arithmetic
/// beyond unit scaling), CSV export of any item model, and inline field errors.

#include "model/money.hpp"
#include "model/units.hpp"

#include <QString>
#include <QStringList>

#include <optional>
#include <string>
#include <vector>

class QAbstractItemModel;
class QLabel;
class QWidget;

namespace gpuplan::gui {

/// UTF-8 std::string to QString.
[[nodiscard]] inline QString qs(const std::string& s) {
    return QString::fromStdString(s);
}
/// A C string (UTF-8) to QString.
[[nodiscard]] inline QString qs(const char* s) {
    return QString::fromUtf8(s);
}

/// "12.3 ms" (below 1 s) or "1.23 s".
[[nodiscard]] QString formatTime(Seconds s);
/// "12.55 GiB".
[[nodiscard]] QString formatGiB(Bytes b);
/// "42.0 %" from a fraction.
[[nodiscard]] QString formatPercent(double fraction);
/// A number with `decimals` decimals and thousands grouping ("12,345.6").
[[nodiscard]] QString formatNumber(double v, int decimals = 0);
/// "12.50 kW" or "350 W".
[[nodiscard]] QString formatWatts(Watts w);
/// "$12,345.67" / "12,345.67 CNY", or "–" when empty.
[[nodiscard]] QString formatMoney(const std::optional<model::Money>& m);

/// Axis tick labels for `values` (ascending): SI suffixes k, M, G, T ("500k", "1.5M", "2.5G"),
/// three significant digits, more only where three would make two labels equal. The one tick
/// formatter of every chart.
[[nodiscard]] QStringList formatTicks(const std::vector<double>& values);
/// One tick label with `digits` significant digits ("500k").
[[nodiscard]] QString formatTick(double v, int digits = 3);

/// The item-data role the CSV export reads. On a horizontal header: the column's name with its
/// unit ("TTFT (s)"), or a QStringList when the column holds several numbers ("TTFT p50 (s)",
/// "TTFT p99 (s)"). On a cell: its number in that unit (a double or an integer; a QVariantList
/// in step with the header's list), text for a text column, or an empty string for none. A
/// model or column without it is exported as displayed.
inline constexpr int kCsvRole = Qt::UserRole + 100;
/// For models whose CSV lines are not their rows (a figure list: one line per number). On
/// horizontal header 0: the CSV header (a QStringList). On column 0 of a row: the lines that
/// row becomes (a QVariantList of QVariantLists of cells, numbers as doubles). When the
/// header gives it, writeCsv writes these lines instead of the columns.
inline constexpr int kCsvLinesRole = Qt::UserRole + 101;

/// Writes `model` as CSV to `path`: a header row, then every row, each column as kCsvRole gives
/// it (numbers at full precision with the unit in the header) or else as displayed. Returns
/// false when the file cannot be written.
bool writeCsv(const QAbstractItemModel& model, const QString& path);

/// Writes `bytes` to `path` with hwdb's one writer (a temporary file renamed into place, so a
/// failure leaves no half file). Returns false when the file cannot be written.
bool writeFileBytes(const QString& path, const QByteArray& bytes);

/// Shows `v` in a spin box unless it shows it already. A box being typed in keeps its text:
/// redrawn on every keystroke's edit, "0.9" became "0.900" and the "5" of "0.95" no longer
/// fitted, and a first "0" became the special value text. Every view's refresh uses it.
template <class Box, class T> void showValue(Box* box, T v) {
    if (box->value() != v) {
        box->setValue(v);
    }
}

/// Marks `field` as invalid (red frame, tooltip) and shows `message` in `label` (empty message:
/// valid again, label hidden).
void setFieldError(QWidget* field, QLabel* label, const QString& message);

} // namespace gpuplan::gui
