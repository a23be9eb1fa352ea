#include "gui/sweep_view.hpp"

#include "gui/chart_adapter.hpp"
#include "gui/ui_util.hpp"

#include <QComboBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

#include <exception>
#include <set>

namespace gpuplan::gui {

namespace {

/// "ttft_s.p99 (s)": the column's name with the unit its name states.
QString titled(const std::string& column) {
    const std::string unit = sweep_unit(column);
    return unit.empty() ? qs(column) : qs(column) + QStringLiteral(" (") + qs(unit) + u')';
}

/// "1 row", "24 rows".
QString rows(int n) {
    return n == 1 ? QObject::tr("1 row") : QObject::tr("%1 rows").arg(n);
}

} // namespace

SweepView::SweepView(QWidget* parent) : QWidget(parent) {
    setWindowTitle(tr("Sweep table"));
    banner_ = makeBanner();
    banner_->setObjectName(QStringLiteral("sweep_error"));
    fileLabel_ = new QLabel(tr("Open a sweep table (File ▸ Open sweep table…)."));
    fileLabel_->setObjectName(QStringLiteral("sweep_file"));
    fileLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    axis_ = new QComboBox();
    axis_->setObjectName(QStringLiteral("sweep_axis"));
    figure_ = new QComboBox();
    figure_->setObjectName(QStringLiteral("sweep_figure"));
    series_ = new QComboBox();
    series_->setObjectName(QStringLiteral("sweep_series"));
    chart_ = new ChartPanel(QStringLiteral("sweep"));
    chart_->showMessage(tr("No sweep table open."));
    chart_->setMinimumSize(640, 400);
    status_ = new QLabel();
    status_->setObjectName(QStringLiteral("sweep_status"));

    auto* choices = new QHBoxLayout();
    auto* left = new QFormLayout();
    left->addRow(tr("Figure (y):"), figure_);
    left->addRow(tr("Against (x):"), axis_);
    left->addRow(tr("One line per:"), series_);
    choices->addLayout(left);
    choices->addStretch(1);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(banner_);
    layout->addWidget(fileLabel_);
    layout->addLayout(choices);
    layout->addWidget(chart_, 1);
    layout->addWidget(status_);

    for (QComboBox* box : {axis_, figure_, series_}) {
        connect(box, &QComboBox::currentIndexChanged, this, [this] { redraw(); });
    }
}

bool SweepView::openFile(const QString& path, QString* error) {
    try {
        table_ = read_sweep_table(path.toStdString());
    } catch (const std::exception& e) {
        table_.reset();
        fillChoices();
        const QString message = qs(e.what());
        banner_->setText(tr("Cannot open the sweep table: %1").arg(message));
        banner_->show();
        fileLabel_->setText(path);
        chart_->showMessage(tr("No sweep table open."));
        status_->clear();
        if (error) {
            *error = message;
        }
        return false;
    }
    banner_->clear();
    banner_->hide();
    fileLabel_->setText(path);
    setWindowTitle(tr("Sweep table — %1").arg(QFileInfo(path).fileName()));
    fillChoices();
    redraw();
    return true;
}

void SweepView::fillChoices() {
    for (QComboBox* box : {axis_, figure_, series_}) {
        box->blockSignals(true);
        box->clear();
    }
    series_->addItem(tr("(none)"), -1);
    if (table_) {
        for (std::size_t c = 0; c < table_->columns.size(); ++c) {
            const SweepColumn& col = table_->columns[c];
            const int i = static_cast<int>(c);
            if (col.name == "cli" || col.name == "error") {
                continue;
            }
            if (col.numeric && col.name != "index" && col.name != "seed") {
                // Every numeric column can be either: axes first in the x box, figures first
                // in the y box.
                (col.kind == SweepColumn::Kind::Figure ? figure_ : axis_)->addItem(qs(col.name), i);
            }
            if (col.kind == SweepColumn::Kind::Axis) {
                series_->addItem(qs(col.name), i);
            }
        }
        // Figures as x and axes as y after the natural choices.
        for (std::size_t c = 0; c < table_->columns.size(); ++c) {
            const SweepColumn& col = table_->columns[c];
            if (!col.numeric) {
                continue;
            }
            const int i = static_cast<int>(c);
            if (col.kind == SweepColumn::Kind::Figure) {
                axis_->addItem(qs(col.name), i);
            } else if (col.kind == SweepColumn::Kind::Axis) {
                figure_->addItem(qs(col.name), i);
            }
        }
        for (std::size_t c = 0; c < table_->columns.size(); ++c) {
            const SweepColumn& col = table_->columns[c];
            if (col.kind == SweepColumn::Kind::Figure) {
                series_->addItem(qs(col.name), static_cast<int>(c));
            }
        }
        // By default one line per the first other axis that varies.
        const int x = axis_->count() > 0 ? axis_->itemData(0).toInt() : -1;
        for (int k = 1; k < series_->count(); ++k) {
            const int c = series_->itemData(k).toInt();
            if (c == x ||
                table_->columns[static_cast<std::size_t>(c)].kind != SweepColumn::Kind::Axis) {
                continue;
            }
            std::set<std::string> values;
            for (const auto& row : table_->cells) {
                values.insert(row[static_cast<std::size_t>(c)]);
            }
            if (values.size() > 1) {
                series_->setCurrentIndex(k);
                break;
            }
        }
    }
    for (QComboBox* box : {axis_, figure_, series_}) {
        box->blockSignals(false);
    }
}

void SweepView::redraw() {
    if (!table_) {
        return;
    }
    if (axis_->currentIndex() < 0 || figure_->currentIndex() < 0) {
        chart_->showMessage(tr("The table has no numeric column to plot."));
        status_->setText(rows(static_cast<int>(table_->cells.size())) + tr(", nothing to plot"));
        return;
    }
    const int x = axis_->currentData().toInt();
    const int y = figure_->currentData().toInt();
    const int s = series_->currentData().toInt();
    const SweepPlot plot = sweep_plot(*table_, x, y, s >= 0 ? std::optional<int>(s) : std::nullopt);
    std::vector<ChartAdapter::NamedPoints> lines;
    for (const SweepSeries& ser : plot.series) {
        const QString name = s >= 0 ? qs(table_->columns[static_cast<std::size_t>(s)].name) +
                                          QStringLiteral(" = ") + qs(ser.name)
                                    : qs(ser.name);
        lines.push_back({name, ser.points});
    }
    const std::string& xn = table_->columns[static_cast<std::size_t>(x)].name;
    const std::string& yn = table_->columns[static_cast<std::size_t>(y)].name;
    ChartAdapter::lines(*chart_, qs(yn) + tr(" against ") + qs(xn), titled(xn), titled(yn), lines);
    QString text = rows(plot.plotted) + tr(" plotted in %1 line(s)").arg(plot.series.size());
    if (plot.skipped_error > 0) {
        text += tr(", %1 skipped with an error").arg(plot.skipped_error);
    }
    if (plot.skipped_empty > 0) {
        text += tr(", %1 skipped with an empty value").arg(plot.skipped_empty);
    }
    status_->setText(text);
}

QString SweepView::statusText() const {
    return status_->text();
}

QString SweepView::errorText() const {
    return banner_->isHidden() ? QString() : banner_->text();
}

QList<ChartPanel*> SweepView::charts() const {
    return {chart_};
}

QList<QPair<QString, const QAbstractItemModel*>> SweepView::tables() const {
    return {};
}

} // namespace gpuplan::gui
