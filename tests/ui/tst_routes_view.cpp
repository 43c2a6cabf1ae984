// The Routes page against a real engine: rules in priority order, validation with the config
// loader's messages, the dry run comparing live and edited rules, Apply, and live canary sliders.

#include "bridge/engine_host.h"
#include "config/config_loader.h"
#include "ui/alerts/alerts_page.h"
#include "ui/config/config_page.h"
#include "ui/fleet/fleet_page.h"
#include "ui/keys/keys_page.h"
#include "ui/queue/queue_page.h"
#include "ui/routes/dry_run_panel.h"
#include "ui/routes/route_rules_model.h"
#include "ui/routes/routes_view.h"
#include "ui/shell/main_window.h"
#include "ui/traces/traces_page.h"
#include "ui/usage/usage_page.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <memory>

using namespace Qt::StringLiterals;
using switchyard::EngineBridge;
using switchyard::EngineHost;
using switchyard::ui::DryRunPanel;
using switchyard::ui::MainWindow;
using switchyard::ui::RouteRulesModel;
using switchyard::ui::RoutesView;
namespace config = switchyard::config;
namespace routing = switchyard::routing;

namespace {

constexpr int kEngineTimeoutMs = 20000;

constexpr auto kRoutesYaml = R"(
listen: 127.0.0.1:0
providers:
  - {id: sim-light, kind: simulated, models: [demo-light, agent-support]}
  - {id: sim-pro, kind: simulated, models: [demo-pro, agent-support, {name: demo-vectors, endpoints: [embeddings]}]}
  - {id: sim-local, kind: simulated, models: [demo-light]}
tiers:
  light: {pool: [sim-light]}
  pro: {pool: [sim-pro]}
routes:
  - name: code-to-pro
    priority: 10
    when: {all: [{field: task, eq: code_gen}, {field: model, ne: nothing}]}
    to: {tier: pro}
  - name: local-only
    priority: 100
    when: {field: sensitivity, eq: high}
    to: {provider: sim-local}
  - name: agent-canary
    priority: 50
    when: {field: model, glob: "agent-*"}
    to: {split: [{target: sim-pro, weight: 90}, {target: sim-light, weight: 10}], key: user}
)";

template <typename Widget>
Widget *child(QWidget &parent, const QString &name)
{
    auto *widget = parent.findChild<Widget *>(name);
    if (!widget)
        qWarning("no widget named %s", qPrintable(name));
    return widget;
}

QList<int> liveWeights(const EngineBridge &bridge, const QString &rule)
{
    for (const routing::CanarySplitState &split : bridge.routesState().canarySplits) {
        if (split.rule != rule)
            continue;
        QList<int> weights;
        for (const routing::CanaryBranchState &branch : split.branches)
            weights.append(branch.weight);
        return weights;
    }
    return {};
}

QStringList liveTargets(const EngineBridge &bridge)
{
    QStringList targets;
    for (const config::RouteRule &rule : bridge.routesState().rules())
        targets.append(rule.name + u" -> "_s + switchyard::ui::targetSummary(rule));
    return targets;
}

} // namespace

class RoutesViewTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanupTestCase();
    void listsRulesInPriorityOrder();
    void invalidRegexShowsTheLoaderMessageAndBlocksApply();
    void dryRunComparesLiveAndEditedRules();
    void dryRunAsksTheEndpointTheSampleIsFor();
    void applySwapsTheLiveRules();
    void nestedGroupEditReachesDryRunAndApply();
    void splitEditReachesTheLiveCanary();
    void canarySliderChangesLiveWeights();
    void mainWindowHasARoutesTab();
    void rendersThePage();

private:
    std::unique_ptr<EngineHost> m_bridge;
    QList<config::RouteRule> m_fileRules;
    QTemporaryDir m_scratch;
};

void RoutesViewTest::initTestCase()
{
    QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
    QVERIFY(m_scratch.isValid());
    const config::LoadResult loaded = config::loadConfigText(
        kRoutesYaml, u"routes.yaml"_s, [](const QString &) { return std::optional<QByteArray>(); });
    QVERIFY2(loaded.ok(), qPrintable(loaded.errors.value(0).toString()));
    m_fileRules = loaded.config->routing.routes;
    m_bridge = std::make_unique<EngineHost>(*loaded.config);
    QString error;
    QVERIFY2(m_bridge->start(&error), qPrintable(error));
    QCOMPARE(m_bridge->routesState().rules().size(), 3);
}

