#include "fleet/shared_spend.h"

#include "fleet/fleet_node.h"
#include "usage/budget_tracker.h"

#include <QSet>

namespace switchyard::fleet {

using namespace Qt::StringLiterals;

namespace {

// The sums of the day's and the month's hash without this node's field (ARGV[1]), as text:
// a Lua number returned bare would lose its cents.
const QByteArray kOthersScript = R"lua(
local function others(key)
  local fields = redis.call('HGETALL', key)
  local sum = 0
  for i = 1, #fields, 2 do
    if fields[i] ~= ARGV[1] then sum = sum + tonumber(fields[i + 1]) end
  end
  return tostring(sum)
end
return {others(KEYS[1]), others(KEYS[2])}
)lua";

QByteArray dollars(double usd)
{
    return QByteArray::number(usd, 'g', 17);
}

} // namespace

SharedSpend::SharedSpend(FleetNode &node, usage::BudgetTracker &budgets, QObject *parent)
    : QObject(parent), m_node(node), m_budgets(budgets)
{
    m_budgets.setSharing(true);
    connect(&m_node, &FleetNode::joined, this, [this] { m_republishAll = true; });
    m_node.onSync([this] { sync(); });
}

QByteArray SharedSpend::hashKey(bool day, bool byTenant, const QString &subject)
{
    // The subject last: whatever characters a tenant's name holds, no two keys collide.
    const QString window = day ? u"day:"_s + m_budgets.dayStart().toString(u"yyyy-MM-dd"_s)
                               : u"month:"_s + m_budgets.monthStart().toString(u"yyyy-MM"_s);
    return m_node.keyPrefix() + "spend:" + window.toUtf8() + (byTenant ? ":tenant:" : ":key:") +
           subject.toUtf8();
}

void SharedSpend::sync()
{
    if (m_republishAll) {
        m_republishAll = false;
        m_budgets.takeChangedOwnSpend(); // all of it goes now
        for (const usage::SubjectSpend &spend : m_budgets.allOwnSpend())
            publish(spend);
    } else {
        for (const usage::SubjectSpend &spend : m_budgets.takeChangedOwnSpend())
            publish(spend);
    }
    readOthers();
}

void SharedSpend::publish(const usage::SubjectSpend &spend)
{
    const QByteArray node = m_node.config().node.toUtf8();
    // Kept a day past the window's end: a node whose clock is a little behind still finds it.
    const qint64 dayExpiry = m_budgets.dayStart().addDays(2).toMSecsSinceEpoch();
    const qint64 monthExpiry = m_budgets.monthStart().addMonths(1).addDays(1).toMSecsSinceEpoch();
    const auto written = [this](const redis::Result &result) {
        if (!result.answered())
            m_republishAll = true; // lost on the way: everything again once the link is back
    };
    redis::Link &link = m_node.link();
    const QByteArray dayKey = hashKey(true, spend.byTenant, spend.subject);
    const QByteArray monthKey = hashKey(false, spend.byTenant, spend.subject);
    link.send({"HSET", dayKey, node, dollars(spend.dayUsd)}, written);
    link.send({"PEXPIREAT", dayKey, QByteArray::number(dayExpiry)}, {});
    link.send({"HSET", monthKey, node, dollars(spend.monthUsd)}, written);
    link.send({"PEXPIREAT", monthKey, QByteArray::number(monthExpiry)}, {});
}

void SharedSpend::readOthers()
{
    // Only what a budget names is read: spend of other subjects matters to no decision here.
    QSet<QPair<bool, QString>> subjects;
    for (const usage::BudgetStatus &status : m_budgets.budgets())
        subjects.insert({status.scope == u"tenant"_s, status.subject});
    const QByteArray node = m_node.config().node.toUtf8();
    for (const auto &[byTenant, subject] : std::as_const(subjects)) {
        m_node.link().send({"EVAL", kOthersScript, "2", hashKey(true, byTenant, subject),
                            hashKey(false, byTenant, subject), node},
                           [this, byTenant, subject](const redis::Result &result) {
                               if (!result.ok() || result.reply.elements.size() != 2)
                                   return;
                               m_budgets.setOthersSpend({byTenant, subject,
                                                         result.reply.elements[0].text.toDouble(),
                                                         result.reply.elements[1].text.toDouble()});
                           });
    }
}

} // namespace switchyard::fleet
