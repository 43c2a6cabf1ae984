#include "config/config_sections.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <algorithm>
#include <limits>

namespace switchyard::config {

using namespace Qt::StringLiterals;
using json::JsonPath;
using json::RequestTemplate;

namespace {

const QList<QLatin1StringView> anthropicKeys{"version"_L1, "max_tokens"_L1, "beta"_L1};
const QList<QLatin1StringView> mappingKeys{
    "path"_L1,   "headers"_L1,       "api_key_header"_L1, "api_key_prefix"_L1, "request"_L1,
    "answer"_L1, "finish_reason"_L1, "usage"_L1,          "error"_L1,          "stream"_L1};
const QList<QLatin1StringView> streamKeys{"path"_L1,          "delta"_L1, "done"_L1, "done_data"_L1,
                                          "finish_reason"_L1, "usage"_L1, "error"_L1};
const QList<QLatin1StringView> usageKeys{"prompt_tokens"_L1, "completion_tokens"_L1};

class AdapterChecker {
public:
    explicit AdapterChecker(YamlReader &reader) : m_reader(reader) {}

    void checkAnthropic(const MapEntry &entry, AnthropicSettings &settings)
    {
        const std::optional<KeyedMap> keys = m_reader.readSection(entry, anthropicKeys);
        if (!keys)
            return;
        if (const MapEntry *version = keys->find("version"_L1)) {
            if (const auto text = m_reader.readString(*version)) {
                if (text->isEmpty())
                    m_reader.reportValue(*version, u"`version` must not be empty"_s);
                else
                    settings.version = *text;
            }
        }
        if (const MapEntry *maxTokens = keys->find("max_tokens"_L1)) {
            if (const auto value =
                    m_reader.readInteger(*maxTokens, 1, std::numeric_limits<int>::max()))
                settings.maxTokens = int(*value);
        }
        if (const MapEntry *beta = keys->find("beta"_L1)) {
            if (const auto names = m_reader.readStringList(*beta))
                settings.betas = *names;
        }
    }

    void checkMapping(const MapEntry &entry, MappingConfig &mapping)
    {
        const std::optional<KeyedMap> keys = m_reader.readSection(entry, mappingKeys);
        if (!keys)
            return;
        if (const MapEntry *path = keys->find("path"_L1))
            readRequestPath(*path, mapping.path);
        // `headers`, `api_key_header` and `api_key_prefix` are the older spelling of the
        // provider's own keys, read with them (provider_call_section.cpp).
        if (const MapEntry *request = keys->find("request"_L1))
            checkTemplate(*request, mapping.request);
        else
            m_reader.reportMissing(entry.value, u"`mapping`"_s, "request"_L1);
        if (const MapEntry *answer = keys->find("answer"_L1)) {
            if (auto path = readAnswerPath(*answer))
                mapping.answer = *path;
        } else {
            m_reader.reportMissing(entry.value, u"`mapping`"_s, "answer"_L1);
        }
        if (const MapEntry *finish = keys->find("finish_reason"_L1))
            mapping.finishReason = readAnswerPath(*finish);
        if (const MapEntry *usage = keys->find("usage"_L1))
            checkUsage(*usage, mapping.usage);
        if (const MapEntry *error = keys->find("error"_L1))
            mapping.error = readAnswerPath(*error);
        if (const MapEntry *stream = keys->find("stream"_L1))
            checkStream(*stream, mapping.stream);
    }

private:
    void readRequestPath(const MapEntry &entry, QString &target)
    {
        const auto text = m_reader.readString(entry);
        if (!text)
            return;
        if (!text->startsWith(u'/') || text->contains(u' ') || text->contains(u'?')) {
            m_reader.reportValue(entry,
                                 u"`%1` must be a URL path such as `/generate`, got %2"_s.arg(
                                     entry.name, describe(entry.value)));
            return;
        }
        target = *text;
    }

    // A path into the provider's answer or events: it starts at `$` and names one value.
    std::optional<JsonPath> readAnswerPath(const MapEntry &entry)
    {
        const auto text = m_reader.readString(entry);
        if (!text)
            return std::nullopt;
        auto parsed = JsonPath::parse(*text);
        if (const QString *problem = std::get_if<QString>(&parsed)) {
            m_reader.reportValue(entry,
                                 u"`%1` is not a valid path: %2"_s.arg(entry.name, *problem));
            return std::nullopt;
        }
        JsonPath path = std::get<JsonPath>(std::move(parsed));
        if (path.root() != JsonPath::Root::Document) {
            m_reader.reportValue(entry, u"`%1` must start with `$`, the provider's answer; `@` "
                                        u"only means something inside a request template's "
                                        u"`$map`"_s.arg(entry.name));
            return std::nullopt;
        }
        if (!path.picksOne()) {
            m_reader.reportValue(entry, u"`%1` must name one value, but `[*]` in `%2` names a "
                                        u"list"_s.arg(entry.name, path.text()));
            return std::nullopt;
        }
        return path;
    }

