#include "lifecycle/config_lifecycle.h"

#include "config/config_store.h"
#include "config/route_rules_io.h"
#include "config/text_diff.h"
#include "config/yaml_text_edit.h"
#include "lifecycle/config_history.h"
#include "lifecycle/config_overlay.h"
#include "lifecycle/shared_history.h"
#include "storage/state_database.h"

#include <QDateTime>
#include <QFile>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QJsonArray>
#include <QLoggingCategory>
#include <QSaveFile>

Q_LOGGING_CATEGORY(lcLifecycle, "switchyard.config")

namespace switchyard::lifecycle {

using namespace Qt::StringLiterals;

namespace {

bool isResource(const QString &path)
{
    return path.startsWith(u':');
}

QString sourceName(ConfigChangeSource source)
{
    return configChangeSourceName(source);
}

} // namespace

ConfigLifecycle::ConfigLifecycle(ConfigSource source, config::ConfigStore &store,
                                 control::OperatorCommands &commands, QObject *parent)
    : QObject(parent), m_source(std::move(source)), m_store(store), m_commands(commands)
{
    m_debounce.setSingleShot(true);
    connect(&m_debounce, &QTimer::timeout, this, &ConfigLifecycle::fileEvent);
}

ConfigLifecycle::~ConfigLifecycle() = default;

void ConfigLifecycle::start()
{
    m_stateDirectory = m_store.config().state.directory;
    m_history =
        std::make_unique<ConfigHistory>(storage::stateDatabasePath(m_stateDirectory),
                                        u"switchyard-config-versions-%1"_s.arg(quintptr(this)));
    m_fileText = m_source.fileText;
    m_loadedFileText = m_fileText;
    m_runningText = m_source.runningText.isNull() ? m_source.fileText : m_source.runningText;
    if (m_runningText != m_fileText && !m_source.overlayPath.isEmpty()) {
        QFile overlay(m_source.overlayPath);
        if (overlay.open(QIODevice::ReadOnly))
            m_overlayKeys = config::topLevelKeys(overlay.readAll());
        m_overlayBaseText = m_fileText;
        qCWarning(lcLifecycle).noquote()
            << "running config differs from" << m_source.path << ": the overlay"
            << m_source.overlayPath << "replaces" << m_overlayKeys.join(u", "_s);
    }
    const std::optional<ConfigVersion> latest = m_history->latest();
    const bool known = latest && (latest->text.toUtf8() == m_runningText ||
                                  config::sameYamlData(latest->text.toUtf8(), m_runningText));
    if (known) {
        m_runningVersion = latest->number;
    } else {
        record(m_runningText,
               {ConfigChangeSource::File,
                {},
                latest ? u"changed while Switchyard was stopped"_s : u"first start"_s});
    }
    qCInfo(lcLifecycle).noquote() << "running config version" << m_runningVersion << "from"
                                  << m_source.path;
    m_commands.setConfigRecorder(this);
    watch();
}

config::LoadResult ConfigLifecycle::load(const QByteArray &text, bool finish) const
{
    const config::EnvironmentLookup environment =
        m_source.environment ? m_source.environment : config::processEnvironment();
    config::LoadResult result = config::loadConfigText(text, m_source.path, environment);
    if (!result.ok() || !finish)
        return result;
    // The state directory holds the open database and the overlay: it moves at restart only.
    result.config->state.directory = m_stateDirectory;
    if (m_source.finish) {
        const QList<config::ConfigError> errors = m_source.finish(*result.config);
        if (!errors.isEmpty()) {
            result.errors = errors;
            result.config.reset();
        }
    }
    return result;
}

QList<config::ConfigError> ConfigLifecycle::validate(const QByteArray &text) const
{
    return load(text, false).errors;
}

ConfigChangeResult ConfigLifecycle::apply(const QByteArray &text, const ConfigChangeOrigin &origin,
                                          std::optional<quint64> baseVersion)
{
    beforeCommandChange();
    ConfigChangeResult result;
    const quint64 running = runningVersion();
    if (baseVersion && *baseVersion != running) {
        result.outcome = ConfigChangeResult::Outcome::Conflict;
        result.version = running;
        result.message =
            u"config changed since version %1: version %2 is running now"_s.arg(*baseVersion)
                .arg(running);
        qCWarning(lcLifecycle).noquote()
            << "refused an apply from" << sourceName(origin.source) << ":" << result.message;
        return result;
    }
    if (text == m_runningText) {
        result.outcome = ConfigChangeResult::Outcome::Unchanged;
        result.version = running;
        result.message = u"the text is the running config's: version %1 stays"_s.arg(running);
        return result;
    }
    config::LoadResult loaded = load(text, true);
    if (!loaded.ok()) {
        result.outcome = ConfigChangeResult::Outcome::Invalid;
        result.version = running;
        result.errors = loaded.errors;
        result.message = u"the config has %1 error(s); version %2 stays"_s.arg(loaded.errors.size())
                             .arg(running);
        return result;
    }
    result = applyLoaded(std::move(*loaded.config), text, origin);
    persist();
    announceFleetVersion(result, running);
    emit changed();
    return result;
}

ConfigChangeResult ConfigLifecycle::rollback(quint64 number, const ConfigChangeOrigin &origin)
{
    const std::optional<ConfigVersion> target = version(number);
    if (!target) {
        ConfigChangeResult result;
        result.outcome = ConfigChangeResult::Outcome::NotFound;
        result.version = runningVersion();
        result.message = u"there is no config version %1"_s.arg(number);
        return result;
    }
    ConfigChangeOrigin rollbackOrigin = origin;
    rollbackOrigin.source = ConfigChangeSource::Rollback;
    if (rollbackOrigin.note.isEmpty())
        rollbackOrigin.note =
            (sharedHistory() ? u"rollback to fleet version %1"_s : u"rollback to version %1"_s)
                .arg(number);
    ConfigChangeResult result = apply(target->text.toUtf8(), rollbackOrigin);
    if (result.outcome == ConfigChangeResult::Outcome::Invalid) {
        QStringList reasons;
        for (const config::ConfigError &error : result.errors)
            reasons.append(error.message);
        result.message =
            u"version %1 cannot be applied now: %2"_s.arg(number).arg(reasons.join(u"; "_s));
        qCWarning(lcLifecycle).noquote() << "refused a rollback:" << result.message;
    }
    return result;
}

ConfigChangeResult ConfigLifecycle::reload(const QString &trigger)
{
    m_debounce.stop();
    ConfigChangeResult result;
    result.version = runningVersion();
    if (m_source.path.isEmpty() || isResource(m_source.path)) {
        result.outcome = ConfigChangeResult::Outcome::Unchanged;
        result.message = u"%1 is built in: there is no file to reload"_s.arg(m_source.path);
        return result;
    }
    QString readError;
    const std::optional<QByteArray> fileText = readFile(&readError);
    if (!fileText) {
        const QList<config::ConfigError> errors{{{m_source.path, 0, 0}, readError}};
        refuseReload(errors);
        result.outcome = ConfigChangeResult::Outcome::Invalid;
        result.errors = errors;
        result.message = readError;
        return result;
    }
    // The file alone first, so every error names a line of the file as it is on disk.
    const config::LoadResult alone = load(*fileText, false);
    if (!alone.ok()) {
        m_fileText = *fileText; // what the file holds now: it no longer matches the running text
        refuseReload(alone.errors);
        result.outcome = ConfigChangeResult::Outcome::Invalid;
        result.errors = alone.errors;
        result.message = u"%1 has %2 error(s); version %3 stays"_s.arg(m_source.path)
                             .arg(alone.errors.size())
                             .arg(runningVersion());
        return result;
    }
    dropOverlayKeysEditedIn(*fileText);
    QByteArray running = *fileText;
    if (!m_overlayKeys.isEmpty()) {
        QFile overlay(m_source.overlayPath);
        if (overlay.open(QIODevice::ReadOnly)) {
            auto merged = applyOverlay(*fileText, overlay.readAll());
            if (const auto *text = std::get_if<QByteArray>(&merged))
                running = *text;
            else
                qCWarning(lcLifecycle).noquote() << std::get<QString>(merged);
        }
    }
    if (running == m_runningText) {
        m_fileText = *fileText;
        m_loadedFileText = m_fileText;
        m_lastReloadErrors.clear();
        result.outcome = ConfigChangeResult::Outcome::Unchanged;
        result.message = u"%1 holds the running config: version %2 stays"_s.arg(m_source.path)
                             .arg(runningVersion());
        emit changed();
        return result;
    }
    config::LoadResult loaded = load(running, true);
    if (!loaded.ok()) {
        refuseReload(loaded.errors);
        result.outcome = ConfigChangeResult::Outcome::Invalid;
        result.errors = loaded.errors;
        result.message =
            u"the reloaded config has %1 error(s); version %2 stays"_s.arg(loaded.errors.size())
                .arg(runningVersion());
        return result;
    }
    m_fileText = *fileText;
    m_loadedFileText = m_fileText;
    m_lastReloadErrors.clear();
    m_lastReloadErrorMs = 0;
    const quint64 before = runningVersion();
    result =
        applyLoaded(std::move(*loaded.config), running, {ConfigChangeSource::File, {}, trigger});
    qCInfo(lcLifecycle).noquote() << "reloaded" << m_source.path << u"(%1):"_s.arg(trigger)
                                  << "config version" << m_runningVersion;
    announceFleetVersion(result, before);
    emit changed();
    return result;
}

void ConfigLifecycle::dropOverlayKeysEditedIn(const QByteArray &fileText)
{
    if (m_overlayKeys.isEmpty() || m_source.overlayPath.isEmpty())
        return;
    QStringList edited;
    for (const QString &key : std::as_const(m_overlayKeys)) {
        if (!config::sameTopLevelValue(m_overlayBaseText, fileText, key))
            edited.append(key);
    }
    if (edited.isEmpty())
        return;
    // The file's newer edit wins: an operator who removes a leaked key from the file must not
    // have the overlay put it back.
    QFile overlayFile(m_source.overlayPath);
    QByteArray overlay =
        overlayFile.open(QIODevice::ReadOnly) ? overlayFile.readAll() : QByteArray();
    overlayFile.close();
    for (const QString &key : std::as_const(edited)) {
        const config::YamlEditResult removed = config::removeTopLevelKey(overlay, key);
        if (const auto *text = std::get_if<QByteArray>(&removed))
            overlay = *text;
    }
    m_overlayKeys = config::topLevelKeys(overlay);
    m_overlayBaseText = fileText;
    QString error;
    const bool stored = m_overlayKeys.isEmpty() ? (QFile::remove(m_source.overlayPath) ||
                                                   !QFile::exists(m_source.overlayPath))
                                                : writeFile(m_source.overlayPath, overlay, &error);
    m_overlayNote = u"%1 was edited in %2 since the overlay was written: the file's edit replaces "
                    u"the overlay's"_s.arg(edited.join(u", "_s), m_source.path);
    if (!stored)
        m_overlayNote += u" (but the overlay %1 cannot be rewritten: %2; delete it by hand)"_s.arg(
            m_source.overlayPath, error.isEmpty() ? u"cannot remove it"_s : error);
    qCWarning(lcLifecycle).noquote() << m_overlayNote;
}

void ConfigLifecycle::refuseReload(const QList<config::ConfigError> &errors)
{
    qCWarning(lcLifecycle).noquote()
        << "refused to reload" << m_source.path << "with" << errors.size() << "error(s); version"
        << m_runningVersion << "keeps running";
    for (const config::ConfigError &error : errors)
        qCWarning(lcLifecycle).noquote() << error.toString();
    m_lastReloadErrors = errors;
    m_lastReloadErrorMs = QDateTime::currentMSecsSinceEpoch();
    emit changed();
}

ConfigChangeResult ConfigLifecycle::applyLoaded(config::Config next, const QByteArray &text,
                                                const ConfigChangeOrigin &origin)
{
    const config::ServerConfig &running = m_store.config().server;
    if (next.server.listenHost != running.listenHost ||
        next.server.listenPort != running.listenPort) {
        qCWarning(lcLifecycle).noquote()
            << "the listen address changed to"
            << config::formatListenAddress(next.server.listenHost, next.server.listenPort)
            << "; the gateway keeps listening where it does until a restart";
    }
    m_commands.applyConfig(std::make_shared<const config::Config>(std::move(next)));
    record(text, origin);
    watch(); // config_file's settings may have changed
    ConfigChangeResult result;
    result.outcome = ConfigChangeResult::Outcome::Applied;
    result.version = m_runningVersion;
    result.message = u"config version %1 is running"_s.arg(m_runningVersion);
    return result;
}

void ConfigLifecycle::record(const QByteArray &text, const ConfigChangeOrigin &origin)
{
    const ConfigVersion version =
        m_history->append(QString::fromUtf8(text), origin, QDateTime::currentMSecsSinceEpoch());
    m_runningText = text;
    m_runningVersion = version.number;
    QString line =
        u"config version %1 from %2"_s.arg(version.number).arg(sourceName(origin.source));
    if (!origin.author.isEmpty())
        line += u" by %1"_s.arg(origin.author);
    if (!origin.note.isEmpty())
        line += u" (%1)"_s.arg(origin.note);
    qCInfo(lcLifecycle).noquote() << line;
}

// ---- changes made by commands ---------------------------------------------------------------

void ConfigLifecycle::beforeCommandChange()
{
    if (m_source.path.isEmpty() || isResource(m_source.path))
        return;
    QString error;
    const std::optional<QByteArray> onDisk = readFile(&error);
    if (onDisk && *onDisk != m_fileText)
        reload(u"file changed on disk before a command"_s);
}

namespace {

// The rules written into `text`: only the rules that changed when their number did not, else
// the whole `routes:` node; `check` says whether a text holds exactly the new rules.
QByteArray routesWritten(const QByteArray &text, const QJsonArray &before, const QJsonArray &after,
                         const std::function<bool(const QByteArray &)> &check)
{
    if (before.size() == after.size() && !before.isEmpty()) {
        QByteArray edited = text;
        bool ok = true;
        for (qsizetype i = 0; i < after.size() && ok; ++i) {
            if (before[i] == after[i])
                continue;
            const config::YamlEditResult result = config::replaceYamlNode(
                edited, {u"routes"_s, QString::number(i)}, config::yamlFromJson(after[i]));
            ok = std::holds_alternative<QByteArray>(result);
            if (ok)
                edited = std::get<QByteArray>(result);
        }
        if (ok && check(edited))
            return edited;
    }
    const config::YamlEditResult whole =
        config::replaceYamlNode(text, {u"routes"_s}, config::yamlFromJson(after));
    if (const auto *edited = std::get_if<QByteArray>(&whole); edited && check(*edited))
        return *edited;
    return {};
}

} // namespace

void ConfigLifecycle::commandChanged(const QStringList &topLevelKeys, const config::Config &before,
                                     const ConfigChangeOrigin &origin)
{
    QByteArray text = m_runningText;
    if (topLevelKeys.contains(u"routes"_s)) {
        const QJsonArray after = config::routeRulesJson(m_store.config().routing.routes);
        const auto holdsTheRules = [this, &after](const QByteArray &candidate) {
            const config::LoadResult loaded = load(candidate, false);
            return loaded.ok() && config::routeRulesJson(loaded.config->routing.routes) == after;
        };
        const QByteArray written = routesWritten(
            text, config::routeRulesJson(before.routing.routes), after, holdsTheRules);
        if (written.isEmpty()) {
            m_writeProblem = u"the new route rules could not be written into the config text"_s;
            qCCritical(lcLifecycle).noquote() << m_writeProblem;
        } else {
            text = written;
        }
    }
    record(text, origin);
    persist();
    emit changed();
}

// ---- the file and the overlay -----------------------------------------------------------------

std::optional<QByteArray> ConfigLifecycle::readFile(QString *error) const
{
    QFile file(m_source.path);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = u"cannot read %1: %2"_s.arg(m_source.path, file.errorString());
        return std::nullopt;
    }
    return file.readAll();
}

