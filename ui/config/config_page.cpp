#include "ui/config/config_page.h"

#include "bridge/engine_bridge.h"
#include "ui/common/widget_helpers.h"
#include "ui/config/config_models.h"

#include <QDateTime>
#include <QEvent>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLocale>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

namespace switchyard::ui {

namespace {

QTableView *makeTable(const QString &objectName, QWidget *parent)
{
    auto *table = new QTableView(parent);
    table->setObjectName(objectName);
    table->setShowGrid(false);
    table->setWordWrap(false);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->setFrameShape(QFrame::NoFrame);
    table->setCornerButtonEnabled(false);
    table->verticalHeader()->hide();
    table->horizontalHeader()->setHighlightSections(false);
    table->horizontalHeader()->setStretchLastSection(true);
    return table;
}

} // namespace

ConfigPage::ConfigPage(EngineBridge &bridge, QWidget *parent)
    : QWidget(parent), m_bridge(bridge), m_versions(new ConfigVersionsModel(this)),
      m_diff(new ConfigDiffModel(this))
{
    setObjectName(QStringLiteral("configPage"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(12, 12, 12, 12);
    layout->setSpacing(12);
    layout->addWidget(buildStatusCard());
    auto *split = new QSplitter(Qt::Horizontal, this);
    split->setChildrenCollapsible(false);
    split->addWidget(buildVersionsCard());
    split->addWidget(buildDiffCard());
    split->setStretchFactor(0, 5);
    split->setStretchFactor(1, 6);
    layout->addWidget(split, 1);

    m_confirm = [this](quint64 number) {
        const QMessageBox::StandardButton answer = QMessageBox::question(
            this, tr("Roll back the config"),
            tr("Roll back to version %1?\n\nIts config becomes a new version, is applied at once "
               "(requests in flight finish as they started) and is written to the config file.")
                .arg(number),
            QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel);
        return answer == QMessageBox::Yes;
    };

    connect(&m_bridge, &EngineBridge::snapshotUpdated, this,
            [this](const EngineSnapshot &snapshot) { showStatus(snapshot.config); });
    connect(&m_bridge, &EngineBridge::configVersionsLoaded, this, &ConfigPage::versionsLoaded);
    connect(&m_bridge, &EngineBridge::configVersionLoaded, this, &ConfigPage::versionLoaded);
    connect(&m_bridge, &EngineBridge::configRolledBack, this, &ConfigPage::rolledBack);
    retranslateUi();
    showStatus(m_bridge.lastSnapshot().config);
}

ConfigPage::~ConfigPage() = default;

void ConfigPage::setRollbackConfirmation(std::function<bool(quint64)> confirm)
{
    m_confirm = std::move(confirm);
}

QWidget *ConfigPage::buildStatusCard()
{
    QFrame *card = makeCard(QStringLiteral("configStatusCard"), this);
    auto *layout = new QVBoxLayout(card);
    layout->setContentsMargins(16, 12, 16, 12);
    layout->setSpacing(6);
    auto *row = new QHBoxLayout;
    m_statusTitle = makeLabel(TextRole::SectionTitle, card);
    m_statusTitle->setFont(sectionTitleFont(font()));
    m_status = makeLabel(TextRole::Hint, card);
    m_status->setObjectName(QStringLiteral("configStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    row->addWidget(m_statusTitle);
    row->addSpacing(12);
    row->addWidget(m_status, 1);
    layout->addLayout(row);
    m_details = new QPlainTextEdit(card);
    m_details->setObjectName(QStringLiteral("configDetails"));
    m_details->setReadOnly(true);
    m_details->setFrameShape(QFrame::NoFrame);
    m_details->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_details->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_details->hide();
    layout->addWidget(m_details);
    return card;
}

QWidget *ConfigPage::buildVersionsCard()
{
    QFrame *card = makeCard(QStringLiteral("configVersionsCard"), this);
    auto *layout = new QVBoxLayout(card);
    layout->setContentsMargins(12, 12, 12, 12);
    layout->setSpacing(8);
    auto *header = new QHBoxLayout;
    m_versionsTitle = makeLabel(TextRole::SectionTitle, card);
    m_versionsTitle->setFont(sectionTitleFont(font()));
    m_versionsHint = makeLabel(TextRole::SectionHint, card);
    header->addWidget(m_versionsTitle);
    header->addSpacing(8);
    header->addWidget(m_versionsHint, 1);
    layout->addLayout(header);

    m_list = makeTable(QStringLiteral("configVersionList"), card);
    m_list->setModel(m_versions);
    m_list->setAlternatingRowColors(true);
    m_list->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_list->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_list->verticalHeader()->setDefaultSectionSize(QFontMetrics(font()).height() + 12);
    const QFontMetrics metrics(scaledFont(font(), 1.0, QFont::DemiBold));
    const auto widthOf = [&](const QString &sample) {
        return metrics.horizontalAdvance(sample) + 22;
    };
    QHeaderView *columns = m_list->horizontalHeader();
    columns->resizeSection(ConfigVersionsModel::NumberColumn,
                           widthOf(QStringLiteral("12 (running)")));
    columns->resizeSection(ConfigVersionsModel::TimeColumn,
                           widthOf(QStringLiteral("2024-03-12 14:00:00")));
    columns->resizeSection(ConfigVersionsModel::SourceColumn, widthOf(QStringLiteral("admin API")));
    columns->resizeSection(ConfigVersionsModel::AuthorColumn, widthOf(QStringLiteral("ops-team")));
    m_list->setTextElideMode(Qt::ElideRight);
    layout->addWidget(m_list, 1);
    connect(m_list->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &ConfigPage::selectionChanged);

    auto *actions = new QHBoxLayout;
    m_rollback = new QPushButton(card);
    m_rollback->setObjectName(QStringLiteral("configRollbackButton"));
    m_rollback->setEnabled(false);
    connect(m_rollback, &QPushButton::clicked, this, &ConfigPage::askRollback);
    m_rollbackResult = makeLabel(TextRole::Hint, card);
    m_rollbackResult->setObjectName(QStringLiteral("configRollbackResult"));
    m_rollbackResult->setWordWrap(true);
    actions->addWidget(m_rollback);
    actions->addSpacing(8);
    actions->addWidget(m_rollbackResult, 1);
    layout->addLayout(actions);
    return card;
}

QWidget *ConfigPage::buildDiffCard()
{
    QFrame *card = makeCard(QStringLiteral("configDiffCard"), this);
    auto *layout = new QVBoxLayout(card);
    layout->setContentsMargins(12, 12, 12, 12);
    layout->setSpacing(8);
    auto *header = new QHBoxLayout;
    m_diffTitle = makeLabel(TextRole::SectionTitle, card);
    m_diffTitle->setObjectName(QStringLiteral("configDiffTitle"));
    m_diffTitle->setFont(sectionTitleFont(font()));
    m_diffHint = makeLabel(TextRole::SectionHint, card);
    m_diffHint->setObjectName(QStringLiteral("configDiffHint"));
    header->addWidget(m_diffTitle);
    header->addSpacing(8);
    header->addWidget(m_diffHint, 1);
    layout->addLayout(header);

    m_diffView = makeTable(QStringLiteral("configDiffView"), card);
    m_diffView->setModel(m_diff);
    m_diffView->setSelectionMode(QAbstractItemView::NoSelection);
    m_diffView->setFocusPolicy(Qt::NoFocus);
    m_diffView->horizontalHeader()->hide();
    m_diffView->horizontalHeader()->setStretchLastSection(false);
    m_diffView->setHorizontalScrollMode(QAbstractItemView::ScrollPerPixel);
    const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    const int numberWidth = QFontMetrics(mono).horizontalAdvance(QStringLiteral("0000")) + 12;
    m_diffView->horizontalHeader()->resizeSection(ConfigDiffModel::LeftLineColumn, numberWidth);
    m_diffView->horizontalHeader()->resizeSection(ConfigDiffModel::RightLineColumn, numberWidth);
    m_diffView->verticalHeader()->setDefaultSectionSize(QFontMetrics(mono).height() + 4);
    layout->addWidget(m_diffView, 1);
    showBothSides(true);
    return card;
}

void ConfigPage::showBothSides(bool both)
{
    QHeaderView *columns = m_diffView->horizontalHeader();
    m_diffView->setColumnHidden(ConfigDiffModel::LeftLineColumn, !both);
    m_diffView->setColumnHidden(ConfigDiffModel::LeftTextColumn, !both);
    // Two sides share the width, each cut at its half. One text alone is as wide as its longest
    // line, scrolling sideways when that is wider than the card.
    columns->setSectionResizeMode(ConfigDiffModel::LeftTextColumn, QHeaderView::Stretch);
    columns->setSectionResizeMode(ConfigDiffModel::RightTextColumn,
                                  both ? QHeaderView::Stretch : QHeaderView::ResizeToContents);
}

void ConfigPage::retranslateUi()
{
    m_statusTitle->setText(tr("Config"));
    m_versionsTitle->setText(tr("Versions"));
    m_versionsHint->setText(tr("select one to see what it changed, or two to compare"));
    m_rollback->setText(tr("Roll back to this version…"));
    m_versions->retranslate();
    showStatus(m_lastStatus);
    showDiffWhenLoaded();
}

void ConfigPage::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslateUi();
    QWidget::changeEvent(event);
}

void ConfigPage::showStatus(const ConfigStatus &status)
{
    m_lastStatus = status;
    QStringList details;
    if (!status.tracked) {
        m_status->setText(tr("The engine runs without a config file: nothing is versioned."));
        setTone(m_status, Tone::Neutral);
    } else if (!status.lastReloadErrors.isEmpty()) {
        m_status->setText(
            tr("Version %1 is running. The file on disk was changed and refused at %2: fix it "
               "and save again.")
                .arg(status.runningVersion)
                .arg(QLocale().toString(
                    QDateTime::fromMSecsSinceEpoch(status.lastReloadErrorMsSinceEpoch)
                        .toLocalTime()
                        .time(),
                    QStringLiteral("HH:mm:ss"))));
        setTone(m_status, Tone::Bad);
        for (const config::ConfigError &error : status.lastReloadErrors)
            details.append(error.toString());
    } else if (!status.fileMatches) {
        m_status->setText(
            status.overlayPath.isEmpty()
                ? tr("Version %1 is running. Running config differs from the file %2.")
                      .arg(status.runningVersion)
                      .arg(status.filePath)
                : tr("Version %1 is running. Running config differs from the file %2: the "
                     "overlay %3 replaces %4, and a restart loads it too.")
                      .arg(status.runningVersion)
                      .arg(status.filePath, status.overlayPath,
                           status.overlayKeys.join(QStringLiteral(", "))));
        setTone(m_status, Tone::Warning);
        details = status.difference.split(QLatin1Char('\n'));
    } else {
        m_status->setText(tr("Version %1 is running. The file %2 on disk matches it.")
                              .arg(status.runningVersion)
                              .arg(status.filePath));
        setTone(m_status, Tone::Good);
    }
    if (!status.writeProblem.isEmpty())
        details.prepend(status.writeProblem);
    if (!status.overlayNote.isEmpty())
        details.prepend(status.overlayNote);
    if (!status.historyProblem.isEmpty())
        details.prepend(tr("Versions are kept in memory only: %1").arg(status.historyProblem));
    const QString text = details.join(QLatin1Char('\n')).trimmed();
    if (m_details->toPlainText() != text) {
        m_details->setPlainText(text);
        // As tall as its lines, up to seven: a long difference scrolls.
        const int lines = std::min<int>(7, int(text.count(QLatin1Char('\n'))) + 1);
        m_details->setFixedHeight(QFontMetrics(m_details->font()).lineSpacing() * lines + 14);
    }
    m_details->setVisible(!text.isEmpty());
    if (status.tracked && status.runningVersion != m_shownRunning) {
        m_shownRunning = status.runningVersion;
        requestVersions();
    }
}

void ConfigPage::requestVersions()
{
    m_versionsTicket = m_nextTicket++;
    m_bridge.loadConfigVersions(m_versionsTicket);
}

void ConfigPage::versionsLoaded(quint64 ticket, const QList<ConfigVersionInfo> &versions)
{
    if (ticket != m_versionsTicket)
        return; // an answer to an older question
    const QList<quint64> selected = selectedNumbers();
    m_versions->setVersions(versions, m_lastStatus.runningVersion);
    m_versionsHint->setText(tr("%n version(s); select one to see what it changed, or two to "
                               "compare",
                               nullptr, int(versions.size())));
    if (!selected.isEmpty())
        selectVersions(selected);
    else if (!versions.isEmpty())
        selectVersions({versions.constFirst().number});
    else
        selectionChanged();
}

void ConfigPage::selectVersions(const QList<quint64> &numbers)
{
    QItemSelection selection;
    for (quint64 number : numbers) {
        const int row = m_versions->rowOf(number);
        if (row >= 0)
            selection.select(m_versions->index(row, 0),
                             m_versions->index(row, ConfigVersionsModel::ColumnCount - 1));
    }
    m_list->selectionModel()->select(selection, QItemSelectionModel::ClearAndSelect);
    if (selection.isEmpty())
        selectionChanged();
}

QList<quint64> ConfigPage::selectedNumbers() const
{
    QList<quint64> numbers;
    for (const QModelIndex &row : m_list->selectionModel()->selectedRows()) {
        if (const ConfigVersionInfo *version = m_versions->versionAt(row.row()))
            numbers.append(version->number);
    }
    std::sort(numbers.begin(), numbers.end());
    return numbers;
}

void ConfigPage::selectionChanged()
{
    const QList<quint64> numbers = selectedNumbers();
    m_rollback->setEnabled(numbers.size() == 1 &&
                           numbers.constFirst() != m_lastStatus.runningVersion);
    if (numbers.isEmpty()) {
        m_diffFrom = m_diffTo = 0;
    } else if (numbers.size() == 1) {
        // One version: what it changed, against the version before it.
        m_diffTo = numbers.constFirst();
        m_diffFrom = m_diffTo > 1 ? m_diffTo - 1 : 0;
    } else {
        // Two or more: the oldest against the newest selected.
        m_diffFrom = numbers.constFirst();
        m_diffTo = numbers.constLast();
    }
    for (quint64 number : {m_diffFrom, m_diffTo}) {
        if (number == 0 || m_texts.contains(number) ||
            std::find(m_textTickets.cbegin(), m_textTickets.cend(), number) != m_textTickets.cend())
            continue;
        const quint64 ticket = m_nextTicket++;
        m_textTickets.insert(ticket, number);
        m_bridge.loadConfigVersion(ticket, number);
    }
    showDiffWhenLoaded();
}

void ConfigPage::versionLoaded(quint64 ticket, bool found, const ConfigVersion &version)
{
    const auto asked = m_textTickets.constFind(ticket);
    if (asked == m_textTickets.cend())
        return;
    const quint64 number = *asked;
    m_textTickets.erase(asked);
    if (found)
        m_texts.insert(number, version.text);
    showDiffWhenLoaded();
}

void ConfigPage::showDiffWhenLoaded()
{
    if (m_diffTo == 0) {
        m_diff->clear();
        m_diffTitle->setText(tr("Changes"));
        m_diffHint->setText(tr("no version selected"));
        return;
    }
    m_diffTitle->setText(m_diffFrom == 0
                             ? tr("Version %1").arg(m_diffTo)
                             : tr("Version %1 → version %2").arg(m_diffFrom).arg(m_diffTo));
    const bool haveFrom = m_diffFrom == 0 || m_texts.contains(m_diffFrom);
    if (!haveFrom || !m_texts.contains(m_diffTo)) {
        m_diffHint->setText(tr("loading…"));
        return;
    }
    if (m_diffFrom == 0) {
        // The first version changed nothing: it is shown as it is, across the whole card.
        showBothSides(false);
        m_diff->setText(m_texts.value(m_diffTo));
        m_diffHint->setText(
            tr("the first version, %n line(s)", nullptr, int(m_diff->rows().size())));
        m_diffView->scrollToTop();
        return;
    }
    showBothSides(true);
    m_diff->setTexts(m_texts.value(m_diffFrom), m_texts.value(m_diffTo));
    m_diffHint->setText(m_diff->changedRows() == 0
                            ? tr("the same config")
                            : tr("%n line(s) changed", nullptr, m_diff->changedRows()));
    // Scroll to the first change: in a long file that is what the reader came for.
    for (int row = 0; row < m_diff->rows().size(); ++row) {
        const config::SideBySideRow &line = m_diff->rows()[row];
        if (line.leftKind != config::DiffLine::Kind::Same ||
            line.rightKind != config::DiffLine::Kind::Same) {
            m_diffView->scrollTo(m_diff->index(std::max(0, row - 3), 0),
                                 QAbstractItemView::PositionAtTop);
            break;
        }
    }
}

void ConfigPage::askRollback()
{
    const QList<quint64> numbers = selectedNumbers();
    if (numbers.size() != 1 || !m_confirm || !m_confirm(numbers.constFirst()))
        return;
    m_rollbackTicket = m_nextTicket++;
    m_rollbackResult->setText(tr("Rolling back to version %1…").arg(numbers.constFirst()));
    setTone(m_rollbackResult, Tone::Neutral);
    m_bridge.rollbackConfig(m_rollbackTicket, numbers.constFirst());
}

void ConfigPage::rolledBack(quint64 ticket, const ConfigChangeResult &result)
{
    if (ticket != m_rollbackTicket)
        return;
    using Outcome = ConfigChangeResult::Outcome;
    if (result.outcome == Outcome::Applied || result.outcome == Outcome::Unchanged) {
        m_rollbackResult->setText(tr("Rolled back: version %1 is running.").arg(result.version));
        setTone(m_rollbackResult, Tone::Good);
        return;
    }
    m_rollbackResult->setText(tr("Not rolled back: %1").arg(result.message));
    setTone(m_rollbackResult, Tone::Bad);
}

} // namespace switchyard::ui
