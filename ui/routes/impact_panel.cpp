#include "ui/routes/impact_panel.h"

#include "bridge/engine_bridge.h"
#include "ui/common/widget_helpers.h"
#include "ui/routes/impact_models.h"
#include "ui/routes/route_rules_model.h"

#include <QDateTime>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

namespace switchyard::ui {

namespace {

QTableView *makeTable(QAbstractItemModel *model, const QString &objectName, QWidget *parent)
{
    auto *view = new QTableView(parent);
    view->setObjectName(objectName);
    view->setModel(model);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setSelectionMode(QAbstractItemView::SingleSelection);
    view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    view->verticalHeader()->hide();
    view->setWordWrap(false);
    view->setTextElideMode(Qt::ElideMiddle);
    return view;
}

} // namespace

ImpactPanel::ImpactPanel(EngineBridge &bridge, const RouteRulesModel &editedRules, QWidget *parent)
    : QFrame(parent), m_bridge(bridge), m_editedRules(editedRules),
      m_cells(new ImpactCellsModel(this)), m_examples(new ImpactExamplesModel(this))
{
    setObjectName(QStringLiteral("impactCard"));
    setProperty("card", true);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(16, 14, 16, 14);

    auto *header = new QHBoxLayout;
    m_title = makeLabel(TextRole::SectionTitle, this);
    m_title->setFont(sectionTitleFont(font()));
    m_runButton = new QPushButton(this);
    m_runButton->setObjectName(QStringLiteral("impactButton"));
    header->addWidget(m_title);
    header->addStretch(1);
    header->addWidget(m_runButton);
    layout->addLayout(header);
    m_hint = makeLabel(TextRole::SectionHint, this);
    m_hint->setWordWrap(true);
    layout->addWidget(m_hint);
    m_summary = makeLabel(TextRole::Hint, this);
    m_summary->setObjectName(QStringLiteral("impactSummary"));
    m_summary->setWordWrap(true);
    QFont headline = m_summary->font();
    headline.setBold(true);
    m_summary->setFont(headline);
    layout->addWidget(m_summary);
    m_sampleNote = makeLabel(TextRole::SectionHint, this);
    m_sampleNote->setObjectName(QStringLiteral("impactSampleNote"));
    m_sampleNote->setWordWrap(true);
    layout->addWidget(m_sampleNote);

    m_cellsView = makeTable(m_cells, QStringLiteral("impactCells"), this);
    m_cellsView->horizontalHeader()->setSectionResizeMode(ImpactCellsModel::From,
                                                          QHeaderView::Stretch);
    m_cellsView->horizontalHeader()->setSectionResizeMode(ImpactCellsModel::To,
                                                          QHeaderView::Stretch);
    m_cellsView->horizontalHeader()->setSectionResizeMode(ImpactCellsModel::Requests,
                                                          QHeaderView::ResizeToContents);
    m_cellsView->horizontalHeader()->setSectionResizeMode(ImpactCellsModel::Share,
                                                          QHeaderView::ResizeToContents);
    layout->addWidget(m_cellsView, 2);

    m_examplesTitle = makeLabel(TextRole::ColumnHeader, this);
    layout->addWidget(m_examplesTitle);
    m_examplesView = makeTable(m_examples, QStringLiteral("impactExamples"), this);
    m_examplesView->horizontalHeader()->setSectionResizeMode(ImpactExamplesModel::Request,
                                                             QHeaderView::ResizeToContents);
    m_examplesView->horizontalHeader()->setSectionResizeMode(ImpactExamplesModel::User,
                                                             QHeaderView::ResizeToContents);
    m_examplesView->horizontalHeader()->setSectionResizeMode(ImpactExamplesModel::Live,
                                                             QHeaderView::Stretch);
    m_examplesView->horizontalHeader()->setSectionResizeMode(ImpactExamplesModel::Edited,
                                                             QHeaderView::Stretch);
    layout->addWidget(m_examplesView, 2);

    connect(m_runButton, &QPushButton::clicked, this, &ImpactPanel::previewImpact);
    connect(&m_bridge, &EngineBridge::impactPreviewed, this, &ImpactPanel::onImpactPreviewed);
    connect(m_cellsView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &current) { showCell(current.row()); });
    // A preview answers for the rules it was asked with: any edit after that makes it stale.
    connect(&m_editedRules, &QAbstractItemModel::dataChanged, this, &ImpactPanel::markStale);
    connect(&m_editedRules, &QAbstractItemModel::rowsInserted, this, &ImpactPanel::markStale);
    connect(&m_editedRules, &QAbstractItemModel::rowsRemoved, this, &ImpactPanel::markStale);
    connect(&m_editedRules, &QAbstractItemModel::rowsMoved, this, &ImpactPanel::markStale);
    connect(&m_editedRules, &QAbstractItemModel::modelReset, this, &ImpactPanel::markStale);
    connect(&m_editedRules, &QAbstractItemModel::layoutChanged, this, &ImpactPanel::markStale);
    for (QLabel *label : {m_hint, m_summary, m_sampleNote})
        label->installEventFilter(this);
    retranslateUi();
}

void ImpactPanel::retranslateUi()
{
    m_title->setText(tr("Impact preview"));
    m_hint->setText(tr("Where the live requests of the last hour would go with your edits: each "
                       "sampled request is routed again under the live rules and under yours."));
    m_runButton->setText(tr("Preview impact"));
    m_examplesTitle->setText(tr("Sample requests of the selected row"));
    showSummary();
}

