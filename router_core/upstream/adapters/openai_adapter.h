#pragma once

#include "upstream/adapters/provider_adapter.h"

namespace switchyard::upstream::adapters {

// OpenAI-compatible providers (and the simulated ones): the client's bytes go through untouched
// but for the model name, and answers and events come back as they are. The hot path: nothing
// here builds a DOM of Qt objects.
class OpenAiAdapter final : public ProviderAdapter {
public:
    explicit OpenAiAdapter(const config::ProviderConfig &provider) : m_provider(provider) {}

    std::variant<PreparedRequest, protocol::ApiError>
    buildRequest(const AdapterRequest &request) const override;
    AnswerTranslation translateAnswer(const AnswerShape &shape,
                                      const QByteArray &body) const override;
    std::unique_ptr<StreamTranslator> startStream(const AnswerShape &shape) const override;
    // A Responses API stream passed through ends with `response.completed`; chat's and legacy
    // completions' with [DONE].
    QString streamEnd(const AnswerShape &shape) const override;
    protocol::ApiError translateError(int status, const HeaderList &headers,
                                      QByteArrayView body) const override;

private:
    const config::ProviderConfig &m_provider;
};

// The message of an OpenAI-shaped error body ({"error":{"message"}} or {"error":"..."}), or a
// short excerpt of whatever the body was.
QString openAiErrorMessage(QByteArrayView body);

} // namespace switchyard::upstream::adapters
