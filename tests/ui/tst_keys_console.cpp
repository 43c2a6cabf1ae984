// The Keys page on a real engine: a key issued through the dialog (its text shown once), its
// limits edited, and revoked after a confirmation, each checked where it matters, in the
// gateway's answers to requests with the key; refusals shown in the dialog in the admin API's
// words. The dialogs and the confirmation are driven as a user would, by their buttons.
#include "auth/credentials.h"
#include "bridge/engine_host.h"
#include "config/config_loader.h"
#include "screenshots.h"
#include "test_client.h"
#include "ui/keys/issue_key_dialog.h"
#include "ui/keys/key_limits_dialog.h"
#include "ui/keys/keys_model.h"
#include "ui/keys/keys_page.h"
#include "ui/shell/main_window.h"

#include <QApplication>
#include <QClipboard>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPainter>
#include <QPointer>
#include <QPushButton>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <memory>

using namespace Qt::StringLiterals;
using namespace switchyard;
using switchyard::ui::IssueKeyDialog;
using switchyard::ui::KeyLimitsDialog;
using switchyard::ui::KeysModel;
using switchyard::ui::MainWindow;

namespace {

// Generous: the first requests need the simulator and the gateway warmed up on a busy machine.
constexpr int kEngineTimeoutMs = 30000;

config::ClientKeyConfig fileKey(const QString &id, const QString &tenant, int requestsPerMinute)
{
    config::ClientKeyConfig key;
    key.id = id;
    key.tenant = tenant;
    key.secret.sha256 = auth::sha256("sk-file-" + id.toUtf8());
    key.limits.requestsPerMinute = requestsPerMinute;
    key.limits.models = {u"demo-*"_s};
    return key;
}

// The key as the engine's last snapshot lists it.
std::optional<ClientKeyListing> listed(const EngineBridge &bridge, const QString &id)
{
    for (const ClientKeyListing &key : bridge.lastSnapshot().clientKeys) {
        if (key.id == id)
            return key;
    }
    return std::nullopt;
}

// The gateway's status for one chat request with `key`.
int chatStatus(quint16 port, const QByteArray &key, QByteArray *body = nullptr)
{
    switchyard::testing::TestClient client(port);
    client.post("/v1/chat/completions",
                R"({"model":"demo-chat","messages":[{"role":"user","content":"hi"}]})",
                {{"Authorization", "Bearer " + key}});
    if (!client.waitForFinished(kEngineTimeoutMs))
        return 0;
    if (body)
        *body = client.body();
    return client.status();
}

QString errorCode(const QByteArray &body)
{
    return QJsonDocument::fromJson(body)
        .object()
        .value(u"error"_s)
        .toObject()
        .value(u"code"_s)
        .toString();
}

template <typename Widget>
Widget *child(const QObject *parent, const QString &name)
{
    return parent->findChild<Widget *>(name);
}

} // namespace

class KeysConsoleTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void init();
    void cleanup();
    void aKeyIssuedThroughTheDialogShowsItsTextOnceAndServes();
    void aRefusalIsShownInTheDialogInTheAdminApisWords();
    void editedLimitsArePrefilledAndInForceForTheNextRequest();
    void anEditOfAKeyRevokedMeanwhileSaysSoInTheDialog();
    void revokingAsksFirstAndTheKeyIsRefusedAfter();
    void fileKeysOfferNeitherEditNorRevoke();

private:
    // Opens the Issue dialog from the page and fills it in; the dialog, its text not yet sent.
    IssueKeyDialog *fillIssueDialog(const QString &tenant, const QString &id,
                                    const QString &models);
    // Issues a key through the dialog and closes it; its text.
    QByteArray issueThroughDialog(const QString &tenant, const QString &id);

    std::unique_ptr<EngineHost> m_bridge;
    std::unique_ptr<MainWindow> m_window;
    QTemporaryDir m_scratch;
};

