#pragma once

#include "config/config.h"

#include <QLatin1StringView>
#include <QList>
#include <QString>
#include <chrono>
#include <optional>
#include <string>
#include <yaml-cpp/yaml.h>

namespace switchyard::config {

QString fromYaml(const std::string &text);
// How a value appears in a message: scalars quoted, collections named by shape.
QString describe(const YAML::Node &node);
// The allowed key a person most likely meant, or an empty string when none is close.
QString closestKey(const QString &unknown, const QList<QLatin1StringView> &allowed);

struct MapEntry {
    QString name;
    YAML::Node key;
    YAML::Node value;
};

// The allowed entries of one YAML map, first occurrence of each, in file order.
struct KeyedMap {
    QList<MapEntry> entries;

    const MapEntry *find(QLatin1StringView name) const
    {
        for (const MapEntry &entry : entries) {
            if (entry.name == name)
                return &entry;
        }
        return nullptr;
    }
};

enum class ZeroDuration { Rejected, Allowed };

// Reads typed values out of a YAML document and collects every error with FILE:LINE:COL. Each
// config section (server, providers, routing, resilience, adapters) is checked by a function that
// takes a reader, so the sections live beside the code they configure and share one error list.
class YamlReader {
public:
    explicit YamlReader(const QString &sourceName) : m_sourceName(sourceName) {}

    void report(const YAML::Mark &mark, const QString &message)
    {
        m_errors.append({locate(mark), message});
    }
    void reportValue(const MapEntry &entry, const QString &message)
    {
        report(valueMark(entry), message);
    }
    void reportMissing(const YAML::Node &parent, const QString &owner, QLatin1StringView key);

    SourceLocation locate(const YAML::Mark &mark) const;
    // yaml-cpp places an empty value at the token after it, often on the next line, so errors
    // about an empty value point at its key instead.
    static YAML::Mark valueMark(const MapEntry &entry)
    {
        return entry.value.IsNull() ? entry.key.Mark() : entry.value.Mark();
    }

    const QString &sourceName() const { return m_sourceName; }
    qsizetype errorCount() const { return m_errors.size(); }
    QList<ConfigError> takeErrors() { return std::move(m_errors); }

    // Unknown keys are errors with a did-you-mean suggestion; repeated keys are errors too.
    KeyedMap readKeys(const YAML::Node &map, const QList<QLatin1StringView> &allowed);
    std::optional<KeyedMap> readSection(const MapEntry &entry,
                                        const QList<QLatin1StringView> &allowed);

    std::optional<QString> readString(const MapEntry &entry);
    std::optional<bool> readBool(const MapEntry &entry);
    std::optional<qint64> readInteger(const MapEntry &entry, qint64 minimum, qint64 maximum);
    std::optional<double> readNumber(const MapEntry &entry);
    // A number between minimum and maximum inclusive.
    std::optional<double> readNumberIn(const MapEntry &entry, double minimum, double maximum);
    // At most a day unless `maximum` says otherwise: timers add durations to clock readings in
    // nanoseconds, a day keeps every sum far from overflow and is longer than any timeout a
    // person means. A retention may say more.
    std::optional<std::chrono::milliseconds>
    readDuration(const MapEntry &entry, ZeroDuration zero,
                 std::chrono::milliseconds maximum = std::chrono::hours(24));
    // At most 1GiB unless `maximum` says otherwise: request bodies are buffered whole, so a
    // larger limit only runs the gateway out of memory; a store on disk may be larger.
    std::optional<qint64> readSize(const MapEntry &entry, qint64 maximum = qint64(1) << 30);
    // A list of strings; a single scalar is taken as a list of one.
    std::optional<QStringList> readStringList(const MapEntry &entry);

private:
    QString m_sourceName;
    QList<ConfigError> m_errors;
};

} // namespace switchyard::config
