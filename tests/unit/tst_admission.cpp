// Admission control: the loop guard, the global in-flight gate and per-tenant token buckets
// before routing; failover capacity and degraded-tier shedding during execution. Time is a
// manual clock, stepped by hand.

#include "config/config_store.h"
#include "health/health_registry.h"
#include "resilience/admission.h"
#include "timing/clock.h"

#include <QtTest>

using namespace Qt::StringLiterals;
using namespace std::chrono_literals;
using switchyard::config::AdmissionConfig;
using switchyard::config::ConfigStore;
using switchyard::config::TenantLimit;
using switchyard::resilience::AdmissionController;
using switchyard::resilience::AdmissionVerdict;
using switchyard::timing::ManualClock;
using Kind = switchyard::resilience::AdmissionVerdict::Kind;

namespace {

// acme: 60 requests a minute, 2 at once; everyone else unlimited unless a default is set.
AdmissionConfig tenantConfig(int defaultRpm = 0)
{
    AdmissionConfig config;
    config.maxInFlight = 4;
    config.tenants.insert(u"acme"_s, TenantLimit{60, 2});
    config.defaultTenantRpm = defaultRpm;
    return config;
}

// A config whose admission section is `admission`, with one endpoint for the failover counts.
switchyard::config::Config withAdmission(const AdmissionConfig &admission)
{
    switchyard::config::Config config;
    config.resilience.admission = admission;
    switchyard::config::ProviderConfig endpoint;
    endpoint.id = u"p"_s;
    config.providers = {endpoint};
    return config;
}

} // namespace

class TestAdmission : public QObject {
    Q_OBJECT

private slots:
    void refusesWhatMayNotEnter_data();
    void refusesWhatMayNotEnter();
    void tenantBucketRefillsAtItsRate();
    void burstDefaultsToTheRatePerMinute();
    void unlistedTenantsUseTheDefaultRate();
    void refusedRequestsTakeNothingFromTheTenant();
    void aBudgetRefusalComesBeforeTheTenantsRate();
    void failoverTakesAtMostItsShareOfCapacity_data();
    void failoverTakesAtMostItsShareOfCapacity();
    void degradedTierAdmitsItsShareDeterministically();
};

void TestAdmission::refusesWhatMayNotEnter_data()
{
    QTest::addColumn<QString>("tenant");
    QTest::addColumn<int>("depth");
    QTest::addColumn<int>("inFlight");
    QTest::addColumn<Kind>("kind");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("message");
    QTest::addColumn<QByteArray>("retryAfter");

    QTest::newRow("admitted") << u"acme"_s << 5 << 3 << Kind::Admitted << 0 << QString()
                              << QString() << QByteArray();
    QTest::newRow("depth above the limit")
        << u"acme"_s << 6 << 0 << Kind::LoopDetected << 508 << u"loop_detected"_s
        << u"The request has already passed through 6 Switchyard hop(s) (x-switchyard-depth: 6), "
           u"more than `admission.max_depth` (5) allows; it is probably looping between "
           u"gateways."_s
        << QByteArray();
    QTest::newRow("gate full") << u"acme"_s << 0 << 4 << Kind::Overloaded << 503
                               << u"gateway_overloaded"_s
                               << u"Switchyard already has 4 request(s) in flight, its limit "
                                  u"(`admission.max_in_flight`); retry shortly."_s
                               << "1"_ba;
    QTest::newRow("a loop is refused before the gate")
        << u"acme"_s << 9 << 4 << Kind::LoopDetected << 508 << u"loop_detected"_s
        << u"The request has already passed through 9 Switchyard hop(s) (x-switchyard-depth: 9), "
           u"more than `admission.max_depth` (5) allows; it is probably looping between "
           u"gateways."_s
        << QByteArray();
}

void TestAdmission::refusesWhatMayNotEnter()
{
    QFETCH(QString, tenant);
    QFETCH(int, depth);
    QFETCH(int, inFlight);
    QFETCH(Kind, kind);
    QFETCH(int, status);
    QFETCH(QString, code);
    QFETCH(QString, message);
    QFETCH(QByteArray, retryAfter);
    ManualClock clock;
    const ConfigStore admissionRules(withAdmission(tenantConfig()));
    AdmissionController admission(admissionRules, clock);

    const AdmissionVerdict verdict = admission.admit(tenant, depth, inFlight);

    QCOMPARE(verdict.kind, kind);
    if (kind == Kind::Admitted)
        return;
    QCOMPARE(verdict.error.status, status);
    QCOMPARE(verdict.error.code, code);
    QCOMPARE(verdict.error.message, message);
    QCOMPARE(verdict.error.retryAfter, retryAfter);
}

