#pragma once

#include "control/client_key_commands.h"

#include <QDialog>

class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace switchyard {
class EngineBridge;
}

namespace switchyard::ui {

class KeyLimitsFields;

// Issues a client key through the bridge, as POST /admin/v1/keys does: a tenant (required), an
// optional id, and its limits. A refusal is shown in the dialog in the admin API's words; on
// success the dialog turns to the key's text, shown this once in a read-only field with a Copy
// button, and forgets it when closed (it deletes itself).
class IssueKeyDialog final : public QDialog {
    Q_OBJECT
public:
    explicit IssueKeyDialog(EngineBridge &bridge, QWidget *parent = nullptr);

Q_SIGNALS:
    // The engine issued key `keyId`: the next snapshot lists it.
    void issued(const QString &keyId);

protected:
    void changeEvent(QEvent *event) override;

private:
    void retranslateUi();
    void issue();
    void answered(quint64 ticket, const switchyard::ClientKeyCommandResult &result);
    void showSecret(const ClientKeyCommandResult &result);
    void setBusy(bool busy);
    void refreshIssueButton();

    EngineBridge &m_bridge;
    quint64 m_ticket = 0; // the command waiting for its answer; 0 when none
    QString m_issuedTenant;
    QString m_issuedId;

    // The form, then in its place the key's text: one shown at a time, the dialog as tall as it
    QWidget *m_form = nullptr;
    QLabel *m_formHint = nullptr;
    QLabel *m_tenantLabel = nullptr;
    QLineEdit *m_tenant = nullptr;
    QLabel *m_idLabel = nullptr;
    QLineEdit *m_id = nullptr;
    KeyLimitsFields *m_limits = nullptr;
    QLabel *m_error = nullptr;
    QDialogButtonBox *m_formButtons = nullptr;
    QPushButton *m_issueButton = nullptr;
    QWidget *m_shown = nullptr;
    QLabel *m_issuedTitle = nullptr;
    QLineEdit *m_secret = nullptr;
    QPushButton *m_copyButton = nullptr;
    QLabel *m_secretNote = nullptr;
    QDialogButtonBox *m_doneButtons = nullptr;
};

} // namespace switchyard::ui
