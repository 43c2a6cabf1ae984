// The foundation router: model → providers, weighted first choice, the rest as fallbacks.

#include "routing/model_router.h"

#include <QTest>

using namespace switchyard;

namespace {
config::ProviderConfig provider(const QString &id, int weight, const QStringList &models)
{
    config::ProviderConfig result;
    result.id = id;
    result.weight = weight;
    for (const QString &model : models)
        result.models.append({model, model});
    return result;
}

config::Config threeProviders()
{
    config::Config config;
    config.providers = {
        provider(QStringLiteral("a"), 3, {QStringLiteral("light")}),
        provider(QStringLiteral("b"), 1, {QStringLiteral("light"), QStringLiteral("pro")}),
        provider(QStringLiteral("c"), 0, {QStringLiteral("pro")})};
    config.providers[2].models = {{QStringLiteral("pro"), QStringLiteral("pro-2025-01")}};
    return config;
}
} // namespace

class TestModelRouter : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void weightedDrawPicksFirstCandidate_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<double>("draw");
        QTest::addColumn<QStringList>("expectedOrder");
        // light: a has weight 3, b weight 1 → draws below 0.75 choose a.
        QTest::newRow("light low draw") << QStringLiteral("light") << 0.0
                                        << QStringList{QStringLiteral("a"), QStringLiteral("b")};
        QTest::newRow("light below boundary")
            << QStringLiteral("light") << 0.7499
            << QStringList{QStringLiteral("a"), QStringLiteral("b")};
        QTest::newRow("light at boundary") << QStringLiteral("light") << 0.75
                                           << QStringList{QStringLiteral("b"), QStringLiteral("a")};
        QTest::newRow("light high draw") << QStringLiteral("light") << 0.9999
                                         << QStringList{QStringLiteral("b"), QStringLiteral("a")};
        // pro: c has weight 0, so b always goes first and c stays as a fallback.
        QTest::newRow("pro weight zero never first")
            << QStringLiteral("pro") << 0.9999
            << QStringList{QStringLiteral("b"), QStringLiteral("c")};
    }
    void weightedDrawPicksFirstCandidate()
    {
        QFETCH(QString, model);
        QFETCH(double, draw);
        QFETCH(QStringList, expectedOrder);
        const routing::ModelRouter router(threeProviders());
        const auto decision = router.route(model, draw);
        QVERIFY(decision.has_value());
        QStringList order;
        for (const auto &candidate : decision->candidates)
            order.append(candidate.providerId);
        QCOMPARE(order, expectedOrder);
        QVERIFY(decision->reason().contains(expectedOrder.first()));
    }

    void unknownModelHasNoRoute()
    {
        const routing::ModelRouter router(threeProviders());
        QVERIFY(!router.route(QStringLiteral("missing"), 0.5).has_value());
    }

    void renamedModelCarriesUpstreamName()
    {
        const routing::ModelRouter router(threeProviders());
        const auto decision = router.route(QStringLiteral("pro"), 0.1);
        QCOMPARE(decision->candidates.at(1).providerId, QStringLiteral("c"));
        QCOMPARE(decision->candidates.at(1).upstreamModel, QStringLiteral("pro-2025-01"));
        QCOMPARE(decision->candidates.at(1).providerIndex, 2);
    }

    void allZeroWeightsShareEvenly()
    {
        config::Config config;
        config.providers = {provider(QStringLiteral("x"), 0, {QStringLiteral("m")}),
                            provider(QStringLiteral("y"), 0, {QStringLiteral("m")})};
        const routing::ModelRouter router(config);
        QCOMPARE(router.route(QStringLiteral("m"), 0.2)->candidates.first().providerId,
                 QStringLiteral("x"));
        QCOMPARE(router.route(QStringLiteral("m"), 0.7)->candidates.first().providerId,
                 QStringLiteral("y"));
    }

    void modelsListIsSortedWithFirstProviderAsOwner()
    {
        const routing::ModelRouter router(threeProviders());
        const QList<QPair<QString, QString>> expected = {
            {QStringLiteral("light"), QStringLiteral("a")},
            {QStringLiteral("pro"), QStringLiteral("b")}};
        QCOMPARE(router.models(), expected);
    }
};

QTEST_GUILESS_MAIN(TestModelRouter)
#include "tst_model_router.moc"
