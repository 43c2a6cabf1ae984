#include "ui/keys/issue_key_dialog.h"

#include "bridge/engine_bridge.h"
#include "ui/common/widget_helpers.h"
#include "ui/keys/key_limits_fields.h"

#include <QApplication>
#include <QClipboard>
#include <QDialogButtonBox>
#include <QEvent>
#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace switchyard::ui {

IssueKeyDialog::IssueKeyDialog(EngineBridge &bridge, QWidget *parent)
    : QDialog(parent), m_bridge(bridge)
{
    setObjectName(QStringLiteral("issueKeyDialog"));
    // The key's text must not outlive the one time it is shown.
    setAttribute(Qt::WA_DeleteOnClose);
    setMinimumWidth(520);
    auto *layout = new QVBoxLayout(this);

    auto *form = new QWidget(this);
    m_form = form;
    auto *formLayout = new QVBoxLayout(form);
    formLayout->setContentsMargins(0, 0, 0, 0);
    m_formHint = makeLabel(TextRole::SectionHint, form);
    m_formHint->setWordWrap(true);
    formLayout->addWidget(m_formHint);
    auto *fields = new QFormLayout;
    m_tenantLabel = new QLabel(form);
    m_tenant = new QLineEdit(form);
    m_tenant->setObjectName(QStringLiteral("issueTenantField"));
    m_tenantLabel->setBuddy(m_tenant);
    fields->addRow(m_tenantLabel, m_tenant);
    m_idLabel = new QLabel(form);
    m_id = new QLineEdit(form);
    m_id->setObjectName(QStringLiteral("issueIdField"));
    m_idLabel->setBuddy(m_id);
    fields->addRow(m_idLabel, m_id);
    m_limits = new KeyLimitsFields(fields, form);
    formLayout->addLayout(fields);
    m_error = makeLabel(TextRole::Hint, form);
    m_error->setObjectName(QStringLiteral("issueKeyError"));
    m_error->setWordWrap(true);
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    setTone(m_error, Tone::Bad);
    m_error->hide();
    formLayout->addWidget(m_error);
    formLayout->addStretch(1);
    m_formButtons = new QDialogButtonBox(QDialogButtonBox::Cancel, form);
    m_issueButton = m_formButtons->addButton(QString(), QDialogButtonBox::AcceptRole);
    m_issueButton->setObjectName(QStringLiteral("issueKeyButton"));
    m_issueButton->setDefault(true);
    formLayout->addWidget(m_formButtons);
    layout->addWidget(form);

    auto *shown = new QWidget(this);
    m_shown = shown;
    shown->setObjectName(QStringLiteral("issuedKeyStage"));
    auto *shownLayout = new QVBoxLayout(shown);
    shownLayout->setContentsMargins(0, 0, 0, 0);
    m_issuedTitle = makeLabel(TextRole::SectionTitle, shown);
    m_issuedTitle->setObjectName(QStringLiteral("issuedKeyTitle"));
    m_issuedTitle->setFont(sectionTitleFont(font()));
    m_issuedTitle->setWordWrap(true);
    shownLayout->addWidget(m_issuedTitle);
    auto *secretRow = new QHBoxLayout;
    m_secret = new QLineEdit(shown);
    m_secret->setObjectName(QStringLiteral("issuedSecretField"));
    m_secret->setReadOnly(true);
    m_secret->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    secretRow->addWidget(m_secret, 1);
    m_copyButton = new QPushButton(shown);
    m_copyButton->setObjectName(QStringLiteral("copySecretButton"));
    secretRow->addWidget(m_copyButton);
    shownLayout->addLayout(secretRow);
    m_secretNote = makeLabel(TextRole::Hint, shown);
    m_secretNote->setObjectName(QStringLiteral("issuedSecretNote"));
    m_secretNote->setWordWrap(true);
    setTone(m_secretNote, Tone::Warning);
    shownLayout->addWidget(m_secretNote);
    shownLayout->addStretch(1);
    m_doneButtons = new QDialogButtonBox(QDialogButtonBox::Close, shown);
    m_doneButtons->button(QDialogButtonBox::Close)
        ->setObjectName(QStringLiteral("issuedDoneButton"));
    shownLayout->addWidget(m_doneButtons);
    shown->hide();
    layout->addWidget(shown);

    connect(m_tenant, &QLineEdit::textChanged, this, &IssueKeyDialog::refreshIssueButton);
    connect(m_formButtons, &QDialogButtonBox::accepted, this, &IssueKeyDialog::issue);
    connect(m_formButtons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_doneButtons, &QDialogButtonBox::rejected, this, &QDialog::accept);
    connect(m_copyButton, &QPushButton::clicked, this, [this] {
        QApplication::clipboard()->setText(m_secret->text());
        m_copyButton->setText(tr("Copied"));
    });
    connect(&m_bridge, &EngineBridge::clientKeyCommandDone, this, &IssueKeyDialog::answered);
    retranslateUi();
    refreshIssueButton();
}

