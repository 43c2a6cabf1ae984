#include "http/admin_endpoints.h"

namespace switchyard::http {

using namespace Qt::StringLiterals;

namespace {

QString methodText(QHttpServerRequest::Method method)
{
    switch (method) {
    case QHttpServerRequest::Method::Get:
        return u"GET"_s;
    case QHttpServerRequest::Method::Post:
        return u"POST"_s;
    case QHttpServerRequest::Method::Put:
        return u"PUT"_s;
    case QHttpServerRequest::Method::Delete:
        return u"DELETE"_s;
    case QHttpServerRequest::Method::Patch:
        return u"PATCH"_s;
    default:
        break;
    }
    return u"this method"_s;
}

bool matches(const QStringList &pattern, const QStringList &segments, QStringList *captures)
{
    if (pattern.size() != segments.size())
        return false;
    QStringList found;
    for (qsizetype i = 0; i < pattern.size(); ++i) {
        if (pattern[i] == u"{}"_s) {
            if (segments[i].isEmpty())
                return false;
            found.append(segments[i]);
        } else if (pattern[i] != segments[i]) {
            return false;
        }
    }
    *captures = std::move(found);
    return true;
}

} // namespace

AdminReply AdminReply::json(const QJsonDocument &document, int status)
{
    AdminReply reply;
    reply.status = status;
    reply.body = document;
    return reply;
}

AdminReply AdminReply::error(const protocol::ApiError &error)
{
    AdminReply reply;
    reply.status = error.status;
    reply.body = QJsonDocument::fromJson(error.toJson());
    if (!error.retryAfter.isEmpty())
        reply.headers.append({"Retry-After"_ba, error.retryAfter});
    return reply;
}

void AdminEndpoints::add(QHttpServerRequest::Method method, const QString &pattern, Handler handler)
{
    addAsync(method, pattern,
             [handler = std::move(handler)](const AdminRequest &request,
                                            const QStringList &captures, const Answer &answer) {
                 answer(handler(request, captures));
             });
}

void AdminEndpoints::addAsync(QHttpServerRequest::Method method, const QString &pattern,
                              AsyncHandler handler)
{
    m_endpoints.append({method, pattern.split(u'/'), std::move(handler)});
}

void AdminEndpoints::dispatch(const AdminRequest &request, const Answer &answer) const
{
    const QStringList segments = request.path.split(u'/');
    QStringList captures;
    QStringList allowed;
    for (const Endpoint &endpoint : m_endpoints) {
        if (!matches(endpoint.segments, segments, &captures))
            continue;
        if (endpoint.method == request.method) {
            endpoint.handler(request, captures, answer);
            return;
        }
        allowed.append(methodText(endpoint.method));
    }
    const QString fullPath = u"/admin/v1/"_s + request.path;
    if (allowed.isEmpty()) {
        answer(
            AdminReply::error(protocol::ApiError::notFound(methodText(request.method), fullPath)));
        return;
    }
    AdminReply reply = AdminReply::error(
        protocol::ApiError::methodNotAllowed(methodText(request.method), fullPath));
    reply.headers.append({"Allow"_ba, allowed.join(u", "_s).toLatin1()});
    answer(std::move(reply));
}

} // namespace switchyard::http
