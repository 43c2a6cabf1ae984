#include "admin/usage_admin.h"

#include "usage/usage_ledger.h"
#include "usage/usage_query.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace switchyard::admin {

using namespace Qt::StringLiterals;
using Method = QHttpServerRequest::Method;

namespace {

QJsonObject groupJson(const usage::UsageGroup &group)
{
    return QJsonObject{{u"requests"_s, double(group.requests)},
                       {u"input_tokens"_s, double(group.inputTokens)},
                       {u"output_tokens"_s, double(group.outputTokens)},
                       {u"estimated_requests"_s, double(group.estimatedRequests)},
                       {u"estimated_share"_s, group.estimatedShare()},
                       {u"unpriced_requests"_s, double(group.unpricedRequests)},
                       {u"cache_read_tokens"_s, double(group.cacheReadTokens)},
                       {u"cache_write_tokens"_s, double(group.cacheWriteTokens)},
                       {u"cost_usd"_s, group.costUsd},
                       {u"cache_saved_usd"_s, group.cacheSavedUsd},
                       {u"response_cache_hits"_s, double(group.responseCacheHits)},
                       {u"response_cache_misses"_s, double(group.responseCacheMisses)},
                       {u"response_cache_hit_ratio"_s, group.responseCacheHitRatio()},
                       {u"response_cache_saved_usd"_s, group.responseCacheSavedUsd}};
}

} // namespace

QJsonObject usageReportJson(const usage::UsageReport &report, const usage::UsageLedgerState &ledger)
{
    QJsonArray groupBy;
    for (usage::UsageDimension dimension : report.query.groupBy)
        groupBy.append(usage::dimensionName(dimension));
    QJsonArray data;
    usage::UsageGroup total;
    for (const usage::UsageGroup &group : report.groups) {
        QJsonObject row = groupJson(group);
        for (qsizetype i = 0; i < group.keys.size() && i < groupBy.size(); ++i)
            row.insert(groupBy[i].toString(), group.keys[i]);
        data.append(row);
        total.addSums(group);
    }
    return QJsonObject{
        {u"object"_s, u"usage.report"_s},
        {u"currency"_s, u"USD"_s},
        {u"group_by"_s, groupBy},
        {u"from"_s, report.query.from.toString(Qt::ISODate)},
        {u"to"_s, report.query.to.toString(Qt::ISODate)},
        {u"data"_s, data},
        {u"total"_s, groupJson(total)},
        {u"rows_in_memory"_s, double(report.rowsInMemory)},
        {u"fleet_nodes"_s, QJsonArray::fromStringList(report.fleetNodes)},
        {u"fleet_problem"_s,
         report.fleetProblem.isEmpty() ? QJsonValue() : QJsonValue(report.fleetProblem)},
        {u"problem"_s, report.problem.isEmpty() ? QJsonValue() : QJsonValue(report.problem)},
        {u"ledger"_s,
         QJsonObject{{u"persistent"_s, ledger.persistent},
                     {u"writable"_s, ledger.writable},
                     {u"problem"_s, ledger.problem.isEmpty() ? QJsonValue() : ledger.problem},
                     {u"rows_in_memory"_s, double(ledger.rowsInMemory)},
                     {u"memory_capacity_rows"_s, ledger.memoryCapacityRows},
                     {u"dropped_rows"_s, double(ledger.droppedRows)},
                     {u"written_rows"_s, double(ledger.writtenRows)}}}};
}

QJsonObject budgetStatusJson(const usage::BudgetStatus &status)
{
    return QJsonObject{{u"name"_s, status.name},
                       {u"scope"_s, status.scope},
                       {u"subject"_s, status.subject},
                       {u"window"_s, status.window},
                       {u"limit_usd"_s, status.limitUsd},
                       {u"spent_usd"_s, status.spentUsd},
                       {u"fraction"_s, status.fraction()},
                       {u"resets_at"_s, status.resetsAt.toString(Qt::ISODate)}};
}

void registerUsageAdmin(http::AdminEndpoints &admin, usage::UsageLedger &ledger,
                        usage::BudgetTracker &budgets, QObject *context, const timing::Clock &clock,
                        UsageWidening widen)
{
    admin.addAsync(
        Method::Get, u"usage"_s,
        [&ledger, context, &clock, widen](const http::AdminRequest &request, const QStringList &,
                                          const http::AdminEndpoints::Answer &answer) {
            const auto parsed = usage::parseUsageQuery(request.query, clock.utcNow());
            if (const auto *problem = std::get_if<usage::QueryProblem>(&parsed)) {
                answer(http::AdminReply::error(
                    http::invalidAdminRequest(problem->message, problem->param)));
                return;
            }
            ledger.query(std::get<usage::UsageQuery>(parsed), context,
                         [answer, &ledger, widen](usage::UsageReport report) {
                             const auto reply = [answer, &ledger](const usage::UsageReport &whole) {
                                 answer(http::AdminReply::json(
                                     QJsonDocument(usageReportJson(whole, ledger.state()))));
                             };
                             if (widen)
                                 widen(std::move(report), reply);
                             else
                                 reply(report);
                         });
        });
    admin.add(Method::Get, u"usage/budgets"_s,
              [&budgets](const http::AdminRequest &, const QStringList &) {
                  QJsonArray data;
                  for (const usage::BudgetStatus &status : budgets.budgets())
                      data.append(budgetStatusJson(status));
                  return http::AdminReply::json(
                      QJsonDocument(QJsonObject{{u"object"_s, u"list"_s}, {u"data"_s, data}}));
              });
}

} // namespace switchyard::admin