void KeysConsoleTest::initTestCase()
{
    QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
    const QString source = qEnvironmentVariable("SWITCHYARD_SOURCE_DIR");
    QVERIFY2(!source.isEmpty(), "SWITCHYARD_SOURCE_DIR must name the source tree");
    const config::LoadResult loaded =
        config::loadConfigFile(source + u"/resources/demo.yaml"_s, config::processEnvironment());
    QVERIFY(loaded.ok());
    config::Config demo = *loaded.config;
    demo.server.listenPort = 0;
    demo.resilience.probes.enabled = false;
    // Two keys from the file, as a team would start: the API's keys are listed after them.
    demo.auth.keys = {fileKey(u"team-a"_s, u"team-a"_s, 600), fileKey(u"ci"_s, u"ci"_s, 0)};
    m_bridge = std::make_unique<EngineHost>(demo);
    QString error;
    QVERIFY2(m_bridge->start(&error), qPrintable(error));
}

void KeysConsoleTest::cleanupTestCase()
{
    m_bridge.reset();
}

void KeysConsoleTest::init()
{
    m_window = std::make_unique<MainWindow>(*m_bridge);
    m_window->resize(1280, 900);
    auto *tabs = child<QTabWidget>(m_window.get(), u"consoleTabs"_s);
    QVERIFY(tabs);
    tabs->setCurrentWidget(m_window->keysPage());
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    QTRY_VERIFY_WITH_TIMEOUT(m_window->keysPage()->model()->rowCount() >= 2, kEngineTimeoutMs);
}

void KeysConsoleTest::cleanup()
{
    m_window.reset();
}

IssueKeyDialog *KeysConsoleTest::fillIssueDialog(const QString &tenant, const QString &id,
                                                 const QString &models)
{
    ui::KeysPage *page = m_window->keysPage();
    auto *issue = child<QPushButton>(page, u"issueKeyAction"_s);
    if (!issue || !issue->isEnabled())
        return nullptr;
    issue->click();
    auto *dialog = page->findChild<IssueKeyDialog *>();
    if (!dialog || !dialog->isVisible())
        return nullptr;
    child<QLineEdit>(dialog, u"issueTenantField"_s)->setText(tenant);
    child<QLineEdit>(dialog, u"issueIdField"_s)->setText(id);
    child<QLineEdit>(dialog, u"keyModelsField"_s)->setText(models);
    return dialog;
}

QByteArray KeysConsoleTest::issueThroughDialog(const QString &tenant, const QString &id)
{
    IssueKeyDialog *dialog = fillIssueDialog(tenant, id, {});
    if (!dialog)
        return {};
    QPointer<IssueKeyDialog> guard(dialog);
    child<QPushButton>(dialog, u"issueKeyButton"_s)->click();
    auto *secret = child<QLineEdit>(dialog, u"issuedSecretField"_s);
    if (!QTest::qWaitFor([&] { return secret->isVisible(); }, kEngineTimeoutMs))
        return {};
    const QByteArray text = secret->text().toLatin1();
    child<QPushButton>(dialog, u"issuedDoneButton"_s)->click();
    if (!QTest::qWaitFor([&] { return guard.isNull(); }, kEngineTimeoutMs))
        return {};
    if (!QTest::qWaitFor([&] { return listed(*m_bridge, id).has_value(); }, kEngineTimeoutMs))
        return {};
    return text;
}

