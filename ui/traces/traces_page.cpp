#include "ui/traces/traces_page.h"

#include "bridge/engine_bridge.h"
#include "ui/common/state_pill_delegate.h"
#include "ui/common/usd_format.h"
#include "ui/common/widget_helpers.h"
#include "ui/traces/curl_command.h"
#include "ui/traces/trace_list_model.h"
#include "ui/traces/trace_waterfall_view.h"

#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QEvent>
#include <QFontDatabase>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QLocale>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

namespace switchyard::ui {

namespace {

constexpr int kSearchPauseMs = 200;
constexpr int kMaximumSlowerThanMs = 600'000;

// A filter combo's first entry shows everything; the others carry their value as item data.
QComboBox *makeFilterCombo(const QString &objectName, QWidget *parent)
{
    auto *combo = new QComboBox(parent);
    combo->setObjectName(objectName);
    combo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    combo->addItem(QString(), QString());
    return combo;
}

// Adds `value` to a filter combo in sorted place, once.
void learnChoice(QComboBox *combo, const QString &value)
{
    if (value.isEmpty() || combo->findData(value) >= 0)
        return;
    int at = 1;
    while (at < combo->count() && combo->itemData(at).toString() < value)
        ++at;
    combo->insertItem(at, value, value);
}

QPlainTextEdit *makeTextView(const QString &objectName, QWidget *parent)
{
    auto *view = new QPlainTextEdit(parent);
    view->setObjectName(objectName);
    view->setReadOnly(true);
    view->setFrameShape(QFrame::NoFrame);
    QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    mono.setPointSizeF(parent->font().pointSizeF() > 0 ? parent->font().pointSizeF() * 0.92
                                                       : mono.pointSizeF());
    view->setFont(mono);
    return view;
}

// A kept body as a person reads it: JSON indented, anything else as it was.
QString readableBody(const QByteArray &body)
{
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson(body, &error);
    if (error.error == QJsonParseError::NoError && !document.isNull())
        return QString::fromUtf8(document.toJson(QJsonDocument::Indented)).trimmed();
    return QString::fromUtf8(body);
}

} // namespace

TracesPage::TracesPage(EngineBridge &bridge, QWidget *parent) : QWidget(parent), m_bridge(bridge)
{
    setObjectName(QStringLiteral("tracesPage"));
    m_model = new TraceListModel(this);
    m_proxy = new TraceFilterProxyModel(this);
    m_proxy->setSourceModel(m_model);
    // "Slower than" and the status class change while a request runs: refilter on each update.
    m_proxy->setDynamicSortFilter(true);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(16, 16, 16, 12);
    layout->setSpacing(12);
    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->setObjectName(QStringLiteral("tracesSplitter"));
    splitter->setChildrenCollapsible(false);
    splitter->setHandleWidth(12);
    splitter->addWidget(buildListCard());
    splitter->addWidget(buildDetailCard());
    splitter->setStretchFactor(0, 1);
    splitter->setStretchFactor(1, 1);
    splitter->setSizes({380, 420});
    layout->addWidget(splitter);

    m_searchPause = new QTimer(this);
    m_searchPause->setSingleShot(true);
    m_searchPause->setInterval(kSearchPauseMs);
    connect(m_searchPause, &QTimer::timeout, this, &TracesPage::applyFilters);

    connect(&m_bridge, &EngineBridge::traceFeedUpdated, this, &TracesPage::applyFeed);
    connect(&m_bridge, &EngineBridge::traceLoaded, this, &TracesPage::traceLoaded);

    retranslateUi();
    refreshListHint();
}

TracesPage::~TracesPage() = default;

QWidget *TracesPage::buildFilterBar()
{
    auto *bar = new QWidget(this);
    auto *row = new QHBoxLayout(bar);
    row->setContentsMargins(4, 0, 4, 0);
    row->setSpacing(8);
    m_filterCaption = makeLabel(TextRole::Caption, bar);
    row->addWidget(m_filterCaption);
    m_statusFilter = makeFilterCombo(QStringLiteral("traceStatusFilter"), bar);
    for (const char *statusClass : {"2xx", "4xx", "5xx"})
        m_statusFilter->addItem(QLatin1String(statusClass), QLatin1String(statusClass));
    m_providerFilter = makeFilterCombo(QStringLiteral("traceProviderFilter"), bar);
    m_routeFilter = makeFilterCombo(QStringLiteral("traceRouteFilter"), bar);
    m_tenantFilter = makeFilterCombo(QStringLiteral("traceTenantFilter"), bar);
    for (QComboBox *combo : {m_statusFilter, m_providerFilter, m_routeFilter, m_tenantFilter}) {
        row->addWidget(combo);
        connect(combo, &QComboBox::currentIndexChanged, this, &TracesPage::applyFilters);
    }
    row->addSpacing(6);
    m_errorsOnly = new QCheckBox(bar);
    m_errorsOnly->setObjectName(QStringLiteral("traceErrorsOnly"));
    connect(m_errorsOnly, &QCheckBox::toggled, this, &TracesPage::applyFilters);
    row->addWidget(m_errorsOnly);
    row->addSpacing(6);
    m_slowerLabel = makeLabel(TextRole::Control, bar);
    m_slowerThan = new QSpinBox(bar);
    m_slowerThan->setObjectName(QStringLiteral("traceSlowerThan"));
    m_slowerThan->setRange(0, kMaximumSlowerThanMs);
    m_slowerThan->setSingleStep(100);
    m_slowerThan->setKeyboardTracking(false);
    m_slowerThan->setAccelerated(true);
    m_slowerThan->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    m_slowerLabel->setBuddy(m_slowerThan);
    connect(m_slowerThan, &QSpinBox::valueChanged, this, &TracesPage::applyFilters);
    row->addWidget(m_slowerLabel);
    row->addWidget(m_slowerThan);
    row->addStretch(1);
    m_idSearch = new QLineEdit(bar);
    m_idSearch->setObjectName(QStringLiteral("traceIdSearch"));
    m_idSearch->setClearButtonEnabled(true);
    m_idSearch->setMinimumWidth(220);
    // Filtering 5,000 rows per keystroke is wasted work: wait for a pause in the typing.
    connect(m_idSearch, &QLineEdit::textChanged, this, [this] { m_searchPause->start(); });
    row->addWidget(m_idSearch);
    return bar;
}

QWidget *TracesPage::buildListCard()
{
    QFrame *card = makeCard(QStringLiteral("traceListCard"), this);
    auto *layout = new QVBoxLayout(card);
    layout->setContentsMargins(12, 12, 12, 8);
    layout->setSpacing(8);
    auto *header = new QHBoxLayout;
    header->setContentsMargins(4, 0, 4, 0);
    m_listTitle = makeLabel(TextRole::SectionTitle, card);
    m_listTitle->setFont(sectionTitleFont(font()));
    m_listHint = makeLabel(TextRole::SectionHint, card);
    m_listHint->setObjectName(QStringLiteral("traceListHint"));
    m_newButton = new QPushButton(card);
    m_newButton->setObjectName(QStringLiteral("traceNewButton"));
    m_newButton->setCursor(Qt::PointingHandCursor);
    m_newButton->hide();
    connect(m_newButton, &QPushButton::clicked, this, &TracesPage::resumeLive);
    header->addWidget(m_listTitle);
    header->addSpacing(12);
    header->addWidget(m_listHint, 1);
    header->addWidget(m_newButton);
    layout->addLayout(header);
    layout->addWidget(buildFilterBar());

    m_list = new QTableView(card);
    m_list->setObjectName(QStringLiteral("traceList"));
    m_list->setModel(m_proxy);
    m_list->setItemDelegateForColumn(
        TraceListModel::StatusColumn,
        new StatePillDelegate(TraceListModel::StatusColorRole, m_list));
    m_list->setAlternatingRowColors(true);
    m_list->setShowGrid(false);
    m_list->setWordWrap(false);
    m_list->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_list->setSelectionMode(QAbstractItemView::SingleSelection);
    m_list->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_list->setFrameShape(QFrame::NoFrame);
    m_list->setCornerButtonEnabled(false);
    m_list->setVerticalScrollMode(QAbstractItemView::ScrollPerPixel);
    m_list->verticalHeader()->hide();
    m_list->verticalHeader()->setDefaultSectionSize(QFontMetrics(font()).height() + 12);
    QHeaderView *columns = m_list->horizontalHeader();
    columns->setHighlightSections(false);
    columns->setStretchLastSection(true);
    // Headers are bold: measure in their weight so "Attempts" is never cut.
    const QFontMetrics metrics(scaledFont(font(), 1.0, QFont::DemiBold));
    const auto widthOf = [&](const char *sample) {
        return metrics.horizontalAdvance(QLatin1String(sample)) + 18;
    };
    columns->resizeSection(TraceListModel::TimeColumn, widthOf("00:00:00.000"));
    columns->resizeSection(TraceListModel::StatusColumn, widthOf("429 rate_limited"));
    columns->resizeSection(TraceListModel::ModelColumn, widthOf("llama-3.1-8b"));
    columns->resizeSection(TraceListModel::RouteColumn, widthOf("long-context"));
    columns->resizeSection(TraceListModel::TierColumn, widthOf("premium"));
    columns->resizeSection(TraceListModel::ProviderColumn, widthOf("sim-steady"));
    columns->resizeSection(TraceListModel::AttemptsColumn, widthOf("Attempts"));
    columns->resizeSection(TraceListModel::DegradedColumn, widthOf("Degraded"));
    m_list->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    columns->resizeSection(TraceListModel::LatencyColumn, widthOf("Latency"));
    columns->resizeSection(TraceListModel::TimeToFirstByteColumn, widthOf("1,234 ms"));
    columns->resizeSection(TraceListModel::TokensColumn, widthOf("12,345 → 1,234"));
    columns->resizeSection(TraceListModel::RequestIdColumn, widthOf("req-00000000000"));
    // The id is what a user searches and copies: right after the time, so it never scrolls off.
    columns->moveSection(TraceListModel::RequestIdColumn, TraceListModel::StatusColumn);
    layout->addWidget(m_list, 1);

    connect(m_list->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &TracesPage::selectionChanged);
    connect(m_list->verticalScrollBar(), &QScrollBar::valueChanged, this,
            &TracesPage::refreshPause);
    // A filtered list that shrinks may move the scroll bar to the top: that resumes too.
    connect(m_proxy, &QAbstractItemModel::rowsRemoved, this, &TracesPage::refreshPause);
    return card;
}

QWidget *TracesPage::buildDetailCard()
{
    QFrame *card = makeCard(QStringLiteral("traceDetailCard"), this);
    auto *outer = new QVBoxLayout(card);
    outer->setContentsMargins(0, 0, 0, 0);
    m_detailStack = new QStackedWidget(card);
    outer->addWidget(m_detailStack);

    m_placeholder = makeLabel(TextRole::SectionHint, m_detailStack);
    m_placeholder->setObjectName(QStringLiteral("traceDetailPlaceholder"));
    m_placeholder->setAlignment(Qt::AlignCenter);
    m_placeholder->setWordWrap(true);
    m_detailStack->addWidget(m_placeholder);

    auto *detail = new QWidget(m_detailStack);
    auto *layout = new QVBoxLayout(detail);
    layout->setContentsMargins(12, 12, 12, 12);
    layout->setSpacing(8);
    auto *header = new QHBoxLayout;
    header->setContentsMargins(4, 0, 4, 0);
    header->setSpacing(12);
    m_detailTitle = makeLabel(TextRole::SectionTitle, detail);
    m_detailTitle->setObjectName(QStringLiteral("traceDetailTitle"));
    m_detailTitle->setFont(sectionTitleFont(font()));
    m_detailTitle->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_detailFacts = makeLabel(TextRole::Caption, detail);
    m_detailFacts->setObjectName(QStringLiteral("traceDetailFacts"));
    m_detailFacts->setWordWrap(true); // a long line wraps rather than clips
    m_detailFacts->setTextFormat(Qt::RichText);
    m_detailFacts->setContentsMargins(4, 0, 4, 0);
    m_copyHint = makeLabel(TextRole::Hint, detail);
    m_copyHint->setObjectName(QStringLiteral("traceCopyHint"));
    m_copyCurl = new QPushButton(detail);
    m_copyCurl->setObjectName(QStringLiteral("traceCopyCurl"));
    m_copyCurl->setProperty("providerAction", true);
    m_copyCurl->setCursor(Qt::PointingHandCursor);
    connect(m_copyCurl, &QPushButton::clicked, this, [this] {
        QGuiApplication::clipboard()->setText(curlCommand());
        m_copyHint->setText(tr("Copied to the clipboard"));
    });
    header->addWidget(m_detailTitle);
    header->addStretch(1);
    header->addWidget(m_copyHint);
    header->addWidget(m_copyCurl);
    layout->addLayout(header);
    layout->addWidget(m_detailFacts);

    auto *columns = new QSplitter(Qt::Horizontal, detail);
    columns->setChildrenCollapsible(false);
    columns->setHandleWidth(12);

    auto *left = new QWidget(columns);
    auto *leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    leftLayout->setSpacing(4);
    m_waterfallTitle = makeLabel(TextRole::ColumnHeader, left);
    m_waterfallTitle->setContentsMargins(4, 0, 0, 0);
    leftLayout->addWidget(m_waterfallTitle);
    auto *scroll = new QScrollArea(left);
    scroll->setObjectName(QStringLiteral("traceWaterfallScroll"));
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_waterfall = new TraceWaterfallView(scroll);
    scroll->setWidget(m_waterfall);
    leftLayout->addWidget(scroll, 1);
    columns->addWidget(left);

    auto *right = new QSplitter(Qt::Vertical, columns);
    right->setChildrenCollapsible(false);
    right->setHandleWidth(10);
    auto *decision = new QWidget(right);
    auto *decisionLayout = new QVBoxLayout(decision);
    decisionLayout->setContentsMargins(0, 0, 0, 0);
    decisionLayout->setSpacing(4);
    m_decisionTitle = makeLabel(TextRole::ColumnHeader, decision);
    decisionLayout->addWidget(m_decisionTitle);
    m_explain = new QListWidget(decision);
    m_explain->setObjectName(QStringLiteral("traceExplainSteps"));
    m_explain->setFrameShape(QFrame::NoFrame);
    m_explain->setWordWrap(true);
    m_explain->setResizeMode(QListView::Adjust);
    m_explain->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_explain->setSelectionMode(QAbstractItemView::NoSelection);
    m_explain->setFocusPolicy(Qt::NoFocus);
    decisionLayout->addWidget(m_explain, 1);
    right->addWidget(decision);

    auto *texts = new QWidget(right);
    auto *textsLayout = new QVBoxLayout(texts);
    textsLayout->setContentsMargins(0, 0, 0, 0);
    textsLayout->setSpacing(4);
    m_bodyTabs = new QTabWidget(texts);
    m_bodyTabs->setObjectName(QStringLiteral("traceBodyTabs"));
    m_bodyTabs->setDocumentMode(true);
    auto *livePage = new QWidget(m_bodyTabs);
    auto *liveLayout = new QVBoxLayout(livePage);
    liveLayout->setContentsMargins(0, 4, 0, 0);
    liveLayout->setSpacing(4);
    m_liveView = makeTextView(QStringLiteral("traceLiveText"), livePage);
    m_liveEnd = makeLabel(TextRole::Hint, livePage);
    m_liveEnd->setObjectName(QStringLiteral("traceLiveEnd"));
    m_liveEnd->setWordWrap(true);
    liveLayout->addWidget(m_liveView, 1);
    liveLayout->addWidget(m_liveEnd);
    m_bodyTabs->addTab(livePage, QString());
    m_requestView = makeTextView(QStringLiteral("traceRequestText"), m_bodyTabs);
    m_bodyTabs->addTab(m_requestView, QString());
    m_responseView = makeTextView(QStringLiteral("traceResponseText"), m_bodyTabs);
    m_bodyTabs->addTab(m_responseView, QString());
    textsLayout->addWidget(m_bodyTabs, 1);
    right->addWidget(texts);
    right->setStretchFactor(0, 1);
    right->setStretchFactor(1, 1);
    columns->addWidget(right);
    columns->setStretchFactor(0, 3);
    columns->setStretchFactor(1, 2);
    layout->addWidget(columns, 1);
    m_detailStack->addWidget(detail);
    return card;
}

void TracesPage::retranslateUi()
{
    m_listTitle->setText(tr("Requests"));
    m_filterCaption->setText(tr("Filter"));
    m_statusFilter->setItemText(0, tr("All statuses"));
    m_providerFilter->setItemText(0, tr("All providers"));
    m_routeFilter->setItemText(0, tr("All routes"));
    m_tenantFilter->setItemText(0, tr("All tenants"));
    m_errorsOnly->setText(tr("Errors only"));
    m_slowerLabel->setText(tr("&Slower than"));
    m_slowerThan->setSuffix(tr(" ms"));
    m_slowerThan->setSpecialValueText(tr("any latency"));
    m_slowerThan->setToolTip(tr("Show only requests that took longer than this; 0 shows all"));
    m_idSearch->setPlaceholderText(tr("Search request id…"));
    m_newButton->setToolTip(tr("Jump to the top and show new requests as they arrive"));
    m_placeholder->setText(
        tr("Select a request to see its waterfall, the routing decision and its text as it "
           "streams."));
    m_waterfallTitle->setText(tr("Waterfall · ms from the request's start"));
    m_decisionTitle->setText(tr("Routing decision"));
    m_bodyTabs->setTabText(0, tr("Live text"));
    m_bodyTabs->setTabText(1, tr("Request"));
    m_bodyTabs->setTabText(2, tr("Response"));
    m_copyCurl->setText(tr("Copy as curl"));
    m_copyCurl->setToolTip(
        tr("Copy a curl command that sends this request to the gateway again; the API key is "
           "left as $OPENAI_API_KEY"));
    m_liveView->setPlaceholderText(tr("No text yet."));
    m_model->retranslate();
    refreshListHint();
    refreshPause();
    if (m_hasDetail)
        showDetail();
}

void TracesPage::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslateUi();
    QWidget::changeEvent(event);
}

