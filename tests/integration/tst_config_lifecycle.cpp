// The config's life after start, through a real engine and its admin API: versions kept in the
// state database across restarts, the watched file reloaded (or refused with FILE:LINE:COL),
// whole texts applied and rolled back, the race between a reload and an apply, console edits
// written back keeping the file's comments, the overlay where the file cannot be written, and
// providers added, removed and moved by a reload while a request is in flight.

#include "bridge/engine_host.h"
#include "config/config_loader.h"
#include "config/route_rules_io.h"
#include "control/operator_commands.h"
#include "engine/engine.h"
#include "fake_upstream.h"
#include "gateway_harness.h"
#include "health/health_registry.h"
#include "lifecycle/config_lifecycle.h"
#include "lifecycle/config_overlay.h"
#include "test_client.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <unistd.h>

using namespace switchyard;
using namespace switchyard::testing;
using namespace Qt::StringLiterals;

namespace {

struct AdminAnswer {
    int status = 0;
    QJsonObject body;
};

AdminAnswer admin(quint16 port, const QByteArray &method, const QByteArray &path,
                  const QByteArray &body = {},
                  const QList<QPair<QByteArray, QByteArray>> &headers = {})
{
    TestClient client(port);
    client.send(method, "/admin/v1/" + path, body, headers);
    AdminAnswer answer;
    if (!client.waitForFinished(10000))
        return answer;
    answer.status = client.status();
    answer.body = QJsonDocument::fromJson(client.body()).object();
    return answer;
}

// A config with one provider per (id, fake) pair serving test-model, and comments to keep.
QByteArray configText(const QList<QPair<QString, const FakeUpstream *>> &providers,
                      const QByteArray &extra = {})
{
    QByteArray text = "# Team gateway: edit with care.\n"
                      "listen: 127.0.0.1:0\n"
                      "probes: {enabled: false} # the fakes count every call\n"
                      "config_file: {debounce: 50ms}\n"
                      "\n"
                      "providers:\n";
    for (const auto &[id, fake] : providers) {
        text += "  # provider " + id.toUtf8() +
                "\n"
                "  - id: " +
                id.toUtf8() +
                "\n"
                "    kind: openai\n"
                "    base_url: " +
                fake->baseUrl() +
                "\n"
                "    models: [test-model]\n";
    }
    return text + extra;
}

bool writeText(const QString &path, const QByteArray &text)
{
    // As an editor saves: a new file renamed over the old one.
    QSaveFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(text) == text.size() && file.commit();
}

QByteArray readText(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

struct Tracked {
    std::unique_ptr<Engine> engine;
    lifecycle::ConfigLifecycle *lifecycle = nullptr;
    quint16 port() const { return engine->port(); }
};

// The engine as the app starts it: the file, with the overlay of `stateDirectory` on top.
Tracked startTracked(const QString &path, const QString &stateDirectory,
                     const config::EnvironmentLookup &environment = environmentOf({}))
{
    Tracked tracked;
    const QString overlay = lifecycle::overlayPathIn(stateDirectory);
    const lifecycle::StartTexts texts = lifecycle::readStartTexts(path, overlay);
    if (!texts.error.isEmpty()) {
        qWarning("%s", qPrintable(texts.error));
        return tracked;
    }
    config::Config config = loadTestConfig(texts.runningText, path, environment);
    config.state.directory = stateDirectory;
    tracked.engine = startEngine(config);
    if (!tracked.engine)
        return tracked;
    tracked.engine->startConfigLifecycle(
        {path, texts.fileText, texts.runningText, overlay, environment, {}});
    tracked.lifecycle = tracked.engine->configLifecycle();
    return tracked;
}

QStringList providerIds(Engine &engine)
{
    QStringList ids;
    for (const config::ProviderConfig &provider : engine.config().providers)
        ids.append(provider.id);
    return ids;
}

} // namespace

class ConfigLifecycleTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void versionsSurviveARestartAndAnUnchangedFileAddsNone();
    void aValidReloadIsAppliedAndAnInvalidOneRefusedWithLocations();
    void validateApplyVersionsAndStatusThroughTheAdminApi();
    void anApplyBasedOnAnOldVersionIsRefused();
    void aFileChangeLandingWhileAnApplyIsWrittenIsOrderedByVersion();
    void aRollbackNeedingAMissingVariableIsRefused();
    void reloadAddsRemovesAndMovesProvidersWhileRequestsFinish();
    void routesAppliedFromTheConsoleAreWrittenBackKeepingComments();
    void anUnwritableFileSendsChangesToTheOverlay();
    void aFileEditThatDoesNotLoadIsNotOverwritten();
    void theBackupKeepsTheFilesPermissions();
    void aFileEditReplacesTheOverlaysCopyOfItsKey();
    void aReadOnlyFileOnDiskSendsChangesToTheOverlay();
    void theConsolesBridgeAddsASimulatedProviderListsAndRollsBack();
};