void ImpactPanel::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange) {
        retranslateUi();
        m_cells->retranslate();
        m_examples->retranslate();
    }
    QFrame::changeEvent(event);
}

// A word-wrapped label in a tab page is laid out at the height of its text unwrapped, and its
// next lines are cut off. Each of ours asks for the height its text needs at the width it got,
// again whenever its width or its text changes.
bool ImpactPanel::eventFilter(QObject *watched, QEvent *event)
{
    if (event->type() == QEvent::Resize) {
        if (auto *label = qobject_cast<QLabel *>(watched))
            fitToWidth(label);
    }
    return QFrame::eventFilter(watched, event);
}

void ImpactPanel::fitToWidth(QLabel *label)
{
    // Measured by the font itself: QLabel::heightForWidth answers for a narrower width than the
    // label has once the style sheet applies.
    const QRect contents = label->contentsRect();
    const int height = label->text().isEmpty()
                           ? 0
                           : label->fontMetrics()
                                     .boundingRect(QRect(0, 0, contents.width(), QWIDGETSIZE_MAX),
                                                   Qt::TextWordWrap, label->text())
                                     .height() +
                                 label->height() - contents.height();
    if (height != label->minimumHeight())
        label->setMinimumHeight(height);
}

void ImpactPanel::fitWrappedLabels()
{
    for (QLabel *label : {m_hint, m_summary, m_sampleNote})
        fitToWidth(label);
}

void ImpactPanel::markStale()
{
    if (!m_answered || m_stale)
        return;
    m_stale = true;
    showSummary();
}

void ImpactPanel::previewImpact()
{
    m_ticket = m_nextTicket++;
    m_running = true;
    m_stale = false;
    showSummary();
    m_bridge.previewImpact(m_ticket, m_editedRules.rules());
}

void ImpactPanel::onImpactPreviewed(quint64 ticket, const routing::ImpactPreview &preview)
{
    if (ticket != m_ticket)
        return;
    m_running = false;
    m_answered = true;
    m_preview = preview;
    m_cells->setPreview(preview);
    showSummary();
    if (m_cells->rowCount() > 0)
        m_cellsView->selectRow(0);
    else
        showCell(-1);
}

void ImpactPanel::showSummary()
{
    const QLocale locale;
    QString sampleNote;
    if (m_running) {
        m_summary->setText(tr("Routing the sample under both rule sets..."));
        setTone(m_summary, Tone::Neutral);
    } else if (!m_answered) {
        m_summary->setText(tr("Edit the rules, then preview where recent traffic would go."));
        setTone(m_summary, Tone::Neutral);
    } else if (!m_preview.error.isEmpty()) {
        m_summary->setText(tr("No preview: %1").arg(m_preview.error));
        setTone(m_summary, Tone::Bad);
    } else {
        if (m_preview.sampled == 0) {
            m_summary->setText(tr("No live requests in the last %n minute(s) to replay.", nullptr,
                                  m_preview.windowMinutes));
        } else {
            m_summary->setText(
                tr("%1 of %2 sampled requests would move (%3%4); %5 would now be refused.")
                    .arg(locale.toString(m_preview.moved), locale.toString(m_preview.sampled),
                         locale.toString(100.0 * m_preview.moved / m_preview.sampled, 'f', 1),
                         locale.percent(), locale.toString(m_preview.newlyRefused)));
        }
        setTone(m_summary, m_preview.newlyRefused > 0 ? Tone::Bad
                           : m_preview.moved > 0      ? Tone::Warning
                                                      : Tone::Good);
        QStringList notes;
        if (m_stale)
            notes.append(tr("The rules changed since this preview: preview again to see their "
                            "effect."));
        if (m_preview.sampled > 0) {
            const QDateTime oldest = QDateTime::fromMSecsSinceEpoch(m_preview.oldestMsSinceEpoch);
            notes.append(tr("Replayed: the sampled requests since %1.")
                             .arg(locale.toString(oldest.time(), QLocale::ShortFormat)));
        }
        notes.append(m_preview.stride > 1
                         ? tr("The sample keeps up to %1 requests of the last %2 minutes, at most "
                              "%3 a minute; now one request in %4.")
                               .arg(locale.toString(m_preview.sampleCapacity),
                                    locale.toString(m_preview.windowMinutes),
                                    locale.toString(m_preview.perMinute),
                                    locale.toString(m_preview.stride))
                         : tr("The sample keeps up to %1 requests of the last %2 minutes, at most "
                              "%3 a minute; now every request.")
                               .arg(locale.toString(m_preview.sampleCapacity),
                                    locale.toString(m_preview.windowMinutes),
                                    locale.toString(m_preview.perMinute)));
        sampleNote = notes.join(u' ');
    }
    m_sampleNote->setText(sampleNote);
    m_sampleNote->setVisible(!sampleNote.isEmpty());
    fitWrappedLabels();
}

void ImpactPanel::showCell(int row)
{
    const routing::ImpactCell *cell = m_cells->cellAt(row);
    m_examples->setExamples(cell ? cell->examples : QList<routing::ImpactExample>());
}

} // namespace switchyard::ui