void TracesPage::applyFilters()
{
    m_searchPause->stop();
    telemetry::TraceFilter filter;
    filter.statusClass = m_statusFilter->currentData().toString();
    filter.provider = m_providerFilter->currentData().toString();
    filter.route = m_routeFilter->currentData().toString();
    filter.tenant = m_tenantFilter->currentData().toString();
    filter.errorsOnly = m_errorsOnly->isChecked();
    filter.slowerThanMs = m_slowerThan->value() > 0 ? m_slowerThan->value() : -1;
    filter.idContains = m_idSearch->text().trimmed();
    m_proxy->setFilter(filter);
    refreshPause();
    refreshListHint();
}

void TracesPage::learnFilterChoices(const telemetry::TraceFeed &feed)
{
    const auto learn = [this](const telemetry::RequestRecord &record) {
        learnChoice(m_providerFilter, record.provider);
        learnChoice(m_routeFilter,
                    record.route.isEmpty() ? QStringLiteral("default") : record.route);
        learnChoice(m_tenantFilter, record.tenant);
    };
    for (const telemetry::RequestRecord &record : feed.finished)
        learn(record);
    for (const telemetry::Trace &trace : feed.running)
        learn(trace);
}

void TracesPage::applyFeed(const telemetry::TraceFeed &feed)
{
    m_model->applyFeed(feed);
    learnFilterChoices(feed);

    if (!m_selectedId.isEmpty()) {
        for (const telemetry::Trace &trace : feed.running) {
            if (trace.requestId != m_selectedId)
                continue;
            m_detail = trace;
            m_hasDetail = true;
            m_detailRunning = true;
            m_detailGone = false;
            showDetail();
            break;
        }
        if (feed.watchedId == m_selectedId && !feed.watchedData.isEmpty()) {
            if (!m_liveFromStream)
                m_live.clear();
            m_liveFromStream = true;
            m_live.appendEventData(feed.watchedData);
            showLiveText();
        }
        for (const telemetry::RequestRecord &record : feed.finished) {
            if (record.requestId != m_selectedId)
                continue;
            // Over now: the finished trace has the closed spans, the usage and the kept bodies.
            m_bridge.loadTrace(++m_ticket, m_selectedId);
            break;
        }
    }
    refreshPause();
    refreshListHint();
}

