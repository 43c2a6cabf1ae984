#pragma once

#include "answers/answer_store.h"
#include "httpwire/response_writer.h"

namespace switchyard::http {

// The value of the first header of `headers` named `name`, in any case; empty when none is.
inline QByteArray headerValue(const protocol::HeaderList &headers, QByteArrayView name)
{
    for (const auto &[key, value] : headers) {
        if (key.compare(name, Qt::CaseInsensitive) == 0)
            return value;
    }
    return {};
}

// What the writer shows of an answer, collected as a StoredAnswer while it stays within
// `maxBytes` (beyond it nothing of the body is kept and tooLarge() says so): the part the
// duplicate guard's keeper and the response cache's share. What becomes of the answer at its
// end is each one's own ended().
class AnswerCollector : public httpwire::AnswerTap {
public:
    AnswerCollector(QByteArray requestId, qint64 maxBytes) : m_maxBytes(maxBytes)
    {
        m_answer.requestId = std::move(requestId);
    }

    void whole(int status, const protocol::HeaderList &headers, QByteArrayView contentType,
               QByteArrayView body) override
    {
        m_answer.status = status;
        m_answer.headers = headers;
        m_answer.contentType = contentType.toByteArray();
        if (!exceeds(body.size()))
            m_answer.body = body.toByteArray();
    }
    void streamBegun(const protocol::HeaderList &headers) override
    {
        m_answer.status = 200;
        m_answer.streamed = true;
        m_answer.headers = headers;
    }
    void streamData(QByteArrayView bytes) override
    {
        if (!exceeds(m_answer.body.size() + bytes.size()))
            m_answer.body.append(bytes);
    }

protected:
    bool tooLarge() const { return m_tooLarge; }
    bool succeeded() const { return m_answer.status >= 200 && m_answer.status <= 299; }
    // The value of one of the answer's headers; empty when it has none.
    QByteArray header(QByteArrayView name) const { return headerValue(m_answer.headers, name); }

    answers::StoredAnswer m_answer;
    const qint64 m_maxBytes;

private:
    bool exceeds(qint64 bytes)
    {
        if (bytes > m_maxBytes && !m_tooLarge) {
            m_tooLarge = true;
            m_answer.body = QByteArray(); // nothing of it is kept
        }
        return m_tooLarge;
    }

    bool m_tooLarge = false;
};

} // namespace switchyard::http
