#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

namespace switchyard::ui {

// The text of one answer as the client saw it arrive, assembled from the data of the stream's
// events: chat chunks (`choices[0].delta.content`), legacy completions (`choices[0].text`), the
// Responses API's `response.output_text.delta` events and Anthropic's `text_delta` blocks (an
// answer an anthropic provider gave a Messages client, passed through). It ends in the finish
// reason of the last chunk that gave one, or in the error event the client was sent. Lines that are
// not JSON (the closing "[DONE]", keep-alives) add nothing.
class LiveText {
public:
    // One event's data per line, as the trace feed carries the watched request's stream.
    void appendEventData(QByteArrayView lines);
    // A finished request's kept response body: an event stream ("data: ..." blocks) or one JSON
    // answer.
    void setResponseBody(QByteArrayView body);
    void clear() { *this = LiveText(); }

    const QString &text() const { return m_text; }
    const QString &finishReason() const { return m_finishReason; }
    // The error the client was sent, "code: message"; empty when none.
    const QString &error() const { return m_error; }
    int eventCount() const { return m_events; }
    bool isEmpty() const { return m_events == 0 && m_text.isEmpty() && m_error.isEmpty(); }

private:
    void appendEvent(QByteArrayView data);

    QString m_text;
    QString m_finishReason;
    QString m_error;
    int m_events = 0;
};

} // namespace switchyard::ui
