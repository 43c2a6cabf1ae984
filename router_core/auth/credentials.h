#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QPair>

// The secrets a client shows Switchyard, and how they are compared. Keys are kept as SHA-256
// digests only: a client key is 32 random bytes, so a fast unsalted hash is enough (no
// dictionary can guess it); a password-style slow hash would only cost every request time.
namespace switchyard::auth {

using HeaderList = QList<QPair<QByteArray, QByteArray>>;

// SHA-256 of `text`, 32 raw bytes.
QByteArray sha256(QByteArrayView text);

// Whether two digests are equal, in time that depends only on their length: a client measuring
// answers learns nothing of how much of a digest it got right.
bool digestsEqual(QByteArrayView left, QByteArrayView right);

// The key the request presents: `Authorization: Bearer <key>` (the OpenAI SDKs), else
// `x-api-key: <key>` (the Anthropic SDKs). Empty when neither carries one.
QByteArray presentedKey(const HeaderList &headers);
// The name of the header presentedKey() takes the key from ("Authorization" or "x-api-key");
// empty when neither carries one.
QByteArray presentedKeyHeader(const HeaderList &headers);

// The admin token of `Authorization: Bearer <token>`; empty when absent.
QByteArray bearerToken(const HeaderList &headers);

// A new client key's text: "sk-sy-" and 32 bytes from the system's secure random source,
// base64url without padding (43 characters).
QByteArray newKeyText();

} // namespace switchyard::auth
