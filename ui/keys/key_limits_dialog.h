#pragma once

#include "control/client_key_commands.h"
#include "control/engine_snapshot.h"

#include <QDialog>

class QDialogButtonBox;
class QLabel;
class QPushButton;

namespace switchyard {
class EngineBridge;
}

namespace switchyard::ui {

class KeyLimitsFields;

// Edits the limits of a key created through the admin API, as PATCH /admin/v1/keys/{id} does,
// starting from the values the key has. Closes when the engine took them; a refusal is shown in
// the dialog in the admin API's words. Deletes itself when closed.
class KeyLimitsDialog final : public QDialog {
    Q_OBJECT
public:
    KeyLimitsDialog(EngineBridge &bridge, const ClientKeyListing &key, QWidget *parent = nullptr);

protected:
    void changeEvent(QEvent *event) override;

private:
    void retranslateUi();
    void save();
    void answered(quint64 ticket, const switchyard::ClientKeyCommandResult &result);

    EngineBridge &m_bridge;
    ClientKeyListing m_key;
    quint64 m_ticket = 0; // the command waiting for its answer; 0 when none

    QLabel *m_hint;
    KeyLimitsFields *m_limits = nullptr;
    QLabel *m_error;
    QDialogButtonBox *m_buttons;
    QPushButton *m_saveButton;
};

} // namespace switchyard::ui
