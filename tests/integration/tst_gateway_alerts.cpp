// Alerts end to end: the webhook posting to a receiver on a loopback port (a retry after a 500,
// a receiver that never answers, a full queue), the real gateway raising the fail-safe alert
// from its own traffic, GET /admin/v1/alerts, and the engine thread evaluating on while the
// webhook hangs.
#include "alerts/alert_evaluator.h"
#include "alerts/webhook_notifier.h"
#include "engine/engine.h"
#include "fake_upstream.h"
#include "gateway_harness.h"
#include "test_client.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace switchyard;
using namespace switchyard::testing;
using namespace std::chrono_literals;
using namespace Qt::StringLiterals;
using alerts::AlertEvent;
using alerts::WebhookNotifier;

namespace {

using Mode = FakeUpstream::Mode;

config::AlertWebhookConfig hookAt(const FakeUpstream &receiver)
{
    config::AlertWebhookConfig hook;
    hook.url = QUrl(u"http://127.0.0.1:%1/hooks/alerts"_s.arg(receiver.port()));
    hook.headers = {{"Authorization", "Bearer hk-123", u"HOOK_TOKEN"_s}};
    hook.backoff = 20ms; // a test waits for retries, so they come soon
    hook.timeout = 5s;
    return hook;
}

AlertEvent raisedEvent(quint64 sequence = 1)
{
    AlertEvent event;
    event.sequence = sequence;
    event.kind = AlertEvent::Kind::Raised;
    event.rule = config::AlertRuleKind::TierSuccessRate;
    event.severity = config::AlertSeverity::Critical;
    event.subjectKind = alerts::SubjectKind::Tier;
    event.subject = u"light"_s;
    event.value = 0.5;
    event.threshold = 0.9;
    event.sinceMs = 1'700'000'005'000;
    event.atMs = 1'700'000'185'000;
    event.message = u"tier `light`: success rate 50.0 %, below 90.0 % for 3m"_s;
    return event;
}

QJsonObject getJson(Engine &engine, const QByteArray &path, int *status = nullptr)
{
    TestClient client(engine.port());
    client.send("GET", path);
    if (!client.waitForFinished())
        return {};
    if (status)
        *status = client.status();
    return QJsonDocument::fromJson(client.body()).object();
}

} // namespace

class GatewayAlertsTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void postsEachEventWithTheConfiguredHeaders();
    void retriesAfterA500();
    void givesUpOnAReceiverThatNeverAnswers();
    void doesNotRetryARefusal();
    void dropsWhatTheQueueCannotHold();
    void gatewayRaisesTheFailSafeAlertFromItsTraffic();
    void engineEvaluatesOnWhileTheWebhookHangs();
    void adminRefusesABadLimit();
    void aReloadMovesTheWebhook();
};

void GatewayAlertsTest::postsEachEventWithTheConfiguredHeaders()
{
    FakeUpstream receiver;
    WebhookNotifier notifier(hookAt(receiver), alerts::makeCurlWebhookPoster(hookAt(receiver)));
    notifier.notify(raisedEvent());

    QTRY_COMPARE(notifier.counts().delivered, quint64(1));
    QCOMPARE(receiver.requests().size(), 1);
    const FakeUpstream::ReceivedRequest &request = receiver.requests().first();
    QCOMPARE(request.method, "POST"_ba);
    QCOMPARE(request.path, "/hooks/alerts"_ba);
    QCOMPARE(request.header("authorization"), "Bearer hk-123"_ba);
    QCOMPARE(request.header("content-type"), "application/json"_ba);
    const QJsonObject body = QJsonDocument::fromJson(request.body).object();
    QCOMPARE(body[u"text"_s].toString(),
             u"[critical] RAISED tier_success_rate: tier `light`: success rate 50.0 %, below "
             u"90.0 % for 3m"_s);
    QCOMPARE(body[u"status"_s].toString(), u"raised"_s);
    QCOMPARE(body[u"rule"_s].toString(), u"tier_success_rate"_s);
    QCOMPARE(body[u"severity"_s].toString(), u"critical"_s);
    QCOMPARE(body[u"subject_kind"_s].toString(), u"tier"_s);
    QCOMPARE(body[u"subject"_s].toString(), u"light"_s);
    QCOMPARE(body[u"value"_s].toDouble(), 0.5);
    QCOMPARE(body[u"threshold"_s].toDouble(), 0.9);
    QCOMPARE(body[u"unit"_s].toString(), u"ratio"_s);
    QCOMPARE(body[u"since"_s].toString(), u"2023-11-14T22:13:25.000Z"_s);
    QCOMPARE(body[u"at"_s].toString(), u"2023-11-14T22:16:25.000Z"_s);
    QCOMPARE(body[u"sequence"_s].toInt(), 1);
    QCOMPARE(body[u"source"_s].toString(), u"switchyard"_s);
    const alerts::WebhookCounts counts = notifier.counts();
    QCOMPARE(counts.failed, quint64(0));
    QCOMPARE(counts.retries, quint64(0));
    QCOMPARE(counts.queued, quint64(0));
}

