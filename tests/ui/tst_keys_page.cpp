// The Keys tab: client API keys from the engine's snapshots, merged by id under
// QAbstractItemModelTester, never a secret; its empty state; its Chinese translation. (The page's
// commands run against a real engine in tst_keys_console.)
#include "fake_engine_bridge.h"
#include "ui/keys/keys_model.h"
#include "ui/keys/keys_page.h"
#include "ui/shell/main_window.h"
#include "ui/shell/translation.h"

#include <QAbstractItemModelTester>
#include <QDir>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTranslator>

using namespace Qt::StringLiterals;
using namespace switchyard;
using switchyard::testing::FakeEngineBridge;
using switchyard::ui::KeysModel;

namespace {

ClientKeyListing fileKey(const QString &id, const QString &tenant)
{
    ClientKeyListing key;
    key.id = id;
    key.tenant = tenant;
    key.requestsPerMinute = 600;
    key.models = {u"gpt-4o*"_s, u"claude-*"_s};
    return key;
}

ClientKeyListing apiKey(const QString &id, const QString &tenant)
{
    ClientKeyListing key;
    key.id = id;
    key.tenant = tenant;
    key.definedInFile = false;
    key.tokensPerMinute = 200000;
    key.createdAtUtc = QDateTime(QDate(2026, 12, 1), QTime(9, 30), Qt::UTC);
    return key;
}

QString cell(const KeysModel &model, int row, int column)
{
    return model.data(model.index(row, column)).toString();
}

} // namespace

class KeysPageTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void keysAreMergedByIdNeverReset();
    void limitsAndSourcesAreShownAsOperatorsReadThem();
    void theTabListsWhatTheBridgePublishes();
    void chineseTranslationTranslatesThePage();
};

void KeysPageTest::keysAreMergedByIdNeverReset()
{
    KeysModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
    QSignalSpy changes(&model, &QAbstractItemModel::dataChanged);

    model.applyKeys({fileKey(u"team-a"_s, u"a"_s), apiKey(u"bot"_s, u"b"_s)});
    QCOMPARE(model.rowCount(), 2);
    model.applyKeys({fileKey(u"team-a"_s, u"a"_s), apiKey(u"bot"_s, u"b"_s)});
    QCOMPARE(changes.size(), 0); // nothing differs, nothing is signalled
    ClientKeyListing changed = fileKey(u"team-a"_s, u"a"_s);
    changed.requestsPerMinute = 60;
    model.applyKeys({changed});

    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(cell(model, 0, KeysModel::KeyColumn), u"team-a"_s);
    QCOMPARE(changes.size(), 1);
    QCOMPARE(resets.size(), 0);
}

void KeysPageTest::limitsAndSourcesAreShownAsOperatorsReadThem()
{
    KeysModel model;
    model.applyKeys({fileKey(u"team-a"_s, u"a"_s), apiKey(u"bot"_s, u"b"_s)});

    QCOMPARE(cell(model, 0, KeysModel::SourceColumn), u"config file"_s);
    QCOMPARE(cell(model, 0, KeysModel::RequestsColumn), QLocale().toString(600));
    QCOMPARE(cell(model, 0, KeysModel::TokensColumn), u"no limit"_s);
    QCOMPARE(cell(model, 0, KeysModel::ModelsColumn), u"gpt-4o*, claude-*"_s);
    QCOMPARE(cell(model, 0, KeysModel::CreatedColumn), u"\u2014"_s);
    QCOMPARE(cell(model, 1, KeysModel::SourceColumn), u"admin API"_s);
    QCOMPARE(cell(model, 1, KeysModel::RequestsColumn), u"no limit"_s);
    QCOMPARE(cell(model, 1, KeysModel::ModelsColumn), u"all models"_s);
    QVERIFY(!cell(model, 1, KeysModel::CreatedColumn).isEmpty());
    QCOMPARE(model.data(model.index(1, KeysModel::SourceColumn), Qt::ToolTipRole).toString(),
             u"Revoke it with DELETE /admin/v1/keys/bot"_s);
}

void KeysPageTest::theTabListsWhatTheBridgePublishes()
{
    FakeEngineBridge bridge;
    ui::MainWindow window(bridge);
    window.resize(1280, 700);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    auto *tabs = window.findChild<QTabWidget *>(u"consoleTabs"_s);
    QVERIFY(tabs);
    tabs->setCurrentWidget(window.keysPage());
    QCOMPARE(tabs->tabText(tabs->currentIndex()), u"Keys"_s);
    auto *table = window.keysPage()->findChild<QTableView *>(u"keysTable"_s);
    auto *empty = window.keysPage()->findChild<QLabel *>(u"keysEmptyHint"_s);
    QVERIFY(table && empty);
    QVERIFY(empty->isVisible());
    QVERIFY(!table->isVisible());

    EngineSnapshot snapshot;
    snapshot.listenAddress = u"127.0.0.1:8080"_s;
    snapshot.clientKeys = {fileKey(u"team-a"_s, u"team-a"_s), fileKey(u"ci"_s, u"ci"_s),
                           apiKey(u"support-bot"_s, u"support"_s)};
    snapshot.clientKeys[1].models.clear();
    snapshot.clientKeys[1].requestsPerMinute = 0;
    bridge.publish(snapshot);

    QCOMPARE(table->model()->rowCount(), 3);
    QVERIFY(table->isVisible());
    QVERIFY(!empty->isVisible());
    // Rendered, not published: docs/screenshots/console_keys.png comes from tst_keys_console,
    // with a real engine's keys and the Issue dialog over them.
    QTemporaryDir scratch;
    QVERIFY(window.grab().save(scratch.filePath(u"console_keys.png"_s)));
}

void KeysPageTest::chineseTranslationTranslatesThePage()
{
    QTranslator translator;
    QVERIFY(ui::loadSwitchyardTranslation(
        translator, QLocale(QLocale::Chinese, QLocale::SimplifiedChineseScript, QLocale::China)));
    FakeEngineBridge bridge;
    ui::KeysPage page(bridge);
    page.model()->applyKeys({apiKey(u"bot"_s, u"b"_s)});
    auto *issue = page.findChild<QPushButton *>(u"issueKeyAction"_s);
    QVERIFY(issue);
    QVERIFY(QCoreApplication::installTranslator(&translator));

    QTRY_COMPARE(page.model()->headerData(KeysModel::TenantColumn, Qt::Horizontal).toString(),
                 u"租户"_s);
    QCOMPARE(cell(*page.model(), 0, KeysModel::SourceColumn), u"管理 API"_s);
    QTRY_COMPARE(issue->text(), u"签发密钥…"_s); // retranslated on the LanguageChange event

    QVERIFY(QCoreApplication::removeTranslator(&translator));
}

QTEST_MAIN(KeysPageTest)
#include "tst_keys_page.moc"
