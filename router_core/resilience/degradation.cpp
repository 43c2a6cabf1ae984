#include "resilience/degradation.h"

#include "config/glob_pattern.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>

namespace switchyard::resilience {

QString lastUserMessageText(const QByteArray &body)
{
    const QJsonArray messages =
        QJsonDocument::fromJson(body).object().value(QStringLiteral("messages")).toArray();
    for (qsizetype index = messages.size() - 1; index >= 0; --index) {
        const QJsonObject message = messages.at(index).toObject();
        if (message.value(QStringLiteral("role")).toString() != QLatin1String("user"))
            continue;
        const QJsonValue content = message.value(QStringLiteral("content"));
        if (content.isString())
            return content.toString();
        QStringList parts;
        for (const QJsonValue &part : content.toArray()) {
            const QJsonObject object = part.toObject();
            if (object.value(QStringLiteral("type")).toString() == QLatin1String("text"))
                parts.append(object.value(QStringLiteral("text")).toString());
        }
        return parts.join(QLatin1Char('\n'));
    }
    return {};
}

const config::CannedAnswer *matchCannedAnswer(const config::DegradationConfig &config,
                                              const QString &model, const QString &lastUserMessage)
{
    for (const config::CannedAnswer &answer : config.canned) {
        if (!answer.modelGlob.isEmpty() && !config::globMatches(answer.modelGlob, model))
            continue;
        if (!answer.contains.isEmpty()) {
            const bool found = std::any_of(
                answer.contains.cbegin(), answer.contains.cend(), [&](const QString &word) {
                    return lastUserMessage.contains(word, Qt::CaseInsensitive);
                });
            if (!found)
                continue;
        }
        return &answer;
    }
    return nullptr;
}

namespace {

QJsonObject degradedNote(const SyntheticAnswer &answer)
{
    return {{QStringLiteral("level"), answer.level}, {QStringLiteral("reason"), answer.reason}};
}

QByteArray compact(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

} // namespace

QByteArray SyntheticAnswer::completion() const
{
    const QJsonObject message{{QStringLiteral("role"), QStringLiteral("assistant")},
                              {QStringLiteral("content"), content}};
    const QJsonObject choice{{QStringLiteral("index"), 0},
                             {QStringLiteral("message"), message},
                             {QStringLiteral("finish_reason"), QStringLiteral("stop")}};
    const QJsonObject usage{{QStringLiteral("prompt_tokens"), 0},
                            {QStringLiteral("completion_tokens"), 0},
                            {QStringLiteral("total_tokens"), 0}};
    return compact({{QStringLiteral("id"), QString::fromLatin1(id)},
                    {QStringLiteral("object"), QStringLiteral("chat.completion")},
                    {QStringLiteral("created"), createdSecs},
                    {QStringLiteral("model"), model},
                    {QStringLiteral("choices"), QJsonArray{choice}},
                    {QStringLiteral("usage"), usage},
                    {QStringLiteral("switchyard_degraded"), degradedNote(*this)}});
}

QList<QByteArray> SyntheticAnswer::streamEvents() const
{
    const auto chunk = [this](const QJsonObject &delta, const QJsonValue &finishReason,
                              bool withNote) {
        QJsonObject object{
            {QStringLiteral("id"), QString::fromLatin1(id)},
            {QStringLiteral("object"), QStringLiteral("chat.completion.chunk")},
            {QStringLiteral("created"), createdSecs},
            {QStringLiteral("model"), model},
            {QStringLiteral("choices"),
             QJsonArray{QJsonObject{{QStringLiteral("index"), 0},
                                    {QStringLiteral("delta"), delta},
                                    {QStringLiteral("finish_reason"), finishReason}}}}};
        if (withNote)
            object.insert(QStringLiteral("switchyard_degraded"), degradedNote(*this));
        return compact(object);
    };
    return {chunk({{QStringLiteral("role"), QStringLiteral("assistant")},
                   {QStringLiteral("content"), content}},
                  QJsonValue(QJsonValue::Null), false),
            chunk({}, QStringLiteral("stop"), true), QByteArray("[DONE]")};
}

} // namespace switchyard::resilience
