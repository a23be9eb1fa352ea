#include "gui/workload_editor.hpp"

#include "gui/ui_util.hpp"
#include "hwdb/trace_loader.hpp"
#include "model/enum_names.hpp"
#include "model/error.hpp"

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include <array>
#include <charconv>
#include <string>
#include <utility>

namespace gpuplan::gui {

namespace {

/// The shortest text that reads back to the same double.
QString num(double v) {
    std::array<char, 32> buf{};
    const auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v);
    return QString::fromLatin1(buf.data(), static_cast<qsizetype>(r.ptr - buf.data()));
}

double toNumber(const QString& text, const QString& where) {
    const std::string s = text.trimmed().toStdString();
    double v = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size()) {
        throw InputError(where.toStdString() + ": '" + s + "' is not a number; give one like 0.5");
    }
    return v;
}

int toInt(const QString& text, const QString& where) {
    const double v = toNumber(text, where);
    if (v != static_cast<double>(static_cast<int>(v))) {
        throw InputError(where.toStdString() + ": '" + text.trimmed().toStdString() +
                         "' is not a whole number; give one like 1024");
    }
    return static_cast<int>(v);
}

std::optional<double> optNumber(const QString& text, const QString& where) {
    if (text.trimmed().isEmpty()) {
        return std::nullopt;
    }
    return toNumber(text, where);
}

// The drop-downs and parsers spell each enum through its model::enum_names table (one list of
// spellings for the file, the CLI and the app).
template <class E> E kindOf(const QString& text, const QString& where) {
    if (const auto v = model::value_of<E>(text.trimmed().toStdString())) {
        return *v;
    }
    throw InputError(where.toStdString() + ": '" + text.trimmed().toStdString() +
                     "' is not one of " + model::names_list<E>());
}

template <class E> QComboBox* choiceBox(const QString& name) {
    auto* b = new QComboBox();
    b->setObjectName(name);
    for (const auto& n : model::enum_names(E{})) {
        b->addItem(QString::fromLatin1(n.name));
    }
    return b;
}

QLineEdit* field(const QString& name, const QString& placeholder) {
    auto* e = new QLineEdit();
    e->setObjectName(name);
    e->setPlaceholderText(placeholder);
    return e;
}

enum Column {
    kName,
    kShare,
    kInput,
    kOutput,
    kPrefix,
    kGroups,
    kPriority,
    kTtft,
    kTpot,
    kE2e,
    kRoute,
    kAgent,
    kColumns
};

QString optText(const std::optional<Seconds>& s) {
    return s ? num(s->si()) : QString();
}

} // namespace

QString formatLength(const model::LengthDistribution& d) {
    const model::LengthDistribution def;
    QStringList parts{QString::fromLatin1(model::name_of(d.kind))};
    if (d.kind == model::LengthKind::Fixed) {
        parts << num(d.mean);
    } else if (d.mean != def.mean) {
        parts << QStringLiteral("mean=") + num(d.mean);
    }
    if (d.stddev != def.stddev) {
        parts << QStringLiteral("stddev=") + num(d.stddev);
    }
    if (d.min != def.min) {
        parts << QStringLiteral("min=%1").arg(d.min);
    }
    if (d.max != def.max) {
        parts << QStringLiteral("max=%1").arg(d.max);
    }
    const auto list = [](const auto& v) {
        QStringList s;
        for (const auto x : v) {
            s << num(static_cast<double>(x));
        }
        return s.join(QLatin1Char(','));
    };
    if (!d.values.empty()) {
        parts << QStringLiteral("values=") + list(d.values);
    }
    if (!d.weights.empty()) {
        parts << QStringLiteral("weights=") + list(d.weights);
    }
    return parts.join(QLatin1Char(' '));
}

model::LengthDistribution parseLength(const QString& text) {
    const QStringList parts = text.simplified().split(QLatin1Char(' '), Qt::SkipEmptyParts);
    if (parts.isEmpty()) {
        throw InputError("length distribution: empty; give one like 'fixed 1024' or "
                         "'lognormal mean=800 stddev=400'");
    }
    const QString where = QStringLiteral("length distribution '%1'").arg(text.simplified());
    model::LengthDistribution d;
    d.kind = kindOf<model::LengthKind>(parts.front(), where);
    for (qsizetype i = 1; i < parts.size(); ++i) {
        const QString& p = parts[i];
        const qsizetype eq = p.indexOf(QLatin1Char('='));
        if (eq < 0) {
            if (i == 1 && d.kind == model::LengthKind::Fixed) {
                d.mean = toNumber(p, where);
                continue;
            }
            throw InputError(where.toStdString() + ": '" + p.toStdString() +
                             "' is not key=value; give mean=, stddev=, min=, max=, values= or "
                             "weights=");
        }
        const QString key = p.left(eq);
        const QString value = p.mid(eq + 1);
        if (key == QStringLiteral("mean")) {
            d.mean = toNumber(value, where);
        } else if (key == QStringLiteral("stddev")) {
            d.stddev = toNumber(value, where);
        } else if (key == QStringLiteral("min")) {
            d.min = toInt(value, where);
        } else if (key == QStringLiteral("max")) {
            d.max = toInt(value, where);
        } else if (key == QStringLiteral("values")) {
            for (const QString& v : value.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
                d.values.push_back(toInt(v, where));
            }
        } else if (key == QStringLiteral("weights")) {
            for (const QString& v : value.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
                d.weights.push_back(toNumber(v, where));
            }
        } else {
            throw InputError(where.toStdString() + ": unknown key '" + key.toStdString() +
                             "'; give mean=, stddev=, min=, max=, values= or weights=");
        }
    }
    return d;
}

