#include "responses/fleet_responses.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QRandomGenerator>

Q_DECLARE_LOGGING_CATEGORY(lcResponses)

namespace switchyard::responses {

using namespace Qt::StringLiterals;

namespace {

// What every script shares. ARGV[1] is always the fleet's key prefix: the scripts name their keys
// themselves, which a single Redis allows (a Redis Cluster would not; docs/fleet.md says so).
const QByteArray kCommon = R"(
local p = ARGV[1]
local prios = {'high', 'normal', 'low'}
local function rkey(id) return p .. 'resp:' .. id end
local function ekey(id) return p .. 'resp:' .. id .. ':events' end
local function lkey(id) return p .. 'queue:lock:' .. id end
local function now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function ensureGroup(stream)
  redis.pcall('XGROUP', 'CREATE', stream, 'workers', '0', 'MKSTREAM')
end
local function unqueue(id)
  for _, q in ipairs(prios) do redis.call('ZREM', p .. 'queue:waiting:' .. q, id) end
end
local function release(tenant)
  if redis.call('HINCRBY', p .. 'queue:active', tenant, -1) <= 0 then
    redis.call('HDEL', p .. 'queue:active', tenant)
  end
end
-- Whether the run of `token` still owns the task: it holds the lock, or the lock lapsed (Redis was
-- away, or restarted) and no other run took the task since (each take writes its token).
local function holds(id, token)
  local lock = redis.call('GET', lkey(id))
  if lock then return lock == token end
  local r = rkey(id)
  return redis.call('HGET', r, 'run_token') == token and redis.call('HGET', r, 'status') == 'in_progress'
end
-- Appends ARGV[first..] to the events as numbers `from` onwards: the log must have `from` of them
-- already (the run that writes is the one that read the log). A write sent again after its answer
-- was lost finds some of them there, the same: those are not appended twice.
local function push(id, from, first)
  local e = ekey(id)
  local have = redis.call('LLEN', e)
  if have < from then return false end
  for i = first, #ARGV do
    local at = from + i - first
    if at >= have then
      redis.call('RPUSH', e, ARGV[i])
    elseif redis.call('LINDEX', e, at) ~= ARGV[i] then
      return false
    end
  end
  return true
end
local function drop(id)
  local size = redis.call('HGET', p .. 'responses:sizes', id)
  if size then
    redis.call('DECRBY', p .. 'responses:bytes', tonumber(size))
    redis.call('HDEL', p .. 'responses:sizes', id)
  end
  redis.call('ZREM', p .. 'responses:finished', id)
  redis.call('DEL', rkey(id), ekey(id))
end
-- A finished record joins the bounds; returns how many older ones were dropped by age and by
-- bytes. Records expire by themselves too (PEXPIRE): this keeps the byte count true.
local function account(id, bytes, t, retention, maxBytes)
  local sizes, fin = p .. 'responses:sizes', p .. 'responses:finished'
  local old = tonumber(redis.call('HGET', sizes, id) or '0')
  redis.call('HSET', sizes, id, bytes)
  redis.call('ZADD', fin, t, id)
  local sum = redis.call('INCRBY', p .. 'responses:bytes', bytes - old)
  local byAge, byBytes = 0, 0
  for _, gone in ipairs(redis.call('ZRANGEBYSCORE', fin, '-inf', t - retention, 'LIMIT', 0, 100)) do
    drop(gone)
    byAge = byAge + 1
  end
  sum = tonumber(redis.call('GET', p .. 'responses:bytes') or '0')
  while sum > maxBytes do
    local first = redis.call('ZRANGE', fin, 0, 0)[1]
    if not first or first == id then break end
    drop(first)
    byBytes = byBytes + 1
    sum = tonumber(redis.call('GET', p .. 'responses:bytes') or '0')
  end
  return {byAge, byBytes}
end
)";

// ARGV: prefix, id, priority, tenant, max per tenant, record, response, event 0, event 1.
const QByteArray kEnqueue = kCommon + R"(
local id, prio, tenant = ARGV[2], ARGV[3], ARGV[4]
local active = tonumber(redis.call('HGET', p .. 'queue:active', tenant) or '0')
if active >= tonumber(ARGV[5]) then return {0, active} end
local r = rkey(id)
redis.call('HSET', r, 'record', ARGV[6], 'status', 'queued', 'response', ARGV[7], 'runs', 0,
           'tenant', tenant, 'priority', prio, 'node', '', 'last_error', '')
redis.call('DEL', ekey(id))
redis.call('RPUSH', ekey(id), ARGV[8], ARGV[9])
redis.call('HINCRBY', p .. 'queue:active', tenant, 1)
redis.call('ZADD', p .. 'queue:waiting:' .. prio, now(), id)
local stream = p .. 'queue:' .. prio
ensureGroup(stream)
redis.call('XADD', stream, '*', 'id', id)
return {1, active + 1}
)";