void ConfigLifecycleTest::versionsSurviveARestartAndAnUnchangedFileAddsNone()
{
    FakeUpstream fake;
    QTemporaryDir dir;
    const QString path = dir.filePath(u"gateway.yaml"_s);
    const QString state = dir.filePath(u"state"_s);
    QVERIFY(writeText(path, configText({{u"alpha"_s, &fake}})));
    {
        Tracked first = startTracked(path, state);
        QVERIFY(first.lifecycle);
        QCOMPARE(first.lifecycle->runningVersion(), 1u);
        const QByteArray changed = configText({{u"alpha"_s, &fake}, {u"beta"_s, &fake}});
        const ConfigChangeResult applied =
            first.lifecycle->apply(changed, {ConfigChangeSource::Api, u"ana"_s, u"add beta"_s});
        QCOMPARE(int(applied.outcome), int(ConfigChangeResult::Outcome::Applied));
        QCOMPARE(applied.version, 2u);
        QCOMPARE(first.lifecycle->status().historyProblem, QString());
    }
    // Restarted on the file the apply wrote: its text is version 2's, so no version is added.
    Tracked second = startTracked(path, state);
    QVERIFY(second.lifecycle);
    QCOMPARE(second.lifecycle->runningVersion(), 2u);
    const QList<ConfigVersionInfo> versions = second.lifecycle->versions();
    QCOMPARE(versions.size(), 2);
    QCOMPARE(versions[0].number, 2u);
    QCOMPARE(versions[0].source, ConfigChangeSource::Api);
    QCOMPARE(versions[0].author, u"ana"_s);
    QCOMPARE(versions[0].note, u"add beta"_s);
    QCOMPARE(versions[1].source, ConfigChangeSource::File);
    const std::optional<ConfigVersion> two = second.lifecycle->version(2);
    QVERIFY(two);
    QCOMPARE(two->text.toUtf8(), readText(path));
    QVERIFY2(two->diff.contains(u"+  - id: beta"_s), qPrintable(two->diff));
    QVERIFY(two->diff.startsWith(u"--- version 1\n+++ version 2\n"_s));
    QCOMPARE(providerIds(*second.engine), QStringList({u"alpha"_s, u"beta"_s}));
}

void ConfigLifecycleTest::aValidReloadIsAppliedAndAnInvalidOneRefusedWithLocations()
{
    FakeUpstream fake;
    QTemporaryDir dir;
    const QString path = dir.filePath(u"gateway.yaml"_s);
    QVERIFY(writeText(path, configText({{u"alpha"_s, &fake}})));
    Tracked tracked = startTracked(path, {});
    QVERIFY(tracked.lifecycle);

    // Valid: picked up by the watcher, applied as version 2.
    QVERIFY(writeText(path, configText({{u"alpha"_s, &fake}, {u"beta"_s, &fake}})));
    QTRY_COMPARE_WITH_TIMEOUT(tracked.lifecycle->runningVersion(), 2u, 10000);
    QCOMPARE(providerIds(*tracked.engine), QStringList({u"alpha"_s, u"beta"_s}));
    QCOMPARE(tracked.lifecycle->versions().constFirst().source, ConfigChangeSource::File);

    // Invalid: an unknown key on line 11, column 5. Refused; version 2 keeps running.
    QByteArray broken = configText({{u"alpha"_s, &fake}});
    broken.replace("    models: [test-model]", "    modles: [test-model]");
    QVERIFY(writeText(path, broken));
    QTRY_VERIFY_WITH_TIMEOUT(!tracked.lifecycle->status().lastReloadErrors.isEmpty(), 10000);
    const ConfigStatus status = tracked.lifecycle->status();
    QCOMPARE(status.runningVersion, 2u);
    QCOMPARE(providerIds(*tracked.engine), QStringList({u"alpha"_s, u"beta"_s}));
    QStringList errors;
    for (const config::ConfigError &error : status.lastReloadErrors)
        errors.append(error.toString());
    QVERIFY2(errors.contains(path + u":11:5: unknown key `modles` (did you mean `models`?)"_s),
             qPrintable(errors.join(u'\n')));
    QVERIFY(!status.fileMatches);
    // The admin API says the same.
    const AdminAnswer answer = admin(tracked.port(), "GET", "config/status");
    QCOMPARE(answer.status, 200);
    QCOMPARE(answer.body.value(u"running_version"_s).toInt(), 2);
    QCOMPARE(answer.body.value(u"file_matches"_s).toBool(), false);
    const QJsonArray listed =
        answer.body.value(u"last_reload_error"_s).toObject().value(u"errors"_s).toArray();
    QVERIFY(!listed.isEmpty());
    bool found = false;
    for (const QJsonValue &error : listed) {
        const QJsonObject object = error.toObject();
        found |= object.value(u"line"_s).toInt() == 11 && object.value(u"column"_s).toInt() == 5 &&
                 object.value(u"file"_s).toString() == path;
    }
    QVERIFY(found);

    // Fixed again: reloaded, and the error is cleared.
    QVERIFY(writeText(path, configText({{u"alpha"_s, &fake}})));
    QTRY_COMPARE_WITH_TIMEOUT(tracked.lifecycle->runningVersion(), 3u, 10000);
    QVERIFY(tracked.lifecycle->status().lastReloadErrors.isEmpty());
    QVERIFY(tracked.lifecycle->status().fileMatches);
}

