#include "gui/scenario_panel.hpp"

#include "gui/analysis.hpp"
#include "gui/ui_util.hpp"
#include "hwdb/file_io.hpp"
#include "hwdb/hf_import.hpp"
#include "hwdb/model_resolver.hpp"
#include "hwdb/scenario_loader.hpp"
#include "model/error.hpp"
#include "model/model_spec.hpp"
#include "model/operating_point.hpp"
#include "model/precision.hpp"
#include "model/price_list.hpp"
#include "model/unit_parser.hpp"
#include "model/validity.hpp"

#include <QAbstractItemView>
#include <QCheckBox>
#include <QComboBox>
#include <QCompleter>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>

#include <filesystem>

namespace gpuplan::gui {

namespace {

/// Merge keys: consecutive edits of one field form one undo step.
enum Key {
    kModel = 1,
    kGpu,
    kNode,
    kCount,
    kTp,
    kPp,
    kDp,
    kEp,
    kWeights,
    kActivations,
    kKv,
    kMaxModelLen,
    kConcurrency,
    kInput,
    kOutput,
    kRate,
    kEngine,
    kMemUtil,
    kMaxSeqs,
    kBatched,
    kBlock,
    kPrefix,
    kChunked,
    kEager,
    kTtft,
    kTpot,
    kE2e,
    kPercentile,
    kGpuCap,
    kNodeCap,
    kRackBudget,
    kPue,
    kGpuHour,
    kGpuPurchase,
    kElectricity,
    kNodePurchase,
};

QString modelLabel(const model::ModelSpec& m) {
    const double b = m.published_params / 1e9;
    return QStringLiteral("%1  (%2 B)").arg(qs(m.name), QString::number(b, 'f', b < 10 ? 1 : 0));
}

QString gpuLabel(const model::AcceleratorSpec& g) {
    return QStringLiteral("%1  (%2, %3)").arg(qs(g.name), formatGiB(g.memory), qs(g.vendor));
}

QSpinBox* spin(const QString& name, int min, int max, const QString& special = {}) {
    auto* s = new QSpinBox();
    s->setObjectName(name);
    s->setRange(min, max);
    s->setKeyboardTracking(true);
    s->setAccelerated(true);
    if (!special.isEmpty()) {
        s->setSpecialValueText(special);
    }
    return s;
}

QComboBox* precisionBox(const QString& name) {
    auto* b = new QComboBox();
    b->setObjectName(name);
    b->setEditable(true);
    b->setInsertPolicy(QComboBox::NoInsert);
    for (const auto& p : model::precision_names()) {
        b->addItem(qs(p));
    }
    return b;
}

void setTristate(QCheckBox* box, const std::optional<bool>& v) {
    box->setCheckState(!v ? Qt::PartiallyChecked : (*v ? Qt::Checked : Qt::Unchecked));
}

std::optional<bool> tristate(const QCheckBox* box) {
    switch (box->checkState()) {
    case Qt::Checked: return true;
    case Qt::Unchecked: return false;
    default: return std::nullopt;
    }
}

QString quantityText(std::optional<double> si, const char* unit, double scale) {
    if (!si) {
        return {};
    }
    return QString::number(*si / scale, 'g', 6) + QStringLiteral(" ") + QString::fromLatin1(unit);
}

/// Parses an optional quantity field; returns the error ("" when valid).
template <class Q>
QString parseOptional(const QString& text, model::Dimension dim, std::optional<Q>& out) {
    const QString t = text.trimmed();
    if (t.isEmpty()) {
        out.reset();
        return {};
    }
    const auto parsed = model::parse_quantity(t.toStdString(), dim);
    if (!parsed.si) {
        return qs(parsed.error);
    }
    if (*parsed.si <= 0) {
        return QObject::tr("must be greater than zero");
    }
    out = Q(*parsed.si);
    return {};
}

QString parsePrice(const QString& text, model::PriceBasis basis, const char* example,
                   std::optional<model::Price>& out) {
    const QString t = text.trimmed();
    if (t.isEmpty()) {
        out.reset();
        return {};
    }
    const auto parsed = model::parse_price(t.toStdString());
    if (!parsed.price) {
        return qs(parsed.error);
    }
    if (parsed.price->per != basis) {
        return QObject::tr("wrong price unit; write e.g. '%1'").arg(QString::fromUtf8(example));
    }
    out = parsed.price;
    return {};
}

} // namespace

ScenarioPanel::ScenarioPanel(ScenarioDocument& doc, QWidget* parent) : QWidget(parent), doc_(doc) {
    auto* inner = new QWidget();
    auto* column = new QVBoxLayout(inner);
    column->setContentsMargins(4, 4, 4, 4);
    column->addWidget(buildModelGroup());
    column->addWidget(buildHardwareGroup());
    column->addWidget(buildPrecisionGroup());
    column->addWidget(buildWorkloadGroup());
    column->addWidget(buildEngineGroup());
    column->addWidget(buildSloGroup());
    column->addWidget(buildPowerGroup());
    column->addWidget(buildPricesGroup());
    column->addStretch(1);
    // Long entries (node names, GPU labels) must not widen the panel: the boxes show about 16
    // characters and their lists show the whole text.
    for (QComboBox* box : inner->findChildren<QComboBox*>()) {
        box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        box->setMinimumContentsLength(16);
        box->view()->setMinimumWidth(box->view()->sizeHintForColumn(0) + 24);
        box->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    }
    auto* scroll = new QScrollArea();
    scroll->setWidget(inner);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->addWidget(scroll);
    // Never narrower than the fields need: with no horizontal scroll bar, a narrower panel
    // would cut them off on the right.
    scroll->setMinimumWidth(inner->minimumSizeHint().width() +
                            scroll->verticalScrollBar()->sizeHint().width() +
                            2 * scroll->frameWidth());
    connect(&doc_, &ScenarioDocument::scenarioChanged, this, &ScenarioPanel::refresh);
    refresh();
}

QLabel* ScenarioPanel::errorLabel(QWidget* field) {
    auto it = errors_.find(field);
    if (it != errors_.end()) {
        return it->second;
    }
    auto* label = new QLabel();
    label->setObjectName(field->objectName() + QStringLiteral("_error"));
    label->setWordWrap(true);
    label->setStyleSheet(QStringLiteral("color: #d32f2f;"));
    label->setVisible(false);
    errors_[field] = label;
    return label;
}

void ScenarioPanel::showFieldError(QWidget* field, const QString& message) {
    setFieldError(field, errorLabel(field), message);
}

QString ScenarioPanel::errorFor(const QWidget* field) const {
    const auto it = errors_.find(field);
    return it == errors_.end() ? QString() : it->second->text();
}

QString ScenarioPanel::deploymentError() const {
    return deploymentError_->isVisible() ? deploymentError_->text() : QString();
}

void ScenarioPanel::apply(const QString& what, int key, QWidget* field,
                          const std::function<void(model::Scenario&)>& change) {
    if (refreshing_) {
        return;
    }
    model::Scenario next = doc_.scenario();
    // The notes are about the last field edited; an edit with a consequence sets its note (the
    // keystrokes of one field keep the note of the first).
    if (field != lastEdited_) {
        setLayoutNote({});
        setLoadNote({});
    }
    const QString layoutBefore = layoutNote_->text();
    const QString loadBefore = loadNote_->text();
    try {
        change(next);
    } catch (const std::exception& e) {
        // An unknown name or a value the core rejects: say so at the field, change nothing. The
        // field keeps what was typed (red) until it is corrected or the scenario changes (then
        // it shows the scenario's value again, and the message goes).
        rejected_.insert(field);
        showFieldError(field, qs(e.what()));
        return;
    }
    if (next == doc_.scenario() && field == lastEdited_ && rejected_.count(field) == 0) {
        // Enter in a spin box sends the value shown again: nothing changed, so the notes and
        // the message of the edit that typed it stay on screen.
        setLayoutNote(layoutBefore);
        setLoadNote(loadBefore);
        return;
    }
    rejected_.erase(field);
    // The core's own consistency check (tp dividing the heads, count = tp × pp × dp, ...):
    // the edit is kept, and the field that broke it and the hardware group say what is wrong.
    // model::validate_scenario: the validity rules the loader and every command apply.
    const auto problem_of = [](const model::Scenario& sc) {
        try {
            model::validate_scenario(sc);
        } catch (const InputError& e) {
            return qs(e.what());
        }
        return QString();
    };
    const QString before = problem_of(doc_.scenario());
    const QString problem = problem_of(next);
    if (lastEdited_ && lastEdited_ != field) {
        showFieldError(lastEdited_, {});
    }
    lastEdited_ = field;
    showFieldError(field, problem != before ? problem : QString());
    setFieldError(nullptr, deploymentError_, problem);
    applying_ = true;
    doc_.edit(next, what, key);
    applying_ = false;
}

QLineEdit* ScenarioPanel::optionalField(
    const QString& name, const QString& placeholder, int key,
    const std::function<QString(const QString&, model::Scenario&)>& parse) {
    auto* e = new QLineEdit();
    e->setObjectName(name);
    e->setPlaceholderText(placeholder);
    e->setClearButtonEnabled(true);
    connect(e, &QLineEdit::textEdited, this, [this, e, name, key, parse](const QString& text) {
        model::Scenario probe = doc_.scenario();
        const QString error = parse(text, probe);
        if (!error.isEmpty()) {
            showFieldError(e, error);
            return;
        }
        showFieldError(e, {});
        apply(tr("edit %1").arg(name), key, e, [&](model::Scenario& s) { (void)parse(text, s); });
    });
    return e;
}

QWidget* ScenarioPanel::buildModelGroup() {
    auto* g = new QGroupBox(tr("Model"));
    auto* form = new QFormLayout(g);
    model_ = new QComboBox();
    model_->setObjectName(QStringLiteral("model"));
    model_->setEditable(true);
    model_->setInsertPolicy(QComboBox::NoInsert);
    for (const auto& m : doc_.database().models()) {
        model_->addItem(modelLabel(m), qs(m.name));
    }
    model_->completer()->setFilterMode(Qt::MatchContains);
    model_->completer()->setCompletionMode(QCompleter::PopupCompletion);
    model_->completer()->setCaseSensitivity(Qt::CaseInsensitive);
    model_->lineEdit()->setPlaceholderText(tr("search the catalog, e.g. 70b"));
    const auto choose = [this](const QString& text) {
        apply(tr("choose model"), kModel, model_, [&](model::Scenario& s) {
            // A catalog entry's label, or a name or alias typed in.
            QString name = text;
            const int idx = model_->findText(text);
            if (idx >= 0) {
                name = model_->itemData(idx).toString();
            }
            // Hugging Face ids resolve as on the command line (hwdb::resolve_model); weights
            // that followed the previous model's checkpoint follow the new one.
            const std::string typed = name.trimmed().toStdString();
            const hwdb::ResolvedModel r = hwdb::resolve_model(doc_.database(), typed);
            const bool default_weights =
                s.deployment.prec.weights == model::checkpoint_weights(s.deployment.model);
            s.deployment.model = r.spec;
            s.model_ref = r.note.empty() ? r.spec.name : typed;
            if (default_weights) {
                s.deployment.prec.weights = model::checkpoint_weights(r.spec);
            }
        });
    };
    connect(model_, &QComboBox::activated, this,
            [this, choose](int index) { choose(model_->itemText(index)); });
    connect(model_->lineEdit(), &QLineEdit::returnPressed, this,
            [this, choose] { choose(model_->currentText()); });
    import_ = new QPushButton(tr("Import config.json…"));
    import_->setObjectName(QStringLiteral("import_config"));
    import_->setToolTip(tr("Plan for a model that is not in the catalog: read a Hugging Face "
                           "config.json (the model is saved inline in the scenario)"));
    connect(import_, &QPushButton::clicked, this, [this] {
        const QString path =
            QFileDialog::getOpenFileName(this, tr("Import Hugging Face config.json"), {},
                                         tr("config.json (*.json);;All files (*)"));
        if (!path.isEmpty()) {
            importConfig(path);
        }
    });
    auto* row = new QHBoxLayout();
    row->addWidget(model_, 1);
    row->addWidget(import_);
    form->addRow(tr("model"), row);
    form->addRow(errorLabel(model_));
    modelInfo_ = new QLabel();
    modelInfo_->setWordWrap(true);
    modelInfo_->setStyleSheet(QStringLiteral("color: #555;"));
    form->addRow(modelInfo_);
    return g;
}

bool ScenarioPanel::importConfig(const QString& path) {
    const QFileInfo info(path);
    // The config's _name_or_path names the model, as in `gpuplan model import`; the form has no
    // name field, so a config without one is named after its file ("…/Llama-3.1-8B/config.json":
    // its folder).
    QString stem = info.completeBaseName();
    if (stem.compare(QStringLiteral("config"), Qt::CaseInsensitive) == 0 &&
        !info.dir().dirName().isEmpty()) {
        stem = info.dir().dirName();
    }
    const std::string fallback = hwdb::normalize_name(stem.toLower().toStdString());
    try {
        model::ModelSpec m;
        try {
            // Reads hf_quant_config.json beside it too (ModelOpt checkpoints).
            m = hwdb::import_hf_checkpoint(path.toStdString(), "");
        } catch (const ConfigError& e) {
            if (e.key_path() != "_name_or_path") {
                throw;
            }
            m = hwdb::import_hf_checkpoint(path.toStdString(), fallback);
        }
        apply(tr("import %1").arg(info.fileName()), -1, model_, [&](model::Scenario& s) {
            const bool default_weights =
                s.deployment.prec.weights == model::checkpoint_weights(s.deployment.model);
            s.deployment.model = m;
            s.model_ref.clear();
            if (default_weights) {
                s.deployment.prec.weights = model::checkpoint_weights(m);
            }
        });
        return true;
    } catch (const InputError& e) {
        showFieldError(model_, qs(e.what()));
        return false;
    }
}

void ScenarioPanel::applyGpu(const QString& name) {
    apply(tr("choose GPU"), kGpu, gpu_, [&](model::Scenario& s) {
        // Keep the node only when it holds this GPU.
        std::string node = s.node_ref;
        if (!node.empty()) {
            const auto& server = doc_.database().server(node);
            if (!server.accelerator.empty() && server.accelerator != name.toStdString()) {
                // Said, not done silently.
                setLayoutNote(tr("node %1 dropped: it holds %2, not %3; choose a node for %3 "
                                 "below for its host power and links")
                                  .arg(qs(node), qs(server.accelerator), name));
                node.clear();
            }
        }
        change_hardware(s, doc_.database(), name.toStdString(), node);
    });
}

void ScenarioPanel::chooseTypedGpu() {
    const QString text = gpu_->lineEdit()->text().trimmed();
    if (gpu_->findText(text, Qt::MatchFixedString) >= 0) {
        return; // a list entry: QComboBox has emitted `activated` for it
    }
    // The catalog name, in any case ("H200-SXM"), or the name at the start of an entry's label.
    const QString name = text.section(QLatin1Char(' '), 0, 0);
    for (int i = 0; i < gpu_->count(); ++i) {
        if (gpu_->itemData(i).toString().compare(name, Qt::CaseInsensitive) == 0) {
            gpu_->setCurrentIndex(i);
            applyGpu(gpu_->itemData(i).toString());
            return;
        }
    }
    // Entries containing what was typed, as the completer lists them: one is taken, several
    // are named so the user can pick.
    QStringList matches;
    for (int i = 0; i < gpu_->count(); ++i) {
        if (!name.isEmpty() && gpu_->itemData(i).toString().contains(name, Qt::CaseInsensitive)) {
            matches << gpu_->itemData(i).toString();
        }
    }
    if (matches.size() == 1) {
        gpu_->setCurrentIndex(gpu_->findData(matches.front()));
        applyGpu(matches.front());
        return;
    }
    rejected_.insert(gpu_);
    showFieldError(gpu_, matches.isEmpty()
                             ? tr("no GPU named '%1' in the hardware database; choose one from the "
                                  "list (e.g. h100-sxm) or add it under hwdb/accelerators")
                                   .arg(text)
                             : tr("'%1' matches %2 GPUs (%3); type the full name")
                                   .arg(text)
                                   .arg(matches.size())
                                   .arg(matches.mid(0, 5).join(QStringLiteral(", "))));
}

QWidget* ScenarioPanel::buildHardwareGroup() {
    auto* g = new QGroupBox(tr("Hardware"));
    auto* form = new QFormLayout(g);
    gpu_ = new QComboBox();
    gpu_->setObjectName(QStringLiteral("gpu"));
    gpu_->setEditable(true);
    gpu_->setInsertPolicy(QComboBox::NoInsert);
    for (const auto& a : doc_.database().accelerators()) {
        gpu_->addItem(gpuLabel(a), qs(a.name));
    }
    gpu_->completer()->setFilterMode(Qt::MatchContains);
    gpu_->completer()->setCompletionMode(QCompleter::PopupCompletion);
    gpu_->completer()->setCaseSensitivity(Qt::CaseInsensitive);
    connect(gpu_, &QComboBox::activated, this,
            [this](int index) { applyGpu(gpu_->itemData(index).toString()); });
    // A name typed and Enter: applied, or refused with a message at the field. (An entry's full
    // label typed exactly is taken by QComboBox itself, as `activated`.)
    connect(gpu_->lineEdit(), &QLineEdit::returnPressed, this, &ScenarioPanel::chooseTypedGpu);
    form->addRow(tr("GPU"), gpu_);
    form->addRow(errorLabel(gpu_));
    gpuSpecs_ = new QLabel();
    gpuSpecs_->setObjectName(QStringLiteral("gpu_specs"));
    gpuSpecs_->setWordWrap(true);
    gpuSpecs_->setStyleSheet(QStringLiteral("color: #555;"));
    form->addRow(gpuSpecs_);
    node_ = new QComboBox();
    node_->setObjectName(QStringLiteral("node"));
    node_->addItem(tr("(none: 8 GPUs per node, no host power)"), QString());
    for (const auto& sv : doc_.database().servers()) {
        node_->addItem(qs(sv.name) +
                           (sv.accelerator.empty()
                                ? QString()
                                : QStringLiteral("  (") + qs(sv.accelerator) + QStringLiteral(")")),
                       qs(sv.name));
    }
    connect(node_, &QComboBox::activated, this, [this](int index) {
        const QString name = node_->itemData(index).toString();
        apply(tr("choose node"), kNode, node_, [&](model::Scenario& s) {
            change_hardware(s, doc_.database(),
                            s.accelerator_ref.empty() ? s.deployment.gpu.name : s.accelerator_ref,
                            name.toStdString());
        });
    });
    form->addRow(tr("node"), node_);
    form->addRow(errorLabel(node_));

    count_ = spin(QStringLiteral("gpus"), 1, 1 << 20);
    connect(count_, &QSpinBox::valueChanged, this, [this](int n) {
        apply(tr("GPU count"), kCount, count_, [&](model::Scenario& s) {
            auto& par = s.deployment.par;
            const int before = par.dp;
            par.dp = model::replicas_of(n, par, std::to_string(n) + " GPUs",
                                        "use a multiple or change tp/pp");
            setLayoutNote(before == par.dp ? QString()
                                           : tr("replicas %1 → %2 (%3 GPUs ÷ tp %4 × pp %5)")
                                                 .arg(before)
                                                 .arg(par.dp)
                                                 .arg(n)
                                                 .arg(par.tp)
                                                 .arg(par.pp));
        });
    });
    form->addRow(tr("GPUs"), count_);
    form->addRow(errorLabel(count_));
    tp_ = spin(QStringLiteral("tp"), 1, 4096);
    pp_ = spin(QStringLiteral("pp"), 1, 4096);
    dp_ = spin(QStringLiteral("dp"), 1, 1 << 20);
    ep_ = spin(QStringLiteral("ep"), 1, 65536);
    // TP and PP keep the GPU count when tp × pp divides it (the replicas follow); otherwise the
    // replicas stay and the count follows. Either way the consequence is said under the layout,
    // never made silently. Replicas always change the count (count = tp × pp × replicas).
    const auto layout = [this](QSpinBox* box, int key, const QString& what,
                               int model::Parallelism::*field) {
        connect(box, &QSpinBox::valueChanged, this, [this, box, key, what, field](int v) {
            apply(what, key, box, [&](model::Scenario& s) {
                auto& par = s.deployment.par;
                const int gpus = s.deployment.gpus();
                const int dp = par.dp;
                par.*field = v;
                const int replica = model::replica_gpus(par);
                if (field != &model::Parallelism::dp && gpus % replica == 0) {
                    par.dp = gpus / replica;
                }
                QString note;
                if (s.deployment.gpus() != gpus) {
                    note = tr("GPUs %1 → %2 (tp %3 × pp %4 × %5 replicas)")
                               .arg(gpus)
                               .arg(s.deployment.gpus())
                               .arg(par.tp)
                               .arg(par.pp)
                               .arg(par.dp);
                    if (field != &model::Parallelism::dp) {
                        note += tr("; tp × pp = %1 does not divide %2 GPUs").arg(replica).arg(gpus);
                    }
                } else if (par.dp != dp) {
                    note = tr("replicas %1 → %2, keeping %3 GPUs (tp %4 × pp %5 × %2)")
                               .arg(dp)
                               .arg(par.dp)
                               .arg(gpus)
                               .arg(par.tp)
                               .arg(par.pp);
                }
                setLayoutNote(note);
            });
        });
    };
    layout(tp_, kTp, tr("tensor parallel"), &model::Parallelism::tp);
    layout(pp_, kPp, tr("pipeline parallel"), &model::Parallelism::pp);
    layout(dp_, kDp, tr("replicas"), &model::Parallelism::dp);
    layout(ep_, kEp, tr("expert parallel"), &model::Parallelism::ep);
    // Two a row, so the panel stays narrow enough for 1280 × 800.
    auto* par = new QGridLayout();
    int cell = 0;
    for (auto [label, box] :
         {std::pair{tr("TP"), tp_}, {tr("PP"), pp_}, {tr("replicas"), dp_}, {tr("EP"), ep_}}) {
        par->addWidget(new QLabel(label), cell / 2, (cell % 2) * 2);
        par->addWidget(box, cell / 2, (cell % 2) * 2 + 1);
        ++cell;
    }
    par->setColumnStretch(1, 1);
    par->setColumnStretch(3, 1);
    form->addRow(tr("layout"), par);
    for (QSpinBox* box : {tp_, pp_, dp_, ep_}) {
        form->addRow(errorLabel(box));
    }
    layoutNote_ = new QLabel();
    layoutNote_->setObjectName(QStringLiteral("layout_note"));
    layoutNote_->setWordWrap(true);
    layoutNote_->setStyleSheet(QStringLiteral("color: #7a4f01;"));
    layoutNote_->setVisible(false);
    form->addRow(layoutNote_);
    deploymentError_ = new QLabel();
    deploymentError_->setObjectName(QStringLiteral("deployment_error"));
    deploymentError_->setWordWrap(true);
    deploymentError_->setStyleSheet(QStringLiteral("color: #d32f2f; font-weight: bold;"));
    deploymentError_->setVisible(false);
    form->addRow(deploymentError_);
    return g;
}

QWidget* ScenarioPanel::buildPrecisionGroup() {
    auto* g = new QGroupBox(tr("Precision"));
    auto* form = new QFormLayout(g);
    weights_ = precisionBox(QStringLiteral("weights"));
    activations_ = precisionBox(QStringLiteral("activations"));
    kv_ = precisionBox(QStringLiteral("kv_cache"));
    const auto hook = [this, form](QComboBox* box, const QString& label, int key,
                                   model::Precision model::Precisions::*field) {
        const auto set = [this, box, label, key, field](const QString& text) {
            apply(tr("%1 precision").arg(label), key, box, [&](model::Scenario& s) {
                s.deployment.prec.*field = model::parse_precision(text.trimmed().toStdString());
            });
        };
        connect(box, &QComboBox::activated, this, [box, set](int i) { set(box->itemText(i)); });
        connect(box->lineEdit(), &QLineEdit::editingFinished, this,
                [box, set] { set(box->currentText()); });
        form->addRow(label, box);
        form->addRow(errorLabel(box));
    };
    hook(weights_, tr("weights"), kWeights, &model::Precisions::weights);
    hook(activations_, tr("activations"), kActivations, &model::Precisions::activations);
    hook(kv_, tr("KV cache"), kKv, &model::Precisions::kv_cache);
    return g;
}

QWidget* ScenarioPanel::buildWorkloadGroup() {
    auto* g = new QGroupBox(tr("Context and load"));
    auto* form = new QFormLayout(g);
    maxModelLen_ = spin(QStringLiteral("max_model_len"), 0, 1 << 28, tr("model's maximum"));
    maxModelLen_->setSingleStep(1024);
    connect(maxModelLen_, &QSpinBox::valueChanged, this, [this](int v) {
        apply(tr("max_model_len"), kMaxModelLen, maxModelLen_, [&](model::Scenario& s) {
            s.deployment.engine.max_model_len = v > 0 ? std::optional<int>(v) : std::nullopt;
        });
    });
    form->addRow(tr("max_model_len"), maxModelLen_);
    form->addRow(errorLabel(maxModelLen_));
    const auto intField = [this, form](QSpinBox* box, const QString& label, int key,
                                       int model::Workload::*field) {
        connect(box, &QSpinBox::valueChanged, this, [this, box, label, key, field](int v) {
            apply(label, key, box, [&](model::Scenario& s) { s.workload.*field = v; });
        });
        form->addRow(label, box);
        form->addRow(errorLabel(box));
    };
    // 0 shows the default load: the most sequences the engine runs at once (operating_point.hpp).
    concurrency_ = spin(QStringLiteral("concurrency"), 0, 1 << 24, tr("default (engine's most)"));
    input_ = spin(QStringLiteral("input_tokens"), 1, 1 << 28);
    output_ = spin(QStringLiteral("output_tokens"), 1, 1 << 28);
    connect(concurrency_, &QSpinBox::valueChanged, this, [this](int v) {
        apply(tr("concurrency"), kConcurrency, concurrency_, [&](model::Scenario& s) {
            const model::Workload before = s.workload;
            if (v > 0) {
                model::set_closed_loop(s.workload, v);
            } else {
                s.workload.concurrency.reset();
            }
            if (const QString note = loadConsequence(before, s.workload); !note.isEmpty()) {
                setLoadNote(note);
            }
        });
    });
    form->addRow(tr("concurrency"), concurrency_);
    form->addRow(errorLabel(concurrency_));
    intField(input_, tr("input tokens"), kInput, &model::Workload::input_tokens);
    intField(output_, tr("output tokens"), kOutput, &model::Workload::output_tokens);
    auto* rate = optionalField(
        QStringLiteral("requests_per_s"), tr("none: a closed loop"), kRate,
        [this](const QString& text, model::Scenario& s) -> QString {
            const QString t = text.trimmed();
            if (t.isEmpty()) {
                s.workload.requests_per_s.reset();
                return {};
            }
            bool ok = false;
            const double v = t.toDouble(&ok);
            if (!ok || v <= 0) {
                return QObject::tr(
                           "'%1' is not a positive rate; write requests per second, e.g. 4.5")
                    .arg(t);
            }
            const model::Workload before = s.workload;
            model::set_offered_rate(s.workload, v);
            if (const QString note = loadConsequence(before, s.workload); !note.isEmpty()) {
                setLoadNote(note);
            }
            return {};
        });

    textOf_[rate] = [](const model::Scenario& s) {
        return s.workload.requests_per_s ? QString::number(*s.workload.requests_per_s, 'g', 8)
                                         : QString();
    };
    form->addRow(tr("requests/s"), rate);
    form->addRow(errorLabel(rate));
    loadNote_ = new QLabel();
    loadNote_->setObjectName(QStringLiteral("load_note"));
    loadNote_->setWordWrap(true);
    loadNote_->setStyleSheet(QStringLiteral("color: #7a4f01;"));
    loadNote_->setVisible(false);
    form->addRow(loadNote_);
    classes_ = new QLabel();
    classes_->setWordWrap(true);
    classes_->setStyleSheet(QStringLiteral("color: #555;"));
    form->addRow(classes_);
    return g;
}

QWidget* ScenarioPanel::buildEngineGroup() {
    auto* g = new QGroupBox(tr("Engine"));
    auto* form = new QFormLayout(g);
    engine_ = new QComboBox();
    engine_->setObjectName(QStringLiteral("engine"));
    for (const auto k : {model::EngineKind::Vllm, model::EngineKind::TensorRtLlm,
                         model::EngineKind::Sglang, model::EngineKind::LlamaCpp}) {
        engine_->addItem(qs(model::to_string(k)), static_cast<int>(k));
    }
    connect(engine_, &QComboBox::activated, this, [this](int i) {
        apply(tr("engine"), kEngine, engine_, [&](model::Scenario& s) {
            s.deployment.engine.kind = static_cast<model::EngineKind>(engine_->itemData(i).toInt());
        });
    });
    form->addRow(tr("engine"), engine_);
    memUtil_ = new QDoubleSpinBox();
    memUtil_->setObjectName(QStringLiteral("gpu_memory_utilization"));
    memUtil_->setRange(0.0, 1.0);
    memUtil_->setSingleStep(0.01);
    memUtil_->setDecimals(3);
    memUtil_->setSpecialValueText(tr("engine default"));
    connect(memUtil_, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        apply(tr("gpu_memory_utilization"), kMemUtil, memUtil_, [&](model::Scenario& s) {
            s.deployment.engine.gpu_memory_utilization =
                v > 0 ? std::optional<double>(v) : std::nullopt;
        });
    });
    form->addRow(tr("memory utilization"), memUtil_);
    form->addRow(errorLabel(memUtil_));
    const auto optInt = [this, form](QSpinBox* box, const QString& label, int key,
                                     std::optional<int> model::EngineConfig::*field) {
        connect(box, &QSpinBox::valueChanged, this, [this, box, label, key, field](int v) {
            apply(label, key, box, [&](model::Scenario& s) {
                s.deployment.engine.*field = v > 0 ? std::optional<int>(v) : std::nullopt;
            });
        });
        form->addRow(label, box);
        form->addRow(errorLabel(box));
    };
    maxSeqs_ = spin(QStringLiteral("max_num_seqs"), 0, 1 << 20, tr("engine default"));
    batchedTokens_ =
        spin(QStringLiteral("max_num_batched_tokens"), 0, 1 << 28, tr("engine default"));
    blockSize_ = spin(QStringLiteral("block_size"), 0, 1 << 16, tr("engine default"));
    optInt(maxSeqs_, tr("max_num_seqs"), kMaxSeqs, &model::EngineConfig::max_num_seqs);
    optInt(batchedTokens_, tr("max_num_batched_tokens"), kBatched,
           &model::EngineConfig::max_num_batched_tokens);
    optInt(blockSize_, tr("block_size"), kBlock, &model::EngineConfig::block_size);
    const auto tri = [this, form](QCheckBox* box, const QString& label, int key,
                                  std::optional<bool> model::EngineConfig::*field) {
        box->setTristate(true);
        box->setToolTip(tr("partially checked: the engine's default"));
        connect(box, &QCheckBox::stateChanged, this, [this, box, label, key, field](int) {
            apply(label, key, box,
                  [&](model::Scenario& s) { s.deployment.engine.*field = tristate(box); });
        });
        form->addRow(box);
    };
    prefixCaching_ = new QCheckBox(tr("prefix caching"));
    prefixCaching_->setObjectName(QStringLiteral("enable_prefix_caching"));
    chunkedPrefill_ = new QCheckBox(tr("chunked prefill"));
    chunkedPrefill_->setObjectName(QStringLiteral("enable_chunked_prefill"));
    tri(prefixCaching_, tr("prefix caching"), kPrefix, &model::EngineConfig::enable_prefix_caching);
    tri(chunkedPrefill_, tr("chunked prefill"), kChunked,
        &model::EngineConfig::enable_chunked_prefill);
    eager_ = new QCheckBox(tr("enforce eager (no CUDA graphs)"));
    eager_->setObjectName(QStringLiteral("enforce_eager"));
    connect(eager_, &QCheckBox::toggled, this, [this](bool on) {
        apply(tr("enforce eager"), kEager, eager_,
              [&](model::Scenario& s) { s.deployment.engine.cuda_graphs = !on; });
    });
    form->addRow(eager_);
    return g;
}

