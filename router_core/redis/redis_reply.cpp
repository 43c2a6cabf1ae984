#include "redis/redis_reply.h"

#include <hiredis/hiredis.h>

namespace switchyard::redis {

Reply Reply::fromHiredis(const redisReply &reply)
{
    Reply copy;
    switch (reply.type) {
    case REDIS_REPLY_STRING:
        copy.type = Type::String;
        copy.text = QByteArray(reply.str, qsizetype(reply.len));
        break;
    case REDIS_REPLY_STATUS:
        copy.type = Type::Status;
        copy.text = QByteArray(reply.str, qsizetype(reply.len));
        break;
    case REDIS_REPLY_ERROR:
        copy.type = Type::Error;
        copy.text = QByteArray(reply.str, qsizetype(reply.len));
        break;
    case REDIS_REPLY_INTEGER:
        copy.type = Type::Integer;
        copy.integer = reply.integer;
        break;
    case REDIS_REPLY_ARRAY:
        copy.type = Type::Array;
        copy.elements.reserve(qsizetype(reply.elements));
        for (size_t i = 0; i < reply.elements; ++i)
            copy.elements.append(fromHiredis(*reply.element[i]));
        break;
    default: // REDIS_REPLY_NIL, and nothing else exists in the RESP2 protocol we speak
        copy.type = Type::Nil;
        break;
    }
    return copy;
}

} // namespace switchyard::redis
