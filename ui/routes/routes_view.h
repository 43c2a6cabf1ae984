#pragma once

#include "config/config.h"
#include "control/routes_state.h"

#include <QStringList>
#include <QWidget>

QT_BEGIN_NAMESPACE
class QTabWidget;
QT_END_NAMESPACE

namespace switchyard {
class EngineBridge;
}

namespace switchyard::ui {

class AgentsPanel;
class CanaryPanel;
class DryRunPanel;
class ImpactPanel;
class RouteRulesModel;
class RuleEditorPanel;
class RuleListPanel;
class ShadowPanel;

// The Routes page (docs/console.md), composed of four panels: the rule list, the editor of the
// selected rule, the dry run and the live canary sliders. The page owns the rules being edited
// and decides what the panels' requests mean: it validates every edit with the config loader's
// checks, and applies or reverts the rules through the bridge.
class RoutesView final : public QWidget {
    Q_OBJECT
public:
    explicit RoutesView(EngineBridge &bridge, QWidget *parent = nullptr);

    RouteRulesModel *rulesModel() const { return m_model; }
    RuleListPanel *ruleListPanel() const { return m_ruleList; }
    RuleEditorPanel *ruleEditorPanel() const { return m_editor; }
    DryRunPanel *dryRunPanel() const { return m_dryRun; }
    ImpactPanel *impactPanel() const { return m_impact; }
    // Shows the impact preview in place of the dry run (they share the page's third column).
    void showImpactPreview();
    CanaryPanel *canaryPanel() const { return m_canary; }
    AgentsPanel *agentsPanel() const { return m_agents; }
    ShadowPanel *shadowPanel() const { return m_shadows; }
    // The edited rules differ from the live ones.
    bool isDirty() const { return m_dirty; }

protected:
    void changeEvent(QEvent *event) override;

private:
    void retranslateUi();
    void loadLiveRules();
    void onRoutesChanged(const RoutesState &state);
    void onRoutesApplied(bool ok, const QStringList &problems);
    void selectRow(int row);
    void showRule(int row);
    void ruleEdited(const config::RouteRule &rule);
    void validate();
    void addRule();
    void deleteRule();
    void revertRules();
    void applyRules();

    EngineBridge &m_bridge;
    // The snapshot in force: the providers and tiers the editor offers and validates against.
    std::shared_ptr<const config::Config> m_snapshot;
    RoutesState m_live;
    RouteRulesModel *m_model = nullptr;
    bool m_dirty = false;
    int m_currentRow = -1;
    // Set while the page itself moves the selection after an edit: the editor keeps its form.
    bool m_followingEdit = false;

    RuleListPanel *m_ruleList = nullptr;
    RuleEditorPanel *m_editor = nullptr;
    DryRunPanel *m_dryRun = nullptr;
    ImpactPanel *m_impact = nullptr;
    QTabWidget *m_trials = nullptr; // the dry run and the impact preview
    CanaryPanel *m_canary = nullptr;
    AgentsPanel *m_agents = nullptr;
    ShadowPanel *m_shadows = nullptr;
};

} // namespace switchyard::ui
