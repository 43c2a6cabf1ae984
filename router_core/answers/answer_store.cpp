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
    return QJsonDocument(QJsonObject{{u"status"_s, answer.status},
                                     {u"headers"_s, headers},
                                     {u"content_type"_s, QString::fromLatin1(answer.contentType)},
                                     {u"streamed"_s, answer.streamed},
                                     {u"request_id"_s, QString::fromLatin1(answer.requestId)},
                                     {u"body"_s, QString::fromLatin1(answer.body.toBase64())}})
        .toJson(QJsonDocument::Compact);
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
    return answer;
}

} // namespace switchyard::answers