void KeysConsoleTest::aKeyIssuedThroughTheDialogShowsItsTextOnceAndServes()
{
    ui::KeysPage *page = m_window->keysPage();
    IssueKeyDialog *dialog = fillIssueDialog(u""_s, u"support-bot"_s, u"demo-chat, demo-l*"_s);
    QVERIFY(dialog);
    QPointer<IssueKeyDialog> guard(dialog);
    auto *issue = child<QPushButton>(dialog, u"issueKeyButton"_s);
    QVERIFY(!issue->isEnabled()); // the tenant is required
    child<QLineEdit>(dialog, u"issueTenantField"_s)->setText(u"support"_s);
    child<QSpinBox>(dialog, u"keyRequestsField"_s)->setValue(120);
    QVERIFY(issue->isEnabled());

    issue->click();

    auto *secret = child<QLineEdit>(dialog, u"issuedSecretField"_s);
    QVERIFY(secret);
    QTRY_VERIFY_WITH_TIMEOUT(secret->isVisible(), kEngineTimeoutMs);
    QVERIFY(secret->isReadOnly());
    const QByteArray text = secret->text().toLatin1();
    QVERIFY2(text.startsWith("sk-sy-"), text.constData());
    QCOMPARE(child<QLabel>(dialog, u"issuedKeyTitle"_s)->text(),
             u"Key support-bot issued for tenant support"_s);
    auto *note = child<QLabel>(dialog, u"issuedSecretNote"_s);
    QVERIFY(note->isVisible());
    QVERIFY2(note->text().startsWith(u"This is the only time the key is shown"_s),
             qPrintable(note->text()));
    child<QPushButton>(dialog, u"copySecretButton"_s)->click();
    QCOMPARE(QApplication::clipboard()->text(), QString::fromLatin1(text));

    // The engine holds it, with what the dialog said, and serves requests with it.
    QTRY_VERIFY_WITH_TIMEOUT(listed(*m_bridge, u"support-bot"_s).has_value(), kEngineTimeoutMs);
    const ClientKeyListing key = *listed(*m_bridge, u"support-bot"_s);
    QCOMPARE(key.tenant, u"support"_s);
    QVERIFY(!key.definedInFile);
    QCOMPARE(key.requestsPerMinute, 120);
    QCOMPARE(key.tokensPerMinute, 0);
    QCOMPARE(key.models, (QStringList{u"demo-chat"_s, u"demo-l*"_s}));
    QCOMPARE(chatStatus(m_bridge->port(), text), 200);
    // The page lists it from the snapshot and selects it.
    auto *table = child<QTableView>(page, u"keysTable"_s);
    QTRY_COMPARE(table->selectionModel()->selectedRows().size(), 1);
    QCOMPARE(table->selectionModel()->selectedRows().first().data().toString(), u"support-bot"_s);
    QCOMPARE(child<QLabel>(page, u"keysStatus"_s)->text(), u"Key support-bot issued."_s);

    QPixmap shot = m_window->grab();
    QCOMPARE(shot.size(), QSize(1280, 900));
    {
        // The dialog over the window, where a desktop would put it: the picture a user sees.
        const QPixmap over = dialog->grab();
        QPainter painter(&shot);
        const QPoint at((shot.width() - over.width()) / 2, (shot.height() - over.height()) / 3);
        painter.fillRect(QRect(at, over.size()).adjusted(-1, -1, 1, 1), QColor(0x9c, 0xa3, 0xaf));
        painter.drawPixmap(at, over);
    }
    QVERIFY(
        shot.save(switchyard::testing::screenshotPath(m_scratch.path(), u"console_keys.png"_s)));

    // Shown once: closing the dialog deletes it and its copy of the text.
    child<QPushButton>(dialog, u"issuedDoneButton"_s)->click();
    QTRY_VERIFY(guard.isNull());
    QVERIFY(!page->findChild<IssueKeyDialog *>());
}

void KeysConsoleTest::aRefusalIsShownInTheDialogInTheAdminApisWords()
{
    IssueKeyDialog *dialog = fillIssueDialog(u"someone"_s, u"team-a"_s, {});
    QVERIFY(dialog);
    auto *error = child<QLabel>(dialog, u"issueKeyError"_s);
    QVERIFY(!error->isVisible());

    child<QPushButton>(dialog, u"issueKeyButton"_s)->click();

    QTRY_VERIFY_WITH_TIMEOUT(error->isVisible(), kEngineTimeoutMs);
    // POST /admin/v1/keys {"tenant":"someone","id":"team-a"} says the same (tst_gateway_keys).
    QCOMPARE(error->text(),
             u"A key with id `team-a` already exists (in the config file); choose another id."_s);
    QVERIFY(!child<QLineEdit>(dialog, u"issuedSecretField"_s)->isVisible());
    // The form stays, to be corrected.
    QVERIFY(child<QLineEdit>(dialog, u"issueIdField"_s)->isEnabled());
    QVERIFY(child<QPushButton>(dialog, u"issueKeyButton"_s)->isEnabled());
    QCOMPARE(listed(*m_bridge, u"team-a"_s)->tenant, u"team-a"_s);
    dialog->reject();
}

