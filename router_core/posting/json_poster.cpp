#include "posting/json_poster.h"

#include <curl/curl.h>

namespace switchyard::posting {

using namespace Qt::StringLiterals;

// libcurl's state for one poster; its callbacks reach it through their user pointer.
struct JsonPoster::Handle {
    CURL *easy = nullptr;
    curl_slist *headers = nullptr;
    QByteArray url;
    qsizetype maxAnswerBytes = 0;
    QByteArray answer;
    char errorText[CURL_ERROR_SIZE] = {};
    const std::function<bool()> *shouldStop = nullptr; // only while a post runs

    static size_t onAnswer(char *data, size_t size, size_t count, void *self)
    {
        auto *handle = static_cast<Handle *>(self);
        const qsizetype bytes = qsizetype(size * count);
        const qsizetype room = handle->maxAnswerBytes - handle->answer.size();
        if (room > 0)
            handle->answer.append(data, std::min(bytes, room));
        return size * count;
    }

    static int onProgress(void *self, curl_off_t, curl_off_t, curl_off_t, curl_off_t)
    {
        auto *handle = static_cast<Handle *>(self);
        return handle->shouldStop && (*handle->shouldStop)() ? 1 : 0;
    }
};

JsonPoster::JsonPoster(const JsonPosterOptions &options) : m_handle(std::make_unique<Handle>())
{
    Handle &handle = *m_handle;
    // Reference-counted: pairs with the cleanup below, whatever the transport does.
    curl_global_init(CURL_GLOBAL_DEFAULT);
    handle.easy = curl_easy_init();
    handle.url = options.url;
    handle.maxAnswerBytes = options.maxAnswerBytes;
    handle.headers = curl_slist_append(handle.headers, "Content-Type: application/json");
    // libcurl waits for a 100 Continue on a large body unless told not to.
    handle.headers = curl_slist_append(handle.headers, "Expect:");
    for (const QByteArray &line : options.headerLines)
        handle.headers = curl_slist_append(handle.headers, line.constData());
    if (!handle.easy)
        return;
    CURL *easy = handle.easy;
    curl_easy_setopt(easy, CURLOPT_URL, handle.url.constData());
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, handle.headers);
    curl_easy_setopt(easy, CURLOPT_POST, 1L);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    // As for providers: no proxy from http_proxy and friends by accident.
    curl_easy_setopt(easy, CURLOPT_PROXY, "");
    curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
    if (options.tcpKeepAlive)
        curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, long(options.timeout.count()));
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, long(options.timeout.count()));
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &Handle::onAnswer);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &handle);
    curl_easy_setopt(easy, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, &Handle::onProgress);
    curl_easy_setopt(easy, CURLOPT_XFERINFODATA, &handle);
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, handle.errorText);
}

JsonPoster::~JsonPoster()
{
    if (m_handle->easy)
        curl_easy_cleanup(m_handle->easy);
    curl_slist_free_all(m_handle->headers);
    curl_global_cleanup();
}

JsonPostReply JsonPoster::post(const QByteArray &body, const std::function<bool()> &shouldStop)
{
    Handle &handle = *m_handle;
    JsonPostReply reply;
    if (!handle.easy) {
        reply.error = u"libcurl could not make a handle"_s;
        return reply;
    }
    handle.answer.clear();
    handle.errorText[0] = '\0';
    handle.shouldStop = &shouldStop;
    curl_easy_setopt(handle.easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.size()));
    curl_easy_setopt(handle.easy, CURLOPT_POSTFIELDS, body.constData());
    const CURLcode code = curl_easy_perform(handle.easy);
    handle.shouldStop = nullptr;
    if (code == CURLE_ABORTED_BY_CALLBACK) {
        reply.outcome = JsonPostReply::Outcome::CutOff;
        return reply;
    }
    if (code != CURLE_OK) {
        reply.error = QString::fromUtf8(handle.errorText[0] != '\0' ? handle.errorText
                                                                    : curl_easy_strerror(code));
        return reply;
    }
    long status = 0;
    curl_easy_getinfo(handle.easy, CURLINFO_RESPONSE_CODE, &status);
    reply.outcome = JsonPostReply::Outcome::Answered;
    reply.httpStatus = int(status);
    reply.answer = handle.answer;
    return reply;
}

} // namespace switchyard::posting