void ConfigLifecycleTest::validateApplyVersionsAndStatusThroughTheAdminApi()
{
    FakeUpstream fake;
    QTemporaryDir dir;
    const QString path = dir.filePath(u"gateway.yaml"_s);
    const QByteArray original = configText({{u"alpha"_s, &fake}});
    QVERIFY(writeText(path, original));
    Tracked tracked = startTracked(path, {});
    QVERIFY(tracked.lifecycle);

    AdminAnswer answer = admin(tracked.port(), "POST", "config/validate", original);
    QCOMPARE(answer.status, 200);
    QCOMPARE(answer.body, QJsonObject({{u"valid"_s, true}}));
    answer = admin(tracked.port(), "POST", "config/validate", "providers: 7\nlisten: nowhere\n");
    QCOMPARE(answer.status, 422);
    QCOMPARE(answer.body.value(u"valid"_s).toBool(), false);
    const QJsonObject first = answer.body.value(u"errors"_s).toArray().first().toObject();
    QCOMPARE(first.value(u"file"_s).toString(), path);
    QVERIFY(first.value(u"line"_s).toInt() >= 1);
    QVERIFY(first.value(u"column"_s).toInt() >= 1);
    QVERIFY(!first.value(u"message"_s).toString().isEmpty());

    const QByteArray next = configText({{u"alpha"_s, &fake}, {u"beta"_s, &fake}});
    answer = admin(tracked.port(), "POST", "config/apply?note=more%20capacity", next,
                   {{"x-switchyard-author", "ops-bot"}});
    QCOMPARE(answer.status, 200);
    QCOMPARE(answer.body.value(u"version"_s).toInt(), 2);
    QCOMPARE(answer.body.value(u"applied"_s).toBool(), true);
    QCOMPARE(readText(path), next);
    QCOMPARE(readText(path + u".bak"_s), original);
    QCOMPARE(providerIds(*tracked.engine), QStringList({u"alpha"_s, u"beta"_s}));

    answer = admin(tracked.port(), "GET", "config/versions");
    QCOMPARE(answer.status, 200);
    const QJsonArray versions = answer.body.value(u"versions"_s).toArray();
    QCOMPARE(versions.size(), 2);
    QCOMPARE(versions[0].toObject().value(u"number"_s).toInt(), 2);
    QCOMPARE(versions[0].toObject().value(u"source"_s).toString(), u"api"_s);
    QCOMPARE(versions[0].toObject().value(u"author"_s).toString(), u"ops-bot"_s);
    QCOMPARE(versions[0].toObject().value(u"note"_s).toString(), u"more capacity"_s);
    QVERIFY(!versions[0].toObject().contains(u"text"_s));

    answer = admin(tracked.port(), "GET", "config/versions/2");
    QCOMPARE(answer.status, 200);
    QCOMPARE(answer.body.value(u"text"_s).toString().toUtf8(), next);
    QVERIFY(answer.body.value(u"diff"_s).toString().contains(u"+  - id: beta"_s));
    QCOMPARE(admin(tracked.port(), "GET", "config/versions/9").status, 404);
    QCOMPARE(admin(tracked.port(), "GET", "config/versions/x").status, 400);

    // Back to version 1: a new version, source rollback, and the file follows.
    answer = admin(tracked.port(), "POST", "config/rollback/1");
    QCOMPARE(answer.status, 200);
    QCOMPARE(answer.body.value(u"version"_s).toInt(), 3);
    QCOMPARE(readText(path), original);
    QCOMPARE(providerIds(*tracked.engine), QStringList({u"alpha"_s}));
    QCOMPARE(tracked.lifecycle->versions().constFirst().source, ConfigChangeSource::Rollback);
    QCOMPARE(admin(tracked.port(), "POST", "config/rollback/42").status, 404);

    answer = admin(tracked.port(), "GET", "config/status");
    QCOMPARE(answer.body.value(u"running_version"_s).toInt(), 3);
    QCOMPARE(answer.body.value(u"file_matches"_s).toBool(), true);
    QVERIFY(answer.body.value(u"overlay"_s).isNull());
    QVERIFY(answer.body.value(u"last_reload_error"_s).isNull());
    // Switchyard's own writes are not reloads: no version appears after them.
    QTest::qWait(300);
    QCOMPARE(tracked.lifecycle->runningVersion(), 3u);
}