void IssueKeyDialog::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslateUi();
    QDialog::changeEvent(event);
}

void IssueKeyDialog::retranslateUi()
{
    setWindowTitle(tr("Issue a client key"));
    m_formHint->setText(tr("Requests with the key belong to its tenant, within its limits. Its "
                           "text is shown once, when it is issued."));
    m_tenantLabel->setText(tr("T&enant:"));
    m_tenant->setPlaceholderText(tr("required, e.g. team-a"));
    m_idLabel->setText(tr("Key &id:"));
    m_id->setPlaceholderText(tr("optional; made up when empty"));
    m_limits->retranslate();
    m_issueButton->setText(tr("Issue key"));
    m_copyButton->setText(tr("Copy"));
    m_secretNote->setText(tr("This is the only time the key is shown: Switchyard keeps only its "
                             "SHA-256. Copy it now and hand it to its user; once this dialog is "
                             "closed, a lost key can only be revoked and another issued."));
    if (!m_issuedId.isEmpty())
        m_issuedTitle->setText(tr("Key %1 issued for tenant %2").arg(m_issuedId, m_issuedTenant));
}

void IssueKeyDialog::refreshIssueButton()
{
    m_issueButton->setEnabled(m_ticket == 0 && !m_tenant->text().trimmed().isEmpty());
}

void IssueKeyDialog::setBusy(bool busy)
{
    m_tenant->setEnabled(!busy);
    m_id->setEnabled(!busy);
    m_limits->setEnabled(!busy);
    refreshIssueButton();
}

void IssueKeyDialog::issue()
{
    if (m_ticket != 0 || m_tenant->text().trimmed().isEmpty())
        return;
    m_ticket = nextKeyCommandTicket();
    m_error->hide();
    setBusy(true);
    m_bridge.issueClientKey(m_ticket, m_tenant->text(), m_id->text().trimmed(), m_limits->limits());
}

void IssueKeyDialog::answered(quint64 ticket, const ClientKeyCommandResult &result)
{
    if (ticket != m_ticket)
        return;
    m_ticket = 0;
    setBusy(false);
    if (!result.ok()) {
        m_error->setText(result.error);
        m_error->show();
        return;
    }
    showSecret(result);
}

void IssueKeyDialog::showSecret(const ClientKeyCommandResult &result)
{
    m_issuedId = result.keyId;
    m_issuedTenant = m_tenant->text().trimmed();
    m_secret->setText(QString::fromLatin1(result.secret));
    m_secret->setCursorPosition(0);
    m_form->hide();
    m_shown->show();
    retranslateUi();
    // As tall as the key's text and its note, not as the form was: the layout learns of the
    // swap now rather than at its next event.
    layout()->activate();
    // The note wraps: its height depends on the dialog's width, which sizeHint() cannot know.
    const int height = heightForWidth(width());
    resize(width(), height > 0 ? height : sizeHint().height());
    m_copyButton->setFocus();
    emit issued(result.keyId);
}

} // namespace switchyard::ui
