#include "ui/routes/canary_panel.h"

#include "bridge/engine_bridge.h"
#include "config/rule_validation.h"
#include "ui/common/widget_helpers.h"

#include <QEvent>
#include <QGridLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSlider>
#include <QVBoxLayout>
#include <algorithm>

namespace switchyard::ui {

namespace {

// Long enough to coalesce a slider drag into a few engine calls, short enough to feel live.
constexpr int kCanaryDebounceMs = 150;

int percentOf(int weight, int total)
{
    return total > 0 ? int(qRound(100.0 * weight / total)) : 0;
}

} // namespace

CanaryPanel::CanaryPanel(EngineBridge &bridge, QWidget *parent) : QFrame(parent), m_bridge(bridge)
{
    m_canaryDebounce.setSingleShot(true);
    m_canaryDebounce.setInterval(kCanaryDebounceMs);
    connect(&m_canaryDebounce, &QTimer::timeout, this, &CanaryPanel::sendCanaryWeights);

    setObjectName(QStringLiteral("canaryCard"));
    setProperty("card", true);
    auto *outer = new QVBoxLayout(this);
    outer->setContentsMargins(16, 14, 16, 14);
    m_title = makeLabel(TextRole::SectionTitle, this);
    m_title->setFont(sectionTitleFont(font()));
    outer->addWidget(m_title);
    m_empty = makeLabel(TextRole::Hint, this);
    m_empty->setWordWrap(true);
    outer->addWidget(m_empty);
    auto *holder = new QWidget(this);
    m_canaryLayout = new QVBoxLayout(holder);
    m_canaryLayout->setContentsMargins(0, 0, 0, 0);
    m_canaryLayout->addStretch(1);
    auto *scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidget(holder);
    holder->setAutoFillBackground(false);
    scroll->viewport()->setAutoFillBackground(false);
    outer->addWidget(scroll, 1);
    retranslateUi();
}

void CanaryPanel::applySplits(const QList<routing::CanarySplitState> &splits)
{
    QStringList splitRules;
    for (const routing::CanarySplitState &split : splits)
        splitRules.append(split.rule);
    if (splitRules == m_splitRules && !m_splitControls.isEmpty())
        updateCanary(splits);
    else
        rebuildCanary(splits);
}

void CanaryPanel::retranslateUi()
{
    m_title->setText(tr("Canary splits"));
    m_empty->setText(tr("No rule splits its traffic."));
    for (SplitControls &controls : m_splitControls)
        controls.reset->setText(tr("Reset to file"));
    if (!m_splits.isEmpty())
        updateCanary(m_splits);
}

void CanaryPanel::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslateUi();
    QFrame::changeEvent(event);
}

void CanaryPanel::rebuildCanary(const QList<routing::CanarySplitState> &splits)
{
    for (const SplitControls &controls : std::as_const(m_splitControls))
        retire(controls.box);
    m_splitControls.clear();
    m_splitRules.clear();
    m_empty->setVisible(splits.isEmpty());
    for (const routing::CanarySplitState &split : splits) {
        SplitControls controls;
        controls.box = new QWidget;
        auto *grid = new QGridLayout(controls.box);
        grid->setContentsMargins(0, 4, 0, 8);
        controls.title = makeLabel(TextRole::Value, controls.box);
        controls.reset = new QPushButton(tr("Reset to file"), controls.box);
        controls.reset->setObjectName(QStringLiteral("canaryReset:%1").arg(split.rule));
        grid->addWidget(controls.title, 0, 0, 1, 2);
        grid->addWidget(controls.reset, 0, 2, Qt::AlignRight);
        const QString rule = split.rule;
        for (int i = 0; i < split.branches.size(); ++i) {
            BranchSlider branch;
            auto *name = makeLabel(TextRole::Caption, controls.box);
            name->setText(split.branches[i].target);
            branch.slider = new QSlider(Qt::Horizontal, controls.box);
            branch.slider->setObjectName(QStringLiteral("canarySlider:%1:%2").arg(rule).arg(i));
            branch.slider->setRange(0, 100);
            branch.label = makeLabel(TextRole::Hint, controls.box);
            branch.label->setObjectName(QStringLiteral("canaryWeight:%1:%2").arg(rule).arg(i));
            grid->addWidget(name, i + 1, 0);
            grid->addWidget(branch.slider, i + 1, 1);
            grid->addWidget(branch.label, i + 1, 2);
            connect(branch.slider, &QSlider::valueChanged, this,
                    [this, rule, i](int value) { sliderMoved(rule, i, value); });
            controls.branches.append(branch);
        }
        grid->setColumnStretch(1, 1);
        connect(controls.reset, &QPushButton::clicked, this, [this, rule] {
            m_pendingWeights.remove(rule);
            m_bridge.resetCanaryWeights(rule);
        });
        m_canaryLayout->insertWidget(m_canaryLayout->count() - 1, controls.box);
        m_splitControls.append(controls);
        m_splitRules.append(rule);
    }
    updateCanary(splits);
}

