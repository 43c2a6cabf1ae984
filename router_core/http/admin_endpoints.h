#pragma once

#include "protocol/openai_error.h"

#include <QByteArray>
#include <QHttpServerRequest>
#include <QJsonDocument>
#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>
#include <QUrlQuery>
#include <functional>

namespace switchyard::http {

using HeaderList = QList<QPair<QByteArray, QByteArray>>;

struct AdminRequest {
    QHttpServerRequest::Method method = QHttpServerRequest::Method::Unknown;
    QString path;       // below /admin/v1/, e.g. "providers/sim-a/trip"
    QUrlQuery query;    // the URL's query: list filters, paging
    HeaderList headers; // as the client sent them
    QByteArray body;
};

struct AdminReply {
    int status = 200;
    QJsonDocument body;
    HeaderList headers;

    static AdminReply json(const QJsonDocument &document, int status = 200);
    static AdminReply error(const protocol::ApiError &error);
};

// The admin API's one error for a request it cannot read (protocol/openai_error.h).
using protocol::invalidAdminRequest;

// The admin API's table of endpoints under /admin/v1/. Each part of the engine registers its own
// endpoints (providers, simulator, routes, agents...) so this file never grows with them.
// Patterns are path segments where `{}` matches any one segment and is passed to the handler:
// "providers/{}/{}" matches "providers/sim-a/trip" with captures ["sim-a", "trip"].
class AdminEndpoints {
public:
    using Handler = std::function<AdminReply(const AdminRequest &, const QStringList &captures)>;
    // Delivers a reply; an asynchronous handler calls it once, later, on the engine thread.
    using Answer = std::function<void(AdminReply)>;
    // For an endpoint whose work runs elsewhere (a database on its own thread): it returns at
    // once and answers through `answer`, so the engine thread never waits for it.
    using AsyncHandler =
        std::function<void(const AdminRequest &, const QStringList &captures, Answer answer)>;

    void add(QHttpServerRequest::Method method, const QString &pattern, Handler handler);
    void addAsync(QHttpServerRequest::Method method, const QString &pattern, AsyncHandler handler);
    // Unknown paths answer 404 and known paths with another method 405, both in OpenAI's shape.
    // A synchronous handler's reply is delivered before this returns.
    void dispatch(const AdminRequest &request, const Answer &answer) const;

private:
    struct Endpoint {
        QHttpServerRequest::Method method;
        QStringList segments;
        AsyncHandler handler;
    };
    QList<Endpoint> m_endpoints;
};

} // namespace switchyard::http
