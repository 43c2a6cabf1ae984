#include "admin/queue_admin.h"

#include "http/responses_service.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace switchyard::admin {

using namespace Qt::StringLiterals;
using Method = QHttpServerRequest::Method;

void registerQueueAdmin(http::AdminEndpoints &endpoints, http::ResponsesService &responses)
{
    endpoints.add(Method::Get, u"queue"_s,
                  [&responses](const http::AdminRequest &, const QStringList &) {
                      QJsonObject report = responses.queueReport();
                      report.insert(u"object"_s, u"queue"_s);
                      return http::AdminReply::json(QJsonDocument(report));
                  });
    endpoints.add(
        Method::Post, u"queue/{}/cancel"_s,
        [&responses](const http::AdminRequest &, const QStringList &captures) {
            const QString &id = captures.at(0);
            if (!responses.cancelTask(id.toUtf8()))
                return http::AdminReply::error(http::ResponsesService::taskNotFound(id));
            return http::AdminReply::json(QJsonDocument(QJsonObject{
                {u"id"_s, id}, {u"object"_s, u"response"_s}, {u"status"_s, u"cancelled"_s}}));
        });
}

} // namespace switchyard::admin
