#include "answers/answer_store.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace switchyard::answers {

using namespace Qt::StringLiterals;

qint64 StoredAnswer::approximateBytes() const
{
    qint64 bytes = body.size() + contentType.size() + requestId.size();
    for (const auto &[name, value] : headers)
        bytes += name.size() + value.size();
    return bytes;
}

QByteArray encodeAnswer(const StoredAnswer &answer)
{
    QJsonArray headers;
    for (const auto &[name, value] : answer.headers)
        headers.append(QJsonArray{QString::fromLatin1(name), QString::fromLatin1(value)});
    // The body as base64: an answer's bytes go back exactly as they were, whatever they are.
    QJsonObject object{{u"status"_s, answer.status},
                       {u"headers"_s, headers},
                       {u"content_type"_s, QString::fromLatin1(answer.contentType)},
                       {u"streamed"_s, answer.streamed},
                       {u"request_id"_s, QString::fromLatin1(answer.requestId)},
                       {u"body"_s, QString::fromLatin1(answer.body.toBase64())}};
    // What it used, only when something was counted (the response cache's answers).
    if (!answer.model.isEmpty()) {
        object.insert(u"usage"_s, QJsonObject{{u"model"_s, answer.model},
                                              {u"provider"_s, answer.provider},
                                              {u"input_tokens"_s, answer.inputTokens},
                                              {u"output_tokens"_s, answer.outputTokens},
                                              {u"cost_usd"_s, answer.costUsd},
                                              {u"priced"_s, answer.priced}});
    }
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

std::optional<StoredAnswer> decodeAnswer(const QByteArray &bytes)
{
    const QJsonDocument document = QJsonDocument::fromJson(bytes);
    if (!document.isObject())
        return std::nullopt;
    const QJsonObject object = document.object();
    const int status = object.value(u"status"_s).toInt(0);
    if (status < 100 || status > 599 || !object.value(u"body"_s).isString())
        return std::nullopt;
    StoredAnswer answer;
    answer.status = status;
    for (const QJsonValue &header : object.value(u"headers"_s).toArray()) {
        const QJsonArray pair = header.toArray();
        if (pair.size() != 2)
            return std::nullopt;
        answer.headers.append({pair.at(0).toString().toLatin1(), pair.at(1).toString().toLatin1()});
    }
    answer.contentType = object.value(u"content_type"_s).toString().toLatin1();
    answer.streamed = object.value(u"streamed"_s).toBool();
    answer.requestId = object.value(u"request_id"_s).toString().toLatin1();
    const auto body = QByteArray::fromBase64Encoding(object.value(u"body"_s).toString().toLatin1(),
                                                     QByteArray::AbortOnBase64DecodingErrors);
    if (!body)
        return std::nullopt;
    answer.body = *body;
    const QJsonObject usage = object.value(u"usage"_s).toObject();
    answer.model = usage.value(u"model"_s).toString();
    answer.provider = usage.value(u"provider"_s).toString();
    answer.inputTokens = usage.value(u"input_tokens"_s).toInteger();
    answer.outputTokens = usage.value(u"output_tokens"_s).toInteger();
    answer.costUsd = usage.value(u"cost_usd"_s).toDouble();
    answer.priced = usage.value(u"priced"_s).toBool();
    return answer;
}

} // namespace switchyard::answers
