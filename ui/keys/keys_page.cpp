#include "ui/keys/keys_page.h"

#include "ui/common/widget_helpers.h"
#include "ui/keys/keys_model.h"

#include <QEvent>
#include <QFrame>
#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

namespace switchyard::ui {

KeysPage::KeysPage(QWidget *parent) : QWidget(parent), m_model(new KeysModel(this))
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

    m_view = new QTableView(card);
    m_view->setObjectName(QStringLiteral("keysTable"));
    m_view->setModel(m_model);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->verticalHeader()->hide();
    m_view->setShowGrid(false);
    m_view->setAlternatingRowColors(true);
    m_view->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    m_view->setTextElideMode(Qt::ElideRight);
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_view->horizontalHeader()->setSectionResizeMode(KeysModel::ModelsColumn, QHeaderView::Stretch);
    outer->addWidget(m_view, 1);
    // With no keys the table is hidden and this takes its height: the title, the hint and the
    // empty line stay together at the top instead of spread down the card.
    outer->addStretch(0);

    connect(m_model, &QAbstractItemModel::rowsInserted, this, &KeysPage::refreshEmptyState);
    connect(m_model, &QAbstractItemModel::rowsRemoved, this, &KeysPage::refreshEmptyState);
    retranslateUi();
    refreshEmptyState();
}

void KeysPage::applySnapshot(const EngineSnapshot &snapshot)
{
    m_model->applyKeys(snapshot.clientKeys);
}

void KeysPage::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange) {
        retranslateUi();
        m_model->retranslate();
    }
    QWidget::changeEvent(event);
}

void KeysPage::retranslateUi()
{
    m_title->setText(tr("Client API keys"));
    m_hint->setText(tr("Each request's tenant comes from its key. Keys are issued in the config "
                       "file (auth.keys) or with POST /admin/v1/keys; their secrets are never "
                       "shown here."));
    m_empty->setText(tr("No client keys: the gateway is open, and a request's tenant is what "
                        "its x-switchyard-tenant header says."));
}

void KeysPage::refreshEmptyState()
{
    const bool empty = m_model->rowCount() == 0;
    m_empty->setVisible(empty);
    m_view->setVisible(!empty);
}

} // namespace switchyard::ui
