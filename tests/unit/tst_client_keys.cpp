// Client API keys and the admin token below the HTTP server: the `auth` and `tls` config
// sections with their errors, the key checks and per-key limits on a manual clock, and the
// admin token's rule.

#include "auth/client_authenticator.h"
#include "config/config_loader.h"
#include "config_error_lines.h"
#include "telemetry/trace.h"
#include "timing/clock.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

using namespace Qt::StringLiterals;
using namespace switchyard;
using std::chrono::milliseconds;

namespace {

constexpr QByteArrayView kProviders = "providers:\n"
                                      "  - id: local\n"
                                      "    kind: openai\n"
                                      "    base_url: http://127.0.0.1:9/v1\n"
                                      "    models: [gpt-4o, gpt-4o-mini, claude-x]\n";

QByteArray digestText(QByteArrayView key)
{
    return "sha256:" + auth::sha256(key).toHex();
}

config::EnvironmentLookup environmentOf(const QHash<QString, QByteArray> &variables)
{
    return [variables](const QString &name) -> std::optional<QByteArray> {
        if (!variables.contains(name))
            return std::nullopt;
        return variables.value(name);
    };
}

config::LoadResult load(const QByteArray &tail, const QHash<QString, QByteArray> &environment = {})
{
    return config::loadConfigText(kProviders.toByteArray() + tail, u"keys.yaml"_s,
                                  environmentOf(environment));
}

auth::HeaderList bearer(const QByteArray &key)
{
    return {{"Authorization", "Bearer " + key}};
}

} // namespace

class ClientKeysTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void keysLoadFromHashesAndEnvironmentVariables();
    void environmentSecretsAreTrimmedLikePresentedKeys();
    void badKeyEntriesAreReportedWhereTheyAre_data();
    void badKeyEntriesAreReportedWhereTheyAre();
    void tlsFilesAreCheckedWhenTheConfigLoads();
    void modelPatterns_data();
    void modelPatterns();
    void keysArePresentedAsBearerOrXApiKey();
    void digestsCompareWholly();
    void withoutKeysEveryRequestIsOpen();
    void aWrongOrMissingKeyIsRefused();
    void tenantHeaderMayOnlyRepeatTheKeysTenant();
    void requestsPerMinuteRefillOverTheMinute();
    void tokensPerMinuteAreChargedWhenRequestsFinish();
    void modelsOutsideTheKeysListAreRefused();
    void adminTokenRule_data();
    void adminTokenRule();
    void nonLoopbackListenerNeedsAnAdminToken();
};

void ClientKeysTest::keysLoadFromHashesAndEnvironmentVariables()
{
    const config::LoadResult result =
        load("auth:\n"
             "  admin_token: {env: ADMIN_TOKEN}\n"
             "  keys:\n"
             "    - id: team-a\n"
             "      tenant: a\n"
             "      key: " +
                 digestText("sk-a") +
                 "\n"
                 "      requests_per_minute: 60\n"
                 "      tokens_per_minute: 1000\n"
                 "      models: [gpt-4o*]\n"
                 "    - id: team-b\n"
                 "      tenant: b\n"
                 "      key: {env: KEY_B}\n",
             {{u"ADMIN_TOKEN"_s, "admin-secret"}, {u"KEY_B"_s, "sk-b"}});
    QVERIFY2(result.config, qPrintable(errorLines(result).join(u'\n')));
    const config::AuthConfig &auth = result.config->auth;
    QCOMPARE(auth.keys.size(), 2);
    QCOMPARE(auth.keys[0].id, u"team-a"_s);
    QCOMPARE(auth.keys[0].secret.sha256, auth::sha256("sk-a"));
    QCOMPARE(auth.keys[0].limits.requestsPerMinute, 60);
    QCOMPARE(auth.keys[0].limits.tokensPerMinute, 1000);
    QCOMPARE(auth.keys[0].limits.models, QStringList{u"gpt-4o*"_s});
    // An environment variable's secret is held hashed only, its variable named.
    QCOMPARE(auth.keys[1].secret.sha256, auth::sha256("sk-b"));
    QCOMPARE(auth.keys[1].secret.environmentVariable, u"KEY_B"_s);
    QCOMPARE(auth.adminToken.sha256, auth::sha256("admin-secret"));
}

