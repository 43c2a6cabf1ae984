// The config versions' store: numbered in order, each with its diff against the one before,
// kept in the state database across a reopen, and in memory when there is no file.

#include "config/config_loader.h"
#include "lifecycle/config_history.h"
#include "storage/state_database.h"

#include <QTemporaryDir>
#include <QTest>

using namespace switchyard;
using namespace Qt::StringLiterals;

class ConfigHistoryTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void versionsRoundTripAndSurviveAReopen()
    {
        QTemporaryDir dir;
        const QString path = storage::stateDatabasePath(dir.path());
        {
            lifecycle::ConfigHistory history(path, u"history-a"_s);
            QCOMPARE(history.problem(), QString());
            QVERIFY(!history.latest());
            const ConfigVersion first =
                history.append(u"a: 1\nb: 2\n"_s, {ConfigChangeSource::File, {}, u"start"_s}, 1000);
            QCOMPARE(first.number, 1u);
            QCOMPARE(first.diff, QString());
            const ConfigVersion second = history.append(
                u"a: 1\nb: 3\n"_s, {ConfigChangeSource::Api, u"ana"_s, u"b up"_s}, 2000);
            QCOMPARE(second.number, 2u);
            QCOMPARE(second.diff,
                     u"--- version 1\n+++ version 2\n@@ -1,2 +1,2 @@\n a: 1\n-b: 2\n+b: 3\n"_s);
        }
        lifecycle::ConfigHistory reopened(path, u"history-b"_s);
        QCOMPARE(reopened.problem(), QString());
        const QList<ConfigVersionInfo> list = reopened.list();
        QCOMPARE(list.size(), 2);
        QCOMPARE(list[0].number, 2u);
        QCOMPARE(list[0].source, ConfigChangeSource::Api);
        QCOMPARE(list[0].author, u"ana"_s);
        QCOMPARE(list[0].note, u"b up"_s);
        QCOMPARE(list[0].createdMsSinceEpoch, 2000);
        QCOMPARE(list[1].number, 1u);
        QCOMPARE(list[1].source, ConfigChangeSource::File);
        const std::optional<ConfigVersion> second = reopened.version(2);
        QVERIFY(second);
        QCOMPARE(second->text, u"a: 1\nb: 3\n"_s);
        QVERIFY(second->diff.contains(u"+b: 3"_s));
        QCOMPARE(reopened.append(u"a: 2\n"_s, {ConfigChangeSource::Rollback, {}, {}}, 3000).number,
                 3u);
    }

    void withoutAPathVersionsLiveInMemory()
    {
        lifecycle::ConfigHistory history(QString(), u"history-memory"_s);
        QCOMPARE(history.problem(), QString());
        history.append(u"a: 1\n"_s, {}, 1);
        QCOMPARE(history.latest()->number, 1u);
    }

    void aDamagedFileKeepsVersionsInMemoryAndSaysWhy()
    {
        QTemporaryDir dir;
        const QString path = storage::stateDatabasePath(dir.path());
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(QByteArray(8192, 'x'));
        file.close();
        lifecycle::ConfigHistory history(path, u"history-damaged"_s);
        QVERIFY(!history.problem().isEmpty());
        QCOMPARE(history.append(u"a: 1\n"_s, {}, 1).number, 1u);
        QCOMPARE(history.list().size(), 1);
    }

    void theConfigFileSection_data()
    {
        QTest::addColumn<QByteArray>("section");
        QTest::addColumn<QString>("error");
        QTest::newRow("defaults") << QByteArray() << QString();
        QTest::newRow("all set") << QByteArray("config_file: {watch: false, debounce: 1s, "
                                               "write_back: false}\n")
                                 << QString();
        QTest::newRow("unknown key")
            << QByteArray("config_file:\n  debounse: 1s\n")
            << u"gateway.yaml:8:3: unknown key `debounse` (did you mean `debounce`?)"_s;
        QTest::newRow("not a bool") << QByteArray("config_file:\n  watch: sometimes\n")
                                    << u"gateway.yaml:8:10: `watch` must be true or false, got "
                                       u"\"sometimes\""_s;
        QTest::newRow("debounce too long")
            << QByteArray("config_file:\n  debounce: 2m\n")
            << u"gateway.yaml:8:13: `debounce` must be at most 60s"_s;
    }

    void theConfigFileSection()
    {
        QFETCH(QByteArray, section);
        QFETCH(QString, error);
        const QByteArray yaml = "providers:\n"
                                "  - id: p\n"
                                "    kind: openai\n"
                                "    base_url: http://127.0.0.1:1/v1\n"
                                "    models: [m]\n"
                                "listen: 127.0.0.1:0\n" +
                                section;
        const config::LoadResult loaded = config::loadConfigText(yaml, u"gateway.yaml"_s, {});
        if (!error.isEmpty()) {
            QVERIFY(!loaded.ok());
            QCOMPARE(loaded.errors.first().toString(), error);
            return;
        }
        QVERIFY(loaded.ok());
        const bool allSet = !section.isEmpty();
        QCOMPARE(loaded.config->configFile.watch, !allSet);
        QCOMPARE(loaded.config->configFile.debounce.count(), allSet ? 1000 : 200);
        QCOMPARE(loaded.config->configFile.writeBack, !allSet);
    }
};

QTEST_GUILESS_MAIN(ConfigHistoryTest)
#include "tst_config_history.moc"