WorkloadEditor::WorkloadEditor(ScenarioDocument& doc, QWidget* parent)
    : QWidget(parent), doc_(doc) {
    process_ = choiceBox<model::ArrivalKind>(QStringLiteral("arrival_process"));
    rate_ = field(QStringLiteral("arrival_rate"), tr("workload.requests_per_s, else 1"));
    cv_ = field(QStringLiteral("arrival_cv"), tr("1"));
    users_ = new QSpinBox();
    users_->setObjectName(QStringLiteral("arrival_users"));
    users_->setRange(1, 1 << 24);
    think_ = field(QStringLiteral("arrival_think_time"), tr("0"));
    speedup_ = field(QStringLiteral("trace_speedup"), tr("1"));
    curve_ = choiceBox<model::RateCurveKind>(QStringLiteral("rate_curve"));
    steps_ = field(QStringLiteral("rate_steps"), tr("at s:requests/s, … e.g. 60:20, 120:5"));
    period_ = field(QStringLiteral("rate_period"), tr("86400"));
    amplitude_ = field(QStringLiteral("rate_amplitude"), tr("0.5"));
    peak_ = field(QStringLiteral("rate_peak_at"), tr("0"));

    auto* arrival = new QGroupBox(tr("Arrivals"));
    auto* form = new QFormLayout(arrival);
    form->addRow(tr("process"), process_);
    form->addRow(tr("requests/s"), rate_);
    form->addRow(tr("gamma CV"), cv_);
    form->addRow(tr("closed-loop users"), users_);
    form->addRow(tr("think time (s)"), think_);
    form->addRow(tr("trace speed-up"), speedup_);
    traceInfo_ = new QLabel();
    traceInfo_->setObjectName(QStringLiteral("trace_info"));
    traceInfo_->setWordWrap(true);
    auto* loadTraceButton = new QPushButton(tr("Load trace…"));
    loadTraceButton->setObjectName(QStringLiteral("load_trace"));
    auto* traceRow = new QHBoxLayout();
    traceRow->addWidget(traceInfo_, 1);
    traceRow->addWidget(loadTraceButton);
    form->addRow(tr("trace"), traceRow);
    connect(loadTraceButton, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Load a request trace"), QString(), tr("CSV traces (*.csv);;All files (*)"));
        if (!path.isEmpty()) {
            (void)loadTrace(path);
        }
    });
    auto* curve = new QGroupBox(tr("Rate curve"));
    auto* curveForm = new QFormLayout(curve);
    curveForm->addRow(tr("kind"), curve_);
    curveForm->addRow(tr("steps"), steps_);
    curveForm->addRow(tr("period (s)"), period_);
    curveForm->addRow(tr("amplitude"), amplitude_);
    curveForm->addRow(tr("peak at (s)"), peak_);

    classes_ = new QTableWidget(0, kColumns);
    classes_->setObjectName(QStringLiteral("request_classes"));
    classes_->setHorizontalHeaderLabels(
        {tr("name"), tr("share"), tr("input tokens"), tr("output tokens"), tr("shared prefix"),
         tr("prefix groups"), tr("priority"), tr("TTFT SLO (s)"), tr("TPOT SLO (s)"),
         tr("E2E SLO (s)"), tr("route"), tr("agent (steps= think= | step input)")});
    classes_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    classes_->horizontalHeader()->setStretchLastSection(true);
    auto* add = new QPushButton(tr("Add class"));
    add->setObjectName(QStringLiteral("add_class"));
    auto* remove = new QPushButton(tr("Remove class"));
    remove->setObjectName(QStringLiteral("remove_class"));
    apply_ = new QPushButton(tr("Apply"));
    apply_->setObjectName(QStringLiteral("apply_workload"));
    auto* revert = new QPushButton(tr("Revert"));
    revert->setObjectName(QStringLiteral("revert_workload"));
    error_ = new QLabel();
    error_->setObjectName(QStringLiteral("workload_error"));
    error_->setWordWrap(true);
    error_->setStyleSheet(QStringLiteral("color: #b00020;"));
    error_->setVisible(false);
    auto* note =
        new QLabel(tr("Shares are relative; lengths read 'fixed 1024', 'uniform min=100 max=2000', "
                      "'lognormal mean=800 stddev=400 max=4096' or 'empirical values=128,512 "
                      "weights=0.7,0.3'; an empty SLO uses the scenario's."));
    note->setWordWrap(true);

    auto* top = new QHBoxLayout();
    top->addWidget(arrival, 1);
    top->addWidget(curve, 1);
    auto* buttons = new QHBoxLayout();
    buttons->addWidget(add);
    buttons->addWidget(remove);
    buttons->addStretch(1);
    buttons->addWidget(revert);
    buttons->addWidget(apply_);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(classes_, 1);
    layout->addWidget(note);
    layout->addLayout(buttons);
    layout->addWidget(error_);

    connect(add, &QPushButton::clicked, this, [this] {
        model::RequestClass c;
        c.name = "class" + std::to_string(classes_->rowCount() + 1);
        addClassRow(c);
    });
    connect(remove, &QPushButton::clicked, this, [this] {
        const int row = classes_->currentRow();
        classes_->removeRow(row >= 0 ? row : classes_->rowCount() - 1);
    });
    connect(apply_, &QPushButton::clicked, this, [this] { (void)apply(); });
    connect(revert, &QPushButton::clicked, this, &WorkloadEditor::refresh);
    // An edit elsewhere (the panel's input tokens, a GPU) keeps what is typed here; a change of
    // the arrivals or classes (open, undo, apply) shows the document's.
    connect(&doc_, &ScenarioDocument::scenarioChanged, this, [this] {
        const model::Workload& w = doc_.scenario().workload;
        if (!(w.arrival == shown_.arrival && w.classes == shown_.classes &&
              w.trace == shown_.trace)) {
            refresh();
        }
    });
    refresh();
}

