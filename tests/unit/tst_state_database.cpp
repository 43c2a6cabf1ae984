// The state database's opening rules: created with its folder, in memory without a path, a
// damaged file reported at open; and the `state` config section.

#include "config/config_loader.h"
#include "storage/state_database.h"

#include <QFile>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

using namespace switchyard;
using namespace Qt::StringLiterals;

class StateDatabaseTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void createsTheFileAndItsFolder()
    {
        QTemporaryDir dir;
        const QString path = storage::stateDatabasePath(dir.filePath(u"nested/state"_s));
        QVERIFY(path.endsWith(u"nested/state/switchyard.db"_s));
        {
            storage::OpenedDatabase opened = storage::openStateDatabase(path, u"create"_s);
            QVERIFY2(opened.ok(), qPrintable(opened.error));
            QCOMPARE(storage::ensureSchema(opened.database,
                                           {u"CREATE TABLE IF NOT EXISTS t (v INTEGER)"_s,
                                            u"INSERT INTO t VALUES (7)"_s}),
                     QString());
            QSqlQuery mode(opened.database);
            QVERIFY(mode.exec(u"PRAGMA journal_mode"_s) && mode.next());
            QCOMPARE(mode.value(0).toString(), u"wal"_s);
        }
        storage::closeStateDatabase(u"create"_s);
        QVERIFY(QFile::exists(path));

        // Reopened: the row is still there.
        {
            storage::OpenedDatabase again = storage::openStateDatabase(path, u"reopen"_s);
            QVERIFY2(again.ok(), qPrintable(again.error));
            QSqlQuery query(again.database);
            QVERIFY(query.exec(u"SELECT v FROM t"_s) && query.next());
            QCOMPARE(query.value(0).toInt(), 7);
        }
        storage::closeStateDatabase(u"reopen"_s);
    }

    void withoutAPathTheDatabaseIsInMemory()
    {
        {
            storage::OpenedDatabase opened = storage::openStateDatabase(QString(), u"memory"_s);
            QVERIFY2(opened.ok(), qPrintable(opened.error));
            QCOMPARE(opened.database.databaseName(), u":memory:"_s);
            QCOMPARE(storage::ensureSchema(opened.database, {u"CREATE TABLE t (v INTEGER)"_s}),
                     QString());
        }
        storage::closeStateDatabase(u"memory"_s);
    }

    void aDamagedFileIsReportedAtOpen()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(u"switchyard.db"_s);
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(QByteArray(8192, 'x')); // not a database
        file.close();
        {
            storage::OpenedDatabase opened = storage::openStateDatabase(path, u"damaged"_s);
            QVERIFY(!opened.ok());
            QVERIFY2(opened.error.contains(path), qPrintable(opened.error));
        }
        storage::closeStateDatabase(u"damaged"_s);
    }

    void aLargeFileIsCheckedByItsHeaderAndSchemaOnly()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(u"switchyard.db"_s);
        {
            storage::OpenedDatabase opened = storage::openStateDatabase(path, u"large"_s);
            QVERIFY(opened.ok());
            QVERIFY(storage::ensureSchema(opened.database, {u"CREATE TABLE rows (payload BLOB)"_s})
                        .isEmpty());
            QVERIFY(opened.database.transaction());
            QSqlQuery insert(opened.database);
            QVERIFY(insert.prepare(u"INSERT INTO rows (payload) VALUES (?)"_s));
            for (int row = 0; row < 4000; ++row) {
                insert.bindValue(0, QByteArray(500, char('a' + row % 26)));
                QVERIFY(insert.exec());
            }
            QVERIFY(opened.database.commit());
        }
        storage::closeStateDatabase(u"large"_s);
        // Damage a page in the middle of the table, far from the header and the schema.
        QFile file(path);
        QVERIFY(file.size() > 1024 * 1024);
        QVERIFY(file.open(QIODevice::ReadWrite));
        QVERIFY(file.seek(file.size() / 2 / 4096 * 4096));
        file.write(QByteArray(4096, '\xff'));
        file.close();

        {
            // Over the limit (here 64 KiB): opened, as reading every page would hold the start.
            storage::OpenedDatabase opened =
                storage::openStateDatabase(path, u"large"_s, 2000, 64 * 1024);
            QVERIFY2(opened.ok(), qPrintable(opened.error));
        }
        storage::closeStateDatabase(u"large"_s);
        {
            // Within the limit every page is read and the damage is found. (A copy: the original
            // was read in full when it was created, and one full check per file and process is
            // all there is.)
            const QString copy = dir.filePath(u"copy.db"_s);
            QVERIFY(QFile::copy(path, copy));
            storage::OpenedDatabase opened = storage::openStateDatabase(copy, u"large"_s);
            QVERIFY(!opened.ok());
            QVERIFY2(opened.error.contains(u"damaged"_s), qPrintable(opened.error));
        }
        storage::closeStateDatabase(u"large"_s);
    }

    void aFailingSchemaStatementIsNamedAndRolledBack()
    {
        {
            storage::OpenedDatabase opened = storage::openStateDatabase(QString(), u"schema"_s);
            QVERIFY(opened.ok());
            const QString error = storage::ensureSchema(
                opened.database, {u"CREATE TABLE a (v INTEGER)"_s, u"CREATE TABLE ("_s});
            QVERIFY2(error.contains(u"CREATE TABLE ("_s), qPrintable(error));
            QSqlQuery query(opened.database);
            QVERIFY(!query.exec(u"SELECT v FROM a"_s)); // the first statement was rolled back
        }
        storage::closeStateDatabase(u"schema"_s);
    }

    void theStateSectionTakesAFolderRelativeToTheFile()
    {
        const QByteArray yaml = "providers:\n"
                                "  - id: p\n"
                                "    kind: openai\n"
                                "    base_url: http://127.0.0.1:1/v1\n"
                                "    models: [m]\n"
                                "state:\n"
                                "  directory: var/state\n";
        const config::LoadResult loaded =
            config::loadConfigText(yaml, u"/etc/switchyard/gateway.yaml"_s, {});
        QVERIFY(loaded.ok());
        QCOMPARE(loaded.config->state.directory, u"/etc/switchyard/var/state"_s);

        const config::LoadResult wrong =
            config::loadConfigText(yaml + "  database: x\n", u"/etc/switchyard/gateway.yaml"_s, {});
        QVERIFY(!wrong.ok());
        QVERIFY2(wrong.errors.first().toString().startsWith(u"/etc/switchyard/gateway.yaml:8:"_s),
                 qPrintable(wrong.errors.first().toString()));
    }
};

QTEST_GUILESS_MAIN(StateDatabaseTest)
#include "tst_state_database.moc"
