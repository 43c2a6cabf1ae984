#pragma once

#include "config/resilience_config.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringView>

namespace switchyard::resilience {

// The degradation ladder's levels (docs/resilience.md, "The degradation ladder"), as returned in
// x-switchyard-degraded.
enum DegradationLevel {
    kPlannedTarget = 0,
    kLighterModel = 1,
    kCannedAnswer = 2,
    kFailSafeMessage = 3,
};

// The text of the last message with role "user" in an OpenAI chat body: its string content, or
// the text parts of an array content joined by newlines. Empty when there is none.
QString lastUserMessageText(const QByteArray &body);

// The first canned answer whose conditions all hold; nullptr when none matches.
const config::CannedAnswer *matchCannedAnswer(const config::DegradationConfig &config,
                                              const QString &model, const QString &lastUserMessage);

// An answer Switchyard writes itself, in the shapes an OpenAI client expects. The extra
// `switchyard_degraded` object ({level, reason}) tells a reader of the body what happened; the
// OpenAI SDKs ignore fields they do not know.
struct SyntheticAnswer {
    QByteArray id; // "chatcmpl-" + request id
    QString model;
    qint64 createdSecs = 0;
    QString content;
    int level = kCannedAnswer;
    QString reason;

    // A whole chat.completion object.
    QByteArray completion() const;
    // The data of each event of a streamed answer, "[DONE]" last.
    QList<QByteArray> streamEvents() const;
};

} // namespace switchyard::resilience
