// switchyard: the console with the embedded engine, or the engine alone with --headless.

#include "bridge/engine_host.h"
#include "command_line.h"
#include "config/config_loader.h"
#include "logging/log_line.h"
#include "open_files_limit.h"
#include "signal_watcher.h"
#include "ui/shell/main_window.h"
#include "ui/shell/translation.h"

#include <QApplication>
#include <QCoreApplication>
#include <QDir>
#include <QIcon>
#include <QLockFile>
#include <QLoggingCategory>
#include <QMessageBox>
#include <QStandardPaths>
#include <chrono>
#include <cstdio>
#include <memory>

using namespace switchyard;

Q_LOGGING_CATEGORY(lcApp, "switchyard.app")

namespace {

// Descriptors the process holds besides client and upstream connections: the listener, the
// simulated providers, the event loop's own, log files, with room to spare.
constexpr qint64 kDescriptorsBesideConnections = 256;

// Raises the open-file limit as far as the process may, says what it got, and warns when that
// is too few for the configured number of client connections.
void raiseAndReportOpenFilesLimit(const config::ServerConfig &server)
{
    const app::OpenFilesLimit files = app::raiseOpenFilesLimit();
    if (!files.error.isEmpty()) {
        qCWarning(lcApp).noquote() << "cannot raise the open-file limit of" << files.now
                                   << "to the hard limit" << files.hard << ":" << files.error;
    } else if (files.now != files.before) {
        qCInfo(lcApp).noquote() << "open-file limit raised from" << files.before << "to"
                                << files.now << "(the hard limit)";
    } else {
        qCInfo(lcApp).noquote() << "open-file limit" << files.now << "(already the hard limit)";
    }
    // A proxied request holds two descriptors: the client's connection and the upstream call. A
    // connection refused over a cap holds one while it drains.
    const qint64 needed = 2 * qint64(server.maxConnections) + server.maxRefusalsDraining +
                          kDescriptorsBesideConnections;
    if (files.now >= 0 && files.now < needed) {
        qCWarning(lcApp).noquote()
            << "the open-file limit of" << files.now << "is below the" << needed
            << "descriptors that limits.max_connections =" << server.maxConnections
            << "and limits.max_refusals_draining =" << server.maxRefusalsDraining
            << "may need; connections beyond it fail when accepted. Raise the hard limit "
               "(LimitNOFILE= in the systemd unit, ulimit -Hn) or lower limits.max_connections";
    }
}

// The command line wins over the file; the file over the defaults (text, info). Called once
// with no file so the lines written while the config loads have the chosen form already.
void configureLogging(const app::CommandLine &line, const config::LogConfig &file = {})
{
    logging::configure(line.logFormat.value_or(file.format.value_or(logging::LogFormat::Text)),
                       line.logLevel.value_or(file.level.value_or(logging::LogLevel::Info)));
}

void printErrors(const QList<config::ConfigError> &errors)
{
    for (const config::ConfigError &error : errors)
        std::fprintf(stderr, "%s\n", qPrintable(error.toString()));
}

// A console started from a desktop has no terminal to read: show the reason in a dialog too.
void showStartupError(const QString &details)
{
    if (!qobject_cast<QApplication *>(QCoreApplication::instance()))
        return;
    QMessageBox box(QMessageBox::Critical,
                    QCoreApplication::translate("main", "Switchyard cannot start"),
                    QCoreApplication::translate("main", "Switchyard did not start."));
    box.setInformativeText(details);
    box.exec();
}

// The config file's state.directory wins; then --state-dir; then systemd's StateDirectory=
// (the packaged unit); then the user's data directory, ~/.local/share/switchyard.
QString resolveStateDirectory(const config::Config &config, const app::CommandLine &line)
{
    if (!config.state.directory.isEmpty())
        return config.state.directory;
    if (!line.stateDirectory.isEmpty())
        return QDir(line.stateDirectory).absolutePath();
    // systemd may list several directories separated by ':'; the first is the unit's own.
    const QString systemd = qEnvironmentVariable("STATE_DIRECTORY").section(u':', 0, 0);
    if (!systemd.isEmpty())
        return systemd;
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
}

int checkConfig(const QString &path)
{
    const config::LoadResult result = config::loadConfigFile(path, config::processEnvironment());
    if (!result.ok()) {
        printErrors(result.errors);
        std::fprintf(stderr, "%s: %lld error(s)\n", qPrintable(path),
                     static_cast<long long>(result.errors.size()));
        return 1;
    }
    std::printf("%s: valid, %lld provider(s)\n", qPrintable(path),
                static_cast<long long>(result.config->providers.size()));
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    QStringList arguments;
    for (int i = 0; i < argc; ++i)
        arguments.append(QString::fromLocal8Bit(argv[i]));

    // A QApplication needs a display even to start; decide before creating one.
    std::unique_ptr<QCoreApplication> application;
    if (app::wantsWindow(arguments))
        application = std::make_unique<QApplication>(argc, argv);
    else
        application = std::make_unique<QCoreApplication>(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("switchyard"));
    QCoreApplication::setApplicationVersion(QStringLiteral(SWITCHYARD_VERSION));
    QCoreApplication::setOrganizationName(QStringLiteral("Switchyard"));
    if (qobject_cast<QApplication *>(application.get()))
        ui::installTranslations(*application);

    int exitCode = 0;
    const std::optional<app::CommandLine> line = app::parseCommandLine(arguments, &exitCode);
    if (!line)
        return exitCode;
    configureLogging(*line);
    if (!line->checkConfigPath.isEmpty())
        return checkConfig(line->checkConfigPath);

    const QString configPath =
        line->configPath.isEmpty() ? QStringLiteral(":/demo.yaml") : line->configPath;
    config::LoadResult loaded = config::loadConfigFile(configPath, config::processEnvironment());
    if (!loaded.ok()) {
        printErrors(loaded.errors);
        std::fprintf(stderr, "switchyard: not starting: %s has %lld error(s)\n",
                     qPrintable(configPath), static_cast<long long>(loaded.errors.size()));
        QStringList lines;
        for (const config::ConfigError &error : loaded.errors)
            lines.append(error.toString());
        showStartupError(QCoreApplication::translate("main", "The configuration has errors:") +
                         QLatin1Char('\n') + lines.join(QLatin1Char('\n')));
        return 1;
    }
    configureLogging(*line, loaded.config->log);
    std::optional<config::ListenAddress> listen;
    if (!line->listen.isEmpty()) {
        listen = config::parseListenAddress(line->listen);
        if (!listen) {
            std::fprintf(stderr,
                         "switchyard: --listen must be HOST:PORT such as "
                         "127.0.0.1:8080, got '%s'\n",
                         qPrintable(line->listen));
            return 2;
        }
    }
    const QString stateDirectory = resolveStateDirectory(*loaded.config, *line);
    qCInfo(lcApp).noquote() << "state directory" << stateDirectory;
    // Nodes of a fleet each keep their last applied config and keys in their state directory:
    // two sharing one would overwrite each other's.
    std::unique_ptr<QLockFile> stateLock;
    if (loaded.config->fleet) {
        QDir().mkpath(stateDirectory);
        stateLock = std::make_unique<QLockFile>(
            QDir(stateDirectory).filePath(QStringLiteral("switchyard.lock")));
        if (!stateLock->tryLock(0)) {
            qint64 pid = 0;
            QString host;
            QString application;
            stateLock->getLockInfo(&pid, &host, &application);
            std::fprintf(stderr,
                         "switchyard: not starting: the state directory %s is in use by another "
                         "Switchyard (pid %lld on %s); give each fleet node its own state "
                         "directory (--state-dir)\n",
                         qPrintable(stateDirectory), static_cast<long long>(pid), qPrintable(host));
            return 1;
        }
    }
    // What the command line says wins over the file, at start and at every reload after it.
    const auto overrides = [listen, stateDirectory](config::Config &config) {
        if (listen) {
            config.server.listenHost = listen->host;
            config.server.listenPort = listen->port;
        }
        config.state.directory = stateDirectory;
    };

    // Changes applied earlier that the file could not take are in the overlay: a restart
    // starts from them, not from the file alone.
    const EngineHost::StartConfigTexts texts =
        EngineHost::readStartConfig(configPath, stateDirectory);
    if (!texts.overlayError.isEmpty())
        qCCritical(lcApp).noquote() << texts.overlayError << "; starting from the file alone";
    if (texts.error.isEmpty() && texts.runningText != texts.fileText) {
        config::LoadResult withOverlay =
            config::loadConfigText(texts.runningText, configPath, config::processEnvironment());
        if (!withOverlay.ok()) {
            printErrors(withOverlay.errors);
            std::fprintf(stderr,
                         "switchyard: not starting: %s with the overlay %s has %lld error(s); "
                         "remove the overlay to start from the file alone\n",
                         qPrintable(configPath), qPrintable(texts.overlayPath),
                         static_cast<long long>(withOverlay.errors.size()));
            return 1;
        }
        qCWarning(lcApp).noquote() << "running config differs from" << configPath << ": the overlay"
                                   << texts.overlayPath << "is on top of it";
        loaded = std::move(withOverlay);
    }
    config::Config config = *loaded.config;
    overrides(config);

    raiseAndReportOpenFilesLimit(config.server);
    const std::chrono::milliseconds shutdownGrace = config.server.shutdownGrace;
    EngineHost bridge(std::move(config));
    if (texts.error.isEmpty())
        bridge.followConfigFile(configPath, texts, overrides);
    QString startError;
    if (!bridge.start(&startError)) {
        std::fprintf(stderr, "switchyard: cannot start: %s\n", qPrintable(startError));
        showStartupError(startError);
        return 1;
    }

    app::SignalWatcher signalWatcher;
    const auto shutdown = [&bridge, grace = shutdownGrace] { bridge.shutdown(grace); };
    QObject::connect(&signalWatcher, &app::SignalWatcher::terminationRequested, &bridge,
                     [shutdown](int) { shutdown(); });
    QObject::connect(&signalWatcher, &app::SignalWatcher::reloadRequested, &bridge,
                     [&bridge] { bridge.reloadConfig(QStringLiteral("SIGHUP")); });
    QObject::connect(&bridge, &EngineHost::stopped, application.get(),
                     [] { QCoreApplication::exit(0); });
    QObject::connect(&bridge, &EngineHost::fatalError, application.get(),
                     [](const QString &message) {
                         std::fprintf(stderr, "switchyard: stopping: %s\n", qPrintable(message));
                         QCoreApplication::exit(1);
                     });

    const QString baseUrl = QStringLiteral("http://%1/v1").arg(bridge.listenAddress());
    std::unique_ptr<ui::MainWindow> window;
    if (auto *gui = qobject_cast<QApplication *>(application.get())) {
        gui->setWindowIcon(QIcon(QStringLiteral(":/icons/switchyard.png")));
        gui->setQuitOnLastWindowClosed(false); // closing the window drains, then quits
        QObject::connect(gui, &QGuiApplication::lastWindowClosed, &bridge, shutdown);
        window = std::make_unique<ui::MainWindow>(bridge);
        window->show();
        // The embedded demo exists to be watched: start its traffic so the matrix moves at once.
        if (line->configPath.isEmpty())
            bridge.setDemoTraffic(true, 10.0);
        std::printf("switchyard %s: console open; OpenAI base URL %s\n", SWITCHYARD_VERSION,
                    qPrintable(baseUrl));
    } else {
        std::printf("switchyard %s: running headless (%s); OpenAI base URL %s; config %s\n",
                    SWITCHYARD_VERSION,
                    line->headless && arguments.contains(QStringLiteral("--headless"))
                        ? "--headless"
                        : "no display found",
                    qPrintable(baseUrl), qPrintable(configPath));
    }
    std::fflush(stdout);
    return application->exec();
}
