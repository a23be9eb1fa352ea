#include "gui/ui_util.hpp"

#include "hwdb/file_io.hpp"
#include "model/error.hpp"

#include <QAbstractItemModel>
#include <QLabel>
#include <QLocale>
#include <QTextStream>
#include <QVariant>
#include <QWidget>

#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <string_view>
#include <vector>

namespace gpuplan::gui {

QString formatTime(Seconds s) {
    const double v = s.si();
    if (std::fabs(v) >= 1.0) {
        return QString::number(v, 'f', 2) + QStringLiteral(" s");
    }
    return QString::number(v * 1e3, 'f', 1) + QStringLiteral(" ms");
}

QString formatGiB(Bytes b) {
    return QString::number(b.si() / kGiB, 'f', 2) + QStringLiteral(" GiB");
}

QString formatPercent(double fraction) {
    return QString::number(fraction * 100.0, 'f', 1) + QStringLiteral(" %");
}

QString formatNumber(double v, int decimals) {
    QLocale c(QLocale::English);
    return c.toString(v, 'f', decimals);
}

QString formatWatts(Watts w) {
    if (std::fabs(w.si()) >= 1e3) {
        return QString::number(w.si() / 1e3, 'f', 2) + QStringLiteral(" kW");
    }
    return QString::number(w.si(), 'f', 0) + QStringLiteral(" W");
}

QString formatMoney(const std::optional<model::Money>& m) {
    if (!m) {
        return QStringLiteral("\u2013");
    }
    const QString amount = formatNumber(m->amount, 2);
    if (m->currency == "USD") {
        return QStringLiteral("$") + amount;
    }
    return amount + QStringLiteral(" ") + qs(m->currency);
}

QString formatTick(double v, int digits) {
    if (v == 0.0 || !std::isfinite(v)) {
        return QStringLiteral("0");
    }
    // Rounded to `digits` first, so 999,999 is "1M", not "1e+03k".
    const double r = std::stod(fmt::format("{:.{}g}", v, digits));
    struct Prefix {
        double scale;
        const char* suffix;
    };
    static constexpr Prefix prefixes[] = {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
    for (const Prefix& p : prefixes) {
        if (std::fabs(r) >= p.scale) {
            return qs(fmt::format("{:.{}g}{}", r / p.scale, digits, p.suffix));
        }
    }
    return qs(fmt::format("{:.{}g}", r, digits)); // "0.25", "0.001"
}

QStringList formatTicks(const std::vector<double>& values) {
    QStringList labels;
    for (int digits = 3; digits <= 12; ++digits) {
        labels.clear();
        for (const double v : values) {
            labels << formatTick(v, digits);
        }
        if (QStringList(labels).removeDuplicates() == 0) {
            break;
        }
    }
    return labels;
}

namespace {

QString csvCell(QString s) {
    if (s.contains(QLatin1Char(',')) || s.contains(QLatin1Char('"')) ||
        s.contains(QLatin1Char('\n'))) {
        s.replace(QStringLiteral("\""), QStringLiteral("\"\""));
        return QStringLiteral("\"") + s + QStringLiteral("\"");
    }
    return s;
}

} // namespace

namespace {

/// A kCsvRole value as a CSV cell: doubles at full (shortest round-trip) precision.
QString csvValue(const QVariant& v) {
    switch (v.typeId()) {
    case QMetaType::Double:
    case QMetaType::Float: return qs(fmt::format("{}", v.toDouble()));
    case QMetaType::Bool: return v.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    default: return csvCell(v.toString());
    }
}

} // namespace

bool writeCsv(const QAbstractItemModel& model, const QString& path) {
    QString text;
    QTextStream out(&text);
    if (const QVariant lines = model.headerData(0, Qt::Horizontal, kCsvLinesRole);
        lines.typeId() == QMetaType::QStringList) {
        QStringList header;
        for (const QString& h : lines.toStringList()) {
            header << csvCell(h);
        }
        out << header.join(QLatin1Char(',')) << '\n';
        for (int r = 0; r < model.rowCount(); ++r) {
            for (const QVariant& line : model.data(model.index(r, 0), kCsvLinesRole).toList()) {
                QStringList cells;
                for (const QVariant& cell : line.toList()) {
                    cells << csvValue(cell);
                }
                out << cells.join(QLatin1Char(',')) << '\n';
            }
        }
        out.flush();
        return writeFileBytes(path, text.toUtf8());
    }
    QStringList header;
    std::vector<int> widths; // CSV columns per model column
    for (int c = 0; c < model.columnCount(); ++c) {
        const QVariant h = model.headerData(c, Qt::Horizontal, kCsvRole);
        if (h.typeId() == QMetaType::QStringList) {
            for (const QString& name : h.toStringList()) {
                header << csvCell(name);
            }
            widths.push_back(static_cast<int>(h.toStringList().size()));
        } else {
            header << csvCell(
                h.isValid() ? h.toString()
                            : model.headerData(c, Qt::Horizontal, Qt::DisplayRole).toString());
            widths.push_back(1);
        }
    }
    out << header.join(QLatin1Char(',')) << '\n';
    for (int r = 0; r < model.rowCount(); ++r) {
        QStringList row;
        for (int c = 0; c < model.columnCount(); ++c) {
            const QModelIndex i = model.index(r, c);
            const QVariant v = model.data(i, kCsvRole);
            QStringList cells;
            if (!v.isValid()) {
                cells << csvCell(model.data(i, Qt::DisplayRole).toString());
            } else if (v.typeId() == QMetaType::QVariantList) {
                for (const QVariant& x : v.toList()) {
                    cells << csvValue(x);
                }
            } else {
                cells << csvValue(v);
            }
            while (cells.size() < widths[static_cast<std::size_t>(c)]) {
                cells << QString();
            }
            row << cells.mid(0, widths[static_cast<std::size_t>(c)]);
        }
        out << row.join(QLatin1Char(',')) << '\n';
    }
    out.flush();
    return writeFileBytes(path, text.toUtf8());
}

bool writeFileBytes(const QString& path, const QByteArray& bytes) {
    try {
        hwdb::write_text_file(
            std::filesystem::path(path.toStdString()),
            std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())));
        return true;
    } catch (const InputError&) {
        return false;
    }
}

void setFieldError(QWidget* field, QLabel* label, const QString& message) {
    const bool bad = !message.isEmpty();
    if (field) {
        field->setProperty("invalid", bad);
        field->setStyleSheet(bad ? QStringLiteral("border: 2px solid #d32f2f;") : QString());
        field->setToolTip(message);
    }
    if (label) {
        label->setText(message);
        label->setVisible(bad);
    }
}

} // namespace gpuplan::gui