void TracesPage::refreshPause()
{
    const bool paused =
        m_list->verticalScrollBar()->value() > 0 || m_list->selectionModel()->hasSelection();
    m_model->setPaused(paused);
    const int waiting = m_proxy->pendingMatching();
    m_newButton->setVisible(waiting > 0);
    if (waiting > 0)
        m_newButton->setText(tr("↑ %n new", nullptr, waiting));
}

void TracesPage::refreshListHint()
{
    const QLocale locale;
    QString hint =
        tr("%1 shown · %2 running · the list keeps the newest %3")
            .arg(locale.toString(m_proxy->rowCount()), locale.toString(m_model->runningCount()),
                 locale.toString(TraceListModel::kMaxRows));
    if (m_model->droppedCount() > 0)
        hint += QStringLiteral(" · ") +
                tr("%1 older let go").arg(locale.toString(qint64(m_model->droppedCount())));
    if (m_model->paused())
        hint += QStringLiteral(" · ") + tr("paused while you look");
    m_listHint->setText(hint);
}

void TracesPage::resumeLive()
{
    m_list->clearSelection();
    m_list->scrollToTop();
    refreshPause();
    refreshListHint();
}

bool TracesPage::selectRequest(const QByteArray &requestId)
{
    const int sourceRow = m_model->rowOf(requestId);
    if (sourceRow < 0)
        return false;
    const QModelIndex index = m_proxy->mapFromSource(m_model->index(sourceRow, 0));
    if (!index.isValid())
        return false;
    m_list->selectionModel()->select(index, QItemSelectionModel::ClearAndSelect |
                                                QItemSelectionModel::Rows);
    m_list->setCurrentIndex(index);
    return true;
}