    void checkUsage(const MapEntry &entry, MappedUsagePaths &usage)
    {
        const std::optional<KeyedMap> keys = m_reader.readSection(entry, usageKeys);
        if (!keys)
            return;
        if (const MapEntry *prompt = keys->find("prompt_tokens"_L1))
            usage.promptTokens = readAnswerPath(*prompt);
        if (const MapEntry *completion = keys->find("completion_tokens"_L1))
            usage.completionTokens = readAnswerPath(*completion);
    }

    void checkStream(const MapEntry &entry, MappedStreamConfig &stream)
    {
        const std::optional<KeyedMap> keys = m_reader.readSection(entry, streamKeys);
        if (!keys)
            return;
        stream.enabled = true;
        if (const MapEntry *path = keys->find("path"_L1))
            readRequestPath(*path, stream.path);
        if (const MapEntry *delta = keys->find("delta"_L1)) {
            if (auto path = readAnswerPath(*delta))
                stream.delta = *path;
        } else {
            m_reader.reportMissing(entry.value, u"`stream`"_s, "delta"_L1);
        }
        if (const MapEntry *done = keys->find("done"_L1))
            stream.done = readAnswerPath(*done);
        if (const MapEntry *doneData = keys->find("done_data"_L1)) {
            if (const auto text = m_reader.readString(*doneData)) {
                if (text->isEmpty())
                    m_reader.reportValue(*doneData, u"`done_data` must not be empty"_s);
                else
                    stream.doneData = text->toUtf8();
            }
        }
        if (const MapEntry *finish = keys->find("finish_reason"_L1))
            stream.finishReason = readAnswerPath(*finish);
        if (const MapEntry *usage = keys->find("usage"_L1))
            checkUsage(*usage, stream.usage);
        if (const MapEntry *error = keys->find("error"_L1))
            stream.error = readAnswerPath(*error);
    }

    // YAML's own scalars become JSON's: a quoted scalar is always text, a plain one is null,
    // a boolean or a number when it reads as one.
    QJsonValue toJson(const YAML::Node &node)
    {
        switch (node.Type()) {
        case YAML::NodeType::Scalar: {
            const QString text = fromYaml(node.Scalar());
            if (node.Tag() == "!")
                return text;
            if (text == u"null"_s || text == u"~"_s)
                return QJsonValue::Null;
            if (text == u"true"_s || text == u"false"_s)
                return text == u"true"_s;
            static const QRegularExpression number(
                u"^-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][-+]?[0-9]+)?$"_s);
            if (number.match(text).hasMatch())
                return text.toDouble();
            return text;
        }
        case YAML::NodeType::Sequence: {
            QJsonArray array;
            for (const YAML::Node &item : node)
                array.append(toJson(item));
            return array;
        }
        case YAML::NodeType::Map: {
            QJsonObject object;
            QHash<QString, int> firstLines;
            for (auto it = node.begin(); it != node.end(); ++it) {
                if (!it->first.IsScalar()) {
                    m_reader.report(it->first.Mark(),
                                    u"keys must be plain names, got %1"_s.arg(describe(it->first)));
                    continue;
                }
                const QString name = fromYaml(it->first.Scalar());
                if (const auto first = firstLines.constFind(name); first != firstLines.cend()) {
                    m_reader.report(it->first.Mark(),
                                    u"duplicate key `%1` (first at line %2)"_s.arg(
                                        name, QString::number(first.value())));
                    continue;
                }
                firstLines.insert(name, m_reader.locate(it->first.Mark()).line);
                object.insert(name, toJson(it->second));
            }
            return object;
        }
        case YAML::NodeType::Null:
        case YAML::NodeType::Undefined:
            break;
        }
        return QJsonValue::Null;
    }

    static QString describeLocation(const RequestTemplate::Location &where)
    {
        QString text;
        for (const auto &step : where) {
            if (const QString *member = std::get_if<QString>(&step))
                text += (text.isEmpty() ? QString() : u"."_s) + *member;
            else
                text += u"[%1]"_s.arg(std::get<qsizetype>(step));
        }
        return text;
    }

