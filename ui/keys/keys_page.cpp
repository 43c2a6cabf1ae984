#include "ui/keys/keys_page.h"

#include "bridge/engine_bridge.h"
#include "ui/common/widget_helpers.h"
#include "ui/keys/issue_key_dialog.h"
#include "ui/keys/key_limits_dialog.h"
#include "ui/keys/key_limits_fields.h"
#include "ui/keys/keys_model.h"

#include <QEvent>
#include <QFrame>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

namespace switchyard::ui {

namespace {

QPushButton *actionButton(const QString &objectName, QWidget *parent)
{
    auto *button = new QPushButton(parent);
    button->setObjectName(objectName);
    button->setProperty("providerAction", true); // the console's bordered action button
    return button;
}

} // namespace

KeysPage::KeysPage(EngineBridge &bridge, QWidget *parent)
    : QWidget(parent), m_bridge(bridge), m_model(new KeysModel(this))
{
    setObjectName(QStringLiteral("keysPage"));
    auto *page = new QVBoxLayout(this);
    page->setContentsMargins(16, 16, 16, 16);
    QFrame *card = makeCard(QStringLiteral("keysCard"), this);
    page->addWidget(card, 1);

    auto *outer = new QVBoxLayout(card);
    outer->setContentsMargins(16, 14, 16, 14);
    m_title = makeLabel(TextRole::SectionTitle, card);
    m_title->setObjectName(QStringLiteral("keysTitle"));
    m_title->setFont(sectionTitleFont(font()));
    outer->addWidget(m_title);
    m_hint = makeLabel(TextRole::SectionHint, card);
    m_hint->setObjectName(QStringLiteral("keysHint"));
    m_hint->setWordWrap(true);
    outer->addWidget(m_hint);
    m_empty = makeLabel(TextRole::Hint, card);
    m_empty->setObjectName(QStringLiteral("keysEmptyHint"));
    m_empty->setWordWrap(true);
    outer->addWidget(m_empty);

    auto *actions = new QHBoxLayout;
    m_issueButton = actionButton(QStringLiteral("issueKeyAction"), card);
    m_editButton = actionButton(QStringLiteral("editKeyLimitsAction"), card);
    m_revokeButton = actionButton(QStringLiteral("revokeKeyAction"), card);
    actions->addWidget(m_issueButton);
    actions->addWidget(m_editButton);
    actions->addWidget(m_revokeButton);
    m_status = makeLabel(TextRole::Hint, card);
    m_status->setObjectName(QStringLiteral("keysStatus"));
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_status->setWordWrap(true);
    actions->addSpacing(8);
    actions->addWidget(m_status, 1);
    outer->addLayout(actions);

    m_view = new QTableView(card);
    m_view->setObjectName(QStringLiteral("keysTable"));
    // A key that goes (revoked here or anywhere) takes the selection with it: left to the view,
    // the selection would move to the next key, and Revoke… would offer that one. Connected
    // before the view is given the model, so this runs before the view picks the next row.
    connect(m_model, &QAbstractItemModel::rowsAboutToBeRemoved, this,
            [this](const QModelIndex &, int first, int last) {
                const QModelIndexList selected = m_view->selectionModel()->selectedRows();
                if (!selected.isEmpty() && selected.first().row() >= first &&
                    selected.first().row() <= last)
                    m_view->selectionModel()->clear();
            });
    m_view->setModel(m_model);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->verticalHeader()->hide();
    m_view->setShowGrid(false);
    m_view->setAlternatingRowColors(true);
    m_view->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    m_view->setTextElideMode(Qt::ElideRight);
    m_view->setWordWrap(false);
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_view->horizontalHeader()->setSectionResizeMode(KeysModel::ModelsColumn, QHeaderView::Stretch);
    outer->addWidget(m_view, 1);
    // With no keys the table is hidden and this takes its height: the title, the hint, the
    // empty line and the actions stay together at the top instead of spread down the card.
    outer->addStretch(0);

    // The columns follow what they hold: a key issued with a longer id than any before widens
    // its column (the header sizes to contents only when it lays out, not per new row).
    connect(m_model, &QAbstractItemModel::rowsInserted, this, &KeysPage::fitColumns);
    connect(m_model, &QAbstractItemModel::dataChanged, this, &KeysPage::fitColumns);
    connect(m_model, &QAbstractItemModel::rowsInserted, this, &KeysPage::refreshEmptyState);
    connect(m_model, &QAbstractItemModel::rowsRemoved, this, &KeysPage::refreshEmptyState);
    // A key's row changes when its limits or its source do: what the buttons offer may too.
    connect(m_model, &QAbstractItemModel::dataChanged, this, &KeysPage::refreshActions);
    connect(m_view->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &KeysPage::refreshActions);

    connect(m_issueButton, &QPushButton::clicked, this, &KeysPage::openIssueDialog);
    connect(m_editButton, &QPushButton::clicked, this, &KeysPage::openLimitsDialog);
    connect(m_revokeButton, &QPushButton::clicked, this, &KeysPage::confirmRevoke);
    connect(&m_bridge, &EngineBridge::clientKeyCommandDone, this, &KeysPage::answered);
    retranslateUi();
    refreshEmptyState();
}

void KeysPage::applySnapshot(const EngineSnapshot &snapshot)
{
    m_model->applyKeys(snapshot.clientKeys);
    if (!m_selectWhenListed.isEmpty() && selectKey(m_selectWhenListed))
        m_selectWhenListed.clear();
}

bool KeysPage::selectKey(const QString &id)
{
    const QList<ClientKeyListing> &rows = m_model->rows();
    for (int row = 0; row < rows.size(); ++row) {
        if (rows.at(row).id == id) {
            m_view->selectRow(row);
            return true;
        }
    }
    return false;
}

void KeysPage::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange) {
        retranslateUi();
        m_model->retranslate(); // dataChanged: the columns fit the new words
    }
    QWidget::changeEvent(event);
}