QWidget* ScenarioPanel::buildSloGroup() {
    auto* g = new QGroupBox(tr("Latency objectives"));
    auto* form = new QFormLayout(g);
    const auto slo = [this, form](const QString& name, const QString& label, int key,
                                  std::optional<Seconds> model::Slo::*field) {
        auto* e = optionalField(
            name, tr("none, e.g. 500 ms"), key, [field](const QString& text, model::Scenario& s) {
                return parseOptional<Seconds>(text, model::Dimension::Seconds, s.slo.*field);
            });
        textOf_[e] = [field](const model::Scenario& s) {
            const auto& v = s.slo.*field;
            if (!v) {
                return QString();
            }
            return v->si() < 1.0 ? quantityText(v->si(), "ms", 1e-3)
                                 : quantityText(v->si(), "s", 1.0);
        };
        form->addRow(label, e);
        form->addRow(errorLabel(e));
    };
    slo(QStringLiteral("slo_ttft"), tr("TTFT"), kTtft, &model::Slo::ttft);
    slo(QStringLiteral("slo_tpot"), tr("TPOT"), kTpot, &model::Slo::tpot);
    slo(QStringLiteral("slo_e2e"), tr("E2E"), kE2e, &model::Slo::e2e);
    percentile_ = new QDoubleSpinBox();
    percentile_->setObjectName(QStringLiteral("slo_percentile"));
    percentile_->setRange(1, 100);
    percentile_->setDecimals(1);
    connect(percentile_, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        apply(tr("SLO percentile"), kPercentile, percentile_,
              [&](model::Scenario& s) { s.slo.percentile = v; });
    });
    form->addRow(tr("percentile"), percentile_);
    return g;
}