    // The YAML node a template location names, as far as it can be followed.
    static YAML::Mark markOf(YAML::Node node, const RequestTemplate::Location &where)
    {
        YAML::Mark mark = node.Mark();
        for (const auto &step : where) {
            YAML::Node next;
            if (const QString *member = std::get_if<QString>(&step)) {
                if (!node.IsMap())
                    break;
                for (auto it = node.begin(); it != node.end(); ++it) {
                    if (it->first.IsScalar() && fromYaml(it->first.Scalar()) == *member) {
                        next = it->second;
                        break;
                    }
                }
            } else if (node.IsSequence() && std::get<qsizetype>(step) < qsizetype(node.size())) {
                next = node[std::size_t(std::get<qsizetype>(step))];
            }
            if (!next.IsDefined())
                break;
            node = next;
            if (!node.IsNull())
                mark = node.Mark();
        }
        return mark;
    }

    void checkTemplate(const MapEntry &entry, RequestTemplate &target)
    {
        QJsonValue source;
        const bool writtenAsJson = entry.value.IsScalar();
        if (writtenAsJson) {
            const QByteArray text = QByteArray::fromStdString(entry.value.Scalar());
            QJsonParseError error;
            const QJsonDocument document = QJsonDocument::fromJson(text, &error);
            if (error.error != QJsonParseError::NoError) {
                // Qt's offset is just past the character it stumbled on; people count lines
                // and columns from that character.
                const qsizetype offset = std::max(error.offset - 1, 0);
                const QByteArray before = text.left(offset);
                const qsizetype line = before.count('\n') + 1;
                const qsizetype column = offset - (before.lastIndexOf('\n') + 1) + 1;
                m_reader.reportValue(entry, u"`request` is not valid JSON: %1 at line %2, column "
                                            u"%3 of the template"_s.arg(error.errorString(),
                                                                        QString::number(line),
                                                                        QString::number(column)));
                return;
            }
            source =
                document.isObject() ? QJsonValue(document.object()) : QJsonValue(document.array());
        } else if (entry.value.IsMap()) {
            const qsizetype errorsBefore = m_reader.errorCount();
            source = toJson(entry.value);
            if (m_reader.errorCount() != errorsBefore)
                return;
        } else {
            m_reader.reportValue(entry,
                                 u"`request` must be a template: a map, or a JSON object "
                                 u"written as a string, got %1"_s.arg(describe(entry.value)));
            return;
        }

        auto compiled = RequestTemplate::compile(source);
        if (auto *errors = std::get_if<QList<RequestTemplate::Error>>(&compiled)) {
            for (const RequestTemplate::Error &error : std::as_const(*errors)) {
                if (writtenAsJson) {
                    const QString where = describeLocation(error.where);
                    m_reader.reportValue(
                        entry, where.isEmpty()
                                   ? u"`request`: %1"_s.arg(error.message)
                                   : u"`request` at `%1`: %2"_s.arg(where, error.message));
                } else {
                    m_reader.report(markOf(entry.value, error.where), error.message);
                }
            }
            return;
        }
        target = std::get<RequestTemplate>(std::move(compiled));
    }

    YamlReader &m_reader;
};

} // namespace

QList<QLatin1StringView> adapterProviderKeys()
{
    return {"anthropic"_L1, "mapping"_L1};
}

void checkProviderAdapter(YamlReader &reader, const YAML::Node &node, const KeyedMap &keys,
                          std::optional<ProviderKind> kind, ProviderConfig &provider)
{
    AdapterChecker checker(reader);
    if (const MapEntry *anthropic = keys.find("anthropic"_L1)) {
        if (kind && *kind != ProviderKind::Anthropic)
            reader.report(anthropic->key.Mark(),
                          u"`anthropic` is only allowed for an anthropic provider"_s);
        else
            checker.checkAnthropic(*anthropic, provider.adapter.anthropic);
    }
    if (const MapEntry *mapping = keys.find("mapping"_L1)) {
        if (kind && *kind != ProviderKind::Mapped)
            reader.report(mapping->key.Mark(),
                          u"`mapping` is only allowed for a mapped provider"_s);
        else
            checker.checkMapping(*mapping, provider.adapter.mapping);
    } else if (kind == ProviderKind::Mapped) {
        reader.reportMissing(node, u"mapped provider"_s, "mapping"_L1);
    }
}

} // namespace switchyard::config