void ConfigLifecycleTest::anApplyBasedOnAnOldVersionIsRefused()
{
    FakeUpstream fake;
    QTemporaryDir dir;
    const QString path = dir.filePath(u"gateway.yaml"_s);
    QVERIFY(writeText(path, configText({{u"alpha"_s, &fake}})));
    Tracked tracked = startTracked(path, {});
    QVERIFY(tracked.lifecycle);

    // Two operators read version 1; one applies, then the other's apply must not undo it.
    AdminAnswer answer = admin(tracked.port(), "POST", "config/apply?base_version=1",
                               configText({{u"alpha"_s, &fake}, {u"beta"_s, &fake}}));
    QCOMPARE(answer.status, 200);
    QCOMPARE(answer.body.value(u"version"_s).toInt(), 2);
    answer = admin(tracked.port(), "POST", "config/apply",
                   configText({{u"alpha"_s, &fake}, {u"gamma"_s, &fake}}),
                   {{"x-switchyard-base-version", "1"}});
    QCOMPARE(answer.status, 409);
    const QJsonObject error = answer.body.value(u"error"_s).toObject();
    QCOMPARE(error.value(u"message"_s).toString(),
             u"config changed since version 1: version 2 is running now"_s);
    QCOMPARE(error.value(u"code"_s).toString(), u"config_conflict"_s);
    QCOMPARE(providerIds(*tracked.engine), QStringList({u"alpha"_s, u"beta"_s}));
    QCOMPARE(admin(tracked.port(), "POST", "config/apply?base_version=zero", "a: 1").status, 400);
}

void ConfigLifecycleTest::aFileChangeLandingWhileAnApplyIsWrittenIsOrderedByVersion()
{
    FakeUpstream fake;
    QTemporaryDir dir;
    const QString path = dir.filePath(u"gateway.yaml"_s);
    QVERIFY(writeText(path, configText({{u"alpha"_s, &fake}})));
    Tracked tracked = startTracked(path, {});
    QVERIFY(tracked.lifecycle);

    // An editor saves the file; before the watcher's debounce has read it, an apply based on
    // version 1 arrives. The file's change is read first and becomes version 2, so the apply
    // is told it is late instead of overwriting the edit.
    const QByteArray edited = configText({{u"alpha"_s, &fake}, {u"edited"_s, &fake}});
    QVERIFY(writeText(path, edited));
    AdminAnswer answer = admin(tracked.port(), "POST", "config/apply?base_version=1",
                               configText({{u"alpha"_s, &fake}, {u"applied"_s, &fake}}));
    QCOMPARE(answer.status, 409);
    QCOMPARE(answer.body.value(u"error"_s).toObject().value(u"message"_s).toString(),
             u"config changed since version 1: version 2 is running now"_s);
    QCOMPARE(tracked.lifecycle->runningVersion(), 2u);
    QCOMPARE(tracked.lifecycle->versions().constFirst().source, ConfigChangeSource::File);
    QCOMPARE(providerIds(*tracked.engine), QStringList({u"alpha"_s, u"edited"_s}));

    // Based on version 2 it applies as version 3 and is written; then the next edit of the
    // file lands after it as version 4. Every change is kept, in the order it took effect.
    answer = admin(tracked.port(), "POST", "config/apply?base_version=2",
                   configText({{u"alpha"_s, &fake}, {u"applied"_s, &fake}}));
    QCOMPARE(answer.status, 200);
    QCOMPARE(answer.body.value(u"version"_s).toInt(), 3);
    QVERIFY(writeText(path, configText({{u"later"_s, &fake}})));
    QTRY_COMPARE_WITH_TIMEOUT(tracked.lifecycle->runningVersion(), 4u, 10000);
    QCOMPARE(providerIds(*tracked.engine), QStringList({u"later"_s}));
    QList<ConfigChangeSource> sources;
    for (const ConfigVersionInfo &version : tracked.lifecycle->versions())
        sources.append(version.source);
    QCOMPARE(sources,
             QList<ConfigChangeSource>({ConfigChangeSource::File, ConfigChangeSource::Api,
                                        ConfigChangeSource::File, ConfigChangeSource::File}));
}

void ConfigLifecycleTest::aRollbackNeedingAMissingVariableIsRefused()
{
    FakeUpstream fake;
    QTemporaryDir dir;
    const QString path = dir.filePath(u"gateway.yaml"_s);
    // Version 1 reads its key from CLOUD_KEY, which is set when it starts...
    QHash<QString, QByteArray> variables{{u"CLOUD_KEY"_s, "sk-test"}};
    const config::EnvironmentLookup environment = [&variables](const QString &name) {
        const auto found = variables.constFind(name);
        return found == variables.cend() ? std::nullopt : std::optional(*found);
    };
    QByteArray withKey = configText({{u"cloud"_s, &fake}});
    withKey.replace("    kind: openai\n", "    kind: openai\n    api_key_env: CLOUD_KEY\n");
    QVERIFY(writeText(path, withKey));
    Tracked tracked = startTracked(path, {}, environment);
    QVERIFY(tracked.lifecycle);
    QCOMPARE(
        admin(tracked.port(), "POST", "config/apply", configText({{u"local"_s, &fake}})).status,
        200);
    // ...and gone by the time someone rolls back to it.
    variables.clear();
    const AdminAnswer answer = admin(tracked.port(), "POST", "config/rollback/1");
    QCOMPARE(answer.status, 422);
    const QString message = answer.body.value(u"error"_s).toObject().value(u"message"_s).toString();
    QCOMPARE(message,
             u"version 1 cannot be applied now: environment variable CLOUD_KEY is not set"_s);
    const QJsonObject located = answer.body.value(u"errors"_s).toArray().first().toObject();
    QCOMPARE(located.value(u"line"_s).toInt(), 10);
    QCOMPARE(tracked.lifecycle->runningVersion(), 2u);
    QCOMPARE(providerIds(*tracked.engine), QStringList({u"local"_s}));
}