// ARGV: prefix, id, record, status, response, retention, max bytes, bytes.
const QByteArray kKeep = kCommon + R"(
local r = rkey(ARGV[2])
redis.call('HSET', r, 'record', ARGV[3], 'status', ARGV[4], 'response', ARGV[5], 'runs', 0)
redis.call('PEXPIRE', r, ARGV[6])
return account(ARGV[2], tonumber(ARGV[8]), now(), tonumber(ARGV[6]), tonumber(ARGV[7]))
)";

// ARGV: prefix, id.
const QByteArray kFetch = kCommon + R"(
return {redis.call('HGETALL', rkey(ARGV[2])), redis.call('LRANGE', ekey(ARGV[2]), 0, -1)}
)";

// ARGV: prefix, id, first index.
const QByteArray kReadEvents = kCommon + R"(
local status = redis.call('HGET', rkey(ARGV[2]), 'status')
if not status then return {} end
return {status, redis.call('LRANGE', ekey(ARGV[2]), ARGV[3], -1)}
)";

// ARGV: prefix, id, cancelled response, retention, bytes, max bytes.
const QByteArray kCancel = kCommon + R"(
local id = ARGV[2]
local r = rkey(id)
local status = redis.call('HGET', r, 'status')
if not status then return {'missing'} end
if status ~= 'queued' and status ~= 'in_progress' then return {'finished', status} end
local t = now()
redis.call('HSET', r, 'status', 'cancelled', 'response', ARGV[3], 'finished_ms', t)
unqueue(id)
redis.call('HDEL', p .. 'queue:running', id)
redis.call('DEL', lkey(id))
release(redis.call('HGET', r, 'tenant') or '')
redis.call('PEXPIRE', r, ARGV[4])
redis.call('PEXPIRE', ekey(id), ARGV[4])
account(id, tonumber(ARGV[5]), t, tonumber(ARGV[4]), tonumber(ARGV[6]))
return {'cancelled'}
)";

// ARGV: prefix, id.
const QByteArray kRemove = kCommon + R"(
local id = ARGV[2]
local r = rkey(id)
local status = redis.call('HGET', r, 'status')
if not status then return 0 end
if status == 'queued' or status == 'in_progress' then
  unqueue(id)
  redis.call('HDEL', p .. 'queue:running', id)
  release(redis.call('HGET', r, 'tenant') or '')
end
local dead = redis.call('HGET', p .. 'queue:dead:index', id)
if dead then
  redis.call('XDEL', p .. 'queue:dead', dead)
  redis.call('HDEL', p .. 'queue:dead:index', id)
end
redis.call('DEL', lkey(id))
drop(id)
return 1
)";

// ARGV: prefix, node, free workers, visibility (ms), token prefix.
const QByteArray kTake = kCommon + R"(
local node, free, vis, tok = ARGV[2], tonumber(ARGV[3]), ARGV[4], ARGV[5]
local out, n = {}, 0
for _, prio in ipairs(prios) do
  if free <= 0 then break end
  local stream = p .. 'queue:' .. prio
  ensureGroup(stream)
  local batch = {}
  -- XAUTOCLAIM looks at ten times COUNT pending entries a call: follow its cursor past the runs
  -- being renewed, so a dead node's entry further back is reached too.
  local cursor = '0-0'
  for _ = 1, 16 do
    local claimed = redis.call('XAUTOCLAIM', stream, 'workers', node, vis, cursor, 'COUNT',
                               free - #batch)
    for _, e in ipairs(claimed[2]) do batch[#batch + 1] = {e, 1} end
    cursor = claimed[1]
    if cursor == '0-0' or #batch >= free then break end
  end
  if #batch < free then
    local fresh = redis.call('XREADGROUP', 'GROUP', 'workers', node, 'COUNT', free - #batch,
                             'STREAMS', stream, '>')
    if fresh then for _, e in ipairs(fresh[1][2]) do batch[#batch + 1] = {e, 0} end end
  end
  for _, item in ipairs(batch) do
    local entry, fields = item[1][1], item[1][2]
    local id = fields and fields[2]
    local status = id and redis.call('HGET', rkey(id), 'status')
    if status ~= 'queued' and status ~= 'in_progress' then
      redis.call('XACK', stream, 'workers', entry)
      redis.call('XDEL', stream, entry)
    elseif free > 0 and redis.call('EXISTS', lkey(id)) == 0 then
      n = n + 1
      local token = tok .. n
      local r = rkey(id)
      redis.call('SET', lkey(id), token, 'PX', vis)
      local lastNode = redis.call('HGET', r, 'node') or ''
      local lastError = redis.call('HGET', r, 'last_error') or ''
      -- Taken over: its node held it running and stopped renewing it. A task that waited out a
      -- retry's backoff comes back through XAUTOCLAIM too, queued.
      local takenOver = (item[2] == 1 and status == 'in_progress') and 1 or 0
      redis.call('HINCRBY', r, 'runs', 1)
      redis.call('HSET', r, 'status', 'in_progress', 'node', node, 'started_ms', now(),
                 'run_token', token)
      redis.call('HSET', p .. 'queue:running', id, node)
      unqueue(id)
      out[#out + 1] = {token, stream, entry, takenOver, lastNode, lastError,
                       redis.call('HGETALL', r), redis.call('LRANGE', ekey(id), 0, -1)}
      free = free - 1
    end
  end
end
return out
)";

// ARGV: prefix, id, token, visibility, from, response (empty: unchanged), events...
const QByteArray kAppend = kCommon + R"(
if not holds(ARGV[2], ARGV[3]) then return 0 end
if not push(ARGV[2], tonumber(ARGV[5]), 7) then return 0 end
if ARGV[6] ~= '' then redis.call('HSET', rkey(ARGV[2]), 'response', ARGV[6]) end
redis.call('SET', lkey(ARGV[2]), ARGV[3], 'PX', ARGV[4]) -- taken again if it had lapsed
return 1
)";

// ARGV: prefix, id, token, status, response, retention, max bytes, bytes, stream, entry, from,
// events...
const QByteArray kFinish = kCommon + R"(
local id = ARGV[2]
if not holds(id, ARGV[3]) then return {0} end
if not push(id, tonumber(ARGV[11]), 12) then return {0} end
local r, t = rkey(id), now()
redis.call('HSET', r, 'status', ARGV[4], 'response', ARGV[5], 'finished_ms', t, 'last_error', '')
redis.call('DEL', lkey(id))
redis.call('HDEL', p .. 'queue:running', id)
release(redis.call('HGET', r, 'tenant') or '')
redis.call('XACK', ARGV[9], 'workers', ARGV[10])
redis.call('XDEL', ARGV[9], ARGV[10])
redis.call('PEXPIRE', r, ARGV[6])
redis.call('PEXPIRE', ekey(id), ARGV[6])
local expired = account(id, tonumber(ARGV[8]), t, tonumber(ARGV[6]), tonumber(ARGV[7]))
return {1, expired[1], expired[2]}
)";

