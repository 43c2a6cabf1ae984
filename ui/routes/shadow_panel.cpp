#include "ui/routes/shadow_panel.h"

#include "ui/common/widget_helpers.h"
#include "ui/routes/shadow_comparison_model.h"

#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>
#include <limits>

namespace switchyard::ui {

ShadowPanel::ShadowPanel(QWidget *parent) : QFrame(parent), m_model(new ShadowComparisonModel(this))
{
    setObjectName(QStringLiteral("shadowCard"));
    setProperty("card", true);
    auto *outer = new QVBoxLayout(this);
    outer->setContentsMargins(16, 14, 16, 14);
    auto *header = new QHBoxLayout;
    m_title = makeLabel(TextRole::SectionTitle, this);
    m_title->setFont(sectionTitleFont(font()));
    header->addWidget(m_title);
    header->addStretch(1);
    m_routeBox = new QComboBox(this);
    m_routeBox->setObjectName(QStringLiteral("shadowRouteBox"));
    m_routeBox->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    header->addWidget(m_routeBox);
    outer->addLayout(header);
    m_empty = makeLabel(TextRole::Hint, this);
    m_empty->setWordWrap(true);
    outer->addWidget(m_empty);
    m_providers = makeLabel(TextRole::Hint, this);
    m_providers->setWordWrap(true);
    outer->addWidget(m_providers);

    m_view = new QTableView(this);
    m_view->setObjectName(QStringLiteral("shadowTable"));
    m_view->setModel(m_model);
    m_view->setSelectionMode(QAbstractItemView::NoSelection);
    m_view->setFocusPolicy(Qt::NoFocus);
    m_view->verticalHeader()->hide();
    m_view->setShowGrid(false);
    m_view->setTextElideMode(Qt::ElideRight);
    m_view->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_view->horizontalHeader()->setSectionResizeMode(ShadowComparisonModel::MeasureColumn,
                                                     QHeaderView::Stretch);
    // Every measure at once, never a scroll bar: the rows are few and fixed.
    m_view->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_view->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_view->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 8);
    m_view->setMinimumHeight(m_view->horizontalHeader()->sizeHint().height() +
                             ShadowComparisonModel::MeasureCount *
                                 m_view->verticalHeader()->defaultSectionSize() +
                             2 * m_view->frameWidth());
    outer->addWidget(m_view, 1);
    m_leftOut = makeLabel(TextRole::Hint, this);
    m_leftOut->setWordWrap(true);
    outer->addWidget(m_leftOut);

    connect(m_model, &ShadowComparisonModel::routesChanged, this, &ShadowPanel::refreshRoutes);
    connect(m_model, &QAbstractItemModel::modelReset, this, &ShadowPanel::refreshControls);
    connect(m_model, &QAbstractItemModel::dataChanged, this, &ShadowPanel::refreshControls);
    connect(m_routeBox, &QComboBox::activated, this,
            [this](int index) { m_model->setRoute(m_routeBox->itemText(index)); });
    retranslateUi();
    refreshControls();
}

void ShadowPanel::applyFeed(const telemetry::TraceFeed &feed)
{
    m_model->addRecords(feed.finished);
    if (feed.finishedLeftOut > 0) {
        m_recordsLeftOut += feed.finishedLeftOut;
        retranslateUi();
    }
}

void ShadowPanel::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange) {
        retranslateUi();
        m_model->retranslate();
    }
    QFrame::changeEvent(event);
}

void ShadowPanel::retranslateUi()
{
    m_title->setText(tr("Shadow traffic"));
    m_routeBox->setToolTip(tr("The route whose live requests and shadow calls are compared"));
    m_empty->setText(tr("No shadow call has finished since the console opened. A rule with "
                        "`shadow: {target, share}` also sends a share of its requests to another "
                        "provider, to compare it with the live one; the client only ever gets the "
                        "live answer."));
    m_leftOut->setText(
        tr("%n finished request(s) came faster than the console refreshes and are not counted.",
           nullptr,
           int(std::min<quint64>(m_recordsLeftOut, quint64(std::numeric_limits<int>::max())))));
    m_leftOut->setVisible(m_recordsLeftOut > 0);
    refreshControls();
}

void ShadowPanel::refreshRoutes()
{
    const QList<QString> &routes = m_model->routes();
    for (int index = m_routeBox->count(); index < routes.size(); ++index)
        m_routeBox->addItem(routes.at(index));
    m_routeBox->setCurrentText(m_model->route());
    refreshControls();
}

void ShadowPanel::refreshControls()
{
    const bool any = m_model->rowCount() > 0;
    m_empty->setVisible(!any);
    m_view->setVisible(any);
    m_routeBox->setVisible(any);
    const ShadowTally *tally = m_model->tally(m_model->route());
    m_providers->setVisible(any && tally);
    if (any && tally) {
        m_providers->setText(
            //: The providers compared, e.g. "cloud-a against candidate, since the console opened"
            tr("%1 against %2, since the console opened")
                .arg(tally->live.provider.isEmpty() ? QStringLiteral("–") : tally->live.provider,
                     tally->shadow.provider));
    }
}

} // namespace switchyard::ui
