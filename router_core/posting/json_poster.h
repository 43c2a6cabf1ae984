#pragma once

#include <QByteArray>
#include <QList>
#include <QString>
#include <chrono>
#include <functional>
#include <memory>

namespace switchyard::posting {

// Where and how a JsonPoster posts. The caller turns its own config into this, so the poster
// needs nothing of config/.
struct JsonPosterOptions {
    QByteArray url;                // encoded, as libcurl takes it
    QList<QByteArray> headerLines; // "Name: value", sent after Content-Type: application/json
    std::chrono::milliseconds timeout{0}; // for connecting, and for the whole post
    qsizetype maxAnswerBytes = 0; // the answer's first bytes kept; the rest is read and dropped
    bool tcpKeepAlive = false;    // probe the connection kept idle between posts
};

// What one post came to, before the caller decides what the status means.
struct JsonPostReply {
    enum class Outcome {
        Answered, // a status came back, whichever it is
        CutOff,   // shouldStop said stop before an answer came
        Failed,   // no answer: no handle, no connection, a timeout (error says which)
    };
    Outcome outcome = Outcome::Failed;
    int httpStatus = 0; // when answered
    QByteArray answer;  // when answered: at most maxAnswerBytes of the body
    QString error;      // when failed: libcurl's own words
};

// Posts JSON bodies with a libcurl easy handle of its own, blocking the calling thread and keeping
// the connection alive between posts. For what posts from a thread of its own (the OTLP export,
// the alert webhook): the engine thread's traffic goes through upstream/'s multi handle instead.
// One thread at a time may post.
class JsonPoster final {
public:
    explicit JsonPoster(const JsonPosterOptions &options);
    ~JsonPoster();

    JsonPoster(const JsonPoster &) = delete;
    JsonPoster &operator=(const JsonPoster &) = delete;

    // Returns by itself within the timeout, and soon after shouldStop answers true: libcurl asks
    // it at least once a second while the post runs, answer or not.
    JsonPostReply post(const QByteArray &body, const std::function<bool()> &shouldStop);

private:
    struct Handle;
    const std::unique_ptr<Handle> m_handle;
};

} // namespace switchyard::posting
