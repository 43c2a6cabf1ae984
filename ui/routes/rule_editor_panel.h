#pragma once

#include "config/config.h"

#include <QFrame>
#include <QList>
#include <memory>
#include <optional>

QT_BEGIN_NAMESPACE
class QComboBox;
class QLabel;
class QLineEdit;
class QSpinBox;
QT_END_NAMESPACE

namespace switchyard::ui {

class ConditionTreeEditor;
class SplitEditor;

// The Routes page's rule editor: one rule's name, priority, condition and target as a form.
// Every change is announced with the whole edited rule, the value the engine validates and
// applies; problems found by the page's validation are shown below the form.
class RuleEditorPanel final : public QFrame {
    Q_OBJECT
public:
    // `snapshot` (the config in force, shared, never copied) gives the providers and tiers the
    // form offers.
    explicit RuleEditorPanel(std::shared_ptr<const config::Config> snapshot,
                             QWidget *parent = nullptr);

    // Loads a rule into the form; nullopt when no rule is selected (the form is then disabled).
    void showRule(const std::optional<config::RouteRule> &rule);
    // The rule as the form now says, keeping what the form does not show (file positions).
    config::RouteRule rule() const { return m_formBase; }
    void setProblems(const QStringList &problems);
    void focusName();

Q_SIGNALS:
    void ruleEdited(const switchyard::config::RouteRule &rule);

protected:
    void changeEvent(QEvent *event) override;

private:
    void retranslateUi();
    void showTargetKind(int index);
    QList<config::SplitBranch> firstSplit() const;
    void formEdited();
    config::RouteRule ruleFromForm() const;

    std::shared_ptr<const config::Config> m_snapshot;
    bool m_hasRule = false;
    bool m_loadingForm = false;
    config::RouteRule m_formBase; // the rule as loaded: keeps what the form does not show

    QLabel *m_title = nullptr;
    QWidget *m_editorForm = nullptr;
    QLabel *m_nameLabel = nullptr;
    QLineEdit *m_nameEdit = nullptr;
    QLabel *m_priorityLabel = nullptr;
    QSpinBox *m_prioritySpin = nullptr;
    QLabel *m_conditionHeader = nullptr;
    ConditionTreeEditor *m_conditions = nullptr;
    QLabel *m_targetLabel = nullptr;
    QComboBox *m_targetKind = nullptr;
    QComboBox *m_targetValue = nullptr;
    SplitEditor *m_split = nullptr;
    QLabel *m_problemsLabel = nullptr;
};

} // namespace switchyard::ui