void TracesPage::selectionChanged()
{
    const QModelIndexList rows = m_list->selectionModel()->selectedRows();
    const QByteArray id = rows.isEmpty()
                              ? QByteArray()
                              : rows.first().data(TraceListModel::RequestIdRole).toByteArray();
    refreshPause();
    refreshListHint();
    if (id == m_selectedId)
        return;
    m_selectedId = id;
    m_live.clear();
    m_liveFromStream = false;
    m_watchedSinceStart = true;
    m_hasDetail = false;
    m_detailGone = false;
    m_detail = {};
    m_copyHint->clear();
    m_liveView->clear();
    // Only the inspected request's text is kept by the engine: watch it, and nothing else.
    m_bridge.watchTrace(m_selectedId);
    if (m_selectedId.isEmpty()) {
        m_waterfall->clear();
        m_detailStack->setCurrentIndex(0);
        return;
    }
    const int sourceRow = m_model->rowOf(m_selectedId);
    if (sourceRow >= 0) {
        // Until the whole trace arrives, the row's record says what is known.
        static_cast<telemetry::RequestRecord &>(m_detail) = m_model->rowAt(sourceRow).record;
        m_detailRunning = m_model->rowAt(sourceRow).running;
        m_hasDetail = true;
        showDetail();
    }
    m_bridge.loadTrace(++m_ticket, m_selectedId);
}