void GatewayAlertsTest::retriesAfterA500()
{
    FakeUpstream receiver;
    receiver.scriptedModes = {Mode::Status}; // 500 first, then 200
    receiver.status = 500;
    WebhookNotifier notifier(hookAt(receiver), alerts::makeCurlWebhookPoster(hookAt(receiver)));
    notifier.notify(raisedEvent());

    QTRY_COMPARE(notifier.counts().delivered, quint64(1));
    QCOMPARE(receiver.requests().size(), 2);
    QCOMPARE(receiver.requests().at(1).body, receiver.requests().at(0).body);
    const alerts::WebhookCounts counts = notifier.counts();
    QCOMPARE(counts.retries, quint64(1));
    QCOMPARE(counts.failed, quint64(0));
    QCOMPARE(counts.queued, quint64(0));
}

void GatewayAlertsTest::givesUpOnAReceiverThatNeverAnswers()
{
    FakeUpstream receiver;
    receiver.mode = Mode::Hang;
    config::AlertWebhookConfig hook = hookAt(receiver);
    hook.timeout = 200ms;
    hook.retries = 1;
    WebhookNotifier notifier(hook, alerts::makeCurlWebhookPoster(hook));
    notifier.notify(raisedEvent());

    QTRY_COMPARE(notifier.counts().failed, quint64(1));
    QCOMPARE(receiver.requests().size(), 2); // the first try and one retry, each timed out
    const alerts::WebhookCounts counts = notifier.counts();
    QCOMPARE(counts.delivered, quint64(0));
    QCOMPARE(counts.retries, quint64(1));
    QCOMPARE(counts.queued, quint64(0));
}

void GatewayAlertsTest::doesNotRetryARefusal()
{
    FakeUpstream receiver;
    receiver.mode = Mode::Status;
    receiver.status = 404;
    WebhookNotifier notifier(hookAt(receiver), alerts::makeCurlWebhookPoster(hookAt(receiver)));
    notifier.notify(raisedEvent());

    QTRY_COMPARE(notifier.counts().failed, quint64(1));
    QCOMPARE(receiver.requests().size(), 1);
    QCOMPARE(notifier.counts().retries, quint64(0));
}

void GatewayAlertsTest::dropsWhatTheQueueCannotHold()
{
    FakeUpstream receiver;
    receiver.mode = Mode::Hang;
    config::AlertWebhookConfig hook = hookAt(receiver);
    hook.timeout = 60s;
    hook.queue = 2;
    auto notifier = std::make_unique<WebhookNotifier>(hook, alerts::makeCurlWebhookPoster(hook));
    notifier->notify(raisedEvent(1));
    QTRY_COMPARE(receiver.requests().size(), 1); // being posted: no longer in the queue

    notifier->notify(raisedEvent(2));
    notifier->notify(raisedEvent(3));
    notifier->notify(raisedEvent(4)); // finds two waiting
    alerts::WebhookCounts counts = notifier->counts();
    QCOMPARE(counts.dropped, quint64(1));
    QCOMPARE(counts.queued, quint64(3)); // the one being posted and two waiting
    QCOMPARE(counts.delivered, quint64(0));
    // Stopping does not wait out the hanging post's minute.
    notifier.reset();
}