// ARGV: prefix, id, token, stream, entry, idle (ms), node, counts as a run (1/0), last error,
// response, from, events...
// The entry stays pending on this node with its idle time set so that any node's take claims it
// once `visibility - idle` has passed: the wait survives this node.
const QByteArray kRequeue = kCommon + R"(
local id = ARGV[2]
if not holds(id, ARGV[3]) then return 0 end
if not push(id, tonumber(ARGV[11]), 12) then return 0 end
local r = rkey(id)
redis.call('HSET', r, 'status', 'queued', 'response', ARGV[10], 'last_error', ARGV[9])
if ARGV[8] == '0' then redis.call('HINCRBY', r, 'runs', -1) end
redis.call('DEL', lkey(id))
redis.call('HDEL', p .. 'queue:running', id)
redis.call('ZADD', p .. 'queue:waiting:' .. (redis.call('HGET', r, 'priority') or 'normal'), now(), id)
redis.call('XCLAIM', ARGV[4], 'workers', ARGV[7], 0, ARGV[5], 'IDLE', ARGV[6], 'JUSTID')
return 1
)";

// ARGV: prefix, id, token, stream, entry, response, error code, error message, node, from,
// most dead letters, model, retention, bytes, max bytes, events...
const QByteArray kDeadLetter = kCommon + R"(
local id = ARGV[2]
if not holds(id, ARGV[3]) then return 0 end
if not push(id, tonumber(ARGV[10]), 16) then return 0 end
local r, t = rkey(id), now()
redis.call('HSET', r, 'status', 'failed', 'response', ARGV[6], 'finished_ms', t,
           'last_error', ARGV[7] .. ': ' .. ARGV[8])
redis.call('DEL', lkey(id))
redis.call('HDEL', p .. 'queue:running', id)
local tenant = redis.call('HGET', r, 'tenant') or ''
release(tenant)
redis.call('XACK', ARGV[4], 'workers', ARGV[5])
redis.call('XDEL', ARGV[4], ARGV[5])
-- Kept for the retention and within the bytes bound, like any finished response, unless retried
-- before.
redis.call('PEXPIRE', r, ARGV[13])
redis.call('PEXPIRE', ekey(id), ARGV[13])
account(id, tonumber(ARGV[14]), t, tonumber(ARGV[13]), tonumber(ARGV[15]))
local dead = p .. 'queue:dead'
local entry = redis.call('XADD', dead, '*', 'id', id, 'code', ARGV[7], 'message', ARGV[8],
                         'runs', redis.call('HGET', r, 'runs') or '0', 'node', ARGV[9], 'at', t,
                         'priority', redis.call('HGET', r, 'priority') or 'normal',
                         'tenant', tenant, 'model', ARGV[12])
redis.call('HSET', dead .. ':index', id, entry)
while redis.call('XLEN', dead) > tonumber(ARGV[11]) do
  local oldest = redis.call('XRANGE', dead, '-', '+', 'COUNT', 1)[1]
  redis.call('XDEL', dead, oldest[1])
  redis.call('HDEL', dead .. ':index', oldest[2][2])
