#include "gui/scenario_form.hpp"

#include "gui/ui_util.hpp"
#include "hwdb/scenario_edit.hpp"
#include "model/autoscaler.hpp"
#include "model/cost_config.hpp"
#include "model/deployment.hpp"
#include "model/disaggregation_config.hpp"
#include "model/enum_names.hpp"
#include "model/error.hpp"
#include "model/lora_config.hpp"
#include "model/plan_config.hpp"
#include "model/precision.hpp"
#include "model/rack.hpp"
#include "model/replica_failures.hpp"
#include "model/speculative_config.hpp"
#include "model/training_config.hpp"
#include "model/workload.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QVBoxLayout>

#include <algorithm>
#include <string>

namespace gpuplan::gui {

namespace {

/// The spellings of an enum for a drop-down: model::enum_names(E) without its aliases.
template <class E> QStringList spellings() {
    QStringList out;
    std::vector<E> seen;
    for (const auto& n : model::enum_names(E{})) {
        if (std::find(seen.begin(), seen.end(), n.value) == seen.end()) {
            seen.push_back(n.value);
            out << QString::fromLatin1(n.name);
        }
    }
    return out;
}

QStringList bools() {
    return {QStringLiteral("true"), QStringLiteral("false")};
}

/// One key: its dotted YAML path, its label, and for a drop-down its spellings.
struct KeySpec {
    const char* path;
    const char* label;
    QStringList (*choices)() = nullptr;
};

/// A group of keys; `block` is an optional mapping switched on with `start`.
struct GroupSpec {
    const char* title;
    std::vector<KeySpec> keys;
    const char* block = "";
    const char* start = "";
};

// To add a scenario key: one line in its group (path, label, and spellings<E> for an enum).
// Keys edited elsewhere: the model, hardware, precision, load and SLO fields of the left panel,
// and the arrival process and request classes of the Workload tab.
const std::vector<GroupSpec>& groups() {
    static const std::vector<GroupSpec> g{
        {"Engine",
         {{"engine.kind", "kind", spellings<model::EngineKind>},
          {"engine.max_model_len", "max_model_len"},
          {"engine.allow_long_context", "allow_long_context", bools},
          {"engine.gpu_memory_utilization", "gpu_memory_utilization"},
          {"engine.max_num_seqs", "max_num_seqs"},
          {"engine.max_num_batched_tokens", "max_num_batched_tokens"},
          {"engine.block_size", "block_size"},
          {"engine.enable_prefix_caching", "enable_prefix_caching", bools},
          {"engine.enable_chunked_prefill", "enable_chunked_prefill", bools},
          {"engine.enforce_eager", "enforce_eager", bools},
          {"engine.all_reduce", "all_reduce", spellings<model::AllReduceAlgorithm>}}},
        {"Scheduler",
         {{"engine.batching", "batching", spellings<model::BatchingMode>},
          {"engine.static_batch_size", "static_batch_size"},
          {"engine.static_max_wait", "static_max_wait"},
          {"engine.scheduling_policy", "scheduling_policy", spellings<model::SchedulingPolicy>},
          {"engine.preemption_mode", "preemption_mode", spellings<model::PreemptionMode>},
          {"engine.swap_space", "swap_space"},
          {"engine.swap_bandwidth", "swap_bandwidth"},
          {"engine.watermark", "watermark"},
          {"engine.capacity_scheduler", "capacity_scheduler (TensorRT-LLM)",
           spellings<model::CapacityScheduler>},
          {"engine.schedule_policy", "schedule_policy (SGLang)",
           spellings<model::SglangSchedulePolicy>},
          {"engine.schedule_conservativeness", "schedule_conservativeness (SGLang)"}}},
        {"Engine memory",
         {{"engine.usable_memory", "usable_memory"},
          {"engine.non_torch_memory", "non_torch_memory"},
          {"engine.cuda_graph_memory", "cuda_graph_memory"},
          {"engine.cuda_context_memory", "cuda_context_memory"},
          {"engine.activation_memory", "activation_memory"},
          {"engine.activation_workspace_factor", "activation_workspace_factor"},
          {"engine.kv_cache_memory", "kv_cache_memory"}}},
        {"Mixture of experts",
         {{"engine.moe_load_imbalance", "moe_load_imbalance"},
          {"engine.ep_overlap", "ep_overlap"}}},
        {"Speculative decoding",
         {{"engine.speculative.method", "method", spellings<model::SpeculativeMethod>},
          {"engine.speculative.num_speculative_tokens", "num_speculative_tokens"},
          {"engine.speculative.acceptance_rate", "acceptance_rate"},
          {"engine.speculative.acceptance", "acceptance (per position)"},
          {"engine.speculative.draft_model", "draft_model"}},
         "engine.speculative",
         "{method: eagle}"},
        {"KV offload tiers",
         {{"engine.kv_offload.host", "host (per GPU)"},
          {"engine.kv_offload.nvme", "nvme (per GPU)"},
          {"engine.kv_offload.host_bandwidth", "host_bandwidth"},
          {"engine.kv_offload.nvme_bandwidth", "nvme_bandwidth"}},
         "engine.kv_offload",
         "{}"},
        {"Multi-LoRA",
         {{"engine.lora.adapters", "adapters"},
          {"engine.lora.rank", "rank"},
          {"engine.lora.target_modules", "target_modules [q_proj, ...]"},
          {"engine.lora.max_loras", "max_loras (GPU slots)"},
          {"engine.lora.max_lora_rank", "max_lora_rank"},
          {"engine.lora.max_cpu_loras", "max_cpu_loras"},
          {"engine.lora.popularity", "popularity", spellings<model::LoraPopularity>},
          {"engine.lora.zipf_s", "zipf_s"},
          {"engine.lora.load_bandwidth", "load_bandwidth"},
          {"engine.lora.disk_bandwidth", "disk_bandwidth"}},
         "engine.lora",
         "{adapters: 16, max_loras: 4}"},
        {"Cluster",
         {{"cluster.replicas", "replicas"},
          {"cluster.router", "router", spellings<model::RouterPolicy>},
          {"cluster.cloud_fallback", "cloud_fallback", bools},
          {"cluster.scale", "scale [{at, replicas}]"},
          {"cluster.pools", "pools"}}},
        {"Disaggregation",
         {{"cluster.disaggregation.prefill", "prefill {accelerator, node, tp, replicas}"},
          {"cluster.disaggregation.decode", "decode {accelerator, node, tp, replicas}"},
          {"cluster.disaggregation.link", "link (hwdb interconnect)"},
          {"cluster.disaggregation.link_bandwidth", "link_bandwidth"},
          {"cluster.disaggregation.link_latency", "link_latency"},
          {"cluster.disaggregation.transfer", "transfer", spellings<model::KvTransferMode>}},
         "cluster.disaggregation",
         // Both pools as the scenario's own replica; ${key|fallback} is that key's text.
         "{prefill: {accelerator: ${hardware.accelerator}, tp: ${hardware.tp|1}, replicas: 1}, "
         "decode: {accelerator: ${hardware.accelerator}, tp: ${hardware.tp|1}, replicas: 1}, "
         "link: ib-ndr}"},
        {"Prefix-aware routing",
         {{"cluster.prefix_routing.weight", "weight"},
          {"cluster.prefix_routing.balance_abs_threshold", "balance_abs_threshold"},
          {"cluster.prefix_routing.balance_rel_threshold", "balance_rel_threshold"}}},
        {"Admission",
         {{"cluster.admission.max_queue", "max_queue"},
          {"cluster.admission.max_concurrency", "max_concurrency"},
          {"cluster.admission.timeout", "timeout"},
          {"cluster.admission.max_retries", "max_retries"},
          {"cluster.admission.retry_backoff", "retry_backoff"}}},
        {"Cold start",
         {{"cluster.cold_start.load_bandwidth", "load_bandwidth"},
          {"cluster.cold_start.startup", "startup"},
          {"cluster.cold_start.at_start", "at_start", bools}}},
        {"Autoscaler",
         {{"cluster.autoscaler.metric", "metric", spellings<model::ScaleMetric>},
          {"cluster.autoscaler.target", "target"},
          {"cluster.autoscaler.interval", "interval"},
          {"cluster.autoscaler.provisioning", "provisioning"},
          {"cluster.autoscaler.cooldown", "cooldown"},
          {"cluster.autoscaler.tolerance", "tolerance"},
          {"cluster.autoscaler.min_replicas", "min_replicas"},
          {"cluster.autoscaler.max_replicas", "max_replicas"}},
         "cluster.autoscaler",
         "{max_replicas: 4}"},
        {"Replica failures",
         {{"cluster.failures.mtbf", "mtbf"},
          {"cluster.failures.mttr", "mttr"},
          {"cluster.failures.spares", "spares"},
          {"cluster.failures.in_flight", "in_flight", spellings<model::FailedRequests>}},
         "cluster.failures",
         "{spares: 0}"},
        {"Cloud endpoint",
         {{"cluster.cloud.name", "name"},
          {"cluster.cloud.ttft_median", "ttft_median"},
          {"cluster.cloud.ttft_sigma", "ttft_sigma"},
          {"cluster.cloud.output_tokens_per_s", "output_tokens_per_s"},
          {"cluster.cloud.rate_limit_rps", "rate_limit_rps"},
          {"cluster.cloud.input_price", "input_price"},
          {"cluster.cloud.output_price", "output_price"}},
         "cluster.cloud",
         "{name: cloud}"},
        {"Power",
         {{"power.gpu_cap", "gpu_cap"},
          {"power.node_cap", "node_cap"},
          {"power.rack_budget", "rack_budget"},
          {"power.pue", "pue"},
          {"power.board_power", "board_power"},
          {"power.idle_power", "idle_power"},
          {"power.resident_power", "resident_power"},
          {"power.host_power", "host_power"},
          {"power.psu_efficiency", "psu_efficiency"},
          {"power.idle_fraction", "idle_fraction"},
          {"power.resident_fraction", "resident_fraction"},
          {"power.compute_weight", "compute_weight"},
          {"power.memory_weight", "memory_weight"},
          {"power.dynamic_exponent", "dynamic_exponent"},
          {"power.memory_core_share", "memory_core_share"},
          {"power.memory_clock_sensitivity", "memory_clock_sensitivity"},
          {"power.min_clock", "min_clock"}}},
        {"Prices",
         {{"prices.gpu_hour", "gpu_hour"},
          {"prices.gpu_purchase", "gpu_purchase"},
          {"prices.electricity", "electricity"},
          {"prices.node_purchase", "node_purchase"},
          {"prices.accelerator", "accelerator (prices are for)"},
          {"prices.node", "node (prices are for)"}}},
        {"Rack",
         {{"rack.pdu.amps", "pdu amps"},
          {"rack.pdu.volts", "pdu volts"},
          {"rack.pdu.phases", "pdu phases"},
          {"rack.pdu.derating", "pdu derating"},
          {"rack.pdu.count", "pdu count"},
          {"rack.pdu.redundant", "pdu redundant", bools},
          {"rack.cooling.kind", "cooling", spellings<model::CoolingKind>},
          {"rack.cooling.limit", "cooling limit"},
          {"rack.rack_units", "rack_units"},
          {"rack.nodes", "nodes"},
          {"rack.nodes_per_rack", "nodes_per_rack"}}},
        {"Cost",
         {{"cost.amortization_years", "amortization_years"},
          {"cost.residual_fraction", "residual_fraction"},
          {"cost.maintenance_fraction", "maintenance_fraction"},
          {"cost.colocation", "colocation"},
          {"cost.utilization", "utilization"},
          {"cost.off_hours", "off_hours", spellings<model::OffHours>}}},
        {"Availability",
         {{"availability.replicas", "replicas"},
          {"availability.mtbf", "mtbf"},
          {"availability.mttr", "mttr"},
          {"availability.target", "target"}},
         "availability",
         "{target: 0.999}"},
        {"Sizing search",
         {{"plan.candidates", "candidates"},
          {"plan.max_gpus", "max_gpus"},
          {"plan.tp", "tp"},
          {"plan.pp", "pp"},
          {"plan.weights", "weights"},
          {"plan.kv_cache", "kv_cache"},
          {"plan.max_num_seqs", "max_num_seqs"},
          {"plan.speculative", "speculative"},
          {"plan.budget", "budget"},
          {"plan.power_budget", "power_budget"},
          {"plan.max_racks", "max_racks"},
          {"plan.pricing", "pricing", spellings<model::PlanPricing>},
          {"plan.top", "top"},
          {"plan.requests", "requests"},
          {"plan.max_simulations", "max_simulations"},
          {"plan.prune_margin", "prune_margin"}},
         "plan",
         "{max_gpus: 64}"},
        {"Training",
         {{"training.tokens", "tokens"},
          {"training.global_batch", "global_batch"},
          {"training.seq_len", "seq_len"},
          {"training.tp", "tp"},
          {"training.pp", "pp"},
          {"training.cp", "cp"},
          {"training.ep", "ep"},
          {"training.zero", "zero"},
          {"training.micro_batch", "micro_batch"},
          {"training.virtual_stages", "virtual_stages"},
          {"training.recompute", "recompute", spellings<model::Recompute>},
          {"training.sequence_parallel", "sequence_parallel", bools},
          {"training.compute", "compute", spellings<model::ComputeType>},
          {"training.master_weights_fp32", "master_weights_fp32", bools},
          {"training.optimizer", "optimizer", spellings<model::TrainOptimizer>},
          {"training.method", "method", spellings<model::FinetuneMethod>},
          {"training.lora", "lora"},
          {"training.flash_attention", "flash_attention", bools},
          {"training.dropout", "dropout", bools},
          {"training.grad_reduce_overlap", "grad_reduce_overlap"},
          {"training.grad_bucket", "grad_bucket"},
          {"training.fsdp_prefetch", "fsdp_prefetch", bools},
          {"training.moe_load_imbalance", "moe_load_imbalance"},
          {"training.ep_overlap", "ep_overlap"},
          {"training.data_loader_tokens_per_s", "data_loader_tokens_per_s"},
          {"training.fragmentation", "fragmentation"},
          {"training.runtime_overhead", "runtime_overhead"},
          {"training.average_gpu_power", "average_gpu_power"},
          {"training.failures", "failures"}},
         "training",
         "{tokens: 1e9, global_batch: 512, seq_len: 4096}"},
        {"Scenario",
         {{"name", "name"},
          {"description", "description"},
          {"seed", "seed"},
          {"hardware.gpus_per_node", "gpus_per_node"},
          {"hardware.intra_node_link", "intra_node_link"},
          {"hardware.inter_node_link", "inter_node_link"},
          {"precision.embeddings", "embeddings precision"},
          {"slo.e2e", "E2E SLO"},
          {"workload.requests", "requests to send"},
          {"workload.duration", "stop sending after"}}},
    };
    return g;
}

/// A block's starting value with each ${key} replaced by that key's text in `s`, or by the text
/// after '|' (${key|fallback}) when the scenario leaves the key out.
std::string startValue(const char* start, const model::Scenario& s) {
    std::string out = start;
    for (std::size_t at = out.find("${"); at != std::string::npos; at = out.find("${", at)) {
        const std::size_t end = out.find('}', at);
        const std::string ref = out.substr(at + 2, end - at - 2);
        const std::size_t bar = ref.find('|');
        std::string text = hwdb::scenario_key_text(s, ref.substr(0, bar));
        if (text.empty() && bar != std::string::npos) {
            text = ref.substr(bar + 1);
        }
        out.replace(at, end + 1 - at, text);
        at += text.size();
    }
    return out;
}

/// The loader's message for the field: "key.path: what is wrong; how to fix it" without the
/// place in the text the form wrote (which the user never sees).
QString fieldMessage(const InputError& e) {
    const std::string what = e.what();
    const auto* c = dynamic_cast<const ConfigError*>(&e);
    if (c == nullptr) {
        return qs(what);
    }
    std::string prefix = c->file();
    if (c->line() > 0) {
        prefix += ":" + std::to_string(c->line()) + ":" + std::to_string(c->column());
    }
    prefix += ": ";
    return qs(what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what);
}

} // namespace

std::vector<QString> ScenarioForm::keys() {
    std::vector<QString> out;
    for (const GroupSpec& g : groups()) {
        for (const KeySpec& k : g.keys) {
            out.push_back(QString::fromLatin1(k.path));
        }
    }
    return out;
}

std::vector<QString> ScenarioForm::blocks() {
    std::vector<QString> out;
    for (const GroupSpec& g : groups()) {
        if (*g.block != '\0') {
            out.push_back(QString::fromLatin1(g.block));
        }
    }
    return out;
}

ScenarioForm::ScenarioForm(ScenarioDocument& doc, QWidget* parent) : QWidget(parent), doc_(doc) {
    auto* inner = new QWidget();
    inner_ = inner;
    for (const GroupSpec& g : groups()) {
        auto* box = new QGroupBox(tr(g.title));
        auto* form = new QFormLayout(box);
        form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
        // A field that does not fit beside its label goes under it (narrow windows).
        form->setRowWrapPolicy(QFormLayout::WrapLongRows);
        const QString block = QString::fromLatin1(g.block);
        if (!block.isEmpty()) {
            auto* on = new QCheckBox(tr("on"));
            on->setObjectName(block + QStringLiteral(".on"));
            auto* error = new QLabel();
            error->setObjectName(block + QStringLiteral(".error"));
            error->setWordWrap(true);
            error->setStyleSheet(QStringLiteral("color: #b00020;"));
            error->setVisible(false);
            form->addRow(on);
            form->addRow(error);
            blockBoxes_[block] = on;
            fields_[block] = Field{on, error, tr(g.title), block};
            connect(on, &QCheckBox::toggled, this, [this, block](bool checked) {
                if (!refreshing_) {
                    (void)setBlock(block, checked);
                }
            });
        }
        for (const KeySpec& k : g.keys) {
            const QString key = QString::fromLatin1(k.path);
            QWidget* editor = nullptr;
            if (k.choices != nullptr) {
                auto* combo = new QComboBox();
                combo->addItem(QString());
                combo->setPlaceholderText(tr("default"));
                combo->addItems(k.choices());
                combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
                combo->setMinimumContentsLength(8);
                connect(combo, &QComboBox::activated, this, [this, key, combo](int) {
                    if (!refreshing_) {
                        (void)commit(key, combo->currentText());
                    }
                });
                editor = combo;
            } else {
                auto* line = new QLineEdit();
                line->setPlaceholderText(tr("default"));
                connect(line, &QLineEdit::editingFinished, this, [this, key, line] {
                    if (!refreshing_) {
                        (void)commit(key, line->text());
                    }
                });
                editor = line;
            }
            editor->setObjectName(key);
            editor->setToolTip(key);
            // A drop-down never narrower than its longest spelling (a line edit scrolls).
            editor->setMinimumWidth(qobject_cast<QComboBox*>(editor) != nullptr
                                        ? std::max(60, editor->minimumSizeHint().width())
                                        : 60);
            auto* error = new QLabel();
            error->setObjectName(key + QStringLiteral(".error"));
            error->setWordWrap(true);
            error->setStyleSheet(QStringLiteral("color: #b00020;"));
            error->setVisible(false);
            auto* label = new QLabel(tr(k.label));
            form->addRow(label, editor);
            form->addRow(error);
            fields_[key] = Field{editor, error, tr(k.label), block};
        }
        boxes_.emplace_back(box, static_cast<int>(g.keys.size()) + 2);
    }
    arrange(3);
    auto* note = new QLabel(
        tr("Each field is the scenario file's key (its tooltip names it) and takes what the file "
           "takes: units (\"2 GiB\", \"500 ms\", \"700 W\", \"$2.10/h\"), lists as [1, 2]. An "
           "empty field leaves the key out (the default). Enter applies; Ctrl+Z undoes."));
    note->setWordWrap(true);
    auto* scroll = new QScrollArea();
    scroll->setObjectName(QStringLiteral("scenario_form_scroll"));
    scroll->setWidget(inner);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(note);
    layout->addWidget(scroll, 1);
    connect(&doc_, &ScenarioDocument::scenarioChanged, this, &ScenarioForm::refresh);
    refresh();
}

void ScenarioForm::arrange(int columns) {
    if (columns == columns_) {
        return;
    }
    columns_ = columns;
    delete inner_->layout(); // the group boxes stay children of inner_
    auto* grid = new QGridLayout(inner_);
    std::vector<QVBoxLayout*> col;
    std::vector<int> height(static_cast<std::size_t>(columns), 0); // rows in each column
    for (int c = 0; c < columns; ++c) {
        col.push_back(new QVBoxLayout());
        grid->addLayout(col.back(), 0, c);
        grid->setColumnStretch(c, 1);
    }
    for (const auto& [box, rows] : boxes_) {
        const auto shortest = static_cast<std::size_t>(
            std::min_element(height.begin(), height.end()) - height.begin());
        col[shortest]->addWidget(box);
        height[shortest] += rows;
    }
    for (QVBoxLayout* c : col) {
        c->addStretch(1);
    }
}

void ScenarioForm::resizeEvent(QResizeEvent* e) {
    QWidget::resizeEvent(e);
    // As many columns as fit a label and its field side by side (about 330 px each).
    arrange(std::clamp(width() / 330, 1, 3));
}

QWidget* ScenarioForm::editor(const QString& key) const {
    const auto it = fields_.find(key);
    return it == fields_.end() ? nullptr : it->second.editor;
}

QString ScenarioForm::text(const QString& key) const {
    QWidget* e = editor(key);
    if (auto* line = qobject_cast<QLineEdit*>(e)) {
        return line->text();
    }
    if (auto* combo = qobject_cast<QComboBox*>(e)) {
        return combo->currentText();
    }
    return {};
}

QString ScenarioForm::errorFor(const QString& key) const {
    const auto it = fields_.find(key);
    return it == fields_.end() || it->second.error->isHidden() ? QString()
                                                               : it->second.error->text();
}

void ScenarioForm::showError(const QString& key, const QString& message) {
    Field& f = fields_.at(key);
    f.error->setText(message);
    f.error->setVisible(!message.isEmpty());
    f.editor->setStyleSheet(message.isEmpty() ? QString()
                                              : QStringLiteral("border: 1px solid #b00020;"));
}

bool ScenarioForm::setKey(const QString& key, const QString& text) {
    QWidget* e = editor(key);
    if (e == nullptr) {
        return false;
    }
    {
        const QSignalBlocker block(e);
        if (auto* line = qobject_cast<QLineEdit*>(e)) {
            line->setText(text);
        } else if (auto* combo = qobject_cast<QComboBox*>(e)) {
            if (combo->findText(text) < 0) {
                combo->addItem(text);
            }
            combo->setCurrentText(text);
        }
    }
    return commit(key, text);
}

bool ScenarioForm::setBlock(const QString& block, bool on) {
    const auto spec = std::find_if(groups().begin(), groups().end(), [&](const GroupSpec& g) {
        return block == QString::fromLatin1(g.block);
    });
    if (spec == groups().end()) {
        return false;
    }
    if (auto* box = blockBoxes_.at(block); box->isChecked() != on) {
        const QSignalBlocker b(box);
        box->setChecked(on);
    }
    return commit(block, on ? qs(startValue(spec->start, doc_.scenario())) : QString());
}

bool ScenarioForm::commit(const QString& key, const QString& text) {
    const std::string path = key.toStdString();
    // Not trimmed: a description may end in a newline; hwdb trims what it reads as YAML.
    const QString value = text.trimmed().isEmpty() ? QString() : text;
    const bool isBlock = blockBoxes_.count(key) > 0;
    const std::string shown = hwdb::scenario_key_text(doc_.scenario(), path);
    if (!isBlock && value.toStdString() == shown) {
        showError(key, {});
        return true;
    }
    if (isBlock && value.isEmpty() == shown.empty()) {
        showError(key, {});
        return true;
    }
    model::Scenario next;
    try {
        next = hwdb::with_scenario_key(doc_.scenario(), doc_.database(), path, value.toStdString(),
                                       path);
    } catch (const InputError& e) {
        showError(key, fieldMessage(e));
        return false;
    }
    showError(key, {});
    doc_.edit(next, fields_.at(key).label);
    return true;
}

void ScenarioForm::refresh() {
    refreshing_ = true;
    std::vector<std::string> paths;
    for (const auto& [key, f] : fields_) {
        paths.push_back(key.toStdString());
    }
    const std::vector<std::string> values = hwdb::scenario_key_texts(doc_.scenario(), paths);
    std::map<QString, QString> shown;
    for (std::size_t i = 0; i < paths.size(); ++i) {
        shown[qs(paths[i])] = qs(values[i]);
    }
    for (auto& [key, f] : fields_) {
        if (!f.error->isHidden()) {
            continue; // a refused value stays with its message until it is changed
        }
        const bool inBlock = f.block.isEmpty() || !shown.at(f.block).isEmpty();
        if (auto* box = qobject_cast<QCheckBox*>(f.editor)) {
            box->setChecked(inBlock);
            continue;
        }
        const QString& text = shown.at(key);
        if (auto* line = qobject_cast<QLineEdit*>(f.editor)) {
            if (line->text() != text) {
                line->setText(text);
                line->setCursorPosition(0);
            }
        } else if (auto* combo = qobject_cast<QComboBox*>(f.editor)) {
            if (text.isEmpty()) {
                combo->setCurrentIndex(-1); // shows the placeholder: the loader's default
            } else {
                if (combo->findText(text) < 0) {
                    combo->addItem(text);
                }
                combo->setCurrentText(text);
            }
        }
        f.editor->setEnabled(inBlock);
    }
    refreshing_ = false;
}

} // namespace gpuplan::gui