void RoutesViewTest::init()
{
    // Every test starts from the file's rules and weights, whatever the one before applied.
    QSignalSpy applied(m_bridge.get(), &EngineBridge::routesApplied);
    m_bridge->applyRoutes(m_fileRules);
    QVERIFY(applied.wait(kEngineTimeoutMs));
    QCOMPARE(applied.first().at(0).toBool(), true);
    m_bridge->resetCanaryWeights(u"agent-canary"_s);
    QTRY_COMPARE_WITH_TIMEOUT(liveWeights(*m_bridge, u"agent-canary"_s), (QList<int>{90, 10}),
                              kEngineTimeoutMs);
}

void RoutesViewTest::cleanupTestCase()
{
    m_bridge.reset();
}

void RoutesViewTest::listsRulesInPriorityOrder()
{
    RoutesView view(*m_bridge);
    QAbstractItemModelTester tester(view.rulesModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    const RouteRulesModel &model = *view.rulesModel();
    QCOMPARE(model.rowCount(), 3);
    const auto cell = [&](int row, int column) {
        return model.index(row, column).data().toString();
    };
    QCOMPARE(cell(0, RouteRulesModel::NameColumn), u"local-only"_s);
    QCOMPARE(cell(1, RouteRulesModel::NameColumn), u"agent-canary"_s);
    QCOMPARE(cell(2, RouteRulesModel::NameColumn), u"code-to-pro"_s);
    QCOMPARE(cell(0, RouteRulesModel::PriorityColumn), u"100"_s);
    QCOMPARE(cell(0, RouteRulesModel::ConditionColumn), u"sensitivity eq high"_s);
    QCOMPARE(cell(0, RouteRulesModel::TargetColumn), u"provider sim-local"_s);
    QCOMPARE(cell(1, RouteRulesModel::ConditionColumn), u"model glob agent-*"_s);
    QCOMPARE(cell(1, RouteRulesModel::TargetColumn), u"split by user: sim-pro 90 · sim-light 10"_s);
    QCOMPARE(cell(2, RouteRulesModel::ConditionColumn), u"task eq code_gen AND model ne nothing"_s);
    QCOMPARE(cell(2, RouteRulesModel::TargetColumn), u"tier pro"_s);

    // A new priority moves the rule to its place in routing order.
    auto *rules = child<QTableView>(view, u"routeRules"_s);
    rules->selectRow(2);
    child<QSpinBox>(view, u"rulePrioritySpin"_s)->setValue(200);
    QCOMPARE(cell(0, RouteRulesModel::NameColumn), u"code-to-pro"_s);
    QCOMPARE(rules->currentIndex().row(), 0);
    QCOMPARE(child<QLineEdit>(view, u"ruleNameEdit"_s)->text(), u"code-to-pro"_s);
    QVERIFY(view.isDirty());
}

void RoutesViewTest::invalidRegexShowsTheLoaderMessageAndBlocksApply()
{
    RoutesView view(*m_bridge);
    view.show();
    auto *apply = child<QPushButton>(view, u"applyRulesButton"_s);
    auto *problems = child<QLabel>(view, u"ruleProblems"_s);
    QVERIFY(apply && problems);
    QVERIFY(!apply->isEnabled()); // nothing edited yet
    QCOMPARE(child<QLineEdit>(view, u"ruleNameEdit"_s)->text(), u"local-only"_s);

    child<QComboBox>(view, u"conditionOperator0"_s)->setCurrentText(u"regex"_s);
    child<QLineEdit>(view, u"conditionValue0"_s)->setText(u"gpt-(4"_s);
    QCOMPARE(problems->text(),
             u"`regex` does not compile: missing closing parenthesis at offset 6"_s);
    QVERIFY(problems->isVisible());
    QVERIFY(!apply->isEnabled());

    child<QLineEdit>(view, u"conditionValue0"_s)->setText(u"gpt-(4)"_s);
    QCOMPARE(problems->text(), QString());
    QVERIFY(apply->isEnabled());
    QCOMPARE(view.rulesModel()->index(0, RouteRulesModel::ConditionColumn).data().toString(),
             u"sensitivity regex gpt-(4)"_s);

    child<QPushButton>(view, u"revertRulesButton"_s)->click();
    QVERIFY(!view.isDirty());
    QCOMPARE(view.rulesModel()->index(0, RouteRulesModel::ConditionColumn).data().toString(),
             u"sensitivity eq high"_s);
}

void RoutesViewTest::dryRunComparesLiveAndEditedRules()
{
    RoutesView view(*m_bridge);
    auto *live = child<QTextBrowser>(view, u"dryRunLiveResult"_s);
    auto *edited = child<QTextBrowser>(view, u"dryRunEditedResult"_s);
    view.dryRunPanel()->loadPreset(DryRunPanel::Preset::SensitiveData);
    child<QPushButton>(view, u"dryRunButton"_s)->click();
    QTRY_VERIFY_WITH_TIMEOUT(live->toPlainText().startsWith(u"Rule: local-only\n"_s),
                             kEngineTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(edited->toPlainText().startsWith(u"Rule: local-only\n"_s),
                             kEngineTimeoutMs);
    QVERIFY2(live->toPlainText().contains(u"1. sim-local (demo-light), score "_s),
             qPrintable(live->toPlainText()));
    QCOMPARE(edited->toPlainText(), live->toPlainText());

    // Point the selected rule (local-only) at another provider: only the edited side changes.
    auto *kind = child<QComboBox>(view, u"targetKindCombo"_s);
    auto *target = child<QComboBox>(view, u"targetValueCombo"_s);
    QCOMPARE(kind->currentIndex(), 0);
    QCOMPARE(target->currentText(), u"sim-local"_s);
    target->setCurrentText(u"sim-light"_s);
    child<QPushButton>(view, u"dryRunButton"_s)->click();
    QTRY_VERIFY_WITH_TIMEOUT(edited->toPlainText().contains(u"1. sim-light (demo-light)"_s),
                             kEngineTimeoutMs);
    QVERIFY2(live->toPlainText().contains(u"1. sim-local (demo-light)"_s),
             qPrintable(live->toPlainText()));
    QVERIFY(!edited->toPlainText().contains(u"sim-local"_s));

    // Rules that do not validate give no decision, with the loader's message.
    target->setCurrentText(u"sim-nowhere"_s);
    child<QPushButton>(view, u"dryRunButton"_s)->click();
    QTRY_VERIFY_WITH_TIMEOUT(edited->toPlainText().startsWith(u"No decision: "_s),
                             kEngineTimeoutMs);
    QVERIFY2(edited->toPlainText().contains(u"sim-nowhere"_s), qPrintable(edited->toPlainText()));
    QVERIFY(!child<QPushButton>(view, u"applyRulesButton"_s)->isEnabled());

    // A body that is not a chat request says why.
    view.dryRunPanel()->loadPreset(DryRunPanel::Preset::SimpleChat);
    child<QPlainTextEdit>(view, u"dryRunBody"_s)->setPlainText(u"{\"model\": 1}"_s);
    child<QPushButton>(view, u"dryRunButton"_s)->click();
    QTRY_VERIFY_WITH_TIMEOUT(live->toPlainText().startsWith(u"No decision: "_s), kEngineTimeoutMs);
}

void RoutesViewTest::dryRunAsksTheEndpointTheSampleIsFor()
{
    RoutesView view(*m_bridge);
    auto *live = child<QTextBrowser>(view, u"dryRunLiveResult"_s);
    auto *endpoint = child<QComboBox>(view, u"dryRunEndpointCombo"_s);
    auto *body = child<QPlainTextEdit>(view, u"dryRunBody"_s);

    // Embeddings go by model: the rule that takes sensitive chat does not take them.
    view.dryRunPanel()->loadPreset(DryRunPanel::Preset::Embeddings);
    QCOMPARE(endpoint->currentText(), u"/v1/embeddings"_s);
    QVERIFY2(body->toPlainText().contains(u"\"model\": \"demo-vectors\""_s),
             qPrintable(body->toPlainText()));
    child<QPlainTextEdit>(view, u"dryRunHeaders"_s)
        ->setPlainText(u"x-switchyard-sensitivity: high"_s);
    child<QPushButton>(view, u"dryRunButton"_s)->click();
    QTRY_VERIFY_WITH_TIMEOUT(
        live->toPlainText().startsWith(u"Rule: not used, /v1/embeddings goes by model\n"_s),
        kEngineTimeoutMs);
    QVERIFY2(live->toPlainText().contains(u"1. sim-pro (demo-vectors)"_s),
             qPrintable(live->toPlainText()));

    // A Responses request routes as its chat form: the sensitive rule takes it.
    view.dryRunPanel()->loadPreset(DryRunPanel::Preset::ResponsesRequest);
    QCOMPARE(endpoint->currentText(), u"/v1/responses"_s);
    QVERIFY(body->toPlainText().contains(u"\"input\""_s));
    child<QPlainTextEdit>(view, u"dryRunHeaders"_s)
        ->setPlainText(u"x-switchyard-sensitivity: high"_s);
    child<QPushButton>(view, u"dryRunButton"_s)->click();
    QTRY_VERIFY_WITH_TIMEOUT(live->toPlainText().startsWith(u"Rule: local-only\n"_s),
                             kEngineTimeoutMs);

    // Choosing an endpoint by hand writes a sample body for it.
    endpoint->setCurrentIndex(0);
    emit endpoint->activated(0);
    QVERIFY(body->toPlainText().contains(u"\"messages\""_s));
    QCOMPARE(view.dryRunPanel()->operation(), switchyard::protocol::Operation::Chat);
}

void RoutesViewTest::applySwapsTheLiveRules()
{
    RoutesView view(*m_bridge);
    QSignalSpy applied(m_bridge.get(), &EngineBridge::routesApplied);
    child<QPushButton>(view, u"addRuleButton"_s)->click();
    QCOMPARE(view.rulesModel()->rowCount(), 4);
    auto *name = child<QLineEdit>(view, u"ruleNameEdit"_s);
    QCOMPARE(name->text(), u"new-rule-1"_s);
    name->selectAll();
    QTest::keyClicks(name, u"pin-demo-pro"_s); // typed, as a person would
    child<QSpinBox>(view, u"rulePrioritySpin"_s)->setValue(500);
    child<QLineEdit>(view, u"conditionValue0"_s)->setText(u"demo-pro"_s);
    child<QComboBox>(view, u"targetKindCombo"_s)->setCurrentIndex(0);
    child<QComboBox>(view, u"targetValueCombo"_s)->setCurrentText(u"sim-pro"_s);
    QCOMPARE(view.rulesModel()->index(0, RouteRulesModel::NameColumn).data().toString(),
             u"pin-demo-pro"_s);
    auto *apply = child<QPushButton>(view, u"applyRulesButton"_s);
    QVERIFY(apply->isEnabled());
    apply->click();
    QVERIFY(applied.wait(kEngineTimeoutMs));
    QCOMPARE(applied.first().at(0).toBool(), true);
    QCOMPARE(child<QLabel>(view, u"applyResult"_s)->text(),
             u"Applied: new requests use these rules now."_s);
    QVERIFY(!view.isDirty());
    QTRY_VERIFY_WITH_TIMEOUT(liveTargets(*m_bridge).contains(u"pin-demo-pro -> provider sim-pro"_s),
                             kEngineTimeoutMs);

    // A dry run of the live rules now takes the new rule.
    auto *live = child<QTextBrowser>(view, u"dryRunLiveResult"_s);
    child<QPlainTextEdit>(view, u"dryRunBody"_s)
        ->setPlainText(u"{\"model\": \"demo-pro\", \"messages\": [{\"role\": \"user\", "
                       u"\"content\": \"hi\"}]}"_s);
    child<QPlainTextEdit>(view, u"dryRunHeaders"_s)->clear();
    child<QPushButton>(view, u"dryRunButton"_s)->click();
    QTRY_VERIFY_WITH_TIMEOUT(live->toPlainText().startsWith(u"Rule: pin-demo-pro\n"_s),
                             kEngineTimeoutMs);
    QVERIFY2(live->toPlainText().contains(u"1. sim-pro (demo-pro)"_s),
             qPrintable(live->toPlainText()));

    // The engine validates too: a name used twice is refused and nothing changes.
    QList<config::RouteRule> twice = m_bridge->routesState().rules();
    twice.append(twice.first());
    applied.clear();
    m_bridge->applyRoutes(twice);
    QVERIFY(applied.wait(kEngineTimeoutMs));
    QCOMPARE(applied.first().at(0).toBool(), false);
    QVERIFY(!applied.first().at(1).toStringList().isEmpty());
    QCOMPARE(m_bridge->routesState().rules().size(), 4);
}

void RoutesViewTest::nestedGroupEditReachesDryRunAndApply()
{
    RoutesView view(*m_bridge);
    QAbstractItemModelTester tester(view.rulesModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    auto *edited = child<QTextBrowser>(view, u"dryRunEditedResult"_s);
    auto *live = child<QTextBrowser>(view, u"dryRunLiveResult"_s);
    child<QTableView>(view, u"routeRules"_s)->selectRow(2); // code-to-pro
    QCOMPARE(child<QLineEdit>(view, u"ruleNameEdit"_s)->text(), u"code-to-pro"_s);

    // A nested "any of" group the sample does not meet: the edited rules no longer match it.
    child<QPushButton>(view, u"addGroupButton"_s)->click();
    child<QComboBox>(view, u"conditionField2.0"_s)->setCurrentText(u"tenant"_s);
    child<QLineEdit>(view, u"conditionValue2.0"_s)->setText(u"clinic"_s);
    QCOMPARE(view.rulesModel()->index(2, RouteRulesModel::ConditionColumn).data().toString(),
             u"task eq code_gen AND model ne nothing AND tenant eq clinic"_s);
    view.dryRunPanel()->loadPreset(DryRunPanel::Preset::CodeGeneration);
    child<QPushButton>(view, u"dryRunButton"_s)->click();
    QTRY_VERIFY_WITH_TIMEOUT(edited->toPlainText().startsWith(u"Rule: none matched\n"_s),
                             kEngineTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(live->toPlainText().startsWith(u"Rule: code-to-pro\n"_s),
                             kEngineTimeoutMs);

    // "None of" the group: the sample matches again.
    auto *kind = child<QComboBox>(view, u"conditionGroupKind2"_s);
    kind->setCurrentIndex(kind->findText(u"none of the conditions"_s));
    child<QPushButton>(view, u"dryRunButton"_s)->click();
    QTRY_VERIFY_WITH_TIMEOUT(edited->toPlainText().startsWith(u"Rule: code-to-pro\n"_s),
                             kEngineTimeoutMs);

    QSignalSpy applied(m_bridge.get(), &EngineBridge::routesApplied);
    child<QPushButton>(view, u"applyRulesButton"_s)->click();
    QVERIFY(applied.wait(kEngineTimeoutMs));
    QCOMPARE(applied.first().at(0).toBool(), true);
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            for (const config::RouteRule &rule : m_bridge->routesState().rules()) {
                if (rule.name == u"code-to-pro"_s)
                    return switchyard::ui::conditionSummary(rule.when) ==
                           u"task eq code_gen AND model ne nothing AND NOT tenant eq clinic"_s;
            }
            return false;
        }(),
        kEngineTimeoutMs);
}

void RoutesViewTest::splitEditReachesTheLiveCanary()
{
    RoutesView view(*m_bridge);
    QAbstractItemModelTester tester(view.rulesModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    child<QTableView>(view, u"routeRules"_s)->selectRow(1); // agent-canary
    QCOMPARE(child<QSpinBox>(view, u"splitBranchWeight0"_s)->value(), 90);
    child<QSpinBox>(view, u"splitBranchWeight0"_s)->setValue(70);
    child<QSpinBox>(view, u"splitBranchWeight1"_s)->setValue(30);
    QCOMPARE(view.rulesModel()->index(1, RouteRulesModel::TargetColumn).data().toString(),
             u"split by user: sim-pro 70 · sim-light 30"_s);

    QSignalSpy applied(m_bridge.get(), &EngineBridge::routesApplied);
    child<QPushButton>(view, u"applyRulesButton"_s)->click();
    QVERIFY(applied.wait(kEngineTimeoutMs));
    QCOMPARE(applied.first().at(0).toBool(), true);
    QTRY_COMPARE_WITH_TIMEOUT(liveWeights(*m_bridge, u"agent-canary"_s), (QList<int>{70, 30}),
                              kEngineTimeoutMs);
    // The sliders follow the applied weights, which are now the file's for this split.
    QTRY_COMPARE_WITH_TIMEOUT(child<QLabel>(view, u"canaryWeight:agent-canary:1"_s)->text(),
                              u"live 30 % · file 30 %"_s, kEngineTimeoutMs);
}

void RoutesViewTest::canarySliderChangesLiveWeights()
{
    RoutesView view(*m_bridge);
    auto *pro = child<QSlider>(view, u"canarySlider:agent-canary:0"_s);
    auto *light = child<QSlider>(view, u"canarySlider:agent-canary:1"_s);
    auto *lightWeight = child<QLabel>(view, u"canaryWeight:agent-canary:1"_s);
    auto *reset = child<QPushButton>(view, u"canaryReset:agent-canary"_s);
    QVERIFY(pro && light && lightWeight && reset);
    QCOMPARE(pro->value(), 90);
    QCOMPARE(light->value(), 10);
    QCOMPARE(lightWeight->text(), u"live 10 % · file 10 %"_s);
    QVERIFY(!reset->isEnabled());

    light->setValue(40);
    QCOMPARE(pro->value(), 60); // two ways: the other branch follows
    QTRY_COMPARE_WITH_TIMEOUT(liveWeights(*m_bridge, u"agent-canary"_s), (QList<int>{60, 40}),
                              kEngineTimeoutMs);
    QTRY_COMPARE_WITH_TIMEOUT(lightWeight->text(), u"live 40 % · file 10 %"_s, kEngineTimeoutMs);
    QVERIFY(reset->isEnabled());

    reset->click();
    QTRY_COMPARE_WITH_TIMEOUT(liveWeights(*m_bridge, u"agent-canary"_s), (QList<int>{90, 10}),
                              kEngineTimeoutMs);
    QTRY_COMPARE_WITH_TIMEOUT(light->value(), 10, kEngineTimeoutMs);
    QCOMPARE(pro->value(), 90);
}

void RoutesViewTest::mainWindowHasARoutesTab()
{
    MainWindow window(*m_bridge);
    auto *tabs = window.findChild<QTabWidget *>(u"consoleTabs"_s);
    QVERIFY(tabs);
    QCOMPARE(tabs->count(), 9);
    QCOMPARE(tabs->tabText(0), u"Overview"_s);
    QCOMPARE(tabs->tabText(1), u"Routes"_s);
    QCOMPARE(tabs->widget(1), window.routesView());
    QCOMPARE(tabs->tabText(2), u"Traces"_s);
    QCOMPARE(tabs->widget(2), window.tracesPage());
    QCOMPARE(tabs->tabText(3), u"Config"_s);
    QCOMPARE(tabs->widget(3), window.configPage());
    QCOMPARE(tabs->tabText(4), u"Alerts"_s);
    QCOMPARE(tabs->widget(4), window.alertsPage());
    QCOMPARE(tabs->tabText(5), u"Keys"_s);
    QCOMPARE(tabs->widget(5), window.keysPage());
    QCOMPARE(tabs->tabText(6), u"Usage"_s);
    QCOMPARE(tabs->widget(6), window.usagePage());
    QCOMPARE(tabs->tabText(7), u"Fleet"_s);
    QCOMPARE(tabs->widget(7), window.fleetPage());
    QCOMPARE(tabs->tabText(8), u"Queue"_s);
    QCOMPARE(tabs->widget(8), window.queuePage());
    QVERIFY(window.findChild<QTableView *>(u"healthMatrix"_s));
}

void RoutesViewTest::rendersThePage()
{
    MainWindow window(*m_bridge);
    window.resize(1480, 860);
    auto *tabs = window.findChild<QTabWidget *>(u"consoleTabs"_s);
    tabs->setCurrentIndex(1);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    RoutesView &view = *window.routesView();
    // An edit that changes the decision, so the picture shows both sides differing.
    child<QTableView>(view, u"routeRules"_s)->selectRow(2);
    child<QComboBox>(view, u"targetValueCombo"_s)->setCurrentText(u"light"_s);
    view.dryRunPanel()->loadPreset(DryRunPanel::Preset::CodeGeneration);
    child<QPushButton>(view, u"dryRunButton"_s)->click();
    auto *edited = child<QTextBrowser>(view, u"dryRunEditedResult"_s);
    auto *live = child<QTextBrowser>(view, u"dryRunLiveResult"_s);
    QTRY_VERIFY_WITH_TIMEOUT(edited->toPlainText().startsWith(u"Rule: code-to-pro\n"_s),
                             kEngineTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(live->toPlainText().startsWith(u"Rule: code-to-pro\n"_s),
                             kEngineTimeoutMs);
    QVERIFY(edited->toPlainText().contains(u"1. sim-light"_s));
    QVERIFY(live->toPlainText().contains(u"1. sim-pro"_s));

    // docs/screenshots/routes.png is rendered with the demo configuration by tst_main_window;
    // this picture, of the test's own rules, stays in the scratch directory.
    const QString path = m_scratch.filePath(u"routes.png"_s);
    QVERIFY(window.grab().save(path));
    qInfo("routes page rendered to %s", qPrintable(path));
}

QTEST_MAIN(RoutesViewTest)
#include "tst_routes_view.moc"