void TracesPage::traceLoaded(quint64 ticket, bool found, const telemetry::Trace &trace)
{
    if (ticket != m_ticket || m_selectedId.isEmpty())
        return; // an answer for a request no longer selected
    if (!found) {
        m_detailGone = true;
        showDetail();
        return;
    }
    const int sourceRow = m_model->rowOf(m_selectedId);
    m_detail = trace;
    m_hasDetail = true;
    m_detailGone = false;
    m_detailRunning = trace.status == 0 && sourceRow >= 0 && m_model->rowAt(sourceRow).running;
    // Watching starts now: a stream that already sent chunks shows its text from here on.
    if (m_detailRunning && m_live.isEmpty())
        m_watchedSinceStart = trace.chunkCount == 0;
    if (!m_detailRunning && !m_liveFromStream && trace.bodiesKept && !trace.responseBody.isEmpty())
        m_live.setResponseBody(trace.responseBody);
    showDetail();
}

void TracesPage::showDetail()
{
    if (!m_hasDetail) {
        m_detailStack->setCurrentIndex(0);
        return;
    }
    m_detailStack->setCurrentIndex(1);
    const telemetry::Trace &trace = m_detail;
    const QLocale locale;
    m_detailTitle->setText(QString::fromLatin1(trace.requestId));

    const TraceListRow row{trace, m_detailRunning};
    QStringList facts;
    facts.append(QStringLiteral("<span style=\"color:%1; font-weight:600;\">%2</span>")
                     .arg(TraceListModel::statusColor(row).name(),
                          TraceListModel::statusText(row).toHtmlEscaped()));
    if (!trace.method.isEmpty() || !trace.endpoint.isEmpty())
        facts.append(QStringLiteral("%1 %2").arg(
            QString::fromLatin1(trace.method.isEmpty() ? QByteArray("POST") : trace.method),
            (trace.path.isEmpty() ? trace.endpoint : QString::fromUtf8(trace.path))
                .toHtmlEscaped()));
    QString model = trace.model.toHtmlEscaped();
    if (!trace.provider.isEmpty()) {
        model += QStringLiteral(" → <b>%1</b>").arg(trace.provider.toHtmlEscaped());
        if (!trace.upstreamModel.isEmpty() && trace.upstreamModel != trace.model)
            model += QStringLiteral(" (%1)").arg(trace.upstreamModel.toHtmlEscaped());
    }
    facts.append(model);
    facts.append(
        tr("route %1").arg((trace.route.isEmpty() ? tr("default") : trace.route).toHtmlEscaped()));
    if (!trace.tenant.isEmpty())
        facts.append(tr("tenant %1").arg(trace.tenant.toHtmlEscaped()));
    if (!trace.keyId.isEmpty())
        //: %1 the id of the client API key that authenticated the request
        facts.append(tr("key %1").arg(trace.keyId.toHtmlEscaped()));
    facts.append((m_detailRunning ? tr("%1 so far") : tr("%1 in all"))
                     .arg(TraceListModel::formatMicros(trace.totalMicros)));
    if (trace.timeToFirstByteMicros >= 0)
        facts.append(tr("TTFT %1").arg(TraceListModel::formatMicros(trace.timeToFirstByteMicros)));
    if (trace.inputTokens >= 0 || trace.outputTokens >= 0)
        facts.append(tr("%1 → %2 tokens")
                         .arg(trace.inputTokens < 0 ? QStringLiteral("\u2014")
                                                    : locale.toString(trace.inputTokens),
                              trace.outputTokens < 0 ? QStringLiteral("\u2014")
                                                     : locale.toString(trace.outputTokens)));
    // Short, as the line is long already: the cache's part of the tokens, then the cost.
    const qint64 cacheRead = std::max<qint64>(trace.cacheReadTokens, 0);
    const qint64 cacheWrite = std::max<qint64>(trace.cacheWriteTokens, 0);
    if (cacheWrite > 0)
        //: %1 input tokens read from the provider's prompt cache; %2 written to it
        facts.append(tr("%1 cached, %2 written to the cache")
                         .arg(locale.toString(cacheRead), locale.toString(cacheWrite)));
    else if (cacheRead > 0)
        //: %1 input tokens read from the provider's prompt cache
        facts.append(tr("%1 cached").arg(locale.toString(cacheRead)));
    if (trace.priced && !m_detailRunning) {
        const QString cost = formatUsd(trace.costUsd);
        if (trace.cacheSavedUsd > 0.0)
            //: %1 what the request cost; %2 what the prompt cache saved, both in US dollars
            facts.append(tr("cost %1, saved %2").arg(cost, formatUsd(trace.cacheSavedUsd)));
        else if (trace.cacheSavedUsd < 0.0)
            //: %1 what the request cost; %2 what writing the prompt cache cost beyond what
            //: reading it saved, both in US dollars
            facts.append(
                tr("cost %1, %2 more for cache writes").arg(cost, formatUsd(-trace.cacheSavedUsd)));
        else
            //: %1 what the request cost, in US dollars
            facts.append(tr("cost %1").arg(cost));
    }
    // Answered from the response cache: what giving the kept answer again saved.
    if (trace.responseCache == QLatin1StringView("hit"))
        //: %1 what the kept answer cost when a provider made it, in US dollars
        facts.append(
            tr("response cache hit, saved %1").arg(formatUsd(trace.responseCacheSavedUsd)));
    if (m_detailGone)
        facts.append(QStringLiteral("<span style=\"color:#b45309;\">%1</span>")
                         .arg(tr("the engine no longer keeps this trace").toHtmlEscaped()));
    m_detailFacts->setText(facts.join(QStringLiteral("&nbsp;&nbsp;·&nbsp;&nbsp;")));

    m_waterfall->setTrace(trace);

    m_explain->clear();
    for (int i = 0; i < trace.explainSteps.size(); ++i)
        m_explain->addItem(QStringLiteral("%1. %2").arg(i + 1).arg(trace.explainSteps.at(i)));
    if (trace.explainSteps.isEmpty())
        m_explain->addItem(m_detailRunning ? tr("Deciding…")
                                           : tr("No routing decision: the request ended before "
                                                "one was made."));
    m_copyCurl->setEnabled(!trace.method.isEmpty() || !trace.path.isEmpty());
    showLiveText();
    showBodies();
}