void KeysPage::retranslateUi()
{
    m_title->setText(tr("Client API keys"));
    m_hint->setText(tr("Each request's tenant comes from its key. Keys are issued here, with "
                       "POST /admin/v1/keys or in the config file (auth.keys); a key's secret is "
                       "shown once, when it is issued, and never again."));
    m_empty->setText(tr("No client keys: the gateway is open, and a request's tenant is what "
                        "its x-switchyard-tenant header says."));
    m_issueButton->setText(tr("Issue key…"));
    m_editButton->setText(tr("Edit limits…"));
    m_revokeButton->setText(tr("Revoke…"));
    refreshActions();
}

void KeysPage::fitColumns()
{
    // Room beside each column's widest text, so that a number and the list after it do not run
    // together.
    constexpr int kGapPx = 16;
    for (int column = 0; column < KeysModel::ColumnCount; ++column) {
        if (column == KeysModel::ModelsColumn)
            continue;
        m_view->resizeColumnToContents(column);
        m_view->setColumnWidth(column, m_view->columnWidth(column) + kGapPx);
    }
}

void KeysPage::refreshEmptyState()
{
    const bool empty = m_model->rowCount() == 0;
    m_empty->setVisible(empty);
    m_view->setVisible(!empty);
    refreshActions();
}

std::optional<ClientKeyListing> KeysPage::selectedKey() const
{
    const QModelIndexList selected = m_view->selectionModel()->selectedRows();
    if (selected.isEmpty() || selected.first().row() >= m_model->rowCount())
        return std::nullopt;
    return m_model->rows().at(selected.first().row());
}

void KeysPage::refreshActions()
{
    const std::optional<ClientKeyListing> key = selectedKey();
    // A file key is changed where it is defined: the engine would refuse with 409.
    const bool editable = key && !key->definedInFile;
    m_editButton->setEnabled(editable);
    m_revokeButton->setEnabled(editable && m_revokeTicket == 0);
    const QString why =
        key && key->definedInFile
            ? tr("Key %1 is defined in the config file: change or remove it under auth.keys there")
                  .arg(key->id)
            : QString();
    m_editButton->setToolTip(why);
    m_revokeButton->setToolTip(why);
}

void KeysPage::openIssueDialog()
{
    auto *dialog = new IssueKeyDialog(m_bridge, this);
    connect(dialog, &IssueKeyDialog::issued, this, [this](const QString &keyId) {
        showStatus(tr("Key %1 issued.").arg(keyId), false);
        m_selectWhenListed = keyId;
        if (selectKey(keyId))
            m_selectWhenListed.clear();
    });
    dialog->open();
}

void KeysPage::openLimitsDialog()
{
    const std::optional<ClientKeyListing> key = selectedKey();
    if (!key || key->definedInFile)
        return;
    auto *dialog = new KeyLimitsDialog(m_bridge, *key, this);
    connect(dialog, &QDialog::accepted, this,
            [this, id = key->id] { showStatus(tr("Limits of key %1 saved.").arg(id), false); });
    dialog->open();
}

void KeysPage::confirmRevoke()
{
    const std::optional<ClientKeyListing> key = selectedKey();
    if (!key || key->definedInFile || m_revokeTicket != 0)
        return;
    auto *box = new QMessageBox(QMessageBox::Warning, tr("Revoke key %1").arg(key->id),
                                tr("Revoke key %1 of tenant %2?").arg(key->id, key->tenant),
                                QMessageBox::NoButton, this);
    box->setObjectName(QStringLiteral("revokeKeyConfirmation"));
    box->setInformativeText(tr("Requests with it are refused from now on (401), on every node of "
                               "a fleet. This cannot be undone: the tenant needs a new key."));
    box->setAttribute(Qt::WA_DeleteOnClose);
    QPushButton *revoke = box->addButton(tr("Revoke"), QMessageBox::DestructiveRole);
    revoke->setObjectName(QStringLiteral("confirmRevokeButton"));
    box->setDefaultButton(box->addButton(QMessageBox::Cancel));
    connect(box, &QMessageBox::buttonClicked, this,
            [this, revoke, id = key->id](QAbstractButton *clicked) {
                if (clicked != revoke)
                    return;
                m_revokeTicket = nextKeyCommandTicket();
                refreshActions();
                m_bridge.revokeClientKey(m_revokeTicket, id);
            });
    box->open();
}

void KeysPage::answered(quint64 ticket, const ClientKeyCommandResult &result)
{
    if (ticket == 0 || ticket != m_revokeTicket)
        return;
    m_revokeTicket = 0;
    refreshActions();
    if (result.ok())
        showStatus(tr("Key %1 revoked.").arg(result.keyId), false);
    else
        showStatus(result.error, true);
}

void KeysPage::showStatus(const QString &text, bool failed)
{
    m_status->setText(text);
    setTone(m_status, failed ? Tone::Bad : Tone::Good);
}

} // namespace switchyard::ui