void CanaryPanel::updateCanary(const QList<routing::CanarySplitState> &splits)
{
    m_splits = splits;
    for (int s = 0; s < splits.size() && s < m_splitControls.size(); ++s) {
        const routing::CanarySplitState &split = splits[s];
        SplitControls &controls = m_splitControls[s];
        controls.title->setText(
            split.overridden
                ? tr("%1, by %2 (live weights)").arg(split.rule, config::splitKeyName(split.key))
                : tr("%1, by %2").arg(split.rule, config::splitKeyName(split.key)));
        controls.reset->setEnabled(split.overridden);
        int total = 0;
        int configuredTotal = 0;
        for (const routing::CanaryBranchState &branch : split.branches) {
            total += branch.weight;
            configuredTotal += branch.configuredWeight;
        }
        const bool pending = m_pendingWeights.contains(split.rule);
        for (int i = 0; i < split.branches.size() && i < controls.branches.size(); ++i) {
            const routing::CanaryBranchState &branch = split.branches[i];
            const BranchSlider &widgets = controls.branches[i];
            const int live = percentOf(branch.weight, total);
            if (!pending && !widgets.slider->isSliderDown()) {
                const QSignalBlocker blocker(widgets.slider);
                widgets.slider->setValue(live);
            }
            widgets.label->setText(tr("live %1 % · file %2 %")
                                       .arg(live)
                                       .arg(percentOf(branch.configuredWeight, configuredTotal)));
        }
    }
}

void CanaryPanel::sliderMoved(const QString &rule, int branch, int value)
{
    const qsizetype index = m_splitRules.indexOf(rule);
    if (index < 0)
        return;
    SplitControls &controls = m_splitControls[index];
    QList<int> weights;
    for (const BranchSlider &slider : std::as_const(controls.branches))
        weights.append(slider.slider->value());
    if (weights.size() == 2) {
        // Two ways: the other branch takes what is left, so the sliders read as percentages.
        const int other = 1 - branch;
        weights[other] = 100 - value;
        const QSignalBlocker blocker(controls.branches[other].slider);
        controls.branches[other].slider->setValue(weights[other]);
    }
    m_pendingWeights.insert(rule, weights);
    m_canaryDebounce.start();
}

void CanaryPanel::sendCanaryWeights()
{
    for (auto it = m_pendingWeights.cbegin(); it != m_pendingWeights.cend(); ++it) {
        QList<int> weights = it.value();
        // The router needs some traffic somewhere: all sliders at zero means nothing changes.
        if (std::all_of(weights.begin(), weights.end(), [](int weight) { return weight == 0; }))
            continue;
        m_bridge.setCanaryWeights(it.key(), weights);
    }
    m_pendingWeights.clear();
}

} // namespace switchyard::ui