void TestAdmission::tenantBucketRefillsAtItsRate()
{
    ManualClock clock;
    const ConfigStore admissionRules(withAdmission(tenantConfig()));
    AdmissionController admission(admissionRules, clock);

    // A burst of 2, then one request per second.
    QVERIFY(admission.admit(u"acme"_s, 0, 0).admitted());
    QVERIFY(admission.admit(u"acme"_s, 0, 0).admitted());
    const AdmissionVerdict refused = admission.admit(u"acme"_s, 0, 0);
    QCOMPARE(refused.kind, Kind::TenantRateLimited);
    QCOMPARE(refused.error.status, 429);
    QCOMPARE(refused.error.type, u"rate_limit_error"_s);
    QCOMPARE(refused.error.code, u"tenant_rate_limited"_s);
    QCOMPARE(refused.error.message,
             u"Tenant `acme` is over its limit of 60 requests per minute; retry in 1 s."_s);
    QCOMPARE(refused.error.retryAfter, "1"_ba);

    clock.advance(999ms);
    QVERIFY(!admission.admit(u"acme"_s, 0, 0).admitted());
    clock.advance(1ms);
    QVERIFY(admission.admit(u"acme"_s, 0, 0).admitted());
    QVERIFY(!admission.admit(u"acme"_s, 0, 0).admitted());

    // Idle for a minute refills only up to the burst.
    clock.advance(60s);
    QVERIFY(admission.admit(u"acme"_s, 0, 0).admitted());
    QVERIFY(admission.admit(u"acme"_s, 0, 0).admitted());
    QVERIFY(!admission.admit(u"acme"_s, 0, 0).admitted());
}

void TestAdmission::aBudgetRefusalComesBeforeTheTenantsRate()
{
    ManualClock clock;
    const ConfigStore admissionRules(withAdmission(tenantConfig()));
    AdmissionController admission(admissionRules, clock);
    bool overBudget = true;
    QStringList asked;
    admission.setSpendCheck([&](const QString &tenant, const QString &keyId) {
        asked.append(tenant + u'/' + keyId);
        std::optional<switchyard::protocol::ApiError> refusal;
        if (overBudget)
            refusal = switchyard::protocol::ApiError{429,
                                                     u"Budget `tenant acme` is used up"_s,
                                                     u"insufficient_quota"_s,
                                                     {},
                                                     u"budget_exceeded"_s,
                                                     "3600"_ba};
        return refusal;
    });
    for (int i = 0; i < 5; ++i) {
        const AdmissionVerdict refused = admission.admit(u"acme"_s, 0, 0, u"k1"_s);
        QCOMPARE(refused.kind, Kind::OverBudget);
        QCOMPARE(refused.error.code, u"budget_exceeded"_s);
        QCOMPARE(refused.error.retryAfter, "3600"_ba);
    }
    QCOMPARE(asked.first(), u"acme/k1"_s);
    // Refused by its budget, the tenant kept its whole burst of 2.
    overBudget = false;
    QVERIFY(admission.admit(u"acme"_s, 0, 0).admitted());
    QVERIFY(admission.admit(u"acme"_s, 0, 0).admitted());
    QCOMPARE(admission.admit(u"acme"_s, 0, 0).kind, Kind::TenantRateLimited);
    // A loop is refused before anyone's budget is asked.
    asked.clear();
    QCOMPARE(admission.admit(u"acme"_s, 9, 0).kind, Kind::LoopDetected);
    QVERIFY(asked.isEmpty());
}