bool ConfigLifecycle::writeFile(const QString &path, const QByteArray &contents, QString *error,
                                const QString &permissionsOf) const
{
    // A temporary file beside it, renamed over it: a reader never sees half a file.
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        *error = file.errorString();
        return false;
    }
    // Set before a byte is written, so the text is never readable by more than its original.
    if (!permissionsOf.isEmpty() && !file.setPermissions(QFile::permissions(permissionsOf))) {
        *error =
            u"cannot give it the permissions of %1: %2"_s.arg(permissionsOf, file.errorString());
        file.cancelWriting();
        return false;
    }
    if (file.write(contents) != contents.size() || !file.commit()) {
        *error = file.errorString();
        file.cancelWriting();
        return false;
    }
    return true;
}

bool ConfigLifecycle::fileIsWritable() const
{
    return !m_source.path.isEmpty() && !isResource(m_source.path) &&
           m_store.config().configFile.writeBack;
}

void ConfigLifecycle::persist()
{
    QString why;
    // The operator's newer edit, even one with a typo, is not overwritten by an older text. The
    // backup takes the file's permissions: the config may hold secrets.
    const bool unloadableEdit = !m_lastReloadErrors.isEmpty();
    if (!fileIsWritable()) {
        why = isResource(m_source.path) ? u"it is built into the program"_s
                                        : u"config_file.write_back is off"_s;
    } else if (unloadableEdit) {
        why = u"the file has an edit that does not load; it is left as it is"_s;
    } else if (QString error;
               !writeFile(m_source.path + u".bak"_s, m_fileText, &error, m_source.path)) {
        why = u"its backup %1.bak cannot be written: %2"_s.arg(m_source.path, error);
    } else if (!writeFile(m_source.path, m_runningText, &error)) {
        why = error;
    } else {
        m_fileText = m_runningText;
        m_loadedFileText = m_fileText;
        if (!m_overlayKeys.isEmpty() && QFile::remove(m_source.overlayPath))
            qCInfo(lcLifecycle).noquote()
                << "the file holds the running config again; removed" << m_source.overlayPath;
        m_overlayKeys.clear();
        m_writeProblem.clear();
        qCInfo(lcLifecycle).noquote()
            << "wrote config version" << m_runningVersion << "to" << m_source.path
            << "(previous text in" << m_source.path + u".bak)"_s;
        return;
    }
    if (m_source.overlayPath.isEmpty()) {
        m_writeProblem = u"%1 cannot be written (%2) and there is no state directory for an "
                         u"overlay: this change is lost at restart"_s.arg(m_source.path, why);
        qCCritical(lcLifecycle).noquote() << m_writeProblem;
        return;
    }
    // Against the text last loaded: the overlay holds the changes made here, not the undoing of
    // an edit that did not load.
    const QByteArray overlay = overlayFor(unloadableEdit ? m_loadedFileText : m_fileText,
                                          m_runningText, QFileInfo(m_source.path).fileName());
    QString error;
    if (overlay.isEmpty()) {
        QFile::remove(m_source.overlayPath);
        m_overlayKeys.clear();
        m_writeProblem.clear();
        return;
    }
    if (!writeFile(m_source.overlayPath, overlay, &error)) {
        m_writeProblem = u"%1 cannot be written (%2), nor the overlay %3 (%4): this change is "
                         u"lost at restart"_s.arg(m_source.path, why, m_source.overlayPath, error);
        qCCritical(lcLifecycle).noquote() << m_writeProblem;
        return;
    }
    m_overlayKeys = config::topLevelKeys(overlay);
    m_overlayBaseText = unloadableEdit ? m_loadedFileText : m_fileText;
    m_overlayNote.clear();
    m_writeProblem.clear();
    if (unloadableEdit)
        m_writeProblem = u"%1 has an edit that does not load; the change went to the overlay %2 "
                         u"(fix the file, then reload)"_s.arg(m_source.path, m_source.overlayPath);
    qCWarning(lcLifecycle).noquote()
        << m_source.path << u"cannot be written (%1); config version"_s.arg(why) << m_runningVersion
        << "went to the overlay" << m_source.overlayPath << "which replaces"
        << m_overlayKeys.join(u", "_s) << "at the next start: running config differs from the file";
}

