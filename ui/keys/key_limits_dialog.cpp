#include "ui/keys/key_limits_dialog.h"

#include "bridge/engine_bridge.h"
#include "ui/common/widget_helpers.h"
#include "ui/keys/key_limits_fields.h"

#include <QDialogButtonBox>
#include <QEvent>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace switchyard::ui {

KeyLimitsDialog::KeyLimitsDialog(EngineBridge &bridge, const ClientKeyListing &key, QWidget *parent)
    : QDialog(parent), m_bridge(bridge), m_key(key), m_hint(makeLabel(TextRole::SectionHint, this)),
      m_error(makeLabel(TextRole::Hint, this)),
      m_buttons(new QDialogButtonBox(QDialogButtonBox::Cancel, this)),
      m_saveButton(m_buttons->addButton(QString(), QDialogButtonBox::AcceptRole))
{
    setObjectName(QStringLiteral("keyLimitsDialog"));
    setAttribute(Qt::WA_DeleteOnClose);
    setMinimumWidth(480);
    auto *layout = new QVBoxLayout(this);
    m_hint->setWordWrap(true);
    layout->addWidget(m_hint);
    auto *fields = new QFormLayout;
    m_limits = new KeyLimitsFields(fields, this);
    m_limits->setLimits(key.requestsPerMinute, key.tokensPerMinute, key.models);
    layout->addLayout(fields);
    m_error->setObjectName(QStringLiteral("keyLimitsError"));
    m_error->setWordWrap(true);
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    setTone(m_error, Tone::Bad);
    m_error->hide();
    layout->addWidget(m_error);
    layout->addStretch(1);
    m_saveButton->setObjectName(QStringLiteral("saveKeyLimitsButton"));
    m_saveButton->setDefault(true);
    layout->addWidget(m_buttons);

    connect(m_buttons, &QDialogButtonBox::accepted, this, &KeyLimitsDialog::save);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(&m_bridge, &EngineBridge::clientKeyCommandDone, this, &KeyLimitsDialog::answered);
    retranslateUi();
}

void KeyLimitsDialog::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslateUi();
    QDialog::changeEvent(event);
}

void KeyLimitsDialog::retranslateUi()
{
    setWindowTitle(tr("Edit the limits of key %1").arg(m_key.id));
    m_hint->setText(tr("Key %1 of tenant %2. The new limits apply from its next request, on "
                       "every node of a fleet.")
                        .arg(m_key.id, m_key.tenant));
    m_limits->retranslate();
    m_saveButton->setText(tr("Save limits"));
}

void KeyLimitsDialog::save()
{
    if (m_ticket != 0)
        return;
    m_ticket = nextKeyCommandTicket();
    m_error->hide();
    m_limits->setEnabled(false);
    m_saveButton->setEnabled(false);
    // Every limit, as the dialog shows it: what the operator sees is what the key gets.
    const config::ClientKeyLimits limits = m_limits->limits();
    config::ClientKeyLimitsEdit edit;
    edit.requestsPerMinute = limits.requestsPerMinute;
    edit.tokensPerMinute = limits.tokensPerMinute;
    edit.models = limits.models;
    m_bridge.editClientKeyLimits(m_ticket, m_key.id, edit);
}

void KeyLimitsDialog::answered(quint64 ticket, const ClientKeyCommandResult &result)
{
    if (ticket != m_ticket)
        return;
    m_ticket = 0;
    m_limits->setEnabled(true);
    m_saveButton->setEnabled(true);
    if (!result.ok()) {
        m_error->setText(result.error);
        m_error->show();
        return;
    }
    accept();
}

} // namespace switchyard::ui