QWidget* ScenarioPanel::buildPowerGroup() {
    auto* g = new QGroupBox(tr("Power budget"));
    auto* form = new QFormLayout(g);
    const auto watt = [this, form](const QString& name, const QString& label, int key,
                                   std::optional<Watts> model::PowerBudget::*field) {
        auto* e = optionalField(name, tr("none, e.g. 500 W or 8 kW"), key,
                                [field](const QString& text, model::Scenario& s) {
                                    return parseOptional<Watts>(text, model::Dimension::Watts,
                                                                s.power.*field);
                                });
        textOf_[e] = [field](const model::Scenario& s) {
            const auto& v = s.power.*field;
            if (!v) {
                return QString();
            }
            return v->si() >= 1e3 ? quantityText(v->si(), "kW", 1e3)
                                  : quantityText(v->si(), "W", 1.0);
        };
        form->addRow(label, e);
        form->addRow(errorLabel(e));
    };
    watt(QStringLiteral("gpu_cap"), tr("per-GPU cap"), kGpuCap, &model::PowerBudget::gpu_cap);
    watt(QStringLiteral("node_cap"), tr("per-node cap"), kNodeCap, &model::PowerBudget::node_cap);
    watt(QStringLiteral("rack_budget"), tr("rack budget"), kRackBudget,
         &model::PowerBudget::rack_budget);
    auto* pue = optionalField(QStringLiteral("pue"), tr("1 (IT power only)"), kPue,
                              [](const QString& text, model::Scenario& s) -> QString {
                                  const QString t = text.trimmed();
                                  if (t.isEmpty()) {
                                      s.power.pue.reset();
                                      return {};
                                  }
                                  bool ok = false;
                                  const double v = t.toDouble(&ok);
                                  if (!ok || v < 1.0 || v > 5.0) {
                                      return QObject::tr("PUE is a number from 1 to 5, e.g. 1.3");
                                  }
                                  s.power.pue = v;
                                  return {};
                              });
    textOf_[pue] = [](const model::Scenario& s) {
        return s.power.pue ? QString::number(*s.power.pue, 'g', 6) : QString();
    };
    form->addRow(tr("PUE"), pue);
    form->addRow(errorLabel(pue));
    return g;
}

