#pragma once

#include "logging/log_line.h"

#include <QString>
#include <QStringList>
#include <optional>

namespace switchyard::app {

struct CommandLine {
    QString configPath;      // empty: the embedded demo
    QString listen;          // "HOST:PORT" overriding the config's, or empty
    QString checkConfigPath; // set: validate this file and exit
    QString stateDirectory;  // --state-dir; empty: the config's, else the default
    // Unset: the config file's `log` section decides, else text at info.
    std::optional<logging::LogLevel> logLevel;
    std::optional<logging::LogFormat> logFormat;
    bool headless = false;
};

// Whether the arguments ask for no window before any QApplication exists (a QApplication
// cannot even be created without a display, so this is decided first).
bool wantsWindow(const QStringList &arguments);

// Parses the arguments of an existing application. On --help, --version or a usage error it
// prints what is needed and returns the exit code to use in `exitCode`.
std::optional<CommandLine> parseCommandLine(const QStringList &arguments, int *exitCode);

} // namespace switchyard::app
