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
    /// Saves to `path` in the CLI's YAML format (a trace goes beside it). When the scenario
    /// came from a file, the file's text is patched (hwdb::save_scenario_keeping): its comments,
    /// layout and the untouched keys stay byte for byte, changed values are replaced in place,
    /// and only a top-level block whose keys were added or removed is written anew. Throws
    /// InputError.
    void saveAs(const QString& path);
    /// What the last save kept: "" for a new file, else e.g. "kept comments: 3 values
    /// replaced; block cluster rewritten" or "written anew".
    [[nodiscard]] const QString& lastSaveNote() const { return saveNote_; }
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
    std::string text_;       ///< the text the file held when opened or last saved ("" when new)
    model::Scenario loaded_; ///< what text_ reads as
    QString saveNote_;
};

/// A scenario that works out of the box: Llama-3.1-8B on one H100 SXM (from the catalog).
[[nodiscard]] model::Scenario default_scenario(const hwdb::Database& db);

} // namespace gpuplan::gui
