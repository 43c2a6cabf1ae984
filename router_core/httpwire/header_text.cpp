#include "httpwire/header_text.h"

#include <array>
#include <cstring>

namespace switchyard::httpwire {

namespace {

// Names as clients and providers spell them (lower case, and the capitalised form of HTTP/1.1
// clients), then the most frequent values. Compared byte for byte: a text is kept as it came.
const std::array kCommonTexts{
    QByteArrayLiteral("host"),
    QByteArrayLiteral("Host"),
    QByteArrayLiteral("content-type"),
    QByteArrayLiteral("Content-Type"),
    QByteArrayLiteral("content-length"),
    QByteArrayLiteral("Content-Length"),
    QByteArrayLiteral("accept"),
    QByteArrayLiteral("Accept"),
    QByteArrayLiteral("accept-encoding"),
    QByteArrayLiteral("Accept-Encoding"),
    QByteArrayLiteral("authorization"),
    QByteArrayLiteral("Authorization"),
    QByteArrayLiteral("user-agent"),
    QByteArrayLiteral("User-Agent"),
    QByteArrayLiteral("connection"),
    QByteArrayLiteral("Connection"),
    QByteArrayLiteral("transfer-encoding"),
    QByteArrayLiteral("Transfer-Encoding"),
    QByteArrayLiteral("cache-control"),
    QByteArrayLiteral("date"),
    QByteArrayLiteral("server"),
    QByteArrayLiteral("x-request-id"),
    QByteArrayLiteral("traceparent"),
    QByteArrayLiteral("x-api-key"),
    QByteArrayLiteral("anthropic-version"),
    QByteArrayLiteral("openai-processing-ms"),
    QByteArrayLiteral("application/json"),
    QByteArrayLiteral("application/json; charset=utf-8"),
    QByteArrayLiteral("text/event-stream"),
    QByteArrayLiteral("text/event-stream; charset=utf-8"),
    QByteArrayLiteral("keep-alive"),
    QByteArrayLiteral("close"),
    QByteArrayLiteral("chunked"),
    QByteArrayLiteral("no-cache"),
    QByteArrayLiteral("*/*"),
};

// The common texts by their length: a text is compared only with those as long as it is.
constexpr qsizetype kLongestCommon = 32;
struct CommonByLength {
    std::array<std::array<quint8, 8>, kLongestCommon + 1> index{}; // places in kCommonTexts
    std::array<quint8, kLongestCommon + 1> count{};
};

const CommonByLength &commonByLength()
{
    static const CommonByLength table = [] {
        CommonByLength built;
        for (std::size_t i = 0; i < kCommonTexts.size(); ++i) {
            const qsizetype size = kCommonTexts[i].size();
            Q_ASSERT(size <= kLongestCommon && built.count[size] < built.index[size].size());
            built.index[size][built.count[size]++] = quint8(i);
        }
        return built;
    }();
    return table;
}

const QByteArray *commonText(QByteArrayView text)
{
    if (text.size() > kLongestCommon)
        return nullptr;
    const CommonByLength &byLength = commonByLength();
    const qsizetype size = text.size();
    for (quint8 i = 0; i < byLength.count[size]; ++i) {
        const QByteArray &common = kCommonTexts[byLength.index[size][i]];
        if (std::memcmp(common.constData(), text.data(), size_t(size)) == 0)
            return &common;
    }
    return nullptr;
}

} // namespace

QByteArray headerText(QByteArrayView text)
{
    if (const QByteArray *common = commonText(text))
        return *common;
    return text.toByteArray();
}

QByteArray lowerCaseHeaderName(QByteArrayView name)
{
    const auto lowerInto = [name](char *out) {
        for (qsizetype i = 0; i < name.size(); ++i) {
            const char c = name[i];
            out[i] = c >= 'A' && c <= 'Z' ? char(c + ('a' - 'A')) : c;
        }
    };
    // Longer names than any common one skip the look-up.
    std::array<char, 32> buffer;
    if (name.size() > qsizetype(buffer.size())) {
        QByteArray lowered(name.size(), Qt::Uninitialized);
        lowerInto(lowered.data());
        return lowered;
    }
    lowerInto(buffer.data());
    const QByteArrayView lowered(buffer.data(), name.size());
    if (const QByteArray *common = commonText(lowered))
        return *common;
    return lowered.toByteArray();
}

} // namespace switchyard::httpwire
