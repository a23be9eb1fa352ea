#pragma once
/// The rest of the scenario as a form (issue 17 item 4): the engine and its scheduler,
/// speculative decoding, the cluster (replicas, router and prefix-aware routing, admission, cold
/// start, scale-ups, pools, autoscaler, replica failures, cloud fallback), power, prices, rack,
/// cost, availability, the sizing search, the training job, and the scalar keys the left panel
/// leaves out (name, seed, links, ...). Every field is one YAML key of docs/scenario-schema.md
/// shown as the writer writes it ("80 GiB", "least_kv", a list as flow YAML); an entered value is
/// read back through the scenario loader (hwdb::with_scenario_key), so the field takes what the
/// file would take, refuses what the loader refuses with its message at the field, and changes
/// nothing else. Each accepted field is one undoable edit. An empty field removes the key (the
/// loader's default). Optional blocks (engine.speculative, cluster.autoscaler, ...) have an "on"
/// box that adds the block with a starting value or removes it.
///
/// Adding a key is one line in groups() (gui/scenario_form.cpp): its YAML path, its label, and
/// for an enum the model::enum_names table that spells it.

#include "gui/scenario_document.hpp"

#include <QWidget>

#include <map>
#include <utility>
#include <vector>

class QCheckBox;
class QResizeEvent;
class QLabel;

namespace gpuplan::gui {

class ScenarioForm : public QWidget {
    Q_OBJECT
  public:
    explicit ScenarioForm(ScenarioDocument& doc, QWidget* parent = nullptr);

    /// Every key the form edits (dotted YAML paths), in form order.
    [[nodiscard]] static std::vector<QString> keys();
    /// The optional blocks with an "on" box (dotted YAML paths).
    [[nodiscard]] static std::vector<QString> blocks();
    /// The editor of `key` (a QLineEdit or a QComboBox named after the key), or nullptr.
    [[nodiscard]] QWidget* editor(const QString& key) const;
    /// The text `key`'s editor shows.
    [[nodiscard]] QString text(const QString& key) const;
    /// Puts `text` in `key`'s editor and commits it as the user would; false, with the message
    /// at the field, when the scenario does not take it.
    bool setKey(const QString& key, const QString& text);
    /// Switches an optional block on (with its starting value) or off; false with the message
    /// at its box when the scenario does not take it.
    bool setBlock(const QString& block, bool on);
    /// The message at `key`'s field or block box ("" when none).
    [[nodiscard]] QString errorFor(const QString& key) const;

  public slots:
    /// Shows the document's scenario.
    void refresh();

  protected:
    void resizeEvent(QResizeEvent* e) override;

  private:
    /// Places the group boxes in `columns` columns, each next in the shortest.
    void arrange(int columns);
    struct Field {
        QWidget* editor = nullptr;
        QLabel* error = nullptr;
        QString label;
        QString block; ///< the optional block it lies in ("" when none)
    };
    bool commit(const QString& key, const QString& text);
    void showError(const QString& key, const QString& message);

    ScenarioDocument& doc_;
    std::map<QString, Field> fields_;
    std::map<QString, QCheckBox*> blockBoxes_;
    bool refreshing_ = false;
    QWidget* inner_ = nullptr;                    ///< holds the columns of group boxes
    std::vector<std::pair<QWidget*, int>> boxes_; ///< each group box and its rows
    int columns_ = 0;
};

} // namespace gpuplan::gui
