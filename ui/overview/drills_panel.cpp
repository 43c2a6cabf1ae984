#include "ui/overview/drills_panel.h"

#include "ui/common/widget_helpers.h"

#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QSignalBlocker>
#include <QVBoxLayout>
#include <array>

namespace switchyard::ui {

namespace {

// How long a local change wins over what the engine reports: the knob takes a round trip
// through two threads before the snapshot shows it.
constexpr qint64 localChangeGraceMs = 1500;

constexpr std::array modes{SimulatorKnobs::Mode::Ok,          SimulatorKnobs::Mode::ServerError,
                           SimulatorKnobs::Mode::RateLimited, SimulatorKnobs::Mode::Hang,
                           SimulatorKnobs::Mode::Reset,       SimulatorKnobs::Mode::CutStream};
// Drill presets rather than free numbers: a drill wants "slow" or "very slow", fast.
constexpr std::array latencyChoicesMs{-1, 50, 250, 1000, 3000, 10000};
constexpr std::array errorRateChoices{-1.0, 0.0, 0.1, 0.25, 0.5, 1.0};

} // namespace

DrillsPanel::DrillsPanel(QWidget *parent) : QFrame(parent)
{
    setObjectName(QStringLiteral("drillsPanel"));
    setProperty("card", true);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(16, 12, 16, 12);
    layout->setSpacing(8);

    auto *header = new QHBoxLayout;
    m_title = makeLabel(TextRole::SectionTitle, this);
    m_title->setFont(sectionTitleFont(font()));
    m_hint = makeLabel(TextRole::SectionHint, this);
    m_restore = new QPushButton(this);
    m_restore->setObjectName(QStringLiteral("restoreDrills"));
    m_restore->setProperty("flat", true);
    header->addWidget(m_title);
    header->addSpacing(8);
    header->addWidget(m_hint, 1);
    header->addWidget(m_restore);
    layout->addLayout(header);

    m_grid = new QGridLayout;
    m_grid->setHorizontalSpacing(12);
    m_grid->setVerticalSpacing(6);
    m_grid->setColumnStretch(0, 2);
    m_grid->setColumnStretch(1, 3);
    m_grid->setColumnStretch(2, 2);
    m_grid->setColumnStretch(3, 2);
    m_modeHeader = makeLabel(TextRole::ColumnHeader, this);
    m_latencyHeader = makeLabel(TextRole::ColumnHeader, this);
    m_errorHeader = makeLabel(TextRole::ColumnHeader, this);
    m_grid->addWidget(m_modeHeader, 0, 1);
    m_grid->addWidget(m_latencyHeader, 0, 2);
    m_grid->addWidget(m_errorHeader, 0, 3);
    layout->addLayout(m_grid);
    m_empty = makeLabel(TextRole::SectionHint, this);
    m_empty->setWordWrap(true);
    layout->addWidget(m_empty);
    layout->addStretch(1);

    connect(m_restore, &QPushButton::clicked, this, &DrillsPanel::restoreAll);
    retranslate();
    rebuild({});
}

QString DrillsPanel::modeName(SimulatorKnobs::Mode mode)
{
    switch (mode) {
    case SimulatorKnobs::Mode::Ok:
        return tr("Answer normally");
    case SimulatorKnobs::Mode::ServerError:
        return tr("Fail with HTTP 500");
    case SimulatorKnobs::Mode::RateLimited:
        return tr("Rate-limit (HTTP 429)");
    case SimulatorKnobs::Mode::Hang:
        return tr("Hang, never answer");
    case SimulatorKnobs::Mode::Reset:
        return tr("Reset the connection");
    case SimulatorKnobs::Mode::CutStream:
        return tr("Cut streams midway");
    }
    return {};
}

void DrillsPanel::retranslate()
{
    m_title->setText(tr("Failover drills"));
    m_hint->setText(tr("Make a simulated provider misbehave and watch its breaker"));
    m_restore->setText(tr("Restore all"));
    m_restore->setToolTip(tr("Every simulated provider answers normally again, as configured"));
    m_modeHeader->setText(tr("Behaviour"));
    m_latencyHeader->setText(tr("Latency"));
    m_errorHeader->setText(tr("Error rate"));
    m_empty->setText(tr("No simulated providers in this configuration. Drills act on the "
                        "built-in simulated providers of the demo."));
    for (Row &row : m_rows)
        fillChoices(row);
}

void DrillsPanel::fillChoices(Row &row)
{
    const QSignalBlocker modeBlocker(row.mode);
    const QSignalBlocker latencyBlocker(row.latency);
    const QSignalBlocker errorBlocker(row.errorRate);
    const int mode = std::max(0, row.mode->currentIndex());
    const int latency = std::max(0, row.latency->currentIndex());
    const int errorRate = std::max(0, row.errorRate->currentIndex());
    row.mode->clear();
    for (SimulatorKnobs::Mode choice : modes)
        row.mode->addItem(modeName(choice));
    row.latency->clear();
    const QLocale locale;
    for (int milliseconds : latencyChoicesMs) {
        if (milliseconds < 0)
            row.latency->addItem(tr("As configured"));
        else if (milliseconds < 1000)
            row.latency->addItem(tr("%1 ms").arg(locale.toString(milliseconds)));
        else
            row.latency->addItem(tr("%1 s").arg(locale.toString(milliseconds / 1000)));
    }
    row.errorRate->clear();
    for (double rate : errorRateChoices) {
        if (rate < 0.0)
            row.errorRate->addItem(tr("As configured"));
        else
            row.errorRate->addItem(tr("%1%").arg(locale.toString(qRound(rate * 100.0))));
    }
    row.mode->setCurrentIndex(mode);
    row.latency->setCurrentIndex(latency);
    row.errorRate->setCurrentIndex(errorRate);
}

void DrillsPanel::rebuild(const QList<ProviderHealth> &simulated)
{
    for (Row &row : m_rows) {
        delete row.name;
        delete row.mode;
        delete row.latency;
        delete row.errorRate;
    }
    m_rows.clear();
    for (const ProviderHealth &provider : simulated) {
        Row row;
        row.providerId = provider.id;
        row.name = makeLabel(TextRole::Value, this);
        row.name->setText(provider.id);
        row.mode = new QComboBox(this);
        row.mode->setObjectName(QStringLiteral("drillMode-") + provider.id);
        row.latency = new QComboBox(this);
        row.errorRate = new QComboBox(this);
        fillChoices(row);
        const int index = int(m_rows.size());
        m_grid->addWidget(row.name, index + 1, 0);
        m_grid->addWidget(row.mode, index + 1, 1);
        m_grid->addWidget(row.latency, index + 1, 2);
        m_grid->addWidget(row.errorRate, index + 1, 3);
        for (QComboBox *box : {row.mode, row.latency, row.errorRate})
            connect(box, &QComboBox::activated, this, [this, index] { send(index); });
        m_rows.append(row);
    }
    const bool any = !m_rows.isEmpty();
    m_empty->setVisible(!any);
    m_modeHeader->setVisible(any);
    m_latencyHeader->setVisible(any);
    m_errorHeader->setVisible(any);
    m_restore->setEnabled(any);
}

void DrillsPanel::applySnapshot(const EngineSnapshot &snapshot)
{
    QList<ProviderHealth> simulated;
    for (const ProviderHealth &provider : snapshot.providers) {
        if (provider.simulated)
            simulated.append(provider);
    }
    bool sameProviders = simulated.size() == m_rows.size();
    for (qsizetype i = 0; sameProviders && i < simulated.size(); ++i)
        sameProviders = simulated[i].id == m_rows[i].providerId;
    if (!sameProviders)
        rebuild(simulated);

    for (qsizetype i = 0; i < simulated.size(); ++i) {
        Row &row = m_rows[i];
        if (row.sinceLocalChange.isValid() && row.sinceLocalChange.elapsed() < localChangeGraceMs)
            continue;
        const auto found = std::find(modes.begin(), modes.end(), simulated[i].simulatorMode);
        const int index = int(found - modes.begin());
        if (index < int(modes.size()) && row.mode->currentIndex() != index) {
            const QSignalBlocker blocker(row.mode);
            row.mode->setCurrentIndex(index);
        }
    }
}

SimulatorKnobs DrillsPanel::knobsOf(int index) const
{
    const Row &row = m_rows.at(index);
    SimulatorKnobs knobs;
    knobs.mode = modes.at(std::max(0, row.mode->currentIndex()));
    knobs.latencyMs = latencyChoicesMs.at(std::max(0, row.latency->currentIndex()));
    knobs.errorRate = errorRateChoices.at(std::max(0, row.errorRate->currentIndex()));
    return knobs;
}

QString DrillsPanel::providerOf(int row) const
{
    return m_rows.at(row).providerId;
}

QComboBox *DrillsPanel::modeBox(int row) const
{
    return m_rows.at(row).mode;
}

void DrillsPanel::send(int index)
{
    m_rows[index].sinceLocalChange.start();
    Q_EMIT knobsRequested(m_rows.at(index).providerId, knobsOf(index));
}

void DrillsPanel::restoreAll()
{
    for (int index = 0; index < m_rows.size(); ++index) {
        Row &row = m_rows[index];
        for (QComboBox *box : {row.mode, row.latency, row.errorRate}) {
            const QSignalBlocker blocker(box);
            box->setCurrentIndex(0);
        }
        send(index);
    }
}

} // namespace switchyard::ui