void TracesPage::showLiveText()
{
    const QString &text = m_live.text();
    const QString shown = m_liveView->toPlainText();
    if (text.startsWith(shown) && !shown.isEmpty()) {
        // Only the new part: the reader's selection and scroll position stay where they are.
        if (text.size() > shown.size()) {
            QTextCursor end = m_liveView->textCursor();
            end.movePosition(QTextCursor::End);
            end.insertText(text.mid(shown.size()));
            if (m_detailRunning)
                m_liveView->ensureCursorVisible();
        }
    } else if (text != shown) {
        m_liveView->setPlainText(text);
    }

    if (m_detailRunning) {
        m_liveView->setPlaceholderText(m_detail.streamed || m_detail.chunkCount > 0
                                           ? tr("Waiting for the first chunk…")
                                           : tr("Not streamed: the answer arrives whole."));
    } else if (m_live.isEmpty()) {
        m_liveView->setPlaceholderText(
            m_detail.bodiesKept
                ? tr("The answer had no text.")
                : tr("The answer's text was not kept. Select a request while it streams to "
                     "watch its text, or set trace.keep_bodies: true to keep every answer."));
    }

    if (!m_live.error().isEmpty()) {
        m_liveEnd->setText(tr("Error the client saw: %1").arg(m_live.error()));
        setTone(m_liveEnd, Tone::Bad);
    } else if (!m_live.finishReason().isEmpty() ||
               (!m_detailRunning && !m_detail.finishReason.isEmpty())) {
        const QString reason =
            m_live.finishReason().isEmpty() ? m_detail.finishReason : m_live.finishReason();
        m_liveEnd->setText(tr("Finished: %1").arg(reason));
        setTone(m_liveEnd, reason == QLatin1String("stop") || reason == QLatin1String("completed")
                               ? Tone::Good
                               : Tone::Warning);
    } else if (m_detailRunning) {
        QString state = tr("Streaming · %n event(s) so far", nullptr, m_live.eventCount());
        if (!m_watchedSinceStart)
            state += QStringLiteral(" · ") + tr("text since you selected it");
        m_liveEnd->setText(state);
        setTone(m_liveEnd, Tone::Neutral);
    } else if (m_detail.isError() && !m_detail.outcome.isEmpty()) {
        m_liveEnd->setText(tr("Error the client saw: %1").arg(m_detail.outcome));
        setTone(m_liveEnd, Tone::Bad);
    } else {
        m_liveEnd->clear();
        setTone(m_liveEnd, Tone::Neutral);
    }
}