void ClientKeysTest::environmentSecretsAreTrimmedLikePresentedKeys()
{
    // A variable filled from a file (`KEY=$(cat key.txt)` keeps no newline, but an env file or a
    // secret mount may) matches the key as clients send it: both sides are trimmed.
    const config::LoadResult result =
        load("auth:\n"
             "  admin_token: {env: ADMIN_TOKEN}\n"
             "  keys:\n"
             "    - {id: a, tenant: t, key: {env: KEY_A}}\n",
             {{u"ADMIN_TOKEN"_s, " admin-secret\n"}, {u"KEY_A"_s, "sk-a\n"}});
    QVERIFY2(result.config, qPrintable(errorLines(result).join(u'\n')));
    QCOMPARE(result.config->auth.keys[0].secret.sha256, auth::sha256("sk-a"));
    QCOMPARE(result.config->auth.adminToken.sha256, auth::sha256("admin-secret"));
    config::ConfigStore store(*result.config);
    auth::ApiKeyStore apiKeys({});
    QCOMPARE(apiKeys.open(), QString());
    auth::ClientAuthenticator authenticator(store, apiKeys);
    const auto verdict = authenticator.authenticate(store.config(), bearer("sk-a"));
    QVERIFY(!verdict.refusal);
    QCOMPARE(verdict.key->id, u"a"_s);
}

void ClientKeysTest::badKeyEntriesAreReportedWhereTheyAre_data()
{
    QTest::addColumn<QByteArray>("auth");
    QTest::addColumn<QString>("error");

    const QByteArray digest = digestText("sk-a");
    QTest::newRow("key in clear")
        << QByteArray("auth:\n  keys:\n    - {id: a, tenant: t, key: sk-live-123}\n")
        << u"keys.yaml:8:31: `key` is not a hash; its text must never be written in the file: "
           u"write `key` as `sha256:<64 hex digits>` (the SHA-256 of its text, e.g. from "
           u"`printf %s \"$KEY\" | sha256sum`) or as `{env: NAME}`"_s;
    QTest::newRow("short hash")
        << QByteArray("auth:\n  keys:\n    - {id: a, tenant: t, key: 'sha256:abc'}\n")
        << u"keys.yaml:8:31: `key` has 3 character(s) after `sha256:`; write `key` as "
           u"`sha256:<64 hex digits>` (the SHA-256 of its text, e.g. from `printf %s \"$KEY\" | "
           u"sha256sum`) or as `{env: NAME}`"_s;
    QTest::newRow("unset variable")
        << QByteArray("auth:\n  keys:\n    - {id: a, tenant: t, key: {env: NOT_SET}}\n")
        << u"keys.yaml:8:37: environment variable NOT_SET is not set"_s;
    QTest::newRow("missing tenant")
        << QByteArray("auth:\n  keys:\n    - {id: a, key: " + digest + "}\n")
        << u"keys.yaml:8:7: key is missing required key `tenant`"_s;
    QTest::newRow("bad id") << QByteArray("auth:\n  keys:\n    - {id: 'a b', tenant: t, key: " +
                                          digest + "}\n")
                            << u"keys.yaml:8:12: key `id` must be 1 to 64 letters, digits, `.`, "
                               u"`_` or `-`, starting with a letter or digit; got \"a b\""_s;
    QTest::newRow("id twice") << QByteArray(
                                     "auth:\n  keys:\n    - {id: a, tenant: t, key: " + digest +
                                     "}\n    - {id: a, tenant: u, key: " + digestText("other") +
                                     "}\n")
                              << u"keys.yaml:9:12: key id `a` is used twice; the first is on "
                                 u"line 8"_s;
    QTest::newRow("secret twice") << QByteArray(
                                         "auth:\n  keys:\n    - {id: a, tenant: t, key: " + digest +
                                         "}\n    - {id: b, tenant: u, key: " + digest + "}\n")
                                  << u"keys.yaml:9:31: key `b` has the same secret as key `a`; "
                                     u"each key needs its own"_s;
    QTest::newRow("unknown field")
        << QByteArray("auth:\n  keys:\n    - {id: a, tenant: t, key: " + digest + ", budget: 5}\n")
        << u"keys.yaml:8:104: unknown key `budget`"_s;
    QTest::newRow("negative rpm")
        << QByteArray("auth:\n  keys:\n    - {id: a, tenant: t, key: " + digest +
                      ", requests_per_minute: -1}\n")
        << u"keys.yaml:8:125: `requests_per_minute` must be at least 0, got \"-1\""_s;
    QTest::newRow("admin token in clear")
        << QByteArray("auth:\n  admin_token: hunter2\n")
        << u"keys.yaml:7:16: `admin_token` is not a hash; its text must never be written in the "
           u"file: write `admin_token` as `sha256:<64 hex digits>` (the SHA-256 of its text, "
           u"e.g. from `printf %s \"$KEY\" | sha256sum`) or as `{env: NAME}`"_s;
}

