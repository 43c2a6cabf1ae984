#pragma once

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QString>
#include <QUrl>
#include <chrono>
#include <memory>

namespace switchyard::upstream {

using HeaderList = QList<QPair<QByteArray, QByteArray>>;

// The same shared data, so equal without comparing: how the URLs built once are found again
// (adapters/provider_endpoint, the transport's encoded URLs). Whoever keeps one to compare with
// holds a reference, so its data is not freed and its address not reused meanwhile.
inline bool sameUrlData(const QUrl &a, const QUrl &b)
{
    return const_cast<QUrl &>(a).data_ptr() == const_cast<QUrl &>(b).data_ptr();
}

struct UpstreamRequest {
    QUrl url;
    QByteArray method = "POST";
    HeaderList headers;
    QByteArray body;
    std::chrono::milliseconds connectTimeout{3000};
    // Whole-call cap enforced by the transport; zero means none (streams are bounded by their
    // first-token and idle timeouts instead, which the caller owns).
    std::chrono::milliseconds totalTimeout{0};
    // The provider's `proxy`: empty means a direct connection, whatever the process environment's
    // http_proxy, https_proxy and no_proxy say.
    QUrl proxy;
    // The provider's `ca_file`: a PEM file whose CAs are the only ones trusted for this call's
    // TLS (and an https proxy's); empty means the system's CA bundle.
    QString caFile;
    // The provider's `transport: libcurl`: not over the gateway's own plain-http client.
    bool overLibcurl = false;
    // The answer is an event stream: small events over a long time. The transport then reads it
    // through a small buffer; one sized for whole answers, kept by each of thousands of held
    // streams, was a tenth of the gateway's memory at 10,000 of them.
    bool answerStreams = false;
};

struct UpstreamResponseHead {
    int status = 0;
    HeaderList headers; // names lower-cased

    QByteArray header(QByteArrayView lowerCaseName) const;
};

// Why a call ended without a complete answer. The classes are what retry and breaker logic need.
enum class TransportError {
    None,
    ConnectFailed, // refused, unreachable, DNS
    ConnectTimeout,
    TotalTimeout,
    ConnectionLost, // reset or closed before the answer was complete
    TlsFailed,
    ProtocolError, // not HTTP, bad framing
    // This process could not open a socket for the call (out of file descriptors or memory):
    // the gateway's own limit, never the provider's fault. Nothing was sent.
    LocalResources,
    Other,
};

struct UpstreamResult {
    TransportError error = TransportError::None;
    QString description; // transport's words, for traces and logs
};

// Receives one call's progress, on the thread that owns the transport. A callback may destroy
// the UpstreamCall (abort); the transport must cope.
class UpstreamObserver {
public:
    virtual ~UpstreamObserver() = default;
    virtual void onResponseHead(const UpstreamResponseHead &head) = 0;
    virtual void onResponseBody(QByteArrayView bytes) = 0;
    virtual void onFinished(const UpstreamResult &result) = 0;
};

// A call in progress. Destroying it aborts the call at once; no callback arrives afterwards.
class UpstreamCall {
public:
    virtual ~UpstreamCall() = default;
    // Back-pressure: stop reading the answer (the provider's writes back up in TCP) until
    // resumed. Both may be called from inside onResponseBody.
    virtual void pauseReceiving() = 0;
    virtual void resumeReceiving() = 0;
    // Whether the request has gone out on a connection: false while still connecting, so a
    // timeout then is a connect timeout.
    virtual bool requestSent() const = 0;
};

// The seam between execution and the network: one implementation on libcurl, fakes in tests.
class UpstreamTransport {
public:
    virtual ~UpstreamTransport() = default;
    virtual std::unique_ptr<UpstreamCall> start(const UpstreamRequest &request,
                                                UpstreamObserver *observer) = 0;
};

QString describe(TransportError error);

} // namespace switchyard::upstream
