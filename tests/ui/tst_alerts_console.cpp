// The console's alerts on a fake bridge: the banner across the window while an alert is raised
// (the most severe named, coloured by severity, Dismiss holding until the next raise), the
// Alerts page's tables merging rows in place under QAbstractItemModelTester, the tab's count,
// and the screenshot in docs/screenshots.

#include "fake_engine_bridge.h"
#include "screenshots.h"
#include "ui/alerts/alert_banner.h"
#include "ui/alerts/alerts_model.h"
#include "ui/alerts/alerts_page.h"
#include "ui/shell/main_window.h"

#include <QAbstractItemModelTester>
#include <QDir>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

using namespace switchyard;
using namespace switchyard::ui;
using namespace Qt::StringLiterals;

namespace {

// 2024-03-12 14:00:00 UTC, in the zone the test pins.
constexpr qint64 kStartMs = 1'710'252'000'000;

alerts::ActiveAlert tierAlert(quint64 sequence, const QString &tier,
                              config::AlertRuleKind rule = config::AlertRuleKind::TierErrorRate)
{
    alerts::ActiveAlert alert;
    alert.rule = rule;
    alert.severity = rule == config::AlertRuleKind::TierSuccessRate
                         ? config::AlertSeverity::Critical
                         : config::AlertSeverity::Warning;
    alert.subjectKind = alerts::SubjectKind::Tier;
    alert.subject = tier;
    alert.value = rule == config::AlertRuleKind::TierSuccessRate ? 0.72 : 0.124;
    alert.threshold = rule == config::AlertRuleKind::TierSuccessRate ? 0.9 : 0.05;
    alert.sinceMs = kStartMs + qint64(sequence) * 60'000;
    alert.raisedAtMs = alert.sinceMs + 180'000;
    alert.raisedSequence = sequence;
    alert.message = u"tier `%1`: engine message"_s.arg(tier);
    return alert;
}

alerts::AlertEvent eventOf(const alerts::ActiveAlert &alert, alerts::AlertEvent::Kind kind,
                           quint64 sequence, qint64 atMs)
{
    alerts::AlertEvent event;
    event.sequence = sequence;
    event.kind = kind;
    event.rule = alert.rule;
    event.severity = alert.severity;
    event.subjectKind = alert.subjectKind;
    event.subject = alert.subject;
    event.value = kind == alerts::AlertEvent::Kind::Raised ? alert.value : 0.97;
    event.threshold = alert.threshold;
    event.unit = alert.unit;
    event.sinceMs = alert.sinceMs;
    event.atMs = atMs;
    event.message = alert.message;
    return event;
}

EngineSnapshot snapshotWith(const QList<alerts::ActiveAlert> &active,
                            const QList<alerts::AlertEvent> &recent = {})
{
    EngineSnapshot snapshot;
    snapshot.listenAddress = u"127.0.0.1:8080"_s;
    snapshot.alerts.active = active;
    snapshot.alerts.recent = recent;
    snapshot.alerts.eventsTotal = recent.isEmpty() ? 0 : recent.last().sequence;
    return snapshot;
}

} // namespace

class AlertsConsoleTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void bannerAppearsWhileAnAlertIsRaised();
    void bannerNamesTheMostSevereAndIsColouredByIt();
    void dismissHoldsUntilTheNextRaise();
    void viewAlertsOpensThePage();
    void pageListsActiveAlertsAndEventsNewestFirst();
    void screenshot();

private:
    QString screenshotPath(const QString &fileName) const;
    QTemporaryDir m_scratch;
};

void AlertsConsoleTest::initTestCase()
{
    qputenv("TZ", "UTC");
    QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
    QVERIFY(m_scratch.isValid());
}

QString AlertsConsoleTest::screenshotPath(const QString &fileName) const
{
    return switchyard::testing::screenshotPath(m_scratch.path(), fileName);
}

void AlertsConsoleTest::bannerAppearsWhileAnAlertIsRaised()
{
    testing::FakeEngineBridge bridge;
    MainWindow window(bridge);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    AlertBanner &banner = *window.alertBanner();
    QVERIFY(!banner.isVisible());
    QCOMPARE(window.pageTabs()->tabText(window.pageTabs()->indexOf(window.alertsPage())),
             u"Alerts"_s);

    bridge.publish(snapshotWith({tierAlert(1, u"light"_s)}));
    QVERIFY(banner.isVisible());
    QCOMPARE(banner.headlineText(), u"Tier error rate · tier light"_s);
    QCOMPARE(banner.detailText(), u"12.4 % against 5.0 %, since 14:01:00"_s);
    QCOMPARE(window.pageTabs()->tabText(window.pageTabs()->indexOf(window.alertsPage())),
             u"Alerts (1)"_s);

    bridge.publish(snapshotWith({}));
    QVERIFY(!banner.isVisible());
    QCOMPARE(window.pageTabs()->tabText(window.pageTabs()->indexOf(window.alertsPage())),
             u"Alerts"_s);
}