void ClientKeysTest::badKeyEntriesAreReportedWhereTheyAre()
{
    QFETCH(QByteArray, auth);
    QFETCH(QString, error);

    const config::LoadResult result = load(auth);

    QVERIFY(!result.config);
    QVERIFY2(errorLines(result).contains(error), qPrintable(errorLines(result).join(u'\n')));
    // The secret written in clear is never repeated back.
    QVERIFY(!errorLines(result).join(u'\n').contains(u"sk-live-123"_s));
    QVERIFY(!errorLines(result).join(u'\n').contains(u"hunter2"_s));
}

void ClientKeysTest::tlsFilesAreCheckedWhenTheConfigLoads()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QFile notPem(dir.filePath(u"not.pem"_s));
    QVERIFY(notPem.open(QIODevice::WriteOnly));
    notPem.write("hello\n");
    notPem.close();
    const QByteArray missing = dir.filePath(u"missing.pem"_s).toUtf8();
    const QByteArray garbage = notPem.fileName().toUtf8();

    const config::LoadResult result =
        load("tls:\n  certificate_file: " + missing + "\n  key_file: " + garbage + "\n");

    QVERIFY(!result.config);
    QCOMPARE(errorLines(result),
             (QStringList{u"keys.yaml:7:21: `certificate_file`: %1 does not exist"_s.arg(
                              QString::fromUtf8(missing)),
                          u"keys.yaml:8:13: `key_file`: %1 holds no unencrypted PEM private key "
                          u"(RSA, EC or DSA)"_s.arg(QString::fromUtf8(garbage))}));

    const config::LoadResult half = load("tls:\n  certificate_file: " + missing + "\n");
    QVERIFY(errorLines(half).contains(u"keys.yaml:7:3: tls is missing required key `key_file`"_s));
}

void ClientKeysTest::modelPatterns_data()
{
    QTest::addColumn<QStringList>("patterns");
    QTest::addColumn<QString>("model");
    QTest::addColumn<bool>("allowed");

    QTest::newRow("no list: all") << QStringList{} << u"anything"_s << true;
    QTest::newRow("exact") << QStringList{u"gpt-4o"_s} << u"gpt-4o"_s << true;
    QTest::newRow("exact is not a prefix") << QStringList{u"gpt-4o"_s} << u"gpt-4o-mini"_s << false;
    QTest::newRow("star") << QStringList{u"gpt-4o*"_s} << u"gpt-4o-mini"_s << true;
    QTest::newRow("star matches nothing") << QStringList{u"gpt-4o*"_s} << u"gpt-4o"_s << true;
    QTest::newRow("star in the middle") << QStringList{u"a*z"_s} << u"abcz"_s << true;
    QTest::newRow("question mark") << QStringList{u"gpt-?"_s} << u"gpt-4"_s << true;
    QTest::newRow("question mark is one") << QStringList{u"gpt-?"_s} << u"gpt-40"_s << false;
    QTest::newRow("second pattern") << QStringList{u"x"_s, u"claude-*"_s} << u"claude-x"_s << true;
    QTest::newRow("case matters") << QStringList{u"GPT-4o"_s} << u"gpt-4o"_s << false;
}