void KeysConsoleTest::editedLimitsArePrefilledAndInForceForTheNextRequest()
{
    const QByteArray text = issueThroughDialog(u"batch"_s, u"batch-bot"_s);
    QVERIFY(!text.isEmpty());
    ui::KeysPage *page = m_window->keysPage();
    QVERIFY(page->selectKey(u"batch-bot"_s));
    auto *edit = child<QPushButton>(page, u"editKeyLimitsAction"_s);
    QVERIFY(edit->isEnabled());
    QCOMPARE(chatStatus(m_bridge->port(), text), 200);
    QCOMPARE(chatStatus(m_bridge->port(), text), 200); // no limit yet

    edit->click();
    auto *dialog = page->findChild<KeyLimitsDialog *>();
    QVERIFY(dialog && dialog->isVisible());
    QPointer<KeyLimitsDialog> guard(dialog);
    auto *requests = child<QSpinBox>(dialog, u"keyRequestsField"_s);
    auto *tokens = child<QSpinBox>(dialog, u"keyTokensField"_s);
    auto *models = child<QLineEdit>(dialog, u"keyModelsField"_s);
    QCOMPARE(requests->value(), 0);
    QCOMPARE(requests->text(), u"no limit"_s);
    QCOMPARE(models->text(), QString());
    requests->setValue(1);
    tokens->setValue(50000);
    models->setText(u"demo-chat"_s);
    child<QPushButton>(dialog, u"saveKeyLimitsButton"_s)->click();

    QTRY_VERIFY_WITH_TIMEOUT(guard.isNull(), kEngineTimeoutMs); // closed once the engine took it
    QTRY_COMPARE_WITH_TIMEOUT(listed(*m_bridge, u"batch-bot"_s)->requestsPerMinute, 1,
                              kEngineTimeoutMs);
    QCOMPARE(listed(*m_bridge, u"batch-bot"_s)->tokensPerMinute, 50000);
    QCOMPARE(listed(*m_bridge, u"batch-bot"_s)->models, QStringList{u"demo-chat"_s});
    QCOMPARE(child<QLabel>(page, u"keysStatus"_s)->text(), u"Limits of key batch-bot saved."_s);
    // The next request is the one a minute the key now has; the one after it is refused.
    QCOMPARE(chatStatus(m_bridge->port(), text), 200);
    QByteArray refusal;
    QCOMPARE(chatStatus(m_bridge->port(), text, &refusal), 429);
    QCOMPARE(errorCode(refusal), u"key_requests_per_minute_exceeded"_s);

    // Opened again, the dialog starts from the limits in force, as the table shows them.
    QVERIFY(page->selectKey(u"batch-bot"_s));
    auto *table = child<QTableView>(page, u"keysTable"_s);
    const int row = table->selectionModel()->selectedRows().first().row();
    QTRY_COMPARE(page->model()->index(row, KeysModel::RequestsColumn).data().toString(), u"1"_s);
    edit->click();
    dialog = page->findChild<KeyLimitsDialog *>();
    QVERIFY(dialog);
    QCOMPARE(child<QSpinBox>(dialog, u"keyRequestsField"_s)->value(), 1);
    QCOMPARE(child<QSpinBox>(dialog, u"keyTokensField"_s)->value(), 50000);
    QCOMPARE(child<QLineEdit>(dialog, u"keyModelsField"_s)->text(), u"demo-chat"_s);
    dialog->reject();
}

