#include "auth/credentials.h"

#include "protocol/gateway_headers.h"

#include <QCryptographicHash>
#include <QRandomGenerator>
#include <array>

namespace switchyard::auth {

namespace {

using protocol::headerValue;

} // namespace

QByteArray sha256(QByteArrayView text)
{
    return QCryptographicHash::hash(text, QCryptographicHash::Sha256);
}

bool digestsEqual(QByteArrayView left, QByteArrayView right)
{
    if (left.size() != right.size())
        return false; // digests all have one length: this reveals nothing
    unsigned char difference = 0;
    for (qsizetype index = 0; index < left.size(); ++index)
        difference |= static_cast<unsigned char>(left[index] ^ right[index]);
    return difference == 0;
}

QByteArray bearerToken(const HeaderList &headers)
{
    const QByteArray authorization = headerValue(headers, "authorization").trimmed();
    constexpr QByteArrayView kScheme = "bearer ";
    if (authorization.size() <= kScheme.size() ||
        QByteArrayView(authorization).first(kScheme.size()).compare(kScheme, Qt::CaseInsensitive))
        return {};
    return authorization.mid(kScheme.size()).trimmed();
}

QByteArray presentedKey(const HeaderList &headers)
{
    if (QByteArray bearer = bearerToken(headers); !bearer.isEmpty())
        return bearer;
    return headerValue(headers, "x-api-key").trimmed();
}

QByteArray presentedKeyHeader(const HeaderList &headers)
{
    if (!bearerToken(headers).isEmpty())
        return "Authorization";
    if (!headerValue(headers, "x-api-key").trimmed().isEmpty())
        return "x-api-key";
    return {};
}

QByteArray newKeyText()
{
    std::array<quint32, 8> words{};
    QRandomGenerator::system()->fillRange(words.data(), qsizetype(words.size()));
    const QByteArray random(reinterpret_cast<const char *>(words.data()), qsizetype(sizeof(words)));
    return "sk-sy-" +
           random.toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals);
}

} // namespace switchyard::auth
