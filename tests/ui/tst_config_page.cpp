// The Config page on a fake bridge: the status line for a file that matches, one that was
// refused (its FILE:LINE:COL errors) and an overlay; the version list; the side-by-side diff of
// one version against the one before it and of any two; a rollback asked for with a
// confirmation, refused with the engine's reason; and the screenshot in docs/screenshots.

#include "fake_engine_bridge.h"
#include "screenshots.h"
#include "ui/config/config_models.h"
#include "ui/config/config_page.h"
#include "ui/shell/main_window.h"

#include <QAbstractItemModelTester>
#include <QDir>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

using namespace switchyard;
using namespace switchyard::ui;
using namespace Qt::StringLiterals;

namespace {

// 2024-03-12 14:00:00 UTC.
constexpr qint64 kStartMs = 1'710'252'000'000;

const QString kFirst = u"# Team gateway\n"
                       u"listen: 127.0.0.1:8080\n"
                       u"providers:\n"
                       u"  - id: local-qwen\n"
                       u"    kind: openai\n"
                       u"    base_url: http://127.0.0.1:8001/v1\n"
                       u"    models: [qwen2.5-32b]\n"
                       u"tiers:\n"
                       u"  light: {pool: [local-qwen], timeout: 8s}\n"
                       u"routes:\n"
                       u"  - name: default\n"
                       u"    priority: 0\n"
                       u"    to: {tier: auto}\n"_s;

QString withCloud(const QString &text)
{
    QString next = text;
    next.replace(u"tiers:\n"_s, u"  - id: cloud-a\n"
                                u"    kind: openai\n"
                                u"    base_url: https://api.example.com/v1\n"
                                u"    api_key_env: CLOUD_A_KEY\n"
                                u"    models: [gpt-4o]\n"
                                u"tiers:\n"_s);
    next.replace(u"  light: {pool: [local-qwen], timeout: 8s}\n"_s,
                 u"  light: {pool: [local-qwen], timeout: 8s}\n"
                 u"  pro: {pool: [cloud-a], timeout: 30s}\n"_s);
    return next;
}

QList<ConfigVersion> history()
{
    const QString second = withCloud(kFirst);
    QString third = second;
    third.replace(u"    priority: 0\n"_s, u"    priority: 5\n"_s);
    QString fourth = third;
    fourth.replace(u"timeout: 8s"_s, u"timeout: 6s"_s);
    const auto version = [](quint64 number, qint64 minutes, ConfigChangeSource source,
                            const QString &author, const QString &note, const QString &text) {
        ConfigVersion version;
        version.number = number;
        version.createdMsSinceEpoch = kStartMs + minutes * 60'000;
        version.source = source;
        version.author = author;
        version.note = note;
        version.text = text;
        return version;
    };
    return {version(1, 0, ConfigChangeSource::File, {}, u"first start"_s, kFirst),
            version(2, 42, ConfigChangeSource::File, {}, u"file changed"_s, second),
            version(3, 65, ConfigChangeSource::Console, u"lee"_s, {}, third),
            version(4, 91, ConfigChangeSource::Api, u"ops-bot"_s, u"tighter light tier"_s, fourth)};
}

EngineSnapshot snapshotWith(const ConfigStatus &status)
{
    EngineSnapshot snapshot;
    snapshot.listenAddress = u"127.0.0.1:8080"_s;
    snapshot.config = status;
    return snapshot;
}

ConfigStatus matching(quint64 running)
{
    ConfigStatus status;
    status.tracked = true;
    status.filePath = u"/etc/switchyard/gateway.yaml"_s;
    status.runningVersion = running;
    return status;
}

} // namespace

class ConfigPageTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        qputenv("TZ", "UTC");
        QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
        QVERIFY(m_scratch.isValid());
    }

    void theListLoadsAndTheNewestShowsWhatItChanged()
    {
        testing::FakeEngineBridge bridge;
        bridge.configVersions = history();
        ConfigPage page(bridge);
        QAbstractItemModelTester versionsTester(page.versionsModel());
        QAbstractItemModelTester diffTester(page.diffModel());
        bridge.publish(snapshotWith(matching(4)));

        QCOMPARE(page.versionsModel()->rowCount(), 4);
        const QModelIndex newest =
            page.versionsModel()->index(0, ConfigVersionsModel::NumberColumn);
        QCOMPARE(newest.data().toString(), u"4 (running)"_s);
        QCOMPARE(
            page.versionsModel()->index(0, ConfigVersionsModel::SourceColumn).data().toString(),
            u"admin API"_s);
        QCOMPARE(page.versionsModel()->index(0, ConfigVersionsModel::NoteColumn).data().toString(),
                 u"tighter light tier"_s);
        QCOMPARE(page.versionsModel()->index(3, ConfigVersionsModel::TimeColumn).data().toString(),
                 u"2024-03-12 14:00:00"_s);
        // The newest is selected: 3 -> 4, one line changed, red on the left, green on the right.
        QCOMPARE(page.diffTitle()->text(), u"Version 3 → version 4"_s);
        QCOMPARE(page.diffModel()->changedRows(), 1);
        int changed = -1;
        for (int row = 0; row < page.diffModel()->rowCount(); ++row) {
            if (page.diffModel()
                    ->index(row, ConfigDiffModel::LeftTextColumn)
                    .data(ConfigDiffModel::KindRole)
                    .toInt() == int(config::DiffLine::Kind::Removed))
                changed = row;
        }
        QVERIFY(changed >= 0);
        QCOMPARE(
            page.diffModel()->index(changed, ConfigDiffModel::LeftTextColumn).data().toString(),
            u"  light: {pool: [local-qwen], timeout: 8s}"_s);
        QCOMPARE(
            page.diffModel()->index(changed, ConfigDiffModel::RightTextColumn).data().toString(),
            u"  light: {pool: [local-qwen], timeout: 6s}"_s);
        QCOMPARE(page.diffModel()
                     ->index(changed, ConfigDiffModel::RightTextColumn)
                     .data(ConfigDiffModel::KindRole)
                     .toInt(),
                 int(config::DiffLine::Kind::Added));
        QVERIFY(page.diffModel()
                    ->index(changed, ConfigDiffModel::LeftTextColumn)
                    .data(Qt::BackgroundRole)
                    .isValid());
        QVERIFY(!page.diffModel()
                     ->index(0, ConfigDiffModel::LeftTextColumn)
                     .data(Qt::BackgroundRole)
                     .isValid());
        // The running version cannot be rolled back to.
        QVERIFY(!page.rollbackButton()->isEnabled());
    }

    void anyTwoVersionsCompareOldestToNewest()
    {
        testing::FakeEngineBridge bridge;
        bridge.configVersions = history();
        ConfigPage page(bridge);
        bridge.publish(snapshotWith(matching(4)));
        page.selectVersions({4, 1});
        QCOMPARE(page.diffTitle()->text(), u"Version 1 → version 4"_s);
        // cloud-a's five lines and its tier are added; the priority and the timeout changed.
        QCOMPARE(page.diffModel()->changedRows(), 8);
        QVERIFY(!page.rollbackButton()->isEnabled()); // two selected: which one?
        page.selectVersions({1});
        QCOMPARE(page.diffTitle()->text(), u"Version 1"_s);
    }

    void theFirstVersionShowsAsTextAcrossTheCard()
    {
        // A first version with a line wider than half the card, as the demo's canary rule is.
        const QString text = kFirst + u"    to: {split: [{target: sim-swift, weight: 90}, "
                                      u"{target: sim-steady, weight: 10}], key: session}\n"_s;
        testing::FakeEngineBridge bridge;
        ConfigVersion first = history().constFirst();
        first.text = text;
        bridge.configVersions = {first};
        bridge.publish(snapshotWith(matching(1)));
        MainWindow window(bridge);
        window.resize(1280, 900);
        window.pageTabs()->setCurrentWidget(window.configPage());
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        ConfigPage &page = *window.configPage();
        page.selectVersions({1});
        QCoreApplication::processEvents();

        QCOMPARE(page.diffTitle()->text(), u"Version 1"_s);
        QCOMPARE(page.findChild<QLabel *>(u"configDiffHint"_s)->text(),
                 u"the first version, 14 line(s)"_s);
        // Nothing before it to face: one side, every line as it is, none marked changed.
        QTableView *view = page.diffView();
        QVERIFY(view->isColumnHidden(ConfigDiffModel::LeftLineColumn));
        QVERIFY(view->isColumnHidden(ConfigDiffModel::LeftTextColumn));
        QVERIFY(!view->isColumnHidden(ConfigDiffModel::RightTextColumn));
        const ConfigDiffModel &model = *page.diffModel();
        QCOMPARE(model.rowCount(), 14);
        QCOMPARE(model.changedRows(), 0);
        for (int row = 0; row < model.rowCount(); ++row) {
            const QModelIndex line = model.index(row, ConfigDiffModel::RightTextColumn);
            QCOMPARE(line.data().toString(), text.split(u'\n').at(row));
            QCOMPARE(model.index(row, ConfigDiffModel::RightLineColumn).data().toInt(), row + 1);
            QVERIFY(!line.data(Qt::BackgroundRole).isValid());
        }
        // The text column starts where the card does and holds its longest line whole.
        QCOMPARE(view->columnViewportPosition(ConfigDiffModel::RightLineColumn), 0);
        QVERIFY(view->columnWidth(ConfigDiffModel::RightTextColumn) >=
                static_cast<const QAbstractItemView *>(view)->sizeHintForColumn(
                    ConfigDiffModel::RightTextColumn));

        // Two versions face each other again.
        ConfigVersion second = first;
        second.number = 2;
        second.text = withCloud(text);
        bridge.configVersions = {first, second};
        bridge.publish(snapshotWith(matching(2)));
        page.selectVersions({1, 2});
        QCOMPARE(page.diffTitle()->text(), u"Version 1 → version 2"_s);
        QVERIFY(!view->isColumnHidden(ConfigDiffModel::LeftLineColumn));
        QVERIFY(!view->isColumnHidden(ConfigDiffModel::LeftTextColumn));
        QCOMPARE(model.changedRows(), 6);
    }

    void theStatusLineSaysWhereTheFileStands()
    {
        testing::FakeEngineBridge bridge;
        ConfigPage page(bridge);
        bridge.publish(snapshotWith(matching(4)));
        QCOMPARE(
            page.statusLabel()->text(),
            u"Version 4 is running. The file /etc/switchyard/gateway.yaml on disk matches it."_s);
        QVERIFY(page.detailsView()->isHidden());

        ConfigStatus refused = matching(4);
        refused.fileMatches = false;
        refused.lastReloadErrorMsSinceEpoch = kStartMs + 5 * 60'000;
        refused.lastReloadErrors = {{{u"/etc/switchyard/gateway.yaml"_s, 6, 5},
                                     u"unknown key `modles` (did you mean `models`?)"_s}};
        bridge.publish(snapshotWith(refused));
        QCOMPARE(page.statusLabel()->text(),
                 u"Version 4 is running. The file on disk was changed and refused at 14:05:00: fix "
                 u"it and save again."_s);
        QCOMPARE(
            page.detailsView()->toPlainText(),
            u"/etc/switchyard/gateway.yaml:6:5: unknown key `modles` (did you mean `models`?)"_s);

        ConfigStatus overlay = matching(5);
        overlay.filePath = u":/demo.yaml"_s;
        overlay.fileMatches = false;
        overlay.overlayPath = u"/var/lib/switchyard/overlay.yaml"_s;
        overlay.overlayKeys = {u"routes"_s};
        overlay.difference = u"--- :/demo.yaml\n+++ running config\n@@ -1 +1 @@\n-a\n+b\n"_s;
        bridge.publish(snapshotWith(overlay));
        QCOMPARE(
            page.statusLabel()->text(),
            u"Version 5 is running. Running config differs from the file :/demo.yaml: the "
            u"overlay /var/lib/switchyard/overlay.yaml replaces routes, and a restart loads it "
            u"too."_s);
        QVERIFY(page.detailsView()->toPlainText().contains(u"+b"_s));
    }

    void rollbackAsksFirstAndShowsTheEnginesAnswer()
    {
        testing::FakeEngineBridge bridge;
        bridge.configVersions = history();
        ConfigPage page(bridge);
        bridge.publish(snapshotWith(matching(4)));
        QList<quint64> asked;
        bool confirm = false;
        page.setRollbackConfirmation([&](quint64 number) {
            asked.append(number);
            return confirm;
        });
        page.selectVersions({2});
        QVERIFY(page.rollbackButton()->isEnabled());

        QTest::mouseClick(page.rollbackButton(), Qt::LeftButton); // cancelled
        QCOMPARE(asked, QList<quint64>({2}));
        QVERIFY(bridge.rolledBackTo.isEmpty());

        confirm = true;
        bridge.rollbackResult.outcome = ConfigChangeResult::Outcome::Invalid;
        bridge.rollbackResult.message =
            u"version 2 cannot be applied now: environment variable CLOUD_A_KEY is not set"_s;
        QTest::mouseClick(page.rollbackButton(), Qt::LeftButton);
        QCOMPARE(bridge.rolledBackTo, QList<quint64>({2}));
        QCOMPARE(page.findChild<QLabel *>(u"configRollbackResult"_s)->text(),
                 u"Not rolled back: version 2 cannot be applied now: environment variable "
                 u"CLOUD_A_KEY is not set"_s);

        bridge.rollbackResult = {ConfigChangeResult::Outcome::Applied, 5, {}, {}};
        QTest::mouseClick(page.rollbackButton(), Qt::LeftButton);
        QCOMPARE(page.findChild<QLabel *>(u"configRollbackResult"_s)->text(),
                 u"Rolled back: version 5 is running."_s);
    }

    void screenshot()
    {
        testing::FakeEngineBridge bridge;
        bridge.configVersions = history();
        ConfigStatus status = matching(4);
        status.filePath = u"/etc/switchyard/gateway.yaml"_s;
        bridge.publish(snapshotWith(status));
        MainWindow window(bridge);
        window.resize(1360, 820);
        window.pageTabs()->setCurrentWidget(window.configPage());
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        ConfigStatus refused = status;
        refused.fileMatches = false;
        refused.lastReloadErrorMsSinceEpoch = kStartMs + 95 * 60'000;
        refused.lastReloadErrors = {{{u"/etc/switchyard/gateway.yaml"_s, 14, 5},
                                     u"unknown key `modles` (did you mean `models`?)"_s},
                                    {{u"/etc/switchyard/gateway.yaml"_s, 11, 5},
                                     u"provider is missing required key `models`"_s}};
        bridge.publish(snapshotWith(refused));
        window.configPage()->selectVersions({1, 3});
        QCoreApplication::processEvents();
        const QString path =
            switchyard::testing::screenshotPath(m_scratch.path(), u"config_page.png"_s);
        QVERIFY2(window.grab().save(path), qPrintable(path));
        qInfo("config screenshot: %s", qPrintable(QDir::toNativeSeparators(path)));
    }

private:
    QTemporaryDir m_scratch;
};

QTEST_MAIN(ConfigPageTest)
#include "tst_config_page.moc"