void GatewayAlertsTest::gatewayRaisesTheFailSafeAlertFromItsTraffic()
{
    FakeUpstream provider;
    provider.mode = Mode::Status;
    provider.status = 500;
    config::Config config = gatewayConfig({providerFor(u"only"_s, provider, {u"m"_s})});
    config.timeouts = shortTimeouts();
    config.resilience.retries.backoffBase = 0ms;
    config.resilience.retries.backoffJitter = 0ms;
    config.resilience.retries.backoffMax = 0ms;
    config.resilience.degradation.failSafe = u"We are busy."_s;
    config.alerts.evaluateEvery = 100ms;
    std::unique_ptr<Engine> engine = startEngine(config);
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/chat/completions", chatBody("m", false));
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.header("x-switchyard-degraded"), "3"_ba);

    QTRY_COMPARE(engine->alerts().active().size(), 1);
    const QJsonObject answer = getJson(*engine, "/admin/v1/alerts");
    QCOMPARE(answer[u"object"_s].toString(), u"alerts"_s);
    const QJsonArray active = answer[u"active"_s].toArray();
    QCOMPARE(active.size(), 1);
    const QJsonObject alert = active.first().toObject();
    QCOMPARE(alert[u"rule"_s].toString(), u"fail_safe_answers"_s);
    QCOMPARE(alert[u"severity"_s].toString(), u"critical"_s);
    QCOMPARE(alert[u"subject_kind"_s].toString(), u"gateway"_s);
    QCOMPARE(alert[u"subject"_s].toString(), u"gateway"_s);
    QCOMPARE(alert[u"value"_s].toDouble(), 1.0);
    QCOMPARE(alert[u"threshold"_s].toDouble(), 1.0);
    QCOMPARE(alert[u"unit"_s].toString(), u"answers"_s);
    QVERIFY(QDateTime::fromString(alert[u"since"_s].toString(), Qt::ISODateWithMs).isValid());
    QVERIFY(QDateTime::fromString(alert[u"raised_at"_s].toString(), Qt::ISODateWithMs).isValid());
    const QJsonArray events = answer[u"events"_s].toArray();
    QCOMPARE(events.size(), 1);
    QCOMPARE(events.first()[u"status"_s].toString(), u"raised"_s);
    QCOMPARE(events.first()[u"rule"_s].toString(), u"fail_safe_answers"_s);
    QCOMPARE(answer[u"events_total"_s].toInt(), 1);
    QCOMPARE(answer[u"has_more"_s].toBool(), false);
    QCOMPARE(answer[u"webhook"_s][u"enabled"_s].toBool(), false);
    // The console's snapshot carries the same.
    QCOMPARE(engine->snapshot().alerts.active.size(), 1);
    QCOMPARE(engine->snapshot().alerts.recent.size(), 1);
}