QWidget* ScenarioPanel::buildPricesGroup() {
    auto* g = new QGroupBox(tr("Prices"));
    auto* form = new QFormLayout(g);
    const auto price = [this, form](const QString& name, const QString& label,
                                    const QString& placeholder, int key,
                                    std::optional<model::Price> model::Prices::*field,
                                    model::PriceBasis basis, const char* example) {
        // Hardware prices are for the hardware on the form (model/price_list.hpp): a price typed
        // here is for it, and one written for other hardware is not shown (the hwdb's applies).
        const bool hardware = field != &model::Prices::electricity;
        const bool node = field == &model::Prices::node_purchase;
        auto* e = optionalField(
            name, placeholder, key,
            [field, basis, example, hardware](const QString& text, model::Scenario& s) {
                if (hardware) {
                    model::bind_prices_to_hardware(s);
                }
                return parsePrice(text, basis, example, s.prices.*field);
            });
        textOf_[e] = [field, hardware, node](const model::Scenario& s) {
            const auto& v = s.prices.*field;
            const bool applies =
                !hardware || (node ? model::scenario_prices_node(s)
                                   : model::scenario_prices_gpu(s, s.deployment.gpu));
            return v && applies ? qs(model::to_string(*v)) : QString();
        };
        form->addRow(label, e);
        form->addRow(errorLabel(e));
    };
    price(QStringLiteral("gpu_hour"), tr("rent per GPU-hour"), tr("hwdb estimate, e.g. $2.10/h"),
          kGpuHour, &model::Prices::gpu_hour, model::PriceBasis::Hour, "$2.10/h");
    price(QStringLiteral("gpu_purchase"), tr("GPU purchase"), tr("hwdb estimate, e.g. $25000"),
          kGpuPurchase, &model::Prices::gpu_purchase, model::PriceBasis::Once, "$25000");
    price(QStringLiteral("node_purchase"), tr("node purchase"), tr("e.g. $270000"), kNodePurchase,
          &model::Prices::node_purchase, model::PriceBasis::Once, "$270000");
    price(QStringLiteral("electricity"), tr("electricity"), tr("e.g. 0.6 CNY/kWh"), kElectricity,
          &model::Prices::electricity, model::PriceBasis::KilowattHour, "0.6 CNY/kWh");
    return g;
}

