#pragma once

#include "upstream/adapters/provider_adapter.h"

namespace switchyard::upstream::adapters {

// An in-house agent with its own JSON, described by the provider's `mapping:` in the config
// (config/adapter_config.h, docs/adapters.md): the request is rendered from a template, and
// the reply, stream pieces, finish signal, usage and error message are picked out by paths.
class MappedAdapter final : public ProviderAdapter {
public:
    explicit MappedAdapter(const config::ProviderConfig &provider) : m_provider(provider) {}

    std::variant<PreparedRequest, protocol::ApiError>
    buildRequest(const AdapterRequest &request) const override;
    AnswerTranslation translateAnswer(const AnswerShape &shape,
                                      const QByteArray &body) const override;
    std::unique_ptr<StreamTranslator> startStream(const AnswerShape &shape) const override;
    protocol::ApiError translateError(int status, const HeaderList &headers,
                                      QByteArrayView body) const override;
    bool canStream() const override;
    QString streamEnd(const AnswerShape &shape) const override;

private:
    const config::ProviderConfig &m_provider;
};

// An agent's own word for why it stopped, as OpenAI's finish_reason: OpenAI's words are kept,
// "max_tokens" and "max_new_tokens" are "length", anything else is "stop".
QString finishReasonFromAgent(const QString &reason);

} // namespace switchyard::upstream::adapters