void WorkloadEditor::refresh() {
    setWorkload(doc_.scenario().workload);
    error_->setVisible(false);
}

void WorkloadEditor::addClassRow(const model::RequestClass& c) {
    const int row = classes_->rowCount();
    classes_->insertRow(row);
    QString agent;
    if (c.agent) {
        agent = QStringLiteral("steps=%1 think=%2 | %3")
                    .arg(c.agent->steps)
                    .arg(num(c.agent->think_time.si()), formatLength(c.agent->step_input));
    }
    const QStringList cells{qs(c.name),
                            num(c.share),
                            formatLength(c.input),
                            formatLength(c.output),
                            QString::number(c.shared_prefix),
                            QString::number(c.prefix_groups),
                            QString::number(c.priority),
                            optText(c.ttft),
                            optText(c.tpot),
                            optText(c.e2e),
                            QString::fromLatin1(model::name_of(c.route)),
                            agent};
    for (int col = 0; col < kColumns; ++col) {
        classes_->setItem(row, col, new QTableWidgetItem(cells[col]));
    }
}

void WorkloadEditor::setWorkload(const model::Workload& w) {
    shown_ = w;
    trace_.reset();
    traceInfo_->setText(w.trace.empty() ? tr("none") : tr("%1 records").arg(w.trace.size()));
    const model::ArrivalProcess& a = w.arrival;
    process_->setCurrentText(QString::fromLatin1(model::name_of(a.kind)));
    rate_->setText(a.requests_per_s ? num(*a.requests_per_s) : QString());
    cv_->setText(num(a.cv));
    users_->setValue(a.users);
    think_->setText(num(a.think_time.si()));
    speedup_->setText(num(a.trace_speedup));
    curve_->setCurrentText(QString::fromLatin1(model::name_of(a.curve.kind)));
    QStringList steps;
    for (const auto& p : a.curve.steps) {
        steps << num(p.at.si()) + QLatin1Char(':') + num(p.requests_per_s);
    }
    steps_->setText(steps.join(QStringLiteral(", ")));
    period_->setText(num(a.curve.period.si()));
    amplitude_->setText(num(a.curve.amplitude));
    peak_->setText(num(a.curve.peak_at.si()));
    classes_->setRowCount(0);
    for (const auto& c : w.classes) {
        addClassRow(c);
    }
}