void ScenarioPanel::updateSpecs() {
    const auto& s = doc_.scenario();
    const auto& m = s.deployment.model;
    modelInfo_->setText(
        tr("%1 layers, hidden %2, %3 heads (%4 KV), max context %5%6%7")
            .arg(m.layers)
            .arg(m.hidden_size)
            .arg(m.heads)
            .arg(m.kv_heads)
            .arg(m.max_context)
            .arg(
                m.moe
                    ? tr(", MoE %1 experts (top-%2)").arg(m.moe->experts).arg(m.moe->active_experts)
                    : QString())
            .arg(s.model_ref.empty() ? tr("; inline model '%1' (imported)").arg(qs(m.name))
                                     : QString()));
    const auto& g = s.deployment.gpu;
    QStringList peaks;
    for (const auto t :
         {model::ComputeType::Bf16, model::ComputeType::Fp8, model::ComputeType::Fp4}) {
        if (const auto p = g.dense.for_type(t)) {
            peaks << QStringLiteral("%1 %2 TFLOPS")
                         .arg(qs(std::string(model::to_string(t))))
                         .arg(p->si() / 1e12, 0, 'f', 0);
        }
    }
    gpuSpecs_->setText(
        tr("%1 %2, %3 TB/s, %4; %5; link %6")
            .arg(formatGiB(g.memory), qs(g.memory_type))
            .arg(g.memory_bandwidth.si() / 1e12, 0, 'f', 2)
            .arg(peaks.join(QStringLiteral(", ")))
            .arg(g.board_power ? formatWatts(*g.board_power) : tr("no board power listed"))
            .arg(qs(s.deployment.intra_node_link.name)));
    QString classes;
    if (s.workload.classes.empty()) {
        classes = tr("one request class (the lengths above); classes, arrivals and traces are "
                     "edited in the YAML");
    } else {
        QStringList names;
        for (const auto& c : s.workload.classes) {
            names << QStringLiteral("%1 (share %2)").arg(qs(c.name)).arg(c.share);
        }
        classes = tr("simulator classes: %1").arg(names.join(QStringLiteral(", ")));
    }
    classes_->setText(classes);
}