void TracesPage::showBodies()
{
    const telemetry::Trace &trace = m_detail;
    const QString notKept =
        tr("Bodies are not kept for this request. Set trace.keep_bodies: true in the "
           "configuration to keep request and response bodies (up to trace.body_max_bytes "
           "each) in new traces.");

    QString request = QStringLiteral("%1 %2\n").arg(
        QString::fromLatin1(trace.method),
        trace.path.isEmpty() ? trace.endpoint : QString::fromUtf8(trace.path));
    for (const auto &[name, value] : trace.requestHeaders)
        request +=
            QStringLiteral("%1: %2\n").arg(QString::fromLatin1(name), QString::fromUtf8(value));
    request += QLatin1Char('\n');
    if (!trace.bodiesKept)
        request += notKept;
    else {
        request += readableBody(trace.requestBody);
        if (trace.requestBodyCut)
            request += QStringLiteral("\n\n") + tr("(cut at the trace's body limit)");
    }
    if (m_requestView->toPlainText() != request)
        m_requestView->setPlainText(request);

    QString response;
    if (!trace.bodiesKept)
        response = notKept;
    else if (m_detailRunning && trace.responseBody.isEmpty())
        response = tr("The response is kept when the request finishes.");
    else {
        response = readableBody(trace.responseBody);
        if (trace.responseBodyCut)
            response += QStringLiteral("\n\n") + tr("(cut at the trace's body limit)");
    }
    if (m_responseView->toPlainText() != response)
        m_responseView->setPlainText(response);
}

QString TracesPage::curlCommand() const
{
    if (!m_hasDetail || (m_detail.method.isEmpty() && m_detail.path.isEmpty()))
        return {};
    return CurlCommand::forTrace(m_detail, m_bridge.listenAddress());
}

} // namespace switchyard::ui