void TestAdmission::burstDefaultsToTheRatePerMinute()
{
    ManualClock clock;
    AdmissionConfig config;
    config.tenants.insert(u"slow"_s, TenantLimit{3, 0});
    const ConfigStore admissionRules(withAdmission(config));
    AdmissionController admission(admissionRules, clock);

    for (int i = 0; i < 3; ++i)
        QVERIFY(admission.admit(u"slow"_s, 0, 0).admitted());
    const AdmissionVerdict refused = admission.admit(u"slow"_s, 0, 0);
    QCOMPARE(refused.kind, Kind::TenantRateLimited);
    // One request every 20 s.
    QCOMPARE(refused.error.retryAfter, "20"_ba);
    clock.advance(19'500ms);
    QCOMPARE(admission.admit(u"slow"_s, 0, 0).error.retryAfter, "1"_ba);
}

void TestAdmission::unlistedTenantsUseTheDefaultRate()
{
    ManualClock clock;
    const ConfigStore unlimitedRules(withAdmission(tenantConfig(0)));
    AdmissionController unlimited(unlimitedRules, clock);
    for (int i = 0; i < 100; ++i)
        QVERIFY(unlimited.admit(u"other"_s, 0, 0).admitted());

    const ConfigStore limitedRules(withAdmission(tenantConfig(1)));
    AdmissionController limited(limitedRules, clock);
    QVERIFY(limited.admit(u"other"_s, 0, 0).admitted());
    QVERIFY(limited.admit(u"third"_s, 0, 0).admitted()); // a bucket per tenant
    QCOMPARE(limited.admit(u"other"_s, 0, 0).kind, Kind::TenantRateLimited);
    QVERIFY(limited.admit({}, 0, 0).admitted());
    const AdmissionVerdict anonymous = limited.admit({}, 0, 0);
    QCOMPARE(anonymous.kind, Kind::TenantRateLimited);
    QCOMPARE(anonymous.error.message, u"Requests without x-switchyard-tenant share a limit of 1 "
                                      u"per minute; retry in 60 s."_s);
}

void TestAdmission::refusedRequestsTakeNothingFromTheTenant()
{
    ManualClock clock;
    const ConfigStore admissionRules(withAdmission(tenantConfig()));
    AdmissionController admission(admissionRules, clock);

    QCOMPARE(admission.admit(u"acme"_s, 0, 4).kind, Kind::Overloaded);
    QCOMPARE(admission.admit(u"acme"_s, 7, 0).kind, Kind::LoopDetected);

    QVERIFY(admission.admit(u"acme"_s, 0, 0).admitted());
    QVERIFY(admission.admit(u"acme"_s, 0, 0).admitted());
}

void TestAdmission::failoverTakesAtMostItsShareOfCapacity_data()
{
    QTest::addColumn<double>("share");
    QTest::addColumn<int>("capacity");
    QTest::addColumn<int>("limit");

    QTest::newRow("half of 64") << 0.5 << 64 << 32;
    QTest::newRow("half of 5") << 0.5 << 5 << 2;
    QTest::newRow("a small endpoint still takes one") << 0.5 << 1 << 1;
    QTest::newRow("all of it") << 1.0 << 10 << 10;
    QTest::newRow("none") << 0.0 << 10 << 0;
}

void TestAdmission::failoverTakesAtMostItsShareOfCapacity()
{
    QFETCH(double, share);
    QFETCH(int, capacity);
    QFETCH(int, limit);
    ManualClock clock;
    AdmissionConfig config;
    config.failoverCapacityShare = share;
    const ConfigStore admissionRules(withAdmission(config));
    AdmissionController admission(admissionRules, clock);

    // The health registry counts failed-over calls per endpoint, up to the admission's limit.
    switchyard::config::Config twoEndpoints = withAdmission(config);
    twoEndpoints.providers.append(twoEndpoints.providers.first());
    twoEndpoints.providers.last().id = u"q"_s;
    const ConfigStore store(twoEndpoints);
    switchyard::health::HealthRegistry health(store, clock);

    QCOMPARE(admission.failoverLimit(capacity), limit);
    for (int i = 0; i < limit; ++i)
        QVERIFY(health.tryStartFailover(0, admission.failoverLimit(capacity)));
    QVERIFY(!health.tryStartFailover(0, admission.failoverLimit(capacity)));
    QCOMPARE(health.failoverInFlight(0), limit);
    QCOMPARE(health.failoverInFlight(1), 0); // counted per endpoint
    if (limit == 0)
        return;
    health.failoverFinished(0);
    QVERIFY(health.tryStartFailover(0, admission.failoverLimit(capacity)));
}

void TestAdmission::degradedTierAdmitsItsShareDeterministically()
{
    ManualClock clock;
    AdmissionConfig config;
    config.degradedAdmitShare = 0.5;
    const ConfigStore halfRules(withAdmission(config));
    AdmissionController half(halfRules, clock);
    config.degradedAdmitShare = 0.0;
    const ConfigStore noneRules(withAdmission(config));
    AdmissionController none(noneRules, clock);
    config.degradedAdmitShare = 1.0;
    const ConfigStore allRules(withAdmission(config));
    AdmissionController all(allRules, clock);

    int admitted = 0;
    constexpr int kRequests = 2000;
    for (int i = 0; i < kRequests; ++i) {
        const QByteArray id = "req_" + QByteArray::number(i);
        const bool first = half.admitsToDegradedFallback(id);
        QCOMPARE(half.admitsToDegradedFallback(id), first); // the same id, the same answer
        admitted += first ? 1 : 0;
        QVERIFY(!none.admitsToDegradedFallback(id));
        QVERIFY(all.admitsToDegradedFallback(id));
    }
    // A hash is not a coin: it is checked to split near the share, not at it exactly.
    QVERIFY2(admitted > kRequests * 45 / 100 && admitted < kRequests * 55 / 100,
             qPrintable(QString::number(admitted)));
}

QTEST_APPLESS_MAIN(TestAdmission)
#include "tst_admission.moc"