void ScenarioPanel::setLayoutNote(const QString& text) {
    layoutNote_->setText(text);
    layoutNote_->setVisible(!text.isEmpty());
}

void ScenarioPanel::setLoadNote(const QString& text) {
    loadNote_->setText(text);
    loadNote_->setVisible(!text.isEmpty());
}

QString ScenarioPanel::loadNote() const {
    return loadNote_->isVisible() ? loadNote_->text() : QString();
}

QString ScenarioPanel::loadConsequence(const model::Workload& before,
                                       const model::Workload& after) {
    QStringList said;
    if (before.requests_per_s && !after.requests_per_s) {
        said << tr("the offered rate of %1 req/s is cleared: the load is a closed loop")
                    .arg(*before.requests_per_s);
    }
    if (before.concurrency && !after.concurrency) {
        said << tr("the concurrency of %1 is cleared: the load is the offered rate")
                    .arg(*before.concurrency);
    }
    if (before.arrival.kind != after.arrival.kind) {
        const auto name = [](model::ArrivalKind k) {
            switch (k) {
            case model::ArrivalKind::Poisson: return tr("Poisson");
            case model::ArrivalKind::Gamma: return tr("gamma");
            case model::ArrivalKind::Constant: return tr("constant");
            case model::ArrivalKind::ClosedLoop: return tr("a closed loop");
            case model::ArrivalKind::Trace: return tr("a trace replay");
            }
            return QString();
        };
        said << tr("arrivals are now %1 (were %2)")
                    .arg(name(after.arrival.kind), name(before.arrival.kind));
    }
    return said.join(QStringLiteral("; "));
}

