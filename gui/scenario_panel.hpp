#pragma once
/// The scenario editor: model (searchable, or imported from a Hugging Face config.json), GPU
/// with its key specs, node, GPU count and parallelism, precisions, context and load, engine
/// knobs, SLOs, power budget and prices. Each edit becomes one undoable step of the document;
/// text fields are parsed with the core's parsers and show an inline error (red frame and
/// message) instead of applying a bad value. Widgets carry object names so tests can find them.

#include "gui/scenario_document.hpp"

#include <QWidget>

#include <functional>
#include <map>
#include <set>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace gpuplan::gui {

class ScenarioPanel : public QWidget {
    Q_OBJECT
  public:
    explicit ScenarioPanel(ScenarioDocument& doc, QWidget* parent = nullptr);

    /// Imports a config.json as the scenario's (inline) model. Returns false and shows the
    /// error inline when the file cannot be read or imported.
    bool importConfig(const QString& path);
    /// The message shown for `field` ("" when it is valid).
    [[nodiscard]] QString errorFor(const QWidget* field) const;
    /// The message about the deployment as a whole ("" when it validates).
    [[nodiscard]] QString deploymentError() const;
    /// What the last hardware edit changed besides the field edited ("GPUs 3 → 6 ...",
    /// "replicas 3 → 1 ...", "node dgx-h100 dropped ..."); "" when nothing else changed.
    [[nodiscard]] QString layoutNote() const;
    /// What the last load edit changed besides the field edited (a concurrency clears the
    /// offered rate and a rate the concurrency: one load per scenario); "" when nothing.
    [[nodiscard]] QString loadNote() const;

  public slots:
    /// Shows the document's scenario in the fields (without recording edits).
    void refresh();

  private:
    /// Copies the scenario, applies `change`, checks the deployment and records the edit.
    void apply(const QString& what, int key, QWidget* field,
               const std::function<void(model::Scenario&)>& change);
    void showFieldError(QWidget* field, const QString& message);
    void updateSpecs();
    void setLayoutNote(const QString& text);
    void setLoadNote(const QString& text);
    /// The note that a load edit cleared the other load, or "" when `before` had none.
    [[nodiscard]] static QString loadConsequence(const model::Workload& before,
                                                 const model::Workload& after);
    /// Applies the GPU typed into the GPU field (a catalog name or a list entry), or says at
    /// the field why it cannot.
    void chooseTypedGpu();
    void applyGpu(const QString& name);
    QLabel* errorLabel(QWidget* field);

    // Builders of the groups.
    QWidget* buildModelGroup();
    QWidget* buildHardwareGroup();
    QWidget* buildPrecisionGroup();
    QWidget* buildWorkloadGroup();
    QWidget* buildEngineGroup();
    QWidget* buildSloGroup();
    QWidget* buildPowerGroup();
    QWidget* buildPricesGroup();

    /// A text field holding an optional quantity or price; `parse` returns an error message
    /// ("" when valid) and applies the value (nullopt for empty text).
    QLineEdit* optionalField(const QString& name, const QString& placeholder, int key,
                             const std::function<QString(const QString&, model::Scenario&)>& parse);

    ScenarioDocument& doc_;
    bool refreshing_ = false;
    bool applying_ = false;       ///< refresh() runs because of an edit made here
    std::set<QWidget*> rejected_; ///< fields showing a value the scenario did not take
    QWidget* lastEdited_ = nullptr;
    std::map<const QWidget*, QLabel*> errors_;
    std::map<QLineEdit*, std::function<QString(const model::Scenario&)>> textOf_;

    QComboBox* model_ = nullptr;
    QLabel* modelInfo_ = nullptr;
    QPushButton* import_ = nullptr;
    QComboBox* gpu_ = nullptr;
    QLabel* gpuSpecs_ = nullptr;
    QComboBox* node_ = nullptr;
    QSpinBox* count_ = nullptr;
    QSpinBox* tp_ = nullptr;
    QSpinBox* pp_ = nullptr;
    QSpinBox* dp_ = nullptr;
    QSpinBox* ep_ = nullptr;
    QLabel* deploymentError_ = nullptr;
    QLabel* layoutNote_ = nullptr;
    QLabel* loadNote_ = nullptr;
    QComboBox* weights_ = nullptr;
    QComboBox* activations_ = nullptr;
    QComboBox* kv_ = nullptr;
    QSpinBox* maxModelLen_ = nullptr;
    QSpinBox* concurrency_ = nullptr;
    QSpinBox* input_ = nullptr;
    QSpinBox* output_ = nullptr;
    QLabel* classes_ = nullptr;
    QComboBox* engine_ = nullptr;
    QDoubleSpinBox* memUtil_ = nullptr;
    QSpinBox* maxSeqs_ = nullptr;
    QSpinBox* batchedTokens_ = nullptr;
    QSpinBox* blockSize_ = nullptr;
    QCheckBox* prefixCaching_ = nullptr;
    QCheckBox* chunkedPrefill_ = nullptr;
    QCheckBox* eager_ = nullptr;
    QDoubleSpinBox* percentile_ = nullptr;
};

} // namespace gpuplan::gui