void ConfigLifecycleTest::reloadAddsRemovesAndMovesProvidersWhileRequestsFinish()
{
    FakeUpstream first;
    FakeUpstream second;
    QTemporaryDir dir;
    const QString path = dir.filePath(u"gateway.yaml"_s);
    QVERIFY(writeText(path, configText({{u"alpha"_s, &first}})));
    Tracked tracked = startTracked(path, {});
    QVERIFY(tracked.lifecycle);

    // A stream in flight on alpha, held mid-way.
    first.manualStreaming = true;
    TestClient streaming(tracked.port());
    streaming.post("/v1/chat/completions", chatBody("test-model", true));
    QTRY_COMPARE_WITH_TIMEOUT(first.requests().size(), 1, 10000);
    QTRY_VERIFY_WITH_TIMEOUT(streaming.headReceived(), 10000);

    // Reload: alpha removed, beta added at the second fake.
    QVERIFY(writeText(path, configText({{u"beta"_s, &second}})));
    QTRY_COMPARE_WITH_TIMEOUT(tracked.lifecycle->runningVersion(), 2u, 10000);
    QCOMPARE(tracked.engine->health().indexOf(u"alpha"_s), -1);
    QVERIFY(tracked.engine->health().indexOf(u"beta"_s) >= 0);
    TestClient after(tracked.port());
    after.post("/v1/chat/completions", chatBody("test-model", false));
    QVERIFY(after.waitForFinished(10000));
    QCOMPARE(after.status(), 200);
    QCOMPARE(after.header("x-switchyard-provider"), QByteArray("beta"));
    QCOMPARE(second.requests().size(), 1);

    // The removed endpoint's request finishes on the snapshot it started with.
    QVERIFY(!streaming.finished());
    for (int i = 0; i < 20 && !streaming.finished(); ++i) {
        first.releaseEvent();
        QTest::qWait(20);
    }
    QTRY_VERIFY_WITH_TIMEOUT(streaming.finished(), 10000);
    QCOMPARE(streaming.status(), 200);
    QCOMPARE(streaming.header("x-switchyard-provider"), QByteArray("alpha"));
    QVERIFY(streaming.body().contains("data: [DONE]"));

    // Beta's base URL moves to the first fake: the next request goes there, same endpoint.
    const int betaSlot = tracked.engine->health().indexOf(u"beta"_s);
    first.manualStreaming = false;
    QVERIFY(writeText(path, configText({{u"beta"_s, &first}})));
    QTRY_COMPARE_WITH_TIMEOUT(tracked.lifecycle->runningVersion(), 3u, 10000);
    QCOMPARE(tracked.engine->health().indexOf(u"beta"_s), betaSlot);
    TestClient moved(tracked.port());
    moved.post("/v1/chat/completions", chatBody("test-model", false));
    QVERIFY(moved.waitForFinished(10000));
    QCOMPARE(moved.status(), 200);
    QCOMPARE(first.requests().size(), 2);
    QCOMPARE(second.requests().size(), 1);
}

