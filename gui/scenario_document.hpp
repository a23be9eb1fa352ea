#pragma once
/// The scenario being edited: its value, its file, and the undo history of edits. Every edit is
/// a whole-scenario snapshot pair (Scenario is a value type), so undo and redo are exact, and
/// consecutive edits of one field merge into one undo step.

#include "hwdb/database.hpp"
#include "model/scenario.hpp"

#include <QObject>
#include <QString>
#include <QUndoStack>

namespace gpuplan::gui {

class ScenarioDocument : public QObject {
    Q_OBJECT
  public:
    /// A document holding `initial`; `db` resolves names when files are opened.
    ScenarioDocument(const hwdb::Database& db, model::Scenario initial, QObject* parent = nullptr);

    [[nodiscard]] const model::Scenario& scenario() const { return scenario_; }
    /// The file the scenario was opened from or last saved to; empty when new.
    [[nodiscard]] const QString& path() const { return path_; }
    [[nodiscard]] bool modified() const { return !undo_.isClean(); }
    [[nodiscard]] QUndoStack* undoStack() { return &undo_; }
    [[nodiscard]] const hwdb::Database& database() const { return db_; }

    /// Replaces the scenario by `next` as one undoable step named `what`. Edits with the same
    /// non-negative `merge_key` in a row merge into one step (typing in one field). No-op when
    /// `next` equals the current scenario.
    void edit(const model::Scenario& next, const QString& what, int merge_key = -1);

    /// Opens a scenario file (clears the history). Throws InputError with the loader's message.
    void open(const QString& path);
    /// Saves to `path` in the CLI's YAML format (a trace goes beside it). Throws InputError.
    void saveAs(const QString& path);
    /// Starts over with `s` and no file (clears the history).
    void reset(model::Scenario s);

    /// Sets the scenario without recording a step (used by the undo commands).
    void setScenario(const model::Scenario& s);

  signals:
    /// The scenario changed (an edit, undo, redo, open or reset).
    void scenarioChanged();
    /// The file or the modified flag changed.
    void fileStateChanged();

  private:
    const hwdb::Database& db_;
    model::Scenario scenario_;
    QString path_;
    QUndoStack undo_;
};

/// A scenario that works out of the box: Llama-3.1-8B on one H100 SXM (from the catalog).
[[nodiscard]] model::Scenario default_scenario(const hwdb::Database& db);

} // namespace gpuplan::gui