void ConfigLifecycle::watch()
{
    if (m_source.path.isEmpty() || isResource(m_source.path))
        return;
    const config::ConfigFileConfig &settings = m_store.config().configFile;
    m_debounce.setInterval(settings.debounce);
    if (!settings.watch) {
        delete m_watcher;
        m_watcher = nullptr;
        return;
    }
    if (!m_watcher) {
        m_watcher = new QFileSystemWatcher(this);
        connect(m_watcher, &QFileSystemWatcher::directoryChanged, this,
                [this] { m_debounce.start(); });
        connect(m_watcher, &QFileSystemWatcher::fileChanged, this, [this] { m_debounce.start(); });
    }
    // The folder sees a rename over the file (editors, our own writes); the file its writes in
    // place. A rename drops the file's watch, so it is added again after each event.
    const QFileInfo file(m_source.path);
    const QString folder = file.absolutePath();
    if (!m_watcher->directories().contains(folder))
        m_watcher->addPath(folder);
    if (file.exists() && !m_watcher->files().contains(file.absoluteFilePath()))
        m_watcher->addPath(file.absoluteFilePath());
}

void ConfigLifecycle::fileEvent()
{
    watch();
    QString error;
    const std::optional<QByteArray> onDisk = readFile(&error);
    if (onDisk && *onDisk == m_fileText)
        return; // our own write, or a save that changed nothing
    if (!onDisk && !QFileInfo::exists(m_source.path))
        return; // between an editor's delete and its rename: the next event brings the file
    reload(u"file changed"_s);
}