QString ScenarioPanel::layoutNote() const {
    return layoutNote_->isVisible() ? layoutNote_->text() : QString();
}

void ScenarioPanel::refresh() {
    refreshing_ = true;
    if (!applying_) {
        // Undo, redo, open: the notes were about an edit no longer on screen.
        setLayoutNote({});
        setLoadNote({});
    }
    const auto& s = doc_.scenario();
    const auto& d = s.deployment;
    std::vector<QSignalBlocker> blockers;
    for (QObject* o : std::initializer_list<QObject*>{model_,
                                                      gpu_,
                                                      node_,
                                                      count_,
                                                      tp_,
                                                      pp_,
                                                      dp_,
                                                      ep_,
                                                      weights_,
                                                      activations_,
                                                      kv_,
                                                      maxModelLen_,
                                                      concurrency_,
                                                      input_,
                                                      output_,
                                                      engine_,
                                                      memUtil_,
                                                      maxSeqs_,
                                                      batchedTokens_,
                                                      blockSize_,
                                                      prefixCaching_,
                                                      chunkedPrefill_,
                                                      eager_,
                                                      percentile_}) {
        blockers.emplace_back(o);
    }
    const int mi = model_->findData(qs(d.model.name));
    if (mi >= 0 && !s.model_ref.empty()) {
        model_->setCurrentIndex(mi);
    } else {
        model_->setEditText(qs(d.model.name));
    }
    const int gi = gpu_->findData(qs(d.gpu.name));
    if (gi >= 0) {
        gpu_->setCurrentIndex(gi);
    }
    const int ni = node_->findData(qs(s.node_ref));
    node_->setCurrentIndex(std::max(0, ni));
    showValue(count_, d.gpus());
    showValue(tp_, d.par.tp);
    showValue(pp_, d.par.pp);
    showValue(dp_, d.par.dp);
    showValue(ep_, d.par.ep);
    weights_->setEditText(qs(d.prec.weights.name));
    activations_->setEditText(qs(d.prec.activations.name));
    kv_->setEditText(qs(d.prec.kv_cache.name));
    showValue(maxModelLen_, d.engine.max_model_len.value_or(0));
    showValue(concurrency_, s.workload.concurrency.value_or(0));
    showValue(input_, s.workload.input_tokens);
    showValue(output_, s.workload.output_tokens);
    engine_->setCurrentIndex(std::max(0, engine_->findData(static_cast<int>(d.engine.kind))));
    showValue(memUtil_, d.engine.gpu_memory_utilization.value_or(0.0));
    showValue(maxSeqs_, d.engine.max_num_seqs.value_or(0));
    showValue(batchedTokens_, d.engine.max_num_batched_tokens.value_or(0));
    showValue(blockSize_, d.engine.block_size.value_or(0));
    setTristate(prefixCaching_, d.engine.enable_prefix_caching);
    setTristate(chunkedPrefill_, d.engine.enable_chunked_prefill);
    eager_->setChecked(!d.engine.cuda_graphs);
    showValue(percentile_, s.slo.percentile);
    // A field that refused what was typed now shows the scenario's value again.
    for (QWidget* field : rejected_) {
        showFieldError(field, {});
    }
    rejected_.clear();
    for (auto& [edit, text] : textOf_) {
        // A field being typed in keeps its text (valid text has been applied already).
        if (edit->hasFocus()) {
            continue;
        }
        const QSignalBlocker b(edit);
        edit->setText(text(s));
        showFieldError(edit, {});
    }
    QString problem;
    try {
        model::validate_scenario(s);
    } catch (const InputError& e) {
        problem = qs(e.what());
    }
    setFieldError(nullptr, deploymentError_, problem);
    if (problem.isEmpty() && lastEdited_) {
        showFieldError(lastEdited_, {});
    }
    updateSpecs();
    refreshing_ = false;
}

} // namespace gpuplan::gui
