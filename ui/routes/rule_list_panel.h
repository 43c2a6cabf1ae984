#pragma once

#include "ui/common/widget_helpers.h"

#include <QFrame>

QT_BEGIN_NAMESPACE
class QLabel;
class QPushButton;
class QTableView;
QT_END_NAMESPACE

namespace switchyard::ui {

class RouteRulesModel;

// The Routes page's rule list: the edited rules in priority order, and the buttons that add,
// delete, revert and apply them. It only shows and asks; the page decides what each does.
class RuleListPanel final : public QFrame {
    Q_OBJECT
public:
    explicit RuleListPanel(RouteRulesModel &model, QWidget *parent = nullptr);

    // Selects a row without emitting currentRowChanged; -1 clears the selection.
    void selectRowQuietly(int row);
    void setEditState(bool ruleSelected, bool dirty, bool applicable);
    void showApplyResult(const QString &text, Tone tone);
    void clearApplyResult();

Q_SIGNALS:
    void currentRowChanged(int row); // by the person, or by the view after a model change
    void addRequested();
    void deleteRequested();
    void revertRequested();
    void applyRequested();

protected:
    void changeEvent(QEvent *event) override;
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void retranslateUi();
    void fitConditionColumn();

    RouteRulesModel &m_model;
    bool m_selectingQuietly = false;
    QLabel *m_title = nullptr;
    QLabel *m_hint = nullptr;
    QTableView *m_rulesView = nullptr;
    QPushButton *m_addButton = nullptr;
    QPushButton *m_deleteButton = nullptr;
    QPushButton *m_revertButton = nullptr;
    QPushButton *m_applyButton = nullptr;
    QLabel *m_applyResult = nullptr;
};

} // namespace switchyard::ui
