#include "ui/routes/routes_view.h"

#include "bridge/engine_bridge.h"
#include "config/rule_validation.h"
#include "ui/routes/agents_panel.h"
#include "ui/routes/canary_panel.h"
#include "ui/routes/dry_run_panel.h"
#include "ui/routes/impact_panel.h"
#include "ui/routes/route_rules_model.h"
#include "ui/routes/rule_editor_panel.h"
#include "ui/routes/rule_list_panel.h"
#include "ui/routes/shadow_panel.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QTabWidget>
#include <QVBoxLayout>

namespace switchyard::ui {

RoutesView::RoutesView(EngineBridge &bridge, QWidget *parent)
    : QWidget(parent), m_bridge(bridge), m_snapshot(bridge.routesState().snapshot),
      m_model(new RouteRulesModel(this))
{
    setObjectName(QStringLiteral("routesView"));
    m_ruleList = new RuleListPanel(*m_model, this);
    m_editor = new RuleEditorPanel(m_snapshot, this);
    m_dryRun = new DryRunPanel(m_bridge, *m_model, this);
    m_impact = new ImpactPanel(m_bridge, *m_model, this);
    // One sample request, or the last hour of traffic: two views of the same edit, one click
    // apart, with the rule list's Apply in view from either.
    m_trials = new QTabWidget(this);
    m_trials->setObjectName(QStringLiteral("routeTrials"));
    m_trials->setDocumentMode(true);
    m_trials->addTab(m_dryRun, QString());
    m_trials->addTab(m_impact, QString());
    m_canary = new CanaryPanel(m_bridge, this);
    m_agents = new AgentsPanel(m_bridge, this);
    m_shadows = new ShadowPanel(this);

    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(16, 16, 16, 12);
    layout->setSpacing(12);
    auto *left = new QVBoxLayout;
    left->setSpacing(12);
    left->addWidget(m_ruleList, 3);
    left->addWidget(m_canary, 2);
    left->addWidget(m_agents, 2);
    // As tall as its five measures need; the panels above give way.
    left->addWidget(m_shadows, 0);
    // The editor gets as much width as the dry run: nested groups and split branches need it.
    layout->addLayout(left, 4);
    layout->addWidget(m_editor, 5);
    layout->addWidget(m_trials, 5);

    connect(m_ruleList, &RuleListPanel::currentRowChanged, this, &RoutesView::showRule);
    connect(m_ruleList, &RuleListPanel::addRequested, this, &RoutesView::addRule);
    connect(m_ruleList, &RuleListPanel::deleteRequested, this, &RoutesView::deleteRule);
    connect(m_ruleList, &RuleListPanel::revertRequested, this, &RoutesView::revertRules);
    connect(m_ruleList, &RuleListPanel::applyRequested, this, &RoutesView::applyRules);
    connect(m_editor, &RuleEditorPanel::ruleEdited, this, &RoutesView::ruleEdited);
    connect(&m_bridge, &EngineBridge::routesChanged, this, &RoutesView::onRoutesChanged);
    connect(&m_bridge, &EngineBridge::routesApplied, this, &RoutesView::onRoutesApplied);
    connect(&m_bridge, &EngineBridge::snapshotUpdated, m_agents, &AgentsPanel::applySnapshot);
    connect(&m_bridge, &EngineBridge::traceFeedUpdated, m_shadows, &ShadowPanel::applyFeed);

    retranslateUi();
    m_live = m_bridge.routesState();
    loadLiveRules();
    m_canary->applySplits(m_live.canarySplits);
    m_agents->applySnapshot(m_bridge.lastSnapshot());
}

void RoutesView::retranslateUi()
{
    m_trials->setTabText(m_trials->indexOf(m_dryRun), tr("Dry run"));
    m_trials->setTabText(m_trials->indexOf(m_impact), tr("Impact preview"));
}

void RoutesView::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslateUi();
    QWidget::changeEvent(event);
}

void RoutesView::showImpactPreview()
{
    m_trials->setCurrentWidget(m_impact);
}

void RoutesView::loadLiveRules()
{
    m_model->setRules(m_live.rules());
    m_dirty = false;
    selectRow(m_model->rowCount() > 0 ? 0 : -1);
    validate();
}

