#include "admin/queue_admin.h"

#include "http/responses_service.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace switchyard::admin {

using namespace Qt::StringLiterals;
using Method = QHttpServerRequest::Method;

namespace {

// The answer to an operator's command on task `id`: the task's new status, or the refusal.
void answerCommand(const http::AdminEndpoints::Answer &answer, const QString &id,
                   const QString &status, const std::optional<protocol::ApiError> &error)
{
    if (error)
        return answer(http::AdminReply::error(*error));
    answer(http::AdminReply::json(QJsonDocument(
        QJsonObject{{u"id"_s, id}, {u"object"_s, u"response"_s}, {u"status"_s, status}})));
}

} // namespace

void registerQueueAdmin(http::AdminEndpoints &endpoints, http::ResponsesService &responses)
{
    endpoints.addAsync(Method::Get, u"queue"_s,
                       [&responses](const http::AdminRequest &, const QStringList &,
                                    http::AdminEndpoints::Answer answer) {
                           responses.queueReport([answer = std::move(answer)](QJsonObject report) {
                               report.insert(u"object"_s, u"queue"_s);
                               answer(http::AdminReply::json(QJsonDocument(report)));
                           });
                       });
    endpoints.addAsync(Method::Post, u"queue/{}/cancel"_s,
                       [&responses](const http::AdminRequest &, const QStringList &captures,
                                    http::AdminEndpoints::Answer answer) {
                           const QString id = captures.at(0);
                           responses.cancelTask(
                               id.toUtf8(), [answer = std::move(answer), id](auto error) {
                                   answerCommand(answer, id, u"cancelled"_s, error);
                               });
                       });
    // A fleet's dead letters (docs/fleet.md, "The queue").
    endpoints.addAsync(Method::Post, u"queue/{}/retry"_s,
                       [&responses](const http::AdminRequest &, const QStringList &captures,
                                    http::AdminEndpoints::Answer answer) {
                           const QString id = captures.at(0);
                           responses.retryDeadLetter(
                               id.toUtf8(), [answer = std::move(answer), id](auto error) {
                                   answerCommand(answer, id, u"queued"_s, error);
                               });
                       });
    endpoints.addAsync(Method::Post, u"queue/{}/discard"_s,
                       [&responses](const http::AdminRequest &, const QStringList &captures,
                                    http::AdminEndpoints::Answer answer) {
                           const QString id = captures.at(0);
                           responses.discardDeadLetter(
                               id.toUtf8(), [answer = std::move(answer), id](auto error) {
                                   answerCommand(answer, id, u"failed"_s, error);
                               });
                       });
}

} // namespace switchyard::admin
