#pragma once

#include "control/engine_snapshot.h"

#include <QFrame>

QT_BEGIN_NAMESPACE
class QLabel;
class QPushButton;
class QTableView;
QT_END_NAMESPACE

namespace switchyard {
class EngineBridge;
}

namespace switchyard::ui {

class AgentsModel;

// The Routes page's registered agents: who offers which intents, whether each is live, busy or
// silent, and a button that deregisters the selected one (as DELETE /admin/v1/agents/{id} does).
class AgentsPanel final : public QFrame {
    Q_OBJECT
public:
    explicit AgentsPanel(EngineBridge &bridge, QWidget *parent = nullptr);

    AgentsModel *model() const { return m_model; }
    QTableView *view() const { return m_view; }
    QPushButton *removeButton() const { return m_remove; }
    void applySnapshot(const EngineSnapshot &snapshot);

protected:
    void changeEvent(QEvent *event) override;

private:
    void retranslateUi();
    void refreshControls();
    void removeSelected();

    EngineBridge &m_bridge;
    AgentsModel *m_model = nullptr;
    QLabel *m_title = nullptr;
    QLabel *m_empty = nullptr;
    QTableView *m_view = nullptr;
    QPushButton *m_remove = nullptr;
};

} // namespace switchyard::ui