void ConfigLifecycleTest::routesAppliedFromTheConsoleAreWrittenBackKeepingComments()
{
    FakeUpstream fake;
    QTemporaryDir dir;
    const QString path = dir.filePath(u"gateway.yaml"_s);
    const QByteArray original = configText({{u"alpha"_s, &fake}, {u"beta"_s, &fake}},
                                           "\n# Rules, highest priority first.\n"
                                           "routes:\n"
                                           "  # stays on alpha\n"
                                           "  - name: pinned   # the first rule\n"
                                           "    priority: 10\n"
                                           "    when: {field: model, eq: test-model}\n"
                                           "    to: {provider: alpha}\n"
                                           "  # everything else\n"
                                           "  - name: rest\n"
                                           "    priority: 0\n"
                                           "    to: {provider: beta}\n"
                                           "\n# fallbacks come last\n");
    QVERIFY(writeText(path, original));
    Tracked tracked = startTracked(path, {});
    QVERIFY(tracked.lifecycle);

    QList<config::RouteRule> rules = tracked.engine->config().routing.routes;
    QCOMPARE(rules.size(), 2);
    rules[1].priority = 5;
    QCOMPARE(
        tracked.engine->commands().applyRoutes(rules, {ConfigChangeSource::Console, u"lee"_s, {}}),
        QStringList());
    QCOMPARE(tracked.lifecycle->runningVersion(), 2u);
    QCOMPARE(tracked.lifecycle->versions().constFirst().source, ConfigChangeSource::Console);
    QByteArray expected = original;
    expected.replace("  - name: rest\n    priority: 0\n    to: {provider: beta}\n",
                     "  - name: rest\n    priority: 5\n    to: {provider: beta}\n");
    QCOMPARE(readText(path), expected);
    QCOMPARE(tracked.lifecycle->version(2)->text.toUtf8(), expected);
    QVERIFY(tracked.lifecycle->status().fileMatches);

    // The admin API's PUT /admin/v1/routes is versioned the same way, as the API's.
    const QByteArray body = R"({"routes": [{"name": "pinned", "priority": 10,)"
                            R"( "when": {"field": "model", "eq": "test-model"},)"
                            R"( "to": {"provider": "alpha"}},)"
                            R"( {"name": "rest", "priority": 6, "to": {"provider": "beta"}}]})";
    TestClient client(tracked.port());
    client.send("PUT", "/admin/v1/routes", body, {{"x-switchyard-author", "ci"}});
    QVERIFY(client.waitForFinished(10000));
    QCOMPARE(client.status(), 200);
    QCOMPARE(tracked.lifecycle->runningVersion(), 3u);
    QCOMPARE(tracked.lifecycle->versions().constFirst().source, ConfigChangeSource::Api);
    QCOMPARE(tracked.lifecycle->versions().constFirst().author, u"ci"_s);
    expected.replace("    priority: 5\n", "    priority: 6\n");
    QCOMPARE(readText(path), expected);
}

void ConfigLifecycleTest::anUnwritableFileSendsChangesToTheOverlay()
{
    // A config built into the program cannot be written by anyone, root included.
    QTemporaryDir state;
    const QString path = u":/config-tests/read-only.yaml"_s;
    const QByteArray fileText = readText(path);
    QVERIFY(!fileText.isEmpty());
    QByteArray running;
    {
        Tracked tracked = startTracked(path, state.path());
        QVERIFY(tracked.lifecycle);
        QList<config::RouteRule> rules = tracked.engine->config().routing.routes;
        rules[0].priority = 77;
        QCOMPARE(tracked.engine->commands().applyRoutes(rules), QStringList());
        const ConfigStatus status = tracked.lifecycle->status();
        QVERIFY(!status.fileMatches);
        QCOMPARE(status.overlayPath, lifecycle::overlayPathIn(state.path()));
        QCOMPARE(status.overlayKeys, QStringList({u"routes"_s}));
        QVERIFY2(status.difference.contains(u"+    priority: 77"_s), qPrintable(status.difference));
        QVERIFY(QFile::exists(status.overlayPath));
        running = tracked.lifecycle->runningText();
        const AdminAnswer answer = admin(tracked.port(), "GET", "config/status");
        QCOMPARE(answer.body.value(u"file_matches"_s).toBool(), false);
        QCOMPARE(answer.body.value(u"overlay"_s).toString(), status.overlayPath);
    }
    // A restart does not revert it: the overlay is loaded on top of the file.
    Tracked again = startTracked(path, state.path());
    QVERIFY(again.lifecycle);
    QCOMPARE(again.engine->config().routing.routes[0].priority, 77);
    QCOMPARE(again.lifecycle->runningVersion(), 2u);
    QCOMPARE(again.lifecycle->runningText(), running);
    QVERIFY(!again.lifecycle->status().fileMatches);
}

void ConfigLifecycleTest::aFileEditThatDoesNotLoadIsNotOverwritten()
{
    FakeUpstream fake;
    QTemporaryDir dir;
    QTemporaryDir state;
    const QString path = dir.filePath(u"gateway.yaml"_s);
    const QByteArray routes = "routes:\n"
                              "  - name: rest\n"
                              "    priority: 0\n"
                              "    to: {provider: alpha}\n";
    QVERIFY(writeText(path, configText({{u"alpha"_s, &fake}}, routes)));
    Tracked tracked = startTracked(path, state.path());
    QVERIFY(tracked.lifecycle);
    // The operator is half-way through an edit: a typo the reload refuses.
    const QByteArray unfinished = configText({{u"alpha"_s, &fake}}, routes + "probez: 1\n");
    QVERIFY(writeText(path, unfinished));
    QCOMPARE(tracked.lifecycle->reload(u"test"_s).outcome, ConfigChangeResult::Outcome::Invalid);

    QList<config::RouteRule> rules = tracked.engine->config().routing.routes;
    rules[0].priority = 42;
    QCOMPARE(tracked.engine->commands().applyRoutes(rules), QStringList());

    // The change runs and survives a restart through the overlay; the edit stays in the file.
    QCOMPARE(tracked.engine->config().routing.routes[0].priority, 42);
    QCOMPARE(readText(path), unfinished);
    QVERIFY(!QFile::exists(path + u".bak"_s));
    const ConfigStatus status = tracked.lifecycle->status();
    QCOMPARE(status.overlayKeys, QStringList({u"routes"_s}));
    QVERIFY2(status.writeProblem.contains(u"has an edit that does not load; the change went to "
                                          u"the overlay"_s),
             qPrintable(status.writeProblem));
    QVERIFY(readText(status.overlayPath).contains("priority: 42"));
    QVERIFY(!readText(status.overlayPath).contains("probez"));
}