void ClientKeysTest::modelPatterns()
{
    QFETCH(QStringList, patterns);
    QFETCH(QString, model);
    QFETCH(bool, allowed);
    config::ClientKeyLimits limits;
    limits.models = patterns;
    QCOMPARE(limits.allowsModel(model), allowed);
}

void ClientKeysTest::keysArePresentedAsBearerOrXApiKey()
{
    QCOMPARE(auth::presentedKey({{"authorization", "Bearer sk-1"}}), QByteArray("sk-1"));
    QCOMPARE(auth::presentedKey({{"Authorization", "bearer  sk-1 "}}), QByteArray("sk-1"));
    QCOMPARE(auth::presentedKey({{"X-Api-Key", "sk-2"}}), QByteArray("sk-2"));
    QCOMPARE(auth::presentedKey({{"Authorization", "Basic abc"}}), QByteArray());
    QCOMPARE(auth::presentedKey({}), QByteArray());
    const QByteArray made = auth::newKeyText();
    QVERIFY(made.startsWith("sk-sy-"));
    QCOMPARE(made.size(), 6 + 43); // 32 bytes of base64url, unpadded
    QVERIFY(made != auth::newKeyText());
}

void ClientKeysTest::digestsCompareWholly()
{
    const QByteArray digest = auth::sha256("sk-a");
    QVERIFY(auth::digestsEqual(digest, auth::sha256("sk-a")));
    QByteArray lastByteDiffers = digest;
    lastByteDiffers[31] = char(lastByteDiffers[31] ^ 1);
    QVERIFY(!auth::digestsEqual(digest, lastByteDiffers));
    QVERIFY(!auth::digestsEqual(digest, digest.left(31)));
}

void ClientKeysTest::withoutKeysEveryRequestIsOpen()
{
    const config::LoadResult result = load({});
    QVERIFY(result.config);
    config::ConfigStore store(*result.config);
    auth::ApiKeyStore apiKeys({});
    QCOMPARE(apiKeys.open(), QString());
    auth::ClientAuthenticator authenticator(store, apiKeys);

    const auto verdict = authenticator.authenticate(store.config(), {});
    QVERIFY(!verdict.key);
    QVERIFY(!verdict.refusal);
}

void ClientKeysTest::aWrongOrMissingKeyIsRefused()
{
    const config::LoadResult result =
        load("auth:\n  keys:\n    - {id: a, tenant: t, key: " + digestText("sk-a") + "}\n");
    QVERIFY(result.config);
    config::ConfigStore store(*result.config);
    auth::ApiKeyStore apiKeys({});
    QCOMPARE(apiKeys.open(), QString());
    auth::ClientAuthenticator authenticator(store, apiKeys);

    const auto missing = authenticator.authenticate(store.config(), {});
    QVERIFY(missing.refusal);
    QCOMPARE(missing.refusal->status, 401);
    QCOMPARE(missing.refusal->code, u"missing_api_key"_s);
    const auto wrong = authenticator.authenticate(store.config(), bearer("sk-b"));
    QVERIFY(wrong.refusal);
    QCOMPARE(wrong.refusal->code, u"invalid_api_key"_s);
    const auto right = authenticator.authenticate(store.config(), bearer("sk-a"));
    QVERIFY(!right.refusal);
    QCOMPARE(right.key->id, u"a"_s);
    QCOMPARE(right.key->tenant, u"t"_s);
}

void ClientKeysTest::tenantHeaderMayOnlyRepeatTheKeysTenant()
{
    auth::ClientKey key;
    key.id = u"a"_s;
    key.tenant = u"team-a"_s;
    QVERIFY(!auth::ClientAuthenticator::tenantRefusal(key, {}));
    QVERIFY(!auth::ClientAuthenticator::tenantRefusal(key, {{"x-switchyard-tenant", "team-a"}}));
    const auto other =
        auth::ClientAuthenticator::tenantRefusal(key, {{"X-Switchyard-Tenant", "team-b"}});
    QVERIFY(other);
    QCOMPARE(other->status, 403);
    QCOMPARE(other->code, u"tenant_mismatch"_s);
    QCOMPARE(other->param, u"x-switchyard-tenant"_s);
}