void AlertsConsoleTest::bannerNamesTheMostSevereAndIsColouredByIt()
{
    AlertBanner banner;
    banner.applyAlerts({tierAlert(1, u"light"_s), tierAlert(2, u"pro"_s),
                        tierAlert(3, u"light"_s, config::AlertRuleKind::TierSuccessRate)});
    QVERIFY(banner.showsAlert());
    QCOMPARE(banner.headlineText(), u"Tier success rate · tier light"_s);
    QCOMPARE(banner.detailText(), u"72.0 % against 90.0 %, since 14:03:00  ·  2 more alert(s) "
                                  u"raised"_s);
    QCOMPARE(banner.property("severity").toString(), u"critical"_s);
    QCOMPARE(banner.findChild<QLabel *>(u"alertBannerSeverity"_s)->text(), u"CRITICAL"_s);

    banner.applyAlerts({tierAlert(2, u"pro"_s)});
    QCOMPARE(banner.property("severity").toString(), u"warning"_s);
    QCOMPARE(banner.headlineText(), u"Tier error rate · tier pro"_s);
}

void AlertsConsoleTest::dismissHoldsUntilTheNextRaise()
{
    testing::FakeEngineBridge bridge;
    MainWindow window(bridge);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    AlertBanner &banner = *window.alertBanner();
    bridge.publish(snapshotWith({tierAlert(1, u"light"_s)}));
    QVERIFY(banner.isVisible());

    QTest::mouseClick(banner.findChild<QPushButton *>(u"alertBannerDismiss"_s), Qt::LeftButton);
    QVERIFY(!banner.isVisible());
    // The same alert, still raised, on the next ticks: the banner stays away.
    bridge.publish(snapshotWith({tierAlert(1, u"light"_s)}));
    QVERIFY(!banner.isVisible());
    // Another raise brings it back.
    bridge.publish(snapshotWith({tierAlert(1, u"light"_s), tierAlert(2, u"pro"_s)}));
    QVERIFY(banner.isVisible());
    QCOMPARE(banner.headlineText(), u"Tier error rate · tier pro"_s);
}

void AlertsConsoleTest::viewAlertsOpensThePage()
{
    testing::FakeEngineBridge bridge;
    MainWindow window(bridge);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    bridge.publish(snapshotWith({tierAlert(1, u"light"_s)}));
    QCOMPARE(window.pageTabs()->currentIndex(), 0);
    QTest::mouseClick(window.alertBanner()->findChild<QPushButton *>(u"alertBannerView"_s),
                      Qt::LeftButton);
    QCOMPARE(window.pageTabs()->currentWidget(), window.alertsPage());
}