end
return 1
)";

// ARGV: prefix, node, visibility, then id, token, stream, entry for each run.
const QByteArray kRenew = kCommon + R"(
local out = {}
for i = 4, #ARGV, 4 do
  local id, token, stream, entry = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  if holds(id, token) then
    redis.call('SET', lkey(id), token, 'PX', ARGV[3]) -- taken again if it had lapsed
    redis.call('XCLAIM', stream, 'workers', ARGV[2], 0, entry, 'JUSTID')
    out[#out + 1] = 'held'
  else
    local status = redis.call('HGET', rkey(id), 'status')
    if not status or status == 'cancelled' then
      redis.call('XACK', stream, 'workers', entry)
      redis.call('XDEL', stream, entry)
      out[#out + 1] = status and 'cancelled' or 'gone'
    else
      out[#out + 1] = 'lost'
    end
  end
end
return out
)";

// ARGV: prefix, most dead letters listed.
const QByteArray kReport = kCommon + R"(
local out = {}
for _, prio in ipairs(prios) do
  local w = p .. 'queue:waiting:' .. prio
  local oldest = redis.call('ZRANGE', w, 0, 0, 'WITHSCORES')
  out[#out + 1] = {redis.call('ZCARD', w), oldest[2] or '0'}
end
out[#out + 1] = redis.call('HGETALL', p .. 'queue:running')
out[#out + 1] = redis.call('HGETALL', p .. 'queue:active')
out[#out + 1] = redis.call('XLEN', p .. 'queue:dead')
out[#out + 1] = redis.call('XREVRANGE', p .. 'queue:dead', '+', '-', 'COUNT', ARGV[2])
out[#out + 1] = now()
return out
)";

// ARGV: prefix, id, queued response, from, events...
const QByteArray kRetryDead = kCommon + R"(
local id = ARGV[2]
local index = p .. 'queue:dead:index'
local entry = redis.call('HGET', index, id)
if not entry then return 0 end
local r = rkey(id)
if redis.call('EXISTS', r) == 0 then
  redis.call('HDEL', index, id)
  redis.call('XDEL', p .. 'queue:dead', entry)
  return 0
end
if not push(id, tonumber(ARGV[4]), 5) then return -1 end
redis.call('HDEL', index, id)
redis.call('XDEL', p .. 'queue:dead', entry)
-- Unfinished again: out of the bounds until it finishes.
local size = redis.call('HGET', p .. 'responses:sizes', id)
if size then
  redis.call('DECRBY', p .. 'responses:bytes', tonumber(size))
  redis.call('HDEL', p .. 'responses:sizes', id)
end
redis.call('ZREM', p .. 'responses:finished', id)
redis.call('HSET', r, 'status', 'queued', 'response', ARGV[3], 'runs', 0, 'last_error', '',
           'node', '')
redis.call('PERSIST', r)
redis.call('PERSIST', ekey(id))
local tenant = redis.call('HGET', r, 'tenant') or ''
redis.call('HINCRBY', p .. 'queue:active', tenant, 1)
local prio = redis.call('HGET', r, 'priority') or 'normal'
redis.call('ZADD', p .. 'queue:waiting:' .. prio, now(), id)
local stream = p .. 'queue:' .. prio
ensureGroup(stream)
redis.call('XADD', stream, '*', 'id', id)
return 1
)";

// ARGV: prefix, id.
const QByteArray kDiscardDead = kCommon + R"(
local index = p .. 'queue:dead:index'
local entry = redis.call('HGET', index, ARGV[2])
if not entry then return 0 end
redis.call('HDEL', index, ARGV[2])
redis.call('XDEL', p .. 'queue:dead', entry)
return 1
)";

// An event as the log holds it: its type, a newline, its JSON (with its sequence number, which
// is also its index in the list).
QByteArray eventText(const LoggedEvent &event)
{
    return event.type + '\n' + event.data;
}

LoggedEvent eventFrom(const QByteArray &text, qint64 sequenceNumber)
{
    const qsizetype newline = text.indexOf('\n');
    if (newline < 0)
        return {sequenceNumber, QByteArray(), text};
    return {sequenceNumber, text.left(newline), text.mid(newline + 1)};
}

QHash<QByteArray, QByteArray> hashOf(const redis::Reply &reply)
{
    QHash<QByteArray, QByteArray> fields;
    for (qsizetype index = 0; index + 1 < reply.elements.size(); index += 2)
        fields.insert(reply.elements.at(index).text, reply.elements.at(index + 1).text);
    return fields;
}

// The record from its hash and its events; false when the hash is not one.
bool readRecord(const redis::Reply &hash, const redis::Reply &events, StoredResponse *record)
{
    const QHash<QByteArray, QByteArray> fields = hashOf(hash);
    if (!recordFromJson(fields.value("record"), record))
        return false;
    const std::optional<Status> status =
        statusFromName(QString::fromLatin1(fields.value("status")));
    if (!status)
        return false;
    record->status = *status;
    record->response = fields.value("response");
    record->runs = fields.value("runs").toInt();
    record->startedAtMs = fields.value("started_ms").toLongLong();
    record->finishedAtMs = fields.value("finished_ms").toLongLong();
    record->events.clear();
    for (qsizetype index = 0; index < events.elements.size(); ++index)
        record->events.append(eventFrom(events.elements.at(index).text, index));
    return true;
}

QByteArray number(qint64 value)
{
    return QByteArray::number(value);
}

void addEvents(QList<QByteArray> &arguments, const QList<LoggedEvent> &events)
{
    for (const LoggedEvent &event : events)
        arguments.append(eventText(event));
}

// The first sequence number of `events`, which must be the log's length when they are added.
QByteArray firstOf(const QList<LoggedEvent> &events, const StoredResponse &record)
{
    return number(events.isEmpty() ? record.nextSequenceNumber()
                                   : events.constFirst().sequenceNumber);
}

} // namespace

QByteArray recordToJson(const StoredResponse &record)
{
    return QJsonDocument(
               QJsonObject{
                   {u"id"_s, QString::fromLatin1(record.id)},
                   {u"owner"_s, record.owner},
                   {u"tenant"_s, record.tenant},
                   {u"key_id"_s, record.keyId},
                   {u"model"_s, record.model},
                   {u"background"_s, record.background},
                   {u"priority"_s, int(record.priority)},
                   {u"created_at_ms"_s, record.createdAtMs},
                   {u"expires_at_ms"_s, record.expiresAtMs},
                   {u"request"_s, QString::fromUtf8(record.request)},
                   {u"headers"_s, QString::fromUtf8(record.headers)},
                   {u"previous_response_id"_s, QString::fromLatin1(record.previousResponseId)},
                   {u"history"_s, QString::fromUtf8(record.history)},
                   {u"input_items"_s, QString::fromUtf8(record.inputItems)},
               })
        .toJson(QJsonDocument::Compact);
}

bool recordFromJson(const QByteArray &json, StoredResponse *record)
{
    const QJsonObject object = QJsonDocument::fromJson(json).object();
    if (object.isEmpty() || !object.value(u"id"_s).isString())
        return false;
    record->id = object.value(u"id"_s).toString().toLatin1();
    record->owner = object.value(u"owner"_s).toString();
    record->tenant = object.value(u"tenant"_s).toString();
    record->keyId = object.value(u"key_id"_s).toString();
    record->model = object.value(u"model"_s).toString();
    record->background = object.value(u"background"_s).toBool();
    record->priority = Priority(std::clamp(object.value(u"priority"_s).toInt(1), 0, 2));
    record->createdAtMs = object.value(u"created_at_ms"_s).toInteger();
    record->expiresAtMs = object.value(u"expires_at_ms"_s).toInteger();
    record->request = object.value(u"request"_s).toString().toUtf8();
    record->headers = object.value(u"headers"_s).toString().toUtf8();
    record->previousResponseId = object.value(u"previous_response_id"_s).toString().toLatin1();
    record->history = object.value(u"history"_s).toString().toUtf8();
    record->inputItems = object.value(u"input_items"_s).toString().toUtf8();
    return true;
}

namespace {
// What a script that answers 1 (done) or 0 (nothing to do it on) made of the command.
FleetResponses::Answer answerOf(const redis::Result &result)
{
    FleetResponses::Answer answer;
    if (!result.ok())
        answer.problem = result.problem();
    else
        answer.outcome = result.reply.integer == 1 ? FleetResponses::Outcome::Done
                                                   : FleetResponses::Outcome::Refused;
    return answer;
}
} // namespace

FleetResponses::FleetResponses(redis::Link &link, QByteArray keyPrefix, QByteArray node,
                               QObject *parent)
    : QObject(parent), m_link(link), m_prefix(std::move(keyPrefix)), m_node(std::move(node))
{}

FleetResponses::~FleetResponses()
{
    *m_alive = false;
}

void FleetResponses::eval(const QByteArray &script, QList<QByteArray> arguments,
                          redis::Link::Callback done)
{
    arguments.prepend(m_prefix);
    arguments.prepend("0");
    arguments.prepend(script);
    arguments.prepend("EVAL");
    m_link.send(std::move(arguments),
                [alive = m_alive, done = std::move(done)](const redis::Result &result) {
                    if (*alive)
                        done(result);
                });
}

void FleetResponses::countExpired(const redis::Reply &reply, int first)
{
    if (reply.elements.size() < first + 2)
        return;
    m_expiredByAge += quint64(std::max<qint64>(0, reply.elements.at(first).integer));
    m_expiredByBytes += quint64(std::max<qint64>(0, reply.elements.at(first + 1).integer));
}

void FleetResponses::enqueue(const StoredResponse &task, int maxPerTenant,
                             std::function<void(Answer)> done)
{
    QList<QByteArray> arguments{task.id,
                                priorityName(task.priority).toLatin1(),
                                task.tenant.toUtf8(),
                                number(maxPerTenant),
                                recordToJson(task),
                                task.response};
    addEvents(arguments, task.events);
    eval(kEnqueue, std::move(arguments), [done = std::move(done)](const redis::Result &result) {
        Answer answer;
        if (!result.ok()) {
            answer.problem = result.problem();
            return done(answer);
        }
        const QList<redis::Reply> &reply = result.reply.elements;
        answer.count = reply.size() > 1 ? int(reply.at(1).integer) : 0;
        answer.outcome =
            !reply.isEmpty() && reply.at(0).integer == 1 ? Outcome::Done : Outcome::Refused;
        done(answer);
    });
}

void FleetResponses::keep(const StoredResponse &record, qint64 retentionMs, qint64 maxBytes,
                          std::function<void(Answer)> done)
{
    eval(kKeep,
         {record.id, recordToJson(record), statusName(record.status).toLatin1(), record.response,
          number(retentionMs), number(maxBytes), number(record.approximateBytes())},
         [this, done = std::move(done)](const redis::Result &result) {
             Answer answer;
             if (result.ok()) {
                 answer.outcome = Outcome::Done;
                 countExpired(result.reply, 0);
             } else {
                 answer.problem = result.problem();
             }
             if (done)
                 done(answer);
         });
}

void FleetResponses::fetch(const QByteArray &id, std::function<void(Fetched)> done)
{
    eval(kFetch, {id}, [id, done = std::move(done)](const redis::Result &result) {
        Fetched fetched;
        if (!result.ok() || result.reply.elements.size() != 2) {
            fetched.problem = result.problem();
            return done(std::move(fetched));
        }
        const redis::Reply &hash = result.reply.elements.at(0);
        if (hash.elements.isEmpty()) {
            fetched.outcome = Outcome::Refused;
            return done(std::move(fetched));
        }
        if (!readRecord(hash, result.reply.elements.at(1), &fetched.record)) {
            qCWarning(lcResponses).noquote()
                << u"fleet responses: the record of %1 in Redis cannot be read"_s.arg(
                       QString::fromLatin1(id));
            fetched.outcome = Outcome::Refused;
            return done(std::move(fetched));
        }
        fetched.outcome = Outcome::Done;
        done(std::move(fetched));
    });
}

void FleetResponses::readEvents(const QByteArray &id, qint64 after,
                                std::function<void(EventsRead)> done)
{
    eval(kReadEvents, {id, number(after + 1)},
         [after, done = std::move(done)](const redis::Result &result) {
             EventsRead read;
             if (!result.ok())
                 return done(read);
             read.answered = true;
             const QList<redis::Reply> &reply = result.reply.elements;
             if (reply.size() != 2) {
                 read.missing = true;
                 return done(read);
             }
             read.status =
                 statusFromName(QString::fromLatin1(reply.at(0).text)).value_or(Status::Queued);
             qint64 sequence = after + 1;
             for (const redis::Reply &event : reply.at(1).elements)
                 read.events.append(eventFrom(event.text, sequence++));
             done(read);
         });
}

void FleetResponses::cancel(const QByteArray &id, const QByteArray &cancelledResponse,
                            qint64 retentionMs, std::function<void(CancelOutcome, Status)> done)
{
    StoredResponse sized;
    sized.response = cancelledResponse;
    eval(kCancel,
         {id, cancelledResponse, number(retentionMs), number(sized.approximateBytes()),
          number(std::numeric_limits<qint64>::max() / 2)},
         [done = std::move(done)](const redis::Result &result) {
             if (!result.ok() || result.reply.elements.isEmpty())
                 return done(CancelOutcome::Unreachable, Status::Queued);
             const QByteArray word = result.reply.elements.at(0).text;
             if (word == "missing")
                 return done(CancelOutcome::Missing, Status::Queued);
             if (word == "finished") {
                 const QByteArray status = result.reply.elements.value(1).text;
                 return done(CancelOutcome::Finished,
                             statusFromName(QString::fromLatin1(status)).value_or(Status::Failed));
             }
             done(CancelOutcome::Cancelled, Status::Cancelled);
         });
}

void FleetResponses::remove(const QByteArray &id, std::function<void(Answer)> done)
{
    eval(kRemove, {id},
         [done = std::move(done)](const redis::Result &result) { done(answerOf(result)); });
}

void FleetResponses::take(int free, std::chrono::milliseconds visibility,
                          std::function<void(QList<FleetTask>)> done)
{
    // A token no other run shares: this process's random part, then a counter.
    quint64 random[2];
    QRandomGenerator::system()->fillRange(random);
    const QByteArray prefix = m_node + ':' + QByteArray::number(random[0], 16) +
                              QByteArray::number(random[1], 16) + ':' +
                              QByteArray::number(++m_nextToken) + ':';
    eval(kTake, {m_node, number(free), number(visibility.count()), prefix},
         [this, visibilityMs = qint64(visibility.count()),
          done = std::move(done)](const redis::Result &result) {
             QList<FleetTask> tasks;
             if (!result.ok()) {
                 if (result.answered())
                     qCWarning(lcResponses).noquote()
                         << u"fleet queue: Redis refused to hand out tasks: %1"_s.arg(
                                result.problem());
                 return done(tasks);
             }
             for (const redis::Reply &item : result.reply.elements) {
                 if (item.elements.size() != 8)
                     continue;
                 FleetTask task;
                 task.token = item.elements.at(0).text;
                 task.stream = item.elements.at(1).text;
                 task.entry = item.elements.at(2).text;
                 task.takenOver = item.elements.at(3).integer == 1;
                 task.lastNode = QString::fromUtf8(item.elements.at(4).text);
                 task.lastError = QString::fromUtf8(item.elements.at(5).text);
                 task.visibilityMs = visibilityMs;
                 if (!readRecord(item.elements.at(6), item.elements.at(7), &task.record))
                     continue; // its lock expires by itself; the entry is claimed again later
                 if (task.takenOver)
                     ++m_takenOver;
                 tasks.append(std::move(task));
             }
             done(std::move(tasks));
         });
}

namespace {
void answerHeld(const redis::Result &result, const FleetResponses::Held &done)
{
    if (!done)
        return;
    using Write = FleetResponses::Write;
    if (!result.answered())
        return done(Write::Unreachable);
    const redis::Reply &reply = result.reply;
    const qint64 value = reply.type == redis::Reply::Type::Array && !reply.elements.isEmpty()
                             ? reply.elements.at(0).integer
                             : reply.integer;
    done(result.ok() && value == 1 ? Write::Done : Write::NotHeld);
}
} // namespace

void FleetResponses::append(const FleetTask &task, const QList<LoggedEvent> &events, Held done,
                            const QByteArray &response)
{
    // Each append renews the lock too: a task that streams is plainly alive.
    QList<QByteArray> arguments{task.record.id, task.token, number(task.visibilityMs),
                                firstOf(events, task.record), response};
    addEvents(arguments, events);
    eval(kAppend, std::move(arguments),
         [done = std::move(done)](const redis::Result &result) { answerHeld(result, done); });
}

void FleetResponses::finish(const FleetTask &task, const StoredResponse &record,
                            const QList<LoggedEvent> &events, qint64 retentionMs, qint64 maxBytes,
                            Held done)
{
    QList<QByteArray> arguments{record.id,
                                task.token,
                                statusName(record.status).toLatin1(),
                                record.response,
                                number(retentionMs),
                                number(maxBytes),
                                number(record.approximateBytes()),
                                task.stream,
                                task.entry,
                                firstOf(events, record)};
    addEvents(arguments, events);
    eval(kFinish, std::move(arguments),
         [this, done = std::move(done)](const redis::Result &result) {
             if (result.ok())
                 countExpired(result.reply, 1);
             answerHeld(result, done);
         });
}

void FleetResponses::requeue(const FleetTask &task, const StoredResponse &record,
                             const QList<LoggedEvent> &events, std::chrono::milliseconds after,
                             std::chrono::milliseconds visibility, bool countsAsRun,
                             const QString &lastError, Held done)
{
    const qint64 idle = std::max<qint64>(0, visibility.count() - after.count());
    QList<QByteArray> arguments{record.id,
                                task.token,
                                task.stream,
                                task.entry,
                                number(idle),
                                m_node,
                                countsAsRun ? "1" : "0",
                                lastError.toUtf8(),
                                record.response,
                                firstOf(events, record)};
    addEvents(arguments, events);
    eval(kRequeue, std::move(arguments),
         [done = std::move(done)](const redis::Result &result) { answerHeld(result, done); });
}

void FleetResponses::deadLetter(const FleetTask &task, const StoredResponse &record,
                                const QList<LoggedEvent> &events, const QString &errorCode,
                                const QString &errorMessage, qint64 maxBytes, Held done)
{
    const qint64 retention = std::max<qint64>(60'000, record.expiresAtMs - record.createdAtMs);
    QList<QByteArray> arguments{record.id,
                                task.token,
                                task.stream,
                                task.entry,
                                record.response,
                                errorCode.toUtf8(),
                                errorMessage.toUtf8(),
                                m_node,
                                firstOf(events, record),
                                number(kMaxDeadLetters),
                                record.model.toUtf8(),
                                number(retention),
                                number(record.approximateBytes()),
                                number(maxBytes)};
    addEvents(arguments, events);
    eval(kDeadLetter, std::move(arguments),
         [this, done = std::move(done)](const redis::Result &result) {
             if (result.ok() && result.reply.integer == 1)
                 ++m_deadLettered;
             answerHeld(result, done);
         });
}

void FleetResponses::renew(const QList<FleetTask> &tasks, std::chrono::milliseconds visibility,
                           std::function<void(QHash<QByteArray, RunState>)> done)
{
    QList<QByteArray> arguments{m_node, number(visibility.count())};
    QList<QByteArray> ids;
    for (const FleetTask &task : tasks) {
        arguments << task.record.id << task.token << task.stream << task.entry;
        ids.append(task.record.id);
    }
    eval(kRenew, std::move(arguments), [ids, done = std::move(done)](const redis::Result &result) {
        QHash<QByteArray, RunState> states;
        if (!result.ok())
            return done(states); // unknown: nothing is stopped for a missed renewal
        for (qsizetype index = 0; index < ids.size(); ++index) {
            const QByteArray word = result.reply.elements.value(index).text;
            states.insert(ids.at(index), word == "held"        ? RunState::Held
                                         : word == "cancelled" ? RunState::Cancelled
                                         : word == "gone"      ? RunState::Gone
                                                               : RunState::Lost);
        }
        done(states);
    });
}

void FleetResponses::report(int maxDeadLetters, std::function<void(FleetQueueReport)> done)
{
    eval(kReport, {number(maxDeadLetters)}, [done = std::move(done)](const redis::Result &result) {
        FleetQueueReport report;
        const QList<redis::Reply> &reply = result.reply.elements;
        if (!result.ok() || reply.size() != 8) {
            report.problem =
                result.ok() ? u"Redis answered the queue report unreadably"_s : result.problem();
            return done(report);
        }
        const qint64 nowMs = reply.at(7).integer;
        for (int priority = 0; priority < 3; ++priority) {
            const redis::Reply &level = reply.at(priority);
            report.queued[priority] = int(level.elements.value(0).integer);
            const qint64 oldest = level.elements.value(1).text.toLongLong();
            if (report.queued[priority] > 0 && oldest > 0)
                report.oldestQueuedAgeMs = std::max(report.oldestQueuedAgeMs, nowMs - oldest);
        }
        const QHash<QByteArray, QByteArray> running = hashOf(reply.at(3));
        for (auto it = running.begin(); it != running.end(); ++it)
            report.running.append({it.key(), QString::fromUtf8(it.value())});
        std::sort(report.running.begin(), report.running.end());
        const QHash<QByteArray, QByteArray> active = hashOf(reply.at(4));
        for (auto it = active.begin(); it != active.end(); ++it)
            report.activeByTenant.insert(QString::fromUtf8(it.key()), it.value().toInt());
        report.deadLettered = int(reply.at(5).integer);
        for (const redis::Reply &entry : reply.at(6).elements) {
            if (entry.elements.size() != 2)
                continue;
            const QHash<QByteArray, QByteArray> fields = hashOf(entry.elements.at(1));
            DeadLetter dead;
            dead.entry = entry.elements.at(0).text;
            dead.id = fields.value("id");
            dead.tenant = QString::fromUtf8(fields.value("tenant"));
            dead.model = QString::fromUtf8(fields.value("model"));
            dead.priority = QString::fromUtf8(fields.value("priority"));
            dead.errorCode = QString::fromUtf8(fields.value("code"));
            dead.errorMessage = QString::fromUtf8(fields.value("message"));
            dead.runs = fields.value("runs").toInt();
            dead.node = QString::fromUtf8(fields.value("node"));
            dead.atMs = fields.value("at").toLongLong();
            report.deadLetters.append(dead);
        }
        done(report);
    });
}

void FleetResponses::retryDeadLetter(const QByteArray &id, std::function<void(Answer)> done)
{
    // The response goes back to `queued` with a `response.queued` event after its log, so a
    // client following it sees the new run; the record is read first to number that event.
    fetch(id, [this, id, done = std::move(done)](Fetched fetched) mutable {
        if (fetched.outcome != Outcome::Done) {
            Answer answer;
            answer.outcome = fetched.outcome;
            answer.problem = fetched.problem;
            return done(answer);
        }
        StoredResponse &record = fetched.record;
        QJsonObject response = QJsonDocument::fromJson(record.response).object();
        response.insert(u"status"_s, u"queued"_s);
        response.insert(u"error"_s, QJsonValue());
        const QByteArray queued = QJsonDocument(response).toJson(QJsonDocument::Compact);
        const qint64 sequence = record.nextSequenceNumber();
        QJsonObject data{{u"type"_s, u"response.queued"_s},
                         {u"sequence_number"_s, sequence},
                         {u"response"_s, response}};
        const LoggedEvent event{sequence, "response.queued",
                                QJsonDocument(data).toJson(QJsonDocument::Compact)};
        eval(kRetryDead, {id, queued, number(sequence), eventText(event)},
             [done = std::move(done)](const redis::Result &result) { done(answerOf(result)); });
    });
}

void FleetResponses::discardDeadLetter(const QByteArray &id, std::function<void(Answer)> done)
{
    // Its record stays failed and expires with the retention it was given when it died.
    eval(kDiscardDead, {id},
         [done = std::move(done)](const redis::Result &result) { done(answerOf(result)); });
}

} // namespace switchyard::responses
