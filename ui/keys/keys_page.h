#pragma once

#include "control/client_key_commands.h"
#include "control/engine_snapshot.h"

#include <QWidget>
#include <optional>

class QLabel;
class QPushButton;
class QTableView;

namespace switchyard {
class EngineBridge;
}

namespace switchyard::ui {

class KeysModel;

// The Keys tab: every client API key with its tenant and limits, never a secret, from the
// engine's snapshots. Through the bridge, with the commands the admin API runs, it issues a key
// (its text shown once), edits a key's limits and revokes a key after a confirmation. Keys from
// the config file are changed in the file; the page says so instead of offering to.
class KeysPage final : public QWidget {
    Q_OBJECT
public:
    explicit KeysPage(EngineBridge &bridge, QWidget *parent = nullptr);

    void applySnapshot(const EngineSnapshot &snapshot);
    KeysModel *model() const { return m_model; }
    // Selects key `id`'s row; false when the page does not list it.
    bool selectKey(const QString &id);

protected:
    void changeEvent(QEvent *event) override;

private:
    void retranslateUi();
    void refreshEmptyState();
    void refreshActions();
    void fitColumns();
    std::optional<ClientKeyListing> selectedKey() const;
    void openIssueDialog();
    void openLimitsDialog();
    void confirmRevoke();
    void answered(quint64 ticket, const switchyard::ClientKeyCommandResult &result);
    void showStatus(const QString &text, bool failed);

    EngineBridge &m_bridge;
    KeysModel *m_model;
    QString m_selectWhenListed; // a key just issued, selected once a snapshot lists it
    quint64 m_revokeTicket = 0; // the revocation waiting for its answer; 0 when none
    QLabel *m_title = nullptr;
    QLabel *m_hint = nullptr;
    QLabel *m_empty = nullptr;
    QPushButton *m_issueButton = nullptr;
    QPushButton *m_editButton = nullptr;
    QPushButton *m_revokeButton = nullptr;
    QLabel *m_status = nullptr;
    QTableView *m_view = nullptr;
};

} // namespace switchyard::ui