model::Workload WorkloadEditor::workload(const model::Workload& base) const {
    model::Workload w = base;
    if (trace_) {
        w.trace = *trace_;
    }
    model::ArrivalProcess& a = w.arrival;
    a.kind = kindOf<model::ArrivalKind>(process_->currentText(), tr("arrival process"));
    a.requests_per_s = optNumber(rate_->text(), tr("arrival requests/s"));
    a.cv = toNumber(cv_->text(), tr("gamma CV"));
    a.users = users_->value();
    a.think_time = Seconds(toNumber(think_->text(), tr("think time")));
    a.trace_speedup = toNumber(speedup_->text(), tr("trace speed-up"));
    a.curve.kind = kindOf<model::RateCurveKind>(curve_->currentText(), tr("rate curve"));
    a.curve.steps.clear();
    for (const QString& p : steps_->text().split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const QStringList at_rate = p.split(QLatin1Char(':'));
        if (at_rate.size() != 2) {
            throw InputError("rate curve steps: '" + p.trimmed().toStdString() +
                             "' is not at:rate; give steps like 60:20, 120:5");
        }
        a.curve.steps.push_back({Seconds(toNumber(at_rate[0], tr("rate curve step time"))),
                                 toNumber(at_rate[1], tr("rate curve step rate"))});
    }
    a.curve.period = Seconds(toNumber(period_->text(), tr("rate curve period")));
    a.curve.amplitude = toNumber(amplitude_->text(), tr("rate curve amplitude"));
    a.curve.peak_at = Seconds(toNumber(peak_->text(), tr("rate curve peak")));

    w.classes.clear();
    for (int row = 0; row < classes_->rowCount(); ++row) {
        const auto cell = [&](int col) {
            const QTableWidgetItem* item = classes_->item(row, col);
            return item ? item->text() : QString();
        };
        const auto where = [&](int col) {
            return QStringLiteral("class row %1, %2")
                .arg(row + 1)
                .arg(classes_->horizontalHeaderItem(col)->text());
        };
        const auto length = [&](int col) {
            try {
                return parseLength(cell(col));
            } catch (const InputError& e) {
                throw InputError(where(col).toStdString() + ": " + e.what());
            }
        };
        const auto slo = [&](int col) -> std::optional<Seconds> {
            if (const auto v = optNumber(cell(col), where(col))) {
                return Seconds(*v);
            }
            return std::nullopt;
        };
        model::RequestClass c;
        c.name = cell(kName).trimmed().toStdString();
        c.share = toNumber(cell(kShare), where(kShare));
        c.input = length(kInput);
        c.output = length(kOutput);
        c.shared_prefix = toInt(cell(kPrefix), where(kPrefix));
        c.prefix_groups = toInt(cell(kGroups), where(kGroups));
        c.priority = toInt(cell(kPriority), where(kPriority));
        c.ttft = slo(kTtft);
        c.tpot = slo(kTpot);
        c.e2e = slo(kE2e);
        c.route = kindOf<model::RouteTarget>(cell(kRoute), where(kRoute));
        const QString agent = cell(kAgent).trimmed();
        if (!agent.isEmpty()) {
            const qsizetype bar = agent.indexOf(QLatin1Char('|'));
            if (bar < 0) {
                throw InputError(where(kAgent).toStdString() + ": '" + agent.toStdString() +
                                 "' has no '|'; give 'steps=4 think=0 | fixed 200'");
            }
            model::AgentSession s;
            for (const QString& p : agent.left(bar).split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
                if (p.startsWith(QStringLiteral("steps="))) {
                    s.steps = toInt(p.mid(6), where(kAgent));
                } else if (p.startsWith(QStringLiteral("think="))) {
                    s.think_time = Seconds(toNumber(p.mid(6), where(kAgent)));
                } else {
                    throw InputError(where(kAgent).toStdString() + ": unknown '" + p.toStdString() +
                                     "'; give steps= and think=");
                }
            }
            try {
                s.step_input = parseLength(agent.mid(bar + 1));
            } catch (const InputError& e) {
                throw InputError(where(kAgent).toStdString() + ": " + e.what());
            }
            c.agent = s;
        }
        w.classes.push_back(std::move(c));
    }
    return w;
}

bool WorkloadEditor::apply() {
    model::Scenario next = doc_.scenario();
    try {
        next.workload = workload(next.workload);
    } catch (const InputError& e) {
        error_->setText(qs(e.what()));
        error_->setVisible(true);
        return false;
    }
    error_->setVisible(false);
    if (!(next == doc_.scenario())) {
        doc_.edit(next, tr("workload"));
    }
    return true;
}

bool WorkloadEditor::loadTrace(const QString& path) {
    try {
        trace_ = hwdb::load_trace(path.toStdString());
    } catch (const InputError& e) {
        error_->setText(qs(e.what()));
        error_->setVisible(true);
        return false;
    }
    error_->setVisible(false);
    process_->setCurrentText(QString::fromLatin1(model::name_of(model::ArrivalKind::Trace)));
    traceInfo_->setText(tr("%1 records from %2 (Apply to use them)")
                            .arg(trace_->size())
                            .arg(QFileInfo(path).fileName()));
    return true;
}

QString WorkloadEditor::errorText() const {
    return error_->isHidden() ? QString() : error_->text();
}

} // namespace gpuplan::gui
