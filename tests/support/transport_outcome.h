#pragma once

#include "eventloop/epoll_event_dispatcher.h"
#include "upstream/upstream_transport.h"

#include <QAbstractEventDispatcher>
#include <algorithm>
#include <functional>

namespace switchyard::testing {

// One call's outcome, as a transport reports it; optionally reacting from inside a callback, as
// the executor does when it cancels or starts calls there.
class TransportOutcome final : public upstream::UpstreamObserver {
public:
    void onResponseHead(const upstream::UpstreamResponseHead &head) override
    {
        status = head.status;
        headers = head.headers;
        ++heads;
        if (onHead)
            onHead();
    }
    void onResponseBody(QByteArrayView bytes) override
    {
        body.append(bytes);
        largestPiece = std::max(largestPiece, bytes.size());
        if (onBody)
            onBody();
    }
    void onFinished(const upstream::UpstreamResult &result) override
    {
        error = result.error;
        description = result.description;
        finished = true;
        if (onEnd)
            onEnd();
    }

    int status = 0;
    int heads = 0;
    upstream::HeaderList headers;
    QByteArray body;
    qsizetype largestPiece = 0; // the most bytes one read handed over
    upstream::TransportError error = upstream::TransportError::Other;
    QString description;
    bool finished = false;
    std::function<void()> onHead;
    std::function<void()> onBody;
    std::function<void()> onEnd;
};

// The counters of this thread's epoll dispatcher; all zero under another dispatcher.
inline eventloop::DispatcherCounters dispatcherCounters()
{
    const auto *epoll =
        dynamic_cast<eventloop::EpollEventDispatcher *>(QAbstractEventDispatcher::instance());
    return epoll ? epoll->counters() : eventloop::DispatcherCounters{};
}

} // namespace switchyard::testing
