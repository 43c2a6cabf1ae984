#pragma once

#include "config/config.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <functional>
#include <optional>

namespace switchyard::config {

// Looks up an environment variable; returns std::nullopt when it is not set.
// Injected so tests never touch the real environment.
using EnvironmentLookup = std::function<std::optional<QByteArray>(const QString &name)>;
EnvironmentLookup processEnvironment();

struct LoadResult {
    std::optional<Config> config; // set only when errors is empty
    QList<ConfigError> errors;    // every problem found, in file order

    bool ok() const { return config.has_value(); }
};

// Parses and validates a whole YAML document. Collects every error it can instead of stopping at
// the first, so one --check-config run shows all that needs fixing.
LoadResult loadConfigText(const QByteArray &yaml, const QString &sourceName,
                          const EnvironmentLookup &environment);

// Reads a file (or a Qt resource path such as ":/demo.yaml") and calls loadConfigText.
LoadResult loadConfigFile(const QString &path, const EnvironmentLookup &environment);

} // namespace switchyard::config