// ---- reading --------------------------------------------------------------------------------

void ConfigLifecycle::announceFleetVersion(ConfigChangeResult &result, quint64 before) const
{
    if (!sharedHistory() || result.outcome != ConfigChangeResult::Outcome::Applied)
        return;
    // The fleet publishes it as its next version once changed() is out; a change another node
    // published first would win instead (docs/fleet.md, "Config").
    result.version = before + 1;
    result.message = u"applied here and published as fleet version %1"_s.arg(result.version);
}

const SharedHistory *ConfigLifecycle::sharedHistory() const
{
    return m_sharedHistory && m_sharedHistory->known() ? m_sharedHistory : nullptr;
}

quint64 ConfigLifecycle::runningVersion() const
{
    const SharedHistory *shared = sharedHistory();
    return shared ? shared->runningVersion() : m_runningVersion;
}

QList<ConfigVersionInfo> ConfigLifecycle::versions() const
{
    const SharedHistory *shared = sharedHistory();
    return shared ? shared->versions() : m_history->list();
}

ConfigVersionInfo ConfigLifecycle::latestOwnVersion() const
{
    const QList<ConfigVersionInfo> own = m_history->list();
    return own.isEmpty() ? ConfigVersionInfo{} : own.first();
}

std::optional<ConfigVersion> ConfigLifecycle::version(quint64 number) const
{
    const SharedHistory *shared = sharedHistory();
    return shared ? shared->version(number) : m_history->version(number);
}

