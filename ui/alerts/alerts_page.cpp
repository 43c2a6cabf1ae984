#include "ui/alerts/alerts_page.h"

#include "ui/alerts/alerts_model.h"
#include "ui/common/widget_helpers.h"

#include <QEvent>
#include <QFrame>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QTableView>
#include <QVBoxLayout>

namespace switchyard::ui {

namespace {

QTableView *makeTable(const QString &objectName, QAbstractItemModel *model, QWidget *parent)
{
    auto *table = new QTableView(parent);
    table->setObjectName(objectName);
    table->setModel(model);
    table->setAlternatingRowColors(true);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setSelectionMode(QAbstractItemView::SingleSelection);
    table->setShowGrid(false);
    table->setWordWrap(false);
    table->verticalHeader()->hide();
    table->horizontalHeader()->setHighlightSections(false);
    table->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    // The last column takes what the others, fitted to their content, leave.
    table->horizontalHeader()->setSectionResizeMode(model->columnCount() - 1, QHeaderView::Stretch);
    return table;
}

// Fits every column but the stretching last one to its content. Called when rows come: alerts
// come a few an hour, and a header left to resize itself on every 10 Hz refresh would not be.
void fitColumns(QTableView *table)
{
    for (int column = 0; column + 1 < table->model()->columnCount(); ++column)
        table->resizeColumnToContents(column);
}

} // namespace

AlertsPage::AlertsPage(QWidget *parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("alertsPage"));
    m_activeModel = new ActiveAlertsModel(this);
    m_eventsModel = new AlertEventsModel(this);

    m_page = new QVBoxLayout(this);
    m_page->setContentsMargins(16, 16, 16, 12);
    m_page->setSpacing(12);

    m_activeCard = makeCard(QStringLiteral("activeAlertsCard"), this);
    auto *activeLayout = new QVBoxLayout(m_activeCard);
    activeLayout->setContentsMargins(12, 12, 12, 12);
    activeLayout->setSpacing(6);
    m_activeTitle = makeLabel(TextRole::SectionTitle, m_activeCard);
    m_activeTitle->setObjectName(QStringLiteral("activeAlertsTitle"));
    m_activeTitle->setFont(sectionTitleFont(font()));
    m_activeHint = makeLabel(TextRole::SectionHint, m_activeCard);
    m_activeHint->setObjectName(QStringLiteral("activeAlertsHint"));
    m_activeHint->setWordWrap(true);
    m_allClear = makeLabel(TextRole::Hint, m_activeCard);
    m_allClear->setObjectName(QStringLiteral("alertsAllClear"));
    setTone(m_allClear, Tone::Good);
    m_activeTable = makeTable(QStringLiteral("activeAlerts"), m_activeModel, m_activeCard);
    activeLayout->addWidget(m_activeTitle);
    activeLayout->addWidget(m_activeHint);
    activeLayout->addWidget(m_allClear);
    activeLayout->addWidget(m_activeTable, 1);
    m_page->addWidget(m_activeCard, 2);

    QFrame *eventsCard = makeCard(QStringLiteral("alertEventsCard"), this);
    auto *eventsLayout = new QVBoxLayout(eventsCard);
    eventsLayout->setContentsMargins(12, 12, 12, 12);
    eventsLayout->setSpacing(6);
    m_eventsTitle = makeLabel(TextRole::SectionTitle, eventsCard);
    m_eventsTitle->setFont(sectionTitleFont(font()));
    m_eventsHint = makeLabel(TextRole::SectionHint, eventsCard);
    m_eventsHint->setWordWrap(true);
    m_eventsTable = makeTable(QStringLiteral("alertEvents"), m_eventsModel, eventsCard);
    eventsLayout->addWidget(m_eventsTitle);
    eventsLayout->addWidget(m_eventsHint);
    eventsLayout->addWidget(m_eventsTable, 1);
    m_page->addWidget(eventsCard, 3);

    retranslateUi();
    applyAlerts({});
}

void AlertsPage::applyAlerts(const alerts::AlertsState &state)
{
    m_state = state;
    const int eventsBefore = m_eventsModel->rowCount();
    const int activeBefore = m_activeModel->rowCount();
    m_activeModel->applyAlerts(state.active);
    m_eventsModel->applyEvents(state.recent);
    if (m_eventsModel->rowCount() != eventsBefore || eventsBefore == 0)
        fitColumns(m_eventsTable);
    if (m_activeModel->rowCount() != activeBefore || activeBefore == 0)
        fitColumns(m_activeTable);
    const bool clear = state.active.isEmpty();
    m_allClear->setVisible(clear);
    m_activeTable->setVisible(!clear);
    // All clear, the active card is as short as its text and the events take the rest: its
    // title, hint and "all clear" sit together instead of spread down the card. Set only when it
    // changes: setting it lays the page out again, and alerts arrive ten times a second.
    const int stretch = clear ? 0 : 2;
    if (m_page->stretch(m_page->indexOf(m_activeCard)) != stretch)
        m_page->setStretchFactor(m_activeCard, stretch);
    refreshHints();
}

void AlertsPage::refreshHints()
{
    const QLocale locale;
    QString events =
        tr("%n raised or cleared since the gateway started", nullptr, int(m_state.eventsTotal));
    const alerts::WebhookCounts &hook = m_state.webhook;
    if (hook.enabled) {
        events += QStringLiteral("  ·  ") +
                  tr("webhook: %1 delivered, %2 failed, %3 dropped, %4 waiting")
                      .arg(locale.toString(hook.delivered), locale.toString(hook.failed),
                           locale.toString(hook.dropped), locale.toString(hook.queued));
    } else {
        events += QStringLiteral("  ·  ") + tr("no webhook configured (alerts.webhook)");
    }
    m_eventsHint->setText(events);
}

void AlertsPage::retranslateUi()
{
    m_activeTitle->setText(tr("Active alerts"));
    m_activeHint->setText(
        tr("An alert is raised once its rule's condition has held for the rule's duration, and "
           "cleared once it has not held for its clear_after. Rules are in the config's alerts "
           "section."));
    m_allClear->setText(tr("All clear: no alert is raised."));
    m_eventsTitle->setText(tr("Recent events"));
    m_activeModel->retranslate();
    m_eventsModel->retranslate();
    refreshHints();
}

void AlertsPage::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslateUi();
    QWidget::changeEvent(event);
}

} // namespace switchyard::ui
