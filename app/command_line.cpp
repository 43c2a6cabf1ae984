#include "command_line.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <cstdio>

namespace switchyard::app {

namespace {
bool displayAvailable()
{
    return qEnvironmentVariableIsSet("QT_QPA_PLATFORM") ||
           !qEnvironmentVariableIsEmpty("DISPLAY") ||
           !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY");
}
} // namespace

bool wantsWindow(const QStringList &arguments)
{
    for (const QString &argument : arguments) {
        if (argument == QLatin1String("--headless") ||
            argument.startsWith(QLatin1String("--check-config")) ||
            argument == QLatin1String("--version") || argument == QLatin1String("-v") ||
            argument == QLatin1String("--help") || argument == QLatin1String("-h"))
            return false;
    }
    return displayAvailable();
}

std::optional<CommandLine> parseCommandLine(const QStringList &arguments, int *exitCode)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Switchyard: one OpenAI-compatible endpoint in front of many LLM providers and agents, "
        "with a live operations console.\nWith no --config, an embedded demo runs three "
        "simulated providers."));
    const QCommandLineOption help = parser.addHelpOption();
    const QCommandLineOption version = parser.addVersionOption();
    const QCommandLineOption config(QStringLiteral("config"),
                                    QStringLiteral("Run with the YAML config in <file>."),
                                    QStringLiteral("file"));
    const QCommandLineOption listen(QStringLiteral("listen"),
                                    QStringLiteral("Listen on <host:port> instead of the "
                                                   "config's address (port 0 picks a free one)."),
                                    QStringLiteral("host:port"));
    const QCommandLineOption headless(QStringLiteral("headless"),
                                      QStringLiteral("Run without the console window."));
    const QCommandLineOption checkConfig(
        QStringLiteral("check-config"),
        QStringLiteral("Validate <file>, print every error as FILE:LINE:COL: message, and exit "
                       "0 when valid, 1 when not."),
        QStringLiteral("file"));
    const QCommandLineOption logLevel(
        QStringLiteral("log-level"),
        QStringLiteral("Log <level>: debug, info, warning, error (default: the config's "
                       "log.level, else info)."),
        QStringLiteral("level"));
    const QCommandLineOption logFormat(
        QStringLiteral("log-format"),
        QStringLiteral("Write log lines as <format>: text, or json (one object per line). "
                       "Default: the config's log.format, else text."),
        QStringLiteral("format"));
    const QCommandLineOption stateDir(
        QStringLiteral("state-dir"),
        QStringLiteral("Keep config versions, API keys and the usage ledger in <dir> (default: "
                       "the config's state.directory, else $STATE_DIRECTORY, else the user's "
                       "data directory)."),
        QStringLiteral("dir"));
    parser.addOptions({config, listen, headless, checkConfig, logLevel, logFormat, stateDir});

    if (!parser.parse(arguments)) {
        std::fprintf(stderr, "switchyard: %s\nTry 'switchyard --help'.\n",
                     qPrintable(parser.errorText()));
        *exitCode = 2;
        return std::nullopt;
    }
    if (parser.isSet(help)) {
        std::fputs(qPrintable(parser.helpText()), stdout);
        *exitCode = 0;
        return std::nullopt;
    }
    if (parser.isSet(version)) {
        std::printf("switchyard %s\n", SWITCHYARD_VERSION);
        *exitCode = 0;
        return std::nullopt;
    }
    if (!parser.positionalArguments().isEmpty()) {
        std::fprintf(stderr, "switchyard: unexpected argument '%s'\nTry 'switchyard --help'.\n",
                     qPrintable(parser.positionalArguments().constFirst()));
        *exitCode = 2;
        return std::nullopt;
    }

    CommandLine line;
    line.configPath = parser.value(config);
    line.listen = parser.value(listen);
    line.checkConfigPath = parser.value(checkConfig);
    line.stateDirectory = parser.value(stateDir);
    line.headless = parser.isSet(headless) || !displayAvailable();
    if (parser.isSet(logLevel)) {
        const QString level = parser.value(logLevel).toLower();
        line.logLevel = logging::logLevelFromName(level);
        if (!line.logLevel) {
            std::fprintf(stderr,
                         "switchyard: --log-level must be one of debug, info, warning, error, "
                         "got '%s'\n",
                         qPrintable(level));
            *exitCode = 2;
            return std::nullopt;
        }
    }
    if (parser.isSet(logFormat)) {
        const QString format = parser.value(logFormat).toLower();
        line.logFormat = logging::logFormatFromName(format);
        if (!line.logFormat) {
            std::fprintf(stderr, "switchyard: --log-format must be text or json, got '%s'\n",
                         qPrintable(format));
            *exitCode = 2;
            return std::nullopt;
        }
    }
    return line;
}

} // namespace switchyard::app