void KeysConsoleTest::anEditOfAKeyRevokedMeanwhileSaysSoInTheDialog()
{
    QVERIFY(!issueThroughDialog(u"temp"_s, u"short-lived"_s).isEmpty());
    ui::KeysPage *page = m_window->keysPage();
    QVERIFY(page->selectKey(u"short-lived"_s));
    child<QPushButton>(page, u"editKeyLimitsAction"_s)->click();
    auto *dialog = page->findChild<KeyLimitsDialog *>();
    QVERIFY(dialog);
    // Another operator revokes it through the admin API while the dialog is open.
    switchyard::testing::TestClient revoke(m_bridge->port());
    revoke.send("DELETE", "/admin/v1/keys/short-lived");
    QVERIFY(revoke.waitForFinished(kEngineTimeoutMs));
    QCOMPARE(revoke.status(), 200);

    child<QSpinBox>(dialog, u"keyRequestsField"_s)->setValue(5);
    child<QPushButton>(dialog, u"saveKeyLimitsButton"_s)->click();

    auto *error = child<QLabel>(dialog, u"keyLimitsError"_s);
    QTRY_VERIFY_WITH_TIMEOUT(error->isVisible(), kEngineTimeoutMs);
    QCOMPARE(error->text(), u"No API key has id `short-lived`."_s);
    QVERIFY(dialog->isVisible());
    dialog->reject();
}

void KeysConsoleTest::revokingAsksFirstAndTheKeyIsRefusedAfter()
{
    const QByteArray text = issueThroughDialog(u"ops"_s, u"ops-bot"_s);
    QVERIFY(!text.isEmpty());
    ui::KeysPage *page = m_window->keysPage();
    QVERIFY(page->selectKey(u"ops-bot"_s));
    auto *revoke = child<QPushButton>(page, u"revokeKeyAction"_s);
    QVERIFY(revoke->isEnabled());

    // Asked first, naming the key and its tenant; cancelled, nothing happens.
    revoke->click();
    auto *box = page->findChild<QMessageBox *>(u"revokeKeyConfirmation"_s);
    QVERIFY(box && box->isVisible());
    QCOMPARE(box->text(), u"Revoke key ops-bot of tenant ops?"_s);
    QCOMPARE(box->defaultButton(), box->button(QMessageBox::Cancel));
    box->button(QMessageBox::Cancel)->click();
    QTRY_VERIFY(!page->findChild<QMessageBox *>(u"revokeKeyConfirmation"_s));
    QVERIFY(listed(*m_bridge, u"ops-bot"_s).has_value());
    QCOMPARE(chatStatus(m_bridge->port(), text), 200);

    revoke->click();
    box = page->findChild<QMessageBox *>(u"revokeKeyConfirmation"_s);
    QVERIFY(box);
    child<QPushButton>(box, u"confirmRevokeButton"_s)->click();

    QTRY_VERIFY_WITH_TIMEOUT(!listed(*m_bridge, u"ops-bot"_s).has_value(), kEngineTimeoutMs);
    QByteArray refusal;
    QCOMPARE(chatStatus(m_bridge->port(), text, &refusal), 401);
    QCOMPARE(errorCode(refusal), u"invalid_api_key"_s);
    QTRY_COMPARE(child<QLabel>(page, u"keysStatus"_s)->text(), u"Key ops-bot revoked."_s);
    QTRY_VERIFY(!page->selectKey(u"ops-bot"_s)); // gone from the table with the next snapshot
    QVERIFY(!revoke->isEnabled());               // nothing selected any more
}

void KeysConsoleTest::fileKeysOfferNeitherEditNorRevoke()
{
    ui::KeysPage *page = m_window->keysPage();
    auto *edit = child<QPushButton>(page, u"editKeyLimitsAction"_s);
    auto *revoke = child<QPushButton>(page, u"revokeKeyAction"_s);
    QVERIFY(!edit->isEnabled()); // nothing selected
    QVERIFY(!revoke->isEnabled());

    QVERIFY(page->selectKey(u"team-a"_s));

    QVERIFY(!edit->isEnabled());
    QVERIFY(!revoke->isEnabled());
    QCOMPARE(edit->toolTip(), u"Key team-a is defined in the config file: change or remove it "
                              u"under auth.keys there"_s);
    QVERIFY(page->model()->rowCount() >= 2);
}

QTEST_MAIN(KeysConsoleTest)
#include "tst_keys_console.moc"