void AlertsConsoleTest::pageListsActiveAlertsAndEventsNewestFirst()
{
    AlertsPage page;
    QAbstractItemModelTester activeTester(page.activeModel(),
                                          QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester eventsTester(page.eventsModel(),
                                          QAbstractItemModelTester::FailureReportingMode::QtTest);
    const alerts::ActiveAlert light = tierAlert(1, u"light"_s);
    const alerts::ActiveAlert pro = tierAlert(2, u"pro"_s);
    const alerts::AlertEvent lightRaised =
        eventOf(light, alerts::AlertEvent::Kind::Raised, 1, light.raisedAtMs);
    const alerts::AlertEvent proRaised =
        eventOf(pro, alerts::AlertEvent::Kind::Raised, 2, pro.raisedAtMs);
    page.applyAlerts(snapshotWith({light, pro}, {lightRaised, proRaised}).alerts);
    ActiveAlertsModel &active = *page.activeModel();
    QCOMPARE(active.rowCount(), 2);
    QCOMPARE(active.index(0, ActiveAlertsModel::SeverityColumn).data().toString(), u"Warning"_s);
    QCOMPARE(active.index(0, ActiveAlertsModel::RuleColumn).data().toString(),
             u"Tier error rate"_s);
    QCOMPARE(active.index(0, ActiveAlertsModel::SubjectColumn).data().toString(), u"tier light"_s);
    QCOMPARE(active.index(0, ActiveAlertsModel::ValueColumn).data().toString(), u"12.4 %"_s);
    QCOMPARE(active.index(0, ActiveAlertsModel::ThresholdColumn).data().toString(), u"5.0 %"_s);
    QCOMPARE(active.index(0, ActiveAlertsModel::SinceColumn).data().toString(), u"14:01:00"_s);
    QCOMPARE(active.index(0, ActiveAlertsModel::RuleColumn).data(Qt::ToolTipRole).toString(),
             light.message);

    // The light tier clears and its value moves on the pro tier: one row goes, the other is
    // changed in place.
    alerts::ActiveAlert proLater = pro;
    proLater.value = 0.2;
    const alerts::AlertEvent lightCleared =
        eventOf(light, alerts::AlertEvent::Kind::Cleared, 3, light.raisedAtMs + 300'000);
    QSignalSpy resets(&active, &QAbstractItemModel::modelReset);
    QSignalSpy changed(&active, &QAbstractItemModel::dataChanged);
    page.applyAlerts(snapshotWith({proLater}, {lightRaised, proRaised, lightCleared}).alerts);
    QCOMPARE(resets.size(), 0);
    QCOMPARE(changed.size(), 1);
    QCOMPARE(active.rowCount(), 1);
    QCOMPARE(active.index(0, ActiveAlertsModel::ValueColumn).data().toString(), u"20.0 %"_s);

    AlertEventsModel &events = *page.eventsModel();
    QCOMPARE(events.rowCount(), 3);
    QCOMPARE(events.index(0, AlertEventsModel::EventColumn).data().toString(), u"Cleared"_s);
    QCOMPARE(events.index(0, AlertEventsModel::SubjectColumn).data().toString(), u"tier light"_s);
    QCOMPARE(events.index(0, AlertEventsModel::ValueColumn).data().toString(),
             u"97.0 % (threshold 5.0 %)"_s);
    QCOMPARE(events.index(0, AlertEventsModel::TimeColumn).data().toString(), u"14:09:00"_s);
    QCOMPARE(events.index(2, AlertEventsModel::EventColumn).data().toString(), u"Raised"_s);
    QCOMPARE(events.index(2, AlertEventsModel::SubjectColumn).data().toString(), u"tier light"_s);

    // Nothing raised: the table gives way to the all-clear line.
    page.applyAlerts(snapshotWith({}, {lightRaised, proRaised, lightCleared}).alerts);
    QVERIFY(page.findChild<QLabel *>(u"alertsAllClear"_s)->isVisibleTo(&page));
    QVERIFY(!page.findChild<QTableView *>(u"activeAlerts"_s)->isVisibleTo(&page));
}

void AlertsConsoleTest::screenshot()
{
    testing::FakeEngineBridge bridge;
    MainWindow window(bridge);
    window.pageTabs()->setCurrentWidget(window.alertsPage());
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));

    // A morning of alerts, in the order they came: the fail-safe answered for two minutes, the
    // pro tier's errors came and went, and three alerts are raised now.
    alerts::ActiveAlert failSafe;
    failSafe.rule = config::AlertRuleKind::FailSafeAnswers;
    failSafe.severity = config::AlertSeverity::Critical;
    failSafe.subjectKind = alerts::SubjectKind::Gateway;
    failSafe.subject = u"gateway"_s;
    failSafe.unit = alerts::ValueUnit::Answers;
    failSafe.value = 3;
    failSafe.threshold = 1;
    failSafe.sinceMs = kStartMs + 120'000;
    failSafe.raisedAtMs = failSafe.sinceMs;
    failSafe.raisedSequence = 1;
    const alerts::ActiveAlert errors = tierAlert(2, u"pro"_s); // raised 14:05
    const alerts::ActiveAlert light =
        tierAlert(4, u"light"_s, config::AlertRuleKind::TierSuccessRate); // raised 14:07
    alerts::ActiveAlert latency = tierAlert(5, u"pro"_s, config::AlertRuleKind::TierLatencyP95);
    latency.unit = alerts::ValueUnit::Milliseconds;
    latency.value = 5160;
    latency.threshold = 2290;
    alerts::ActiveAlert budget;
    budget.rule = config::AlertRuleKind::BudgetUsed;
    budget.subjectKind = alerts::SubjectKind::Budget;
    budget.subject = u"tenant:acme/day"_s;
    budget.value = 0.83;
    budget.threshold = 0.8;
    budget.sinceMs = kStartMs + 560'000;
    budget.raisedAtMs = budget.sinceMs;
    budget.raisedSequence = 6;

    using Kind = alerts::AlertEvent::Kind;
    const QList<alerts::AlertEvent> events{
        eventOf(failSafe, Kind::Raised, 1, failSafe.raisedAtMs),
        eventOf(errors, Kind::Raised, 2, errors.raisedAtMs),
        eventOf(failSafe, Kind::Cleared, 3, failSafe.raisedAtMs + 190'000),
        eventOf(light, Kind::Raised, 4, light.raisedAtMs),
        eventOf(latency, Kind::Raised, 5, latency.raisedAtMs),
        eventOf(budget, Kind::Raised, 6, budget.raisedAtMs),
        eventOf(errors, Kind::Cleared, 7, errors.raisedAtMs + 330'000),
    };
    EngineSnapshot snapshot = snapshotWith({light, latency, budget}, events);
    snapshot.requestsPerSecond = 14.2;
    snapshot.alerts.webhook.enabled = true;
    snapshot.alerts.webhook.delivered = 6;
    snapshot.alerts.webhook.retries = 1;
    snapshot.alerts.webhook.queued = 1;
    bridge.publish(snapshot);
    QVERIFY(window.alertBanner()->isVisible());
    QCOMPARE(window.alertBanner()->headlineText(), u"Tier success rate · tier light"_s);

    QCoreApplication::processEvents();
    const QString path = screenshotPath(u"alerts.png"_s);
    QVERIFY2(window.grab().save(path), qPrintable(path));
    qInfo("alerts screenshot: %s", qPrintable(QDir::toNativeSeparators(path)));
}

QTEST_MAIN(AlertsConsoleTest)
#include "tst_alerts_console.moc"
