#include "ui/overview/breaker_timeline_panel.h"

#include "ui/common/widget_helpers.h"
#include "ui/overview/breaker_events_model.h"
#include "ui/overview/breaker_timeline_view.h"

#include <QButtonGroup>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QStackedWidget>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

namespace switchyard::ui {

BreakerTimelinePanel::BreakerTimelinePanel(QWidget *parent) : QFrame(parent)
{
    setObjectName(QStringLiteral("breakerEventsCard"));
    setProperty("card", true);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(12, 12, 12, 8);
    layout->setSpacing(6);

    auto *header = new QHBoxLayout;
    header->setContentsMargins(4, 0, 4, 0);
    header->setSpacing(0);
    m_title = makeLabel(TextRole::SectionTitle, this);
    m_title->setFont(sectionTitleFont(font()));
    header->addWidget(m_title);
    header->addSpacing(12);

    // Two views of the same events: a segmented switch, not tabs, so the card keeps one title.
    auto *switchGroup = new QButtonGroup(this);
    for (QPushButton **button : {&m_lanesButton, &m_transitionsButton}) {
        *button = new QPushButton(this);
        (*button)->setCheckable(true);
        (*button)->setCursor(Qt::PointingHandCursor);
        (*button)->setProperty("segment", true);
        switchGroup->addButton(*button);
        header->addWidget(*button);
    }
    m_lanesButton->setObjectName(QStringLiteral("timelineLanesButton"));
    m_lanesButton->setProperty("segmentPosition", QStringLiteral("first"));
    m_transitionsButton->setObjectName(QStringLiteral("timelineTransitionsButton"));
    m_transitionsButton->setProperty("segmentPosition", QStringLiteral("last"));
    m_lanesButton->setChecked(true);
    header->addSpacing(12);
    m_hint = makeLabel(TextRole::SectionHint, this);
    m_hint->setObjectName(QStringLiteral("timelineHint"));
    m_hint->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    // The hint gives way before the buttons do: half a card on a 1280-pixel window is narrow.
    m_hint->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    header->addWidget(m_hint, 1);
    header->addSpacing(10);
    m_live = new QPushButton(this);
    m_live->setObjectName(QStringLiteral("timelineLiveButton"));
    m_live->setCheckable(true);
    m_live->setCursor(Qt::PointingHandCursor);
    m_live->setIcon(
        onOffDotIcon(QColor(0x9c, 0xa3, 0xaf), QColor(0x16, 0xa3, 0x4a), devicePixelRatioF()));
    m_live->setIconSize(QSize(10, 10));
    header->addWidget(m_live);
    layout->addLayout(header);

    m_pages = new QStackedWidget(this);
    m_view = new BreakerTimelineView(m_timeline, m_pages);
    m_pages->addWidget(m_view);

    m_transitionsPage = new QWidget(m_pages);
    auto *transitionsLayout = new QVBoxLayout(m_transitionsPage);
    transitionsLayout->setContentsMargins(0, 0, 0, 0);
    m_eventsModel = new BreakerEventsModel(this);
    m_eventsView = new QTableView(m_transitionsPage);
    m_eventsView->setObjectName(QStringLiteral("breakerEvents"));
    m_eventsView->setModel(m_eventsModel);
    m_eventsView->setShowGrid(false);
    m_eventsView->setWordWrap(false);
    m_eventsView->setAlternatingRowColors(true);
    m_eventsView->setSelectionMode(QAbstractItemView::NoSelection);
    m_eventsView->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_eventsView->setFrameShape(QFrame::NoFrame);
    m_eventsView->verticalHeader()->hide();
    m_eventsView->verticalHeader()->setDefaultSectionSize(QFontMetrics(font()).height() + 8);
    m_eventsView->horizontalHeader()->setStretchLastSection(true);
    m_eventsView->horizontalHeader()->setHighlightSections(false);
    m_eventsView->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    transitionsLayout->addWidget(m_eventsView, 1);
    m_eventsEmpty = makeLabel(TextRole::SectionHint, m_transitionsPage);
    m_eventsEmpty->setAlignment(Qt::AlignCenter);
    m_eventsEmpty->setWordWrap(true);
    transitionsLayout->addWidget(m_eventsEmpty, 1);
    m_pages->addWidget(m_transitionsPage);
    layout->addWidget(m_pages, 1);

    connect(m_lanesButton, &QPushButton::clicked, this, [this] { showTransitions(false); });
    connect(m_transitionsButton, &QPushButton::clicked, this, [this] { showTransitions(true); });
    connect(m_live, &QPushButton::clicked, this, [this] {
        m_view->followNow();
        refreshLive();
    });
    connect(m_view, &BreakerTimelineView::followingChanged, this, [this] {
        refreshLive();
        refreshHint();
    });
    connect(m_view, &BreakerTimelineView::spanChanged, this, [this] { refreshHint(); });
    connect(m_eventsModel, &QAbstractItemModel::rowsInserted, this,
            &BreakerTimelinePanel::refreshPlaceholder);
    connect(m_eventsModel, &QAbstractItemModel::rowsRemoved, this,
            &BreakerTimelinePanel::refreshPlaceholder);

    retranslate();
    refreshPlaceholder();
}

BreakerTimelinePanel::~BreakerTimelinePanel() = default;

void BreakerTimelinePanel::applySnapshot(const EngineSnapshot &snapshot, qint64 receivedAtMs)
{
    m_timeline.applySnapshot(snapshot, receivedAtMs);
    m_eventsModel->applyEvents(snapshot.recentBreakerEvents);
    m_view->refresh();
    if (!m_view->axis().following())
        refreshHint(); // the present moves on; the hint's "now" with it
}

void BreakerTimelinePanel::showTransitions(bool transitions)
{
    m_pages->setCurrentWidget(transitions ? m_transitionsPage : static_cast<QWidget *>(m_view));
    m_lanesButton->setChecked(!transitions);
    m_transitionsButton->setChecked(transitions);
    m_live->setVisible(!transitions);
    refreshHint();
}

bool BreakerTimelinePanel::showsTransitions() const
{
    return m_pages->currentWidget() == m_transitionsPage;
}

void BreakerTimelinePanel::retranslate()
{
    m_title->setText(tr("Breaker timeline"));
    //: Switch of the breaker card: one lane per provider on a time axis
    m_lanesButton->setText(tr("Lanes"));
    //: Switch of the breaker card: the table of breaker transitions, newest first
    m_transitionsButton->setText(tr("Transitions"));
    m_lanesButton->setToolTip(tr("One lane per provider: breaker state over time"));
    m_transitionsButton->setToolTip(tr("Every breaker transition and operator action, newest "
                                       "first"));
    m_eventsEmpty->setText(tr("No breaker has changed state yet. Trip a provider or start a "
                              "drill to see its breaker open, probe and close here."));
    m_eventsModel->retranslate();
    refreshLive();
    refreshHint();
    fitColumns();
}

void BreakerTimelinePanel::refreshLive()
{
    const bool following = m_view->axis().following();
    m_live->setChecked(following);
    //: The timeline follows the present; as a button, returns to it
    m_live->setText(tr("Live"));
    m_live->setToolTip(following ? tr("Following the present. Scroll to zoom, drag to look back.")
                                 : tr("Return to the present and follow it"));
}

void BreakerTimelinePanel::refreshHint()
{
    if (showsTransitions()) {
        m_hint->setText(tr("newest first"));
        return;
    }
    const TimelineAxis &axis = m_view->axis();
    const QString span = BreakerTimelineView::formatDuration(axis.spanMs());
    if (axis.following()) {
        //: %1 is the span the timeline shows, e.g. "last 5 min"
        m_hint->setText(tr("last %1").arg(span));
    } else {
        //: %1 is the span shown, %2 how far its right edge is behind the present
        m_hint->setText(
            tr("%1 shown, up to %2 ago")
                .arg(span, BreakerTimelineView::formatDuration(m_timeline.nowMs() - axis.endMs())));
    }
    m_hint->setToolTip(tr("Scroll to zoom around the pointer, drag to look back, double-click "
                          "or press Live to return to the present."));
}

void BreakerTimelinePanel::refreshPlaceholder()
{
    const bool empty = m_eventsModel->rowCount() == 0;
    m_eventsView->setVisible(!empty);
    m_eventsEmpty->setVisible(empty);
}

void BreakerTimelinePanel::fitColumns()
{
    const QFontMetrics body(m_eventsView->font());
    QFont headerFont = m_eventsView->horizontalHeader()->font();
    headerFont.setWeight(QFont::DemiBold);
    const QFontMetrics header(headerFont);
    const auto fit = [&](int column, const QString &typicalValue) {
        const QString title = m_eventsModel->headerData(column, Qt::Horizontal).toString();
        m_eventsView->horizontalHeader()->resizeSection(
            column, std::max(header.horizontalAdvance(title) + 24,
                             body.horizontalAdvance(typicalValue) + 20));
    };
    fit(BreakerEventsModel::TimeColumn, QStringLiteral("00:00:00"));
    fit(BreakerEventsModel::ProviderColumn, QStringLiteral("provider-name"));
    fit(BreakerEventsModel::ChangeColumn,
        BreakerEventsModel::breakerStateName(BreakerState::HalfOpen) + QStringLiteral(" → ") +
            BreakerEventsModel::breakerStateName(BreakerState::Closed));
}

} // namespace switchyard::ui
