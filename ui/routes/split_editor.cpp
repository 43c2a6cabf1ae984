#include "ui/routes/split_editor.h"

#include "config/rule_validation.h"
#include "ui/common/widget_helpers.h"

#include <QComboBox>
#include <QEvent>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

namespace switchyard::ui {

namespace {

using TargetKind = config::RouteTarget::Kind;

// The kinds in the order the branch combo boxes list them.
constexpr TargetKind kTargetKinds[] = {TargetKind::Provider, TargetKind::Pool, TargetKind::Tier};
constexpr config::SplitKey kSplitKeys[] = {config::SplitKey::User, config::SplitKey::Tenant,
                                           config::SplitKey::Session};
// Weights are relative; a generous cap still keeps a typo from meaning "everything".
constexpr int kMaximumWeight = 1000000;

QString targetKindText(TargetKind kind)
{
    switch (kind) {
    case TargetKind::Provider:
        return SplitEditor::tr("Provider");
    case TargetKind::Pool:
        return SplitEditor::tr("Pool");
    case TargetKind::Tier:
        return SplitEditor::tr("Tier");
    }
    return {};
}

QString splitKeyText(config::SplitKey key)
{
    switch (key) {
    case config::SplitKey::User:
        return SplitEditor::tr("user");
    case config::SplitKey::Tenant:
        return SplitEditor::tr("tenant");
    case config::SplitKey::Session:
        return SplitEditor::tr("session");
    }
    return {};
}

} // namespace

void fillTargetChoices(QComboBox *values, TargetKind kind, const config::Config &config)
{
    const QString current = values->currentText();
    values->clear();
    if (kind == TargetKind::Tier) {
        values->addItem(QStringLiteral("auto"));
        for (const config::TierConfig &tier : config.routing.tiers)
            values->addItem(tier.name);
    } else {
        for (const config::ProviderConfig &provider : config.providers)
            values->addItem(provider.id);
    }
    values->setCurrentText(current);
}

QString targetText(const config::RouteTarget &target)
{
    return target.kind == TargetKind::Pool ? target.names.join(QStringLiteral(", "))
                                           : target.names.value(0);
}

config::RouteTarget targetFromText(TargetKind kind, const QString &text,
                                   const config::RouteTarget &base)
{
    config::RouteTarget target;
    target.kind = kind;
    target.names = kind == TargetKind::Pool ? splitList(text) : QStringList{text.trimmed()};
    if (target.kind == base.kind && target.names == base.names)
        return base;
    return target;
}

SplitEditor::SplitEditor(std::shared_ptr<const config::Config> snapshot, QWidget *parent)
    : QWidget(parent), m_snapshot(std::move(snapshot))
{
    m_layout = new QVBoxLayout(this);
    m_layout->setContentsMargins(0, 0, 0, 0);
    rebuild();
}

void SplitEditor::setSplit(const QList<config::SplitBranch> &branches, config::SplitKey key)
{
    m_branches = branches;
    m_key = key;
    rebuild();
}

void SplitEditor::addBranch()
{
    // The first provider no branch names yet, so the new branch does not repeat one.
    QStringList used;
    for (const config::SplitBranch &branch : std::as_const(m_branches))
        used.append(branch.target.label());
    config::SplitBranch branch;
    branch.target.kind = TargetKind::Provider;
    for (const config::ProviderConfig &provider : m_snapshot->providers) {
        if (!used.contains(provider.id)) {
            branch.target.names = {provider.id};
            break;
        }
    }
    if (branch.target.names.isEmpty())
        branch.target.names = {m_snapshot->providers.isEmpty() ? QString()
                                                               : m_snapshot->providers.first().id};
    branch.weight = 0;
    m_branches.append(branch);
    rebuild();
    Q_EMIT splitEdited();
}

void SplitEditor::removeBranch(int index)
{
    if (index < 0 || index >= m_branches.size())
        return;
    m_branches.removeAt(index);
    rebuild();
    Q_EMIT splitEdited();
}

void SplitEditor::rebuild()
{
    if (m_form)
        retire(m_form);
    m_shares.clear();
    m_form = new QFrame(this);
    m_form->setObjectName(QStringLiteral("splitEditor"));
    m_form->setProperty("splitBranches", true);
    auto *layout = new QVBoxLayout(m_form);
    layout->setContentsMargins(8, 4, 0, 4);
    layout->setSpacing(4);

    auto *keyRow = new QHBoxLayout;
    QLabel *keyLabel = makeLabel(TextRole::Caption, m_form);
    keyLabel->setText(tr("Split by"));
    auto *key = new QComboBox(m_form);
    key->setObjectName(QStringLiteral("splitKeyCombo"));
    for (config::SplitKey choice : kSplitKeys) {
        key->addItem(splitKeyText(choice), int(choice));
        if (choice == m_key)
            key->setCurrentIndex(key->count() - 1);
    }
    key->setToolTip(tr("The request value that keeps a client on one side of the split; "
                       "requests without it use their request id"));
    keyLabel->setBuddy(key);
    keyRow->addWidget(keyLabel);
    keyRow->addWidget(key, 1);
    layout->addLayout(keyRow);
    connect(key, &QComboBox::currentIndexChanged, this, [this, key] {
        m_key = config::SplitKey(key->currentData().toInt());
        Q_EMIT splitEdited();
    });

    auto *grid = new QGridLayout;
    grid->setHorizontalSpacing(6);
    grid->setVerticalSpacing(4);
    QLabel *targetHeader = makeLabel(TextRole::ColumnHeader, m_form);
    targetHeader->setText(tr("Branch target"));
    QLabel *weightHeader = makeLabel(TextRole::ColumnHeader, m_form);
    weightHeader->setText(tr("Weight"));
    grid->addWidget(targetHeader, 0, 0, 1, 2);
    grid->addWidget(weightHeader, 0, 2, 1, 2);
    for (int i = 0; i < m_branches.size(); ++i) {
        const config::SplitBranch &branch = m_branches[i];
        auto *kind = new QComboBox(m_form);
        kind->setObjectName(QStringLiteral("splitBranchKind%1").arg(i));
        for (TargetKind choice : kTargetKinds) {
            kind->addItem(targetKindText(choice), int(choice));
            if (choice == branch.target.kind)
                kind->setCurrentIndex(kind->count() - 1);
        }
        auto *target = new QComboBox(m_form);
        target->setObjectName(QStringLiteral("splitBranchTarget%1").arg(i));
        target->setEditable(true);
        target->setInsertPolicy(QComboBox::NoInsert);
        target->setMinimumContentsLength(6);
        target->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        fillTargetChoices(target, branch.target.kind, *m_snapshot);
        target->setCurrentText(targetText(branch.target));
        auto *weight = new QSpinBox(m_form);
        weight->setObjectName(QStringLiteral("splitBranchWeight%1").arg(i));
        weight->setRange(0, kMaximumWeight);
        weight->setValue(branch.weight);
        weight->setToolTip(tr("Relative to the other branches; 0 sends this branch nothing"));
        QLabel *share = makeLabel(TextRole::Hint, m_form);
        share->setObjectName(QStringLiteral("splitBranchShare%1").arg(i));
        share->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
        share->setMinimumWidth(share->fontMetrics().horizontalAdvance(QStringLiteral("100 %")));
        m_shares.append(share);
        auto *remove = new QToolButton(m_form);
        remove->setObjectName(QStringLiteral("removeSplitBranch%1").arg(i));
        remove->setText(QStringLiteral("✕"));
        remove->setToolTip(tr("Remove this branch"));
        grid->addWidget(kind, i + 1, 0);
        grid->addWidget(target, i + 1, 1);
        grid->addWidget(weight, i + 1, 2);
        grid->addWidget(share, i + 1, 3);
        grid->addWidget(remove, i + 1, 4);

        connect(kind, &QComboBox::currentIndexChanged, this, [this, i, kind, target] {
            const auto chosen = TargetKind(kind->currentData().toInt());
            {
                // A provider name is no tier name: start from the first choice of the new kind.
                const QSignalBlocker blocker(target);
                fillTargetChoices(target, chosen, *m_snapshot);
                target->setCurrentIndex(0);
            }
            m_branches[i].target = targetFromText(chosen, target->currentText());
            Q_EMIT splitEdited();
        });
        connect(target, &QComboBox::currentTextChanged, this, [this, i, kind](const QString &text) {
            m_branches[i].target =
                targetFromText(TargetKind(kind->currentData().toInt()), text, m_branches[i].target);
            Q_EMIT splitEdited();
        });
        connect(weight, &QSpinBox::valueChanged, this, [this, i](int value) {
            m_branches[i].weight = value;
            refreshShares();
            Q_EMIT splitEdited();
        });
        connect(remove, &QToolButton::clicked, this, [this, i] { removeBranch(i); });
    }
    grid->setColumnStretch(1, 1);
    layout->addLayout(grid);

    auto *add = new QPushButton(tr("Add branch"), m_form);
    add->setObjectName(QStringLiteral("addSplitBranch"));
    add->setProperty("flat", true);
    add->setCursor(Qt::PointingHandCursor);
    auto *footer = new QHBoxLayout;
    footer->addWidget(add);
    footer->addStretch(1);
    layout->addLayout(footer);
    connect(add, &QPushButton::clicked, this, &SplitEditor::addBranch);

    m_layout->addWidget(m_form);
    refreshShares();
}

void SplitEditor::refreshShares()
{
    int total = 0;
    for (const config::SplitBranch &branch : std::as_const(m_branches))
        total += qMax(0, branch.weight);
    const QLocale locale;
    for (int i = 0; i < m_shares.size() && i < m_branches.size(); ++i) {
        const int percent = total > 0 ? qRound(100.0 * qMax(0, m_branches[i].weight) / total) : 0;
        //: A branch's share of the split's traffic, e.g. "90 %"
        m_shares[i]->setText(tr("%1 %").arg(locale.toString(percent)));
    }
}

void SplitEditor::changeEvent(QEvent *event)
{
    // Texts are set as the widgets are built: rebuilding from the value retranslates them all.
    if (event->type() == QEvent::LanguageChange)
        rebuild();
    QWidget::changeEvent(event);
}

} // namespace switchyard::ui