void ConfigLifecycleTest::theBackupKeepsTheFilesPermissions()
{
    // The config may hold secrets: its first backup must not be readable by more than it is.
    FakeUpstream fake;
    QTemporaryDir dir;
    const QString path = dir.filePath(u"gateway.yaml"_s);
    QVERIFY(writeText(path, configText({{u"alpha"_s, &fake}, {u"beta"_s, &fake}})));
    const QFile::Permissions ownerOnly = QFile::ReadOwner | QFile::WriteOwner;
    QVERIFY(QFile::setPermissions(path, ownerOnly));
    QVERIFY(!QFile::exists(path + u".bak"_s));
    Tracked tracked = startTracked(path, {});
    QVERIFY(tracked.lifecycle);

    QCOMPARE(
        admin(tracked.port(), "POST", "config/apply", configText({{u"alpha"_s, &fake}})).status,
        200);

    QCOMPARE(readText(path), configText({{u"alpha"_s, &fake}}));
    QVERIFY(QFile::exists(path + u".bak"_s));
    // Group and others (the flags' two lowest hex digits) may do nothing, as with the file.
    const QFile::Permissions groupAndOthers = QFile::Permissions::fromInt(0x0077);
    QCOMPARE(QFile::permissions(path + u".bak"_s) & groupAndOthers, QFile::Permissions());
    QCOMPARE(QFile::permissions(path + u".bak"_s), QFile::permissions(path));
}

void ConfigLifecycleTest::aFileEditReplacesTheOverlaysCopyOfItsKey()
{
    // A change to `auth` went to the overlay (the file is not written); then the operator removes
    // a leaked key from the file and reloads. The overlay's older `auth` must not bring it back.
    FakeUpstream fake;
    QTemporaryDir dir;
    QTemporaryDir state;
    const QString path = dir.filePath(u"gateway.yaml"_s);
    const auto withKeys = [&](const QStringList &ids) {
        QByteArray keys = "auth:\n  keys:\n";
        for (const QString &id : ids) {
            keys +=
                "    - {id: " + id.toUtf8() + ", tenant: t, key: sha256:" +
                QCryptographicHash::hash("sk-" + id.toUtf8(), QCryptographicHash::Sha256).toHex() +
                "}\n";
        }
        return configText({{u"alpha"_s, &fake}}, keys)
            .replace("config_file: {debounce: 50ms}",
                     "config_file: {debounce: 50ms, write_back: false}");
    };
    const auto keyIds = [](Engine &engine) {
        QStringList ids;
        for (const config::ClientKeyConfig &key : engine.config().auth.keys)
            ids.append(key.id);
        return ids;
    };
    QVERIFY(writeText(path, withKeys({u"ops"_s, u"leaked"_s})));
    Tracked tracked = startTracked(path, state.path());
    QVERIFY(tracked.lifecycle);
    QCOMPARE(
        admin(tracked.port(), "POST", "config/apply", withKeys({u"ops"_s, u"leaked"_s, u"ci"_s}))
            .status,
        200);
    QCOMPARE(tracked.lifecycle->status().overlayKeys, QStringList({u"auth"_s}));
    QCOMPARE(keyIds(*tracked.engine), QStringList({u"ops"_s, u"leaked"_s, u"ci"_s}));

    // An edit elsewhere in the file keeps the overlay's `auth`.
    QVERIFY(writeText(path, withKeys({u"ops"_s, u"leaked"_s}) + "# a note\n"));
    tracked.lifecycle->reload(u"test"_s);
    QCOMPARE(keyIds(*tracked.engine), QStringList({u"ops"_s, u"leaked"_s, u"ci"_s}));
    QVERIFY(tracked.lifecycle->status().overlayNote.isEmpty());

    // The file's own edit of `auth` wins, and the status says the overlay's was dropped.
    QVERIFY(writeText(path, withKeys({u"ops"_s})));
    tracked.lifecycle->reload(u"test"_s);
    QCOMPARE(keyIds(*tracked.engine), QStringList({u"ops"_s}));
    const ConfigStatus status = tracked.lifecycle->status();
    QVERIFY(status.overlayKeys.isEmpty());
    QVERIFY(!QFile::exists(lifecycle::overlayPathIn(state.path())));
    QVERIFY2(status.overlayNote.startsWith(u"auth was edited in "_s),
             qPrintable(status.overlayNote));
    const AdminAnswer answer = admin(tracked.port(), "GET", "config/status");
    QCOMPARE(answer.body.value(u"overlay_note"_s).toString(), status.overlayNote);
}