ConfigStatus ConfigLifecycle::status() const
{
    ConfigStatus status;
    status.tracked = true;
    status.filePath = m_source.path;
    status.runningVersion = runningVersion();
    status.fileMatches = m_fileText == m_runningText;
    if (!m_overlayKeys.isEmpty()) {
        status.overlayPath = m_source.overlayPath;
        status.overlayKeys = m_overlayKeys;
    }
    if (!status.fileMatches) {
        // Made again only when a text changed: the status is read at every publishing tick, and
        // comparing two texts costs far less than diffing them.
        if (m_differenceFile != m_fileText || m_differenceRunning != m_runningText) {
            m_differenceFile = m_fileText;
            m_differenceRunning = m_runningText;
            m_difference =
                config::unifiedDiff(QString::fromUtf8(m_fileText), QString::fromUtf8(m_runningText),
                                    m_source.path, u"running config"_s);
        }
        status.difference = m_difference;
    }
    status.lastReloadErrors = m_lastReloadErrors;
    status.lastReloadErrorMsSinceEpoch = m_lastReloadErrorMs;
    status.historyProblem = m_history ? m_history->problem() : QString();
    status.writeProblem = m_writeProblem;
    status.overlayNote = m_overlayNote;
    return status;
}

StartTexts readStartTexts(const QString &path, const QString &overlayPath)
{
    StartTexts texts;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        texts.error = u"cannot read %1: %2"_s.arg(path, file.errorString());
        return texts;
    }
    texts.fileText = file.readAll();
    texts.runningText = texts.fileText;
    if (overlayPath.isEmpty() || !QFileInfo::exists(overlayPath))
        return texts;
    QFile overlay(overlayPath);
    if (!overlay.open(QIODevice::ReadOnly)) {
        texts.overlayError =
            u"cannot read the overlay %1: %2"_s.arg(overlayPath, overlay.errorString());
        return texts;
    }
    auto merged = applyOverlay(texts.fileText, overlay.readAll());
    if (const auto *error = std::get_if<QString>(&merged))
        texts.overlayError = *error;
    else
        texts.runningText = std::get<QByteArray>(merged);
    return texts;
}

} // namespace switchyard::lifecycle