void GatewayAlertsTest::engineEvaluatesOnWhileTheWebhookHangs()
{
    FakeUpstream receiver;
    receiver.mode = Mode::Hang;
    FakeUpstream provider;
    config::Config config = gatewayConfig({providerFor(u"only"_s, provider, {u"m"_s})});
    config.alerts.evaluateEvery = 100ms;
    config.alerts.rules[int(config::AlertRuleKind::BudgetUsed)].clearAfter = 0ms;
    config::AlertWebhookConfig hook = hookAt(receiver);
    hook.timeout = 60s;
    hook.retries = 0;
    config.alerts.webhook = hook;
    std::unique_ptr<Engine> engine = startEngine(config);
    QVERIFY(engine);

    engine->alerts().observeBudget(u"tenant:acme/day"_s, 0.9);
    QTRY_COMPARE(receiver.requests().size(), 1); // the raise, posted and never answered
    const quint64 evaluationsThen = engine->alerts().evaluations();

    // The engine's timer goes on evaluating, and the clear is queued behind the hanging post.
    engine->alerts().observeBudget(u"tenant:acme/day"_s, 0.2);
    QTRY_VERIFY(engine->alerts().active().isEmpty());
    QTRY_VERIFY(engine->alerts().evaluations() >= evaluationsThen + 10);
    QCOMPARE(receiver.requests().size(), 1);
    QCOMPARE(receiver.answersCompleted(), 0);

    // And the admin API answers meanwhile, newest event first.
    const QJsonObject answer = getJson(*engine, "/admin/v1/alerts?limit=1");
    QCOMPARE(answer[u"active"_s].toArray().size(), 0);
    const QJsonArray events = answer[u"events"_s].toArray();
    QCOMPARE(events.size(), 1);
    QCOMPARE(events.first()[u"status"_s].toString(), u"cleared"_s);
    QCOMPARE(events.first()[u"rule"_s].toString(), u"budget_used"_s);
    QCOMPARE(events.first()[u"subject_kind"_s].toString(), u"budget"_s);
    QCOMPARE(events.first()[u"subject"_s].toString(), u"tenant:acme/day"_s);
    QCOMPARE(events.first()[u"value"_s].toDouble(), 0.2);
    QCOMPARE(answer[u"has_more"_s].toBool(), true);
    QCOMPARE(answer[u"events_total"_s].toInt(), 2);
    const QJsonObject webhook = answer[u"webhook"_s].toObject();
    QCOMPARE(webhook[u"enabled"_s].toBool(), true);
    QCOMPARE(webhook[u"queued"_s].toInt(), 2);
    QCOMPARE(webhook[u"delivered"_s].toInt(), 0);
}

void GatewayAlertsTest::adminRefusesABadLimit()
{
    FakeUpstream provider;
    std::unique_ptr<Engine> engine =
        startEngine(gatewayConfig({providerFor(u"only"_s, provider, {u"m"_s})}));
    QVERIFY(engine);
    int status = 0;
    const QJsonObject answer = getJson(*engine, "/admin/v1/alerts?limit=many", &status);
    QCOMPARE(status, 400);
    const QJsonObject error = answer[u"error"_s].toObject();
    QCOMPARE(error[u"message"_s].toString(),
             u"`limit` must be a whole number from 0 to 100000, got `many`."_s);
    QCOMPARE(error[u"param"_s].toString(), u"limit"_s);
    QCOMPARE(error[u"code"_s].toString(), u"invalid_admin_request"_s);
}

void GatewayAlertsTest::aReloadMovesTheWebhook()
{
    FakeUpstream hanging;
    hanging.mode = Mode::Hang;
    FakeUpstream answering;
    FakeUpstream provider;
    config::Config config = gatewayConfig({providerFor(u"only"_s, provider, {u"m"_s})});
    config.alerts.evaluateEvery = 100ms;
    config::AlertWebhookConfig first = hookAt(hanging);
    first.timeout = 60s;
    config.alerts.webhook = first;
    std::unique_ptr<Engine> engine = startEngine(config);
    QVERIFY(engine);
    engine->alerts().observeBudget(u"b1"_s, 0.9);
    QTRY_COMPARE(hanging.requests().size(), 1);

    // The old webhook hangs in its post; the new one takes the next event at once.
    auto next = std::make_shared<config::Config>(engine->config());
    next->alerts.webhook = hookAt(answering);
    engine->configStore().replace(next);
    QCOMPARE(engine->alertWebhookCounts().delivered, quint64(0));
    QCOMPARE(engine->alertWebhookCounts().queued, quint64(0));
    engine->alerts().observeBudget(u"b2"_s, 0.9);
    QTRY_COMPARE(engine->alertWebhookCounts().delivered, quint64(1));
    QCOMPARE(answering.requests().size(), 1);
    const QJsonObject body = QJsonDocument::fromJson(answering.requests().first().body).object();
    QCOMPARE(body[u"subject"_s].toString(), u"b2"_s);
}

QTEST_GUILESS_MAIN(GatewayAlertsTest)
#include "tst_gateway_alerts.moc"
