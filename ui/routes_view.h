#pragma once

#include "config/config.h"
#include "control/routes_state.h"

#include <QHash>
#include <QList>
#include <QPointer>
#include <QTimer>
#include <QWidget>

class QComboBox;
class QGridLayout;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSlider;
class QSpinBox;
class QTableView;
class QTextBrowser;
class QToolButton;
class QVBoxLayout;

namespace switchyard {
class EngineBridge;
}

namespace switchyard::ui {

class RouteRulesModel;

// The Routes page (docs/console.md): the rules in priority order, an editor for the selected
// rule with validation as you type, a dry run that compares the live rules with the edited ones
// for a sample request, Apply to swap the live rules at once, and live canary sliders.
// Talks to the engine only through the bridge.
class RoutesView final : public QWidget {
    Q_OBJECT
public:
    explicit RoutesView(EngineBridge &bridge, QWidget *parent = nullptr);

    RouteRulesModel *rulesModel() const { return m_model; }
    // The edited rules differ from the live ones.
    bool isDirty() const { return m_dirty; }

    // The dry-run presets, in the order the combo box lists them.
    enum class Preset { SimpleChat, CodeGeneration, SensitiveData, LongDocument, AgentCanaryUser };
    void loadPreset(Preset preset);

    // Text shown for a decision, as the dry-run panels show it.
    static QString describe(const RouteExplanation &explanation);

public Q_SLOTS:
    void runDryRun();

protected:
    void changeEvent(QEvent *event) override;

private:
    struct ConditionRow {
        QWidget *row = nullptr;
        QComboBox *field = nullptr;
        QComboBox *op = nullptr;
        QLineEdit *value = nullptr;
        QToolButton *remove = nullptr;
    };
    struct BranchSlider {
        QSlider *slider = nullptr;
        QLabel *label = nullptr;
    };
    struct SplitControls {
        QWidget *box = nullptr;
        QLabel *title = nullptr;
        QPushButton *reset = nullptr;
        QList<BranchSlider> branches;
        QList<QString> targets;
    };

    QWidget *buildRulesCard();
    QWidget *buildEditorCard();
    QWidget *buildDryRunCard();
    QWidget *buildCanaryCard();
    void retranslateUi();

    void loadLiveRules();
    void onRoutesChanged(const RoutesState &state);
    void selectRow(int row);
    void showRule(int row);
    ConditionRow &addConditionRow(const config::RouteCondition &condition);
    void clearConditionRows();
    void fillTargetChoices();
    // Form -> model, then validation of every edited rule.
    void formEdited();
    config::RouteRule ruleFromForm() const;
    void validate();
    void addRule();
    void deleteRule();
    void applyRules();
    void onRoutesApplied(bool ok, const QStringList &problems);
    void onRouteExplained(quint64 ticket, const RouteExplanation &explanation);
    void rebuildCanary(const QList<routing::CanarySplitState> &splits);
    void updateCanary(const QList<routing::CanarySplitState> &splits);
    void sliderMoved(const QString &rule, int branch, int value);
    void sendCanaryWeights();

    EngineBridge &m_bridge;
    // The snapshot in force: the providers and tiers the editor offers and validates against.
    std::shared_ptr<const config::Config> m_snapshot;
    RoutesState m_live;
    RouteRulesModel *m_model = nullptr;
    bool m_dirty = false;
    bool m_loadingForm = false;
    int m_currentRow = -1;
    bool m_nestedCondition = false; // the selected rule's condition has groups the form can't edit

    QLabel *m_rulesTitle = nullptr;
    QLabel *m_rulesHint = nullptr;
    QTableView *m_rulesView = nullptr;
    QPushButton *m_addButton = nullptr;
    QPushButton *m_deleteButton = nullptr;
    QPushButton *m_revertButton = nullptr;
    QPushButton *m_applyButton = nullptr;
    QLabel *m_applyResult = nullptr;

    QLabel *m_editorTitle = nullptr;
    QWidget *m_editorForm = nullptr;
    QLabel *m_nameLabel = nullptr;
    QLineEdit *m_nameEdit = nullptr;
    QLabel *m_priorityLabel = nullptr;
    QSpinBox *m_prioritySpin = nullptr;
    QLabel *m_matchLabel = nullptr;
    QComboBox *m_matchCombo = nullptr;
    QLabel *m_conditionHeader = nullptr;
    QVBoxLayout *m_conditionLayout = nullptr;
    QList<ConditionRow> m_conditionRows;
    QLabel *m_nestedLabel = nullptr;
    QPushButton *m_addConditionButton = nullptr;
    QLabel *m_targetLabel = nullptr;
    QComboBox *m_targetKind = nullptr;
    QComboBox *m_targetValue = nullptr;
    QLabel *m_problemsLabel = nullptr;
    config::RouteRule m_formBase; // the selected rule as loaded: keeps what the form does not show

    QLabel *m_dryRunTitle = nullptr;
    QLabel *m_presetLabel = nullptr;
    QComboBox *m_presetCombo = nullptr;
    QLabel *m_bodyLabel = nullptr;
    QPlainTextEdit *m_bodyEdit = nullptr;
    QLabel *m_headersLabel = nullptr;
    QPlainTextEdit *m_headersEdit = nullptr;
    QPushButton *m_runButton = nullptr;
    QLabel *m_liveTitle = nullptr;
    QLabel *m_editedTitle = nullptr;
    QTextBrowser *m_liveResult = nullptr;
    QTextBrowser *m_editedResult = nullptr;
    quint64 m_nextTicket = 1;
    quint64 m_liveTicket = 0;
    quint64 m_editedTicket = 0;

    QLabel *m_canaryTitle = nullptr;
    QLabel *m_canaryEmpty = nullptr;
    QVBoxLayout *m_canaryLayout = nullptr;
    QList<SplitControls> m_splitControls;
    QStringList m_splitRules;
    QHash<QString, QList<int>> m_pendingWeights; // rule -> weights waiting for the debounce
    QTimer m_canaryDebounce;
};

} // namespace switchyard::ui
