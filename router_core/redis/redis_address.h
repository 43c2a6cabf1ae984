#pragma once

#include <QString>
#include <variant>

namespace switchyard::redis {

// Where the fleet's Redis listens: `redis://HOST[:PORT][/DB]`.
struct Address {
    QString host;
    quint16 port = 6379;
    int database = 0;

    // 127.0.0.0/8, ::1 or `localhost`: the only place a Redis without a password may live.
    bool isLoopback() const;
    QString toString() const;
};

// The address, or one sentence saying what is wrong with the text. Refuses `rediss://`: the
// Redis client this build links (hiredis 0.14, Debian 12's) has no TLS, and a link that claims
// TLS but sends clear text would be worse than a refusal. Refuses a password in the address:
// the address is logged and shown; the password belongs in `fleet.password`.
std::variant<Address, QString> parseAddress(const QString &text);

} // namespace switchyard::redis
