#include "ui/usage/usage_page.h"

#include "bridge/engine_bridge.h"
#include "ui/common/usd_format.h"
#include "ui/common/widget_helpers.h"
#include "ui/usage/usage_chart.h"

#include <QComboBox>
#include <QEvent>
#include <QFrame>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QProgressBar>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

namespace switchyard::ui {

UsagePage::UsagePage(EngineBridge &bridge, const timing::Clock &clock, QWidget *parent)
    : QWidget(parent), m_bridge(bridge), m_clock(clock)
{
    setObjectName(QStringLiteral("usagePage"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(16, 16, 16, 12);
    layout->setSpacing(12);

    // The choices and the range's totals.
    QFrame *header = makeCard(QStringLiteral("usageHeaderCard"), this);
    auto *headerLayout = new QHBoxLayout(header);
    headerLayout->setContentsMargins(16, 10, 16, 10);
    headerLayout->setSpacing(8);
    m_title = makeLabel(TextRole::SectionTitle, header);
    m_title->setFont(sectionTitleFont(font()));
    headerLayout->addWidget(m_title);
    headerLayout->addSpacing(16);
    m_rangeLabel = makeLabel(TextRole::Caption, header);
    m_range = new QComboBox(header);
    m_range->setObjectName(QStringLiteral("usageRange"));
    m_range->addItems({QString(), QString(), QString()});
    m_rangeLabel->setBuddy(m_range);
    headerLayout->addWidget(m_rangeLabel);
    headerLayout->addWidget(m_range);
    headerLayout->addSpacing(12);
    m_breakdownLabel = makeLabel(TextRole::Caption, header);
    m_breakdown = new QComboBox(header);
    m_breakdown->setObjectName(QStringLiteral("usageBreakdown"));
    m_breakdown->addItems({QString(), QString()});
    m_breakdownLabel->setBuddy(m_breakdown);
    headerLayout->addWidget(m_breakdownLabel);
    headerLayout->addWidget(m_breakdown);
    headerLayout->addSpacing(16);
    m_totals = makeLabel(TextRole::Value, header);
    m_totals->setObjectName(QStringLiteral("usageTotals"));
    m_totals->setTextFormat(Qt::RichText);
    m_totals->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    headerLayout->addWidget(m_totals, 1, Qt::AlignRight | Qt::AlignVCenter);
    layout->addWidget(header);

    // Loud when the ledger cannot reach its database: spend is then counted in memory only.
    m_banner = makeLabel(TextRole::Hint, this);
    m_banner->setObjectName(QStringLiteral("usageLedgerBanner"));
    m_banner->setWordWrap(true);
    m_banner->setStyleSheet(QStringLiteral(
        "QLabel { background: #fef2f2; border: 1px solid #fecaca; border-radius: 8px; "
        "padding: 8px 12px; }"));
    setTone(m_banner, Tone::Bad);
    m_banner->hide();
    layout->addWidget(m_banner);

    auto *body = new QHBoxLayout;
    body->setSpacing(12);
    auto *charts = new QVBoxLayout;
    charts->setSpacing(12);
    m_spendChart = new UsageChart(UsageChart::Measure::Spend, this);
    m_spendChart->setObjectName(QStringLiteral("usageSpendChart"));
    m_tokensChart = new UsageChart(UsageChart::Measure::Tokens, this);
    m_tokensChart->setObjectName(QStringLiteral("usageTokensChart"));
    charts->addWidget(buildChartCard(QStringLiteral("usageSpendCard"), m_spendChart, &m_spendTitle),
                      1);
    charts->addWidget(
        buildChartCard(QStringLiteral("usageTokensCard"), m_tokensChart, &m_tokensTitle), 1);
    body->addLayout(charts, 3);

    QFrame *top = makeCard(QStringLiteral("usageTopSpendersCard"), this);
    auto *topLayout = new QVBoxLayout(top);
    topLayout->setContentsMargins(12, 12, 12, 8);
    topLayout->setSpacing(8);
    m_topTitle = makeLabel(TextRole::SectionTitle, top);
    m_topTitle->setFont(sectionTitleFont(font()));
    m_topHint = makeLabel(TextRole::SectionHint, top);
    m_topHint->setWordWrap(true);
    topLayout->addWidget(m_topTitle);
    topLayout->addWidget(m_topHint);
    m_topModel = new TopSpendersModel(this);
    m_topView = new QTableView(top);
    m_topView->setObjectName(QStringLiteral("usageTopSpenders"));
    m_topView->setModel(m_topModel);
    m_topView->setAlternatingRowColors(true);
    m_topView->setShowGrid(false);
    m_topView->setWordWrap(false);
    m_topView->setSelectionMode(QAbstractItemView::NoSelection);
    m_topView->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_topView->setFrameShape(QFrame::NoFrame);
    m_topView->verticalHeader()->hide();
    m_topView->verticalHeader()->setDefaultSectionSize(QFontMetrics(font()).height() + 12);
    m_topView->horizontalHeader()->setHighlightSections(false);
    m_topView->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_topView->horizontalHeader()->setSectionResizeMode(TopSpendersModel::TenantColumn,
                                                        QHeaderView::Stretch);
    topLayout->addWidget(m_topView, 1);
    auto *side = new QVBoxLayout;
    side->setSpacing(12);
    side->addWidget(top, 3);

    // The configured budgets, each window's used share as the engine counts it.
    QFrame *budgets = makeCard(QStringLiteral("usageBudgetsCard"), this);
    auto *budgetsLayout = new QVBoxLayout(budgets);
    budgetsLayout->setContentsMargins(16, 12, 16, 12);
    budgetsLayout->setSpacing(6);
    m_budgetsTitle = makeLabel(TextRole::SectionTitle, budgets);
    m_budgetsTitle->setFont(sectionTitleFont(font()));
    m_budgetsHint = makeLabel(TextRole::SectionHint, budgets);
    m_budgetsHint->setWordWrap(true);
    budgetsLayout->addWidget(m_budgetsTitle);
    budgetsLayout->addWidget(m_budgetsHint);
    m_budgetRows = new QVBoxLayout;
    m_budgetRows->setSpacing(4);
    budgetsLayout->addLayout(m_budgetRows);
    budgetsLayout->addStretch(1);
    side->addWidget(budgets, 2);
    body->addLayout(side, 2);
    layout->addLayout(body, 1);

    m_refreshTimer = new QTimer(this);
    m_refreshTimer->setInterval(kRefreshIntervalMs);
    connect(m_refreshTimer, &QTimer::timeout, this, &UsagePage::refresh);
    connect(m_range, &QComboBox::currentIndexChanged, this, &UsagePage::refresh);
    connect(m_breakdown, &QComboBox::currentIndexChanged, this, &UsagePage::refresh);
    connect(&m_bridge, &EngineBridge::usageLoaded, this, &UsagePage::usageLoaded);
    connect(&m_bridge, &EngineBridge::snapshotUpdated, this, &UsagePage::applySnapshot);

    retranslateUi();
    applySnapshot(m_bridge.lastSnapshot());
}

QWidget *UsagePage::buildChartCard(const QString &objectName, UsageChart *chart, QLabel **title)
{
    QFrame *card = makeCard(objectName, this);
    auto *layout = new QVBoxLayout(card);
    layout->setContentsMargins(12, 12, 12, 8);
    layout->setSpacing(4);
    *title = makeLabel(TextRole::SectionTitle, card);
    (*title)->setFont(sectionTitleFont(font()));
    layout->addWidget(*title);
    chart->setParent(card);
    layout->addWidget(chart, 1);
    return card;
}

UsageRange UsagePage::range() const
{
    return UsageRange(m_range->currentIndex());
}

UsageBreakdown UsagePage::breakdown() const
{
    return UsageBreakdown(m_breakdown->currentIndex());
}

void UsagePage::retranslateUi()
{
    m_title->setText(tr("Usage and cost"));
    m_rangeLabel->setText(tr("&Range"));
    m_range->setItemText(int(UsageRange::Today), tr("Today"));
    m_range->setItemText(int(UsageRange::SevenDays), tr("Last 7 days"));
    m_range->setItemText(int(UsageRange::ThirtyDays), tr("Last 30 days"));
    m_breakdownLabel->setText(tr("&By"));
    m_breakdown->setItemText(int(UsageBreakdown::Tenant), tr("Tenant"));
    m_breakdown->setItemText(int(UsageBreakdown::Model), tr("Model"));
    m_topTitle->setText(tr("Top spenders today"));
    m_topHint->setText(tr("Tenants by spend since 00:00 UTC. \"Estimated\" is the share of "
                          "requests whose tokens the provider did not report; a spend's tooltip "
                          "gives what the prompt cache saved."));
    m_budgetsTitle->setText(tr("Budgets"));
    refreshBudgets();
    redrawCharts();
    refreshTotals();
    refreshBanner();
}

void UsagePage::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslateUi();
    QWidget::changeEvent(event);
}

void UsagePage::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    refresh();
    m_refreshTimer->start();
}

void UsagePage::hideEvent(QHideEvent *event)
{
    m_refreshTimer->stop();
    QWidget::hideEvent(event);
}

void UsagePage::refresh()
{
    const QDateTime now = m_clock.utcNow();
    m_chartTicket = m_nextTicket++;
    m_bridge.loadUsage(m_chartTicket, chartQuery(range(), breakdown(), now));
    m_topTicket = m_nextTicket++;
    m_bridge.loadUsage(m_topTicket, topSpendersQuery(now));
}

void UsagePage::usageLoaded(quint64 ticket, const usage::UsageReport &report)
{
    if (ticket == m_chartTicket) {
        // The range asked for, which the answer's buckets follow, not the one chosen since.
        m_chartRange = report.query.groupBy.value(0) == usage::UsageDimension::Hour
                           ? UsageRange::Today
                       : report.query.from.daysTo(report.query.to) <= 7 ? UsageRange::SevenDays
                                                                        : UsageRange::ThirtyDays;
        m_data = ui::chartData(report, m_chartRange);
        m_fleetNodes = report.fleetNodes;
        m_fleetProblem = report.fleetProblem;
        redrawCharts();
        refreshTotals();
    } else if (ticket == m_topTicket) {
        m_topModel->setReport(report);
    }
}

void UsagePage::redrawCharts()
{
    const bool byTenant = breakdown() == UsageBreakdown::Tenant;
    const QString none = byTenant ? tr("(no tenant)") : tr("(no model)");
    m_spendChart->setData(m_data, none, tr("Other"));
    m_tokensChart->setData(m_data, none, tr("Other"));
    const QString per =
        m_chartRange == UsageRange::Today ? tr("per hour, UTC") : tr("per day, UTC");
    m_spendTitle->setText(tr("Spend (USD) %1").arg(per));
    m_tokensTitle->setText(tr("Tokens (input + output) %1").arg(per));
}

void UsagePage::refreshTotals()
{
    const QLocale locale;
    const QString spend = formatUsd(m_data.spendUsd);
    //: %1 spend; %2 input tokens; %3 output tokens; %4 requests; %5 share of estimated requests
    QString text =
        tr("<b>%1</b>&nbsp;&nbsp;·&nbsp;&nbsp;%2 → %3 tokens&nbsp;&nbsp;·&nbsp;&nbsp;"
           "%4 requests&nbsp;&nbsp;·&nbsp;&nbsp;%5 estimated")
            .arg(spend, locale.toString(m_data.inputTokens), locale.toString(m_data.outputTokens),
                 locale.toString(m_data.requests),
                 locale.toString(m_data.estimatedShare() * 100.0, 'f', 0) + locale.percent());
    // A saving below zero is shown as it is: cache writes that cost more than reads saved.
    QString savings;
    if (m_data.cacheSavedUsd < 0.0)
        //: %1 a negative amount of US dollars; %2 the prompt cache's reads and writes
        savings = tr("Prompt-cache savings: <b>%1</b>, as cache writes cost more than the reads "
                     "saved&nbsp;&nbsp;·&nbsp;&nbsp;%2");
    else
        //: %1 US dollars; %2 the prompt cache's reads and writes
        savings = tr("Prompt-cache savings: <b>%1</b>&nbsp;&nbsp;·&nbsp;&nbsp;%2");
    text += QStringLiteral("<br>") +
            savings.arg(
                formatUsd(m_data.cacheSavedUsd),
                promptCacheText(m_data.cacheReadTokens, m_data.cacheWriteTokens).toHtmlEscaped());
    // The response cache's savings apart from the prompt caches' (a hit costs nothing at all);
    // only where a route or model has `cache:` and a request was looked up.
    if (const qint64 lookups = m_data.responseCacheLookups(); lookups > 0) {
        const double ratio = double(m_data.responseCacheHits) / double(lookups) * 100.0;
        //: %1 US dollars; %2 a percentage; %3 requests answered from the cache; %4 looked up
        text += QStringLiteral("<br>") +
                tr("Response-cache savings: <b>%1</b>&nbsp;&nbsp;·&nbsp;&nbsp;hit ratio %2 "
                   "(%3 of %4 lookups)")
                    .arg(formatUsd(m_data.responseCacheSavedUsd),
                         locale.toString(ratio, 'f', 0) + locale.percent(),
                         locale.toString(m_data.responseCacheHits), locale.toString(lookups));
    }
    // In a fleet the figures are the whole fleet's, or say why they are this node's only.
    if (!m_fleetProblem.isEmpty())
        text += QStringLiteral("<br><span style=\"color:#b45309\">%1</span>")
                    .arg(tr("This node only: %1").arg(m_fleetProblem).toHtmlEscaped());
    else if (!m_fleetNodes.isEmpty())
        //: %1 the names of the fleet's other nodes, comma-separated
        text += QStringLiteral("<br>") + tr("The whole fleet: this node and %1")
                                             .arg(m_fleetNodes.join(QStringLiteral(", ")))
                                             .toHtmlEscaped();
    m_totals->setText(text);
    QStringList tips{tr("Prompt-cache savings: what the input tokens read from or written to a "
                        "provider's cache would have cost at the input price, less what they "
                        "cost. A model without `cache_read_per_million` or "
                        "`cache_write_per_million` in `pricing` claims none."),
                     tr("Response-cache savings: what the answers given again from the response "
                        "cache cost when a provider made them. A hit calls no provider and costs "
                        "nothing; the hit ratio counts the requests on routes and models with "
                        "`cache:` that were looked up.")};
    if (m_data.unpricedRequests > 0)
        tips.prepend(tr("%n request(s) in this range used a model without a price in `pricing`: "
                        "they count as free.",
                        nullptr, int(m_data.unpricedRequests)));
    m_totals->setToolTip(tips.join(QStringLiteral("\n\n")));
}

void UsagePage::applySnapshot(const EngineSnapshot &snapshot)
{
    m_ledger = snapshot.usageLedger;
    refreshBanner();
    m_budgets = snapshot.budgets;
    refreshBudgets();
}

void UsagePage::refreshBudgets()
{
    m_budgetsHint->setText(m_budgets.isEmpty()
                               ? tr("None configured: add `budgets` to the config to refuse a "
                                    "tenant or key that has spent its day's or month's limit.")
                               : tr("Spend per UTC day or month; a budget used up refuses its "
                                    "tenant or key with 429 until it resets."));
    // Rows are kept while the list keeps its length: a snapshot every 100 ms only moves bars.
    while (m_budgetBars.size() > m_budgets.size()) {
        delete m_budgetLabels.takeLast();
        delete m_budgetBars.takeLast();
    }
    while (m_budgetBars.size() < m_budgets.size()) {
        QLabel *label = makeLabel(TextRole::Caption, this);
        label->setTextFormat(Qt::RichText);
        auto *bar = new QProgressBar(this);
        bar->setObjectName(QStringLiteral("usageBudgetBar"));
        bar->setRange(0, 1000);
        bar->setTextVisible(false);
        bar->setFixedHeight(6);
        m_budgetRows->addWidget(label);
        m_budgetRows->addWidget(bar);
        m_budgetLabels.append(label);
        m_budgetBars.append(bar);
    }
    const QLocale locale;
    for (qsizetype i = 0; i < m_budgets.size(); ++i) {
        const usage::BudgetStatus &budget = m_budgets[i];
        const QString window =
            budget.window == QLatin1String("day") ? tr("today") : tr("this month");
        //: %1 budget name; %2 "today" or "this month"; %3 spent; %4 limit; %5 used share
        m_budgetLabels[i]->setText(
            tr("<b>%1</b> %2: %3 of %4 (%5)")
                .arg(budget.name.toHtmlEscaped(), window, formatUsd(budget.spentUsd),
                     formatUsd(budget.limitUsd),
                     locale.toString(budget.fraction() * 100.0, 'f', 0) + locale.percent()));
        m_budgetLabels[i]->setToolTip(
            tr("Resets at %1").arg(budget.resetsAt.toString(Qt::ISODate)));
        m_budgetBars[i]->setValue(int(std::min(1.0, budget.fraction()) * 1000.0));
        const QString colour = budget.exhausted()         ? QStringLiteral("#dc2626")
                               : budget.fraction() >= 0.8 ? QStringLiteral("#f59e0b")
                                                          : QStringLiteral("#2563eb");
        m_budgetBars[i]->setStyleSheet(
            QStringLiteral("QProgressBar { background: #eef0f3; border: none; border-radius: 3px; }"
                           "QProgressBar::chunk { background: %1; border-radius: 3px; }")
                .arg(colour));
    }
}

void UsagePage::refreshBanner()
{
    if (m_ledger.writable && m_ledger.droppedRows == 0) {
        m_banner->hide();
        return;
    }
    const QLocale locale;
    QString text =
        m_ledger.writable
            ? tr("The usage ledger is written again.")
            : tr("The usage ledger cannot be written: %1. Traffic is served; %2 row(s) wait in "
                 "memory (at most %3) and writing is retried.")
                  .arg(m_ledger.problem, locale.toString(m_ledger.rowsInMemory),
                       locale.toString(m_ledger.memoryCapacityRows));
    if (m_ledger.droppedRows > 0)
        text += QLatin1Char(' ') + tr("%1 row(s) were dropped beyond that limit and are lost.")
                                       .arg(locale.toString(m_ledger.droppedRows));
    m_banner->setText(text);
    m_banner->show();
}

} // namespace switchyard::ui