void ClientKeysTest::requestsPerMinuteRefillOverTheMinute()
{
    const config::LoadResult result = load({});
    config::ConfigStore store(*result.config);
    auth::ApiKeyStore apiKeys({});
    timing::ManualClock clock;
    auth::ClientAuthenticator authenticator(store, apiKeys, clock);
    auth::ClientKey key;
    key.id = u"a"_s;
    key.limits.requestsPerMinute = 2;

    // A check takes nothing: only the requests that pass every check are taken.
    QVERIFY(!authenticator.admit(key, u"gpt-4o"_s));
    QVERIFY(!authenticator.admit(key, u"gpt-4o"_s));
    QVERIFY(!authenticator.admit(key, u"gpt-4o"_s));
    authenticator.takeRequest(key);
    QVERIFY(!authenticator.admit(key, u"gpt-4o"_s));
    authenticator.takeRequest(key);
    const auto third = authenticator.admit(key, u"gpt-4o"_s);
    QVERIFY(third);
    QCOMPARE(third->status, 429);
    QCOMPARE(third->code, u"key_requests_per_minute_exceeded"_s);
    QCOMPARE(third->retryAfter, QByteArray("30")); // one request every 30 s
    QCOMPARE(third->message, u"API key `a` has sent its 2 requests per minute "
                             u"(`requests_per_minute`); retry in 30 s."_s);
    clock.advance(milliseconds(29'000));
    QVERIFY(authenticator.admit(key, u"gpt-4o"_s));
    clock.advance(milliseconds(1'000));
    QVERIFY(!authenticator.admit(key, u"gpt-4o"_s));
}

void ClientKeysTest::tokensPerMinuteAreChargedWhenRequestsFinish()
{
    const config::LoadResult result =
        load("auth:\n  keys:\n    - {id: a, tenant: t, tokens_per_minute: 600, key: " +
             digestText("sk-a") + "}\n");
    QVERIFY(result.config);
    config::ConfigStore store(*result.config);
    auth::ApiKeyStore apiKeys({});
    timing::ManualClock clock;
    auth::ClientAuthenticator authenticator(store, apiKeys, clock);
    const auth::ClientKey key = *authenticator.authenticate(store.config(), bearer("sk-a")).key;

    QVERIFY(!authenticator.admit(key, u"gpt-4o"_s));
    telemetry::Trace finished;
    finished.keyId = u"a"_s;
    finished.inputTokens = 500;
    finished.outputTokens = 160; // 60 over the allowance
    authenticator.traceFinished(finished);

    const auto over = authenticator.admit(key, u"gpt-4o"_s);
    QVERIFY(over);
    QCOMPARE(over->status, 429);
    QCOMPARE(over->code, u"key_tokens_per_minute_exceeded"_s);
    // 61 tokens to win back at 10 a second.
    QCOMPARE(over->retryAfter, QByteArray("7"));
    clock.advance(milliseconds(6'000));
    QVERIFY(authenticator.admit(key, u"gpt-4o"_s));
    clock.advance(milliseconds(100));
    QVERIFY(!authenticator.admit(key, u"gpt-4o"_s));

    // Another key's tokens, or a request without usage, charge nothing.
    finished.keyId = u"b"_s;
    authenticator.traceFinished(finished);
    QVERIFY(!authenticator.admit(key, u"gpt-4o"_s));
}

void ClientKeysTest::modelsOutsideTheKeysListAreRefused()
{
    const config::LoadResult result = load({});
    config::ConfigStore store(*result.config);
    auth::ApiKeyStore apiKeys({});
    timing::ManualClock clock;
    auth::ClientAuthenticator authenticator(store, apiKeys, clock);
    auth::ClientKey key;
    key.id = u"a"_s;
    key.limits.requestsPerMinute = 1;
    key.limits.models = {u"gpt-4o*"_s};

    const auto refused = authenticator.admit(key, u"claude-x"_s);
    QVERIFY(refused);
    QCOMPARE(refused->status, 403);
    QCOMPARE(refused->code, u"model_not_allowed"_s);
    QCOMPARE(refused->message, u"API key `a` may not use model `claude-x`; it may use: gpt-4o*."_s);
    // The refusal took nothing from the key's request allowance.
    QVERIFY(!authenticator.admit(key, u"gpt-4o-mini"_s));
}

void ClientKeysTest::adminTokenRule_data()
{
    QTest::addColumn<bool>("tokenConfigured");
    QTest::addColumn<QString>("client");
    QTest::addColumn<QByteArray>("authorization");
    QTest::addColumn<int>("status"); // 0: answered
    QTest::addColumn<QString>("code");

    QTest::newRow("no token, loopback")
        << false << u"127.0.0.1"_s << QByteArray() << 0 << QString();
    QTest::newRow("no token, ::1") << false << u"::1"_s << QByteArray() << 0 << QString();
    QTest::newRow("no token, remote")
        << false << u"192.0.2.7"_s << QByteArray() << 403 << u"admin_loopback_only"_s;
    QTest::newRow("token, loopback without it")
        << true << u"127.0.0.1"_s << QByteArray() << 401 << u"admin_token_required"_s;
    QTest::newRow("token, remote with it")
        << true << u"192.0.2.7"_s << QByteArray("Bearer admin-secret") << 0 << QString();
    QTest::newRow("token, remote with a wrong one")
        << true << u"192.0.2.7"_s << QByteArray("Bearer admin-secreT") << 401
        << u"invalid_admin_token"_s;
    QTest::newRow("token, remote with x-api-key only")
        << true << u"192.0.2.7"_s << QByteArray() << 401 << u"admin_token_required"_s;
}

void ClientKeysTest::adminTokenRule()
{
    QFETCH(bool, tokenConfigured);
    QFETCH(QString, client);
    QFETCH(QByteArray, authorization);
    QFETCH(int, status);
    QFETCH(QString, code);
    config::AuthConfig auth;
    if (tokenConfigured)
        auth.adminToken.sha256 = auth::sha256("admin-secret");
    auth::HeaderList headers{{"x-api-key", "admin-secret"}};
    if (!authorization.isEmpty())
        headers.append({"Authorization", authorization});

    const auto refusal =
        auth::adminRefusal(auth, QHostAddress(client), headers, auth::AdminSurface::AdminApi);

    QCOMPARE(refusal ? refusal->status : 0, status);
    QCOMPARE(refusal ? refusal->code : QString(), code);
    const auto metrics =
        auth::adminRefusal(auth, QHostAddress(client), headers, auth::AdminSurface::Metrics);
    QCOMPARE(metrics ? metrics->status : 0, status);
    QCOMPARE(metrics ? metrics->code : QString(),
             QString(code).replace(u"admin_loopback_only"_s, u"metrics_loopback_only"_s));
}

void ClientKeysTest::nonLoopbackListenerNeedsAnAdminToken()
{
    config::Config config;
    config.server.listenHost = u"127.0.0.1"_s;
    QCOMPARE(auth::exposureProblem(config), QString());
    QVERIFY(!auth::exposedWithoutTls(config));
    config.server.listenHost = u"localhost"_s;
    QCOMPARE(auth::exposureProblem(config), QString());
    config.server.listenHost = u"0.0.0.0"_s;
    config.server.listenPort = 8080;
    QVERIFY(auth::exposureProblem(config).startsWith(
        u"refusing to listen on 0.0.0.0:8080: it is reachable from other machines"_s));
    QVERIFY(auth::exposedWithoutTls(config));
    config.auth.adminToken.sha256 = auth::sha256("admin-secret");
    QCOMPARE(auth::exposureProblem(config), QString());
    config.tls.certificateFile = u"/cert.pem"_s;
    QVERIFY(!auth::exposedWithoutTls(config));
}

QTEST_GUILESS_MAIN(ClientKeysTest)
#include "tst_client_keys.moc"
