#pragma once

#include "control/engine_snapshot.h"

#include <QWidget>

class QLabel;
class QTableView;

namespace switchyard::ui {

class KeysModel;

// The Keys tab: every client API key with its tenant and limits, read-only and never a secret.
// Keys are issued and revoked in the config file or through the admin API; this page says which.
class KeysPage final : public QWidget {
    Q_OBJECT
public:
    explicit KeysPage(QWidget *parent = nullptr);

    void applySnapshot(const EngineSnapshot &snapshot);
    KeysModel *model() const { return m_model; }

protected:
    void changeEvent(QEvent *event) override;

private:
    void retranslateUi();
    void refreshEmptyState();

    KeysModel *m_model;
    QLabel *m_title = nullptr;
    QLabel *m_hint = nullptr;
    QLabel *m_empty = nullptr;
    QTableView *m_view = nullptr;
};

} // namespace switchyard::ui
