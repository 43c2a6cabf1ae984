#include "config/yaml_reader.h"

#include <QHash>
#include <QRegularExpression>
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <utility>

namespace switchyard::config {

using namespace Qt::StringLiterals;
using std::chrono::milliseconds;

namespace {

// Values longer than this are cut in messages so one error stays on one readable line.
constexpr qsizetype longestQuotedValue = 60;

int editDistance(QStringView from, QStringView to)
{
    // One row of the classic Levenshtein table is enough; keys are a few characters long.
    QList<int> previous(to.size() + 1);
    for (qsizetype column = 0; column <= to.size(); ++column)
        previous[column] = int(column);
    QList<int> current(to.size() + 1);
    for (qsizetype row = 1; row <= from.size(); ++row) {
        current[0] = int(row);
        for (qsizetype column = 1; column <= to.size(); ++column) {
            const int substitution = from[row - 1] == to[column - 1] ? 0 : 1;
            current[column] = std::min({previous[column] + 1, current[column - 1] + 1,
                                        previous[column - 1] + substitution});
        }
        std::swap(previous, current);
    }
    return previous[to.size()];
}

} // namespace

QString fromYaml(const std::string &text)
{
    return QString::fromStdString(text);
}

QString describe(const YAML::Node &node)
{
    switch (node.Type()) {
    case YAML::NodeType::Scalar: {
        QString text = fromYaml(node.Scalar());
        text.replace(u'\n', u"\\n"_s);
        if (text.size() > longestQuotedValue)
            text = text.left(longestQuotedValue - 3) + u"..."_s;
        return u'"' + text + u'"';
    }
    case YAML::NodeType::Sequence:
        return u"a list"_s;
    case YAML::NodeType::Map:
        return u"a map"_s;
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
        break;
    }
    return u"an empty value"_s;
}

QString closestKey(const QString &unknown, const QList<QLatin1StringView> &allowed)
{
    const QString typed = unknown.toLower();
    QString best;
    int bestDistance = 3; // suggest only within two edits
    for (QLatin1StringView key : allowed) {
        const int distance = editDistance(typed, QString(key));
        // A suggestion must keep at least one typed character, or `x` would suggest `id`.
        if (distance < bestDistance && distance < typed.size()) {
            best = QString(key);
            bestDistance = distance;
        }
    }
    if (!best.isEmpty())
        return best;
    for (QLatin1StringView key : allowed) {
        const bool typedIsStart = typed.size() >= 3 && QString(key).startsWith(typed);
        if (typedIsStart || typed.startsWith(key))
            return QString(key);
    }
    return {};
}

SourceLocation YamlReader::locate(const YAML::Mark &mark) const
{
    // yaml-cpp counts from 0 and marks "no position" with -1; editors count from 1.
    if (mark.is_null())
        return {m_sourceName, 0, 0};
    return {m_sourceName, mark.line + 1, mark.column + 1};
}

void YamlReader::reportMissing(const YAML::Node &parent, const QString &owner,
                               QLatin1StringView key)
{
    report(parent.Mark(), u"%1 is missing required key `%2`"_s.arg(owner, key));
}

KeyedMap YamlReader::readKeys(const YAML::Node &map, const QList<QLatin1StringView> &allowed)
{
    KeyedMap keyed;
    // yaml-cpp keeps every occurrence of a repeated key while lookups see only the first, so a
    // repeated key would otherwise be ignored without a word.
    QHash<QString, int> firstLines;
    for (auto it = map.begin(); it != map.end(); ++it) {
        const YAML::Node key = it->first;
        if (!key.IsScalar()) {
            report(key.Mark(), u"keys must be plain names, got %1"_s.arg(describe(key)));
            continue;
        }
        const QString name = fromYaml(key.Scalar());
        if (!allowed.contains(name)) {
            const QString suggestion = closestKey(name, allowed);
            report(key.Mark(),
                   suggestion.isEmpty()
                       ? u"unknown key `%1`"_s.arg(name)
                       : u"unknown key `%1` (did you mean `%2`?)"_s.arg(name, suggestion));
            continue;
        }
        const int line = locate(key.Mark()).line;
        if (const auto first = firstLines.constFind(name); first != firstLines.cend()) {
            report(key.Mark(), u"duplicate key `%1` (first at line %2)"_s.arg(
                                   name, QString::number(first.value())));
            continue;
        }
        firstLines.insert(name, line);
        keyed.entries.append({name, key, it->second});
    }
    return keyed;
}

std::optional<KeyedMap> YamlReader::readSection(const MapEntry &entry,
                                                const QList<QLatin1StringView> &allowed)
{
    if (!entry.value.IsMap()) {
        reportValue(entry, u"`%1` must be a map, got %2"_s.arg(entry.name, describe(entry.value)));
        return std::nullopt;
    }
    return readKeys(entry.value, allowed);
}

std::optional<QString> YamlReader::readString(const MapEntry &entry)
{
    if (!entry.value.IsScalar()) {
        reportValue(entry,
                    u"`%1` must be a string, got %2"_s.arg(entry.name, describe(entry.value)));
        return std::nullopt;
    }
    return fromYaml(entry.value.Scalar());
}

std::optional<qint64> YamlReader::readInteger(const MapEntry &entry, qint64 minimum, qint64 maximum)
{
    bool parsed = false;
    const qint64 value =
        entry.value.IsScalar() ? fromYaml(entry.value.Scalar()).toLongLong(&parsed) : 0;
    const QString shown = describe(entry.value);
    if (!parsed) {
        reportValue(entry, u"`%1` must be an integer, got %2"_s.arg(entry.name, shown));
        return std::nullopt;
    }
    if (value < minimum) {
        reportValue(entry, u"`%1` must be at least %2, got %3"_s.arg(
                               entry.name, QString::number(minimum), shown));
        return std::nullopt;
    }
    if (value > maximum) {
        reportValue(entry, u"`%1` must be at most %2, got %3"_s.arg(
                               entry.name, QString::number(maximum), shown));
        return std::nullopt;
    }
    return value;
}

std::optional<double> YamlReader::readNumber(const MapEntry &entry)
{
    bool parsed = false;
    const double value =
        entry.value.IsScalar() ? fromYaml(entry.value.Scalar()).toDouble(&parsed) : 0.0;
    if (!parsed || !std::isfinite(value)) {
        reportValue(entry,
                    u"`%1` must be a number, got %2"_s.arg(entry.name, describe(entry.value)));
        return std::nullopt;
    }
    return value;
}

std::optional<milliseconds> YamlReader::readDuration(const MapEntry &entry, ZeroDuration zero,
                                                     milliseconds maximum)
{
    // A bare number is milliseconds; only a number with a unit may have a fraction ("1.5s").
    static const QRegularExpression pattern(uR"(^(\d+|\d+\.\d+)\s*(ms|s|m|h)$|^(\d+)$)"_s);
    const QString shown = describe(entry.value);
    const QRegularExpressionMatch match = entry.value.IsScalar()
                                              ? pattern.match(fromYaml(entry.value.Scalar()))
                                              : QRegularExpressionMatch();
    if (!match.hasMatch()) {
        reportValue(entry, u"`%1` must be a duration such as `250ms`, `3s` or `2m`, got %2"_s.arg(
                               entry.name, shown));
        return std::nullopt;
    }
    double totalMs = 0.0;
    if (match.hasCaptured(3)) {
        totalMs = match.captured(3).toDouble();
    } else {
        const QString unit = match.captured(2);
        const double msPerUnit = unit == u"ms"_s  ? 1.0
                                 : unit == u"s"_s ? 1000.0
                                 : unit == u"m"_s ? 60'000.0
                                                  : 3'600'000.0;
        totalMs = match.captured(1).toDouble() * msPerUnit;
    }
    if (totalMs > double(maximum.count())) {
        const auto hours = std::chrono::duration_cast<std::chrono::hours>(maximum);
        reportValue(entry, u"`%1` must be at most %2h, got %3"_s.arg(
                               entry.name, QString::number(hours.count()), shown));
        return std::nullopt;
    }
    const milliseconds duration(std::llround(totalMs));
    if (duration.count() == 0 && zero == ZeroDuration::Rejected) {
        reportValue(entry, u"`%1` must be greater than 0, got %2"_s.arg(entry.name, shown));
        return std::nullopt;
    }
    return duration;
}

std::optional<qint64> YamlReader::readSize(const MapEntry &entry, qint64 maximum)
{
    // KB and MB are decimal (1000), KiB and MiB binary (1024), as on every disk label.
    static const QRegularExpression pattern(
        uR"(^(\d+|\d+\.\d+)\s*(B|KB|KiB|MB|MiB|GB|GiB)$|^(\d+)$)"_s);
    const QString shown = describe(entry.value);
    const QRegularExpressionMatch match = entry.value.IsScalar()
                                              ? pattern.match(fromYaml(entry.value.Scalar()))
                                              : QRegularExpressionMatch();
    if (!match.hasMatch()) {
        reportValue(entry,
                    u"`%1` must be a size such as `8MiB`, `512KiB` or `1048576`, got %2"_s.arg(
                        entry.name, shown));
        return std::nullopt;
    }
    double bytes = 0.0;
    if (match.hasCaptured(3)) {
        bytes = match.captured(3).toDouble();
    } else {
        static const QHash<QString, double> bytesPerUnit{
            {u"B"_s, 1.0},         {u"KB"_s, 1e3}, {u"KiB"_s, 1024.0},      {u"MB"_s, 1e6},
            {u"MiB"_s, 1048576.0}, {u"GB"_s, 1e9}, {u"GiB"_s, 1073741824.0}};
        bytes = match.captured(1).toDouble() * bytesPerUnit.value(match.captured(2));
    }
    if (bytes > double(maximum)) {
        reportValue(entry, u"`%1` must be at most %2GiB, got %3"_s.arg(
                               entry.name, QString::number(maximum >> 30), shown));
        return std::nullopt;
    }
    const qint64 size = std::llround(bytes);
    if (size == 0) {
        reportValue(entry, u"`%1` must be greater than 0, got %2"_s.arg(entry.name, shown));
        return std::nullopt;
    }
    return size;
}

std::optional<bool> YamlReader::readBool(const MapEntry &entry)
{
    if (entry.value.IsScalar()) {
        const QString text = fromYaml(entry.value.Scalar());
        if (text == u"true"_s)
            return true;
        if (text == u"false"_s)
            return false;
    }
    reportValue(entry,
                u"`%1` must be true or false, got %2"_s.arg(entry.name, describe(entry.value)));
    return std::nullopt;
}

std::optional<double> YamlReader::readNumberIn(const MapEntry &entry, double minimum,
                                               double maximum)
{
    const std::optional<double> value = readNumber(entry);
    if (!value)
        return std::nullopt;
    if (*value < minimum || *value > maximum) {
        reportValue(entry, u"`%1` must be between %2 and %3, got %4"_s.arg(
                               entry.name, QString::number(minimum), QString::number(maximum),
                               describe(entry.value)));
        return std::nullopt;
    }
    return value;
}

std::optional<QStringList> YamlReader::readStringList(const MapEntry &entry)
{
    if (entry.value.IsScalar())
        return QStringList{fromYaml(entry.value.Scalar())};
    if (!entry.value.IsSequence()) {
        reportValue(entry, u"`%1` must be a list of names, got %2"_s.arg(entry.name,
                                                                         describe(entry.value)));
        return std::nullopt;
    }
    QStringList names;
    int position = 0;
    for (const YAML::Node &node : entry.value) {
        ++position;
        if (!node.IsScalar()) {
            report(node.IsNull() ? entry.value.Mark() : node.Mark(),
                   u"entry %1 of `%2` must be a name, got %3"_s.arg(QString::number(position),
                                                                    entry.name, describe(node)));
            return std::nullopt;
        }
        names.append(fromYaml(node.Scalar()));
    }
    return names;
}

} // namespace switchyard::config
