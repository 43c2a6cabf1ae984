#include "redis/redis_address.h"

#include <QHostAddress>
#include <QUrl>

namespace switchyard::redis {

using namespace Qt::StringLiterals;

bool Address::isLoopback() const
{
    if (host.compare(u"localhost"_s, Qt::CaseInsensitive) == 0)
        return true;
    const QHostAddress address(host);
    return !address.isNull() && address.isLoopback();
}

QString Address::toString() const
{
    const QString shownHost = host.contains(u':') ? u"[%1]"_s.arg(host) : host;
    return u"redis://%1:%2/%3"_s.arg(shownHost).arg(port).arg(database);
}

std::variant<Address, QString> parseAddress(const QString &text)
{
    if (text.startsWith(u"rediss://"_s, Qt::CaseInsensitive))
        return u"rediss:// (Redis over TLS) is not supported: this build's Redis client has no "
               "TLS. Keep Redis on loopback or a private network and use redis://"_s;
    const QUrl url(text, QUrl::StrictMode);
    if (!url.isValid() || url.scheme().compare(u"redis"_s, Qt::CaseInsensitive) != 0 ||
        url.host().isEmpty())
        return u"expected redis://HOST[:PORT][/DB], got \"%1\""_s.arg(text);
    if (!url.userInfo().isEmpty())
        return u"the address must not hold a user or password: the address is logged and "
               "shown; give the password as fleet.password ({env: NAME})"_s;
    if (url.hasQuery() || url.hasFragment())
        return u"the address takes no query or fragment: \"%1\""_s.arg(text);
    Address address;
    address.host = url.host();
    const int port = url.port(6379);
    if (port <= 0 || port > 65535)
        return u"the port must be between 1 and 65535: \"%1\""_s.arg(text);
    address.port = quint16(port);
    const QString path = url.path();
    if (!path.isEmpty() && path != u"/"_s) {
        bool isNumber = false;
        const int database = path.mid(1).toInt(&isNumber);
        if (!isNumber || database < 0)
            return u"the path must be a database number (redis://HOST:PORT/0): \"%1\""_s.arg(text);
        address.database = database;
    }
    return address;
}

} // namespace switchyard::redis
