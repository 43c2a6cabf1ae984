#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

struct redisReply;

namespace switchyard::redis {

// One reply of Redis, copied out of the client library's so it outlives the callback it came in.
struct Reply {
    enum class Type { Nil, Status, Error, Integer, String, Array };
    Type type = Type::Nil;
    QByteArray text; // String, Status and Error
    qint64 integer = 0;
    QList<Reply> elements; // Array

    static Reply fromHiredis(const redisReply &reply);
    bool isNil() const { return type == Type::Nil; }
    bool isError() const { return type == Type::Error; }
};

// What became of one command: Redis's reply (which may be an error reply of its own), or why
// there is none: the link was down, it went down before the answer, or the answer took longer
// than the link's timeout.
struct Result {
    Reply reply;
    QString failure; // empty when Redis answered

    bool answered() const { return failure.isEmpty(); }
    bool ok() const { return answered() && !reply.isError(); }
    // Why the command did not do its work: the failure, or Redis's error text.
    QString problem() const { return answered() ? QString::fromUtf8(reply.text) : failure; }
};

} // namespace switchyard::redis
