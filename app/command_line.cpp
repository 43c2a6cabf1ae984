#include "command_line.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <cstdio>

namespace switchyard::app {

namespace {
const QStringList kLogLevels = {QStringLiteral("debug"), QStringLiteral("info"),
                                QStringLiteral("warning"), QStringLiteral("error")};

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
    const QCommandLineOption logLevel(QStringLiteral("log-level"),
                                      QStringLiteral("Log <level>: debug, info, warning, error."),
                                      QStringLiteral("level"), QStringLiteral("info"));
    parser.addOptions({config, listen, headless, checkConfig, logLevel});

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
    line.logLevel = parser.value(logLevel).toLower();
    line.headless = parser.isSet(headless) || !displayAvailable();
    if (!kLogLevels.contains(line.logLevel)) {
        std::fprintf(stderr, "switchyard: --log-level must be one of %s, got '%s'\n",
                     qPrintable(kLogLevels.join(QStringLiteral(", "))), qPrintable(line.logLevel));
        *exitCode = 2;
        return std::nullopt;
    }
    return line;
}

} // namespace switchyard::app
