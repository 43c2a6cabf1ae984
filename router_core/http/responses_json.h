#pragma once

#include "protocol/openai_error.h"
#include "responses/response_store.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

// The small JSON helpers the Responses service's two halves share (responses_service.cpp, the
// node's own; responses_fleet.cpp, the fleet's).
namespace switchyard::http::responses_json {

using namespace Qt::StringLiterals;
using responses::LoggedEvent;
using responses::Status;

inline QByteArray compact(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}
inline QByteArray compact(const QJsonArray &array)
{
    return QJsonDocument(array).toJson(QJsonDocument::Compact);
}
inline QJsonObject objectOf(const QByteArray &json)
{
    return QJsonDocument::fromJson(json).object();
}
inline QJsonArray arrayOf(const QByteArray &json)
{
    return QJsonDocument::fromJson(json).array();
}

inline protocol::ApiError responseNotFound(const QByteArray &id)
{
    protocol::ApiError error;
    error.status = 404;
    error.type = u"invalid_request_error"_s;
    error.message = u"No response found with id '%1'."_s.arg(QString::fromUtf8(id));
    error.code = u"response_not_found"_s;
    return error;
}

inline LoggedEvent loggedEvent(const QString &type, QJsonObject data, qint64 sequenceNumber)
{
    data.insert(u"type"_s, type);
    data.insert(u"sequence_number"_s, sequenceNumber);
    return {sequenceNumber, type.toUtf8(), compact(data)};
}

inline QByteArray wireOf(const LoggedEvent &event)
{
    return "event: " + event.type + "\ndata: " + event.data + "\n\n";
}

inline QJsonObject withStatus(const QByteArray &responseJson, Status status)
{
    QJsonObject response = objectOf(responseJson);
    response.insert(u"status"_s, responses::statusName(status));
    return response;
}

// A background request a fleet node cannot queue: its Redis is out of reach. Nothing is queued
// here instead (docs/fleet.md, "The queue", says why).
inline protocol::ApiError queueUnavailable(const QString &problem)
{
    protocol::ApiError error = protocol::ApiError::serviceUnavailable(
        u"Background responses are queued in the fleet's Redis, which this node cannot reach "
        u"(%1); nothing was queued. Retry shortly."_s.arg(problem));
    error.code = u"queue_unavailable"_s;
    error.retryAfter = "5";
    return error;
}

} // namespace switchyard::http::responses_json
