#pragma once

#include "upstream/adapters/provider_adapter.h"

#include <QJsonObject>

namespace switchyard::upstream::adapters {

// Anthropic's Messages API behind the OpenAI chat protocol (docs/adapters.md has the mapping
// table): requests are rebuilt as Messages requests, answers, errors and the event stream
// (message_start ... message_stop) come back as OpenAI shapes. A client that speaks the Messages
// API itself (Operation::Messages, CountTokens) is passed through: its body with only the model
// replaced, its anthropic-version, its anthropic-beta features with the provider's, and the
// provider's answer and events as they came.
class AnthropicAdapter final : public ProviderAdapter {
public:
    explicit AnthropicAdapter(const config::ProviderConfig &provider) : m_provider(provider) {}

    std::variant<PreparedRequest, protocol::ApiError>
    buildRequest(const AdapterRequest &request) const override;
    AnswerTranslation translateAnswer(const AnswerShape &shape,
                                      const QByteArray &body) const override;
    std::unique_ptr<StreamTranslator> startStream(const AnswerShape &shape) const override;
    QString streamEnd(const AnswerShape &) const override
    {
        return QStringLiteral("its `message_stop` event");
    }
    protocol::ApiError translateError(int status, const HeaderList &headers,
                                      QByteArrayView body) const override;

private:
    PreparedRequest buildPassThrough(const AdapterRequest &request) const;

    const config::ProviderConfig &m_provider;
};

// OpenAI's finish_reason for Anthropic's stop_reason; empty for none.
QString finishReasonFromStopReason(const QString &stopReason);
// The HTTP status an Anthropic error type stands for, for errors that arrive inside a stream.
int statusOfAnthropicErrorType(const QString &type);
// Usage from an Anthropic `usage` object over what earlier events of the same answer said
// (`known`): Anthropic's input_tokens leave the cache out, so its reads and writes are added to
// the prompt tokens and kept apart as well.
Usage usageFromAnthropic(const QJsonObject &usage, Usage known = {});

} // namespace switchyard::upstream::adapters