void RoutesView::onRoutesChanged(const RoutesState &state)
{
    m_live = state;
    m_snapshot = state.snapshot;
    // An edit in progress is kept; otherwise the page follows the live rules.
    if (!m_dirty) {
        const int row = m_currentRow;
        m_model->setRules(m_live.rules());
        selectRow(qMin(row, m_model->rowCount() - 1));
        validate();
    }
    m_canary->applySplits(state.canarySplits);
}

void RoutesView::selectRow(int row)
{
    m_ruleList->selectRowQuietly(row);
    showRule(row);
}

void RoutesView::showRule(int row)
{
    if (m_followingEdit)
        return;
    m_currentRow = row;
    m_editor->showRule(row >= 0 && row < m_model->rowCount()
                           ? std::optional<config::RouteRule>(m_model->rules().at(row))
                           : std::nullopt);
    validate();
}

void RoutesView::ruleEdited(const config::RouteRule &rule)
{
    if (m_currentRow < 0)
        return;
    // A new priority moves the rule to its place in routing order; the selection follows it
    // without reloading the form the person is typing in.
    m_followingEdit = true;
    m_currentRow = m_model->replaceRule(m_currentRow, rule);
    m_ruleList->selectRowQuietly(m_currentRow);
    m_followingEdit = false;
    m_dirty = true;
    m_ruleList->clearApplyResult();
    validate();
}

void RoutesView::validate()
{
    QStringList lines;
    if (m_currentRow >= 0 && m_currentRow < m_model->rowCount()) {
        for (const config::RuleProblem &problem :
             config::validateRule(m_model->rules().at(m_currentRow), *m_snapshot))
            lines.append(problem.message);
    }
    const QList<config::RuleProblem> all = config::validateRoutes(m_model->rules(), *m_snapshot);
    // Problems of other rules (or a name used twice) still block Apply: say so below the form.
    for (const config::RuleProblem &problem : all) {
        if (!lines.contains(problem.message))
            lines.append(problem.message);
    }
    m_editor->setProblems(lines);
    m_ruleList->setEditState(m_currentRow >= 0, m_dirty, all.isEmpty());
}

void RoutesView::addRule()
{
    QStringList names;
    for (const config::RouteRule &rule : m_model->rules())
        names.append(rule.name);
    config::RouteRule rule;
    int suffix = 1;
    do {
        rule.name = QStringLiteral("new-rule-%1").arg(suffix++);
    } while (names.contains(rule.name));
    rule.to.kind = config::RouteTarget::Kind::Tier;
    rule.to.names = {QStringLiteral("auto")};
    config::RouteCondition condition;
    condition.field = QStringLiteral("model");
    condition.values = {QString()};
    rule.when = condition;
    const int row = m_model->addRule(rule);
    m_dirty = true;
    selectRow(row);
    m_editor->focusName();
}

void RoutesView::deleteRule()
{
    if (m_currentRow < 0)
        return;
    const int row = m_currentRow;
    m_followingEdit = true;
    m_model->removeRule(row);
    m_followingEdit = false;
    m_dirty = true;
    selectRow(qMin(row, m_model->rowCount() - 1));
}

void RoutesView::revertRules()
{
    m_ruleList->clearApplyResult();
    loadLiveRules();
}

void RoutesView::applyRules()
{
    m_ruleList->setEditState(m_currentRow >= 0, m_dirty, false); // until the engine answers
    m_ruleList->showApplyResult(tr("Applying..."), Tone::Neutral);
    m_bridge.applyRoutes(m_model->rules());
}

void RoutesView::onRoutesApplied(bool ok, const QStringList &problems)
{
    if (ok) {
        m_ruleList->showApplyResult(tr("Applied: new requests use these rules now."), Tone::Good);
        m_dirty = false;
        const int row = m_currentRow;
        // The applied rules are the live ones now (routesChanged brings their snapshot).
        const QList<config::RouteRule> applied = m_model->rules();
        m_model->setRules(applied);
        selectRow(qMin(row, m_model->rowCount() - 1));
    } else {
        m_ruleList->showApplyResult(tr("Not applied: %1").arg(problems.join(u'\n')), Tone::Bad);
    }
    validate();
}

} // namespace switchyard::ui