void ConfigLifecycleTest::aReadOnlyFileOnDiskSendsChangesToTheOverlay()
{
    if (::geteuid() == 0)
        QSKIP("root writes through a read-only mode; the built-in file case above covers root");
    FakeUpstream fake;
    QTemporaryDir dir;
    QTemporaryDir state;
    const QString folder = dir.filePath(u"etc"_s);
    QVERIFY(QDir().mkpath(folder));
    const QString path = folder + u"/gateway.yaml"_s;
    const QByteArray original = configText({{u"alpha"_s, &fake}, {u"beta"_s, &fake}});
    QVERIFY(writeText(path, original));
    QVERIFY(QFile::setPermissions(path, QFile::ReadOwner));
    QVERIFY(QFile::setPermissions(folder, QFile::ReadOwner | QFile::ExeOwner));
    Tracked tracked = startTracked(path, state.path());
    QVERIFY(tracked.lifecycle);
    const QByteArray next = configText({{u"alpha"_s, &fake}});
    QCOMPARE(admin(tracked.port(), "POST", "config/apply", next).status, 200);
    QCOMPARE(readText(path), original);
    const ConfigStatus status = tracked.lifecycle->status();
    QVERIFY(!status.fileMatches);
    QCOMPARE(status.overlayKeys, QStringList({u"providers"_s}));
    QCOMPARE(providerIds(*tracked.engine), QStringList({u"alpha"_s}));
    QFile::setPermissions(folder, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner);
}

void ConfigLifecycleTest::theConsolesBridgeAddsASimulatedProviderListsAndRollsBack()
{
    // The console's path: the engine on its own thread behind EngineHost, following a file.
    QTemporaryDir dir;
    QTemporaryDir state;
    const QString path = dir.filePath(u"gateway.yaml"_s);
    const QByteArray first = "listen: 127.0.0.1:0\n"
                             "probes: {enabled: false}\n"
                             "config_file: {debounce: 50ms}\n"
                             "providers:\n"
                             "  - id: sim-a\n"
                             "    kind: simulated\n"
                             "    models: [model-a]\n"
                             "    simulate: {latency: 1ms, error_rate: 0}\n";
    QVERIFY(writeText(path, first));
    const EngineHost::StartConfigTexts texts = EngineHost::readStartConfig(path, state.path());
    QVERIFY(texts.error.isEmpty());
    config::Config config = loadTestConfig(texts.runningText, path);
    const auto overrides = [directory = state.path()](config::Config &next) {
        next.state.directory = directory;
    };
    overrides(config);
    EngineHost host(config);
    host.followConfigFile(path, texts, overrides);
    QString error;
    QVERIFY2(host.start(&error), qPrintable(error));
    QSignalSpy snapshots(&host, &EngineBridge::snapshotUpdated); // published to a watcher only
    QTRY_COMPARE_WITH_TIMEOUT(host.lastSnapshot().config.runningVersion, 1u, 10000);

    // A reload adds a simulated provider: the simulator starts it, and it answers at once.
    QVERIFY(writeText(path, first + "  - id: sim-b\n"
                                    "    kind: simulated\n"
                                    "    models: [model-b]\n"
                                    "    simulate: {latency: 1ms, error_rate: 0}\n"));
    QTRY_COMPARE_WITH_TIMEOUT(host.lastSnapshot().config.runningVersion, 2u, 10000);
    TestClient client(host.port());
    client.post("/v1/chat/completions", chatBody("model-b", false));
    QVERIFY(client.waitForFinished(10000));
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.header("x-switchyard-provider"), QByteArray("sim-b"));

    QSignalSpy listed(&host, &EngineBridge::configVersionsLoaded);
    host.loadConfigVersions(7);
    QTRY_COMPARE_WITH_TIMEOUT(listed.size(), 1, 10000);
    QCOMPARE(listed[0][0].toULongLong(), 7u);
    const auto versions = listed[0][1].value<QList<ConfigVersionInfo>>();
    QCOMPARE(versions.size(), 2);
    QCOMPARE(versions[0].number, 2u);

    QSignalSpy loaded(&host, &EngineBridge::configVersionLoaded);
    host.loadConfigVersion(8, 1);
    QTRY_COMPARE_WITH_TIMEOUT(loaded.size(), 1, 10000);
    QCOMPARE(loaded[0][1].toBool(), true);
    QCOMPARE(loaded[0][2].value<ConfigVersion>().text.toUtf8(), first);

    QSignalSpy rolledBack(&host, &EngineBridge::configRolledBack);
    host.rollbackConfig(9, 1);
    QTRY_COMPARE_WITH_TIMEOUT(rolledBack.size(), 1, 10000);
    const auto result = rolledBack[0][1].value<ConfigChangeResult>();
    QCOMPARE(int(result.outcome), int(ConfigChangeResult::Outcome::Applied));
    QCOMPARE(result.version, 3u);
    QCOMPARE(readText(path), first);
    QTRY_COMPARE_WITH_TIMEOUT(host.lastSnapshot().config.runningVersion, 3u, 10000);
    QVERIFY(host.lastSnapshot().config.fileMatches);
}

QTEST_GUILESS_MAIN(ConfigLifecycleTest)
#include "tst_config_lifecycle.moc"
