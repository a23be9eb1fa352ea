#include "gui/scenario_document.hpp"

#include "gui/analysis.hpp"
#include "gui/ui_util.hpp"
#include "hwdb/file_io.hpp"
#include "hwdb/scenario_edit.hpp"
#include "hwdb/scenario_loader.hpp"
#include "hwdb/scenario_writer.hpp"
#include "model/error.hpp"

#include <QUndoCommand>

#include <filesystem>

namespace gpuplan::gui {

namespace {

/// One edit: the scenario before and after.
class EditCommand : public QUndoCommand {
  public:
    EditCommand(ScenarioDocument& doc, model::Scenario before, model::Scenario after,
                const QString& what, int merge_key)
        : QUndoCommand(what), doc_(doc), before_(std::move(before)), after_(std::move(after)),
          key_(merge_key) {}
    void undo() override { doc_.setScenario(before_); }
    void redo() override { doc_.setScenario(after_); }
    [[nodiscard]] int id() const override { return key_; }
    bool mergeWith(const QUndoCommand* other) override {
        const auto* o = static_cast<const EditCommand*>(other);
        if (o->key_ != key_ || key_ < 0) {
            return false;
        }
        after_ = o->after_;
        return true;
    }

  private:
    ScenarioDocument& doc_;
    model::Scenario before_;
    model::Scenario after_;
    int key_;
};

} // namespace

ScenarioDocument::ScenarioDocument(const hwdb::Database& db, model::Scenario initial,
                                   QObject* parent)
    : QObject(parent), db_(db), scenario_(std::move(initial)) {
    connect(&undo_, &QUndoStack::cleanChanged, this, &ScenarioDocument::fileStateChanged);
}

void ScenarioDocument::edit(const model::Scenario& next, const QString& what, int merge_key) {
    if (next == scenario_) {
        return;
    }
    undo_.push(new EditCommand(*this, scenario_, next, what, merge_key));
}

void ScenarioDocument::setScenario(const model::Scenario& s) {
    scenario_ = s;
    emit scenarioChanged();
}

void ScenarioDocument::open(const QString& path) {
    const std::filesystem::path file(path.toStdString());
    std::string text = hwdb::read_text_file(file, "scenario file");
    model::Scenario s = hwdb::parse_scenario(text, file.string(), db_);
    text_ = std::move(text);
    loaded_ = s;
    scenario_ = std::move(s);
    path_ = path;
    undo_.clear();
    undo_.setClean();
    emit scenarioChanged();
    emit fileStateChanged();
}

void ScenarioDocument::saveAs(const QString& path) {
    const std::filesystem::path file(path.toStdString());
    if (text_.empty()) {
        hwdb::save_scenario(file, scenario_);
        saveNote_.clear();
        text_ = hwdb::read_text_file(file, "scenario file");
        loaded_ = scenario_;
    } else {
        const hwdb::KeptSave kept =
            hwdb::save_scenario_keeping(file, text_, loaded_, scenario_, db_);
        if (!kept.patched) {
            saveNote_ = tr("written anew (the original's comments could not be kept)");
        } else {
            saveNote_ = tr("comments kept: %1 value(s) replaced").arg(kept.replaced.size());
            if (!kept.rewritten.empty()) {
                QStringList blocks;
                for (const auto& b : kept.rewritten) {
                    blocks << qs(b);
                }
                saveNote_ +=
                    tr("; block(s) written anew: %1").arg(blocks.join(QStringLiteral(", ")));
            }
        }
        text_ = kept.text;
        loaded_ = scenario_;
    }
    path_ = path;
    undo_.setClean();
    emit fileStateChanged();
}

void ScenarioDocument::reset(model::Scenario s) {
    scenario_ = std::move(s);
    path_.clear();
    text_.clear();
    saveNote_.clear();
    undo_.clear();
    undo_.setClean();
    emit scenarioChanged();
    emit fileStateChanged();
}

model::Scenario default_scenario(const hwdb::Database& db) {
    model::Scenario s;
    s.name = "new-scenario";
    s.model_ref = "llama-3.1-8b";
    s.deployment.model = db.model(s.model_ref);
    change_hardware(s, db, "h100-sxm", "");
    s.workload.concurrency = 32;
    s.deployment.engine.max_model_len = 8192;
    return s;
}

} // namespace gpuplan::gui
